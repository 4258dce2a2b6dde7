/*
 * cluster: the layer between the run and the engines. It owns the
 * replicas (separate engine instances, each with its own KV pool and
 * prefix cache, all on the run's one event queue), the router that picks
 * one for each request, and the engine-side events: a request reaching
 * its replica after the API path, a replica's step ending, an idle
 * replica's kick. The run owns the client side (sends, max_concurrency,
 * metrics) and hands the cluster every event of kind >= CLUSTER_EV_FIRST.
 *
 * A single engine is a cluster of one: with one replica no router runs
 * and no random number is drawn, so the events are those of the engine
 * alone, in the same order (byte-identical output).
 *
 * Prefill/decode disaggregation ([cluster] prefill_replicas, decode_replicas):
 * replicas [0, P) only prefill (a request runs there as with max_tokens =
 * 1, as vLLM's P/D proxies send it), then the router picks a decode
 * replica in [P, P + D); that engine takes blocks for the prompt (waiting
 * for them when its pool is full), the cluster pulls the KV over the
 * kv_transfer link (kvlink.h: contention on both ports), and the first
 * token, sampled on the prefill side, reaches the client when the KV has
 * landed: TTFT includes the transfer. The prefill side holds the
 * request's blocks until they have been read (vLLM's NixlConnector delays
 * the free until the send is done): its KV pressure counts every transfer
 * in flight and every request still waiting for decode blocks, up to
 * VLLM_NIXL_ABORT_REQUEST_TIMEOUT ([cluster] kv_abort_request_timeout_s)
 * after the prefill ended: then the prefill side frees them unread, at
 * its next step (vLLM checks the deadline in get_finished, once a step),
 * and a pull that comes later reads blocks that may have been reused
 * (vLLM logs it; the timing is the same, the count is reported).
 *
 * Invariants: every request is routed exactly once per pool (r->replica
 * set at cluster_send, and to its decode replica at the hand-off); a
 * replica runs at most one step at a time; outstanding counts its routed
 * requests not yet done (or handed off).
 */
#ifndef SERVESIM_CLUSTER_H
#define SERVESIM_CLUSTER_H

#include <stdbool.h>
#include <stdint.h>

#include "clustercfg.h"
#include "engine.h"
#include "evq.h"

enum { CLUSTER_EV_FIRST = 100 };     /* event kinds the cluster owns start here */

/* A disaggregated cluster's pool ([prefill] or [decode]): the [engine]
 * settings its replicas run, the pool's keys applied, and their device. */
struct cluster_pool {
	const struct engine_config *engine;
	const char *hardware;            /* a hardware profile name; NULL: the run's (hw) */
};

/* What the cluster reads of the scenario comes in here, built by the run
 * (the cluster never sees the scenario: the arrows run one way). */
struct cluster_setup {
	const struct cluster_config *cfg;    /* [cluster] */
	const struct engine_config *engine;  /* [engine]: every replica's when colocated */
	struct cluster_pool pools[N_POOLS];  /* disaggregated: each pool's (read at create) */
	const char *path;                    /* the scenario's file, for errors */
	const char *weights_at;              /* engine_setup's */
	int64_t seed;                        /* the scenario's: the "router" stream */
	const struct model *model;
	const struct hw_profile *hw;
	const struct hw_profile *cpu_hw;  /* engine_setup's: [engine] cpu_hardware, or NULL */
	const struct precision *weights;
	struct reqtab *reqs;
	struct engine_hooks hooks;       /* the run's: every engine's tokens and ends */
	struct evq *q;                   /* the run's event queue */
	/* A replica started a step of step_ns at now (the run samples). */
	void (*on_step)(void *ctx, int replica, int64_t now, int64_t step_ns);
	/* Optional: request idx, done earlier (cluster_done returned true),
	 * is no longer read by the cluster; its record may be reused. */
	void (*on_free)(void *ctx, size_t idx);
};

struct cluster;

/* Creates [cluster] replicas engines of the scenario. Returns NULL with e
 * set when an engine cannot start (bad input). */
struct cluster *cluster_create(const struct cluster_setup *s, struct err *e);
void cluster_destroy(struct cluster *c);   /* NULL is a no-op */

int cluster_size(const struct cluster *c);

/* Request idx is sent at now: routes it (setting its replica) and
 * schedules its arrival at that replica's engine after the API path. */
void cluster_send(struct cluster *c, size_t idx, int64_t now);

/* Request idx is done (the run's on_done calls this first). Returns true
 * when the cluster still reads its record (a P/D prefill replica has not
 * yet released its KV): on_free says when that ends. */
bool cluster_done(struct cluster *c, size_t idx);

/* Handles one of the cluster's events (kind >= CLUSTER_EV_FIRST).
 * Returns -1, or, once a replica started a step that would end past
 * EVQ_HORIZON_NS, when it started (its duration into *step_ns): the run
 * stops there with an error. */
int64_t cluster_event(struct cluster *c, const struct event *ev, int64_t *step_ns);

/* The gauges summed over replicas (KV usage: their mean; step tokens: the
 * replica that stepped last). With one replica, that engine's own. */
void cluster_gauges(const struct cluster *c, struct engine_gauges *out);

/* cluster_gauges' waiting alone (what it costs: a call per replica).
 * Cannot fail. */
int64_t cluster_waiting(const struct cluster *c);

/* Replica i's own gauges. Cannot fail. */
void cluster_replica_gauges(const struct cluster *c, int i, struct engine_gauges *out);

/* Replica i's engine statistics, its role ("replica") and the requests
 * routed to it. */
void cluster_replica_stats(const struct cluster *c, int i, struct engine_stats *st);
const char *cluster_replica_role(const struct cluster *c, int i);
/* Replica i's hardware id (borrowed) and tensor parallelism into *tp. */
const char *cluster_replica_hardware(const struct cluster *c, int i, int64_t *tp);
int64_t cluster_replica_routed(const struct cluster *c, int i);
int64_t cluster_replica_peak_waiting(const struct cluster *c, int i);  /* at its steps */

/* KV transfers of a disaggregated cluster (zero when colocated). */
struct cluster_kv_stats {
	const char *link;              /* kvlink row name */
	double bytes_per_s, latency_s;
	int64_t transfers;
	double bytes;                  /* per rank, summed */
	double transfer_s, link_wait_s;/* summed: pull start to landing; waiting for a busy port */
	double block_wait_s;           /* summed: prefill end to the decode side's blocks */
	double hold_s;                 /* summed: prefill end to its blocks' release (landing, or the timeout) */
	double abort_timeout_s;        /* [cluster] kv_abort_request_timeout_s */
	int64_t expired;               /* blocks freed at the timeout before the decode side had read them */
};
void cluster_kv_stats(const struct cluster *c, struct cluster_kv_stats *out);

/* The engines' statistics as one: with one replica its own; with more,
 * replica 0's settings with counters summed and peaks maxed. */
void cluster_stats(const struct cluster *c, struct engine_stats *st);

#endif
