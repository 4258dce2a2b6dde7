/*
 * probe_moe: the moe_gemm family of servesim-probe: an MoE layer's expert
 * matmuls by tokens per expert.
 *
 * For --experts E (the model's routed experts; the family is skipped for
 * a dense model), every expert gets the same m tokens, m = 1, 2, 4 … up
 * to E x m = 65536 routed tokens, and one call is the experts' gate/up
 * GEMMs [m, H] x [2I, H]^T then their down GEMMs [m, I] x [H, I]^T, each
 * as one cuBLAS strided-batched GEMM over the E experts: with equal groups
 * that is a grouped GEMM, as vLLM's fused-MoE kernel runs it once tokens
 * are sorted by expert. The routing, the sort and SiLU are not timed.
 * Shapes are one tensor-parallel rank's (I / tp). The weights rotate over
 * enough copies to exceed four times L2.
 *
 * Row: kind moe_gemm, shape moe_eE_kK_hH_iI (K the experts a token goes
 * to, recorded for the reader), tokens = m, bytes = the E experts' weights
 * plus activations, flops = 2 x E x m x 3 H I.
 */
#include <string.h>

#include "probe.h"

struct moe_run {
	int E, m, H, I, n_copies;
	size_t w_elems;       /* one copy: E x (2I x H + H x I) */
	bf16 *w, *x, *gu, *act, *y;
};

static void batched(struct probe *p, const bf16 *w, const bf16 *x, bf16 *y, int m, int n, int k,
		    int batch)
{
	const float one = 1.0f, zero = 0.0f;
	BK(cublasGemmStridedBatchedEx(p->blas, CUBLAS_OP_T, CUBLAS_OP_N, n, m, k, &one, w, CUDA_R_16BF,
				      k, (long long)n * k, x, CUDA_R_16BF, k, (long long)m * k, &zero, y,
				      CUDA_R_16BF, n, (long long)m * n, batch, CUBLAS_COMPUTE_32F,
				      CUBLAS_GEMM_DEFAULT));
}

static void moe_once(struct probe *p, void *arg, int rep)
{
	struct moe_run *r = (struct moe_run *)arg;
	const bf16 *w_gu = r->w + (size_t)(rep % r->n_copies) * r->w_elems;
	const bf16 *w_down = w_gu + (size_t)r->E * 2 * r->I * r->H;
	batched(p, w_gu, r->x, r->gu, r->m, 2 * r->I, r->H, r->E);
	batched(p, w_down, r->act, r->y, r->m, r->H, r->I, r->E);
}

void fam_moe_gemm(struct probe *p)
{
	if (p->experts < 2) {
		probe_skip(p, "moe_gemm (a dense model: pass --experts E for an MoE one)");
		return;
	}
	struct moe_run r;
	memset(&r, 0, sizeof r);
	r.E = p->experts;
	r.H = p->d.hidden;
	r.I = p->inter_r;
	r.w_elems = (size_t)r.E * 3 * r.I * r.H;
	r.n_copies = probe_copies_for(p, 2.0 * r.w_elems, 8);
	int m_max = 1;
	while (2 * m_max <= p->max_tokens && (long long)r.E * 2 * m_max <= (p->check ? 256 : 65536))
		m_max *= 2;
	size_t act = (size_t)r.E * m_max * ((size_t)2 * r.H + 3 * (size_t)r.I);
	char shape[64];
	snprintf(shape, sizeof shape, "moe_e%d_k%d_h%d_i%d", r.E, p->experts_per_token, r.H, r.I);
	for (;;) {
		size_t need = (r.n_copies * r.w_elems + act) * 2;
		if (need <= probe_budget_bytes())
			break;
		if (r.n_copies == 1) {
			probe_skip(p, "moe_gemm %s (the experts' weights do not fit)", shape);
			return;
		}
		r.n_copies = 1;
	}
	r.w = (bf16 *)probe_alloc(p, r.n_copies * r.w_elems * 2);
	r.x = (bf16 *)probe_alloc(p, (size_t)r.E * m_max * r.H * 2);
	r.gu = (bf16 *)probe_alloc(p, (size_t)r.E * m_max * 2 * r.I * 2);
	r.act = (bf16 *)probe_alloc(p, (size_t)r.E * m_max * r.I * 2);
	r.y = (bf16 *)probe_alloc(p, (size_t)r.E * m_max * r.H * 2);
	if (r.w && r.x && r.gu && r.act && r.y) {
		probe_fill_bf16(p, r.w, r.n_copies * r.w_elems, 81, 0.05f);
		probe_fill_bf16(p, r.x, (size_t)r.E * m_max * r.H, 82, 1.0f);
		probe_fill_bf16(p, r.act, (size_t)r.E * m_max * r.I, 83, 1.0f);
		for (r.m = 1; r.m <= m_max; r.m *= 2) {
			if (probe_over_budget(p)) {
				probe_skip(p, "moe_gemm %s from %d tokens per expert (time budget)", shape, r.m);
				break;
			}
			struct meas t = probe_time(p, moe_once, &r);
			double em = (double)r.E * r.m;
			double bytes = 2.0 * r.w_elems + 2.0 * em * (2.0 * r.H + 3.0 * r.I);
			probe_emit(p, "moe_gemm", shape, r.m, 0, "bf16", &t, bytes, 2.0 * em * 3.0 * r.H * r.I,
				   "cublasGemmStridedBatchedEx_bf16");
		}
	} else {
		probe_skip(p, "moe_gemm %s (cudaMalloc failed)", shape);
	}
	probe_free(p, r.w);
	probe_free(p, r.x);
	probe_free(p, r.gu);
	probe_free(p, r.act);
	probe_free(p, r.y);
}
