/*
 * vllmstep: the duration of one vLLM step and where it goes: the step
 * model's time (sim/perf) plus CPU-tier loads and the drafter's passes,
 * the engine's step counters (CUDA-graph or eager, padding, peak KV use),
 * and each step's attribution to the decode tokens it produces (the ITL
 * parts) and to the prefills in it (the TTFT parts).
 *
 * Invariants: vllm_launch is called once per step that runs, when it
 * starts; it reads the batch and the requests' first-token state and
 * writes only g->st, g->step_tokens and, of the requests before their
 * first token, first_launch_ns and the TTFT parts.
 */
#include <math.h>
#include <string.h>

#include "evq.h"
#include "iround.h"
#include "vllm_int.h"

/* memcmp(a, b, sizeof *a) == 0 without the call (it was a call a step),
 * word by word: struct perf_step is 8-byte fields, no padding. */
static inline bool same_step_bytes(const struct perf_step *a, const struct perf_step *b)
{
	_Static_assert(sizeof *a % sizeof(uint64_t) == 0, "perf_step is whole words");
	uint64_t diff = 0;
	for (size_t i = 0; i < sizeof *a / sizeof(uint64_t); i++) {
		uint64_t x, y;
		memcpy(&x, (const char *)a + i * sizeof x, sizeof x);
		memcpy(&y, (const char *)b + i * sizeof y, sizeof y);
		diff |= x ^ y;
	}
	return diff == 0;
}

/* Attributes a step of s seconds: to the decode tokens it produces (what
 * their steps are made of) and to the prefills in it (their own share by
 * tokens, and the rest; pad_s of it is CUDA-graph padding). model_s and
 * *bd: the step model's time and breakdown of the whole step, which are
 * the decodes' own when the step is nothing but decodes (most steps: the
 * step model is not asked twice). */
static void account_step(struct engine *g, const struct batch *b, double s, double pad_s,
			 double model_s, const struct perf_breakdown *bd, int64_t now)
{
	const struct perf_step *step = &b->step;
	if (step->dec_seqs > 0) {
		struct perf_step dec;
		struct perf_breakdown d;
		perf_step_decodes_only(step, &dec);
		/* Equal bytes are equal inputs to a pure function: the same
		 * answer (a -0.0 against 0.0 only asks again). */
		double alone;
		const struct perf_breakdown *dp = bd;
		if (same_step_bytes(&dec, step)) {
			alone = model_s;
		} else {
			alone = perf_step_time(&g->perf, &dec, &d);
			dp = &d;
		}
		double n = (double)step->dec_seqs;
		g->st.itl_weights_s += n * (dp->dense + dp->experts + dp->lm_head + dp->allreduce + dp->offload);
		g->st.itl_kv_s += n * dp->attn_decode;
		/* The small kernels: per step work, not weights. */
		g->st.itl_overhead_s += n * (dp->overhead + dp->elementwise);
		g->st.itl_pipeline_s += n * dp->pipeline;
		g->st.itl_prefill_s += n * (s - alone);
		g->st.itl_tokens += step->dec_seqs;
	}
	double work = s - pad_s;
	for (size_t k = 0; k < b->len; k++) {
		struct request *r = req(g, b->idx[k]);
		if (r->first_token_ns >= 0)
			continue;
		if (r->first_launch_ns < 0)
			r->first_launch_ns = now;
		int64_t own = iround(work * 1e9 * (double)b->n[k] / (double)step->tokens);
		r->prefill_own_ns += own;
		r->prefill_shared_ns += iround(work * 1e9) - own;
		r->ttft_pad_ns += iround(pad_s * 1e9);
	}
}

/* The CUDA-graph padding of a step (seconds), for the TTFT parts: the
 * step's operator rows again, only for steps that pad and hold a request
 * before its first token (never a plain decode step). padded: the step's
 * overhead_padded (0 without timing). */
static double graph_pad_s(struct engine *g, const struct batch *b, int64_t padded)
{
	if (!g->timing || padded <= b->step.tokens)
		return 0;
	bool first = false;
	for (size_t k = 0; k < b->len && !first; k++)
		first = req(g, b->idx[k])->first_token_ns < 0;
	if (!first)
		return 0;
	struct perf_op ops[PERF_N_OPS];
	double total = perf_step_ops(&g->perf, &b->step, ops), parts[4];
	const struct perf_op *dense = &ops[PERF_DENSE];
	double tok = (double)b->step.tokens;
	overhead_step_s(&g->ovh, tok, (double)b->step.seqs, total - ops[PERF_OVERHEAD].time_s,
			dense->compute_bound ? dense->time_s / tok : 0, parts);
	return parts[2];
}

/* The drafter's passes of a speculative step (seconds; 0 without). MTP
 * is costed from the target's decode-only step. */
static double drafter_s(struct engine *g, const struct batch *b)
{
	if (!g->spec.method || b->draft.seqs == 0)
		return 0;
	double target = 0;
	if (g->spec.method->cost == SPEC_COST_MTP) {
		struct perf_step dec;
		perf_step_decodes_only(&b->step, &dec);
		target = perf_step_time(&g->perf, &dec, NULL);
	}
	double d = specdec_draft_s(&g->spec, &b->draft, target, g->setup.model->n_layers);
	g->st.spec_draft_s += d;
	return d;
}

int64_t vllm_launch(struct engine *g, const struct batch *b, int64_t now)
{
	const struct perf_step *step = &b->step;
	g->step_tokens = step->tokens;
	struct perf_breakdown bd;
	double model_s = perf_step_time(&g->perf, step, &bd);
	double s = model_s + b->extra_s + drafter_s(g, b);
	g->st.steps++;
	g->st.busy_s += s;
	engine_time_add(&g->st.time, &bd, b->extra_s, s);
	int64_t padded = 0;
	if (g->timing) {
		padded = overhead_padded(&g->ovh, step->tokens, step->seqs);
		g->st.graph_steps += padded > 0;
		g->st.eager_steps += padded == 0;
		g->st.padded_tokens += padded > 0 ? padded - step->tokens : 0;
	}
	account_step(g, b, s, graph_pad_s(g, b, padded), model_s, &bd, now);
	/* The peak usage is the usage at the fewest free blocks (vllm_stats):
	 * a compare a step, not a division. */
	int64_t free_now = kvpool_num_free(g->pool);
	if (free_now < g->min_free)
		g->min_free = free_now;
	return evq_duration_ns(s);   /* past the horizon: run_simulate stops */
}
