/*
 * planreplicas: the copies of a deployment a target needs, divided or
 * simulated.
 */
#include "planreplicas.h"

#include <math.h>

#include "measure.h"

void plan_scale_cluster(struct scenario *out, const struct scenario *base, int64_t n)
{
	*out = *base;
	struct cluster_config *cc = &out->cluster;
	if (clustercfg_disaggregated(cc)) {
		cc->prefill_replicas *= n;
		cc->decode_replicas *= n;
		cc->replicas = cc->prefill_replicas + cc->decode_replicas;
	} else {
		cc->replicas *= n;
	}
}

int64_t plan_unit_gpus(const struct scenario *sc)
{
	const struct cluster_config *cc = &sc->cluster;
	if (!clustercfg_disaggregated(cc))
		return cc->replicas * scenario_gpus(sc);
	struct scenario pool;
	struct err e;
	int64_t gpus = 0;
	for (int p = 0; p < N_POOLS; p++) {
		int64_t n = p == POOL_PREFILL ? cc->prefill_replicas : cc->decode_replicas;
		gpus += n * (scenario_pool(sc, p, &pool, &e) ? scenario_gpus(sc) : scenario_gpus(&pool));
	}
	return gpus;
}

double plan_replicas_needed(const struct plan_cand *c, const struct plan_opts *o, double target_rate)
{
	double rate = plan_sustained_rate(c, o);
	if (!(rate > 0))
		return NAN;
	if (c->sim_replicas > 0)
		return (double)c->sim_replicas;
	return isnan(target_rate) ? 1 : ceil(target_rate / rate - 1e-9);
}

/* Whether n copies carry target_rate within the SLO. */
static bool passes(const struct plan_cand *c, const struct plan_slo *slo, const struct plan_opts *o,
		   double target_rate, int64_t n, bool *ran)
{
	struct measure reps[64];
	int R = o->replications < 64 ? o->replications : 64;
	for (int r = 0; r < R; r++) {
		struct scenario sc, one;
		measure_replica(&one, &c->sc, r);
		plan_scale_cluster(&sc, &one, n);
		sc.request_rate = target_rate;
		sc.max_concurrency = 0;
		int64_t want = plan_requests_at(c, o, target_rate);
		sc.num_prompts = want > sc.num_prompts ? want : sc.num_prompts;
		struct err e;
		if (measure_run(&reps[r], &sc, &e)) {
			*ran = false;
			return false;
		}
	}
	struct measure_summary s;
	measure_summarize(&s, reps, R);
	int which;
	return plan_worst_ratio(&s, slo, o->confidence, &which) <= 1;
}

void plan_simulate_replicas(struct plan_cand *c, const struct plan_slo *slo, const struct plan_opts *o,
			    double target_rate)
{
	c->sim_replicas = 0;
	double rate = plan_sustained_rate(c, o);
	if (!(rate > 0) || !(target_rate > 0))
		return;
	int64_t n0 = (int64_t)ceil(target_rate / rate - 1e-9), n = n0, cap = 4 * n0;
	bool ran = true, ok = passes(c, slo, o, target_rate, n, &ran);
	if (ok) {
		while (n > 1 && passes(c, slo, o, target_rate, n - 1, &ran))
			n--;
	} else {
		while (!ok && ran && n < cap)
			ok = passes(c, slo, o, target_rate, ++n, &ran);
	}
	c->sim_replicas = ok && ran ? n : 0;
}
