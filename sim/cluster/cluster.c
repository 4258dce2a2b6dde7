/*
 * cluster: replicas behind a router, on the run's event queue: routing,
 * the replicas' steps, the P/D hand-off of a prefill's KV, create and
 * destroy (what it reports: clusterview.c; its state: cluster_int.h).
 *
 * vLLM's timing (drain_first): EngineCore drains its whole input queue
 * before it schedules, so a request reaching an idle replica kicks it
 * once every request of the same instant is in; servesim 1's timing
 * starts the step at once.
 */
#include "cluster.h"
#include "cluster_int.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "reqq.h"
#include "rngstream.h"
#include "engine_int.h"
#include "kvshard.h"
#include "simassert.h"
#include "startup.h"
#include "xalloc.h"

enum {
	EV_ENQUEUE = CLUSTER_EV_FIRST, /* request arg reaches its replica (after the API path) */
	EV_STEP_END,                   /* replica arg's current step ends */
	EV_KICK,                       /* idle replica arg looks at what reached it */
	EV_KV_SENT,                    /* request arg's KV has been read: its prefill blocks go */
};

static int route(struct cluster *c, const struct request *rq, int base, int n, size_t *rr);

#define KV_DONE 0x80000000u

/* EV_KV_SENT for request idx at t: its record is read then. */
static void push_kv_sent(struct cluster *c, int64_t t, size_t idx)
{
	xgrow_zeroed(&c->kv_sent_left, &c->cap_kv_sent, idx + 1, sizeof *c->kv_sent_left);
	c->kv_sent_left[idx]++;
	evq_push(c->s.q, t, EV_KV_SENT, (int64_t)idx);
}
static void wake(struct cluster *c, int i, int64_t now);

/* Request idx's prefill replica frees the blocks it held for the pull;
 * an idle replica looks again at what waited for them. */
static void release_prefill_kv(struct cluster *c, size_t idx, int p, int64_t now)
{
	struct replica *rp = &c->rep[p];
	if (idx < c->cap_held && c->held[idx]) {
		c->held[idx] = 0;
		reqq_remove(&c->holds[p], idx);
	}
	rp->cls->release_kv(rp->eng, idx);
	wake(c, p, now);
}

/* Prefill replica p, about to step at now, frees the blocks of every
 * request handed off at least the abort timeout ago and still unread
 * (NixlConnectorWorker.get_finished: "Releasing expired KV blocks"). */
static void expire_holds(struct cluster *c, int p, int64_t now)
{
	struct reqq *q = &c->holds[p];
	while (q->len && c->handoff_ns[reqq_front(q)] + c->abort_timeout_ns <= now) {
		size_t idx = reqq_front(q);
		reqq_pop_front(q);
		c->held[idx] = 0;
		c->kv.expired++;
		c->rep[p].cls->release_kv(c->rep[p].eng, idx);
	}
}

/* A prefill replica's token: the client does not see it yet. */
static void prefill_token(void *ctx, size_t idx, int64_t t)
{
	(void)ctx;
	(void)idx;
	(void)t;
}

/* A prefill replica finished request idx at t: hand it to a decode
 * replica (or, when it wanted one token or failed, it is done). */
static void prefill_done(void *ctx, size_t idx, int64_t t)
{
	struct cluster *c = ctx;
	struct request *r = &c->s.reqs->v[idx];
	r->output_len = c->out_len[idx];
	if (r->state == REQ_FAILED || r->output_len == 1) {
		/* Nothing to pull: the blocks go at once (EV_KV_SENT, so that the
		 * engine is not re-entered from its own end_step). */
		push_kv_sent(c, t, idx);
	}
	if (r->state == REQ_FAILED) {
		c->s.hooks.on_done(c->s.hooks.ctx, idx, t);
		return;
	}
	if (r->output_len == 1) {
		r->chunk = 1;
		c->s.hooks.on_token(c->s.hooks.ctx, idx, t);
		c->s.hooks.on_done(c->s.hooks.ctx, idx, t);
		return;
	}
	int p = r->replica;
	c->rep[p].outstanding--;
	int d = route(c, r, c->n_prefill, c->n - c->n_prefill, &c->rr_decode);
	r->prefill_replica = p;
	r->replica = d;
	c->rep[d].outstanding++;
	c->rep[d].routed++;
	/* The decode side starts from the prompt's KV, without the prefill
	 * side's token (vLLM's proxy drops it): it computes the prompt's last
	 * token again and samples the first token itself (vllmpark.c). */
	r->state = REQ_PENDING;
	r->num_computed = 0;
	r->generated = 0;
	r->pending = 0;
	r->chunk = 0;
	r->n_hashed = 0;
	r->remote_kv = 1;
	xgrow(&c->handoff_ns, &c->cap_handoff, idx + 1, sizeof *c->handoff_ns);
	c->handoff_ns[idx] = t;
	xgrow_zeroed(&c->held, &c->cap_held, idx + 1, sizeof *c->held);
	c->held[idx] = 1;
	reqq_push_back(&c->holds[p], idx);
	evq_push(c->s.q, t, EV_ENQUEUE, (int64_t)idx);
}

/* A decode replica has blocks for request idx at now: pull its prompt's
 * KV from its prefill replica. Returns when it lands. */
static int64_t kv_pull(void *ctx, size_t idx, int64_t now)
{
	struct cluster *c = ctx;
	const struct request *r = &c->s.reqs->v[idx];
	int p = r->prefill_replica, d = r->replica - c->n_prefill;
	double bytes = c->kv_bytes_per_token * (double)r->prompt_len;
	int64_t ser = llround(bytes / c->link_bytes_per_s * 1e9);
	int64_t start = now;
	if (c->egress_free[p] > start)
		start = c->egress_free[p];
	if (c->ingress_free[d] > start)
		start = c->ingress_free[d];
	c->egress_free[p] = c->ingress_free[d] = start + ser;
	int64_t ready = start + ser + llround(c->link_latency_s * 1e9);
	c->kv.transfers++;
	c->kv.bytes += bytes;
	c->kv.transfer_s += (double)(ready - now) / 1e9;
	c->kv.link_wait_s += (double)(start - now) / 1e9;
	c->kv.block_wait_s += (double)(now - c->handoff_ns[idx]) / 1e9;
	/* The decode side has read the blocks when they land; the prefill
	 * side frees them then (NixlConnector: get_finished's done sends),
	 * or at the abort timeout if that comes first. A pull that starts
	 * past it reads blocks the prefill side has given up (freed now, if
	 * its replica has not stepped since). */
	int64_t deadline = c->handoff_ns[idx] + c->abort_timeout_ns;
	c->kv.hold_s += (double)((ready < deadline ? ready : deadline) - c->handoff_ns[idx]) / 1e9;
	if (now >= deadline && c->held[idx]) {
		c->kv.expired++;
		push_kv_sent(c, now, idx);
	} else {
		push_kv_sent(c, ready, idx);
	}
	return ready;
}

/* The replica's gauges' waiting, by the class's own call where it has one. */
static int64_t replica_waiting(const struct replica *r)
{
	if (r->cls->waiting)
		return r->cls->waiting(r->eng);
	struct engine_gauges g;
	r->cls->gauges(r->eng, &g);
	return g.waiting;
}

/* Replica i starts its next step at now, if it has one. With run_on, a
 * step that ends before every queued event is not queued: its end is
 * returned for the caller to handle at once (what pushing it and popping
 * it next would do, without the queue's work: a lone request's decode
 * steps between arrivals, most steps of a low-rate run). Otherwise the
 * end is queued (or there is no step) and -1 returned. */
static int64_t start_step(struct cluster *c, int i, int64_t now, bool run_on)
{
	struct replica *r = &c->rep[i];
	if (i < c->n_prefill)
		expire_holds(c, i, now);
	int64_t d = r->cls->start_step(r->eng, now);
	r->busy = d >= 0;
	if (d > EVQ_HORIZON_NS - now) {   /* the run stops: run_simulate says why */
		c->past_horizon_ns = now;
		c->past_horizon_step_ns = d;
		return -1;
	}
	if (d < 0)
		return -1;
	if (c->n > 1) {
		int64_t w = replica_waiting(r);
		if (w > r->peak_waiting)
			r->peak_waiting = w;
	}
	c->last_stepped = i;
	c->s.on_step(c->s.hooks.ctx, i, now, d);
	/* Strictly before: a queued event at the same time has the lower
	 * seq and goes first. */
	if (run_on && now + d < evq_next_time(c->s.q))
		return now + d;
	evq_push(c->s.q, now + d, EV_STEP_END, i);
	return -1;
}

/* Picks among replicas [base, base + n). */
static int route(struct cluster *c, const struct request *rq, int base, int n, size_t *rr)
{
	if (n == 1)
		return base;
	for (int i = base; i < base + n; i++) {
		struct engine_gauges gg;
		c->rep[i].cls->gauges(c->rep[i].eng, &gg);
		c->outstanding[i] = c->rep[i].outstanding;
		c->waiting[i] = gg.waiting;
		c->kv_usage[i] = gg.kv_usage;
		c->prefix_hit[i] = c->wants_prefix && c->rep[i].cls->prefix_hit_tokens ?
					   c->rep[i].cls->prefix_hit_tokens(c->rep[i].eng, rq) :
					   0;
	}
	struct router_view v = {
		.n = (size_t)n, .outstanding = c->outstanding + base, .waiting = c->waiting + base,
		.kv_usage = c->kv_usage + base, .prefix_hit = c->prefix_hit + base,
		.prompt_len = rq->prompt_len, .weights = c->s.cfg->weights, .rng = c->rng,
		.rr_next = rr,
	};
	size_t i = c->router->pick(&v);
	SIM_ASSERT(i < (size_t)n, evq_now(c->s.q), SIM_NO_REQ);
	return base + (int)i;
}

/* Replica i, idle, looks at its queue: at once, or (vLLM's timing) once
 * every event of this instant is in. */
static void wake(struct cluster *c, int i, int64_t now)
{
	struct replica *rp = &c->rep[i];
	if (rp->busy || rp->kick_pending)
		return;
	if (rp->drain_first) {
		rp->kick_pending = true;
		evq_push(c->s.q, now, EV_KICK, i);
	} else {
		start_step(c, i, now, false);
	}
}

void cluster_send(struct cluster *c, size_t idx, int64_t now)
{
	struct request *r = &c->s.reqs->v[idx];
	int i = route(c, r, 0, c->n_prefill ? c->n_prefill : c->n, &c->rr_next);
	struct replica *rp = &c->rep[i];
	r->replica = i;
	r->prefill_replica = -1;
	if (c->n_prefill) {
		/* The prefill side runs it as max_tokens = 1. */
		xgrow(&c->out_len, &c->cap_out_len, idx + 1, sizeof *c->out_len);
		c->out_len[idx] = r->output_len;
		r->output_len = 1;
	}
	rp->outstanding++;
	rp->routed++;
	int64_t api = rp->cls->request_path_ns ? rp->cls->request_path_ns(rp->eng, r, now) : rp->overhead_ns;
	evq_push(c->s.q, now + api, EV_ENQUEUE, (int64_t)idx);
}

bool cluster_done(struct cluster *c, size_t idx)
{
	const struct request *r = &c->s.reqs->v[idx];
	struct replica *rp = &c->rep[r->replica];
	rp->outstanding--;
	SIM_ASSERT(rp->outstanding >= 0, evq_now(c->s.q), idx);
	/* Failed on the decode side before its pull (a pool too small for it):
	 * nobody will read its prefill blocks, so they go now. Released
	 * already: a no-op. */
	if (c->n_prefill && r->prefill_replica >= 0 && r->state == REQ_FAILED)
		push_kv_sent(c, r->finish_ns, idx);
	if (idx >= c->cap_kv_sent || !c->kv_sent_left[idx])
		return false;
	c->kv_sent_left[idx] |= KV_DONE;
	return true;
}

int64_t cluster_event(struct cluster *c, const struct event *ev, int64_t *step_ns)
{
	switch (ev->kind) {
	case EV_ENQUEUE: {
		struct request *r = &c->s.reqs->v[ev->arg];
		int i = r->replica;
		struct replica *rp = &c->rep[i];
		int64_t enq = r->enqueue_ns;
		bool handoff = r->remote_kv;
		rp->cls->submit(rp->eng, (size_t)ev->arg, ev->time_ns);
		if (handoff)
			r->enqueue_ns = enq;   /* it reached the cluster then */
		wake(c, i, ev->time_ns);
		break;
	}
	case EV_KV_SENT: {
		const struct request *r = &c->s.reqs->v[ev->arg];
		int p = r->prefill_replica >= 0 ? r->prefill_replica : r->replica;
		release_prefill_kv(c, (size_t)ev->arg, p, ev->time_ns);
		uint32_t *left = &c->kv_sent_left[ev->arg];
		if (--*left == KV_DONE) {   /* the last one, of a done request */
			*left = 0;
			if (c->s.on_free)
				c->s.on_free(c->s.hooks.ctx, (size_t)ev->arg);
		}
		break;
	}
	case EV_KICK:
		c->rep[ev->arg].kick_pending = false;
		if (!c->rep[ev->arg].busy)
			start_step(c, (int)ev->arg, ev->time_ns, false);
		break;
	case EV_STEP_END: {
		int i = (int)ev->arg;
		int64_t t = ev->time_ns;
		for (;;) {
			c->rep[i].cls->end_step(c->rep[i].eng, t);
			if ((t = start_step(c, i, t, true)) < 0)
				break;
			evq_advance(c->s.q, t);
		}
		break;
	}
	default:
		assert(!"not a cluster event");
	}
	*step_ns = c->past_horizon_step_ns;
	return c->past_horizon_ns;
}

/* The pools and the link of a disaggregated cluster. */
static int init_disagg(struct cluster *c, struct err *e)
{
	const struct cluster_config *cc = c->s.cfg;
	for (int p = 0; p < N_POOLS; p++) {
		const struct cluster_pool *pl = &c->s.pools[p];
		c->pool_cfg[p] = *pl->engine;
		if (pl->engine->cls->family != ENGINE_FAMILY_VLLM)
			return err_set(e, "%s: [cluster] prefill_replicas: disaggregation needs engine kind vllm (its KV connectors), got %s",
				       cc->disagg_at, pl->engine->cls->name);
		if (!pl->hardware)
			c->pool_hw[p] = *c->s.hw;
		else if (hw_load_named(&c->pool_hw[p], pl->hardware, e))
			return err_prefix(e, "%s: [%s] hardware", c->s.path, p == POOL_PREFILL ? "prefill" : "decode");
	}
	c->n_prefill = (int)cc->prefill_replicas;
	c->link = kvlink_find(cc->kv_transfer);
	assert(c->link);
	const struct hw_profile *phw = &c->pool_hw[POOL_PREFILL];
	c->link_bytes_per_s = cc->kv_transfer_gbit_s > 0 ? cc->kv_transfer_gbit_s * 1e9 / 8 :
							    kvlink_bytes_per_s(c->link, phw);
	c->link_latency_s = (cc->kv_transfer_latency_us >= 0 ? cc->kv_transfer_latency_us : c->link->latency_us) * 1e-6;
	if (!(c->link_bytes_per_s > 0))
		return err_set(e, "%s: [cluster] kv_transfer: %s takes its bandwidth from the hardware profile %s, which has none; set kv_transfer_gbit_s",
			       cc->disagg_at, c->link->name, phw->id);
	/* What NixlConnector's handshake accepts between the pools: the same
	 * KV dtype (compute_nixl_compatibility_hash covers cache_dtype), a
	 * decode block size that is a multiple of the prefill's
	 * (TpKVTopology.block_size_ratio), tensor parallelisms one a multiple
	 * of the other (kvshard.h). Each decode rank reads its shard; the
	 * busier port of a rank pair sets the time. */
	const struct engine_config *pre = &c->pool_cfg[POOL_PREFILL], *dec = &c->pool_cfg[POOL_DECODE];
	int pre_tp = (int)pre->tensor_parallel_size, dec_tp = (int)dec->tensor_parallel_size;
	char why[256];
	if (pre->kv_cache_dtype != dec->kv_cache_dtype)
		return err_set(e, "%s: [decode] kv_cache_dtype: expected the prefill pool's (%s; NIXL's handshake refuses a mismatch), got %s",
			       cc->disagg_at, kv_dtypes[pre->kv_cache_dtype].name,
			       kv_dtypes[dec->kv_cache_dtype].name);
	if (dec->block_size % pre->block_size)
		return err_set(e, "%s: [decode] block_size: expected a multiple of the prefill pool's %lld (NIXL reads whole prefill blocks into a decode block), got %lld",
			       cc->disagg_at, (long long)pre->block_size, (long long)dec->block_size);
	if (kvshard_check(c->s.model, pre_tp, dec_tp, why, sizeof why))
		return err_set(e, "%s: [decode] tensor_parallel_size: %d against the prefill pool's %d: %s",
			       cc->disagg_at, dec_tp, pre_tp, why);
	c->kv_bytes_per_token = kvshard_bytes_per_token(
		c->s.model, kv_dtypes[pre->kv_cache_dtype].bytes_per_elem, pre_tp, dec_tp);
	c->abort_timeout_ns = llround(cc->kv_abort_request_timeout_s * 1e9);
	c->holds = xcalloc((size_t)c->n_prefill, sizeof *c->holds);
	c->egress_free = xcalloc((size_t)c->n_prefill, sizeof *c->egress_free);
	c->ingress_free = xcalloc((size_t)(c->n - c->n_prefill), sizeof *c->ingress_free);
	c->kv.link = c->link->name;
	c->kv.bytes_per_s = c->link_bytes_per_s;
	c->kv.latency_s = c->link_latency_s;
	c->kv.abort_timeout_s = cc->kv_abort_request_timeout_s;
	return 0;
}

struct cluster *cluster_create(const struct cluster_setup *s, struct err *e)
{
	struct cluster *c = xcalloc(1, sizeof *c);
	const struct cluster_config *cc = s->cfg;
	c->s = *s;
	c->n = (int)cc->replicas;
	c->past_horizon_ns = -1;
	c->rep = xcalloc((size_t)c->n, sizeof *c->rep);
	c->router = &router_classes[cc->router];
	c->wants_prefix = c->router->reads_prefix &&
			  (cc->router != router_weighted_index() || cc->weights[SCORER_PREFIX] > 0);
	c->outstanding = xcalloc((size_t)c->n, sizeof *c->outstanding);
	c->waiting = xcalloc((size_t)c->n, sizeof *c->waiting);
	c->prefix_hit = xcalloc((size_t)c->n, sizeof *c->prefix_hit);
	c->kv_usage = xcalloc((size_t)c->n, sizeof *c->kv_usage);
	if (c->n > 1)
		c->rng = rng_stream("router", s->seed);
	if (clustercfg_disaggregated(cc) && init_disagg(c, e)) {
		cluster_destroy(c);
		return NULL;
	}
	for (int i = 0; i < c->n; i++) {
		struct replica *rp = &c->rep[i];
		struct engine_setup es = {
			.cfg = s->engine, .path = s->path, .weights_at = s->weights_at,
			.seed = s->seed, .model = s->model, .hw = s->hw, .cpu_hw = s->cpu_hw,
			.weights = s->weights,
			.reqs = s->reqs, .hooks = s->hooks,
		};
		if (i < c->n_prefill) {
			es.hooks = (struct engine_hooks){ c, prefill_token, prefill_done, NULL, NULL, NULL, NULL };
			es.hold_finished_kv = true;
		} else if (c->n_prefill) {
			es.hooks.kv_ctx = c;
			es.hooks.kv_pull = kv_pull;
		}
		if (c->n_prefill) {
			int p = i < c->n_prefill ? POOL_PREFILL : POOL_DECODE;
			es.cfg = &c->pool_cfg[p];
			es.hw = &c->pool_hw[p];
		}
		rp->cls = es.cfg->cls;
		rp->eng = rp->cls->create(&es, e);
		struct engine_stats st;
		if (rp->eng)
			rp->cls->stats(rp->eng, &st);
		/* What the real engine refuses at start-up (startup.h), per
		 * replica: a pool may have its own settings and device. */
		if (!rp->eng || startup_check(&es, &st, e)) {
			cluster_destroy(c);
			return NULL;
		}
		rp->drain_first = st.timing;
		rp->overhead_ns = (int64_t)llround(es.hw->eff.request_overhead_ms * 1e6);
	}
	return c;
}

void cluster_destroy(struct cluster *c)
{
	if (!c)
		return;
	for (int i = 0; i < c->n; i++)
		if (c->rep[i].eng)
			c->rep[i].cls->destroy(c->rep[i].eng);
	free(c->rep);
	free(c->outstanding);
	free(c->waiting);
	free(c->prefix_hit);
	free(c->kv_usage);
	free(c->out_len);
	free(c->handoff_ns);
	free(c->kv_sent_left);
	free(c->held);
	for (int p = 0; c->holds && p < c->n_prefill; p++)
		reqq_free(&c->holds[p]);
	free(c->holds);
	free(c->egress_free);
	free(c->ingress_free);
	if (c->rng)
		gsl_rng_free(c->rng);
	free(c);
}

int64_t cluster_waiting(const struct cluster *c)
{
	if (c->n == 1)   /* (a lone engine: a tail call, no loop's frame) */
		return replica_waiting(&c->rep[0]);
	int64_t w = 0;
	for (int i = 0; i < c->n; i++)
		w += replica_waiting(&c->rep[i]);
	return w;
}
