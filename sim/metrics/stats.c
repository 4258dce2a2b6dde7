#include "stats.h"

#include <math.h>
#include <stdlib.h>

#include "xalloc.h"

void samples_add(struct samples *s, double v)
{
	xgrow(&s->v, &s->cap, s->n + 1, sizeof *s->v);
	s->v[s->n++] = v;
	s->sorted = 0;
}

void samples_free(struct samples *s)
{
	free(s->v);
	*s = (struct samples){ 0 };
}

double samples_mean(const struct samples *s)
{
	if (!s->n)
		return 0;
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
	for (size_t i = 0; i < s->n; i++)
		acc += (s->v[i] - m) * (s->v[i] - m);
	return sqrt(acc / (double)s->n);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

double samples_percentile(struct samples *s, double p)
{
	if (!s->n)
		return 0;
	if (!s->sorted) {
		qsort(s->v, s->n, sizeof *s->v, cmp_double);
		s->sorted = 1;
	}
	double rank = p / 100 * (double)(s->n - 1);
	size_t lo = (size_t)floor(rank);
	size_t hi = lo + 1 < s->n ? lo + 1 : lo;
	double frac = rank - (double)lo;
	return s->v[lo] + (s->v[hi] - s->v[lo]) * frac;
}

/* Buckets: values are in seconds; we index v·2^40 (about picoseconds) by
 * exponent and 11 mantissa bits. Exponents 0..63 of the scaled value. */
#define SUB_BITS 11
#define SUBS (1 << SUB_BITS)
#define EXPS 64
#define SCALE 1099511627776.0   /* 2^40 */

static size_t bucket_of(double v)
{
	double x = v * SCALE;
	if (x < 1)
		return 0;
	int e;
	double f = frexp(x, &e);            /* x = f·2^e, f in [0.5, 1) */
	if (e >= EXPS)
		return (size_t)EXPS * SUBS - 1;
	size_t sub = (size_t)((f - 0.5) * 2 * SUBS);
	return (size_t)e * SUBS + sub;
}

static double bucket_mid(size_t b)
{
	size_t e = b / SUBS, sub = b % SUBS;
	if (e == 0)
		return 0;
	double lo = ldexp(0.5 + (double)sub / (2.0 * SUBS), (int)e);
	double hi = ldexp(0.5 + (double)(sub + 1) / (2.0 * SUBS), (int)e);
	return (lo + hi) / 2 / SCALE;
}

void loghist_add(struct loghist *h, double v)
{
	if (!h->counts)
		h->counts = xcalloc((size_t)EXPS * SUBS, sizeof *h->counts);
	h->counts[bucket_of(v)]++;
	if (h->n == 0 || v < h->min)
		h->min = v;
	if (h->n == 0 || v > h->max)
		h->max = v;
	h->n++;
	h->sum += v;
	h->sumsq += v * v;
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

/* The value of order statistic k (0-based): its bucket's midpoint, clamped
 * to the exact min and max. */
static double order_stat(const struct loghist *h, int64_t k)
{
	if (k <= 0)
		return h->min;
	if (k >= h->n - 1)
		return h->max;
	int64_t seen = 0;
	for (size_t b = 0; b < (size_t)EXPS * SUBS; b++) {
		seen += h->counts[b];
		if (seen > k) {
			double v = bucket_mid(b);
			return v < h->min ? h->min : v > h->max ? h->max : v;
		}
	}
	return h->max;
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

int64_t loghist_count_le(const struct loghist *h, double edge)
{
	if (!h->n)
		return 0;
	int64_t c = 0;
	for (size_t b = 0; b < (size_t)EXPS * SUBS; b++)
		if (h->counts[b] && bucket_mid(b) <= edge)
			c += h->counts[b];
	return c;
}
