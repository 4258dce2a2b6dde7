/*
 * probe_prefill: the causal prefill attention kernel of servesim-probe,
 * probe_fa2_prefill_v1, laid out as FlashAttention-2's forward pass (Dao
 * 2023, arXiv:2307.08691, §3.1): one block of four warps per (64 queries,
 * head), each warp owning 16 query rows; K and V stream through shared
 * memory 64 keys at a time (32 at head_dim 256); S = Q K^T and O += P V run on the tensor cores
 * (mma.sync m16n8k16, bf16 in, fp32 accumulate) with S, P and O kept in
 * registers, the softmax online per row (running max and sum, base 2), and
 * P reused as the A operand of P V without leaving registers (the C layout
 * of two 16x8 tiles is the A layout of one 16x16).
 *
 * What it leaves out of FlashAttention-2/3, and so why the fit still
 * grades it against the GEMM rate before trusting it: no cp.async double
 * buffering of K/V (loads and math do not overlap), no ldmatrix (V is
 * transposed into shared memory as it is stored), no warp specialisation
 * or TMA (FlashAttention-3 on Hopper). Shared rows are padded by 8
 * elements so the fragment loads hit distinct banks.
 *
 * GQA: head h reads KV head h / (heads / kv_heads). Rows of q, k, v, o are
 * tokens, `*_ld` elements apart, a head's HD values at h * HD. Queries are
 * at absolute positions C..C+T-1, keys 0..C+T-1. A sliding window W > 0
 * (Mistral, Gemma-2, gpt-oss layers) lets the query at p see keys p-W+1
 * .. p, W of them, as vLLM's FlashAttention window (W-1, 0) does; tiles
 * wholly before a block's window are never loaded.
 */
#include "probe_attn.h"

#define F2_WARPS 4
#define F2_BQ (16 * F2_WARPS)   /* queries per block */

/* Keys per tile: 64, or 32 at head_dim 256 so shared memory stays under
 * the 99 KiB an sm_86/sm_89 block may have. */
static int f2_bk(int hd)
{
	return hd > 128 ? 32 : 64;
}

static size_t f2_smem_bytes(int hd)
{
	size_t bk = (size_t)f2_bk(hd);
	return ((size_t)F2_BQ * (hd + 8) + bk * (hd + 8) + (size_t)hd * (bk + 8)) * 2;
}

__device__ static inline uint32_t pack_bf16x2(float lo, float hi)
{
	__nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);   /* .x, the low half, is lo */
	return *(uint32_t *)&v;
}

/* c += a b for one m16n8k16 tile (PTX ISA, "Matrix fragments for
 * mma.m16n8k16"): lane = 4 g + t holds a at rows g, g+8 and columns
 * 2t, 2t+1 (+8), b at rows 2t, 2t+1 (+8) of column g, c at rows g, g+8
 * and columns 2t, 2t+1. */
__device__ static inline void mma_16816(float c[4], const uint32_t a[4], uint32_t b0, uint32_t b1)
{
	asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
		     "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
		     : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
		     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

__device__ static inline uint32_t ld32(const bf16 *p)
{
	return *(const uint32_t *)p;
}

/* Q's fragments for k-step kk of this thread's rows r0, r0 + 8. */
template <int QS>
__device__ static inline void q_frag(uint32_t qa[4], const bf16 *Qs, int r0, int kk, int t)
{
	qa[0] = ld32(Qs + r0 * QS + kk * 16 + 2 * t);
	qa[1] = ld32(Qs + (r0 + 8) * QS + kk * 16 + 2 * t);
	qa[2] = ld32(Qs + r0 * QS + kk * 16 + 8 + 2 * t);
	qa[3] = ld32(Qs + (r0 + 8) * QS + kk * 16 + 8 + 2 * t);
}

/* BK keys a tile. Up to head_dim 128 Q's fragments stay in registers; at
 * 256 they are read from shared memory at each use (the O accumulators
 * alone take 128 registers there). */
template <int HD, int BK>
__global__ void __launch_bounds__(F2_WARPS * 32)
k_fa2_prefill(const bf16 *q, int q_ld, const bf16 *k, int k_ld, const bf16 *v, int v_ld, bf16 *o,
	      int o_ld, int T, int C, int heads, int kv_heads, float scale_log2, int window)
{
	constexpr int QS = HD + 8;      /* Q and K row stride in shared memory */
	constexpr int VS = BK + 8;      /* V^T row stride */
	constexpr bool QREG = HD <= 128;
	constexpr int QR = QREG ? HD / 16 : 1;   /* fragments held in registers */
	extern __shared__ __align__(16) unsigned char smem[];
	bf16 *Qs = (bf16 *)smem, *Ks = Qs + F2_BQ * QS, *Vt = Ks + BK * QS;
	const uint4 zero4 = make_uint4(0, 0, 0, 0);
	int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane >> 2, t = lane & 3;
	int h = blockIdx.y, kvh = h / (heads / kv_heads), q0 = blockIdx.x * F2_BQ;

	for (int i = threadIdx.x; i < F2_BQ * HD / 8; i += blockDim.x) {
		int r = i / (HD / 8), c = (i % (HD / 8)) * 8;
		uint4 val = zero4;
		if (q0 + r < T)
			val = *(const uint4 *)(q + (size_t)(q0 + r) * q_ld + h * HD + c);
		*(uint4 *)(Qs + r * QS + c) = val;
	}
	__syncthreads();
	int r0 = warp * 16 + g;   /* this thread's rows: r0 and r0 + 8 */
	uint32_t qa[QR][4];
	if (QREG)
#pragma unroll
		for (int kk = 0; kk < QR; kk++)
			q_frag<QS>(qa[kk], Qs, r0, kk, t);
	float acc[HD / 8][4];
#pragma unroll
	for (int d = 0; d < HD / 8; d++)
		acc[d][0] = acc[d][1] = acc[d][2] = acc[d][3] = 0.0f;
	float m_run[2] = { -INFINITY, -INFINITY }, l_run[2] = { 0.0f, 0.0f };
	bool live[2] = { q0 + r0 < T, q0 + r0 + 8 < T };
	int qpos[2] = { C + q0 + r0, C + q0 + r0 + 8 };
	int n_keys = C + min(q0 + F2_BQ, T);
	bool warp_live = q0 + warp * 16 < T;
	int warp_last_key = C + min(q0 + warp * 16 + 15, T - 1);
	/* The first key any row of the block, or of this warp, can see. */
	int block_first = window > 0 ? max(0, C + q0 - window + 1) : 0;
	int warp_first = window > 0 ? max(0, C + q0 + warp * 16 - window + 1) : 0;

	for (int kt = block_first / BK * BK; kt < n_keys; kt += BK) {
		__syncthreads();   /* the previous tile is consumed */
		for (int i = threadIdx.x; i < BK * HD / 8; i += blockDim.x) {
			int r = i / (HD / 8), c = (i % (HD / 8)) * 8;
			uint4 kv = zero4, vv = zero4;
			if (kt + r < n_keys) {
				kv = *(const uint4 *)(k + (size_t)(kt + r) * k_ld + kvh * HD + c);
				vv = *(const uint4 *)(v + (size_t)(kt + r) * v_ld + kvh * HD + c);
			}
			*(uint4 *)(Ks + r * QS + c) = kv;
			const bf16 *ve = (const bf16 *)&vv;
#pragma unroll
			for (int e = 0; e < 8; e++)
				Vt[(c + e) * VS + r] = ve[e];
		}
		__syncthreads();
		if (!warp_live || kt > warp_last_key || kt + BK <= warp_first)
			continue;   /* warp-uniform: no row of this warp sees these keys */

		float s[BK / 8][4];
#pragma unroll
		for (int nt = 0; nt < BK / 8; nt++)
			s[nt][0] = s[nt][1] = s[nt][2] = s[nt][3] = 0.0f;
#pragma unroll
		for (int kk = 0; kk < HD / 16; kk++) {
			uint32_t qs[4];
			if (!QREG)
				q_frag<QS>(qs, Qs, r0, kk, t);
			const uint32_t *a = QREG ? qa[kk < QR ? kk : 0] : qs;
#pragma unroll
			for (int nt = 0; nt < BK / 8; nt++) {
				const bf16 *kr = Ks + (nt * 8 + g) * QS + kk * 16 + 2 * t;
				mma_16816(s[nt], a, ld32(kr), ld32(kr + 8));
			}
		}
		/* Scale, mask, and the tile's row maxima (4 lanes share a row). */
		float tmax[2] = { -INFINITY, -INFINITY };
#pragma unroll
		for (int nt = 0; nt < BK / 8; nt++)
#pragma unroll
			for (int e = 0; e < 4; e++) {
				int row = e >> 1, key = kt + nt * 8 + 2 * t + (e & 1);
				float x = s[nt][e] * scale_log2;
				if (!live[row] || key > qpos[row] || (window > 0 && key <= qpos[row] - window))
					x = -INFINITY;
				s[nt][e] = x;
				tmax[row] = fmaxf(tmax[row], x);
			}
		float alpha[2], tsum[2] = { 0.0f, 0.0f }, m_new[2];
#pragma unroll
		for (int row = 0; row < 2; row++) {
			tmax[row] = fmaxf(tmax[row], __shfl_xor_sync(0xffffffffu, tmax[row], 1));
			tmax[row] = fmaxf(tmax[row], __shfl_xor_sync(0xffffffffu, tmax[row], 2));
			m_new[row] = fmaxf(m_run[row], tmax[row]);
			alpha[row] = m_new[row] == -INFINITY ? 1.0f : exp2f(m_run[row] - m_new[row]);
		}
#pragma unroll
		for (int nt = 0; nt < BK / 8; nt++)
#pragma unroll
			for (int e = 0; e < 4; e++) {
				int row = e >> 1;
				float pe = m_new[row] == -INFINITY ? 0.0f : exp2f(s[nt][e] - m_new[row]);
				s[nt][e] = pe;
				tsum[row] += pe;
			}
#pragma unroll
		for (int row = 0; row < 2; row++) {
			tsum[row] += __shfl_xor_sync(0xffffffffu, tsum[row], 1);
			tsum[row] += __shfl_xor_sync(0xffffffffu, tsum[row], 2);
			l_run[row] = l_run[row] * alpha[row] + tsum[row];
			m_run[row] = m_new[row];
		}
#pragma unroll
		for (int d = 0; d < HD / 8; d++) {
			acc[d][0] *= alpha[0];
			acc[d][1] *= alpha[0];
			acc[d][2] *= alpha[1];
			acc[d][3] *= alpha[1];
		}
		/* O += P V: P's C fragments of tiles 2j, 2j+1 are the A fragment
		 * of k-step j. */
#pragma unroll
		for (int j = 0; j < BK / 16; j++) {
			uint32_t pa[4] = { pack_bf16x2(s[2 * j][0], s[2 * j][1]),
					   pack_bf16x2(s[2 * j][2], s[2 * j][3]),
					   pack_bf16x2(s[2 * j + 1][0], s[2 * j + 1][1]),
					   pack_bf16x2(s[2 * j + 1][2], s[2 * j + 1][3]) };
#pragma unroll
			for (int d = 0; d < HD / 8; d++) {
				const bf16 *vr = Vt + (d * 8 + g) * VS + j * 16 + 2 * t;
				mma_16816(acc[d], pa, ld32(vr), ld32(vr + 8));
			}
		}
	}
#pragma unroll
	for (int row = 0; row < 2; row++) {
		if (!live[row])
			continue;
		float inv = l_run[row] > 0.0f ? 1.0f / l_run[row] : 0.0f;
		bf16 *orow = o + (size_t)(q0 + r0 + 8 * row) * o_ld + h * HD + 2 * t;
#pragma unroll
		for (int d = 0; d < HD / 8; d++)
			*(uint32_t *)(orow + d * 8) = pack_bf16x2(acc[d][2 * row] * inv, acc[d][2 * row + 1] * inv);
	}
}

int prefill_supports(int hd)
{
	return hd == 64 || hd == 80 || hd == 96 || hd == 128 || hd == 256;
}

void attn_set_smem_limits(struct probe *p)
{
	(void)p;
#define SMEM(HD)                                                                               \
	CK(cudaFuncSetAttribute(k_fa2_prefill<HD, HD <= 128 ? 64 : 32>,                           \
				cudaFuncAttributeMaxDynamicSharedMemorySize, (int)f2_smem_bytes(HD)))
	SMEM(64);
	SMEM(80);
	SMEM(96);
	SMEM(128);
	SMEM(256);
#undef SMEM
}

int launch_flash(struct probe *p, const bf16 *q, int q_ld, const bf16 *k, int k_ld, const bf16 *v,
		 int v_ld, bf16 *o, int o_ld, int T, int C, int heads, int kv_heads, int hd, int window)
{
	dim3 grid((T + F2_BQ - 1) / F2_BQ, heads);
	size_t sm = f2_smem_bytes(hd);
	float sc = attn_scale_log2(hd);
#define FA2(HD, BK)                                                                            \
	k_fa2_prefill<HD, BK><<<grid, F2_WARPS * 32, sm, p->stream>>>(q, q_ld, k, k_ld, v, v_ld, o, \
								      o_ld, T, C, heads, kv_heads, sc, window)
	switch (hd) {
	case 64: FA2(64, 64); break;
	case 80: FA2(80, 64); break;
	case 96: FA2(96, 64); break;
	case 128: FA2(128, 64); break;
	case 256: FA2(256, 32); break;
	default: return 0;
	}
#undef FA2
	CK(cudaGetLastError());
	return 1;
}
