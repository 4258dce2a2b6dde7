/*
 * report: a run's results in the forms people already read.
 *   text  the `vllm bench serve` summary block (same labels, order,
 *         "{:<40} {:<10.2f}" formatting), then servesim's own sections;
 *   json  the `vllm bench serve --save-result` keys with the same meanings
 *         and units, a `stages` array with the same keys per stage, and a
 *         `servesim` object for what vLLM does not report;
 *   prom  Prometheus exposition text of vLLM's metrics (C12 and the rest
 *         of vLLM's loggers), with vLLM's names, labels and histogram
 *         buckets; or OpenMetrics over the simulated run, timestamped;
 *   csv   per-request records, the time series and the ITL histogram
 *         (requests.csv, timeseries.csv, itl_histogram.csv), into a folder, each
 *         file written whole (temporary file, then rename) or not at all.
 */
#ifndef SERVESIM_REPORT_H
#define SERVESIM_REPORT_H

#include <jansson.h>
#include <stdio.h>

#include "err.h"
#include "run.h"

struct report_opts {
	const double *percentiles;   /* --metric-percentiles, default {99} */
	size_t n_percentiles;
	bool detailed;               /* --save-detailed: per-request arrays in JSON */
	unsigned metrics_mask;       /* --percentile-metrics: bit m of ttft, tpot,
				      * itl, e2el; 0 = all four */
};

void report_text(FILE *f, struct run_result *res, const struct report_opts *o);

/* The JSON object (caller owns the reference). */
json_t *report_json(struct run_result *res, const struct report_opts *o);

void report_prom(FILE *f, struct run_result *res);

/* The same metrics over the simulated run as OpenMetrics text: a scrape
 * every second (coarser for long runs: at most REPORT_OM_MAX_SCRAPES),
 * from simulated time 0 to just after the end, each sample stamped
 * epoch_s + its simulated time (s), ending "# EOF". Cannot fail. */
#define REPORT_OM_MAX_SCRAPES 360
void report_openmetrics(FILE *f, const struct run_result *res, double epoch_s);

/* Where the mean TTFT and the mean ITL went, as JSON objects (ms). */
json_t *report_ttft_breakdown(const struct group_metrics *g);
json_t *report_itl_breakdown(const struct engine_stats *es);

/* run --out DIR: report_csv's files and DIR/openmetrics.txt
 * (report_openmetrics from epoch_s), all in one folder written whole or
 * not at all (wholedir). Returns 0, or -1 with e. */
int report_out(const char *dir, const struct run_result *res, double epoch_s, struct err *e);

/* requests.csv's rows streamed as a lean run's requests finish: set
 * run_opts.on_record = reqcsv_row and .record_ctx to it, then
 * run_result.rows to it before report_csv or report_out, which copy the
 * rows (the same bytes as a full run's). Rows are kept in an unlinked
 * temporary file, so nothing is left behind on failure. NULL with e when
 * no temporary file can be made. */
struct reqcsv *reqcsv_create(struct err *e);
void reqcsv_row(void *ctx, const struct request *r, int64_t settled_ns);
void reqcsv_destroy(struct reqcsv *w);   /* NULL is a no-op */

/* timeseries.csv's rows streamed as a lean run samples (run_opts.on_sample
 * = tsrows_row, .sample_ctx to it, then run_result.ts_rows to it before
 * report_csv), the same bytes as rows kept in res->ts; in an unlinked
 * temporary file. NULL with e when none can be made. */
struct tsrows *tsrows_create(struct err *e);
void tsrows_row(void *ctx, const struct ts_row *t);
void tsrows_destroy(struct tsrows *w);   /* NULL is a no-op */

/* --save-detailed's per-request arrays streamed as a lean run's requests
 * are done (reqdetail.c), the same way: on_record = reqdetail_row, then
 * run_result.detail to it, and report_json puts markers where the arrays
 * go (reqdetail_marks) that report_json_dumpf replaces with the arrays,
 * byte for byte what json_dumpf writes of a full run's JSON. Rows are
 * kept in unlinked temporary files. NULL with e when none can be made. */
struct reqdetail *reqdetail_create(struct err *e);
void reqdetail_row(void *ctx, const struct request *r, int64_t settled_ns);
void reqdetail_destroy(struct reqdetail *d);   /* NULL is a no-op */
void reqdetail_marks(json_t *o);

/* The end-of-run Prometheus scrape's request metrics (TTFT, E2E, queue,
 * prefill, decode and per-token times, token counts; promobs.c) summed as
 * a lean run's requests are done, in the order a full run sums them:
 * on_record = promobs_row, promobs_finish after the run, then
 * run_result.prom_obs to it and report_prom writes the same bytes as for
 * the full run (one vLLM engine; its timeline from
 * run_opts.timeline_totals). Cannot fail. */
struct promobs *promobs_create(void);
void promobs_row(void *ctx, const struct request *r, int64_t settled_ns);
void promobs_finish(struct promobs *p);
void promobs_destroy(struct promobs *p);   /* NULL is a no-op */

/* A vLLM cluster's end-of-run scrape of a lean run: each replica's TTFT
 * and E2E histograms (kept from the replicas' exact samples by a full
 * run) counted and summed as requests are done, in the order the run
 * adds the samples: on_record = replhist_row, then run_result.rep_hist
 * to it (with prom_obs: promobs, for the other histograms), and
 * report_prom writes the full run's bytes. Cannot fail. */
struct replhist *replhist_create(void);
void replhist_row(void *ctx, const struct request *r, int64_t settled_ns);
void replhist_destroy(struct replhist *h);   /* NULL is a no-op */

/* json_dumpf(j, f, flags), with res->detail's arrays in place of their
 * markers when res streamed them (res may be NULL). Reals at
 * JSON_REAL_PRECISION(12), as every JSON writer here uses. Returns 0, or
 * -1 with e when f cannot be written or the rows cannot be read back. */
int report_json_dumpf(json_t *j, FILE *f, size_t flags, const struct run_result *res, struct err *e);

/* Writes dir/requests.csv, dir/timeseries.csv and dir/itl_histogram.csv.
 * Returns 0, or -1 with e
 * (and no partial file left behind). */
int report_csv(const char *dir, const struct run_result *res, struct err *e);

#endif
