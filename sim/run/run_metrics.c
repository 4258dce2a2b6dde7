/*
 * run_metrics: a run's metric groups (the whole run's and each load
 * stage's, run_result.all / .stages), a done request's TTFT, TPOT, E2EL,
 * queue and TTFT parts into them as vllm bench serve counts them, vLLM's
 * max_concurrent_requests of a full run, and freeing a result.
 *
 * Invariants: a request counts in the whole run's group and, when the run
 * has more than one stage, in its stage's; a failed one only as failed.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "num.h"
#include "run_int.h"
#include "timeline.h"
#include "xalloc.h"

/* The stage group a request also counts in; none when the run has one
 * stage (its metrics are the whole run's: run_stage_metrics). */
static struct group_metrics *group_of(struct run_result *res, const struct request *r)
{
	if (res->n_stages <= 1)
		return NULL;
	return r->stage >= 0 && r->stage < res->n_stages ? &res->stages[r->stage] : NULL;
}

struct group_metrics *run_stage_metrics(struct run_result *res, int stage)
{
	return res->n_stages <= 1 ? &res->all : &res->stages[stage];
}

void run_record_done(struct run_result *res, const struct request *r)
{
	const struct scenario *sc = &res->sc;
	struct group_metrics *g[2] = { &res->all, group_of(res, r) };
	for (int i = 0; i < 2; i++) {
		struct group_metrics *m = g[i];
		if (!m)
			continue;
		if (r->finish_ns > m->last_done_ns)
			m->last_done_ns = r->finish_ns;
		if (r->state == REQ_FAILED) {
			m->failed++;
			continue;
		}
		double ttft = (double)(r->first_token_ns - r->send_ns) / 1e9;
		double e2el = (double)(r->finish_ns - r->send_ns) / 1e9;
		double tpot = r->output_len > 1 ? (e2el - ttft) / (r->output_len - 1) : 0;
		double queue = (double)(r->first_scheduled_ns - r->enqueue_ns) / 1e9;
		m->completed++;
		m->total_input += r->prompt_len;
		m->total_output += r->output_len;
		samples_add(&m->ttft, ttft);
		samples_add(&m->e2el, e2el);
		if (r->output_len > 1)
			samples_add(&m->tpot, tpot);
		samples_add(&m->queue, queue);
		m->preemptions += r->preemptions;
		m->cached_tokens += r->cached_tokens;
		double api = (double)(r->enqueue_ns - r->send_ns) / 1e9;
		double own = (double)r->prefill_own_ns / 1e9, shared = (double)r->prefill_shared_ns / 1e9;
		/* vLLM's timing: waiting in the batch queue (scheduled while the
		 * step before ran), CUDA-graph padding, the first token's output
		 * path; all 0 for servesim 1's timing and for other engines. */
		double batch = r->first_launch_ns >= 0 ?
			       (double)(r->first_launch_ns - r->first_scheduled_ns) / 1e9 : 0;
		double pad = (double)r->ttft_pad_ns / 1e9, out = (double)r->first_output_ns / 1e9;
		m->sum_ttft_overhead_s += api;
		m->sum_ttft_queue_s += queue;
		m->sum_ttft_own_s += own;
		m->sum_ttft_shared_s += shared;
		m->sum_ttft_batch_queue_s += batch;
		m->sum_ttft_graph_pad_s += pad;
		m->sum_ttft_output_s += out;
		m->sum_ttft_api_queue_s += (double)r->api_wait_ns / 1e9;
		double between = ttft - api - queue - batch - own - shared - pad - out;
		m->sum_ttft_between_s += between > 0 ? between : 0;   /* ns rounding */
		bool good = (!sc->slo_ttft_ms || ttft * 1e3 <= sc->slo_ttft_ms) &&
			    (!sc->slo_tpot_ms || tpot * 1e3 <= sc->slo_tpot_ms) &&
			    (!sc->slo_e2el_ms || e2el * 1e3 <= sc->slo_e2el_ms);
		m->good += good;
	}
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

/* vLLM's max_concurrent_requests: every successful request counts in each
 * whole second (from the first send) it was active in; the peak. A sweep
 * over the requests' first and past-last seconds, sorted: O(n log n) time
 * and O(n) memory in the requests, none in the simulated seconds. */
int64_t run_concurrent_per_second(const struct run_result *res)
{
	size_t n = 0;
	int64_t *in = xcalloc(res->reqs.len + 1, sizeof *in);
	int64_t *out = xcalloc(res->reqs.len + 1, sizeof *out);
	for (size_t i = 0; i < res->reqs.len; i++) {
		const struct request *r = &res->reqs.v[i];
		if (r->state != REQ_FINISHED)
			continue;
		in[n] = (r->send_ns - res->token_origin_ns) / NS_PER_S;
		out[n++] = (r->finish_ns - res->token_origin_ns) / NS_PER_S + 1;
	}
	qsort(in, n, sizeof *in, cmp_i64);
	qsort(out, n, sizeof *out, cmp_i64);
	/* At each second where something starts: started so far minus
	 * those whose past-last second is at or before it. */
	int64_t best = 0;
	for (size_t a = 0, b = 0; a < n; a++) {
		while (a + 1 < n && in[a + 1] == in[a])
			a++;
		while (b < n && out[b] <= in[a])
			b++;
		if ((int64_t)(a + 1 - b) > best)
			best = (int64_t)(a + 1 - b);
	}
	free(in);
	free(out);
	return best;
}

void run_init_groups(struct run_result *res, const int64_t *starts, int n)
{
	res->n_stages = n;
	res->stages = xcalloc((size_t)n, sizeof *res->stages);
	res->stage_starts_ns = xcalloc((size_t)n + 1, sizeof *res->stage_starts_ns);
	memcpy(res->stage_starts_ns, starts, ((size_t)n + 1) * sizeof *starts);
	for (int i = 0; i < n; i++)
		res->stages[i].start_ns = starts[i];
}

/* A lean run's metric groups: past RUN_EXACT_SAMPLES values, sketches. */
void run_bound_group(struct group_metrics *g)
{
	struct samples *s[] = { &g->ttft, &g->tpot, &g->e2el, &g->queue, &g->prefill_wait };
	for (size_t i = 0; i < sizeof s / sizeof s[0]; i++)
		samples_bound(s[i], RUN_EXACT_SAMPLES);
}

static void group_free(struct group_metrics *g)
{
	samples_free(&g->ttft);
	samples_free(&g->tpot);
	samples_free(&g->e2el);
	samples_free(&g->queue);
	samples_free(&g->prefill_wait);
	loghist_free(&g->itl);
}

void run_result_free(struct run_result *res)
{
	group_free(&res->all);
	for (int i = 0; i < res->n_stages; i++)
		group_free(&res->stages[i]);
	free(res->stages);
	free(res->stage_starts_ns);
	free(res->ts);
	for (int i = 0; i < res->n_replicas; i++) {
		samples_free(&res->replicas[i].ttft);
		samples_free(&res->replicas[i].e2el);
		loghist_free(&res->replicas[i].itl);
		timeline_destroy(res->replicas[i].timeline);
		free(res->replicas[i].ts);
	}
	free(res->replicas);
	timeline_destroy(res->timeline);
	reqtab_free(&res->reqs);
	memset(res, 0, sizeof *res);
}
