/*
 * probe_elem: the elementwise family of servesim-probe: the small
 * per-layer kernels between the matmuls, which the step model has no term
 * for (they are reported, so a model of them can be checked): RMSNorm of
 * the hidden state, rotary embedding of q and k (NeoX halves, positions
 * 0..T-1), and the KV-cache write of one layer (each token's k and v to
 * its slot of a paged pool, vLLM's reshape_and_cache), at 1, 2, 4 …
 * max_tokens tokens. They are the probe's own straightforward kernels
 * (16-byte loads where the layout allows), so a row is an upper bound on
 * vLLM's fused ones. Short calls are timed as CUDA graphs (probe_time).
 *
 * Rows: kind elementwise, shape rmsnorm_hH, rope_qQ_kK, kv_write_kK (Q,
 * K: the elements of one token's q and k), tokens = T, bytes = the
 * minimum traffic (read + write), flops 0.
 */
#include <string.h>

#include "probe_attn.h"

/* One block per token row: y = x / rms(x) * w, fp32 sums. */
__global__ void k_rmsnorm(const bf16 *x, const bf16 *w, bf16 *y, int H)
{
	__shared__ float part[32];
	const bf16 *xr = x + (size_t)blockIdx.x * H;
	float ss = 0.0f;
	for (int i = threadIdx.x; i < H; i += blockDim.x) {
		float v = __bfloat162float(xr[i]);
		ss += v * v;
	}
	for (int o = 16; o > 0; o >>= 1)
		ss += __shfl_xor_sync(0xffffffffu, ss, o);
	if (threadIdx.x % 32 == 0)
		part[threadIdx.x / 32] = ss;
	__syncthreads();
	if (threadIdx.x < 32) {
		float v = threadIdx.x < blockDim.x / 32 ? part[threadIdx.x] : 0.0f;
		for (int o = 16; o > 0; o >>= 1)
			v += __shfl_xor_sync(0xffffffffu, v, o);
		if (threadIdx.x == 0)
			part[0] = rsqrtf(v / H + 1e-6f);
	}
	__syncthreads();
	float inv = part[0];
	for (int i = threadIdx.x; i < H; i += blockDim.x)
		y[(size_t)blockIdx.x * H + i] = __float2bfloat16(__bfloat162float(xr[i]) * inv *
								 __bfloat162float(w[i]));
}

/* In place on q [T, nq heads x hd] and k [T, nk heads x hd]: pair i with
 * i + hd/2, angle pos x theta^(-2i/hd), theta 10000. */
__global__ void k_rope(bf16 *q, bf16 *k, int T, int nq, int nk, int hd)
{
	int half = hd / 2;
	size_t pairs = (size_t)T * (nq + nk) * half;
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < pairs;
	     i += (size_t)gridDim.x * blockDim.x) {
		int d = (int)(i % half);
		size_t rest = i / half;
		int h = (int)(rest % (nq + nk));
		int t = (int)(rest / (nq + nk));
		bf16 *row = h < nq ? q + ((size_t)t * nq + h) * hd : k + ((size_t)t * nk + (h - nq)) * hd;
		float s, c;
		__sincosf((float)t * __powf(10000.0f, -2.0f * d / hd), &s, &c);
		float a = __bfloat162float(row[d]), b = __bfloat162float(row[d + half]);
		row[d] = __float2bfloat16(a * c - b * s);
		row[d + half] = __float2bfloat16(a * s + b * c);
	}
}

/* Token t's k and v rows (kv_heads x hd) to slot slots[t] of the pool
 * [block][PD_BLOCK][kv_heads][hd], 16 bytes a thread. */
__global__ void k_kv_write(const bf16 *k, const bf16 *v, const int *slots, bf16 *kc, bf16 *vc, int T,
			   int row_elems)
{
	int vecs = row_elems / 8;
	size_t n = (size_t)T * vecs;
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x) {
		size_t t = i / vecs, c = (i % vecs) * 8;
		size_t dst = (size_t)slots[t] * row_elems + c;
		*(uint4 *)(kc + dst) = *(const uint4 *)(k + t * row_elems + c);
		*(uint4 *)(vc + dst) = *(const uint4 *)(v + t * row_elems + c);
	}
}

struct elem_run {
	int T, op;             /* 0 rmsnorm, 1 rope, 2 kv_write */
	bf16 *x, *w, *y, *q, *k, *v, *kc, *vc;
	int *slots;
};

static void elem_once(struct probe *p, void *arg, int rep)
{
	struct elem_run *r = (struct elem_run *)arg;
	int hd = p->d.head_dim, H = p->d.hidden;
	(void)rep;
	if (r->op == 0) {
		k_rmsnorm<<<r->T, 256, 0, p->stream>>>(r->x, r->w, r->y, H);
	} else if (r->op == 1) {
		size_t pairs = (size_t)r->T * (p->heads_r + p->kv_r) * hd / 2;
		int blocks = (int)((pairs + 255) / 256);
		k_rope<<<blocks < p->sms * 8 ? blocks : p->sms * 8, 256, 0, p->stream>>>(r->q, r->k, r->T,
											  p->heads_r, p->kv_r, hd);
	} else {
		size_t vecs = (size_t)r->T * p->kv_r * hd / 8;
		int blocks = (int)((vecs + 255) / 256);
		k_kv_write<<<blocks < p->sms * 8 ? blocks : p->sms * 8, 256, 0, p->stream>>>(
			r->k, r->v, r->slots, r->kc, r->vc, r->T, p->kv_r * hd);
	}
	CK(cudaGetLastError());
}

void fam_elementwise(struct probe *p)
{
	int hd = p->d.head_dim, H = p->d.hidden, T_max = p->max_tokens;
	size_t hq = (size_t)p->heads_r * hd, hk = (size_t)p->kv_r * hd;
	if (hk % 8) {
		probe_skip(p, "elementwise (KV rows of %zu elements: not 16-byte multiples)", hk);
		return;
	}
	struct elem_run r;
	memset(&r, 0, sizeof r);
	size_t pool_slots = (size_t)4 * T_max;   /* the pool the writes scatter into */
	r.x = (bf16 *)probe_alloc(p, (size_t)T_max * H * 2);
	r.y = (bf16 *)probe_alloc(p, (size_t)T_max * H * 2);
	r.w = (bf16 *)probe_alloc(p, (size_t)H * 2);
	r.q = (bf16 *)probe_alloc(p, (size_t)T_max * hq * 2);
	r.k = (bf16 *)probe_alloc(p, (size_t)T_max * hk * 2);
	r.v = (bf16 *)probe_alloc(p, (size_t)T_max * hk * 2);
	r.kc = (bf16 *)probe_alloc(p, pool_slots * hk * 2);
	r.vc = (bf16 *)probe_alloc(p, pool_slots * hk * 2);
	r.slots = (int *)probe_alloc(p, (size_t)T_max * sizeof(int));
	if (r.x && r.y && r.w && r.q && r.k && r.v && r.kc && r.vc && r.slots) {
		probe_fill_bf16(p, r.x, (size_t)T_max * H, 91, 1.0f);
		probe_fill_bf16(p, r.w, H, 92, 1.0f);
		probe_fill_bf16(p, r.q, (size_t)T_max * hq, 93, 1.0f);
		probe_fill_bf16(p, r.k, (size_t)T_max * hk, 94, 1.0f);
		probe_fill_bf16(p, r.v, (size_t)T_max * hk, 95, 1.0f);
		std::vector<int> slots((size_t)T_max);
		for (int t = 0; t < T_max; t++)   /* scattered, as a long-lived pool's are */
			slots[t] = (int)(((uint64_t)t * 2654435761u) % pool_slots);
		CK(cudaMemcpy(r.slots, slots.data(), slots.size() * sizeof(int), cudaMemcpyHostToDevice));
		static const char *const kernels[] = { "probe_rmsnorm_v1", "probe_rope_v1", "probe_kv_write_v1" };
		for (r.op = 0; r.op < 3; r.op++)
			for (r.T = 1; r.T <= T_max; r.T *= 2) {
				if (probe_over_budget(p)) {
					probe_skip(p, "elementwise from %d tokens (time budget)", r.T);
					break;
				}
				char shape[48];
				double bytes;
				if (r.op == 0) {
					snprintf(shape, sizeof shape, "rmsnorm_h%d", H);
					bytes = 2.0 * r.T * H * 2 + 2.0 * H;
				} else if (r.op == 1) {
					snprintf(shape, sizeof shape, "rope_q%zu_k%zu", hq, hk);
					bytes = 2.0 * r.T * (double)(hq + hk) * 2;
				} else {
					snprintf(shape, sizeof shape, "kv_write_k%zu", hk);
					bytes = 2.0 * 2.0 * r.T * (double)hk * 2 + 4.0 * r.T;
				}
				struct meas t = probe_time(p, elem_once, &r);
				probe_emit(p, "elementwise", shape, r.T, 0, "bf16", &t, bytes, 0, kernels[r.op]);
			}
	} else {
		probe_skip(p, "elementwise (cudaMalloc failed)");
	}
	probe_free(p, r.x);
	probe_free(p, r.y);
	probe_free(p, r.w);
	probe_free(p, r.q);
	probe_free(p, r.k);
	probe_free(p, r.v);
	probe_free(p, r.kc);
	probe_free(p, r.vc);
	probe_free(p, r.slots);
}
