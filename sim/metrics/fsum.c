/*
 * fsum: n equal additions in O(binades crossed) (fsum.h).
 *
 * Why it is exact: while acc and its sum stay in one binade [2^(e-1),
 * 2^e), every double there is an integer multiple of u = 2^(e-53), so with
 * acc = S u, acc + v rounds to (S + round(v / u)) u: the same increment R u
 * every time, unless v / u ends in exactly one half (a tie, which rounds
 * to even and so depends on S: done one at a time). The first addition is
 * done as the loop does it; R comes from it (next - acc is exact: within a
 * factor two of each other, Sterbenz); then as many more as keep S + R
 * below 2^53 are S += R in integers. Where acc is below v, signs differ, a
 * value is not finite or so small or large that u would not be a normal
 * double, the additions are the loop's, one at a time.
 */
#include "fsum.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

static uint64_t bits_of(double x)
{
	uint64_t b;
	memcpy(&b, &x, sizeof b);
	return b;
}

static double of_bits(uint64_t b)
{
	double x;
	memcpy(&x, &b, sizeof x);
	return x;
}

#define MANT (((uint64_t)1 << 52) - 1)

double fsum_repeat_long(double acc, double v, size_t n)
{
	while (n) {
		if (n < FSUM_LONG || !(v > 0 && acc >= v && acc >= 0x1p-960 && acc < 0x1p1000)) {
			/* (v == +0 leaves acc alone unless acc is -0: the loop.) */
			acc += v;
			n--;
			continue;
		}
		/* acc = s u with s in [2^52, 2^53): its exponent field and its
		 * significand with the implicit bit; u = 2^(exp - 1075). */
		uint64_t ea = bits_of(acc) >> 52;
		double next = acc + v;
		n--;
		uint64_t bn = bits_of(next);
		if (bn >> 52 != ea) {
			acc = next;                   /* crossed into the next binade */
			continue;
		}
		double u = of_bits((ea - 52) << 52), r = next - acc;
		if (fabs(v - r) == 0.5 * u) {
			acc = next;                   /* a tie: to even, by s */
			continue;
		}
		uint64_t s = (bn & MANT) | (MANT + 1), step = s - ((bits_of(acc) & MANT) | (MANT + 1));
		if (step == 0)
			return next;                  /* v rounds away: acc stays */
		uint64_t m = (2 * (MANT + 1) - 1 - s) / step;
		if (m > n)
			m = n;
		s += m * step;
		n -= m;
		acc = of_bits(ea << 52 | (s & MANT));
	}
	return acc;
}
