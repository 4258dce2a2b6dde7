/*
 * probe_gemm: the linear-layer families of servesim-probe.
 *   gemm_bf16  the QKV, O, gate/up, down and LM-head weights of one
 *              tensor-parallel rank at 1, 2, 3 … 8, 16, 32 … max_tokens
 *              tokens, cuBLAS bf16 in, fp32 accumulate (batch 1-8 are the
 *              GEMVs of small decode steps)
 *   gemm_fp8   the same through cuBLASLt, e4m3 in, bf16 out, with fast
 *              accumulation (CUBLASLT_MATMUL_DESC_FAST_ACCUM), as vLLM's
 *              CUTLASS fp8 kernels accumulate; sm_89 and newer
 *   gemv_int4  a W4A16 GEMV (int4 weights, one bf16 scale per 128, bf16
 *              activations) at batch 1-8: the probe's own kernel, a lower
 *              bound on what Marlin-class kernels reach
 * One linear layer is Y[m, n] = X[m, k] W[n, k]^T (PyTorch's layout); in
 * cuBLAS's column-major terms C(n x m) = op_T(W: k x n) * X(k x m), the
 * "TN" form fp8 requires. Weights rotate over enough copies to exceed four
 * times L2, as successive layers do in a real step.
 */
#include <string.h>

#include "probe.h"

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
	int lt_ready;
};

void probe_gemm_bf16(struct probe *p, const bf16 *w, const bf16 *x, bf16 *y, int m, int n, int k)
{
	const float one = 1.0f, zero = 0.0f;
	BK(cublasGemmEx(p->blas, CUBLAS_OP_T, CUBLAS_OP_N, n, m, k, &one, w, CUDA_R_16BF, k, x,
			CUDA_R_16BF, k, &zero, y, CUDA_R_16BF, n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
}

static void gemm_once(struct probe *p, void *arg, int rep)
{
	struct gemm_run *g = (struct gemm_run *)arg;
	const float one = 1.0f, zero = 0.0f;
	const char *w = (const char *)g->w + (size_t)(rep % g->n_copies) * g->w_bytes;
	if (!g->fp8) {
		probe_gemm_bf16(p, (const bf16 *)w, (const bf16 *)g->x, (bf16 *)g->y, g->m, g->n, g->k);
		return;
	}
	BK(cublasLtMatmul(p->lt, g->op, &one, w, g->la, g->x, g->lb, &zero, g->y, g->lc, g->y,
			  g->lc, &g->algo, p->lt_ws, p->lt_ws_bytes, p->stream));
}

static void fp8_teardown(struct gemm_run *g)
{
	if (!g->lt_ready)
		return;
	(void)cublasLtMatrixLayoutDestroy(g->la);
	(void)cublasLtMatrixLayoutDestroy(g->lb);
	(void)cublasLtMatrixLayoutDestroy(g->lc);
	(void)cublasLtMatmulDescDestroy(g->op);
	g->lt_ready = 0;
}

/* Sets up cuBLASLt for an fp8 GEMM of g's shape; 0 when no algorithm. */
static int fp8_setup(struct probe *p, struct gemm_run *g)
{
	cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
	int8_t fast = 1;
	BK(cublasLtMatmulDescCreate(&g->op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
	BK(cublasLtMatrixLayoutCreate(&g->la, CUDA_R_8F_E4M3, g->k, g->n, g->k));
	BK(cublasLtMatrixLayoutCreate(&g->lb, CUDA_R_8F_E4M3, g->k, g->m, g->k));
	BK(cublasLtMatrixLayoutCreate(&g->lc, CUDA_R_16BF, g->n, g->m, g->n));
	g->lt_ready = 1;
	BK(cublasLtMatmulDescSetAttribute(g->op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta));
	BK(cublasLtMatmulDescSetAttribute(g->op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb));
	BK(cublasLtMatmulDescSetAttribute(g->op, CUBLASLT_MATMUL_DESC_FAST_ACCUM, &fast, sizeof fast));
	cublasLtMatmulPreference_t pref;
	BK(cublasLtMatmulPreferenceCreate(&pref));
	cublasStatus_t st = cublasLtMatmulPreferenceSetAttribute(
		pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &p->lt_ws_bytes, sizeof p->lt_ws_bytes);
	cublasLtMatmulHeuristicResult_t res;
	int found = 0;
	if (st == CUBLAS_STATUS_SUCCESS)
		st = cublasLtMatmulAlgoGetHeuristic(p->lt, g->op, g->la, g->lb, g->lc, g->lc, pref, 1,
						    &res, &found);
	(void)cublasLtMatmulPreferenceDestroy(pref);
	if (st != CUBLAS_STATUS_SUCCESS || found < 1)
		return 0;
	g->algo = res.algo;
	return 1;
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

static void gemm_shape_rows(struct probe *p, const struct gemm_shape *s, int fp8)
{
	const char *dtype = fp8 ? "fp8" : "bf16";
	size_t eb = fp8 ? 1 : 2;
	/* fp8 needs leading dimensions that are multiples of 16. */
	int n = fp8 ? (s->n + 15) / 16 * 16 : s->n, k = s->k;
	char shape[64];
	snprintf(shape, sizeof shape, "%s_n%d_k%d", s->name, n, k);
	if (fp8 && k % 16) {
		probe_skip(p, "gemm %s fp8 (k not a multiple of 16)", shape);
		return;
	}
	struct gemm_run g;
	memset(&g, 0, sizeof g);
	g.n = n;
	g.k = k;
	g.fp8 = fp8;
	g.w_bytes = (size_t)n * k * eb;
	g.n_copies = probe_copies_for(p, (double)g.w_bytes, 16);
	int m_max = p->max_tokens;
	size_t budget = probe_budget_bytes();
	for (;;) {
		size_t need = g.n_copies * g.w_bytes + (size_t)m_max * k * eb + (size_t)m_max * n * 2;
		if (need <= budget)
			break;
		if (g.n_copies > 1)
			g.n_copies = 1;
		else if (m_max > 1)
			m_max /= 2;
		else {
			probe_skip(p, "gemm %s %s (weights do not fit)", shape, dtype);
			return;
		}
	}
	if (m_max < p->max_tokens)
		probe_skip(p, "gemm %s %s above %d tokens (memory)", shape, dtype, m_max);
	g.w = probe_alloc(p, g.n_copies * g.w_bytes);
	g.x = probe_alloc(p, (size_t)m_max * k * eb);
	g.y = probe_alloc(p, (size_t)m_max * n * 2);
	if (!g.w || !g.x || !g.y) {
		probe_skip(p, "gemm %s %s (cudaMalloc failed)", shape, dtype);
		goto out;
	}
	if (fp8) {
		probe_fill_fp8(p, g.w, g.n_copies * g.w_bytes, 21, 0.5f);
		probe_fill_fp8(p, g.x, (size_t)m_max * k, 22, 1.0f);
	} else {
		probe_fill_bf16(p, g.w, g.n_copies * g.w_bytes / 2, 21, 0.05f);
		probe_fill_bf16(p, g.x, (size_t)m_max * k, 22, 1.0f);
	}
	/* Every batch of 1..8 (the GEMVs of small decode steps), then powers of two. */
	for (int m = 1; m <= m_max; m = m < 8 ? m + 1 : 2 * m) {
		if (probe_over_budget(p)) {
			probe_skip(p, "gemm %s %s from %d tokens (time budget)", shape, dtype, m);
			break;
		}
		g.m = m;
		if (fp8 && !fp8_setup(p, &g)) {
			fp8_teardown(&g);
			probe_skip(p, "gemm %s fp8 at %d tokens (no cuBLASLt algorithm)", shape, m);
			continue;
		}
		try {
			struct meas t = probe_time(p, gemm_once, &g);
			double bytes = (double)g.w_bytes + (double)m * k * eb + (double)m * n * 2;
			probe_emit(p, "gemm", shape, m, 0, dtype, &t, bytes, 2.0 * m * (double)n * k,
				   fp8 ? "cublasLt_fp8_fastacc" : "cublasGemmEx_bf16");
		} catch (...) {
			fp8_teardown(&g);
			throw;
		}
		fp8_teardown(&g);
	}
out:
	probe_free(p, g.w);
	probe_free(p, g.x);
	probe_free(p, g.y);
}

static void gemm_family(struct probe *p, int fp8)
{
	struct gemm_shape shapes[5];
	int n = gemm_shapes(p, shapes);
	for (int i = 0; i < n; i++)
		gemm_shape_rows(p, &shapes[i], fp8);
}

void fam_gemm_bf16(struct probe *p)
{
	gemm_family(p, 0);
}

void fam_gemm_fp8(struct probe *p)
{
	if (p->cc_major * 10 + p->cc_minor < 89) {
		probe_skip(p, "gemm_fp8 (sm_%d%d has no fp8 tensor cores)", p->cc_major, p->cc_minor);
		return;
	}
	gemm_family(p, 1);
}

/* ---- W4A16 GEMV ---------------------------------------------------------------- */

#define Q4_GROUP 128   /* weights per bf16 scale (GPTQ/AWQ's usual group) */
#define Q4_WARPS 4

/* Y[m, n] = X[m, k] dequant(W)[n, k]^T for M <= 8 rows of X. W is packed
 * two weights a byte, low nibble first, stored as (q - 8); one warp per
 * output column n, each lane reading 16 bytes (32 weights) at a time. */
template <int M>
__global__ void __launch_bounds__(Q4_WARPS * 32)
k_gemv_w4a16(const uint8_t *__restrict__ wq, const bf16 *__restrict__ scales,
	     const bf16 *__restrict__ x, bf16 *__restrict__ y, int n, int k)
{
	int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
	int col = blockIdx.x * Q4_WARPS + warp;
	if (col >= n)
		return;
	const uint8_t *wr = wq + (size_t)col * (k / 2);
	const bf16 *sr = scales + (size_t)col * (k / Q4_GROUP);
	float acc[M];
#pragma unroll
	for (int r = 0; r < M; r++)
		acc[r] = 0.0f;
	for (int k0 = lane * 32; k0 < k; k0 += 32 * 32) {
		uint4 packed = *(const uint4 *)(wr + k0 / 2);
		float s = __bfloat162float(sr[k0 / Q4_GROUP]);
		const uint32_t words[4] = { packed.x, packed.y, packed.z, packed.w };
#pragma unroll
		for (int wi = 0; wi < 4; wi++) {
			float wv[8];
#pragma unroll
			for (int e = 0; e < 8; e++)
				wv[e] = ((float)((words[wi] >> (4 * e)) & 0xf) - 8.0f) * s;
#pragma unroll
			for (int r = 0; r < M; r++) {
				const bf16 *xr = x + (size_t)r * k + k0 + wi * 8;
				uint4 xv = __ldg((const uint4 *)xr);
				const bf16 *xe = (const bf16 *)&xv;
#pragma unroll
				for (int e = 0; e < 8; e++)
					acc[r] += wv[e] * __bfloat162float(xe[e]);
			}
		}
	}
#pragma unroll
	for (int r = 0; r < M; r++) {
		float v = acc[r];
#pragma unroll
		for (int off = 16; off > 0; off >>= 1)
			v += __shfl_xor_sync(0xffffffffu, v, off);
		if (lane == 0)
			y[(size_t)r * n + col] = __float2bfloat16(v);
	}
}

static void launch_w4a16(struct probe *p, const uint8_t *wq, const bf16 *sc, const bf16 *x, bf16 *y,
			 int m, int n, int k)
{
	dim3 grid((n + Q4_WARPS - 1) / Q4_WARPS), block(Q4_WARPS * 32);
	switch (m) {
	case 1: k_gemv_w4a16<1><<<grid, block, 0, p->stream>>>(wq, sc, x, y, n, k); break;
	case 2: k_gemv_w4a16<2><<<grid, block, 0, p->stream>>>(wq, sc, x, y, n, k); break;
	case 3: k_gemv_w4a16<3><<<grid, block, 0, p->stream>>>(wq, sc, x, y, n, k); break;
	case 4: k_gemv_w4a16<4><<<grid, block, 0, p->stream>>>(wq, sc, x, y, n, k); break;
	case 5: k_gemv_w4a16<5><<<grid, block, 0, p->stream>>>(wq, sc, x, y, n, k); break;
	case 6: k_gemv_w4a16<6><<<grid, block, 0, p->stream>>>(wq, sc, x, y, n, k); break;
	case 7: k_gemv_w4a16<7><<<grid, block, 0, p->stream>>>(wq, sc, x, y, n, k); break;
	default: k_gemv_w4a16<8><<<grid, block, 0, p->stream>>>(wq, sc, x, y, n, k); break;
	}
	CK(cudaGetLastError());
}

struct gemv_run {
	int m, n, k, n_copies;
	size_t w_bytes, s_elems;
	uint8_t *w;
	bf16 *s, *x, *y;
};

static void gemv_once(struct probe *p, void *arg, int rep)
{
	struct gemv_run *g = (struct gemv_run *)arg;
	int c = rep % g->n_copies;
	launch_w4a16(p, g->w + (size_t)c * g->w_bytes, g->s + (size_t)c * g->s_elems, g->x, g->y, g->m,
		     g->n, g->k);
}

void fam_gemv_int4(struct probe *p)
{
	struct gemm_shape shapes[5];
	int ns = gemm_shapes(p, shapes);
	for (int i = 0; i < ns; i++) {
		struct gemv_run g;
		memset(&g, 0, sizeof g);
		g.n = shapes[i].n;
		g.k = shapes[i].k;
		char shape[64];
		snprintf(shape, sizeof shape, "%s_n%d_k%d", shapes[i].name, g.n, g.k);
		if (g.k % 1024) {
			probe_skip(p, "gemv_int4 %s (k not a multiple of 1024)", shape);
			continue;
		}
		g.w_bytes = (size_t)g.n * g.k / 2;
		g.s_elems = (size_t)g.n * (g.k / Q4_GROUP);
		g.n_copies = probe_copies_for(p, (double)g.w_bytes + 2.0 * g.s_elems, 32);
		size_t need = g.n_copies * (g.w_bytes + 2 * g.s_elems) + 8 * ((size_t)g.k + g.n) * 2;
		if (probe_over_budget(p) || need > probe_budget_bytes()) {
			probe_skip(p, "gemv_int4 %s (memory or time)", shape);
			continue;
		}
		g.w = (uint8_t *)probe_alloc(p, g.n_copies * g.w_bytes);
		g.s = (bf16 *)probe_alloc(p, g.n_copies * g.s_elems * 2);
		g.x = (bf16 *)probe_alloc(p, 8 * (size_t)g.k * 2);
		g.y = (bf16 *)probe_alloc(p, 8 * (size_t)g.n * 2);
		if (g.w && g.s && g.x && g.y) {
			probe_fill_bytes(p, g.w, g.n_copies * g.w_bytes, 71);
			probe_fill_bf16(p, g.s, g.n_copies * g.s_elems, 72, 0.01f);
			probe_fill_bf16(p, g.x, 8 * (size_t)g.k, 73, 1.0f);
			for (int m = 1; m <= 8; m++) {
				g.m = m;
				struct meas t = probe_time(p, gemv_once, &g);
				double bytes = (double)g.w_bytes + 2.0 * g.s_elems + 2.0 * m * (g.k + g.n);
				probe_emit(p, "gemm", shape, m, 0, "int4", &t, bytes, 2.0 * m * (double)g.n * g.k,
					   "probe_w4a16_gemv_v1");
			}
		} else {
			probe_skip(p, "gemv_int4 %s (cudaMalloc failed)", shape);
		}
		probe_free(p, g.w);
		probe_free(p, g.s);
		probe_free(p, g.x);
		probe_free(p, g.y);
	}
}

/* ---- --check references --------------------------------------------------------- */

__global__ void k_ref_gemm_fp8(const __nv_fp8_storage_t *w, const __nv_fp8_storage_t *x, float *y,
			       int m, int n, int k)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= m * n)
		return;
	int r = i / n, c = i % n;
	float s = 0.0f;
	for (int j = 0; j < k; j++) {
		__half_raw xa = __nv_cvt_fp8_to_halfraw(x[(size_t)r * k + j], __NV_E4M3);
		__half_raw wa = __nv_cvt_fp8_to_halfraw(w[(size_t)c * k + j], __NV_E4M3);
		s += __half2float(__half(xa)) * __half2float(__half(wa));
	}
	y[i] = s;
}

__global__ void k_ref_w4a16(const uint8_t *wq, const bf16 *scales, const bf16 *x, float *y, int m,
			    int n, int k)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= m * n)
		return;
	int r = i / n, c = i % n;
	float s = 0.0f;
	for (int j = 0; j < k; j++) {
		int q = (wq[(size_t)c * (k / 2) + j / 2] >> (4 * (j % 2))) & 0xf;
		float w = ((float)q - 8.0f) * __bfloat162float(scales[(size_t)c * (k / Q4_GROUP) + j / Q4_GROUP]);
		s += w * __bfloat162float(x[(size_t)r * k + j]);
	}
	y[i] = s;
}

int probe_gemm_fp8_check(struct probe *p)
{
	if (p->cc_major * 10 + p->cc_minor < 89) {
		printf("check: %-44s skipped (sm_%d%d has no fp8)\n", "cuBLASLt fp8 GEMM", p->cc_major,
		       p->cc_minor);
		return 1;
	}
	struct gemm_run g;
	memset(&g, 0, sizeof g);
	g.m = 48;
	g.n = 96;
	g.k = 128;
	g.fp8 = 1;
	g.n_copies = 1;
	g.w_bytes = (size_t)g.n * g.k;
	g.w = probe_alloc(p, g.w_bytes);
	g.x = probe_alloc(p, (size_t)g.m * g.k);
	g.y = probe_alloc(p, (size_t)g.m * g.n * 2);
	float *ref = (float *)probe_alloc(p, (size_t)g.m * g.n * 4);
	if (!g.w || !g.x || !g.y || !ref)
		probe_throw(__FILE__, __LINE__, "cudaMalloc", "cannot allocate the check buffers");
	probe_fill_fp8(p, g.w, g.w_bytes, 5, 0.5f);
	probe_fill_fp8(p, g.x, (size_t)g.m * g.k, 6, 1.0f);
	if (!fp8_setup(p, &g)) {
		fp8_teardown(&g);
		return probe_check_one("cuBLASLt fp8 GEMM: no algorithm", 1, 0);
	}
	gemm_once(p, &g, 0);
	fp8_teardown(&g);
	k_ref_gemm_fp8<<<(g.m * g.n + 255) / 256, 256, 0, p->stream>>>(
		(const __nv_fp8_storage_t *)g.w, (const __nv_fp8_storage_t *)g.x, ref, g.m, g.n, g.k);
	CK(cudaGetLastError());
	CK(cudaStreamSynchronize(p->stream));
	int ok = probe_check_one("cuBLASLt fp8 GEMM 48x96x128 fast-accum", probe_max_abs_diff((bf16 *)g.y, ref, (size_t)g.m * g.n), 5e-2);
	probe_free(p, g.w);
	probe_free(p, g.x);
	probe_free(p, g.y);
	probe_free(p, ref);
	return ok;
}

int probe_gemv_int4_check(struct probe *p)
{
	int n = 40, k = 2048, ok = 1;
	uint8_t *w = (uint8_t *)probe_alloc(p, (size_t)n * k / 2);
	bf16 *s = (bf16 *)probe_alloc(p, (size_t)n * (k / Q4_GROUP) * 2);
	bf16 *x = (bf16 *)probe_alloc(p, 8 * (size_t)k * 2), *y = (bf16 *)probe_alloc(p, 8 * (size_t)n * 2);
	float *ref = (float *)probe_alloc(p, 8 * (size_t)n * 4);
	if (!w || !s || !x || !y || !ref)
		probe_throw(__FILE__, __LINE__, "cudaMalloc", "cannot allocate the check buffers");
	probe_fill_bytes(p, w, (size_t)n * k / 2, 8);
	probe_fill_bf16(p, s, (size_t)n * (k / Q4_GROUP), 9, 0.01f);
	probe_fill_bf16(p, x, 8 * (size_t)k, 10, 1.0f);
	for (int m = 1; m <= 8; m += 7) {
		launch_w4a16(p, w, s, x, y, m, n, k);
		k_ref_w4a16<<<(m * n + 255) / 256, 256, 0, p->stream>>>(w, s, x, ref, m, n, k);
		CK(cudaGetLastError());
		CK(cudaStreamSynchronize(p->stream));
		char what[64];
		snprintf(what, sizeof what, "W4A16 GEMV m=%d n=%d k=%d", m, n, k);
		ok &= probe_check_one(what, probe_max_abs_diff(y, ref, (size_t)m * n), 3e-2);
	}
	probe_free(p, w);
	probe_free(p, s);
	probe_free(p, x);
	probe_free(p, y);
	probe_free(p, ref);
	return ok;
}
