/*
 * run_replicas: a cluster run's side of the run: the disaggregated pools
 * handed to the cluster (cluster_setup.pools), each replica's TTFT, E2EL
 * and tokens (run_result.replicas), its engine figures at the end and its
 * gauges as a time-series row.
 *
 * Invariants: a disaggregated request's prompt and TTFT count on its
 * prefill replica, its output and E2EL on its decode replica; the pools'
 * scenarios outlive cluster_create.
 */
#include <stdio.h>
#include <string.h>

#include "cluster.h"
#include "run_int.h"

/* A disaggregated cluster's pools as the cluster reads them (it sees no
 * scenario): sc with each pool's [prefill] or [decode] keys applied, into
 * ps[N_POOLS], which outlives cluster_create. */
int run_cluster_pools(const struct scenario *sc, struct scenario *ps, struct cluster_setup *s,
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

/* A cluster's per-replica TTFT and output, for its replicas' lines. */
void run_record_replica(struct run_result *res, const struct request *r)
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
void run_collect_replicas(struct run_result *res, struct cluster *cl)
{
	for (int i = 0; i < res->n_replicas; i++) {
		struct replica_result *rr = &res->replicas[i];
		rr->role = cluster_replica_role(cl, i);
		snprintf(rr->hardware, sizeof rr->hardware, "%s",
			 cluster_replica_hardware(cl, i, &rr->tensor_parallel_size));
		rr->requests = cluster_replica_routed(cl, i);
		rr->peak_waiting = cluster_replica_peak_waiting(cl, i);
		cluster_replica_stats(cl, i, &rr->engine);
	}
	cluster_kv_stats(cl, &res->kv);
}

/* A cluster replica's gauges as a time-series row. */
struct ts_row run_replica_row(struct cluster *cl, int i, int64_t now, int64_t step_ns)
{
	struct engine_gauges g;
	cluster_replica_gauges(cl, i, &g);
	return (struct ts_row){ (double)now / 1e9, g.running, g.waiting, g.kv_usage, g.step_tokens,
				(double)step_ns / 1e9 };
}
