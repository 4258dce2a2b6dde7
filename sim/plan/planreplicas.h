/*
 * planreplicas: how many copies of a candidate's deployment a target rate
 * needs, and what one copy holds.
 *
 * A candidate's unit is the scenario's whole deployment: one engine, the
 * [cluster] replicas behind its router, or a disaggregated P prefill + D
 * decode layout. plan and compare divide (ceil(target / the unit's limit))
 * or, with --simulate-replicas, check the count by simulating: the whole
 * target goes through n copies as one cluster (colocated: n × replicas
 * engines; disaggregated: nP prefill + nD decode, the same ratio) for R
 * replications, judged by plan's own rule (plan_worst_ratio). The answer
 * is the fewest copies that pass, searched from the divided count down
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

/* Copies of c's deployment for target_rate: the simulated count when
 * there is one, else ceil(target / sustained rate); 1 without a target
 * (NaN); NaN when nothing is sustained. Cannot fail. */
double plan_replicas_needed(const struct plan_cand *c, const struct plan_opts *o, double target_rate);

/* GPUs in one copy of sc's deployment: engines × tensor × pipeline
 * parallel, each pool at its own parallelism when disaggregated. Cannot
 * fail (a loaded scenario's pools load). */
int64_t plan_unit_gpus(const struct scenario *sc);

/* *out = base with its deployment scaled to n copies (n >= 1). */
void plan_scale_cluster(struct scenario *out, const struct scenario *base, int64_t n);

#endif
