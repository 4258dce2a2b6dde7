/*
 * run: the event loop of one simulation (run.h): sets the run up (model,
 * hardware, workload, cluster), sends requests as the client does
 * (max_concurrency's FIFO), dispatches events until none is left, samples
 * the time series, recycles a lean run's requests, and hands the result
 * over. The token hooks, the metrics and the replicas' side are
 * run_tokens.c, run_metrics.c and run_replicas.c (run_int.h).
 *
 * Invariants: at the end every request finished or failed and none is in
 * flight; a lean run reuses a request's record once nothing reads it.
 */
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
#include "run_int.h"
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

/* Request time t_ns as a whole second from the first send. */
static int64_t second_of(const struct run_result *res, int64_t t_ns)
{
	return (t_ns - res->token_origin_ns) / NS_PER_S;
}

/* Request idx was sent at now: at the tail of the in-flight FIFO. */
static void sent_push(struct run *rn, size_t idx, int64_t now)
{
	if (rn->sent_tail - rn->sent_head == rn->cap_sent) {
		size_t cap = rn->cap_sent ? rn->cap_sent * 2 : 64;
		struct sent_entry *v = xcalloc(cap, sizeof *v);
		for (uint64_t s = rn->sent_head; s < rn->sent_tail; s++)
			v[s & (cap - 1)] = rn->sent[s & (rn->cap_sent - 1)];
		free(rn->sent);
		rn->sent = v;
		rn->cap_sent = cap;
	}
	rn->sent[rn->sent_tail & (rn->cap_sent - 1)] = (struct sent_entry){ now, false };
	if (idx >= rn->cap_pos) {
		size_t cap = rn->cap_pos ? rn->cap_pos : 64;
		while (cap <= idx)
			cap *= 2;
		rn->pos_of = xrealloc(rn->pos_of, cap * sizeof *rn->pos_of);
		rn->cap_pos = cap;
	}
	rn->pos_of[idx] = rn->sent_tail++;
}

/* Request idx is done: marked, and the done ones at the head leave.
 * Returns the earliest send still in flight, or INT64_MAX. */
static int64_t sent_done(struct run *rn, size_t idx)
{
	rn->sent[rn->pos_of[idx] & (rn->cap_sent - 1)].done = true;
	while (rn->sent_head < rn->sent_tail && rn->sent[rn->sent_head & (rn->cap_sent - 1)].done)
		rn->sent_head++;
	return rn->sent_head < rn->sent_tail ? rn->sent[rn->sent_head & (rn->cap_sent - 1)].send_ns : INT64_MAX;
}

static void send(struct run *rn, size_t idx, int64_t now)
{
	struct request *r = &rn->res->reqs.v[idx];
	if (rn->on_record)
		sent_push(rn, idx, now);
	r->send_ns = now;
	rn->in_flight++;
	if (rn->in_flight > rn->res->max_concurrent)
		rn->res->max_concurrent = rn->in_flight;
	if (rn->lean)
		activesec_send(&rn->active, second_of(rn->res, now));
	cluster_send(rn->cl, idx, now);
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
	run_record_done(rn->res, r);
	run_record_replica(rn->res, r);
	if (r->state == REQ_FINISHED)
		ollama_means_add(&rn->res->ollama, r);
	if (rn->on_record) {
		/* What is not done yet records at or after its send, and what is
		 * not sent yet at or after the clock. */
		int64_t first = sent_done(rn, idx), now = evq_now(rn->q);
		rn->on_record(rn->record_ctx, r, first < now ? first : now);
	}
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
	if (!res->timeline && (now < rn->next_sample_ns || !rn->timeseries)) {
		/* Only the peak reads the gauges (most steps of a lean run):
		 * the waiting count alone, not the KV usage's division. */
		int64_t w = cluster_waiting(rn->cl);
		if (w > res->peak_waiting)
			res->peak_waiting = w;
		return;
	}
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
	struct ts_row row = { (double)now / 1e9, gg.running, gg.waiting, gg.kv_usage, gg.step_tokens,
			      (double)step_ns / 1e9 };
	if (rn->on_sample) {
		rn->on_sample(rn->sample_ctx, &row);
	} else {
		xgrow(&res->ts, &res->cap_ts, res->n_ts + 1, sizeof *res->ts);
		res->ts[res->n_ts++] = row;
	}
	for (int i = 0; per_replica && i < res->n_replicas; i++) {
		struct replica_result *rr = &res->replicas[i];
		xgrow(&rr->ts, &rr->cap_ts, rr->n_ts + 1, sizeof *rr->ts);
		rr->ts[rr->n_ts++] = run_replica_row(rn->cl, i, now, step_ns);
	}
}

/* A replica started a step (the cluster's hook): a time-series sample. */
static void on_step(void *ctx, int replica, int64_t now, int64_t step_ns)
{
	sample(ctx, replica, now, step_ns);
}

static int simulate(const struct scenario *sc, struct run_result *res, const struct run_opts *o,
		    struct err *e)
{
	memset(res, 0, sizeof *res);
	bool lean = o->lean;
	if (o->timeline)
		res->timeline = o->timeline_totals ? timeline_create_totals() : timeline_create();
	if (res->timeline && o->timeline_totals) {
		res->timeline->on_fold = o->on_fold;
		res->timeline->fold_ctx = o->fold_ctx;
	}
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
			  .on_record = o->on_record, .record_ctx = o->record_ctx,
			  .on_sample = lean ? o->on_sample : NULL, .sample_ctx = o->sample_ctx };
	rn.wl = workload_open(&res->sc, &res->reqs, e);
	if (!rn.wl)
		return -1;
	int n_stages;
	const int64_t *starts = workload_stage_starts(rn.wl, &n_stages);
	run_init_groups(res, starts, n_stages);

	rn.q = evq_create();
	/* Fast-forward decode unless the reference is asked for. */
	bool steady = !o->no_fast_forward;
	struct cluster_setup setup = {
		.cfg = &res->sc.cluster, .engine = &res->sc.engine, .path = res->sc.path,
		.weights_at = res->sc.weights_at, .seed = res->sc.seed,
		.model = &res->model, .hw = &res->hw, .weights = res->weights,
		.cpu_hw = res->sc.engine.cls->cpu_offload ? &cpu_hw : NULL,
		.reqs = &res->reqs, .q = rn.q,
		.hooks = { .ctx = &rn, .on_token = run_on_token, .on_done = on_done, .on_tokens = run_on_tokens,
			   .on_tokens_steady = steady ? run_on_tokens_steady : NULL },
		.on_step = on_step, .on_free = on_free,
	};
	struct scenario *pool_sc = NULL;
	if (clustercfg_disaggregated(&res->sc.cluster)) {
		pool_sc = xcalloc(N_POOLS, sizeof *pool_sc);
		if (run_cluster_pools(&res->sc, pool_sc, &setup, e)) {
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
			res->replicas[i].timeline = o->timeline_totals ? timeline_create_totals() : timeline_create();
	}
	if (rn.lean && !o->exact_percentiles) {
		run_bound_group(&res->all);
		for (int i = 0; i < res->n_stages; i++)
			run_bound_group(&res->stages[i]);
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
		free(rn.sent);
		free(rn.pos_of);
		activesec_free(&rn.active);
		return -1;
	}
	res->end_ns = evq_now(rn.q);
	res->n_requests = res->reqs.made;
	res->max_concurrent_per_second = rn.lean ? activesec_peak(&rn.active) : run_concurrent_per_second(res);
	activesec_free(&rn.active);
	cluster_stats(rn.cl, &res->engine);
	run_collect_replicas(res, rn.cl);
	/* Every request finished or failed: none is left behind. */
	struct engine_gauges gg;
	cluster_gauges(rn.cl, &gg);
	assert(gg.running == 0 && gg.waiting == 0 && rn.in_flight == 0);
	(void)gg;
	cluster_destroy(rn.cl);
	workload_destroy(rn.wl);
	evq_destroy(rn.q);
	free(rn.client_queue);
	free(rn.sent);
	free(rn.pos_of);
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

