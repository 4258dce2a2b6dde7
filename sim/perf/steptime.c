#include "steptime.h"

#include <math.h>
#include <string.h>

void perf_init(struct perf *p, const struct model *m, const struct hw_profile *hw,
	       const struct precision *w, int tp, double kv_bytes_per_elem)
{
	memset(p, 0, sizeof *p);
	struct model_params mp;
	model_params(m, &mp);
	double t = tp;
	double bits = w->bits_per_weight / 8;
	double rest_b = w->experts_only ? 2.0 : bits;
	double emb_b = w->quantizes_embeddings || w->bits_per_weight >= 16 ? bits : 2.0;
	double L = (double)m->n_layers, Lm = (double)m->n_moe_layers;

	p->hw = hw;
	p->eff = hw->eff;
	p->tp = tp;
	p->n_layers = m->n_layers;
	p->bw = hw->bandwidth_gb_s * 1e9;
	p->peak_matmul = hw_peak_flops(hw, w->matmul);
	p->peak_attn = hw_peak_flops(hw, MATMUL_BF16);

	double dense_params = L * mp.attn_per_layer + (L - Lm) * mp.dense_ffn_per_layer +
			      Lm * (mp.shared_per_layer + mp.router_per_layer);
	p->dense_bytes = dense_params * rest_b / t;
	p->dense_flops_per_token = 2 * dense_params / t;
	double head = mp.lm_head > 0 ? mp.lm_head : mp.embed;   /* tied: the embedding */
	p->lm_head_bytes = head * emb_b / t;
	p->lm_head_flops_per_token = 2 * head / t;

	p->n_moe_layers = Lm;
	p->n_experts = (double)m->n_experts;
	p->experts_per_token = (double)m->experts_per_token;
	p->expert_bytes = mp.expert * bits / t;
	p->expert_flops_per_token = 2 * mp.expert / t;

	/* KV heads split across ranks, replicated when tp exceeds them. */
	double kv_per_layer = model_kv_bytes_per_token(m, kv_bytes_per_elem) / L;
	double kv_heads = m->mla ? 1 : (double)m->n_kv_heads;
	double ranks_sharing = m->mla ? 1 : fmin(t, kv_heads);
	p->kv_bytes_per_token_layer = kv_per_layer / ranks_sharing;
	p->sliding_layers = (double)m->n_sliding_layers;
	p->full_layers = L - p->sliding_layers;
	p->window = (double)m->sliding_window;
	p->attn_flops_per_pair = 2 * (double)m->n_heads * (double)(m->head_dim + m->v_head_dim) / t;
	p->allreduce_bytes_per_token = (double)m->hidden * 2;
}

void perf_ideal(struct perf *p)
{
	p->eff = (struct hw_efficiency){ 1, 1, 0, 1, 0, 0, 0 };
}

/* Σ_{i=0}^{n-1} min(c + i + 1, w): the keys the chunk's queries see. */
double perf_causal_pairs(double n, double c, double w)
{
	double all = n * c + n * (n + 1) / 2;
	if (w <= 0 || c + n <= w)
		return all;
	/* Queries at positions p = c+i+1 above w see exactly w keys. */
	double uncapped = c + 1 > w ? 0 : w - c;   /* queries with c+i+1 <= w */
	if (uncapped > n)
		uncapped = n;
	return uncapped * c + uncapped * (uncapped + 1) / 2 + (n - uncapped) * w;
}

void perf_step_add_prefill(struct perf_step *s, const struct perf *p, double n, double c)
{
	s->pre_pairs_full += perf_causal_pairs(n, c, 0);
	s->pre_pairs_win += perf_causal_pairs(n, c, p->window);
	s->pre_ctx_full += c + n;
	s->pre_ctx_win += p->window > 0 ? fmin(c + n, p->window) : c + n;
}

static double roofline(double flops, double peak, double ceff, double bytes, double bw, double beff)
{
	double tc = flops > 0 ? flops / (peak * ceff) : 0;
	double tm = bytes > 0 ? bytes / (bw * beff) : 0;
	return tc > tm ? tc : tm;
}

/* Achieved fraction of peak for a matmul of m rows (tokens). */
static double matmul_eff(const struct perf *p, double m)
{
	return p->eff.compute_max * m / (m + p->eff.compute_half_tokens);
}

double perf_step_time(const struct perf *p, const struct perf_step *s, struct perf_breakdown *b)
{
	struct perf_breakdown r = { 0 };
	double T = (double)s->tokens;
	double beff = p->eff.bandwidth;
	if (s->tokens > 0) {
		r.dense = roofline(p->dense_flops_per_token * T, p->peak_matmul, matmul_eff(p, T),
				   p->dense_bytes, p->bw, beff);
		if (s->sampled > 0)
			r.lm_head = roofline(p->lm_head_flops_per_token * (double)s->sampled, p->peak_matmul,
					     matmul_eff(p, (double)s->sampled), p->lm_head_bytes, p->bw, beff);
		if (p->n_moe_layers > 0) {
			double E = p->n_experts, k = p->experts_per_token;
			double touched = E * (1 - pow(1 - k / E, T));
			double per_expert_tokens = T * k / touched;
			r.experts = roofline(p->n_moe_layers * p->expert_flops_per_token * T * k,
					     p->peak_matmul, matmul_eff(p, per_expert_tokens),
					     p->n_moe_layers * touched * p->expert_bytes, p->bw, beff);
		}
		double pairs = p->full_layers * s->pre_pairs_full + p->sliding_layers * s->pre_pairs_win;
		double pre_kv = p->full_layers * s->pre_ctx_full + p->sliding_layers * s->pre_ctx_win;
		r.attn_prefill = roofline(pairs * p->attn_flops_per_pair, p->peak_attn, p->eff.attention_compute,
					  pre_kv * p->kv_bytes_per_token_layer, p->bw, beff);
		double dec_kv = p->full_layers * s->dec_ctx_full + p->sliding_layers * s->dec_ctx_win;
		r.attn_decode = roofline(dec_kv * p->attn_flops_per_pair, p->peak_attn, p->eff.attention_compute,
					 dec_kv * p->kv_bytes_per_token_layer, p->bw, beff);
		if (p->tp > 1) {
			double t = p->tp;
			double bytes = T * p->allreduce_bytes_per_token;
			double one = 2 * (t - 1) / t * bytes / (p->hw->ic_bandwidth_gb_s * 1e9) +
				     p->hw->ic_latency_us * 1e-6;
			r.allreduce = 2 * (double)p->n_layers * one;
		}
		r.overhead = (p->eff.step_overhead_us + p->eff.step_overhead_per_seq_us * (double)s->seqs) * 1e-6;
	}
	r.total = r.dense + r.experts + r.lm_head + r.attn_prefill + r.attn_decode + r.allreduce + r.overhead;
	if (b)
		*b = r;
	return r.total;
}
