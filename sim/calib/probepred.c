#include "probepred.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "steptime.h"

void probepred_init(struct probepred *pp, const struct hw_profile *hw, const struct probe_dims *d)
{
	memset(pp, 0, sizeof *pp);
	pp->hw = hw;
	pp->tp = (int)d->tp;
	struct model *m = &pp->layer;
	snprintf(m->id, sizeof m->id, "probe-layer");
	snprintf(m->model_type, sizeof m->model_type, "llama");
	snprintf(m->weights, sizeof m->weights, "bf16");
	m->n_layers = 1;
	m->hidden = d->hidden;
	m->n_heads = d->heads;
	m->n_kv_heads = d->kv_heads;
	m->head_dim = m->v_head_dim = d->head_dim;
	m->vocab = d->vocab;
	m->max_position_embeddings = 1 << 20;
	m->tie_embeddings = true;
	m->dense_ffn_width = d->intermediate;
}

/* The efficiencies with the step's fixed costs removed. */
static struct hw_efficiency kernel_only(const struct hw_efficiency *eff)
{
	struct hw_efficiency k = *eff;
	k.step_overhead_us = 0;
	k.step_overhead_per_seq_us = 0;
	return k;
}

/* A bare struct perf: one layer, no groups yet, matmuls at dtype dt's
 * peak (attention and experts at bf16's). */
static void bare_perf(struct perf *p, const struct probepred *pp, const struct hw_efficiency *eff,
		      enum matmul_dtype dt)
{
	memset(p, 0, sizeof *p);
	p->hw = pp->hw;
	p->eff = kernel_only(eff);
	p->tp = 1;
	p->n_layers = 1;
	p->bw = pp->hw->bandwidth_gb_s * 1e9;
	p->peak_matmul = p->peak_dense = hw_peak_flops(pp->hw, dt);
	p->dense_low = matmul_is_low_precision(dt);
	p->peak_attn = p->peak_expert = hw_peak_flops(pp->hw, MATMUL_BF16);
	perf_pipeline(p, 1);
}

/* perf_step_time's breakdown for one step of `tokens` new tokens. */
static void one_step(const struct perf *p, int64_t tokens, struct perf_breakdown *b)
{
	struct perf_step s;
	perf_step_clear(&s);
	perf_step_add(&s, p, tokens, 0, false);
	perf_step_time(p, &s, b);
}

/* A dense group of `bytes` and flops_per_token at M tokens: one weight
 * (gemm), or pure traffic (flops 0). */
static double dense_time_s(const struct probepred *pp, const struct hw_efficiency *eff,
			   enum matmul_dtype dt, double bytes, double flops_per_token, int64_t tokens)
{
	struct perf p;
	bare_perf(&p, pp, eff, dt);
	p.dense_bytes = bytes;
	p.dense_flops_per_token = flops_per_token;
	struct perf_breakdown b;
	one_step(&p, tokens, &b);
	return b.dense;
}

/* The experts term of one MoE layer whose E experts (hidden H, width I,
 * gate/up and down, bf16) each get m tokens: top-k = E, so every expert
 * is touched and gets exactly the row's tokens. */
static double moe_time_s(const struct probepred *pp, const struct hw_efficiency *eff, const struct probe_row *r)
{
	struct perf p;
	bare_perf(&p, pp, eff, MATMUL_BF16);
	double hi3 = 3.0 * (double)r->gemm_n * (double)r->gemm_k;
	p.n_moe_layers = 1;
	p.n_experts = p.experts_per_token = (double)r->moe_experts;
	p.expert_bytes = 2 * hi3;
	p.expert_flops_per_token = 2 * hi3;
	struct perf_breakdown b;
	one_step(&p, r->tokens, &b);
	return b.experts;
}

/* A link's datasheet rate, per direction; NAN when the profile has none. */
static double link_time_us(double bytes, double gb_s)
{
	return gb_s > 0 ? bytes / (gb_s * 1e9) * 1e6 : NAN;
}

double probepred_time_us(const struct probepred *pp, const struct hw_efficiency *eff,
			 const struct probe_row *r)
{
	switch (r->kind) {
	case PROBE_STREAM_READ:
	case PROBE_D2D_COPY:
	case PROBE_ELEMENTWISE:   /* no term of its own: the bandwidth roofline */
		return dense_time_s(pp, eff, MATMUL_BF16, r->bytes, 0, 1) * 1e6;
	case PROBE_H2D_COPY:
	case PROBE_D2H_COPY:
		return link_time_us(r->bytes, pp->hw->host_bandwidth_gb_s);
	case PROBE_PEER_COPY:
		return link_time_us(r->bytes, pp->hw->ic_bandwidth_gb_s);
	case PROBE_ALLREDUCE:   /* a ring moves 2 (N-1)/N of the buffer over each link */
		return link_time_us(r->bytes * 2.0 * (double)(r->tokens - 1) / (double)r->tokens,
				    pp->hw->ic_bandwidth_gb_s);
	case PROBE_LAUNCH:
		return NAN;
	case PROBE_MOE_GEMM:
		return moe_time_s(pp, eff, r) * 1e6;
	default:
		break;
	}
	if (r->kind == PROBE_GEMM) {
		double nk = (double)r->gemm_n * (double)r->gemm_k;
		if (r->dtype == PROBE_DT_INT4)   /* W4A16: half a byte a weight, a bf16 scale per 128 */
			return dense_time_s(pp, eff, MATMUL_BF16, nk * (0.5 + 2.0 / 128), 2 * nk, r->tokens) * 1e6;
		bool fp8 = r->dtype == PROBE_DT_FP8;
		return dense_time_s(pp, eff, fp8 ? MATMUL_FP8 : MATMUL_BF16, nk * (fp8 ? 1 : 2), 2 * nk,
				    r->tokens) * 1e6;
	}
	struct perf p;
	struct model layer = pp->layer;
	if (r->window > 0) {   /* one sliding-window layer */
		layer.sliding_window = r->window;
		layer.n_sliding_layers = 1;
	}
	perf_init(&p, &layer, pp->hw, precision_find("bf16"), pp->tp, 2.0);
	perf_use_scalars(&p);   /* the fit adjusts eff's scalars, not the backend's curves */
	p.eff = kernel_only(eff);
	struct perf_step s;
	perf_step_clear(&s);
	bool decode = r->kind == PROBE_ATTN_DECODE || (r->kind == PROBE_LAYER && r->decode);
	if (decode) {
		/* perf_step_add counts the new token's own KV: a decode at
		 * ctx reads ctx + 1 entries, the probe's reads `context`. */
		for (int64_t i = 0; i < r->tokens; i++)
			perf_step_add(&s, &p, 1, r->context - 1 > 0 ? r->context - 1 : 1, false);
	} else {
		perf_step_add(&s, &p, r->tokens, r->context, false);
	}
	struct perf_breakdown b;
	perf_step_time(&p, &s, &b);
	double t = r->kind == PROBE_LAYER ? b.dense + b.attn_prefill + b.attn_decode
		   : decode ? b.attn_decode : b.attn_prefill;
	return t * 1e6;
}
