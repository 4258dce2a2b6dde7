/*
 * numfmt: printf's and jansson's numbers, fast where that is exact
 * (numfmt.h says why it is).
 */
#include "numfmt.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

static const double p10[] = { 1e0, 1e1, 1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
			      1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15 };

/* round(s) for s = |v| * 10^k computed in one rounding (s >= 0, below
 * 2^52): false when s is within an ulp of a half, where the exact
 * product could round the other way. */
static bool round_exact(double s, uint64_t *n)
{
	double fl = floor(s), frac = s - fl;   /* exact below 2^52 */
	if (fabs(frac - 0.5) <= s * 0x1p-52 + 0x1p-1074)
		return false;
	*n = (uint64_t)fl + (frac > 0.5);
	return true;
}

/* The digits of x, at least width of them (zeros in front), at p;
 * returns their count. */
static int put_digits(char *p, uint64_t x, int width)
{
	char tmp[24];
	int n = 0;
	do {
		tmp[n++] = (char)('0' + x % 10);
		x /= 10;
	} while (x);
	while (n < width)
		tmp[n++] = '0';
	for (int i = 0; i < n; i++)
		p[i] = tmp[n - 1 - i];
	return n;
}

int numfmt_int(char *buf, int64_t x)
{
	char *p = buf;
	uint64_t u = (uint64_t)x;
	if (x < 0) {
		*p++ = '-';
		u = 0 - u;
	}
	p += put_digits(p, u, 1);
	*p = '\0';
	return (int)(p - buf);
}

int numfmt_fixed(char *buf, double v, int prec)
{
	double a = fabs(v);
	uint64_t n;
	if (prec < 0 || prec > 9 || !(a < 0x1p52 / p10[prec]) || !round_exact(a * p10[prec], &n))
		return snprintf(buf, NUMFMT_CAP, "%.*f", prec, v);
	char *p = buf;
	if (signbit(v))
		*p++ = '-';   /* printf's "-0.000" of a negative that rounds to 0 too */
	uint64_t scale = (uint64_t)p10[prec];
	p += put_digits(p, n / scale, 1);
	if (prec > 0) {
		*p++ = '.';
		p += put_digits(p, n % scale, prec);
	}
	*p = '\0';
	return (int)(p - buf);
}

/* jansson's own rendering (what the fast path must equal). */
static int json_real12_slow(char *buf, double v)
{
	json_t *r = json_real(v);
	size_t n = r ? json_dumpb(r, buf, NUMFMT_CAP - 1, JSON_ENCODE_ANY | JSON_REAL_PRECISION(12)) : 0;
	json_decref(r);
	if (n >= NUMFMT_CAP)
		n = 0;
	buf[n] = '\0';
	return (int)n;
}

int numfmt_json_real12(char *buf, double v)
{
	/* %.12g writes |v| with 12 significant digits, fixed-point while its
	 * decimal exponent X (of the rounded value) is in [-4, 11]: the fast
	 * path is that range, the rest goes to jansson. */
	double a = fabs(v);
	if (!(a >= 1e-4 && a < 1e11))
		return json_real12_slow(buf, v);
	int x = (int)floor(log10(a));
	if (x < -4)
		x = -4;
	if (x > 11)
		x = 11;
	double s = a * p10[11 - x];
	if (s < 1e11 && x > -4)   /* log10 a hair off at a power of ten */
		s = a * p10[11 - --x];
	else if (s >= 1e12 && x < 11)
		s = a * p10[11 - ++x];
	uint64_t n;
	if (s < 1e11 || s >= 1e12 || !round_exact(s, &n))
		return json_real12_slow(buf, v);
	if (n == (uint64_t)1e12) {   /* rounded up to the next power of ten */
		n = (uint64_t)1e11;
		if (++x > 11)
			return json_real12_slow(buf, v);
	}
	char d[12];
	put_digits(d, n, 12);
	int last = 11;   /* the last digit kept: %g drops trailing zeros */
	while (last > 0 && d[last] == '0' && last > x)
		last--;
	char *p = buf;
	if (v < 0)
		*p++ = '-';
	if (x >= 0) {
		memcpy(p, d, (size_t)x + 1);
		p += x + 1;
		if (last > x) {
			*p++ = '.';
			memcpy(p, d + x + 1, (size_t)(last - x));
			p += last - x;
		} else {
			memcpy(p, ".0", 2);   /* jansson: a real shows a point */
			p += 2;
		}
	} else {
		*p++ = '0';
		*p++ = '.';
		for (int i = 0; i < -x - 1; i++)
			*p++ = '0';
		memcpy(p, d, (size_t)last + 1);
		p += last + 1;
	}
	*p = '\0';
	return (int)(p - buf);
}
