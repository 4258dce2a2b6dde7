/*
 * omsnap: what `run --out`'s openmetrics.txt reads of a lean run, saved as
 * the run goes, so the run keeps no request record and no per-second
 * timeline for it.
 *
 * openmetrics.txt scrapes the run every `interval` seconds (1, 2, 5, 10,
 * 15, 30, 60 … 3600: the first that keeps the run to REPORT_OM_MAX_SCRAPES
 * scrapes), an interval known only once the run has ended. A scrape at t
 * shows, for one engine: the request metrics recorded before t (promobs's
 * sums, in the order a full run adds them), the token gaps and step sizes
 * of the whole seconds before t (a totals-only timeline's folded total),
 * and the gauges of the last time-series sample at or before t. Each of
 * the three is saved at every candidate time: a multiple j·s of an
 * interval s with j < REPORT_OM_MAX_SCRAPES (a later multiple could only
 * be a scrape of a run too long for s), the moment its source passes it,
 * one fixed-size record each into an unlinked temporary file. A candidate
 * past the last one saved is the source's final state. So the files hold
 * at most REPORT_OM_MAX_SCRAPES records per interval and source (a few
 * thousand, about 10 KB each for the request metrics), and memory holds
 * their times only.
 *
 * What is the same as a full run's scrapes: every count, and every sum's
 * additions in the same order (promobs.h, timeline.h), so the same bytes.
 * One exception, as for the totals-only timeline: a token time more than
 * TIMELINE_RING s behind the newest (n_late; none in any test) counts in
 * the scrapes after the time it was recorded rather than after its own.
 *
 * One vLLM engine only (one series); a cluster keeps its records.
 */
#ifndef SERVESIM_OMSNAP_H
#define SERVESIM_OMSNAP_H

#include <stdbool.h>
#include <stdint.h>

#include "err.h"
#include "promfam.h"
#include "run.h"

struct omsnap;
struct timeline;

/* The scrape interval of a run that ended at end_ns (ns). */
int64_t omsnap_interval_ns(int64_t end_ns);

/* Saves obs's sums as it settles them (promobs_on_settle). NULL with e
 * when no temporary file can be made. */
struct omsnap *omsnap_create(struct promobs *obs, struct err *e);
void omsnap_destroy(struct omsnap *s); /* NULL is a no-op */

/* run_opts.on_fold (the run's totals-only timeline). */
void omsnap_fold(void *ctx, const struct timeline *t, size_t lo, size_t hi);
/* Each time-series sample, in order (from run_opts.on_sample). */
void omsnap_sample(struct omsnap *s, const struct ts_row *row);

/* After the run and promobs_finish: folds the rest of tl (the run's
 * timeline, whose totals the scrapes then read). Returns 0, or -1 with e
 * when a record could not be written. */
int omsnap_finish(struct omsnap *s, struct timeline *tl, struct err *e);

/* What a scrape at t_ns (a multiple of omsnap_interval_ns) shows, after
 * omsnap_finish: the last sample at or before it (false: none); metric
 * m's counts over edges (n_edges + 1) and sum; the token gaps (gaps) or
 * step sizes of the windows before it, counts (timeline.h's edges, plus
 * one) and sum. A record that cannot be read back marks s failed
 * (omsnap_failed) and reads as zeros. */
bool omsnap_gauge(const struct omsnap *s, int64_t t_ns, struct ts_row *row);
void omsnap_hist(const struct omsnap *s, int64_t t_ns, enum req_metric m, const double *edges,
		 size_t n_edges, int64_t *counts, double *sum);
void omsnap_timeline(const struct omsnap *s, int64_t t_ns, bool gaps, int64_t *counts, double *sum);

/* -1 with e when a record could not be read back while writing. */
int omsnap_failed(const struct omsnap *s, struct err *e);

#endif
