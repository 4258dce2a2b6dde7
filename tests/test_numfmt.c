/*
 * numfmt: the fast number writers give printf's and jansson's bytes. Each
 * is compared with the library it stands in for on random doubles of
 * every scale and sign, on the run's own values (whole nanoseconds in
 * seconds), and on the hard cases: values within an ulp of a rounding
 * half, powers of ten and their neighbours, numbers that round up to the
 * next power of ten, zeros and values outside the fast ranges. A wrong
 * digit, a rounding one way instead of the other, a missing ".0" or a
 * dropped minus sign fails a strcmp.
 */
#include "testutil.h"

#include <float.h>

#include <jansson.h>

#include "numfmt.h"

static uint64_t rng_state = 14;

/* splitmix64: 64 random bits. */
static uint64_t next64(void)
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static double uniform(void)
{
	return (double)(next64() >> 11) * 0x1p-53;
}

static void check_fixed(double v, int prec)
{
	char want[512], got[NUMFMT_CAP];
	int wn = snprintf(want, sizeof want, "%.*f", prec, v);
	assert_true(wn < NUMFMT_CAP);   /* what numfmt.h promises a buffer of NUMFMT_CAP holds */
	int gn = numfmt_fixed(got, v, prec);
	if (strcmp(want, got) || wn != gn)
		fail_msg("%%.%df of %.17g (%a): printf '%s', numfmt '%s'", prec, v, v, want, got);
}

static void check_real(double v)
{
	char want[NUMFMT_CAP], got[NUMFMT_CAP];
	json_t *r = json_real(v);
	size_t wn = json_dumpb(r, want, sizeof want - 1, JSON_ENCODE_ANY | JSON_REAL_PRECISION(12));
	json_decref(r);
	want[wn] = '\0';
	int gn = numfmt_json_real12(got, v);
	if (strcmp(want, got) || (int)wn != gn)
		fail_msg("real of %.17g (%a): jansson '%s', numfmt '%s'", v, v, want, got);
}

/* Values of the kinds the writers see, and the hard ones around them. */
static double sample(int kind)
{
	switch (kind) {
	case 0:   /* a time: whole ns in seconds, up to a day */
		return (double)(int64_t)(uniform() * 8.64e13) / 1e9;
	case 1:   /* any scale from 1e-8 to 1e14, either sign */
		return (next64() & 1 ? -1 : 1) * pow(10, uniform() * 22 - 8);
	case 2: { /* within a few ulps of a half at 9 or 12 digits */
		double k = next64() & 1 ? 1e9 : 1e12, m = floor(uniform() * 1e6) + 0.5;
		double x = m / k;
		int64_t steps = (int64_t)(next64() % 7) - 3;
		for (; steps > 0; steps--)
			x = nextafter(x, INFINITY);
		for (; steps < 0; steps++)
			x = nextafter(x, 0);
		return x;
	}
	case 3: { /* a power of ten, or next to it, or rounding up to it */
		double p = pow(10, (double)((int)(next64() % 20) - 6));
		switch (next64() % 4) {
		case 0: return p;
		case 1: return nextafter(p, 0);
		case 2: return nextafter(p, INFINITY);
		default: return p * (1 - 1e-13);
		}
	}
	case 4:   /* short decimals: trailing zeros to drop */
		return (double)(int64_t)(uniform() * 1e6) / 1e3;
	default:  /* random bits (NaN, infinities and subnormals included) */
		{
			uint64_t b = next64();
			double x;
			memcpy(&x, &b, sizeof x);
			return x;
		}
	}
}

static void fixed_matches_printf(void **state)
{
	(void)state;
	const double special[] = { 0.0, -0.0, 0.5, 1.5, 2.5, -0.5, 0.0005, 0.00049999999999999, 1e-320,
				   -1e-320, 4503599627370495.5, 1e15, 1e300, -DBL_MAX, INFINITY, -INFINITY, NAN };
	for (size_t i = 0; i < sizeof special / sizeof *special; i++)
		for (int prec = 0; prec <= 9; prec++)
			check_fixed(special[i], prec);
	for (int i = 0; i < 300000; i++) {
		double v = sample(i % 6);
		check_fixed(v, i % 3 == 0 ? 9 : i % 3 == 1 ? 6 : 3);
		if (i % 16 == 0)
			check_fixed(v, (int)(next64() % 10));
	}
}

static void json_real_matches_jansson(void **state)
{
	(void)state;
	const double special[] = { 0.0, -0.0, 1.0, -1.0, 0.1, 1e-4, 9.99999999999949e-5, 99999999999.99,
				   1e11, 1e12, 123456789012.5, 0.000123456789012345, 1e-5, 5e-324,
				   1.7976931348623157e308, 100, 1e10, 0.30000000000000004 };
	for (size_t i = 0; i < sizeof special / sizeof *special; i++)
		check_real(special[i]);
	for (int i = 0; i < 300000; i++) {
		double v = sample(i % 6);
		if (isfinite(v))
			check_real(v);
	}
}

static void ints_match_printf(void **state)
{
	(void)state;
	const int64_t special[] = { 0, 1, -1, 9, 10, -10, INT64_MAX, INT64_MIN, 1000000000000LL };
	char want[32], got[32];
	for (size_t i = 0; i < sizeof special / sizeof *special + 10000; i++) {
		int64_t x = i < sizeof special / sizeof *special ? special[i]
								 : (int64_t)next64() >> (next64() % 64);
		snprintf(want, sizeof want, "%lld", (long long)x);
		numfmt_int(got, x);
		assert_string_equal(want, got);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(fixed_matches_printf),
		cmocka_unit_test(json_real_matches_jansson),
		cmocka_unit_test(ints_match_printf),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
