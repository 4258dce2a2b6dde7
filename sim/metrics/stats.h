/*
 * stats: the numbers a report is made of, computed as vllm bench serve
 * computes them (np.mean, np.median, np.std population, np.percentile with
 * linear interpolation).
 *
 * Two containers:
 *   - samples: every value kept (one per request: TTFT, TPOT, E2EL). Exact.
 *     Memory is 8 bytes a request. Bounded (samples_bound), it keeps the
 *     first max values and, past them, folds everything into a loghist
 *     (below) plus an exact count of zeros: from there percentiles carry
 *     the loghist's relative error of 1/4096 (0.025%), zeros stay exact,
 *     count and mean stay exact (the same sums in the same order), the std
 *     is the loghist's one-pass one (equal up to rounding).
 *   - loghist: a log-linear histogram for values too many to keep (ITL: one
 *     per output token). 2048 buckets per power of two from 2^-40 s to
 *     2^24 s (loghist_bucket), so each value is
 *     represented by its bucket's midpoint within a relative error of
 *     1/4096 (0.025%); percentiles interpolate linearly between the two
 *     order statistics as numpy does, each with that error. Count, sum, mean,
 *     std, min and max are exact. Memory is fixed (512 KiB each).
 */
#ifndef SERVESIM_STATS_H
#define SERVESIM_STATS_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct loghist;

struct samples {
	double *v;             /* the values (NULL once folded into sketch) */
	size_t n, cap;
	int sorted;
	size_t bound;          /* 0: keep every value; else fold past this many */
	struct loghist *sketch;   /* non-NULL once folded: v's values and all after */
	size_t zeros;          /* folded: how many of the values are exactly 0 */
};

/* Keeps at most max values exactly (max >= 1, s still empty): past them s
 * is a sketch with the error stated above, and v is not to be read (the
 * readers of v: Prometheus histograms of replicas, HTML CDFs, run on
 * unbounded samples). */
void samples_bound(struct samples *s, size_t max);

/* Whether s has become a sketch (its percentiles are within 1/4096). */
static inline int samples_is_sketch(const struct samples *s)
{
	return s->sketch != NULL;
}

void samples_add(struct samples *s, double v);
void samples_free(struct samples *s);
double samples_mean(const struct samples *s);      /* 0 when empty, as vLLM's `or 0` */
double samples_std(const struct samples *s);       /* population */
/* Sorts the values in place (once; adding a value unsorts them). */
void samples_sort(struct samples *s);
/* v[0..n) in the order qsort by value gives (glibc's: stable), faster;
 * what samples_sort uses. */
void stats_sort_doubles(double *v, size_t n);
/* numpy-style linear-interpolated percentile, p in [0, 100]; sorts once. */
double samples_percentile(struct samples *s, double p);

struct loghist {
	uint32_t *counts;      /* allocated on first add */
	int64_t n;
	double sum, sumsq, min, max;
};

/* Buckets come straight from the bits of a positive double: the exponent
 * and the top 11 bits of the mantissa, which order like the values. The
 * range covers 2^-40 s (about a picosecond) to 2^24 s; values outside it
 * share the end buckets. */
#define LOGHIST_SUB_BITS 11
#define LOGHIST_EXP_MIN (-40)
#define LOGHIST_EXP_MAX 24
#define LOGHIST_BUCKETS ((size_t)(LOGHIST_EXP_MAX - LOGHIST_EXP_MIN) << LOGHIST_SUB_BITS)
#define LOGHIST_MANT_SHIFT (52 - LOGHIST_SUB_BITS)

static inline size_t loghist_bucket(double v)
{
	const uint64_t lo_bits = (uint64_t)(1023 + LOGHIST_EXP_MIN) << 52;
	uint64_t b;
	memcpy(&b, &v, sizeof b);
	if (!(v > 0) || b < lo_bits)
		return 0;
	uint64_t i = (b - lo_bits) >> LOGHIST_MANT_SHIFT;
	return i < LOGHIST_BUCKETS ? (size_t)i : LOGHIST_BUCKETS - 1;
}

void loghist_alloc(struct loghist *h);

/* Adds v (must be >= 0; values below 2^-40 share the lowest bucket).
 * Inline: it runs once per output token. */
static inline void loghist_add(struct loghist *h, double v)
{
	if (!h->counts)
		loghist_alloc(h);
	h->counts[loghist_bucket(v)]++;
	if (h->n == 0 || v < h->min)
		h->min = v;
	if (h->n == 0 || v > h->max)
		h->max = v;
	h->n++;
	h->sum += v;
	h->sumsq += v * v;
}
/* n calls of loghist_add(h, v) in O(1) buckets and bounds and the same
 * bits in sum and sumsq (fsum_repeat): a fast-forwarded step's tokens. */
void loghist_add_n(struct loghist *h, double v, size_t n);
void loghist_free(struct loghist *h);
double loghist_mean(const struct loghist *h);
double loghist_std(const struct loghist *h);
double loghist_percentile(const struct loghist *h, double p);
/* Calls fn for each non-empty bucket, in increasing order, with its
 * midpoint (the value every member is reported as) and its count. */
void loghist_each(const struct loghist *h, void (*fn)(void *ctx, double mid, int64_t count),
		  void *ctx);

/* Number of values <= edge (for Prometheus buckets): exact up to the
 * bucket holding edge, which counts when its midpoint is <= edge. */
int64_t loghist_count_le(const struct loghist *h, double edge);

#endif
