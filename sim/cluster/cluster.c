/*
 * cluster: replicas behind a router, on the run's event queue.
 *
 * vLLM's timing (drain_first): EngineCore drains its whole input queue
 * before it schedules, so a request reaching an idle replica kicks it
 * once every request of the same instant is in; servesim 1's timing
 * starts the step at once.
 */
#include "cluster.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "workload.h"
#include "xalloc.h"

enum {
	EV_ENQUEUE = CLUSTER_EV_FIRST, /* request arg reaches its replica (after the API path) */
	EV_STEP_END,                   /* replica arg's current step ends */
	EV_KICK,                       /* idle replica arg looks at what reached it */
};

struct replica {
	const struct engine_class *cls;
	struct engine *eng;
	bool busy, kick_pending, drain_first;
	int64_t overhead_ns;           /* API path when the class has none */
	int64_t outstanding, routed;
	int64_t peak_waiting;          /* at its step starts (clusters of more than one) */
};

struct cluster {
	struct cluster_setup s;
	struct replica *rep;
	int n;
	int last_stepped;              /* for the step-tokens gauge */
	const struct router_class *router;
	gsl_rng *rng;                  /* the "router" stream */
	size_t rr_next;
	bool wants_prefix;
	/* The router's view, refreshed per request (n entries each). */
	int64_t *outstanding, *waiting, *prefix_hit;
	double *kv_usage;
};

static void start_step(struct cluster *c, int i, int64_t now)
{
	struct replica *r = &c->rep[i];
	int64_t d = r->cls->start_step(r->eng, now);
	r->busy = d >= 0;
	if (d >= 0) {
		if (c->n > 1) {
			struct engine_gauges gg;
			r->cls->gauges(r->eng, &gg);
			if (gg.waiting > r->peak_waiting)
				r->peak_waiting = gg.waiting;
		}
		c->last_stepped = i;
		c->s.on_step(c->s.hooks.ctx, i, now, d);
		evq_push(c->s.q, now + d, EV_STEP_END, i);
	}
}

static int route(struct cluster *c, const struct request *rq)
{
	if (c->n == 1)
		return 0;
	for (int i = 0; i < c->n; i++) {
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
		.n = (size_t)c->n, .outstanding = c->outstanding, .waiting = c->waiting,
		.kv_usage = c->kv_usage, .prefix_hit = c->prefix_hit, .prompt_len = rq->prompt_len,
		.weights = c->s.sc->cluster.weights, .rng = c->rng, .rr_next = &c->rr_next,
	};
	size_t i = c->router->pick(&v);
	assert(i < (size_t)c->n);
	return (int)i;
}

void cluster_send(struct cluster *c, size_t idx, int64_t now)
{
	struct request *r = &c->s.reqs->v[idx];
	int i = route(c, r);
	struct replica *rp = &c->rep[i];
	r->replica = i;
	rp->outstanding++;
	rp->routed++;
	int64_t api = rp->cls->request_path_ns ? rp->cls->request_path_ns(rp->eng, r, now) : rp->overhead_ns;
	evq_push(c->s.q, now + api, EV_ENQUEUE, (int64_t)idx);
}

void cluster_done(struct cluster *c, size_t idx)
{
	struct replica *rp = &c->rep[c->s.reqs->v[idx].replica];
	rp->outstanding--;
	assert(rp->outstanding >= 0);
}

void cluster_event(struct cluster *c, const struct event *ev)
{
	switch (ev->kind) {
	case EV_ENQUEUE: {
		int i = c->s.reqs->v[ev->arg].replica;
		struct replica *rp = &c->rep[i];
		rp->cls->submit(rp->eng, (size_t)ev->arg, ev->time_ns);
		if (rp->busy || rp->kick_pending)
			break;
		if (rp->drain_first) {
			rp->kick_pending = true;
			evq_push(c->s.q, ev->time_ns, EV_KICK, i);
		} else {
			start_step(c, i, ev->time_ns);
		}
		break;
	}
	case EV_KICK:
		c->rep[ev->arg].kick_pending = false;
		if (!c->rep[ev->arg].busy)
			start_step(c, (int)ev->arg, ev->time_ns);
		break;
	case EV_STEP_END:
		c->rep[ev->arg].cls->end_step(c->rep[ev->arg].eng, ev->time_ns);
		start_step(c, (int)ev->arg, ev->time_ns);
		break;
	default:
		assert(!"not a cluster event");
	}
}

struct cluster *cluster_create(const struct cluster_setup *s, struct err *e)
{
	struct cluster *c = xcalloc(1, sizeof *c);
	const struct cluster_config *cc = &s->sc->cluster;
	c->s = *s;
	c->n = (int)cc->replicas;
	c->rep = xcalloc((size_t)c->n, sizeof *c->rep);
	c->router = &router_classes[cc->router];
	c->wants_prefix = !strcmp(c->router->name, "prefix_affinity") ||
			  (!strcmp(c->router->name, "weighted") && cc->weights[SCORER_PREFIX] > 0);
	c->outstanding = xcalloc((size_t)c->n, sizeof *c->outstanding);
	c->waiting = xcalloc((size_t)c->n, sizeof *c->waiting);
	c->prefix_hit = xcalloc((size_t)c->n, sizeof *c->prefix_hit);
	c->kv_usage = xcalloc((size_t)c->n, sizeof *c->kv_usage);
	if (c->n > 1)
		c->rng = workload_stream("router", s->sc->seed);
	struct engine_setup es = {
		.sc = s->sc, .model = s->model, .hw = s->hw, .weights = s->weights,
		.reqs = s->reqs, .hooks = s->hooks,
	};
	for (int i = 0; i < c->n; i++) {
		struct replica *rp = &c->rep[i];
		rp->cls = engine_class_for(s->sc->engine_kind);
		rp->eng = rp->cls->create(&es, e);
		if (!rp->eng) {
			cluster_destroy(c);
			return NULL;
		}
		struct engine_stats st;
		rp->cls->stats(rp->eng, &st);
		rp->drain_first = st.timing;
		rp->overhead_ns = (int64_t)llround(s->hw->eff.request_overhead_ms * 1e6);
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
	if (c->rng)
		gsl_rng_free(c->rng);
	free(c);
}

int cluster_size(const struct cluster *c)
{
	return c->n;
}

void cluster_gauges(const struct cluster *c, struct engine_gauges *out)
{
	c->rep[0].cls->gauges(c->rep[0].eng, out);
	if (c->n == 1)
		return;
	double kv = out->kv_usage;
	for (int i = 1; i < c->n; i++) {
		struct engine_gauges g;
		c->rep[i].cls->gauges(c->rep[i].eng, &g);
		out->running += g.running;
		out->waiting += g.waiting;
		kv += g.kv_usage;
		if (i == c->last_stepped)
			out->step_tokens = g.step_tokens;
	}
	out->kv_usage = kv / c->n;
}

void cluster_replica_stats(const struct cluster *c, int i, struct engine_stats *st)
{
	c->rep[i].cls->stats(c->rep[i].eng, st);
}

const char *cluster_replica_role(const struct cluster *c, int i)
{
	(void)c;
	(void)i;
	return "replica";
}

int64_t cluster_replica_routed(const struct cluster *c, int i)
{
	return c->rep[i].routed;
}

int64_t cluster_replica_peak_waiting(const struct cluster *c, int i)
{
	return c->rep[i].peak_waiting;
}

static void add_breakdown(struct perf_breakdown *a, const struct perf_breakdown *b)
{
	a->dense += b->dense;
	a->experts += b->experts;
	a->lm_head += b->lm_head;
	a->attn_prefill += b->attn_prefill;
	a->attn_decode += b->attn_decode;
	a->allreduce += b->allreduce;
	a->offload += b->offload;
	a->overhead += b->overhead;
	a->pipeline += b->pipeline;
	a->total += b->total;
}

void cluster_stats(const struct cluster *c, struct engine_stats *st)
{
	cluster_replica_stats(c, 0, st);
	for (int i = 1; i < c->n; i++) {
		struct engine_stats o;
		cluster_replica_stats(c, i, &o);
		if (o.peak_kv_usage > st->peak_kv_usage)
			st->peak_kv_usage = o.peak_kv_usage;
		st->preemptions += o.preemptions;
		st->prefix_queries += o.prefix_queries;
		st->prefix_hits += o.prefix_hits;
		st->prefix_cpu_hits += o.prefix_cpu_hits;
		st->steps += o.steps;
		st->busy_s += o.busy_s;
		st->graph_steps += o.graph_steps;
		st->eager_steps += o.eager_steps;
		st->padded_tokens += o.padded_tokens;
		add_breakdown(&st->time, &o.time);
		st->itl_weights_s += o.itl_weights_s;
		st->itl_kv_s += o.itl_kv_s;
		st->itl_overhead_s += o.itl_overhead_s;
		st->itl_pipeline_s += o.itl_pipeline_s;
		st->itl_prefill_s += o.itl_prefill_s;
		st->itl_tokens += o.itl_tokens;
		st->model_loads += o.model_loads;
		st->rejected += o.rejected;
		st->truncated_prompts += o.truncated_prompts;
		st->context_shifts += o.context_shifts;
		st->truncated_outputs += o.truncated_outputs;
		st->n_decode_total += o.n_decode_total;
		st->n_busy_slots_total += o.n_busy_slots_total;
	}
}
