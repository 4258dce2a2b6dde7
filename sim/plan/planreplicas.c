/*
 * planreplicas: the replica count a simulated cluster needs.
 */
#include "planreplicas.h"

#include <math.h>

#include "measure.h"

/* Whether n replicas carry target_rate within the SLO. */
static bool passes(const struct plan_cand *c, const struct plan_slo *slo, const struct plan_opts *o,
		   double target_rate, int64_t n, bool *ran)
{
	struct measure reps[64];
	int R = o->replications < 64 ? o->replications : 64;
	for (int r = 0; r < R; r++) {
		struct scenario sc;
		measure_replica(&sc, &c->sc, r);
		sc.cluster.replicas = n;
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
	if (!(rate > 0) || !(target_rate > 0) || clustercfg_disaggregated(&c->sc.cluster))
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
