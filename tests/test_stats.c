/*
 * stats: samples give numpy's numbers (np.percentile with linear
 * interpolation, population np.std); the log histogram's percentiles stay
 * within its stated relative error of 1/4096 of the exact ones, and its
 * count, mean, min and max are exact; count_le is exact away from the edge's
 * bucket; the scans that read only the buckets between min and max (and
 * tail ranks from the top) answer as the full scan does, bit for bit.
 */
#include "testutil.h"

#include <float.h>

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

#include "stats.h"
#include "xalloc.h"

/* Hand-checkable percentiles: numpy's rule is rank = p/100·(n-1), value =
 * v[floor] + frac·(v[floor+1] - v[floor]). The inputs are small integers,
 * so every result is one or two roundings away: 1e-12. */
#define PCT_TOL 1e-12

static double pct_of(const double *v, size_t n, double p)
{
	struct samples s = { 0 };
	for (size_t i = 0; i < n; i++)
		samples_add(&s, v[i]);
	double r = samples_percentile(&s, p);
	samples_free(&s);
	return r;
}

static void percentile_numpy_linear(void **state)
{
	(void)state;
	const double a[] = { 1, 2, 3, 4 };
	/* np.percentile([1,2,3,4], [50, 99, 0, 100, 25, 75]) */
	assert_double_near(pct_of(a, 4, 50), 2.5, PCT_TOL);
	assert_double_near(pct_of(a, 4, 99), 3.97, PCT_TOL);
	assert_double_near(pct_of(a, 4, 0), 1.0, 0.0);
	assert_double_near(pct_of(a, 4, 100), 4.0, 0.0);
	assert_double_near(pct_of(a, 4, 25), 1.75, PCT_TOL);
	assert_double_near(pct_of(a, 4, 75), 3.25, PCT_TOL);

	/* numpy's own docstring example, unsorted: a = [[10, 7, 4], [3, 2, 1]],
	 * np.percentile(a, 50) = 3.5; and p90 = 7 + 0.5·3 = 8.5. */
	const double b[] = { 10, 7, 4, 3, 2, 1 };
	assert_double_near(pct_of(b, 6, 50), 3.5, PCT_TOL);
	assert_double_near(pct_of(b, 6, 90), 8.5, PCT_TOL);
	assert_double_near(pct_of(b, 6, 0), 1.0, 0.0);
	assert_double_near(pct_of(b, 6, 100), 10.0, 0.0);

	/* np.percentile([15, 20, 35, 40, 50], 40) = 29 (rank 1.6), unsorted. */
	const double c[] = { 50, 15, 40, 20, 35 };
	assert_double_near(pct_of(c, 5, 40), 29.0, PCT_TOL);

	/* One value: every percentile is it. */
	const double d[] = { 7.25 };
	assert_double_near(pct_of(d, 1, 0), 7.25, 0.0);
	assert_double_near(pct_of(d, 1, 99), 7.25, 0.0);
	assert_double_near(pct_of(d, 1, 100), 7.25, 0.0);
}

/* Adding after a percentile re-sorts (the cached order is invalidated). */
static int cmp_value(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* The radix sort behind samples_sort gives qsort's bits, byte for byte:
 * random doubles of every sign and scale, many ties, lengths on both
 * sides of its small-array cutoff, and arrays with -0.0 or NaN (which it
 * hands to qsort). A wrong key (sign, byte order, a skipped pass) fails
 * the memcmp. */
static void radix_sort_matches_qsort(void **state)
{
	(void)state;
	gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
	gsl_rng_set(rng, 14);
	const size_t lens[] = { 0, 1, 2, 63, 64, 65, 1000, 4096, 20000 };
	for (size_t li = 0; li < sizeof lens / sizeof *lens; li++) {
		for (int kind = 0; kind < 5; kind++) {
			size_t n = lens[li];
			double *a = xmalloc((n + 1) * sizeof *a), *b = xmalloc((n + 1) * sizeof *b);
			for (size_t i = 0; i < n; i++) {
				double u = gsl_rng_uniform(rng);
				switch (kind) {
				case 0:   /* latencies: positive, a few decades */
					a[i] = exp(20 * u - 10);
					break;
				case 1:   /* both signs, every exponent, zeros */
					a[i] = (u < 0.5 ? -1 : 1) * ldexp(gsl_rng_uniform(rng), (int)(u * 2000) - 1000);
					if (u < 0.05)
						a[i] = 0;
					break;
				case 2:   /* few distinct values: ties */
					a[i] = (double)(int)(u * 7) - 3;
					break;
				case 3:   /* a -0.0 among them */
					a[i] = i == n / 2 ? -0.0 : u - 0.5;
					break;
				default:  /* a NaN among them */
					a[i] = i == n / 3 ? NAN : u;
					break;
				}
			}
			memcpy(b, a, n * sizeof *a);
			stats_sort_doubles(a, n);
			if (n)
				qsort(b, n, sizeof *b, cmp_value);
			assert_memory_equal(a, b, n * sizeof *a);
			free(a);
			free(b);
		}
	}
	gsl_rng_free(rng);
}

static void percentile_after_more_samples(void **state)
{
	(void)state;
	struct samples s = { 0 };
	samples_add(&s, 3);
	samples_add(&s, 1);
	assert_double_near(samples_percentile(&s, 50), 2.0, PCT_TOL);
	samples_add(&s, 0);
	samples_add(&s, 100);
	samples_add(&s, -5);
	/* sorted: -5 0 1 3 100 → median 1 */
	assert_double_near(samples_percentile(&s, 50), 1.0, 0.0);
	assert_double_near(samples_percentile(&s, 100), 100.0, 0.0);
	samples_free(&s);
}

static void mean_and_population_std(void **state)
{
	(void)state;
	struct samples s = { 0 };
	/* vLLM's `or 0`: empty is 0, not NaN. */
	assert_double_near(samples_mean(&s), 0.0, 0.0);
	assert_double_near(samples_std(&s), 0.0, 0.0);
	assert_double_near(samples_percentile(&s, 50), 0.0, 0.0);
	/* The textbook set: mean 5, population std 2 (sample std would be
	 * 2.138). Small integers: exact up to one sqrt rounding. */
	const double v[] = { 2, 4, 4, 4, 5, 5, 7, 9 };
	for (size_t i = 0; i < 8; i++)
		samples_add(&s, v[i]);
	assert_double_near(samples_mean(&s), 5.0, 0.0);
	assert_double_near(samples_std(&s), 2.0, 1e-15);
	samples_free(&s);
	samples_add(&s, 3.5);
	assert_double_near(samples_std(&s), 0.0, 0.0);
	samples_free(&s);
}

/* 100k lognormal values around 20 ms (ITL-like, σ = 0.8 so they span
 * several powers of two), from GSL's MT19937 seeded 1. */
enum { N_LOGN = 100000 };

static void fill_lognormal(struct samples *s, struct loghist *h, double *sum)
{
	gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
	gsl_rng_set(r, 1);
	*sum = 0;
	for (int i = 0; i < N_LOGN; i++) {
		double v = gsl_ran_lognormal(r, log(0.02), 0.8);
		samples_add(s, v);
		loghist_add(h, v);
		*sum += v;
	}
	gsl_rng_free(r);
}

static void loghist_matches_samples(void **state)
{
	(void)state;
	struct samples s = { 0 };
	struct loghist h = { 0 };
	double sum;
	fill_lognormal(&s, &h, &sum);
	assert_int_equal(h.n, N_LOGN);

	/* Exact: the same additions in the same order. */
	assert_double_near(loghist_mean(&h), sum / N_LOGN, 0.0);
	assert_double_near(loghist_mean(&h), samples_mean(&s), 0.0);
	/* std: one-pass sumsq/n - mean² against the two-pass samples_std; the
	 * cancellation loses about log2(1 + 1/CV²) ≈ 1 bit at CV ≈ 0.95, so
	 * 1e-9 relative is ample. */
	assert_double_rel(loghist_std(&h), samples_std(&s), 1e-9);
	double mn = INFINITY, mx = 0;
	for (size_t i = 0; i < s.n; i++) {
		mn = fmin(mn, s.v[i]);
		mx = fmax(mx, s.v[i]);
	}
	assert_double_near(h.min, mn, 0.0);
	assert_double_near(h.max, mx, 0.0);
	/* p0 and p100 are the exact min and max. */
	assert_double_near(loghist_percentile(&h, 0), mn, 0.0);
	assert_double_near(loghist_percentile(&h, 100), mx, 0.0);

	/* stats.h: each order statistic is its bucket's midpoint, within
	 * 1/4096 relative (2048 buckets per power of two, half a bucket of
	 * 1/2048); interpolating two such values keeps the bound. The 1e-12
	 * covers the rounding of the interpolation itself. */
	const double rel = 1.0 / 4096 + 1e-12;
	static const double ps[] = { 0.1, 1, 5, 10, 25, 50, 75, 90, 95, 99, 99.9, 99.99 };
	for (size_t i = 0; i < sizeof ps / sizeof *ps; i++) {
		double exact = samples_percentile(&s, ps[i]);
		double approx = loghist_percentile(&h, ps[i]);
		assert_double_rel(approx, exact, rel);
	}
	samples_free(&s);
	loghist_free(&h);
}

/* Bounded samples (a lean run's TTFT, TPOT, E2EL, queue time): exact
 * below the bound, the same numbers as unbounded ones; past it the count
 * and mean stay exact (the same sums in the same order), the std within
 * the one-pass rounding, and each percentile within stats.h's 1/4096
 * relative of the exact one. A quarter of the values are exact zeros
 * (a queue time), which stay exact: p10 is 0, not a bucket midpoint. */
static void bounded_samples_sketch_error(void **state)
{
	(void)state;
	struct samples exact = { 0 }, small = { 0 }, big = { 0 };
	samples_bound(&small, 1000);
	samples_bound(&big, 500);
	gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
	gsl_rng_set(r, 7);
	for (int i = 0; i < 20000; i++) {
		double v = gsl_rng_uniform(r) < 0.25 ? 0 : gsl_ran_lognormal(r, log(0.05), 1.2);
		samples_add(&exact, v);
		samples_add(&big, v);
		if (i < 1000)
			samples_add(&small, v);
	}
	gsl_rng_free(r);
	/* Below the bound: still exact. */
	assert_false(samples_is_sketch(&small));
	struct samples first = { 0 };
	for (int i = 0; i < 1000; i++)
		samples_add(&first, exact.v[i]);
	assert_double_near(samples_percentile(&small, 99), samples_percentile(&first, 99), 0.0);
	/* Past it: a sketch. */
	assert_true(samples_is_sketch(&big));
	assert_null(big.v);
	assert_int_equal(big.n, 20000);
	assert_double_near(samples_mean(&big), samples_mean(&exact), 0.0);
	assert_double_rel(samples_std(&big), samples_std(&exact), 1e-9);
	const double rel = 1.0 / 4096 + 1e-12;
	static const double ps[] = { 0.5, 10, 24, 26, 50, 75, 90, 99, 99.9, 100 };
	for (size_t i = 0; i < sizeof ps / sizeof *ps; i++)
		assert_double_rel(samples_percentile(&big, ps[i]), samples_percentile(&exact, ps[i]), rel);
	assert_double_near(samples_percentile(&big, 10), 0.0, 0.0);
	samples_sort(&big);   /* a no-op on a sketch */
	samples_free(&exact);
	samples_free(&small);
	samples_free(&first);
	samples_free(&big);
}

static void loghist_count_le_edges(void **state)
{
	(void)state;
	struct loghist h = { 0 };
	assert_int_equal(loghist_count_le(&h, 1.0), 0);
	assert_double_near(loghist_percentile(&h, 50), 0.0, 0.0);
	assert_double_near(loghist_mean(&h), 0.0, 0.0);

	const double v[] = { 0.001, 0.002, 0.002, 0.005, 0.5 };
	for (size_t i = 0; i < 5; i++)
		loghist_add(&h, v[i]);
	/* Edges far (> 1/2048 relative, a bucket) from every value: exact. */
	assert_int_equal(loghist_count_le(&h, 0.0001), 0);
	assert_int_equal(loghist_count_le(&h, 0.0015), 1);
	assert_int_equal(loghist_count_le(&h, 0.003), 3);
	assert_int_equal(loghist_count_le(&h, 0.01), 4);
	assert_int_equal(loghist_count_le(&h, 1.0), 5);
	assert_int_equal(loghist_count_le(&h, INFINITY), 5);
	loghist_free(&h);

	/* vLLM's ITL histogram buckets (vllm/v1/metrics/loggers.py) over the
	 * lognormal set: the count differs from the exact one at most by the
	 * values that share the edge's bucket, all within one bucket width
	 * (at most 1/2048 relative) of the edge. */
	static const double edges[] = { 0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3,
					0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0 };
	struct samples s = { 0 };
	double sum;
	fill_lognormal(&s, &h, &sum);
	for (size_t i = 0; i < sizeof edges / sizeof *edges; i++) {
		int64_t exact = 0, near = 0;
		for (size_t j = 0; j < s.n; j++) {
			exact += s.v[j] <= edges[i];
			near += fabs(s.v[j] - edges[i]) <= edges[i] / 2048;
		}
		int64_t got = loghist_count_le(&h, edges[i]);
		if (llabs(got - exact) > near) {
			print_error("edge %g: count_le %lld, exact %lld, values near %lld\n", edges[i],
				    (long long)got, (long long)exact, (long long)near);
			fail();
		}
	}
	samples_free(&s);
	loghist_free(&h);
}

/* Zero (an ITL of two tokens in one step) lands in the lowest bucket with
 * every value below 1e-9 s (stats.h), so an order statistic there is known
 * to 1e-9 s; the exact min and max still bound the percentiles. */
static void loghist_zero_values(void **state)
{
	(void)state;
	struct loghist h = { 0 };
	loghist_add(&h, 0);
	loghist_add(&h, 0);
	loghist_add(&h, 0.004);
	assert_double_near(h.min, 0.0, 0.0);
	assert_double_near(loghist_percentile(&h, 0), 0.0, 0.0);
	assert_double_near(loghist_percentile(&h, 50), 0.0, 1e-9);
	assert_double_near(loghist_percentile(&h, 100), 0.004, 0.0);
	/* rank 1.5: halfway between the lowest bucket and the exact max. */
	assert_double_near(loghist_percentile(&h, 75), 0.002, 1e-9);
	assert_int_equal(loghist_count_le(&h, 0.001), 2);
	loghist_free(&h);
}

/* The reference path: every bucket scanned from the lowest, as stats.c
 * did before it scanned only [min's bucket, max's bucket] and counted
 * tail ranks from the top. bucket_mid is re-derived from stats.h's layout. */
static double ref_mid(size_t i)
{
	uint64_t b = ((uint64_t)(1023 + LOGHIST_EXP_MIN) << 52) + ((uint64_t)i << LOGHIST_MANT_SHIFT);
	uint64_t e = b + ((uint64_t)1 << LOGHIST_MANT_SHIFT);
	double lo, hi;
	memcpy(&lo, &b, sizeof lo);
	memcpy(&hi, &e, sizeof hi);
	return (lo + hi) / 2;
}

static double ref_order_stat(const struct loghist *h, int64_t k)
{
	if (k <= 0)
		return h->min;
	if (k >= h->n - 1)
		return h->max;
	int64_t seen = 0;
	for (size_t b = 0; b < LOGHIST_BUCKETS; b++) {
		seen += h->counts[b];
		if (seen > k) {
			double v = ref_mid(b);
			return v < h->min ? h->min : v > h->max ? h->max : v;
		}
	}
	return h->max;
}

static double ref_percentile(const struct loghist *h, double p)
{
	double rank = p / 100 * (double)(h->n - 1);
	int64_t lo = (int64_t)floor(rank);
	double a = ref_order_stat(h, lo), b = ref_order_stat(h, lo + 1 < h->n ? lo + 1 : lo);
	return a + (b - a) * (rank - (double)lo);
}

struct each_log {
	double mid[64];
	int64_t count[64];
	size_t n;
};

static void log_each(void *ctx, double mid, int64_t count)
{
	struct each_log *l = ctx;
	if (l->n < 64) {
		l->mid[l->n] = mid;
		l->count[l->n] = count;
	}
	l->n++;
}

/* The short scans give the full scan's answers bit for bit: every
 * percentile from 0 to 100 by 0.25, loghist_each's calls and count_le,
 * on histograms of 2 to 5,000 values: lognormal over many octaves, with
 * zeros, one value repeated, values past both ends of the range. */
static void loghist_short_scans_match_full_scan(void **state)
{
	(void)state;
	gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
	gsl_rng_set(r, 7);
	for (int c = 0; c < 40; c++) {
		struct loghist h = { 0 };
		size_t n = c < 4 ? (size_t)c + 2 : 1 + gsl_rng_uniform_int(r, 5000);
		for (size_t i = 0; i < n; i++) {
			double v = exp(gsl_ran_gaussian(r, 1 + c % 5) - 4);
			if (c % 7 == 1 && i % 3 == 0)
				v = 0;
			if (c % 7 == 2)
				v = 0.0125;
			if (c % 7 == 3 && i % 10 == 0)
				v = i % 20 ? 1e-15 : 1e10;   /* the end buckets */
			loghist_add(&h, v);
		}
		for (double p = 0; p <= 100; p += 0.25) {
			double got = loghist_percentile(&h, p), want = ref_percentile(&h, p);
			if (memcmp(&got, &want, sizeof got) != 0) {
				print_error("case %d (n %zu), p%g: %.17g, full scan %.17g\n", c, n, p, got,
					    want);
				fail();
			}
		}
		struct each_log got = { 0 }, want = { 0 };
		loghist_each(&h, log_each, &got);
		for (size_t b = 0; b < LOGHIST_BUCKETS; b++)
			if (h.counts[b])
				log_each(&want, ref_mid(b), h.counts[b]);
		assert_int_equal(got.n, want.n);
		size_t m = got.n < 64 ? got.n : 64;
		assert_memory_equal(got.mid, want.mid, m * sizeof *got.mid);
		assert_memory_equal(got.count, want.count, m * sizeof *got.count);
		for (double edge = 1e-6; edge < 1e3; edge *= 3.7) {
			int64_t full = 0;
			for (size_t b = 0; b < LOGHIST_BUCKETS; b++)
				if (h.counts[b] && ref_mid(b) <= edge)
					full += h.counts[b];
			assert_int_equal(loghist_count_le(&h, edge), full);
		}
		loghist_free(&h);
	}
	gsl_rng_free(r);
}

/* Every call of loghist_each, up to cap (a histogram of n values has at
 * most n non-empty buckets). */
struct each_all {
	double *mid;
	int64_t *count;
	size_t n, cap;
};

static void log_all(void *ctx, double mid, int64_t count)
{
	struct each_all *l = ctx;
	assert_true(l->n < l->cap);
	l->mid[l->n] = mid;
	l->count[l->n++] = count;
}

/* ref_order_stat by a running count over every bucket made once (cum[b]:
 * the values in buckets 0..b), for histograms checked many times. */
static void ref_cumulate(const struct loghist *h, int64_t *cum)
{
	int64_t seen = 0;
	for (size_t b = 0; b < LOGHIST_BUCKETS; b++)
		cum[b] = seen += h->counts ? h->counts[b] : 0;
}

static double ref_order_stat_cum(const struct loghist *h, const int64_t *cum, int64_t k)
{
	if (k <= 0)
		return h->min;
	if (k >= h->n - 1)
		return h->max;
	size_t lo = 0, hi = LOGHIST_BUCKETS - 1;   /* the first bucket with cum > k */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (cum[mid] > k)
			hi = mid;
		else
			lo = mid + 1;
	}
	double v = ref_mid(lo);
	return v < h->min ? h->min : v > h->max ? h->max : v;
}

static double ref_pct_cum(const struct loghist *h, const int64_t *cum, double p)
{
	double rank = p / 100 * (double)(h->n - 1);
	int64_t lo = (int64_t)floor(rank);
	double a = ref_order_stat_cum(h, cum, lo), b = ref_order_stat_cum(h, cum, lo + 1 < h->n ? lo + 1 : lo);
	return a + (b - a) * (rank - (double)lo);
}

/* Values spread over the whole range and past it: random exponents from
 * 2^-46 to 2^30 with random mantissas, exact powers of two and bucket
 * edges, zeros, subnormals, DBL_MAX and infinity (the end buckets), a run
 * of one repeated value. */
static double edge_value(gsl_rng *r)
{
	switch (gsl_rng_uniform_int(r, 8)) {
	case 0:
		return 0;
	case 1:
		return ldexp(1, (int)gsl_rng_uniform_int(r, 77) - 46);   /* an edge */
	case 2: {   /* a bucket's upper edge, one ulp below the next */
		double v = ldexp(1 + (double)gsl_rng_uniform_int(r, 2048) / 2048, (int)gsl_rng_uniform_int(r, 70) - 42);
		return nextafter(v, 0);
	}
	case 3: {
		static const double far[] = { 5e-324, 1e-310, 1e-20, 3e8, 1e100, DBL_MAX, INFINITY };
		return far[gsl_rng_uniform_int(r, sizeof far / sizeof *far)];
	}
	case 4:
		return 0.0125;
	default:
		return ldexp(1 + gsl_rng_uniform(r), (int)gsl_rng_uniform_int(r, 77) - 46);
	}
}

/* The property behind bucket_range and the scans from the top, on 60
 * random histograms of 1 to 400 values each spread as edge_value draws:
 * percentiles 0, 100 and 12 random ones, every bucket loghist_each
 * reports and count_le at 6 random edges equal the full scan's bit for
 * bit; and a bounded samples' sketch (zeros counted apart)
 * gives numpy's rule over the full scan's order statistics, its zeros
 * first. */
static void short_scans_match_full_scan_on_random_histograms(void **state)
{
	(void)state;
	gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
	gsl_rng_set(r, 2026);
	int64_t *cum = malloc(LOGHIST_BUCKETS * sizeof *cum);
	for (int c = 0; c < 60; c++) {
		struct loghist h = { 0 };
		struct samples s = { 0 };
		samples_bound(&s, 1 + gsl_rng_uniform_int(r, 8));
		size_t n = 1 + gsl_rng_uniform_int(r, 400), zeros = 0;
		for (size_t i = 0; i < n; i++) {
			double v = edge_value(r);
			zeros += v == 0;
			if (v > 0)
				loghist_add(&h, v);
			samples_add(&s, v);
		}
		size_t kept = n - zeros;
		ref_cumulate(&h, cum);
		for (int t = 0; t < 14 && kept; t++) {
			double p = t == 0 ? 0 : t == 1 ? 100 : 100 * gsl_rng_uniform(r);
			double got = loghist_percentile(&h, p), want = ref_pct_cum(&h, cum, p);
			if (memcmp(&got, &want, sizeof got) != 0) {
				print_error("case %d (n %zu), p%.17g: %.17g, full scan %.17g\n", c, kept, p, got, want);
				fail();
			}
		}
		/* loghist_each: every bucket, in order, as the full scan meets them. */
		struct each_all got = { calloc(kept + 1, sizeof(double)), calloc(kept + 1, sizeof(int64_t)), 0, kept + 1 };
		struct each_all want = { calloc(kept + 1, sizeof(double)), calloc(kept + 1, sizeof(int64_t)), 0, kept + 1 };
		loghist_each(&h, log_all, &got);
		for (size_t b = 0; h.counts && b < LOGHIST_BUCKETS; b++)
			if (h.counts[b])
				log_all(&want, ref_mid(b), h.counts[b]);
		assert_int_equal(got.n, want.n);
		assert_memory_equal(got.mid, want.mid, got.n * sizeof *got.mid);
		assert_memory_equal(got.count, want.count, got.n * sizeof *got.count);
		free(got.mid), free(got.count), free(want.mid), free(want.count);
		for (int t = 0; t < 6 && kept; t++) {
			double edge = ldexp(1 + gsl_rng_uniform(r), (int)gsl_rng_uniform_int(r, 80) - 48);
			size_t lo = 0, hi = LOGHIST_BUCKETS;   /* buckets below lo: midpoint <= edge */
			while (lo < hi) {                      /* the midpoints rise with b */
				size_t mid = lo + (hi - lo) / 2;
				if (ref_mid(mid) <= edge)
					lo = mid + 1;
				else
					hi = mid;
			}
			int64_t full = lo ? cum[lo - 1] : 0;
			assert_int_equal(loghist_count_le(&h, edge), full);
		}
		/* The sketch: zeros first, then the histogram's order statistics. */
		if (samples_is_sketch(&s)) {
			assert_int_equal(s.zeros, zeros);
			for (int64_t k = 0; k < (int64_t)n; k += 1 + (int64_t)n / 8) {
				double p = n > 1 ? 100.0 * (double)k / (double)(n - 1) : 0;
				double sk = samples_percentile(&s, p);
				double rank = p / 100 * (double)(n - 1);
				int64_t lo = (int64_t)floor(rank), z = (int64_t)zeros, hi = lo + 1 < (int64_t)n ? lo + 1 : lo;
				double a = lo < z ? 0 : ref_order_stat_cum(&h, cum, lo - z);
				double b = hi < z ? 0 : ref_order_stat_cum(&h, cum, hi - z);
				double full = a + (b - a) * (rank - (double)lo);
				if (!(sk == full) && !(isnan(sk) && isnan(full))) {   /* inf - inf at an end */
					print_error("case %d sketch, k %lld of %zu: %.17g, full scan %.17g\n", c, (long long)k, n,
						    sk, full);
					fail();
				}
			}
		}
		samples_free(&s);
		loghist_free(&h);
	}
	free(cum);
	gsl_rng_free(r);
}

/* loghist_add_n is n calls of loghist_add, bit for bit (a fast-forwarded
 * step's tokens must report what stepping one by one reports): random
 * gaps and runs, long ones past fsum's O(1) threshold included, on top
 * of a running histogram. memcmp of the fields: no tolerance, exactness
 * is the contract. */
static void add_n_is_n_adds(void **state)
{
	(void)state;
	gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
	gsl_rng_set(rng, 11);
	struct loghist a = { 0 }, b = { 0 };
	for (int t = 0; t < 2000; t++) {
		double v = gsl_ran_lognormal(rng, -4, 1.5);
		size_t n = t % 7 == 0 ? 1 + gsl_rng_uniform_int(rng, 5000) : 1 + gsl_rng_uniform_int(rng, 40);
		loghist_add_n(&a, v, n);
		for (size_t k = 0; k < n; k++)
			loghist_add(&b, v);
		assert_int_equal(a.n, b.n);
		assert_memory_equal(&a.sum, &b.sum, sizeof a.sum);
		assert_memory_equal(&a.sumsq, &b.sumsq, sizeof a.sumsq);
		assert_memory_equal(&a.min, &b.min, sizeof a.min);
		assert_memory_equal(&a.max, &b.max, sizeof a.max);
	}
	assert_memory_equal(a.counts, b.counts, LOGHIST_BUCKETS * sizeof *a.counts);
	loghist_free(&a);
	loghist_free(&b);
	gsl_rng_free(rng);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(percentile_numpy_linear),
		cmocka_unit_test(radix_sort_matches_qsort),
		cmocka_unit_test(percentile_after_more_samples),
		cmocka_unit_test(mean_and_population_std),
		cmocka_unit_test(loghist_matches_samples),
		cmocka_unit_test(loghist_count_le_edges),
		cmocka_unit_test(loghist_zero_values),
		cmocka_unit_test(bounded_samples_sketch_error),
		cmocka_unit_test(loghist_short_scans_match_full_scan),
		cmocka_unit_test(short_scans_match_full_scan_on_random_histograms),
		cmocka_unit_test(add_n_is_n_adds),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
