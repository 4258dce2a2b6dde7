/*
 * planreplicas: plan's replica count checked by simulating the cluster
 * (`plan --simulate-replicas`) instead of dividing the target rate by one
 * replica's limit. The whole target goes through one cluster ([cluster]
 * replicas = n, its router as the scenario says) for R replications, and
 * the SLO is judged by plan's own rule (plan_worst_ratio): the answer is
 * the fewest replicas that pass, searched from ceil(target / limit) down
 * while it passes and up while it fails.
 */
#ifndef SERVESIM_PLANREPLICAS_H
#define SERVESIM_PLANREPLICAS_H

#include "plan.h"

/* Sets c->sim_replicas for a searched candidate with a sustained rate
 * (others keep 0), at most 4 × the divided count. Cannot fail: a run that
 * cannot start leaves sim_replicas 0. */
void plan_simulate_replicas(struct plan_cand *c, const struct plan_slo *slo, const struct plan_opts *o,
			    double target_rate);

#endif
