/*
 * servesim-probe: measures the GPU it runs on, for `servesim calibrate`.
 *
 * A standalone program that needs only the CUDA runtime, cuBLAS and
 * cuBLASLt, so it runs on a bare GPU box; `servesim calibrate fit` reads its
 * CSV anywhere. For the model dimensions given on the command line, sharded
 * per tensor-parallel rank as vLLM shards them (heads / tp, KV heads / tp
 * but at least 1, intermediate / tp, vocab / tp), it measures:
 *   stream_read   a kernel streaming a buffer many times the L2 cache
 *   d2d_copy      cudaMemcpyAsync device to device (bytes = read + write)
 *   gemm          the QKV, O, gate/up, down and LM-head weights at 1..16384
 *                 tokens: cuBLAS bf16, and cuBLASLt fp8 e4m3 on sm_89 and up
 *   attn_prefill  a flash-style causal kernel (WMMA bf16 tensor cores, online
 *                 softmax) for a chunk of T tokens after C cached ones
 *   attn_decode   a paged (16-token blocks, shuffled) split-K decode kernel:
 *                 B sequences each reading C tokens of KV
 *   layer         one synthetic decoder layer (QKV, attention, O, gate/up,
 *                 SiLU x up, down) with random weights at a few batch shapes
 *
 * Output: '#' lines (`# key: value`: probe version, device, dims, skipped
 * work, elapsed time), then the CSV header
 * `kind,shape,tokens,context,dtype,time_us,bytes,flops` and one row per
 * measurement. time_us is the median of five batch means after a warm-up;
 * bytes is the minimum traffic (weights + activations, or KV), flops the
 * multiply-adds x 2. Weights and KV rotate over enough copies to exceed
 * three times the L2 cache, as successive layers do in a real step.
 *
 * Memory: plain cudaMalloc; each experiment is sized to what cudaMemGetInfo
 * reports free, less a margin, and what does not fit is skipped with a
 * `# skipped:` line. Time: after --budget-s seconds (default 240) the
 * remaining experiments are skipped the same way, so a run stays under five
 * minutes on an H100.
 *
 * Failure: a CUDA or cuBLAS error prints `servesim-probe: FILE:LINE: …` and
 * exits 1; bad arguments exit 2. The CSV goes to a temporary file renamed
 * into place at the end, so --out is written whole or not at all.
 *
 * --check runs the attention kernels and a GEMM on small shapes against
 * naive reference kernels and exits 0 when they agree (this code was
 * compiled, not run, where it was written: run --check first on a new GPU).
 */
#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <mma.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define PROBE_VERSION 1

typedef __nv_bfloat16 bf16;

/* ---- errors ------------------------------------------------------------ */

static void die(const char *file, int line, const char *what, const char *why)
{
	fprintf(stderr, "servesim-probe: %s:%d: %s: %s\n", file, line, what, why);
	exit(1);
}

#define CK(call)                                                                     \
	do {                                                                         \
		cudaError_t ck_rc = (call);                                          \
		if (ck_rc != cudaSuccess)                                            \
			die(__FILE__, __LINE__, #call, cudaGetErrorString(ck_rc));   \
	} while (0)

#define BK(call)                                                                     \
	do {                                                                         \
		cublasStatus_t bk_rc = (call);                                       \
		if (bk_rc != CUBLAS_STATUS_SUCCESS)                                  \
			die(__FILE__, __LINE__, #call, cublasGetStatusString(bk_rc)); \
	} while (0)

/* ---- the run's state ---------------------------------------------------- */

struct dims {
	int hidden, intermediate, heads, kv_heads, head_dim, vocab, tp;
};

struct probe {
	struct dims d;
	int heads_r, kv_r, inter_r, vocab_r;   /* per tensor-parallel rank */
	int max_tokens, max_context;
	cudaStream_t stream;
	cublasHandle_t blas;
	cublasLtHandle_t lt;
	void *lt_ws;                 /* cuBLASLt workspace */
	size_t lt_ws_bytes;
	cudaEvent_t ev0, ev1;
	size_t l2_bytes;
	int cc_major, cc_minor, sms;
	double t_start_s, budget_s;
	FILE *out;
	int rows;
};

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int over_budget(const struct probe *p)
{
	return now_s() - p->t_start_s > p->budget_s;
}

static void note_skip(struct probe *p, const char *fmt, ...)
{
	va_list ap;
	fprintf(p->out, "# skipped: ");
	va_start(ap, fmt);
	vfprintf(p->out, fmt, ap);
	va_end(ap);
	fprintf(p->out, "\n");
}

static void emit(struct probe *p, const char *kind, const char *shape, long long tokens,
		 long long context, const char *dtype, double time_us, double bytes, double flops)
{
	fprintf(p->out, "%s,%s,%lld,%lld,%s,%.3f,%.0f,%.0f\n", kind, shape, tokens, context, dtype,
		time_us, bytes, flops);
	p->rows++;
}

/* Free device memory one experiment may take: what is free, less 1 GiB
 * and 10% for cuBLAS workspaces and fragmentation. */
static size_t budget_bytes(void)
{
	size_t free_b = 0, total_b = 0;
	CK(cudaMemGetInfo(&free_b, &total_b));
	double b = (double)free_b * 0.9 - 1073741824.0;
	return b > 0 ? (size_t)b : 0;
}

/* cudaMalloc that reports failure instead of exiting (an experiment that
 * does not fit is skipped). */
static void *try_alloc(size_t bytes)
{
	void *ptr = NULL;
	if (cudaMalloc(&ptr, bytes ? bytes : 1) != cudaSuccess) {
		(void)cudaGetLastError();
		return NULL;
	}
	return ptr;
}

static void release(void *ptr)
{
	if (ptr)
		CK(cudaFree(ptr));
}

/* ---- fill kernels -------------------------------------------------------- */

__device__ static float hash_unit(size_t i, uint32_t seed)
{
	uint32_t h = (uint32_t)i * 2654435761u ^ (uint32_t)(i >> 32) * 40503u ^ seed;
	h ^= h >> 16;
	h *= 0x7feb352du;
	h ^= h >> 15;
	h *= 0x846ca68bu;
	h ^= h >> 16;
	return (float)(h >> 8) * (2.0f / 16777216.0f) - 1.0f;   /* [-1, 1) */
}

__global__ void k_fill_bf16(bf16 *ptr, size_t n, uint32_t seed, float scale)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x)
		ptr[i] = __float2bfloat16(hash_unit(i, seed) * scale);
}

__global__ void k_fill_fp8(__nv_fp8_storage_t *ptr, size_t n, uint32_t seed, float scale)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x)
		ptr[i] = __nv_cvt_float_to_fp8(hash_unit(i, seed) * scale, __NV_SATFINITE, __NV_E4M3);
}

static void fill_bf16(struct probe *p, void *ptr, size_t n, uint32_t seed, float scale)
{
	k_fill_bf16<<<p->sms * 8, 256, 0, p->stream>>>((bf16 *)ptr, n, seed, scale);
	CK(cudaGetLastError());
}

static void fill_fp8(struct probe *p, void *ptr, size_t n, uint32_t seed, float scale)
{
	k_fill_fp8<<<p->sms * 8, 256, 0, p->stream>>>((__nv_fp8_storage_t *)ptr, n, seed, scale);
	CK(cudaGetLastError());
}

/* ---- timing --------------------------------------------------------------- */

typedef void (*work_fn)(struct probe *p, void *arg, int rep);

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* Median of five batch means, in microseconds. One warm-up call, one timed
 * call to size the batches (about 2 ms each, 1 to 1000 calls). rep counts
 * up across calls so the work can rotate over copies of its data. */
static double time_us(struct probe *p, work_fn fn, void *arg)
{
	int rep = 0;
	float ms = 0;
	fn(p, arg, rep++);
	CK(cudaStreamSynchronize(p->stream));
	CK(cudaEventRecord(p->ev0, p->stream));
	fn(p, arg, rep++);
	CK(cudaEventRecord(p->ev1, p->stream));
	CK(cudaEventSynchronize(p->ev1));
	CK(cudaEventElapsedTime(&ms, p->ev0, p->ev1));
	double one_us = ms * 1e3 > 0.5 ? ms * 1e3 : 0.5;
	int n = (int)(2000.0 / one_us);
	n = n < 1 ? 1 : n > 1000 ? 1000 : n;
	double batch[5];
	for (int b = 0; b < 5; b++) {
		CK(cudaEventRecord(p->ev0, p->stream));
		for (int i = 0; i < n; i++)
			fn(p, arg, rep++);
		CK(cudaEventRecord(p->ev1, p->stream));
		CK(cudaEventSynchronize(p->ev1));
		CK(cudaEventElapsedTime(&ms, p->ev0, p->ev1));
		batch[b] = ms * 1e3 / n;
	}
	qsort(batch, 5, sizeof *batch, cmp_double);
	return batch[2];
}

/* How many copies of `bytes` make three times the L2 cache (1..max). */
static int copies_for(const struct probe *p, double bytes, int max)
{
	int n = (int)ceil(3.0 * (double)p->l2_bytes / (bytes > 1 ? bytes : 1));
	return n < 1 ? 1 : n > max ? max : n;
}

/* ---- memory bandwidth ------------------------------------------------------ */

__global__ void k_stream_read(const uint4 *__restrict__ a, size_t n, unsigned *sink)
{
	size_t stride = (size_t)gridDim.x * blockDim.x;
	size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
	unsigned acc = 0;
	for (; i + 3 * stride < n; i += 4 * stride) {
		uint4 v0 = a[i], v1 = a[i + stride], v2 = a[i + 2 * stride], v3 = a[i + 3 * stride];
		acc ^= v0.x ^ v0.y ^ v0.z ^ v0.w ^ v1.x ^ v1.y ^ v1.z ^ v1.w;
		acc ^= v2.x ^ v2.y ^ v2.z ^ v2.w ^ v3.x ^ v3.y ^ v3.z ^ v3.w;
	}
	for (; i < n; i += stride) {
		uint4 v = a[i];
		acc ^= v.x ^ v.y ^ v.z ^ v.w;
	}
	if (acc == 0x9e3779b9u)   /* practically never: keeps the loads alive */
		*sink = acc;
}

struct bw_run {
	void *a, *b;
	size_t bytes;
	unsigned *sink;
};

static void bw_read_once(struct probe *p, void *arg, int rep)
{
	struct bw_run *r = (struct bw_run *)arg;
	(void)rep;
	k_stream_read<<<p->sms * 4, 512, 0, p->stream>>>((const uint4 *)r->a, r->bytes / 16, r->sink);
}

static void bw_copy_once(struct probe *p, void *arg, int rep)
{
	struct bw_run *r = (struct bw_run *)arg;
	(void)rep;
	CK(cudaMemcpyAsync(r->b, r->a, r->bytes, cudaMemcpyDeviceToDevice, p->stream));
}

static void probe_bandwidth(struct probe *p)
{
	static const double sizes_mib[] = { 256, 1024, 4096 };
	for (size_t s = 0; s < sizeof sizes_mib / sizeof *sizes_mib; s++) {
		struct bw_run r = { NULL, NULL, (size_t)(sizes_mib[s] * 1048576.0), NULL };
		char shape[48];
		snprintf(shape, sizeof shape, "buf_%.0fMiB", sizes_mib[s]);
		if (over_budget(p) || 2 * r.bytes > budget_bytes()) {
			note_skip(p, "stream_read/d2d_copy %s (memory or time)", shape);
			continue;
		}
		r.a = try_alloc(r.bytes);
		r.b = try_alloc(r.bytes);
		r.sink = (unsigned *)try_alloc(sizeof(unsigned));
		if (!r.a || !r.b || !r.sink) {
			note_skip(p, "stream_read/d2d_copy %s (cudaMalloc failed)", shape);
		} else {
			fill_bf16(p, r.a, r.bytes / 2, 11, 1.0f);
			emit(p, "stream_read", shape, 0, 0, "none", time_us(p, bw_read_once, &r),
			     (double)r.bytes, 0);
			emit(p, "d2d_copy", shape, 0, 0, "none", time_us(p, bw_copy_once, &r),
			     2.0 * (double)r.bytes, 0);
		}
		release(r.a);
		release(r.b);
		release(r.sink);
	}
}

/* ---- GEMM ------------------------------------------------------------------ */

/* One linear layer Y[m, n] = X[m, k] W[n, k]^T (PyTorch's layout). In
 * cuBLAS's column-major terms: C(n x m) = op_T(W: k x n) * X(k x m), the
 * "TN" form fp8 requires. */
struct gemm_run {
	int m, n, k;
	int fp8;
	void *w;              /* n_copies weight matrices */
	size_t w_bytes;
	int n_copies;
	void *x, *y;
	cublasLtMatmulDesc_t op;
	cublasLtMatrixLayout_t la, lb, lc;
	cublasLtMatmulAlgo_t algo;
};

static void gemm_once(struct probe *p, void *arg, int rep)
{
	struct gemm_run *g = (struct gemm_run *)arg;
	const float one = 1.0f, zero = 0.0f;
	const char *w = (const char *)g->w + (size_t)(rep % g->n_copies) * g->w_bytes;
	if (!g->fp8) {
		BK(cublasGemmEx(p->blas, CUBLAS_OP_T, CUBLAS_OP_N, g->n, g->m, g->k, &one, w,
				CUDA_R_16BF, g->k, g->x, CUDA_R_16BF, g->k, &zero, g->y, CUDA_R_16BF,
				g->n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
		return;
	}
	BK(cublasLtMatmul(p->lt, g->op, &one, w, g->la, g->x, g->lb, &zero, g->y, g->lc, g->y,
			  g->lc, &g->algo, p->lt_ws, p->lt_ws_bytes, p->stream));
}

/* Sets up cuBLASLt for an fp8 GEMM of g's shape; 0 when no algorithm. */
static int gemm_fp8_setup(struct probe *p, struct gemm_run *g)
{
	cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
	BK(cublasLtMatmulDescCreate(&g->op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
	BK(cublasLtMatmulDescSetAttribute(g->op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta));
	BK(cublasLtMatmulDescSetAttribute(g->op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb));
	BK(cublasLtMatrixLayoutCreate(&g->la, CUDA_R_8F_E4M3, g->k, g->n, g->k));
	BK(cublasLtMatrixLayoutCreate(&g->lb, CUDA_R_8F_E4M3, g->k, g->m, g->k));
	BK(cublasLtMatrixLayoutCreate(&g->lc, CUDA_R_16BF, g->n, g->m, g->n));
	cublasLtMatmulPreference_t pref;
	BK(cublasLtMatmulPreferenceCreate(&pref));
	BK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
						&p->lt_ws_bytes, sizeof p->lt_ws_bytes));
	cublasLtMatmulHeuristicResult_t res;
	int found = 0;
	cublasStatus_t st = cublasLtMatmulAlgoGetHeuristic(p->lt, g->op, g->la, g->lb, g->lc, g->lc,
							   pref, 1, &res, &found);
	BK(cublasLtMatmulPreferenceDestroy(pref));
	if (st != CUBLAS_STATUS_SUCCESS || found < 1)
		return 0;
	g->algo = res.algo;
	return 1;
}

static void gemm_fp8_teardown(struct gemm_run *g)
{
	BK(cublasLtMatrixLayoutDestroy(g->la));
	BK(cublasLtMatrixLayoutDestroy(g->lb));
	BK(cublasLtMatrixLayoutDestroy(g->lc));
	BK(cublasLtMatmulDescDestroy(g->op));
}

struct gemm_shape {
	const char *name;
	int n, k;
};

static int gemm_shapes(const struct probe *p, struct gemm_shape *out)
{
	int hd = p->d.head_dim;
	const struct gemm_shape all[5] = {
		{ "qkv", (p->heads_r + 2 * p->kv_r) * hd, p->d.hidden },
		{ "o", p->d.hidden, p->heads_r * hd },
		{ "gate_up", 2 * p->inter_r, p->d.hidden },
		{ "down", p->d.hidden, p->inter_r },
		{ "lm_head", p->vocab_r, p->d.hidden },
	};
	memcpy(out, all, sizeof all);
	return 5;
}

static void probe_gemm_shape(struct probe *p, const struct gemm_shape *s, int fp8)
{
	const char *dtype = fp8 ? "fp8" : "bf16";
	size_t eb = fp8 ? 1 : 2;
	/* fp8 needs leading dimensions that are multiples of 16. */
	int n = fp8 ? (s->n + 15) / 16 * 16 : s->n, k = s->k;
	char shape[64];
	snprintf(shape, sizeof shape, "%s_n%d_k%d", s->name, n, k);
	if (fp8 && k % 16) {
		note_skip(p, "gemm %s fp8 (k not a multiple of 16)", shape);
		return;
	}
	struct gemm_run g;
	memset(&g, 0, sizeof g);
	g.n = n;
	g.k = k;
	g.fp8 = fp8;
	g.w_bytes = (size_t)n * k * eb;
	g.n_copies = copies_for(p, (double)g.w_bytes, 16);
	int m_max = p->max_tokens;
	size_t budget = budget_bytes();
	for (;;) {
		size_t need = g.n_copies * g.w_bytes + (size_t)m_max * k * eb + (size_t)m_max * n * 2;
		if (need <= budget)
			break;
		if (g.n_copies > 1)
			g.n_copies = 1;
		else if (m_max > 1)
			m_max /= 2;
		else {
			note_skip(p, "gemm %s %s (weights do not fit)", shape, dtype);
			return;
		}
	}
	if (m_max < p->max_tokens)
		note_skip(p, "gemm %s %s above %d tokens (memory)", shape, dtype, m_max);
	g.w = try_alloc(g.n_copies * g.w_bytes);
	g.x = try_alloc((size_t)m_max * k * eb);
	g.y = try_alloc((size_t)m_max * n * 2);
	if (!g.w || !g.x || !g.y) {
		note_skip(p, "gemm %s %s (cudaMalloc failed)", shape, dtype);
		goto out;
	}
	if (fp8) {
		fill_fp8(p, g.w, g.n_copies * g.w_bytes, 21, 0.5f);
		fill_fp8(p, g.x, (size_t)m_max * k, 22, 1.0f);
	} else {
		fill_bf16(p, g.w, g.n_copies * g.w_bytes / 2, 21, 0.05f);
		fill_bf16(p, g.x, (size_t)m_max * k, 22, 1.0f);
	}
	for (int m = 1; m <= m_max; m *= 2) {
		if (over_budget(p)) {
			note_skip(p, "gemm %s %s from %d tokens (time budget)", shape, dtype, m);
			break;
		}
		g.m = m;
		if (fp8 && !gemm_fp8_setup(p, &g)) {
			gemm_fp8_teardown(&g);
			note_skip(p, "gemm %s fp8 at %d tokens (no cuBLASLt algorithm)", shape, m);
			continue;
		}
		double t = time_us(p, gemm_once, &g);
		double bytes = (double)g.w_bytes + (double)m * k * eb + (double)m * n * 2;
		emit(p, "gemm", shape, m, 0, dtype, t, bytes, 2.0 * m * (double)n * k);
		if (fp8)
			gemm_fp8_teardown(&g);
	}
out:
	release(g.w);
	release(g.x);
	release(g.y);
}

static void probe_gemm(struct probe *p, int fp8)
{
	struct gemm_shape shapes[5];
	int n = gemm_shapes(p, shapes);
	for (int i = 0; i < n; i++)
		probe_gemm_shape(p, &shapes[i], fp8);
}

/* ---- attention kernels ------------------------------------------------------ */

#define FA_WARPS 4
#define FA_Q (16 * FA_WARPS)   /* queries per block: 16 per warp */
#define FA_K 32                /* keys per tile */

static size_t fa_smem_bytes(int hd)
{
	return (size_t)FA_Q * hd * 2 + 2 * (size_t)FA_K * hd * 2 + FA_WARPS * 16 * FA_K * 4 +
	       FA_WARPS * 16 * FA_K * 2 + FA_WARPS * 16 * (size_t)hd * 4 + 2 * FA_Q * 4;
}

/* Causal attention of T queries at absolute positions C..C+T-1 over keys
 * 0..C+T-1, one block per (64 queries, head); GQA maps head h to KV head
 * h / (heads / kv_heads). Rows of q, k, v, o are tokens, `*_ld` elements
 * apart, a head's HD values at h * HD. Scores go through WMMA tensor cores
 * (bf16 in, fp32 out) into shared memory, the softmax is online (running
 * max m and sum l per row, base 2), O accumulates in shared fp32. */
template <int HD>
__global__ void __launch_bounds__(FA_WARPS * 32)
k_flash_prefill(const bf16 *q, int q_ld, const bf16 *k, int k_ld, const bf16 *v, int v_ld,
		bf16 *o, int o_ld, int T, int C, int heads, int kv_heads, float scale_log2)
{
	using namespace nvcuda;
	extern __shared__ __align__(128) unsigned char smem[];
	bf16 *Qs = (bf16 *)smem;
	bf16 *Ks = Qs + FA_Q * HD;
	bf16 *Vs = Ks + FA_K * HD;
	float *S = (float *)(Vs + FA_K * HD);
	bf16 *P = (bf16 *)(S + FA_WARPS * 16 * FA_K);
	float *O = (float *)(P + FA_WARPS * 16 * FA_K);
	float *Ms = O + FA_WARPS * 16 * HD;
	float *Ls = Ms + FA_Q;
	const int VEC = 8;   /* bf16 per 16-byte load */
	const uint4 zero4 = make_uint4(0, 0, 0, 0);

	int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
	int h = blockIdx.y, g = h / (heads / kv_heads);
	int q0 = blockIdx.x * FA_Q;
	for (int i = threadIdx.x; i < FA_Q * HD / VEC; i += blockDim.x) {
		int r = i / (HD / VEC), c = (i % (HD / VEC)) * VEC;
		uint4 val = zero4;
		if (q0 + r < T)
			val = *(const uint4 *)(q + (size_t)(q0 + r) * q_ld + h * HD + c);
		*(uint4 *)(Qs + r * HD + c) = val;
	}
	for (int i = threadIdx.x; i < FA_WARPS * 16 * HD; i += blockDim.x)
		O[i] = 0.0f;
	for (int i = threadIdx.x; i < FA_Q; i += blockDim.x) {
		Ms[i] = -INFINITY;
		Ls[i] = 0.0f;
	}
	int n_keys = C + min(q0 + FA_Q, T);
	int wq0 = q0 + warp * 16;
	int w_last_key = C + min(wq0 + 15, T - 1);
	float *Sw = S + warp * 16 * FA_K;
	bf16 *Pw = P + warp * 16 * FA_K;
	float *Ow = O + warp * 16 * HD;
	int row = lane >> 1, half = lane & 1;
	for (int kt = 0; kt < n_keys; kt += FA_K) {
		__syncthreads();
		for (int i = threadIdx.x; i < FA_K * HD / VEC; i += blockDim.x) {
			int r = i / (HD / VEC), c = (i % (HD / VEC)) * VEC;
			uint4 kv = zero4, vv = zero4;
			if (kt + r < n_keys) {
				kv = *(const uint4 *)(k + (size_t)(kt + r) * k_ld + g * HD + c);
				vv = *(const uint4 *)(v + (size_t)(kt + r) * v_ld + g * HD + c);
			}
			*(uint4 *)(Ks + r * HD + c) = kv;
			*(uint4 *)(Vs + r * HD + c) = vv;
		}
		__syncthreads();
		if (wq0 >= T || kt > w_last_key)
			continue;   /* warp-uniform: nothing this warp's rows can see */

		for (int nt = 0; nt < FA_K / 16; nt++) {
			wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
			wmma::fill_fragment(acc, 0.0f);
			for (int kk = 0; kk < HD / 16; kk++) {
				wmma::fragment<wmma::matrix_a, 16, 16, 16, bf16, wmma::row_major> a;
				wmma::fragment<wmma::matrix_b, 16, 16, 16, bf16, wmma::col_major> b;
				wmma::load_matrix_sync(a, Qs + warp * 16 * HD + kk * 16, HD);
				wmma::load_matrix_sync(b, Ks + nt * 16 * HD + kk * 16, HD);
				wmma::mma_sync(acc, a, b, acc);
			}
			wmma::store_matrix_sync(Sw + nt * 16, acc, FA_K, wmma::mem_row_major);
		}
		__syncwarp();

		/* Online softmax: two lanes per row, 16 columns each. */
		int qpos = C + wq0 + row;
		bool live = wq0 + row < T;
		float sv[16], mx = -INFINITY;
#pragma unroll
		for (int j = 0; j < 16; j++) {
			int key = kt + half * 16 + j;
			float s = Sw[row * FA_K + half * 16 + j] * scale_log2;
			if (!live || key > qpos)
				s = -INFINITY;
			sv[j] = s;
			mx = fmaxf(mx, s);
		}
		mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
		float m_old = Ms[warp * 16 + row];
		float m_new = fmaxf(m_old, mx);
		float alpha = 1.0f, sum = 0.0f;
		if (m_new == -INFINITY) {
#pragma unroll
			for (int j = 0; j < 16; j++)
				Pw[row * FA_K + half * 16 + j] = __float2bfloat16(0.0f);
		} else {
			alpha = exp2f(m_old - m_new);
#pragma unroll
			for (int j = 0; j < 16; j++) {
				float pj = exp2f(sv[j] - m_new);
				sum += pj;
				Pw[row * FA_K + half * 16 + j] = __float2bfloat16(pj);
			}
		}
		sum += __shfl_xor_sync(0xffffffffu, sum, 1);
		for (int d = half * (HD / 2); d < (half + 1) * (HD / 2); d++)
			Ow[row * HD + d] *= alpha;
		float l_old = Ls[warp * 16 + row];
		__syncwarp();
		if (half == 0) {
			Ms[warp * 16 + row] = m_new;
			Ls[warp * 16 + row] = l_old * alpha + sum;
		}
		__syncwarp();

		for (int dt = 0; dt < HD / 16; dt++) {
			wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
			wmma::load_matrix_sync(acc, Ow + dt * 16, HD, wmma::mem_row_major);
			for (int kk = 0; kk < FA_K / 16; kk++) {
				wmma::fragment<wmma::matrix_a, 16, 16, 16, bf16, wmma::row_major> a;
				wmma::fragment<wmma::matrix_b, 16, 16, 16, bf16, wmma::row_major> b;
				wmma::load_matrix_sync(a, Pw + kk * 16, FA_K);
				wmma::load_matrix_sync(b, Vs + kk * 16 * HD + dt * 16, HD);
				wmma::mma_sync(acc, a, b, acc);
			}
			wmma::store_matrix_sync(Ow + dt * 16, acc, HD, wmma::mem_row_major);
		}
		__syncwarp();
	}
	if (wq0 < T && wq0 + row < T) {
		float l = Ls[warp * 16 + row];
		float inv = l > 0.0f ? 1.0f / l : 0.0f;
		for (int d = half * (HD / 2); d < (half + 1) * (HD / 2); d++)
			o[(size_t)(wq0 + row) * o_ld + h * HD + d] = __float2bfloat16(Ow[row * HD + d] * inv);
	}
}

#define PD_PART 256    /* tokens per split-K partition */
#define PD_WARPS 4
#define PD_BLOCK 16    /* KV block size in tokens (vLLM's default) */
#define PD_MAXG 16     /* query heads per KV head the kernel supports */

/* Paged decode, split-K: one block per (partition of PD_PART tokens, KV
 * head, sequence). The cache is [block][PD_BLOCK tokens][kv_heads][HD] for
 * K and for V, reached through each sequence's block table. Each warp takes
 * every PD_WARPS-th token of the partition; each lane holds HD/32 of the
 * head's values; every query head of the group keeps its own online
 * softmax. Partial (max, sum, weighted V) go to part_* for k_decode_reduce. */
template <int HD>
__global__ void __launch_bounds__(PD_WARPS * 32)
k_paged_decode(const bf16 *q, int q_ld, const bf16 *k_cache, const bf16 *v_cache,
	       const int *block_tables, int max_blocks, const int *ctx_lens, int heads, int kv_heads,
	       float scale_log2, float *part_m, float *part_l, float *part_acc, int max_parts)
{
	const int E = HD / 32;
	__shared__ float sm_m[PD_WARPS][PD_MAXG], sm_l[PD_WARPS][PD_MAXG];
	__shared__ float sm_acc[PD_WARPS][PD_MAXG][HD];
	int part = blockIdx.x, g = blockIdx.y, b = blockIdx.z;
	int G = heads / kv_heads;
	int ctx = ctx_lens[b];
	int t0 = part * PD_PART;
	if (t0 >= ctx)
		return;   /* block-uniform, before any barrier */
	int t1 = min(t0 + PD_PART, ctx);
	int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
	float qv[PD_MAXG][E], acc[PD_MAXG][E], m[PD_MAXG], l[PD_MAXG];
#pragma unroll
	for (int j = 0; j < PD_MAXG; j++) {
		m[j] = -INFINITY;
		l[j] = 0.0f;
#pragma unroll
		for (int e = 0; e < E; e++) {
			acc[j][e] = 0.0f;
			qv[j][e] = j < G ? __bfloat162float(q[(size_t)b * q_ld + (g * G + j) * HD + lane * E + e]) *
						   scale_log2
					 : 0.0f;
		}
	}
	const int *bt = block_tables + (size_t)b * max_blocks;
	size_t row_stride = (size_t)kv_heads * HD, blk_stride = PD_BLOCK * row_stride;
	for (int t = t0 + warp; t < t1; t += PD_WARPS) {
		size_t base = (size_t)bt[t / PD_BLOCK] * blk_stride + (t % PD_BLOCK) * row_stride +
			      (size_t)g * HD + lane * E;
		float kf[E], vf[E];
#pragma unroll
		for (int e = 0; e < E; e++) {
			kf[e] = __bfloat162float(k_cache[base + e]);
			vf[e] = __bfloat162float(v_cache[base + e]);
		}
#pragma unroll
		for (int j = 0; j < PD_MAXG; j++) {
			if (j >= G)
				break;
			float s = 0.0f;
#pragma unroll
			for (int e = 0; e < E; e++)
				s += qv[j][e] * kf[e];
#pragma unroll
			for (int off = 16; off > 0; off >>= 1)
				s += __shfl_xor_sync(0xffffffffu, s, off);
			float m_new = fmaxf(m[j], s);
			float alpha = exp2f(m[j] - m_new), pj = exp2f(s - m_new);
			l[j] = l[j] * alpha + pj;
#pragma unroll
			for (int e = 0; e < E; e++)
				acc[j][e] = acc[j][e] * alpha + pj * vf[e];
			m[j] = m_new;
		}
	}
#pragma unroll
	for (int j = 0; j < PD_MAXG; j++) {
		if (j >= G)
			break;
		if (lane == 0) {
			sm_m[warp][j] = m[j];
			sm_l[warp][j] = l[j];
		}
#pragma unroll
		for (int e = 0; e < E; e++)
			sm_acc[warp][j][lane * E + e] = acc[j][e];
	}
	__syncthreads();
	for (int i = threadIdx.x; i < G * HD; i += blockDim.x) {
		int j = i / HD, d = i % HD;
		float M = -INFINITY, L = 0.0f, A = 0.0f;
		for (int w = 0; w < PD_WARPS; w++)
			M = fmaxf(M, sm_m[w][j]);
		for (int w = 0; w < PD_WARPS; w++) {
			if (sm_m[w][j] == -INFINITY)
				continue;
			float f = exp2f(sm_m[w][j] - M);
			L += sm_l[w][j] * f;
			A += sm_acc[w][j][d] * f;
		}
		size_t idx = ((size_t)b * heads + g * G + j) * max_parts + part;
		part_acc[idx * HD + d] = A;
		if (d == 0) {
			part_m[idx] = M;
			part_l[idx] = L;
		}
	}
}

/* Combines the partitions of one (head, sequence); blockDim.x = HD. */
template <int HD>
__global__ void k_decode_reduce(const float *part_m, const float *part_l, const float *part_acc,
				const int *ctx_lens, int heads, int max_parts, bf16 *o, int o_ld)
{
	int h = blockIdx.x, b = blockIdx.y, d = threadIdx.x;
	int np = (ctx_lens[b] + PD_PART - 1) / PD_PART;
	size_t base = ((size_t)b * heads + h) * max_parts;
	float M = -INFINITY, L = 0.0f, A = 0.0f;
	for (int pi = 0; pi < np; pi++)
		M = fmaxf(M, part_m[base + pi]);
	for (int pi = 0; pi < np; pi++) {
		if (part_m[base + pi] == -INFINITY)
			continue;
		float f = exp2f(part_m[base + pi] - M);
		L += part_l[base + pi] * f;
		A += part_acc[(base + pi) * HD + d] * f;
	}
	o[(size_t)b * o_ld + h * HD + d] = __float2bfloat16(L > 0.0f ? A / L : 0.0f);
}

/* SiLU(gate) x up for rows of [gate (inter) | up (inter)]. */
__global__ void k_silu_mul(const bf16 *gu, bf16 *out, int rows, int inter)
{
	size_t n = (size_t)rows * inter;
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x) {
		size_t r = i / inter, c = i % inter;
		float gt = __bfloat162float(gu[r * 2 * inter + c]);
		float up = __bfloat162float(gu[r * 2 * inter + inter + c]);
		out[i] = __float2bfloat16(gt / (1.0f + __expf(-gt)) * up);
	}
}

static float scale_log2_of(int hd)
{
	return (float)(1.4426950408889634 / sqrt((double)hd));
}

/* Launchers: 0 when the head size has no kernel (64 and 128 do). */
static int launch_flash(struct probe *p, const bf16 *q, int q_ld, const bf16 *k, int k_ld,
			const bf16 *v, int v_ld, bf16 *o, int o_ld, int T, int C, int heads,
			int kv_heads, int hd)
{
	dim3 grid((T + FA_Q - 1) / FA_Q, heads);
	size_t sm = fa_smem_bytes(hd);
	float sc = scale_log2_of(hd);
	if (hd == 128)
		k_flash_prefill<128><<<grid, FA_WARPS * 32, sm, p->stream>>>(q, q_ld, k, k_ld, v, v_ld, o,
									      o_ld, T, C, heads, kv_heads, sc);
	else if (hd == 64)
		k_flash_prefill<64><<<grid, FA_WARPS * 32, sm, p->stream>>>(q, q_ld, k, k_ld, v, v_ld, o,
									     o_ld, T, C, heads, kv_heads, sc);
	else
		return 0;
	CK(cudaGetLastError());
	return 1;
}

struct paged {
	int batch, ctx, heads, kv_heads, hd;
	int max_blocks, blocks_per_copy, n_copies, max_parts;
	bf16 *k_cache, *v_cache;
	int *block_tables;     /* n_copies x batch x max_blocks */
	int *ctx_lens;
	float *part_m, *part_l, *part_acc;
};

static int launch_decode(struct probe *p, const struct paged *pg, int copy, const bf16 *q, int q_ld,
			 bf16 *o, int o_ld)
{
	dim3 grid(pg->max_parts, pg->kv_heads, pg->batch);
	const int *bt = pg->block_tables + (size_t)copy * pg->batch * pg->max_blocks;
	float sc = scale_log2_of(pg->hd);
	if (pg->hd == 128) {
		k_paged_decode<128><<<grid, PD_WARPS * 32, 0, p->stream>>>(
			q, q_ld, pg->k_cache, pg->v_cache, bt, pg->max_blocks, pg->ctx_lens, pg->heads,
			pg->kv_heads, sc, pg->part_m, pg->part_l, pg->part_acc, pg->max_parts);
		k_decode_reduce<128><<<dim3(pg->heads, pg->batch), 128, 0, p->stream>>>(
			pg->part_m, pg->part_l, pg->part_acc, pg->ctx_lens, pg->heads, pg->max_parts, o, o_ld);
	} else if (pg->hd == 64) {
		k_paged_decode<64><<<grid, PD_WARPS * 32, 0, p->stream>>>(
			q, q_ld, pg->k_cache, pg->v_cache, bt, pg->max_blocks, pg->ctx_lens, pg->heads,
			pg->kv_heads, sc, pg->part_m, pg->part_l, pg->part_acc, pg->max_parts);
		k_decode_reduce<64><<<dim3(pg->heads, pg->batch), 64, 0, p->stream>>>(
			pg->part_m, pg->part_l, pg->part_acc, pg->ctx_lens, pg->heads, pg->max_parts, o, o_ld);
	} else {
		return 0;
	}
	CK(cudaGetLastError());
	return 1;
}

static size_t paged_bytes(int batch, int ctx, int kv_heads, int hd, int heads, int n_copies)
{
	size_t blocks = (size_t)batch * ((ctx + PD_BLOCK - 1) / PD_BLOCK);
	size_t parts = (size_t)(ctx + PD_PART - 1) / PD_PART;
	return 2 * (size_t)n_copies * blocks * PD_BLOCK * kv_heads * hd * 2 +
	       (size_t)batch * heads * parts * (hd + 2) * 4;
}

static void paged_destroy(struct paged *pg)
{
	release(pg->k_cache);
	release(pg->v_cache);
	release(pg->block_tables);
	release(pg->ctx_lens);
	release(pg->part_m);
	release(pg->part_l);
	release(pg->part_acc);
	memset(pg, 0, sizeof *pg);
}

/* Allocates a paged KV pool for batch sequences of ctx tokens, n_copies
 * times, each copy's blocks shuffled (a deterministic LCG), as a long-lived
 * vLLM pool is. Returns 0 when cudaMalloc fails (nothing left allocated). */
static int paged_create(struct probe *p, struct paged *pg, int batch, int ctx, int heads,
			int kv_heads, int hd, int n_copies)
{
	memset(pg, 0, sizeof *pg);
	pg->batch = batch;
	pg->ctx = ctx;
	pg->heads = heads;
	pg->kv_heads = kv_heads;
	pg->hd = hd;
	pg->n_copies = n_copies;
	pg->max_blocks = (ctx + PD_BLOCK - 1) / PD_BLOCK;
	pg->blocks_per_copy = batch * pg->max_blocks;
	pg->max_parts = (ctx + PD_PART - 1) / PD_PART;
	size_t n_blocks = (size_t)n_copies * pg->blocks_per_copy;
	size_t cache_elems = n_blocks * PD_BLOCK * kv_heads * hd;
	size_t parts = (size_t)batch * heads * pg->max_parts;
	pg->k_cache = (bf16 *)try_alloc(cache_elems * 2);
	pg->v_cache = (bf16 *)try_alloc(cache_elems * 2);
	pg->block_tables = (int *)try_alloc(n_blocks * sizeof(int));
	pg->ctx_lens = (int *)try_alloc((size_t)batch * sizeof(int));
	pg->part_m = (float *)try_alloc(parts * sizeof(float));
	pg->part_l = (float *)try_alloc(parts * sizeof(float));
	pg->part_acc = (float *)try_alloc(parts * hd * sizeof(float));
	if (!pg->k_cache || !pg->v_cache || !pg->block_tables || !pg->ctx_lens || !pg->part_m ||
	    !pg->part_l || !pg->part_acc) {
		paged_destroy(pg);   /* release() takes NULL */
		return 0;
	}
	fill_bf16(p, pg->k_cache, cache_elems, 31, 1.0f);
	fill_bf16(p, pg->v_cache, cache_elems, 32, 1.0f);
	int *host = (int *)malloc(n_blocks * sizeof(int));
	if (!host)
		die(__FILE__, __LINE__, "malloc", "out of memory");
	uint64_t lcg = 0x5eedULL;
	for (int c = 0; c < n_copies; c++) {
		int *tab = host + (size_t)c * pg->blocks_per_copy;
		for (int i = 0; i < pg->blocks_per_copy; i++)
			tab[i] = c * pg->blocks_per_copy + i;
		for (int i = pg->blocks_per_copy - 1; i > 0; i--) {
			lcg = lcg * 6364136223846793005ULL + 1442695040888963407ULL;
			int j = (int)((lcg >> 33) % (uint64_t)(i + 1));
			int t = tab[i];
			tab[i] = tab[j];
			tab[j] = t;
		}
	}
	int *lens = (int *)malloc((size_t)batch * sizeof(int));
	if (!lens)
		die(__FILE__, __LINE__, "malloc", "out of memory");
	for (int b = 0; b < batch; b++)
		lens[b] = ctx;
	CK(cudaMemcpy(pg->block_tables, host, n_blocks * sizeof(int), cudaMemcpyHostToDevice));
	CK(cudaMemcpy(pg->ctx_lens, lens, (size_t)batch * sizeof(int), cudaMemcpyHostToDevice));
	free(host);
	free(lens);
	return 1;
}

/* ---- attention measurements -------------------------------------------------- */

struct prefill_run {
	int T, C, n_copies;
	size_t kv_elems;      /* one copy of K (or V) */
	bf16 *q, *k, *v, *o;
	struct probe *p;
};

static void prefill_once(struct probe *p, void *arg, int rep)
{
	struct prefill_run *r = (struct prefill_run *)arg;
	size_t off = (size_t)(rep % r->n_copies) * r->kv_elems;
	int hq = p->heads_r * p->d.head_dim, hk = p->kv_r * p->d.head_dim;
	launch_flash(p, r->q, hq, r->k + off, hk, r->v + off, hk, r->o, hq, r->T, r->C, p->heads_r,
		     p->kv_r, p->d.head_dim);
}

static double causal_pairs(double n, double c)
{
	return n * c + n * (n + 1) / 2;
}

static void prefill_row(struct probe *p, const char *shape, int T, int C)
{
	int hd = p->d.head_dim;
	size_t hq = (size_t)p->heads_r * hd, hk = (size_t)p->kv_r * hd;
	struct prefill_run r;
	memset(&r, 0, sizeof r);
	r.T = T;
	r.C = C;
	r.kv_elems = (size_t)(C + T) * hk;
	r.n_copies = copies_for(p, 2.0 * r.kv_elems * 2, 16);
	size_t need = (2 * (size_t)T * hq + 2 * (size_t)r.n_copies * r.kv_elems) * 2;
	if (over_budget(p) || need > budget_bytes()) {
		note_skip(p, "attn_prefill %s T=%d C=%d (memory or time)", shape, T, C);
		return;
	}
	r.q = (bf16 *)try_alloc((size_t)T * hq * 2);
	r.o = (bf16 *)try_alloc((size_t)T * hq * 2);
	r.k = (bf16 *)try_alloc(r.n_copies * r.kv_elems * 2);
	r.v = (bf16 *)try_alloc(r.n_copies * r.kv_elems * 2);
	if (r.q && r.o && r.k && r.v) {
		fill_bf16(p, r.q, (size_t)T * hq, 41, 1.0f);
		fill_bf16(p, r.k, r.n_copies * r.kv_elems, 42, 1.0f);
		fill_bf16(p, r.v, r.n_copies * r.kv_elems, 43, 1.0f);
		double t = time_us(p, prefill_once, &r);
		double bytes = 2.0 * T * (double)hq * 2 + 2.0 * (double)r.kv_elems * 2;
		double flops = 4.0 * hd * p->heads_r * causal_pairs(T, C);
		emit(p, "attn_prefill", shape, T, C, "bf16", t, bytes, flops);
	} else {
		note_skip(p, "attn_prefill %s T=%d C=%d (cudaMalloc failed)", shape, T, C);
	}
	release(r.q);
	release(r.o);
	release(r.k);
	release(r.v);
}

struct decode_run {
	struct paged pg;
	bf16 *q, *o;
};

static void decode_once(struct probe *p, void *arg, int rep)
{
	struct decode_run *r = (struct decode_run *)arg;
	int ld = p->heads_r * p->d.head_dim;
	launch_decode(p, &r->pg, rep % r->pg.n_copies, r->q, ld, r->o, ld);
}

static void decode_row(struct probe *p, int B, int C)
{
	int hd = p->d.head_dim;
	double kv_bytes = 2.0 * B * (double)C * p->kv_r * hd * 2;
	int copies = copies_for(p, kv_bytes, 32);
	char shape[32];
	snprintf(shape, sizeof shape, "paged_b%d", B);
	if (over_budget(p) ||
	    paged_bytes(B, C, p->kv_r, hd, p->heads_r, copies) + (size_t)4 * B * p->heads_r * hd >
		    budget_bytes()) {
		note_skip(p, "attn_decode %s C=%d (memory or time)", shape, C);
		return;
	}
	struct decode_run r;
	memset(&r, 0, sizeof r);
	size_t qe = (size_t)B * p->heads_r * hd;
	r.q = (bf16 *)try_alloc(qe * 2);
	r.o = (bf16 *)try_alloc(qe * 2);
	if (r.q && r.o && paged_create(p, &r.pg, B, C, p->heads_r, p->kv_r, hd, copies)) {
		fill_bf16(p, r.q, qe, 51, 1.0f);
		double t = time_us(p, decode_once, &r);
		double bytes = kv_bytes + 2.0 * qe * 2;
		double flops = 4.0 * hd * p->heads_r * (double)B * C;
		emit(p, "attn_decode", shape, B, C, "bf16", t, bytes, flops);
		paged_destroy(&r.pg);
	} else {
		note_skip(p, "attn_decode %s C=%d (cudaMalloc failed)", shape, C);
	}
	release(r.q);
	release(r.o);
}

static void probe_attention(struct probe *p)
{
	int hd = p->d.head_dim;
	if (hd != 64 && hd != 128) {
		note_skip(p, "attention (the kernels support head_dim 64 and 128, not %d)", hd);
		return;
	}
	if (p->heads_r % p->kv_r || p->heads_r / p->kv_r > PD_MAXG) {
		note_skip(p, "attention (%d query heads per KV head; the decode kernel supports 1..%d)",
			  p->heads_r / p->kv_r, PD_MAXG);
		return;
	}
	/* Whole prompts (no cache), then 2048-token chunks after a cached
	 * prefix, as chunked prefill runs them. */
	for (int ctx = 128; ctx <= p->max_context; ctx *= 2)
		prefill_row(p, "prompt", ctx, 0);
	for (int ctx = 4096; ctx <= p->max_context; ctx *= 2)
		prefill_row(p, "chunk", 2048, ctx - 2048);
	/* Enough batch sizes to fit how decode attention's bandwidth rises
	 * with the sequences in a step (attention_half_seqs). */
	static const int batches[] = { 1, 4, 8, 16, 32, 64, 128 };
	for (size_t b = 0; b < sizeof batches / sizeof *batches; b++)
		for (int ctx = 128; ctx <= p->max_context; ctx *= 2)
			decode_row(p, batches[b], ctx);
}

/* ---- one synthetic layer ------------------------------------------------------ */

struct layer_run {
	int T, C, decode, n_copies;
	int n_qkv, n_gu;
	size_t layer_elems;                  /* one copy of all four weights */
	bf16 *w;                             /* n_copies x [qkv | o | gate_up | down] */
	bf16 *x, *qkv, *attn, *y, *gu, *act, *z;
	struct paged pg;
};

static void gemm_bf16(struct probe *p, const bf16 *w, const bf16 *x, bf16 *y, int m, int n, int k)
{
	const float one = 1.0f, zero = 0.0f;
	BK(cublasGemmEx(p->blas, CUBLAS_OP_T, CUBLAS_OP_N, n, m, k, &one, w, CUDA_R_16BF, k, x,
			CUDA_R_16BF, k, &zero, y, CUDA_R_16BF, n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
}

static void layer_once(struct probe *p, void *arg, int rep)
{
	struct layer_run *r = (struct layer_run *)arg;
	int hd = p->d.head_dim, H = p->d.hidden, hq = p->heads_r * hd, hk = p->kv_r * hd;
	const bf16 *w_qkv = r->w + (size_t)(rep % r->n_copies) * r->layer_elems;
	const bf16 *w_o = w_qkv + (size_t)r->n_qkv * H;
	const bf16 *w_gu = w_o + (size_t)H * hq;
	const bf16 *w_d = w_gu + (size_t)r->n_gu * H;
	gemm_bf16(p, w_qkv, r->x, r->qkv, r->T, r->n_qkv, H);
	if (r->decode)
		launch_decode(p, &r->pg, rep % r->pg.n_copies, r->qkv, r->n_qkv, r->attn, hq);
	else
		launch_flash(p, r->qkv, r->n_qkv, r->qkv + hq, r->n_qkv, r->qkv + hq + hk, r->n_qkv,
			     r->attn, hq, r->T, 0, p->heads_r, p->kv_r, hd);
	gemm_bf16(p, w_o, r->attn, r->y, r->T, H, hq);
	gemm_bf16(p, w_gu, r->y, r->gu, r->T, r->n_gu, H);
	k_silu_mul<<<p->sms * 4, 256, 0, p->stream>>>(r->gu, r->act, r->T, p->inter_r);
	gemm_bf16(p, w_d, r->act, r->z, r->T, H, p->inter_r);
}

static void layer_row(struct probe *p, int decode, int T, int C)
{
	int hd = p->d.head_dim, H = p->d.hidden, hq = p->heads_r * hd, hk = p->kv_r * hd;
	struct layer_run r;
	memset(&r, 0, sizeof r);
	r.T = T;
	r.C = C;
	r.decode = decode;
	r.n_qkv = hq + 2 * hk;
	r.n_gu = 2 * p->inter_r;
	r.layer_elems = (size_t)r.n_qkv * H + (size_t)H * hq + (size_t)r.n_gu * H + (size_t)H * p->inter_r;
	r.n_copies = copies_for(p, (double)r.layer_elems * 2, 8);
	if (r.n_copies < 2)
		r.n_copies = 2;
	size_t act = (size_t)T * ((size_t)H * 3 + r.n_qkv + hq + r.n_gu + p->inter_r);
	int kv_copies = decode ? copies_for(p, 2.0 * T * (double)C * hk * 2, 8) : 0;
	size_t need = (r.n_copies * r.layer_elems + act) * 2 +
		      (decode ? paged_bytes(T, C, p->kv_r, hd, p->heads_r, kv_copies) : 0);
	const char *shape = decode ? "decode" : "prefill";
	if (over_budget(p) || need > budget_bytes()) {
		note_skip(p, "layer %s tokens=%d C=%d (memory or time)", shape, T, C);
		return;
	}
	r.w = (bf16 *)try_alloc(r.n_copies * r.layer_elems * 2);
	r.x = (bf16 *)try_alloc((size_t)T * H * 2);
	r.qkv = (bf16 *)try_alloc((size_t)T * r.n_qkv * 2);
	r.attn = (bf16 *)try_alloc((size_t)T * hq * 2);
	r.y = (bf16 *)try_alloc((size_t)T * H * 2);
	r.gu = (bf16 *)try_alloc((size_t)T * r.n_gu * 2);
	r.act = (bf16 *)try_alloc((size_t)T * p->inter_r * 2);
	r.z = (bf16 *)try_alloc((size_t)T * H * 2);
	int ok = r.w && r.x && r.qkv && r.attn && r.y && r.gu && r.act && r.z;
	if (ok && decode)
		ok = paged_create(p, &r.pg, T, C, p->heads_r, p->kv_r, hd, kv_copies);
	if (ok) {
		fill_bf16(p, r.w, r.n_copies * r.layer_elems, 61, 0.05f);
		fill_bf16(p, r.x, (size_t)T * H, 62, 1.0f);
		double t = time_us(p, layer_once, &r);
		double weights = (double)r.layer_elems * 2;
		double gemm_flops = 2.0 * T * (double)r.layer_elems;
		double kv = decode ? 2.0 * T * (double)C * hk * 2 : 2.0 * T * (double)hk * 2;
		double attn_flops = 4.0 * hd * p->heads_r * (decode ? (double)T * C : causal_pairs(T, 0));
		emit(p, "layer", shape, T, C, "bf16", t, weights + kv + (double)act * 2,
		     gemm_flops + attn_flops);
	} else {
		note_skip(p, "layer %s tokens=%d C=%d (cudaMalloc failed)", shape, T, C);
	}
	if (decode)
		paged_destroy(&r.pg);
	release(r.w);
	release(r.x);
	release(r.qkv);
	release(r.attn);
	release(r.y);
	release(r.gu);
	release(r.act);
	release(r.z);
}

static void probe_layers(struct probe *p)
{
	int hd = p->d.head_dim;
	if ((hd != 64 && hd != 128) || p->heads_r % p->kv_r || p->heads_r / p->kv_r > PD_MAXG) {
		note_skip(p, "layer (no attention kernel for these dims)");
		return;
	}
	static const int decode_batches[] = { 1, 16, 64, 256 };
	static const int prefill_tokens[] = { 512, 2048, 8192 };
	for (size_t i = 0; i < sizeof decode_batches / sizeof *decode_batches; i++)
		layer_row(p, 1, decode_batches[i], 1024);
	for (size_t i = 0; i < sizeof prefill_tokens / sizeof *prefill_tokens; i++)
		if (prefill_tokens[i] <= p->max_tokens)
			layer_row(p, 0, prefill_tokens[i], 0);
}

/* ---- --check: the kernels against naive references ---------------------------- */

/* One thread per (query, head): two passes over the visible keys. */
__global__ void k_ref_attention(const bf16 *q, int q_ld, const bf16 *k, int k_ld, const bf16 *v,
				int v_ld, float *o, int T, int C, int heads, int kv_heads, int hd)
{
	int t = blockIdx.x * blockDim.x + threadIdx.x, h = blockIdx.y;
	if (t >= T)
		return;
	int g = h / (heads / kv_heads), last = C + t;
	float scale = rsqrtf((float)hd), mx = -INFINITY, sum = 0.0f;
	for (int j = 0; j <= last; j++) {
		float s = 0.0f;
		for (int d = 0; d < hd; d++)
			s += __bfloat162float(q[(size_t)t * q_ld + h * hd + d]) *
			     __bfloat162float(k[(size_t)j * k_ld + g * hd + d]);
		mx = fmaxf(mx, s * scale);
	}
	for (int d = 0; d < hd; d++)
		o[((size_t)t * heads + h) * hd + d] = 0.0f;
	for (int j = 0; j <= last; j++) {
		float s = 0.0f;
		for (int d = 0; d < hd; d++)
			s += __bfloat162float(q[(size_t)t * q_ld + h * hd + d]) *
			     __bfloat162float(k[(size_t)j * k_ld + g * hd + d]);
		float w = __expf(s * scale - mx);
		sum += w;
		for (int d = 0; d < hd; d++)
			o[((size_t)t * heads + h) * hd + d] += w * __bfloat162float(v[(size_t)j * v_ld + g * hd + d]);
	}
	for (int d = 0; d < hd; d++)
		o[((size_t)t * heads + h) * hd + d] /= sum;
}

/* Gathers sequence b's KV through its block table into contiguous rows. */
__global__ void k_gather_kv(const bf16 *cache, const int *bt, int max_blocks, int ctx, int kv_heads,
			    int hd, bf16 *out)
{
	size_t n = (size_t)ctx * kv_heads * hd;
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x) {
		size_t t = i / ((size_t)kv_heads * hd), rest = i % ((size_t)kv_heads * hd);
		out[i] = cache[((size_t)bt[t / PD_BLOCK] * PD_BLOCK + t % PD_BLOCK) * kv_heads * hd + rest];
	}
}

__global__ void k_ref_gemm(const bf16 *w, const bf16 *x, float *y, int m, int n, int k)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= m * n)
		return;
	int r = i / n, c = i % n;
	float s = 0.0f;
	for (int j = 0; j < k; j++)
		s += __bfloat162float(x[(size_t)r * k + j]) * __bfloat162float(w[(size_t)c * k + j]);
	y[i] = s;
}

static double max_abs_diff(const bf16 *dev_a, const float *dev_ref, size_t n)
{
	bf16 *a = (bf16 *)malloc(n * sizeof *a);
	float *b = (float *)malloc(n * sizeof *b);
	if (!a || !b)
		die(__FILE__, __LINE__, "malloc", "out of memory");
	CK(cudaMemcpy(a, dev_a, n * sizeof *a, cudaMemcpyDeviceToHost));
	CK(cudaMemcpy(b, dev_ref, n * sizeof *b, cudaMemcpyDeviceToHost));
	double worst = 0;
	for (size_t i = 0; i < n; i++) {
		double d = fabs((double)__bfloat162float(a[i]) - (double)b[i]);
		if (!(d <= worst))   /* NaN counts as worst */
			worst = isnan(d) ? INFINITY : d;
	}
	free(a);
	free(b);
	return worst;
}

static int check_one(const char *what, double err, double tol)
{
	int ok = err <= tol;
	printf("check: %-40s max|error| %.4g (tolerance %.3g) %s\n", what, err, tol, ok ? "ok" : "FAILED");
	return ok;
}

static int run_checks(struct probe *p)
{
	int ok = 1;
	static const int hds[] = { 64, 128 };
	for (int hi = 0; hi < 2; hi++) {
		int hd = hds[hi], heads = 8, kvh = 2, T = 100, C = 37;
		size_t qe = (size_t)T * heads * hd, ke = (size_t)(C + T) * kvh * hd;
		bf16 *q = (bf16 *)try_alloc(qe * 2), *k = (bf16 *)try_alloc(ke * 2);
		bf16 *v = (bf16 *)try_alloc(ke * 2), *o = (bf16 *)try_alloc(qe * 2);
		float *ref = (float *)try_alloc(qe * 4);
		if (!q || !k || !v || !o || !ref)
			die(__FILE__, __LINE__, "cudaMalloc", "cannot allocate the check buffers");
		fill_bf16(p, q, qe, 1, 1.0f);
		fill_bf16(p, k, ke, 2, 1.0f);
		fill_bf16(p, v, ke, 3, 1.0f);
		launch_flash(p, q, heads * hd, k, kvh * hd, v, kvh * hd, o, heads * hd, T, C, heads, kvh, hd);
		k_ref_attention<<<dim3((T + 63) / 64, heads), 64, 0, p->stream>>>(
			q, heads * hd, k, kvh * hd, v, kvh * hd, ref, T, C, heads, kvh, hd);
		CK(cudaGetLastError());
		CK(cudaStreamSynchronize(p->stream));
		char what[64];
		snprintf(what, sizeof what, "flash prefill hd=%d T=%d C=%d", hd, T, C);
		ok &= check_one(what, max_abs_diff(o, ref, qe), 3e-2);

		/* Paged decode: 3 sequences of 700 tokens (3 partitions). */
		int B = 3, ctx = 700;
		struct paged pg;
		if (!paged_create(p, &pg, B, ctx, heads, kvh, hd, 1))
			die(__FILE__, __LINE__, "cudaMalloc", "cannot allocate the check buffers");
		bf16 *qd = (bf16 *)try_alloc((size_t)B * heads * hd * 2);
		bf16 *od = (bf16 *)try_alloc((size_t)B * heads * hd * 2);
		bf16 *kc = (bf16 *)try_alloc((size_t)ctx * kvh * hd * 2);
		bf16 *vc = (bf16 *)try_alloc((size_t)ctx * kvh * hd * 2);
		float *rd = (float *)try_alloc((size_t)heads * hd * 4);
		if (!qd || !od || !kc || !vc || !rd)
			die(__FILE__, __LINE__, "cudaMalloc", "cannot allocate the check buffers");
		fill_bf16(p, qd, (size_t)B * heads * hd, 4, 1.0f);
		launch_decode(p, &pg, 0, qd, heads * hd, od, heads * hd);
		double worst = 0;
		for (int b = 0; b < B; b++) {
			const int *bt = pg.block_tables + (size_t)b * pg.max_blocks;
			k_gather_kv<<<64, 256, 0, p->stream>>>(pg.k_cache, bt, pg.max_blocks, ctx, kvh, hd, kc);
			k_gather_kv<<<64, 256, 0, p->stream>>>(pg.v_cache, bt, pg.max_blocks, ctx, kvh, hd, vc);
			/* A decode is a one-query prefill at position ctx - 1. */
			k_ref_attention<<<dim3(1, heads), 64, 0, p->stream>>>(
				qd + (size_t)b * heads * hd, heads * hd, kc, kvh * hd, vc, kvh * hd, rd, 1,
				ctx - 1, heads, kvh, hd);
			CK(cudaGetLastError());
			CK(cudaStreamSynchronize(p->stream));
			double e = max_abs_diff(od + (size_t)b * heads * hd, rd, (size_t)heads * hd);
			worst = e > worst ? e : worst;
		}
		snprintf(what, sizeof what, "paged decode hd=%d B=%d C=%d", hd, B, ctx);
		ok &= check_one(what, worst, 2e-2);
		paged_destroy(&pg);
		release(q);
		release(k);
		release(v);
		release(o);
		release(ref);
		release(qd);
		release(od);
		release(kc);
		release(vc);
		release(rd);
	}
	{
		int m = 37, n = 96, k = 128;
		bf16 *w = (bf16 *)try_alloc((size_t)n * k * 2), *x = (bf16 *)try_alloc((size_t)m * k * 2);
		bf16 *y = (bf16 *)try_alloc((size_t)m * n * 2);
		float *ref = (float *)try_alloc((size_t)m * n * 4);
		if (!w || !x || !y || !ref)
			die(__FILE__, __LINE__, "cudaMalloc", "cannot allocate the check buffers");
		fill_bf16(p, w, (size_t)n * k, 5, 0.1f);
		fill_bf16(p, x, (size_t)m * k, 6, 1.0f);
		gemm_bf16(p, w, x, y, m, n, k);
		k_ref_gemm<<<(m * n + 255) / 256, 256, 0, p->stream>>>(w, x, ref, m, n, k);
		CK(cudaGetLastError());
		CK(cudaStreamSynchronize(p->stream));
		ok &= check_one("cuBLAS bf16 GEMM 37x96x128 (Y = X W^T)", max_abs_diff(y, ref, (size_t)m * n),
				2e-2);
		release(w);
		release(x);
		release(y);
		release(ref);
	}
	return ok;
}

/* ---- main ------------------------------------------------------------------------ */

static void usage(FILE *f)
{
	fprintf(f,
		"usage: servesim-probe --hidden N --intermediate N --heads N --kv-heads N\n"
		"                      --head-dim N --vocab N [--tp N] [--out FILE]\n"
		"                      [--device N] [--max-tokens N] [--max-context N]\n"
		"                      [--budget-s S] [--check]\n\n"
		"Measures this GPU for `servesim calibrate fit`: memory bandwidth, GEMMs of the\n"
		"model's shapes (bf16; fp8 on sm_89+), flash prefill and paged decode attention,\n"
		"and synthetic layer steps. Writes CSV (kind,shape,tokens,context,dtype,time_us,\n"
		"bytes,flops) to FILE, or stdout when --out is absent or '-'.\n\n"
		"  --tp N           tensor-parallel size: shapes are one rank's (default 1)\n"
		"  --max-tokens N   largest GEMM token count, a power of two (default 16384)\n"
		"  --max-context N  largest attention context, a power of two (default 32768)\n"
		"  --budget-s S     skip what remains after S seconds (default 240)\n"
		"  --check          compare the kernels with naive references and exit\n"
		"Exit: 0 done, 1 CUDA/cuBLAS failure or failed check, 2 bad arguments.\n");
}

static int parse_int(const char *s, const char *name, int lo, int hi, int *out)
{
	char *end = NULL;
	long v = strtol(s, &end, 10);
	if (!*s || *end || v < lo || v > hi) {
		fprintf(stderr, "servesim-probe: --%s: expected an integer in [%d, %d], got '%s'\n", name,
			lo, hi, s);
		return -1;
	}
	*out = (int)v;
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "budget-s", required_argument, NULL, 'b' },
		{ "check", no_argument, NULL, 'c' },
		{ "device", required_argument, NULL, 'D' },
		{ "head-dim", required_argument, NULL, 'd' },
		{ "heads", required_argument, NULL, 'a' },
		{ "help", no_argument, NULL, 'h' },
		{ "hidden", required_argument, NULL, 'H' },
		{ "intermediate", required_argument, NULL, 'I' },
		{ "kv-heads", required_argument, NULL, 'k' },
		{ "max-context", required_argument, NULL, 'C' },
		{ "max-tokens", required_argument, NULL, 'T' },
		{ "out", required_argument, NULL, 'o' },
		{ "tp", required_argument, NULL, 't' },
		{ "vocab", required_argument, NULL, 'v' },
		{ 0, 0, 0, 0 },
	};
	struct probe p;
	memset(&p, 0, sizeof p);
	p.d.tp = 1;
	p.max_tokens = 16384;
	p.max_context = 32768;
	p.budget_s = 240;
	int device = 0, check = 0, c, budget = 240;
	const char *out_path = NULL;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		int bad = 0;
		switch (c) {
		case 'b': bad = parse_int(optarg, "budget-s", 1, 3600, &budget); break;
		case 'c': check = 1; break;
		case 'D': bad = parse_int(optarg, "device", 0, 1024, &device); break;
		case 'd': bad = parse_int(optarg, "head-dim", 1, 1024, &p.d.head_dim); break;
		case 'a': bad = parse_int(optarg, "heads", 1, 4096, &p.d.heads); break;
		case 'h': usage(stdout); return 0;
		case 'H': bad = parse_int(optarg, "hidden", 16, 1 << 20, &p.d.hidden); break;
		case 'I': bad = parse_int(optarg, "intermediate", 16, 1 << 22, &p.d.intermediate); break;
		case 'k': bad = parse_int(optarg, "kv-heads", 1, 4096, &p.d.kv_heads); break;
		case 'C': bad = parse_int(optarg, "max-context", 128, 1 << 20, &p.max_context); break;
		case 'T': bad = parse_int(optarg, "max-tokens", 1, 1 << 20, &p.max_tokens); break;
		case 'o': out_path = optarg; break;
		case 't': bad = parse_int(optarg, "tp", 1, 64, &p.d.tp); break;
		case 'v': bad = parse_int(optarg, "vocab", 16, 1 << 24, &p.d.vocab); break;
		default: usage(stderr); return 2;
		}
		if (bad)
			return 2;
	}
	p.budget_s = budget;
	if (optind < argc) {
		fprintf(stderr, "servesim-probe: unexpected argument '%s'\n", argv[optind]);
		return 2;
	}
	if (!check && (!p.d.hidden || !p.d.intermediate || !p.d.heads || !p.d.kv_heads ||
		       !p.d.head_dim || !p.d.vocab)) {
		fprintf(stderr, "servesim-probe: --hidden, --intermediate, --heads, --kv-heads, --head-dim and --vocab are required (servesim calibrate gpu passes the model's)\n");
		return 2;
	}
	if (!check && (p.d.heads % p.d.kv_heads || p.d.heads % p.d.tp || p.d.intermediate % p.d.tp)) {
		fprintf(stderr, "servesim-probe: heads must be a multiple of kv-heads, and heads and intermediate multiples of tp\n");
		return 2;
	}
	p.heads_r = p.d.heads / p.d.tp;
	p.kv_r = p.d.kv_heads >= p.d.tp ? p.d.kv_heads / p.d.tp : 1;
	p.inter_r = p.d.intermediate / p.d.tp;
	p.vocab_r = (p.d.vocab + p.d.tp - 1) / p.d.tp;

	int n_dev = 0;
	if (cudaGetDeviceCount(&n_dev) != cudaSuccess || n_dev == 0) {
		fprintf(stderr, "servesim-probe: no CUDA device found\n");
		return 1;
	}
	if (device >= n_dev) {
		fprintf(stderr, "servesim-probe: --device %d: only %d device(s)\n", device, n_dev);
		return 2;
	}
	CK(cudaSetDevice(device));
	struct cudaDeviceProp prop;
	CK(cudaGetDeviceProperties(&prop, device));
	p.cc_major = prop.major;
	p.cc_minor = prop.minor;
	p.sms = prop.multiProcessorCount;
	p.l2_bytes = (size_t)prop.l2CacheSize;
	if (prop.major < 8) {
		fprintf(stderr, "servesim-probe: %s is sm_%d%d; the kernels need sm_80 or newer\n", prop.name,
			prop.major, prop.minor);
		return 1;
	}
	CK(cudaStreamCreate(&p.stream));
	CK(cudaEventCreate(&p.ev0));
	CK(cudaEventCreate(&p.ev1));
	BK(cublasCreate(&p.blas));
	BK(cublasSetStream(p.blas, p.stream));
	BK(cublasLtCreate(&p.lt));
	p.lt_ws_bytes = (size_t)32 << 20;
	CK(cudaMalloc(&p.lt_ws, p.lt_ws_bytes));
	size_t max_smem = fa_smem_bytes(128);
	CK(cudaFuncSetAttribute(k_flash_prefill<128>, cudaFuncAttributeMaxDynamicSharedMemorySize,
				(int)max_smem));
	CK(cudaFuncSetAttribute(k_flash_prefill<64>, cudaFuncAttributeMaxDynamicSharedMemorySize,
				(int)fa_smem_bytes(64)));

	if (check) {
		p.out = stdout;
		int ok = run_checks(&p);
		printf("check: %s\n", ok ? "all ok" : "FAILED");
		return ok ? 0 : 1;
	}

	char tmp_path[4096] = "";
	if (out_path && strcmp(out_path, "-")) {
		if (snprintf(tmp_path, sizeof tmp_path, "%s.tmp%d", out_path, (int)getpid()) >=
		    (int)sizeof tmp_path) {
			fprintf(stderr, "servesim-probe: --out: path too long\n");
			return 2;
		}
		p.out = fopen(tmp_path, "w");
		if (!p.out) {
			fprintf(stderr, "servesim-probe: %s: cannot write: %s\n", tmp_path, strerror(errno));
			return 1;
		}
	} else {
		p.out = stdout;
	}
	size_t free_b = 0, total_b = 0;
	CK(cudaMemGetInfo(&free_b, &total_b));
	p.t_start_s = now_s();
	fprintf(p.out, "# servesim-probe: %d\n", PROBE_VERSION);
	fprintf(p.out, "# device: %s\n", prop.name);
	fprintf(p.out, "# sm: %d%d\n", prop.major, prop.minor);
	fprintf(p.out, "# sms: %d\n", prop.multiProcessorCount);
	fprintf(p.out, "# memory_gib: %.2f\n", (double)total_b / 1073741824.0);
	fprintf(p.out, "# l2_mib: %.1f\n", (double)p.l2_bytes / 1048576.0);
	fprintf(p.out, "# dims: hidden=%d intermediate=%d heads=%d kv_heads=%d head_dim=%d vocab=%d tp=%d\n",
		p.d.hidden, p.d.intermediate, p.d.heads, p.d.kv_heads, p.d.head_dim, p.d.vocab, p.d.tp);
	fprintf(p.out, "kind,shape,tokens,context,dtype,time_us,bytes,flops\n");

	probe_bandwidth(&p);
	probe_gemm(&p, 0);
	probe_attention(&p);
	probe_layers(&p);
	if (p.cc_major * 10 + p.cc_minor >= 89)
		probe_gemm(&p, 1);
	else
		note_skip(&p, "gemm fp8 (sm_%d%d has no fp8 tensor cores)", p.cc_major, p.cc_minor);
	fprintf(p.out, "# elapsed_s: %.1f\n", now_s() - p.t_start_s);

	CK(cudaFree(p.lt_ws));
	BK(cublasLtDestroy(p.lt));
	BK(cublasDestroy(p.blas));
	CK(cudaEventDestroy(p.ev0));
	CK(cudaEventDestroy(p.ev1));
	CK(cudaStreamDestroy(p.stream));
	if (p.out != stdout) {
		if (fclose(p.out) != 0 || rename(tmp_path, out_path) != 0) {
			fprintf(stderr, "servesim-probe: %s: cannot write: %s\n", out_path, strerror(errno));
			unlink(tmp_path);
			return 1;
		}
	} else if (fflush(stdout) != 0) {
		return 1;
	}
	fprintf(stderr, "servesim-probe: %d measurements in %.1f s\n", p.rows, now_s() - p.t_start_s);
	return 0;
}
