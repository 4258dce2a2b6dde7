#include "steptime.h"

#include <assert.h>
#include <math.h>
#include <string.h>

#include "overhead.h"

/* Whether a weight group stored at bytes per parameter multiplies in the
 * precision's low-precision dtype (fp8, int8, fp4) rather than bf16. */
static bool group_low(const struct precision *w, double bytes)
{
	return bytes < 2 && matmul_is_low_precision(w->matmul);
}

static double group_peak(const struct hw_profile *hw, const struct precision *w, double bytes)
{
	return bytes >= 2 ? hw_peak_flops(hw, MATMUL_BF16) : hw_peak_flops(hw, w->matmul);
}

void perf_init(struct perf *p, const struct model *m, const struct hw_profile *hw,
	       const struct precision *w, int tp, double kv_bytes_per_elem)
{
	memset(p, 0, sizeof *p);
	struct model_params mp;
	model_params(m, &mp);
	double t = tp;
	struct model_group_bytes gb;
	model_group_bytes(m, w, &gb);
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
	double attn_params = L * mp.attn_per_layer;
	p->dense_bytes = ((dense_params - attn_params) * gb.dense + attn_params * gb.attn) / t;
	p->dense_flops_per_token = 2 * dense_params / t;
	double t_attn = attn_params / group_peak(hw, w, gb.attn);
	double t_rest = (dense_params - attn_params) / group_peak(hw, w, gb.dense);
	p->peak_dense = dense_params / (t_attn + t_rest);
	p->dense_low = ((group_low(w, gb.attn) ? t_attn : 0) + (group_low(w, gb.dense) ? t_rest : 0)) /
		       (t_attn + t_rest);
	double head = mp.lm_head > 0 ? mp.lm_head : mp.embed;   /* tied: the embedding */
	p->lm_head_bytes = head * gb.embed / t;
	p->lm_head_flops_per_token = 2 * head / t;
	p->peak_lm_head = group_peak(hw, w, gb.embed);
	p->lm_head_low = group_low(w, gb.embed);
	p->peak_expert = group_peak(hw, w, gb.expert);
	p->expert_low = group_low(w, gb.expert);

	p->n_moe_layers = Lm;
	p->n_experts = (double)m->n_experts;
	p->experts_per_token = (double)m->experts_per_token;
	p->expert_bytes = mp.expert * gb.expert / t;
	p->expert_flops_per_token = 2 * mp.expert / t;

	p->kv_bytes_per_token_layer = model_kv_bytes_per_token_per_rank(m, kv_bytes_per_elem, tp) / L;
	p->sliding_layers = (double)m->n_sliding_layers;
	p->full_layers = L - p->sliding_layers;
	p->window = (double)m->sliding_window;
	p->attn_flops_per_pair = 2 * (double)m->n_heads * (double)(m->head_dim + m->v_head_dim) / t;
	p->hidden_bytes_per_token = (double)m->hidden * 2;
	perf_pipeline(p, 1);
}

void perf_pipeline(struct perf *p, int pp)
{
	assert(pp >= 1);
	p->pp = pp;
	p->stage_layers = (double)pipeline_stage_layers(p->n_layers, pp);
}

double perf_offload(struct perf *p, double gib, double weight_bytes_per_gpu)
{
	double b = gib * 1073741824.0;
	p->offload_bytes = b < weight_bytes_per_gpu ? b : weight_bytes_per_gpu;
	return p->offload_bytes;
}

void perf_ideal(struct perf *p)
{
	p->eff = (struct hw_efficiency){ .bandwidth = 1, .attention_bandwidth = 1, .compute_max = 1,
					 .compute_half_tokens = 0, .attention_compute = 1,
					 .attention_half_seqs = 0, .moe_efficiency = 1,
					 .low_precision_compute = 1 };
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

/* What low-precision matmuls (a share of a group's time at peak) cost the
 * group's throughput when they reach lp of the 16-bit efficiency. */
static double low_factor(double share, double lp)
{
	assert(lp > 0);
	return 1 / (1 - share + share / lp);
}

/* One transfer of bytes between GPUs over the profile's interconnect. */
static double link_s(const struct perf *p, double bytes)
{
	return bytes / (p->hw->ic_bandwidth_gb_s * 1e9) + p->hw->ic_latency_us * 1e-6;
}

/* Achieved fraction of peak for a matmul of m rows (tokens). */
static double matmul_eff(const struct perf *p, double m)
{
	return p->eff.compute_max * m / (m + p->eff.compute_half_tokens);
}

/* The roofline of one operator: max(FLOPs / achievable FLOP/s, bytes /
 * achievable bandwidth). */
static void roofline(struct perf_op *op, const char *name, double flops, double peak,
		     double ceff, double bytes, double bw, double beff)
{
	double tc = flops > 0 ? flops / (peak * ceff) : 0;
	double tm = bytes > 0 ? bytes / (bw * beff) : 0;
	*op = (struct perf_op){ name, flops, bytes, tc > tm ? tc : tm, peak, bw, tc > tm };
}

/* The operator rows of one microbatch, 1/m of the step's batch (m = 1:
 * the whole step), through every layer. */
static double ops_one(const struct perf *p, const struct perf_step *s, double m, struct perf_op *ops)
{
	static const char *const names[PERF_N_OPS] = {
		"dense matmuls", "MoE experts", "LM head", "prefill attention",
		"decode attention", "all-reduce", "weight offload", "step overhead",
		"pipeline bubble"
	};
	for (int i = 0; i < PERF_N_OPS; i++)
		ops[i] = (struct perf_op){ .name = names[i] };
	if (s->tokens <= 0)
		return 0;
	double T = (double)s->tokens / m, sampled = (double)s->sampled / m;
	double beff = p->eff.bandwidth, lp = p->eff.low_precision_compute;
	roofline(&ops[PERF_DENSE], names[PERF_DENSE], p->dense_flops_per_token * T,
		 p->peak_dense * low_factor(p->dense_low, lp),
		 matmul_eff(p, T), p->dense_bytes, p->bw, beff);
	if (sampled > 0)
		roofline(&ops[PERF_LM_HEAD], names[PERF_LM_HEAD], p->lm_head_flops_per_token * sampled,
			 p->peak_lm_head * low_factor(p->lm_head_low, lp), matmul_eff(p, sampled),
			 p->lm_head_bytes, p->bw, beff);
	if (p->n_moe_layers > 0) {
		double E = p->n_experts, k = p->experts_per_token;
		double touched = E * (1 - pow(1 - k / E, T));
		double f = p->eff.moe_efficiency;
		assert(f > 0);
		roofline(&ops[PERF_EXPERTS], names[PERF_EXPERTS],
			 p->n_moe_layers * p->expert_flops_per_token * T * k,
			 p->peak_expert * low_factor(p->expert_low, lp),
			 f * matmul_eff(p, T * k / touched), p->n_moe_layers * touched * p->expert_bytes,
			 p->bw, f * beff);
	}
	double pairs = (p->full_layers * s->pre_pairs_full + p->sliding_layers * s->pre_pairs_win) / m;
	double pre_kv = (p->full_layers * s->pre_ctx_full + p->sliding_layers * s->pre_ctx_win) / m;
	roofline(&ops[PERF_ATTN_PREFILL], names[PERF_ATTN_PREFILL], pairs * p->attn_flops_per_pair,
		 p->peak_attn, p->eff.attention_compute, pre_kv * p->kv_bytes_per_token_layer, p->bw, beff);
	double dec_kv = (p->full_layers * s->dec_ctx_full + p->sliding_layers * s->dec_ctx_win) / m;
	if (s->dec_seqs > 0) {
		/* Paged decode attention runs one thread block per (sequence,
		 * KV head): few sequences leave SMs idle, and the bandwidth
		 * reached rises as S / (S + half). Below `half` sequences
		 * flash-decoding splits each context across blocks instead, so
		 * a small batch reads its KV at half of attention_bandwidth,
		 * not less: a lone long-context stream is not starved (C6). */
		double h = p->eff.attention_half_seqs;
		double S = fmax((double)s->dec_seqs / m, h);
		roofline(&ops[PERF_ATTN_DECODE], names[PERF_ATTN_DECODE],
			 dec_kv * p->attn_flops_per_pair, p->peak_attn, p->eff.attention_compute,
			 dec_kv * p->kv_bytes_per_token_layer, p->bw,
			 p->eff.attention_bandwidth * (S > 0 ? S / (S + h) : 1));
	}
	if (p->tp > 1) {
		double t = p->tp;
		double bytes = T * p->hidden_bytes_per_token;
		/* Ring all-reduce: 2(t-1) hops, each moving 1/t of the data. */
		double one = 2 * (t - 1) * link_s(p, bytes / t);
		ops[PERF_ALLREDUCE].bytes = 2 * (double)p->n_layers * bytes;
		ops[PERF_ALLREDUCE].time_s = 2 * (double)p->n_layers * one;
		ops[PERF_ALLREDUCE].peak_bytes_s = p->hw->ic_bandwidth_gb_s * 1e9;
	}
	if (p->offload_bytes > 0) {
		/* The offloaded weights cross the host link each forward pass; the
		 * rest of the roofline above already counts them as device reads,
		 * which is the smaller cost. */
		double link = p->hw->host_bandwidth_gb_s * 1e9;
		ops[PERF_OFFLOAD].bytes = p->offload_bytes;
		ops[PERF_OFFLOAD].time_s = p->offload_bytes / link;
		ops[PERF_OFFLOAD].peak_bytes_s = link;
	}
	double total = 0;
	for (int i = 0; i < PERF_N_OPS; i++)
		total += ops[i].time_s;
	const struct perf_op *dense = &ops[PERF_DENSE];
	ops[PERF_OVERHEAD].time_s =
		p->overhead ? overhead_step_s(p->overhead, T, (double)s->seqs / m, total,
					      dense->compute_bound ? dense->time_s / T : 0, NULL) :
		(p->eff.step_overhead_us + p->eff.step_overhead_per_seq_us * (double)s->seqs / m) * 1e-6;
	return total + ops[PERF_OVERHEAD].time_s;
}

/* The operator groups that scale with the layers a stage holds. */
static bool per_layer(int op)
{
	return op == PERF_DENSE || op == PERF_EXPERTS || op == PERF_ATTN_PREFILL ||
	       op == PERF_ATTN_DECODE || op == PERF_ALLREDUCE;
}

double perf_step_ops(const struct perf *p, const struct perf_step *s, struct perf_op *ops)
{
	if (p->pp <= 1 || s->tokens <= 0)
		return ops_one(p, s, 1, ops);
	/* vLLM keeps up to pp microbatches in flight: the running sequences,
	 * split m ways. Each of the pp stages holds stage_layers layers and
	 * its own share of offloaded weights; the first pp-1 stages send the
	 * microbatch's hidden states on, the last runs the LM head and the
	 * step's CPU work (scheduling, sampling). */
	double P = p->pp, m = fmin(P, (double)s->seqs);
	ops_one(p, s, m, ops);
	double frac = p->stage_layers / (double)p->n_layers;
	double work = ops[PERF_OFFLOAD].time_s;
	for (int i = 0; i < PERF_N_OPS; i++)
		if (per_layer(i))
			work += frac * ops[i].time_s;
	double hop_bytes = (double)s->tokens / m * p->hidden_bytes_per_token;
	double hop = link_s(p, hop_bytes);
	double last = work + ops[PERF_LM_HEAD].time_s + ops[PERF_OVERHEAD].time_s;
	double trip = (P - 1) * (work + hop) + last;          /* one microbatch, first to last stage */
	double queued = m * fmax(work + hop, last);           /* m microbatches through the slowest */
	double step = fmax(trip, queued);
	/* Rows: one microbatch's trip, stage by stage; the rest is the pipeline's. */
	double rows = 0;
	for (int i = 0; i < PERF_N_OPS; i++) {
		if (per_layer(i))
			ops[i].time_s *= frac * P;
		else if (i == PERF_OFFLOAD)
			ops[i].time_s *= P;
		rows += ops[i].time_s;
	}
	ops[PERF_PIPELINE].time_s = step - rows;
	ops[PERF_PIPELINE].bytes = (P - 1) * hop_bytes;
	return step;
}

double perf_step_time(const struct perf *p, const struct perf_step *s, struct perf_breakdown *b)
{
	struct perf_op ops[PERF_N_OPS];
	double total = perf_step_ops(p, s, ops);
	if (b)
		*b = (struct perf_breakdown){
			.dense = ops[PERF_DENSE].time_s,
			.experts = ops[PERF_EXPERTS].time_s,
			.lm_head = ops[PERF_LM_HEAD].time_s,
			.attn_prefill = ops[PERF_ATTN_PREFILL].time_s,
			.attn_decode = ops[PERF_ATTN_DECODE].time_s,
			.allreduce = ops[PERF_ALLREDUCE].time_s,
			.offload = ops[PERF_OFFLOAD].time_s,
			.overhead = ops[PERF_OVERHEAD].time_s,
			.pipeline = ops[PERF_PIPELINE].time_s,
			.total = total,
		};
	return total;
}
