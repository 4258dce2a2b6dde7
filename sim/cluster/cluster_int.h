/*
 * cluster_int: the cluster's own state, shared by its files (cluster.c:
 * the event loop, routing, P/D hand-offs, create and destroy;
 * clusterview.c: what it reports, per replica and summed). Not for use
 * outside sim/cluster.
 */
#ifndef SERVESIM_CLUSTER_INT_H
#define SERVESIM_CLUSTER_INT_H

#include <gsl/gsl_rng.h>

#include "cluster.h"
#include "engine_int.h"
#include "reqq.h"

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
	int n_prefill;                 /* disaggregated: replicas [0, n_prefill) prefill; else 0 */
	int32_t *out_len;              /* disaggregated: each request's real output_len */
	size_t cap_out_len;
	int64_t *handoff_ns;           /* disaggregated: when its prefill ended */
	size_t cap_handoff;
	/* Disaggregated: each request's EV_KV_SENT events to come, and bit 31
	 * once it is done: its record is read until the count is 0. */
	uint32_t *kv_sent_left;
	size_t cap_kv_sent;
	uint8_t *held;                 /* disaggregated: 1 while its prefill replica holds its blocks */
	size_t cap_held;
	struct reqq *holds;            /* per prefill replica: requests handed off, in order (deadlines rise) */
	int64_t abort_timeout_ns;
	const struct kvlink *link;
	double link_bytes_per_s, link_latency_s, kv_bytes_per_token;  /* per rank */
	int64_t *egress_free, *ingress_free;   /* per prefill / decode replica, ns */
	size_t rr_decode;
	struct cluster_kv_stats kv;
	/* Disaggregated: each pool's engine settings and hardware ([prefill], [decode]). */
	struct engine_config pool_cfg[N_POOLS];
	struct hw_profile pool_hw[N_POOLS];
	int last_stepped;              /* for the step-tokens gauge */
	int64_t past_horizon_ns;       /* a step that would end past EVQ_HORIZON_NS began here; -1: none */
	int64_t past_horizon_step_ns;
	const struct router_class *router;
	gsl_rng *rng;                  /* the "router" stream */
	size_t rr_next;
	bool wants_prefix;
	/* The router's view, refreshed per request (n entries each). */
	int64_t *outstanding, *waiting, *prefix_hit;
	double *kv_usage;
};

#endif
