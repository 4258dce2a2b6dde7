/*
 * fsum: fsum_repeat(acc, v, n) is the loop `for n: acc += v`, bit for bit
 * (compared as integers, so -0 and NaN payloads count), over sums of every
 * scale, values from far below a sum's ulp to the sum itself, exact ties
 * (v an odd multiple of half the ulp), runs that cross many binades, zeros
 * of both signs, negative and non-finite values.
 */
#include "testutil.h"

#include <string.h>

#include "fsum.h"

static uint64_t lcg_next(uint64_t *s)
{
	*s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
	return *s >> 11;
}

static uint64_t bits(double x)
{
	uint64_t b;
	memcpy(&b, &x, sizeof b);
	return b;
}

static double loop_sum(double acc, double v, size_t n)
{
	for (size_t k = 0; k < n; k++)
		acc += v;
	return acc;
}

static void check(double acc, double v, size_t n)
{
	double want = loop_sum(acc, v, n), got = fsum_repeat(acc, v, n);
	if (bits(want) != bits(got))
		fail_msg("acc %a v %a n %zu: loop %a, fsum %a", acc, v, n, want, got);
}

static void matches_the_loop(void **state)
{
	(void)state;
	uint64_t rng = 2026;
	for (int i = 0; i < 20000; i++) {
		double r1 = (double)lcg_next(&rng) * 0x1p-53, r2 = (double)lcg_next(&rng) * 0x1p-53;
		uint64_t k = lcg_next(&rng);
		double acc = ldexp(0.5 + r1 / 2, (int)(k % 80) - 40);
		int e;
		(void)frexp(acc, &e);
		double v;
		switch (k % 6) {
		case 0: v = acc * r2; break;                                   /* below acc */
		case 1: v = ldexp(r2, e - 60 + (int)(k % 20)); break;          /* near the ulp */
		case 2: v = ldexp((double)(2 * (k % 1000) + 1), e - 54); break; /* a tie */
		case 3: v = acc * (1 + r2 * 3); break;                         /* above acc */
		case 4: v = ldexp(r2, e - 30); break;                          /* a token gap's scale */
		default: v = (k & 64) ? -acc * r2 : acc; break;               /* negative; v = acc */
		}
		if (k & 128)
			acc = 0;                                               /* a sum's start */
		size_t n = (size_t)(lcg_next(&rng) % 3000);
		check(acc, v, n);
	}
	/* Many binades: from one value, a million times. */
	check(0.0, 0.1, 1000000);
	check(1e-9, 3e-3, 1000000);
	check(1.0, 0x1p-53, 100000);        /* a tie that rounds to even: 1.0 stays */
	check(1.0 + 0x1p-52, 0x1p-53, 100000);
	check(0x1p-1000, 0x1p-1010, 5000);   /* too small for the fast path */
	check(0x1p1020, 0x1p1000, 5000);     /* toward overflow */
	check(-0.0, 0.0, 100);
	check(-0.0, -0.0, 100);
	check(0.0, -0.0, 100);
	check(5.0, 0.0, 100);
	check(1.0, INFINITY, 10);
	check(INFINITY, -INFINITY, 10);
	check(NAN, 1.0, 10);
	check(1.0, NAN, 10);
	check(1.0, 1.0, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(matches_the_loop),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
