/*
 * timeline: what a run's Prometheus metrics need over time that the request
 * records do not keep: every token gap (vllm:inter_token_latency_seconds)
 * and every engine step's token count (vllm:iteration_tokens_total), as
 * per-window histograms over vLLM's own bucket edges.
 *
 * Windows are TIMELINE_WINDOW_NS of simulated time from t = 0; window w
 * holds the values recorded at times in [w, w+1) windows. Each window keeps
 * one count per edge plus one above the last edge, not cumulative, and the
 * sum of its values, so a scrape at any whole window is exact. Memory is
 * about 300 bytes a simulated second; recording is O(log edges).
 *
 * A run records a timeline only when asked (run_simulate_timeline), since a
 * sweep's thousands of runs do not need one.
 *
 * A timeline made for totals only (timeline_create_totals: the end-of-run
 * Prometheus scrape of a lean run) keeps the newest TIMELINE_RING windows
 * and folds older ones, in window order, into one running total: memory
 * stops growing with simulated time, and a total over every window is the
 * same additions in the same order as a full timeline's. A value recorded
 * in a window already folded (more than TIMELINE_RING s behind the
 * newest; token times go back only by an output queue's delay) is counted
 * in the total too, its sum then added out of window order (n_late).
 * Such a timeline may tell a watcher (on_fold) each time its folded total
 * is a prefix of the windows, so totals up to any whole window can be
 * saved as the run goes (run --out's scrapes over time: omsnap.h).
 */
#ifndef SERVESIM_TIMELINE_H
#define SERVESIM_TIMELINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "num.h"

#define TIMELINE_WINDOW_NS NS_PER_S /* one simulated second */

/* vLLM's vllm:inter_token_latency_seconds buckets (s) and
 * vllm:iteration_tokens_total buckets (tokens), from vllm/v1/metrics/loggers.py. */
#define TIMELINE_N_ITL	19
#define TIMELINE_N_ITER 13
extern const double timeline_itl_edges[TIMELINE_N_ITL];
extern const double timeline_iter_edges[TIMELINE_N_ITER];

#define TIMELINE_RING 256 /* windows a totals-only timeline keeps (a power of two) */

struct timeline_hist {
	size_t n_edges;
	const double *edges;
	int64_t *counts; /* n_windows × (n_edges + 1); totals only: TIMELINE_RING × */
	double *sums;	 /* n_windows; totals only: TIMELINE_RING, window w at w % RING */
	int64_t *folded; /* totals only: the folded windows' counts (n_edges + 1) */
	double folded_sum;
};

struct timeline;

/* The folded totals (itl.folded, iter.folded and their sums) hold exactly
 * windows [0, w) for every w in [lo, hi]. */
typedef void timeline_fold_fn(void *ctx, const struct timeline *t, size_t lo, size_t hi);

struct timeline {
	size_t n_windows; /* windows allocated (>= last recorded + 1); totals only:
			   * the last recorded + 1 */
	struct timeline_hist itl, iter;
	bool totals;      /* timeline_create_totals */
	size_t base;      /* totals only: windows below it are folded */
	int64_t n_late;   /* totals only: values recorded into a folded window */
	timeline_fold_fn *on_fold;   /* totals only, optional: told before each fold */
	void *fold_ctx;
};

/* An empty timeline (caller frees with timeline_destroy). Cannot fail
 * (out of memory aborts). */
struct timeline *timeline_create(void);
void timeline_destroy(struct timeline *t); /* NULL is a no-op */

/* An empty timeline for totals over every window only (see above):
 * timeline_accumulate takes from = 0 and upto >= n_windows. Cannot fail. */
struct timeline *timeline_create_totals(void);

/* Totals only: folds every window still in the ring, in order (telling
 * on_fold), so the folded totals hold every window recorded; totals over
 * every window (timeline_accumulate) do not change. Cannot fail. */
void timeline_fold_rest(struct timeline *t);

/* Records a token gap of gap_s seconds ending at t_ns, and a step of
 * tokens tokens starting at t_ns. t_ns must be >= 0. Cannot fail. */
void timeline_gap(struct timeline *t, int64_t t_ns, double gap_s);
void timeline_step(struct timeline *t, int64_t t_ns, int64_t tokens);
/* n calls of timeline_gap(t, t_ns, gap_s), in one (the same bits). */
void timeline_gaps(struct timeline *t, int64_t t_ns, double gap_s, size_t n);

/* Adds the per-bucket counts (n_edges + 1, the last above every edge;
 * not cumulative) and the sum of h's values in windows [from, upto) to
 * counts and *sum; windows past those recorded add nothing. A writer
 * walking its scrapes in order calls it once a scrape: O(windows) in all.
 * Cannot fail. */
void timeline_accumulate(const struct timeline *t, const struct timeline_hist *h, size_t from,
			 size_t upto, int64_t *counts, double *sum);

#endif
