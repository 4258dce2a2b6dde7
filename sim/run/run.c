#include "run.h"

#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "activesec.h"
#include "cluster.h"
#include "evq.h"
#include "num.h"
#include "progress.h"
#include "timeline.h"
#include "workload.h"
#include "xalloc.h"

enum ev_kind {
	EV_WANT_SEND,    /* the workload wants to send request arg */
	EV_ARRIVAL,      /* the same, for a request of a lazy open loop
			  * (workload_next): the next one is made now */
	/* Kinds from CLUSTER_EV_FIRST on are the cluster's (the request
	 * reaching its replica, steps, kicks). */
};

struct run {
	struct run_result *res;
	struct evq *q;
	struct cluster *cl;
	struct workload *wl;
	int64_t in_flight;             /* sent and not done (client side) */
	size_t *client_queue;          /* waiting on max_concurrency, FIFO */
	size_t cq_head, cq_len, cq_cap;
	int64_t next_sample_ns, sample_every_ns;
	uint64_t arrival_seq;          /* the lazy open loop's next reserved seq */
	/* A lean run (run_simulate_lean): finished requests are recycled, and
	 * vLLM's max_concurrent_requests is counted as they come and go
	 * (activesec.h: memory by the longest request, not the run's span). */
	bool lean;
	struct activesec active;
	bool timeseries;               /* res->ts is kept */
	void (*on_record)(void *ctx, const struct request *r);
	void *record_ctx;
};

/* Request time t_ns as a whole second from the first send. */
static int64_t second_of(const struct run_result *res, int64_t t_ns)
{
	return (t_ns - res->token_origin_ns) / NS_PER_S;
}

/* The stage group a request also counts in; none when the run has one
 * stage (its metrics are the whole run's: run_stage_metrics). */
static struct group_metrics *group_of(struct run *rn, const struct request *r)
{
	struct run_result *res = rn->res;
	if (res->n_stages <= 1)
		return NULL;
	return r->stage >= 0 && r->stage < res->n_stages ? &res->stages[r->stage] : NULL;
}

struct group_metrics *run_stage_metrics(struct run_result *res, int stage)
{
	return res->n_stages <= 1 ? &res->all : &res->stages[stage];
}

/* n tokens emitted at t_ns: this second's count and the peak second. */
static void count_tokens(struct run_result *res, int64_t t_ns, int64_t n_tokens)
{
	/* Tokens of one step share a time: skip the division for them. */
	if (t_ns != res->last_token_ns) {
		int64_t sec = (t_ns - res->token_origin_ns) / NS_PER_S;
		res->last_token_ns = t_ns;
		if (sec > res->newest_second) {
			int64_t from = sec - RUN_TOKEN_WINDOW + 1;
			for (int64_t s = from > res->newest_second + 1 ? from : res->newest_second + 1;
			     s <= sec; s++)
				res->second_tokens[s % RUN_TOKEN_WINDOW] = 0;
			res->newest_second = sec;
		} else if (sec <= res->newest_second - RUN_TOKEN_WINDOW) {
			/* Later than the window reaches (an output queue over a
			 * minute long): counted in its oldest second. */
			sec = res->newest_second - RUN_TOKEN_WINDOW + 1;
		}
		res->last_second = sec;
	}
	int64_t *n = &res->second_tokens[res->last_second % RUN_TOKEN_WINDOW];
	*n += n_tokens;
	if (*n > res->peak_second_tokens)
		res->peak_second_tokens = *n;
}

/* Once per output token: the simulator's hottest function after the
 * scheduler, so the stage group is looked at only when there are stages. */
static void on_token(void *ctx, size_t idx, int64_t t)
{
	struct run *rn = ctx;
	struct run_result *res = rn->res;
	struct request *r = &res->reqs.v[idx];
	int32_t n = r->chunk;
	r->chunk = 0;
	if (n > 1)                           /* a chunk of a stream_interval > 1 */
		for (int32_t k = 1; k < n; k++)
			count_tokens(res, t, 1);
	if (r->first_token_ns >= 0) {
		int64_t gap = t - r->last_token_ns;
		double itl = (double)gap * 1e-9;
		if (gap > r->max_itl_ns)
			r->max_itl_ns = gap;
		loghist_add(&res->all.itl, itl);
		if (res->timeline)
			timeline_gap(res->timeline, t, itl);
		if (res->n_stages > 1 && r->stage >= 0 && r->stage < res->n_stages)
			loghist_add(&res->stages[r->stage].itl, itl);
		if (res->n_replicas) {
			loghist_add(&res->replicas[r->replica].itl, itl);
			if (res->replicas[r->replica].timeline)
				timeline_gap(res->replicas[r->replica].timeline, t, itl);
		}
	} else {
		r->first_token_ns = t;
	}
	r->last_token_ns = t;
	count_tokens(res, t, 1);
}

/* One step's tokens, all at t: on_token for each, in order, with the ITL
 * histogram's running sums and a run of equal gaps kept in registers
 * (the same additions in the same order: the same bits). A run with a
 * timeline, stages or replicas takes the token by token path. */
static void on_tokens(void *ctx, const size_t *idx, size_t n, int64_t t)
{
	struct run *rn = ctx;
	struct run_result *res = rn->res;
	if (res->timeline || res->n_stages > 1 || res->n_replicas || n == 0) {
		for (size_t k = 0; k < n; k++)
			on_token(ctx, idx[k], t);
		return;
	}
	struct loghist *h = &res->all.itl;
	if (!h->counts)
		loghist_alloc(h);
	double sum = h->sum, sumsq = h->sumsq, mn = h->min, mx = h->max;
	int64_t hn = h->n, tokens = 0;
	/* A run of equal gaps (most of a decode batch last emitted at the same
	 * step): its value, square and bucket are worked out once. */
	int64_t run_gap = -1;
	double itl = 0, itl_sq = 0;
	size_t run_bucket = 0;
	uint32_t run_len = 0;
	for (size_t k = 0; k < n; k++) {
		struct request *r = &res->reqs.v[idx[k]];
		tokens += r->chunk > 1 ? r->chunk : 1;
		r->chunk = 0;
		if (r->first_token_ns < 0) {
			r->first_token_ns = t;
			r->last_token_ns = t;
			continue;
		}
		int64_t gap = t - r->last_token_ns;
		r->last_token_ns = t;
		if (gap > r->max_itl_ns)
			r->max_itl_ns = gap;
		if (gap != run_gap) {
			if (run_len)
				h->counts[run_bucket] += run_len;
			run_gap = gap;
			run_len = 0;
			itl = (double)gap * 1e-9;
			itl_sq = itl * itl;
			run_bucket = loghist_bucket(itl);
			if (hn == 0 || itl < mn)
				mn = itl;
			if (hn == 0 || itl > mx)
				mx = itl;
		}
		run_len++;
		hn++;
		sum += itl;
		sumsq += itl_sq;
	}
	if (run_len)
		h->counts[run_bucket] += run_len;
	h->sum = sum;
	h->sumsq = sumsq;
	h->min = mn;
	h->max = mx;
	h->n = hn;
	count_tokens(res, t, tokens);
}

/* n tokens at t, each gap_ns after its request's last (a fast-forwarded
 * run of decodes): on_tokens's histogram and token count without the
 * requests' own fields (the engine keeps those). The same additions in
 * the same order as n calls of on_token: the same bits. */
static void on_tokens_steady(void *ctx, size_t n, int64_t t, int64_t gap)
{
	struct run *rn = ctx;
	struct run_result *res = rn->res;
	struct loghist *h = &res->all.itl;
	if (!h->counts)
		loghist_alloc(h);
	double itl = (double)gap * 1e-9, sum = h->sum, sumsq = h->sumsq;
	for (size_t k = 0; k < n; k++) {
		sum += itl;
		sumsq += itl * itl;
	}
	h->counts[loghist_bucket(itl)] += (uint32_t)n;
	if (h->n == 0 || itl < h->min)
		h->min = itl;
	if (h->n == 0 || itl > h->max)
		h->max = itl;
	h->n += (int64_t)n;
	h->sum = sum;
	h->sumsq = sumsq;
	count_tokens(res, t, (int64_t)n);
}

static void send(struct run *rn, size_t idx, int64_t now)
{
	struct request *r = &rn->res->reqs.v[idx];
	r->send_ns = now;
	rn->in_flight++;
	if (rn->in_flight > rn->res->max_concurrent)
		rn->res->max_concurrent = rn->in_flight;
	if (rn->lean)
		activesec_send(&rn->active, second_of(rn->res, now));
	cluster_send(rn->cl, idx, now);
}

static void record_done(struct run *rn, const struct request *r)
{
	const struct scenario *sc = &rn->res->sc;
	struct group_metrics *g[2] = { &rn->res->all, group_of(rn, r) };
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

/* A cluster's per-replica TTFT and output, for its replicas' lines. */
static void record_replica(struct run_result *res, const struct request *r)
{
	if (!res->n_replicas || r->state == REQ_FAILED)
		return;
	struct replica_result *rr = &res->replicas[r->replica];
	double ttft = (double)(r->first_token_ns - r->send_ns) / 1e9;
	rr->completed++;
	rr->output_tokens += r->output_len;
	samples_add(&rr->ttft, ttft);
	samples_add(&rr->e2el, (double)(r->finish_ns - r->send_ns) / 1e9);
	if (r->prefill_replica >= 0) {
		/* Disaggregated: its prompt and TTFT count on the prefill side. */
		rr = &res->replicas[r->prefill_replica];
		rr->completed++;
		samples_add(&rr->ttft, ttft);
	}
	rr->input_tokens += r->prompt_len;
}

/* At the end of a cluster run: each replica's engine and routed count. */
static void collect_replicas(struct run *rn)
{
	struct run_result *res = rn->res;
	for (int i = 0; i < res->n_replicas; i++) {
		struct replica_result *rr = &res->replicas[i];
		rr->role = cluster_replica_role(rn->cl, i);
		snprintf(rr->hardware, sizeof rr->hardware, "%s",
			 cluster_replica_hardware(rn->cl, i, &rr->tensor_parallel_size));
		rr->requests = cluster_replica_routed(rn->cl, i);
		rr->peak_waiting = cluster_replica_peak_waiting(rn->cl, i);
		cluster_replica_stats(rn->cl, i, &rr->engine);
	}
	cluster_kv_stats(rn->cl, &res->kv);
}

static void want_send(struct run *rn, size_t idx, int64_t now)
{
	int64_t mc = rn->res->sc.max_concurrency;
	if (mc > 0 && rn->in_flight >= mc) {
		/* A FIFO over one array: appended at cq_len, read at cq_head;
		 * what was read goes once it is half the array. */
		if (rn->cq_head && rn->cq_head * 2 >= rn->cq_len) {
			memmove(rn->client_queue, rn->client_queue + rn->cq_head,
				(rn->cq_len - rn->cq_head) * sizeof *rn->client_queue);
			rn->cq_len -= rn->cq_head;
			rn->cq_head = 0;
		}
		xgrow(&rn->client_queue, &rn->cq_cap, rn->cq_len + 1, sizeof *rn->client_queue);
		rn->client_queue[rn->cq_len++] = idx;
		return;
	}
	send(rn, idx, now);
}

static void on_done(void *ctx, size_t idx, int64_t t)
{
	struct run *rn = ctx;
	struct request *r = &rn->res->reqs.v[idx];
	bool held = cluster_done(rn->cl, idx);
	record_done(rn, r);
	record_replica(rn->res, r);
	if (r->state == REQ_FINISHED)
		ollama_means_add(&rn->res->ollama, r);
	if (rn->on_record)
		rn->on_record(rn->record_ctx, r);
	rn->in_flight--;
	if (rn->cq_head < rn->cq_len) {
		size_t next = rn->client_queue[rn->cq_head++];
		send(rn, next, t);
	}
	int64_t more = workload_on_done(rn->wl, &rn->res->reqs, idx, t);
	if (more >= 0) {
		int64_t when = rn->res->reqs.v[more].want_send_ns;
		evq_push(rn->q, when > t ? when : t, EV_WANT_SEND, more);
	}
	if (rn->lean) {
		r = &rn->res->reqs.v[idx];   /* the table may have moved */
		activesec_done(&rn->active, second_of(rn->res, r->send_ns), second_of(rn->res, r->finish_ns),
			       r->state == REQ_FINISHED, second_of(rn->res, evq_now(rn->q)));
		if (!held)
			reqtab_recycle(&rn->res->reqs, idx);
	}
}

/* A cluster replica's gauges as a time-series row. */
static struct ts_row replica_row(struct run *rn, int i, int64_t now, int64_t step_ns)
{
	struct engine_gauges g;
	cluster_replica_gauges(rn->cl, i, &g);
	return (struct ts_row){ (double)now / 1e9, g.running, g.waiting, g.kv_usage, g.step_tokens,
				(double)step_ns / 1e9 };
}

/* The cluster no longer reads request idx (a P/D prefill replica released
 * its KV after the request was done): a lean run reuses its record. */
static void on_free(void *ctx, size_t idx)
{
	struct run *rn = ctx;
	if (rn->lean)
		reqtab_recycle(&rn->res->reqs, idx);
}

static void sample(struct run *rn, int replica, int64_t now, int64_t step_ns)
{
	struct run_result *res = rn->res;
	struct engine_gauges gg;
	cluster_gauges(rn->cl, &gg);
	if (gg.waiting > res->peak_waiting)
		res->peak_waiting = gg.waiting;
	if (res->timeline && gg.step_tokens > 0)
		timeline_step(res->timeline, now, gg.step_tokens);
	bool per_replica = res->timeline && res->n_replicas;
	if (per_replica && gg.step_tokens > 0)   /* the replica that stepped: the last one */
		timeline_step(res->replicas[replica].timeline, now, gg.step_tokens);
	if (now < rn->next_sample_ns || !rn->timeseries)
		return;
	rn->next_sample_ns = now - now % rn->sample_every_ns + rn->sample_every_ns;
	xgrow(&res->ts, &res->cap_ts, res->n_ts + 1, sizeof *res->ts);
	res->ts[res->n_ts++] = (struct ts_row){ (double)now / 1e9, gg.running, gg.waiting, gg.kv_usage,
						 gg.step_tokens, (double)step_ns / 1e9 };
	for (int i = 0; per_replica && i < res->n_replicas; i++) {
		struct replica_result *rr = &res->replicas[i];
		xgrow(&rr->ts, &rr->cap_ts, rr->n_ts + 1, sizeof *rr->ts);
		rr->ts[rr->n_ts++] = replica_row(rn, i, now, step_ns);
	}
}

/* A replica started a step (the cluster's hook): a time-series sample. */
static void on_step(void *ctx, int replica, int64_t now, int64_t step_ns)
{
	sample(ctx, replica, now, step_ns);
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
static int64_t concurrent_per_second(const struct run_result *res)
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

static void init_groups(struct run_result *res, const int64_t *starts, int n)
{
	res->n_stages = n;
	res->stages = xcalloc((size_t)n, sizeof *res->stages);
	res->stage_starts_ns = xcalloc((size_t)n + 1, sizeof *res->stage_starts_ns);
	memcpy(res->stage_starts_ns, starts, ((size_t)n + 1) * sizeof *starts);
	for (int i = 0; i < n; i++)
		res->stages[i].start_ns = starts[i];
}

/* A lean run's metric groups: past RUN_EXACT_SAMPLES values, sketches. */
static void bound_group(struct group_metrics *g)
{
	struct samples *s[] = { &g->ttft, &g->tpot, &g->e2el, &g->queue, &g->prefill_wait };
	for (size_t i = 0; i < sizeof s / sizeof s[0]; i++)
		samples_bound(s[i], RUN_EXACT_SAMPLES);
}

/* A disaggregated cluster's pools as the cluster reads them (it sees no
 * scenario): sc with each pool's [prefill] or [decode] keys applied, into
 * ps[N_POOLS], which outlives cluster_create. */
static int cluster_pools(const struct scenario *sc, struct scenario *ps, struct cluster_setup *s,
			 struct err *e)
{
	for (int p = 0; p < N_POOLS; p++) {
		if (scenario_pool(sc, p, &ps[p], e))
			return -1;
		s->pools[p].engine = &ps[p].engine;
		s->pools[p].hardware = strcmp(ps[p].hardware, sc->hardware) ? ps[p].hardware : NULL;
	}
	return 0;
}

static int simulate(const struct scenario *sc, struct run_result *res, const struct run_opts *o,
		    struct err *e)
{
	memset(res, 0, sizeof *res);
	bool lean = o->lean;
	if (o->timeline)
		res->timeline = timeline_create();
	res->sc = *sc;
	res->last_token_ns = -1;
	if (model_load_named(&res->model, sc->model, e) ||
	    hw_load_named(&res->hw, sc->hardware, e))
		return err_prefix(e, "%s", sc->path);
	const char *wname = sc->weights[0] ? sc->weights : res->model.weights;
	res->weights = precision_find(wname);
	if (!res->weights) {
		char names[512];
		precision_names(names, sizeof names);
		return err_set(e, "%s: [run] weights: expected one of %s, got '%s'", sc->path, names, wname);
	}
	/* The CPU profile an engine runs the layers the device cannot hold on
	 * (llama.cpp's partial offload): read here, passed in. */
	struct hw_profile cpu_hw;
	if (sc->engine.cls->cpu_offload && hw_load_named(&cpu_hw, sc->engine.llama.cpu_hardware, e))
		return err_prefix(e, "%s: [engine] cpu_hardware", sc->engine.llama.cpu_hardware_at);

	struct run rn = { .res = res, .lean = lean, .timeseries = !lean || o->timeseries,
			  .on_record = o->on_record, .record_ctx = o->record_ctx };
	rn.wl = workload_open(&res->sc, &res->reqs, e);
	if (!rn.wl)
		return -1;
	int n_stages;
	const int64_t *starts = workload_stage_starts(rn.wl, &n_stages);
	init_groups(res, starts, n_stages);

	rn.q = evq_create();
	/* Fast-forward only where every token's metrics are the step's: no
	 * timeline, stages or replicas (which look at each token). */
	bool steady = !o->no_fast_forward && !res->timeline && res->n_stages <= 1 && sc->cluster.replicas <= 1;
	struct cluster_setup setup = {
		.cfg = &res->sc.cluster, .engine = &res->sc.engine, .path = res->sc.path,
		.weights_at = res->sc.weights_at, .seed = res->sc.seed,
		.model = &res->model, .hw = &res->hw, .weights = res->weights,
		.cpu_hw = res->sc.engine.cls->cpu_offload ? &cpu_hw : NULL,
		.reqs = &res->reqs, .q = rn.q,
		.hooks = { .ctx = &rn, .on_token = on_token, .on_done = on_done, .on_tokens = on_tokens,
			   .on_tokens_steady = steady ? on_tokens_steady : NULL },
		.on_step = on_step, .on_free = on_free,
	};
	struct scenario *pool_sc = NULL;
	if (clustercfg_disaggregated(&res->sc.cluster)) {
		pool_sc = xcalloc(N_POOLS, sizeof *pool_sc);
		if (cluster_pools(&res->sc, pool_sc, &setup, e)) {
			free(pool_sc);
			evq_destroy(rn.q);
			workload_destroy(rn.wl);
			return -1;
		}
	}
	rn.cl = cluster_create(&setup, e);
	free(pool_sc);
	if (!rn.cl) {
		evq_destroy(rn.q);
		workload_destroy(rn.wl);
		return -1;
	}
	if (cluster_size(rn.cl) > 1) {
		res->n_replicas = cluster_size(rn.cl);
		res->replicas = xcalloc((size_t)res->n_replicas, sizeof *res->replicas);
		for (int i = 0; i < res->n_replicas && res->timeline; i++)
			res->replicas[i].timeline = timeline_create();
	}
	if (rn.lean && !o->exact_percentiles) {
		bound_group(&res->all);
		for (int i = 0; i < res->n_stages; i++)
			bound_group(&res->stages[i]);
		for (int i = 0; i < res->n_replicas; i++) {
			samples_bound(&res->replicas[i].ttft, RUN_EXACT_SAMPLES);
			samples_bound(&res->replicas[i].e2el, RUN_EXACT_SAMPLES);
		}
	}
	/* vLLM's random dataset has a known largest request: when even that
	 * cannot fit max_model_len the scenario is wrong, not the requests. */
	struct engine_stats st0;
	cluster_replica_stats(rn.cl, 0, &st0);   /* startup_check: in cluster_create, per replica */
	if (!sc->trace[0] && sc->input.dist == LEN_UNIFORM && sc->output.dist == LEN_UNIFORM) {
		double r = sc->random_range_ratio;
		int64_t in = sc->random_prefix_len + (int64_t)ceil((double)sc->input.mean * (1 + r));
		int64_t out = (int64_t)ceil((double)sc->output.mean * (1 + r));
		int64_t turns_in = in + (sc->turns - 1) * (in - sc->random_prefix_len + out);
		if (turns_in + out > st0.max_model_len) {
			cluster_destroy(rn.cl);
			evq_destroy(rn.q);
			workload_destroy(rn.wl);
			return err_set(e, "%s: [workload] random_input_len: prompts of up to %lld tokens plus %lld output tokens exceed max_model_len %lld",
				       sc->input_len_at, (long long)turns_in, (long long)out,
				       (long long)st0.max_model_len);
		}
	}
	rn.sample_every_ns = (int64_t)llround(sc->timeseries_interval_s * 1e9);
	if (rn.sample_every_ns < 1)
		rn.sample_every_ns = 1;
	res->token_origin_ns = res->reqs.len ? INT64_MAX : 0;
	for (size_t i = 0; i < res->reqs.len; i++) {
		evq_push(rn.q, res->reqs.v[i].want_send_ns, EV_WANT_SEND, (int64_t)i);
		if (res->reqs.v[i].want_send_ns < res->token_origin_ns)
			res->token_origin_ns = res->reqs.v[i].want_send_ns;
	}
	/* A lazy open loop: each send is made when the one before is due,
	 * with the seq it would have had pushed here (send times never go
	 * back, so the first is the earliest). */
	int64_t lazy = workload_lazy_left(rn.wl);
	/* The requests to come, for the progress line: those made, those the
	 * lazy open loop will make, or the closed loop's num_prompts. */
	int64_t expected = (int64_t)res->reqs.len + lazy;
	if (!sc->trace[0] && (sc->users > 0 || sc->turns > 1))
		expected = sc->num_prompts;
	if (lazy > 0) {
		rn.arrival_seq = evq_reserve(rn.q, (uint64_t)lazy);
		int64_t first = workload_next(rn.wl, &res->reqs);
		res->token_origin_ns = res->reqs.v[first].want_send_ns;
		evq_push_seq(rn.q, res->reqs.v[first].want_send_ns, rn.arrival_seq++, EV_ARRIVAL, first);
	}

	struct event ev;
	int64_t past_horizon_ns = -1, past_horizon_step_ns = 0;
	uint32_t ticks = 0;
	while (past_horizon_ns < 0 && evq_pop(rn.q, &ev)) {
		if (o->progress && (++ticks & 4095) == 0)
			progress_run(o->progress, (double)ev.time_ns / 1e9,
				     res->all.completed + res->all.failed, expected);
		if (ev.kind == EV_ARRIVAL) {
			int64_t next = workload_next(rn.wl, &res->reqs);
			if (next >= 0)
				evq_push_seq(rn.q, res->reqs.v[next].want_send_ns, rn.arrival_seq++,
					     EV_ARRIVAL, next);
		}
		if (ev.kind == EV_WANT_SEND || ev.kind == EV_ARRIVAL)
			want_send(&rn, (size_t)ev.arg, ev.time_ns);
		else
			past_horizon_ns = cluster_event(rn.cl, &ev, &past_horizon_step_ns);
	}
	if (past_horizon_ns >= 0) {
		double step_s = (double)past_horizon_step_ns / 1e9;
		err_set(e, "%s: [run] hardware, model: a step at %.6g s takes %s%.6g s, past the simulator's horizon of %g s; expected a device profile (%s) fast enough for the model (%s)",
			sc->path, (double)past_horizon_ns / 1e9, past_horizon_step_ns > EVQ_HORIZON_NS ? "more than " : "",
			past_horizon_step_ns > EVQ_HORIZON_NS ? EVQ_HORIZON_S : step_s, EVQ_HORIZON_S,
			sc->hardware, sc->model);
		cluster_destroy(rn.cl);
		workload_destroy(rn.wl);
		evq_destroy(rn.q);
		free(rn.client_queue);
		activesec_free(&rn.active);
		return -1;
	}
	res->end_ns = evq_now(rn.q);
	res->n_requests = res->reqs.made;
	res->max_concurrent_per_second = rn.lean ? activesec_peak(&rn.active) : concurrent_per_second(res);
	activesec_free(&rn.active);
	cluster_stats(rn.cl, &res->engine);
	collect_replicas(&rn);
	/* Every request finished or failed: none is left behind. */
	struct engine_gauges gg;
	cluster_gauges(rn.cl, &gg);
	assert(gg.running == 0 && gg.waiting == 0 && rn.in_flight == 0);
	(void)gg;
	cluster_destroy(rn.cl);
	workload_destroy(rn.wl);
	evq_destroy(rn.q);
	free(rn.client_queue);
	if (rn.lean)
		reqtab_free(&res->reqs);   /* recycled records: none to report */
	return 0;
}

int run_simulate_opts(const struct scenario *sc, struct run_result *res, const struct run_opts *opts,
		      struct err *e)
{
	static const struct run_opts full = { 0 };
	return simulate(sc, res, opts ? opts : &full, e);
}

int run_simulate(const struct scenario *sc, struct run_result *res, struct err *e)
{
	return run_simulate_opts(sc, res, NULL, e);
}

int run_simulate_timeline(const struct scenario *sc, struct run_result *res, struct err *e)
{
	return run_simulate_opts(sc, res, &(struct run_opts){ .timeline = true }, e);
}

int run_simulate_lean(const struct scenario *sc, struct run_result *res, struct err *e)
{
	return run_simulate_opts(sc, res, &(struct run_opts){ .lean = true }, e);
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
