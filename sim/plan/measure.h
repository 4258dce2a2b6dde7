/*
 * measure: what one simulation says about a configuration at one load, as a
 * flat vector of named numbers, and what R replications of it say (mean and
 * Student-t confidence interval).
 *
 * A measure is taken from a run's result and the run is freed, so a sweep
 * of many 10,000-request points holds a few hundred bytes per point. Every
 * metric has a name with its unit (`ttft_p99_ms`, `output_throughput` in
 * tok/s), used in JSON and CSV columns and in SLOs (`--slo itl_p99_ms=50`).
 *
 * Replication r runs the scenario with seed (seed + r) mod 2^32, whatever
 * the load: every load sees the same random streams (common random
 * numbers), so differences between loads are not seed noise.
 *
 * Confidence intervals: over the n replications, mean ± t_{(1+c)/2, n-1} ×
 * sd / sqrt(n) with sd the sample standard deviation (n - 1) and t from GSL
 * (gsl_cdf_tdist_Pinv). Undefined (NaN) for n < 2.
 */
#ifndef SERVESIM_MEASURE_H
#define SERVESIM_MEASURE_H

#include "err.h"
#include "scenario.h"

enum measure_id {
	MEAS_REQUEST_THROUGHPUT,     /* completed requests / duration, req/s */
	MEAS_OUTPUT_THROUGHPUT,      /* output tokens / duration, tok/s */
	MEAS_GOODPUT,                /* requests meeting the scenario's [slo] / duration;
					NaN when the scenario has no [slo] */
	/* Latency statistics, ms: per request for TTFT, TPOT and E2EL (exact);
	 * per token for ITL (stats.h loghist, within 0.025%). Five each, in
	 * the order mean, p50, p90, p95, p99. */
	MEAS_TTFT_MEAN, MEAS_TTFT_P50, MEAS_TTFT_P90, MEAS_TTFT_P95, MEAS_TTFT_P99,
	MEAS_TPOT_MEAN, MEAS_TPOT_P50, MEAS_TPOT_P90, MEAS_TPOT_P95, MEAS_TPOT_P99,
	MEAS_ITL_MEAN, MEAS_ITL_P50, MEAS_ITL_P90, MEAS_ITL_P95, MEAS_ITL_P99,
	MEAS_E2EL_MEAN, MEAS_E2EL_P50, MEAS_E2EL_P90, MEAS_E2EL_P95, MEAS_E2EL_P99,
	MEAS_PEAK_KV_USAGE,          /* fraction of the KV pool, [0, 1] */
	MEAS_PREEMPTIONS,            /* count */
	MEAS_COMPLETED,
	MEAS_FAILED,
	MEAS_DURATION_S,             /* first send to last completion, s */
	/* Where the engine's step time went, attributed to the resource that
	 * set it (s, summed over steps; see measure.c for the rule). */
	MEAS_COMPUTE_S,              /* prefill attention + matmul time above the weight-read floor */
	MEAS_BANDWIDTH_S,            /* decode attention (KV reads) + the weight-read floor */
	MEAS_OVERHEAD_S,             /* per-step scheduling and launch overhead, and a pipeline's bubble */
	MEAS_ALLREDUCE_S,            /* tensor-parallel all-reduces */
	MEAS_N
};

struct measure_desc {
	const char *name;            /* JSON/CSV key and SLO name, unit included */
	const char *label;           /* short column title */
	int decimals;                /* digits kept after the point in reports */
};

/* One entry per enum measure_id, in its order. */
extern const struct measure_desc measure_descs[MEAS_N];

struct measure {
	double v[MEAS_N];
};

struct measure_summary {
	int n;                       /* replications */
	double mean[MEAS_N];
	double sd[MEAS_N];           /* sample standard deviation; NaN when n < 2 */
};

/* The id whose name is `name`, or -1. */
int measure_find(const char *name);

/* Replication r of base: a copy with seed (seed + r) mod 2^32. Cannot
 * fail. */
void measure_replica(struct scenario *out, const struct scenario *base, int r);

/* Simulates sc and fills *m. Returns 0, or -1 with e set (the run's own
 * error: a model that does not fit, a file that cannot be read …). Safe to
 * call from several threads at once. */
int measure_run(struct measure *m, const struct scenario *sc, struct err *e);

/* Runs scenarios scs[0..n), R replications each (measure_replica), on
 * `jobs` threads (counted on progress; NULL: none), and fills out[i] with scenario i's summary, or errors[i]
 * with the first replication's error (owned by the caller; NULL when it
 * ran). The result does not depend on jobs. Cannot fail. */
struct progress;
void measure_many(const struct scenario *scs, size_t n, int R, int jobs, struct progress *progress,
		  struct measure_summary *out, char **errors);

/* Mean and standard deviation of each metric over reps[0..n). NaN entries
 * (goodput without an SLO) stay NaN. n >= 1. Cannot fail. */
void measure_summarize(struct measure_summary *s, const struct measure *reps, int n);

/* Half-width of the two-sided `confidence` interval of the mean of metric
 * id: t_{(1+confidence)/2, n-1} × sd / sqrt(n); NaN when n < 2. */
double measure_half_width(const struct measure_summary *s, int id, double confidence);

/* One-sided upper `confidence` bound of the mean of metric id:
 * mean + t_{confidence, n-1} × sd / sqrt(n); the mean itself when n < 2. */
double measure_upper_bound(const struct measure_summary *s, int id, double confidence);

#endif
