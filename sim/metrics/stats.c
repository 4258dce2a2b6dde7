#include "stats.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_statistics_double.h>

#include "fsum.h"
#include "xalloc.h"

void samples_bound(struct samples *s, size_t max)
{
	s->bound = max;
}

/* A folded value: zeros counted, the rest in the sketch; the sum in the
 * order of the adds, as samples_mean sums v. */
static void sketch_add(struct samples *s, double v)
{
	if (v == 0) {
		s->zeros++;
		s->sketch->sum += v;
		return;
	}
	loghist_add(s->sketch, v);
}

void samples_add(struct samples *s, double v)
{
	if (!s->sketch && s->bound && s->n == s->bound) {
		s->sketch = xcalloc(1, sizeof *s->sketch);
		for (size_t i = 0; i < s->n; i++)
			sketch_add(s, s->v[i]);
		free(s->v);
		s->v = NULL;
		s->cap = 0;
	}
	if (s->sketch) {
		sketch_add(s, v);
		s->n++;
		return;
	}
	xgrow(&s->v, &s->cap, s->n + 1, sizeof *s->v);
	s->v[s->n++] = v;
	s->sorted = 0;
}

void samples_free(struct samples *s)
{
	free(s->v);
	if (s->sketch)
		loghist_free(s->sketch);
	free(s->sketch);
	*s = (struct samples){ 0 };
}

/* The sketch's order statistic k (0-based) of all n values: zeros first. */
static double sketch_order_stat(const struct samples *s, int64_t k);

double samples_mean(const struct samples *s)
{
	if (!s->n)
		return 0;
	if (s->sketch)
		return s->sketch->sum / (double)s->n;
	double sum = 0;
	for (size_t i = 0; i < s->n; i++)
		sum += s->v[i];
	return sum / (double)s->n;
}

double samples_std(const struct samples *s)
{
	if (!s->n)
		return 0;
	double m = samples_mean(s), acc = 0;
	if (s->sketch) {
		double var = s->sketch->sumsq / (double)s->n - m * m;
		return var > 0 ? sqrt(var) : 0;
	}
	for (size_t i = 0; i < s->n; i++)
		acc += (s->v[i] - m) * (s->v[i] - m);
	return sqrt(acc / (double)s->n);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* A double's sort key: unsigned order is the doubles' order (but for
 * -0.0, below +0.0's key where cmp_double calls them equal). */
static uint64_t sort_key(double x)
{
	uint64_t u;
	memcpy(&u, &x, sizeof u);
	return u >> 63 ? ~u : u | (uint64_t)1 << 63;
}

void stats_sort_doubles(double *v, size_t n)
{
	/* LSD radix sort, 8 passes of a byte (a pass whose byte is the same
	 * in every key is skipped), at about a fifth of qsort's cost on a
	 * run's 10^4-10^5 samples. Values that cmp_double calls equal have
	 * equal bits, so any sort by value gives qsort's bits; but NaN has no
	 * place in that order and -0.0 ties with +0.0: qsort's then. */
	enum { SMALL = 64 };
	bool odd = false;
	for (size_t i = 0; i < n && !odd; i++)
		odd = isnan(v[i]) || (v[i] == 0 && signbit(v[i]));
	if (n < SMALL || odd) {
		qsort(v, n, sizeof *v, cmp_double);
		return;
	}
	size_t (*count)[256] = xcalloc(8, sizeof *count);
	uint64_t *a = xmalloc(n * sizeof *a), *b = xmalloc(n * sizeof *b);
	for (size_t i = 0; i < n; i++) {
		a[i] = sort_key(v[i]);
		for (int d = 0; d < 8; d++)
			count[d][a[i] >> (8 * d) & 255]++;
	}
	for (int d = 0; d < 8; d++) {
		if (count[d][a[0] >> (8 * d) & 255] == n)
			continue;   /* every key has this byte */
		size_t at = 0;
		for (int k = 0; k < 256; k++) {
			size_t c = count[d][k];
			count[d][k] = at;
			at += c;
		}
		for (size_t i = 0; i < n; i++)
			b[count[d][a[i] >> (8 * d) & 255]++] = a[i];
		uint64_t *t = a;
		a = b;
		b = t;
	}
	/* Back from keys: equal keys are equal bits. */
	for (size_t i = 0; i < n; i++) {
		uint64_t u = a[i] >> 63 ? a[i] & ~((uint64_t)1 << 63) : ~a[i];
		memcpy(&v[i], &u, sizeof u);
	}
	free(a);
	free(b);
	free(count);
}

void samples_sort(struct samples *s)
{
	if (s->sketch)
		return;   /* nothing to sort: v is gone */
	if (!s->sorted && s->n > 1)
		stats_sort_doubles(s->v, s->n);
	s->sorted = 1;
}

double samples_percentile(struct samples *s, double p)
{
	if (!s->n)
		return 0;
	if (s->sketch) {
		/* numpy's rule on the sketch's order statistics. */
		double rank = p / 100 * (double)(s->n - 1);
		int64_t lo = (int64_t)floor(rank), n = (int64_t)s->n;
		double a = sketch_order_stat(s, lo), b = sketch_order_stat(s, lo + 1 < n ? lo + 1 : lo);
		return a + (b - a) * (rank - (double)lo);
	}
	samples_sort(s);
	/* numpy.percentile's linear interpolation at rank p/100·(n-1), which
	 * is GSL's definition too. */
	return gsl_stats_quantile_from_sorted_data(s->v, 1, s->n, p / 100);
}

static double double_of(uint64_t b)
{
	double v;
	memcpy(&v, &b, sizeof v);
	return v;
}

static double bucket_mid(size_t i)
{
	static const uint64_t lo_bits = (uint64_t)(1023 + LOGHIST_EXP_MIN) << 52;
	uint64_t b = lo_bits + ((uint64_t)i << LOGHIST_MANT_SHIFT);
	double lo = double_of(b), hi = double_of(b + ((uint64_t)1 << LOGHIST_MANT_SHIFT));
	return (lo + hi) / 2;
}

void loghist_alloc(struct loghist *h)
{
	h->counts = xcalloc(LOGHIST_BUCKETS, sizeof *h->counts);
}

void loghist_add_n(struct loghist *h, double v, size_t n)
{
	if (!h->counts)
		loghist_alloc(h);
	h->counts[loghist_bucket(v)] += (uint32_t)n;
	if (h->n == 0 || v < h->min)
		h->min = v;
	if (h->n == 0 || v > h->max)
		h->max = v;
	h->n += (int64_t)n;
	h->sum = fsum_repeat(h->sum, v, n);
	h->sumsq = fsum_repeat(h->sumsq, v * v, n);
}

void loghist_free(struct loghist *h)
{
	free(h->counts);
	*h = (struct loghist){ 0 };
}

double loghist_mean(const struct loghist *h)
{
	return h->n ? h->sum / (double)h->n : 0;
}

double loghist_std(const struct loghist *h)
{
	if (!h->n)
		return 0;
	double m = loghist_mean(h);
	double var = h->sumsq / (double)h->n - m * m;
	return var > 0 ? sqrt(var) : 0;
}

/* The buckets that can hold values: none below min's (loghist_bucket is
 * non-decreasing in v, and min is the least value) unless bucket 0 holds
 * some (0, a NaN), none above max's (unless max is not a number). So a
 * scan of [*lo, *hi] meets every count a scan of all the buckets does, in
 * the same order. */
static void bucket_range(const struct loghist *h, size_t *lo, size_t *hi)
{
	*lo = h->counts[0] ? 0 : loghist_bucket(h->min);
	*hi = h->max > 0 ? loghist_bucket(h->max) : LOGHIST_BUCKETS - 1;
}

/* The value of order statistic k (0-based): its bucket's midpoint, clamped
 * to the exact min and max. The bucket is the first whose running count
 * passes k; counted from the top when k is in the upper half (the same
 * bucket: the last whose count from the top passes n-1-k), so a tail
 * percentile reads only the buckets above it. */
static double order_stat(const struct loghist *h, int64_t k)
{
	if (k <= 0)
		return h->min;
	if (k >= h->n - 1)
		return h->max;
	size_t lo, hi, b = LOGHIST_BUCKETS;
	bucket_range(h, &lo, &hi);
	int64_t seen = 0;
	if (k < h->n / 2) {
		for (size_t i = lo; i <= hi; i++) {
			seen += h->counts[i];
			if (seen > k) {
				b = i;
				break;
			}
		}
	} else {
		int64_t above = h->n - 1 - k;
		for (size_t i = hi + 1; i-- > lo;) {
			seen += h->counts[i];
			if (seen > above) {
				b = i;
				break;
			}
		}
	}
	if (b == LOGHIST_BUCKETS)
		return h->max;
	double v = bucket_mid(b);
	return v < h->min ? h->min : v > h->max ? h->max : v;
}

static double sketch_order_stat(const struct samples *s, int64_t k)
{
	int64_t z = (int64_t)s->zeros;
	return k < z ? 0 : order_stat(s->sketch, k - z);
}

double loghist_percentile(const struct loghist *h, double p)
{
	if (!h->n)
		return 0;
	double rank = p / 100 * (double)(h->n - 1);
	int64_t lo = (int64_t)floor(rank);
	double a = order_stat(h, lo), b = order_stat(h, lo + 1 < h->n ? lo + 1 : lo);
	return a + (b - a) * (rank - (double)lo);
}

void loghist_each(const struct loghist *h, void (*fn)(void *ctx, double mid, int64_t count),
		  void *ctx)
{
	if (!h->counts || !h->n)
		return;
	size_t lo, hi;
	bucket_range(h, &lo, &hi);
	for (size_t b = lo; b <= hi; b++)
		if (h->counts[b])
			fn(ctx, bucket_mid(b), h->counts[b]);
}

int64_t loghist_count_le(const struct loghist *h, double edge)
{
	if (!h->n)
		return 0;
	int64_t c = 0;
	size_t lo, hi;
	bucket_range(h, &lo, &hi);
	for (size_t b = lo; b <= hi; b++)
		if (h->counts[b] && bucket_mid(b) <= edge)
			c += h->counts[b];
	return c;
}
