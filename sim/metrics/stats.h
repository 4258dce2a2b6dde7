/*
 * stats: the numbers a report is made of, computed as vllm bench serve
 * computes them (np.mean, np.median, np.std population, np.percentile with
 * linear interpolation).
 *
 * Two containers:
 *   - samples: every value kept (one per request: TTFT, TPOT, E2EL). Exact.
 *     Memory is 8 bytes a request.
 *   - loghist: a log-linear histogram for values too many to keep (ITL: one
 *     per output token). 2048 buckets per power of two from 2^-40 s to
 *     2^24 s, so each value is
 *     represented by its bucket's midpoint within a relative error of
 *     1/4096 (0.025%); percentiles interpolate linearly between the two
 *     order statistics as numpy does, each with that error. Count, sum, mean,
 *     std, min and max are exact. Memory is fixed (512 KiB each).
 */
#ifndef SERVESIM_STATS_H
#define SERVESIM_STATS_H

#include <stddef.h>
#include <stdint.h>

struct samples {
	double *v;
	size_t n, cap;
	int sorted;
};

void samples_add(struct samples *s, double v);
void samples_free(struct samples *s);
double samples_mean(const struct samples *s);      /* 0 when empty, as vLLM's `or 0` */
double samples_std(const struct samples *s);       /* population */
/* numpy-style linear-interpolated percentile, p in [0, 100]; sorts once. */
double samples_percentile(struct samples *s, double p);

struct loghist {
	uint32_t *counts;      /* allocated on first add */
	int64_t n;
	double sum, sumsq, min, max;
};

/* Adds v (must be >= 0; values below 1e-9 share the lowest bucket). */
void loghist_add(struct loghist *h, double v);
void loghist_free(struct loghist *h);
double loghist_mean(const struct loghist *h);
double loghist_std(const struct loghist *h);
double loghist_percentile(const struct loghist *h, double p);
/* Number of values <= edge (for Prometheus buckets): exact up to the
 * bucket holding edge, which counts when its midpoint is <= edge. */
int64_t loghist_count_le(const struct loghist *h, double edge);

#endif
