/*
 * promobs: the request-metric histograms and counters of the end-of-run
 * Prometheus scrape (promfam.h's RM_* metrics), summed as a lean run's
 * requests are done, so `run --format prom` keeps no record.
 *
 * A full run sorts each metric's observations by the time vLLM records
 * them (a request's first token for TTFT and prompt tokens, its finish
 * for the rest) and sums them in that order (promfam.c). Here each done
 * request's observations wait in a heap by (time, id) (sim/base/heap.h,
 * the event queue's heap code) until the run says
 * no request still to come can record earlier (run_opts.on_record's
 * settled_ns), then go into the sums in that order: the same additions
 * in the same order, so the same bits. Counts go per bucket of one grid
 * holding every edge any of those histograms uses (vLLM's 1-2-5 series
 * without its max_model_len cut), read out for an edge set at the end.
 * Memory: the grid per series, and the heap (the requests done while an
 * earlier-sent one still ran).
 *
 * Invariants: the sums hold exactly the observations with time before
 * the last settled time seen, added in (time, id) order; the heap holds
 * the rest.
 */
#ifndef SERVESIM_PROMOBS_H
#define SERVESIM_PROMOBS_H

#include <stdbool.h>
#include <stdint.h>

#include "promfam.h"
#include "report.h"

/* promobs_create, _row, _finish, _destroy: report.h. */

/* Of the completed requests of series replica (-1: every one), metric
 * m's counts per bucket of edges (n_edges + 1, the last above them all;
 * each edge must be one of the grid's) and their sum in time order. After
 * promobs_finish. Cannot fail. */
void promobs_hist(const struct promobs *p, int replica, enum req_metric m, const double *edges,
		  size_t n_edges, int64_t *counts, double *sum);

/* A watcher told before each observation goes into the sums, with its
 * time t_ns: the sums then hold exactly the observations before t_ns
 * (run --out's scrapes over time save them: omsnap.h). One at most. */
typedef void promobs_settle_fn(void *ctx, const struct promobs *p, int64_t t_ns);
void promobs_on_settle(struct promobs *p, promobs_settle_fn *fn, void *ctx);

/* The sums of series replica (-1: every request) as they are now, in
 * promobs_state_size bytes at buf (zeros for a series nothing reached),
 * and promobs_hist of such a saved state. Cannot fail. */
size_t promobs_state_size(const struct promobs *p);
void promobs_save(const struct promobs *p, int replica, void *buf);
void promobs_hist_saved(const struct promobs *p, const void *state, enum req_metric m, const double *edges,
			size_t n_edges, int64_t *counts, double *sum);

/* The value of m for r and when vLLM records it; false when r has none
 * (TPOT of a one-token answer). */
bool promobs_value(const struct request *r, enum req_metric m, int64_t *t_ns, double *v);

#endif
