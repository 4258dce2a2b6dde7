/*
 * run_int: what the run's files share (run.c: the event loop and the
 * client; run_tokens.c: the token hooks; run_metrics.c: a done request's
 * metrics and the result's groups; run_replicas.c: a cluster run's pools
 * and per-replica results). Not for other modules: they see run.h.
 *
 * Invariants: every engine hook's ctx is the run's struct run; rn->res is
 * the result being filled, zeroed by the loop before the first event.
 */
#ifndef SERVESIM_RUN_INT_H
#define SERVESIM_RUN_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "activesec.h"
#include "run.h"

struct evq;
struct workload;

struct run {
	struct run_result *res;
	struct evq *q;
	struct cluster *cl;
	struct workload *wl;
	int64_t in_flight;             /* sent and not done (client side) */
	size_t *client_queue;          /* waiting on max_concurrency, FIFO */
	size_t cq_head, cq_len, cq_cap;
	int64_t next_sample_ns, sample_every_ns;
	uint64_t arrival_seq;          /* the lazy open loop's next reserved seq */
	/* A lean run (run_simulate_lean): finished requests are recycled, and
	 * vLLM's max_concurrent_requests is counted as they come and go
	 * (activesec.h: memory by the longest request, not the run's span). */
	bool lean;
	struct activesec active;
	bool timeseries;               /* res->ts is kept, or given to on_sample */
	void (*on_sample)(void *ctx, const struct ts_row *row);
	void *sample_ctx;
	void (*on_record)(void *ctx, const struct request *r, int64_t settled_ns);
	void *record_ctx;
	/* With on_record: the requests in flight in the order they were sent
	 * (so by send time), each marked when done; the first not done is the
	 * earliest send in flight (run_opts.on_record's settled_ns). Entry s
	 * is at sent[s & (cap_sent - 1)], s in [sent_head, sent_tail); pos_of
	 * maps a record index in flight to its s. */
	struct sent_entry {
		int64_t send_ns;
		bool done;
	} *sent;
	uint64_t sent_head, sent_tail;
	size_t cap_sent;               /* 0 or a power of two */
	uint64_t *pos_of;
	size_t cap_pos;
};

/* ---- run_tokens.c: the engines' token hooks (ctx: the struct run) ---- */

void run_on_token(void *ctx, size_t idx, int64_t t);
void run_on_tokens(void *ctx, const size_t *idx, size_t n, int64_t t);
void run_on_tokens_steady(void *ctx, size_t n, int64_t t, int64_t gap, int32_t stage, int32_t replica);

/* ---- run_metrics.c: a done request's metrics, the result's groups ---- */

/* A finished or failed request r into the whole run's group and its
 * stage's. */
void run_record_done(struct run_result *res, const struct request *r);
/* vLLM's max_concurrent_requests of a run that kept every request. */
int64_t run_concurrent_per_second(const struct run_result *res);
/* The stage groups, from the workload's n stage starts (n + 1 values). */
void run_init_groups(struct run_result *res, const int64_t *starts, int n);
/* A lean run's metric groups: past RUN_EXACT_SAMPLES values, sketches. */
void run_bound_group(struct group_metrics *g);

/* ---- run_replicas.c: a cluster run's pools and per-replica results ---- */

int run_cluster_pools(const struct scenario *sc, struct scenario *ps, struct cluster_setup *s,
		      struct err *e);
void run_record_replica(struct run_result *res, const struct request *r);
void run_collect_replicas(struct run_result *res, struct cluster *cl);
struct ts_row run_replica_row(struct cluster *cl, int i, int64_t now, int64_t step_ns);

#endif
