/*
 * probe_attn: the decode attention kernel of servesim-probe, the SiLU x up
 * kernel of the layer rows, and the paged KV pool (probe_attn.h says what
 * each supports; the prefill kernel is probe_prefill.cu).
 *
 * Decode, probe_flashdec_v2 (flash-decoding): one block of four warps per
 * (split-K partition of the context, KV head, up to eight of its query
 * heads, sequence). Each token's K and V row is read once with 16-byte
 * loads, HD/8 lanes a row; pass one writes the partition's scores to
 * shared memory, a block-wide softmax follows, pass two accumulates P V in
 * registers; partial (max, sum, P V) go to part_* and k_decode_reduce
 * combines the partitions. Registers stay near 100 a thread so many warps
 * keep loads in flight; the partition count fills the GPU twice over.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "probe_attn.h"

#define DEC_WARPS 4
#define DEC_GT 8       /* query heads a block takes at most */
#define DEC_SMEM_FLOATS 8192   /* 32 KiB of scores (or the P V reduction) */

__device__ static void unpack8(uint4 v, float *f)
{
	const bf16 *h = (const bf16 *)&v;
#pragma unroll
	for (int e = 0; e < 8; e++)
		f[e] = __bfloat162float(h[e]);
}

template <int HD, int GT>
__global__ void __launch_bounds__(DEC_WARPS * 32)
k_flashdec(const bf16 *q, int q_ld, const bf16 *k_cache, const bf16 *v_cache,
	   const int *block_tables, int max_blocks, const int *ctx_lens, int heads, int kv_heads,
	   float scale_log2, int part_len, int max_parts, float *part_m, float *part_l,
	   float *part_acc)
{
	constexpr int L = HD / 8;          /* lanes per token row: 16-byte loads */
	constexpr int TPW = 32 / L;        /* tokens a warp covers per step */
	constexpr int TPB = DEC_WARPS * TPW;
	extern __shared__ float sm[];      /* scores [GT][part_len]; then P V partials */
	__shared__ float red[DEC_WARPS][GT], M_s[GT], L_s[GT];
	int G = heads / kv_heads, chunks = (G + GT - 1) / GT;
	int part = blockIdx.x, g = blockIdx.y / chunks, c = blockIdx.y % chunks, b = blockIdx.z;
	int Gc = min(GT, G - c * GT), h0 = g * G + c * GT;
	int ctx = ctx_lens[b], t0 = part * part_len;
	if (t0 >= ctx)
		return;   /* block-uniform, before any barrier */
	int len = min(part_len, ctx - t0);
	int warp = threadIdx.x / 32, lane = threadIdx.x % 32, sub = lane % L, slot = lane / L;

	float qv[GT][8];
#pragma unroll
	for (int j = 0; j < GT; j++) {
		uint4 raw = make_uint4(0, 0, 0, 0);
		if (j < Gc)
			raw = *(const uint4 *)(q + (size_t)b * q_ld + (size_t)(h0 + j) * HD + sub * 8);
		unpack8(raw, qv[j]);
#pragma unroll
		for (int e = 0; e < 8; e++)
			qv[j][e] *= scale_log2;
	}
	const int *bt = block_tables + (size_t)b * max_blocks;
	size_t row = (size_t)kv_heads * HD, blk = PD_BLOCK * row, off = (size_t)g * HD + sub * 8;

	/* Pass one: scores. The loop bound is warp-uniform (shuffles). */
	float mloc[GT];
#pragma unroll
	for (int j = 0; j < GT; j++)
		mloc[j] = -INFINITY;
	for (int ib = warp * TPW; ib < len; ib += 2 * TPB) {
		int i0 = ib + slot, i1 = ib + TPB + slot;
		uint4 r0 = make_uint4(0, 0, 0, 0), r1 = r0;
		int t = t0 + i0, u = t0 + i1;
		if (i0 < len)
			r0 = *(const uint4 *)(k_cache + (size_t)bt[t / PD_BLOCK] * blk + (t % PD_BLOCK) * row + off);
		if (i1 < len)
			r1 = *(const uint4 *)(k_cache + (size_t)bt[u / PD_BLOCK] * blk + (u % PD_BLOCK) * row + off);
		float k0[8], k1[8];
		unpack8(r0, k0);
		unpack8(r1, k1);
#pragma unroll
		for (int j = 0; j < GT; j++) {
			float s0 = 0.0f, s1 = 0.0f;
#pragma unroll
			for (int e = 0; e < 8; e++) {
				s0 += qv[j][e] * k0[e];
				s1 += qv[j][e] * k1[e];
			}
#pragma unroll
			for (int o = L / 2; o > 0; o >>= 1) {
				s0 += __shfl_xor_sync(0xffffffffu, s0, o);
				s1 += __shfl_xor_sync(0xffffffffu, s1, o);
			}
			if (j < Gc) {
				if (i0 < len) {
					mloc[j] = fmaxf(mloc[j], s0);
					if (sub == 0)
						sm[j * part_len + i0] = s0;
				}
				if (i1 < len) {
					mloc[j] = fmaxf(mloc[j], s1);
					if (sub == 0)
						sm[j * part_len + i1] = s1;
				}
			}
		}
	}
#pragma unroll
	for (int j = 0; j < GT; j++) {
		float v = mloc[j];
#pragma unroll
		for (int o = 16; o > 0; o >>= 1)
			v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
		if (lane == 0)
			red[warp][j] = v;
	}
	__syncthreads();
	if (threadIdx.x < GT) {
		float v = -INFINITY;
		for (int w = 0; w < DEC_WARPS; w++)
			v = fmaxf(v, red[w][threadIdx.x]);
		M_s[threadIdx.x] = v;
	}
	__syncthreads();

	/* Softmax numerators in place, and their sums. */
	for (int j = 0; j < Gc; j++) {
		float ls = 0.0f;
		for (int i = threadIdx.x; i < len; i += blockDim.x) {
			float pj = exp2f(sm[j * part_len + i] - M_s[j]);
			sm[j * part_len + i] = pj;
			ls += pj;
		}
		for (int o = 16; o > 0; o >>= 1)
			ls += __shfl_xor_sync(0xffffffffu, ls, o);
		if (lane == 0)
			red[warp][j] = ls;
	}
	__syncthreads();
	if (threadIdx.x < Gc) {
		float v = 0.0f;
		for (int w = 0; w < DEC_WARPS; w++)
			v += red[w][threadIdx.x];
		L_s[threadIdx.x] = v;
	}

	/* Pass two: P V, each lane holding 8 dims of every query head. */
	float acc[GT][8];
#pragma unroll
	for (int j = 0; j < GT; j++)
#pragma unroll
		for (int e = 0; e < 8; e++)
			acc[j][e] = 0.0f;
	for (int i = warp * TPW + slot; i < len; i += TPB) {
		int t = t0 + i;
		float vf[8];
		unpack8(*(const uint4 *)(v_cache + (size_t)bt[t / PD_BLOCK] * blk + (t % PD_BLOCK) * row + off), vf);
#pragma unroll
		for (int j = 0; j < GT; j++) {
			float pj = j < Gc ? sm[j * part_len + i] : 0.0f;
#pragma unroll
			for (int e = 0; e < 8; e++)
				acc[j][e] += pj * vf[e];
		}
	}
#pragma unroll
	for (int j = 0; j < GT; j++)
#pragma unroll
		for (int e = 0; e < 8; e++)
#pragma unroll
			for (int o = L; o < 32; o <<= 1)
				acc[j][e] += __shfl_xor_sync(0xffffffffu, acc[j][e], o);
	__syncthreads();   /* every warp is done with the scores */
	if (slot == 0)
#pragma unroll
		for (int j = 0; j < GT; j++)
#pragma unroll
			for (int e = 0; e < 8; e++)
				sm[(warp * GT + j) * HD + sub * 8 + e] = acc[j][e];
	__syncthreads();
	for (int i = threadIdx.x; i < Gc * HD; i += blockDim.x) {
		int j = i / HD, d = i % HD;
		float a = 0.0f;
		for (int w = 0; w < DEC_WARPS; w++)
			a += sm[(w * GT + j) * HD + d];
		size_t idx = ((size_t)b * heads + h0 + j) * max_parts + part;
		part_acc[idx * HD + d] = a;
		if (d == 0) {
			part_m[idx] = M_s[j];
			part_l[idx] = L_s[j];
		}
	}
}

/* Combines the partitions of one (head, sequence); blockDim.x = HD. */
__global__ void k_decode_reduce(const float *part_m, const float *part_l, const float *part_acc,
				const int *ctx_lens, int heads, int part_len, int max_parts, int hd,
				bf16 *o, int o_ld)
{
	int h = blockIdx.x, b = blockIdx.y, d = threadIdx.x;
	int np = (ctx_lens[b] + part_len - 1) / part_len;
	size_t base = ((size_t)b * heads + h) * max_parts;
	float M = -INFINITY, L = 0.0f, A = 0.0f;
	for (int pi = 0; pi < np; pi++)
		M = fmaxf(M, part_m[base + pi]);
	for (int pi = 0; pi < np; pi++) {
		if (part_m[base + pi] == -INFINITY)
			continue;
		float f = exp2f(part_m[base + pi] - M);
		L += part_l[base + pi] * f;
		A += part_acc[(base + pi) * hd + d] * f;
	}
	o[(size_t)b * o_ld + h * hd + d] = __float2bfloat16(L > 0.0f ? A / L : 0.0f);
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


void launch_silu_mul(struct probe *p, const bf16 *gu, bf16 *out, int rows, int inter)
{
	k_silu_mul<<<p->sms * 4, 256, 0, p->stream>>>(gu, out, rows, inter);
	CK(cudaGetLastError());
}

/* ---- launchers ----------------------------------------------------------------- */

int decode_supports(int hd)
{
	return hd == 64 || hd == 128 || hd == 256;
}

/* Query heads a decode block takes: the smallest of 1, 2, 4, 8 that holds
 * a group, eight for larger groups (taken in chunks). */
static int decode_gt(int group)
{
	return group <= 1 ? 1 : group <= 2 ? 2 : group <= 4 ? 4 : DEC_GT;
}

static size_t decode_smem(int gt, int hd, int part_len)
{
	size_t a = (size_t)gt * part_len, b = (size_t)DEC_WARPS * gt * hd;
	return (a > b ? a : b) * sizeof(float);
}

int launch_decode(struct probe *p, const struct paged *pg, int copy, const bf16 *q, int q_ld, bf16 *o,
		  int o_ld)
{
	if (!decode_supports(pg->hd))
		return 0;
	int G = pg->heads / pg->kv_heads, gt = decode_gt(G), chunks = (G + gt - 1) / gt;
	dim3 grid(pg->max_parts, pg->kv_heads * chunks, pg->batch);
	const int *bt = pg->block_tables + (size_t)copy * pg->batch * pg->max_blocks;
	float sc = attn_scale_log2(pg->hd);
	size_t sm = decode_smem(gt, pg->hd, pg->part_len);
#define DEC(HD, GT)                                                                               \
	k_flashdec<HD, GT><<<grid, DEC_WARPS * 32, sm, p->stream>>>(                              \
		q, q_ld, pg->k_cache, pg->v_cache, bt, pg->max_blocks, pg->ctx_lens, pg->heads,   \
		pg->kv_heads, sc, pg->part_len, pg->max_parts, pg->part_m, pg->part_l, pg->part_acc)
#define DEC_G(HD)                                                 \
	switch (gt) {                                             \
	case 1: DEC(HD, 1); break;                                \
	case 2: DEC(HD, 2); break;                                \
	case 4: DEC(HD, 4); break;                                \
	default: DEC(HD, 8); break;                               \
	}
	switch (pg->hd) {
	case 64: DEC_G(64); break;
	case 128: DEC_G(128); break;
	default: DEC_G(256); break;
	}
#undef DEC_G
#undef DEC
	CK(cudaGetLastError());
	k_decode_reduce<<<dim3(pg->heads, pg->batch), pg->hd, 0, p->stream>>>(
		pg->part_m, pg->part_l, pg->part_acc, pg->ctx_lens, pg->heads, pg->part_len,
		pg->max_parts, pg->hd, o, o_ld);
	CK(cudaGetLastError());
	return 1;
}

/* ---- the paged pool ----------------------------------------------------------------- */

/* The split-K partition for batch sequences of ctx tokens: enough
 * partitions that the grid covers every SM twice, each at most what the
 * scores buffer holds, at least one KV block. */
static void choose_partition(const struct probe *p, int batch, int ctx, int heads, int kv_heads,
			     int *part_len, int *parts)
{
	int G = heads / kv_heads, gt = decode_gt(G), chunks = (G + gt - 1) / gt;
	int cap = DEC_SMEM_FLOATS / gt / PD_BLOCK * PD_BLOCK;
	long long blocks = (long long)batch * kv_heads * chunks;
	int want = (int)((2LL * (p->sms > 0 ? p->sms : 1) + blocks - 1) / blocks);
	int n = (ctx + cap - 1) / cap;
	if (want > n)
		n = want;
	int max_n = (ctx + PD_BLOCK - 1) / PD_BLOCK;
	if (n > max_n)
		n = max_n;
	int len = (ctx + n - 1) / n;
	len = (len + PD_BLOCK - 1) / PD_BLOCK * PD_BLOCK;
	*part_len = len;
	*parts = (ctx + len - 1) / len;
}

size_t paged_bytes(const struct probe *p, int batch, int ctx, int kv_heads, int hd, int heads,
		   int n_copies)
{
	int len, parts;
	choose_partition(p, batch, ctx, heads, kv_heads, &len, &parts);
	size_t blocks = (size_t)batch * ((ctx + PD_BLOCK - 1) / PD_BLOCK);
	return 2 * (size_t)n_copies * blocks * PD_BLOCK * kv_heads * hd * 2 +
	       (size_t)batch * heads * parts * (hd + 2) * 4;
}

void paged_destroy(struct probe *p, struct paged *pg)
{
	probe_free(p, pg->k_cache);
	probe_free(p, pg->v_cache);
	probe_free(p, pg->block_tables);
	probe_free(p, pg->ctx_lens);
	probe_free(p, pg->part_m);
	probe_free(p, pg->part_l);
	probe_free(p, pg->part_acc);
	memset(pg, 0, sizeof *pg);
}

/* Each copy's blocks are shuffled (a deterministic LCG), as a long-lived
 * vLLM pool is. */
int paged_create(struct probe *p, struct paged *pg, int batch, int ctx, int heads, int kv_heads,
		 int hd, int n_copies)
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
	choose_partition(p, batch, ctx, heads, kv_heads, &pg->part_len, &pg->max_parts);
	size_t n_blocks = (size_t)n_copies * pg->blocks_per_copy;
	size_t cache_elems = n_blocks * PD_BLOCK * kv_heads * hd;
	size_t parts = (size_t)batch * heads * pg->max_parts;
	pg->k_cache = (bf16 *)probe_alloc(p, cache_elems * 2);
	pg->v_cache = (bf16 *)probe_alloc(p, cache_elems * 2);
	pg->block_tables = (int *)probe_alloc(p, n_blocks * sizeof(int));
	pg->ctx_lens = (int *)probe_alloc(p, (size_t)batch * sizeof(int));
	pg->part_m = (float *)probe_alloc(p, parts * sizeof(float));
	pg->part_l = (float *)probe_alloc(p, parts * sizeof(float));
	pg->part_acc = (float *)probe_alloc(p, parts * hd * sizeof(float));
	if (!pg->k_cache || !pg->v_cache || !pg->block_tables || !pg->ctx_lens || !pg->part_m ||
	    !pg->part_l || !pg->part_acc) {
		paged_destroy(p, pg);
		return 0;
	}
	probe_fill_bf16(p, pg->k_cache, cache_elems, 31, 1.0f);
	probe_fill_bf16(p, pg->v_cache, cache_elems, 32, 1.0f);
	std::vector<int> host(n_blocks), lens((size_t)batch, ctx);
	uint64_t lcg = 0x5eedULL;
	for (int c = 0; c < n_copies; c++) {
		int *tab = host.data() + (size_t)c * pg->blocks_per_copy;
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
	CK(cudaMemcpy(pg->block_tables, host.data(), n_blocks * sizeof(int), cudaMemcpyHostToDevice));
	CK(cudaMemcpy(pg->ctx_lens, lens.data(), (size_t)batch * sizeof(int), cudaMemcpyHostToDevice));
	return 1;
}
