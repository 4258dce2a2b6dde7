/*
 * iround: llround(x) without the libm call, for the per-step conversions
 * of seconds to nanoseconds (a call a step was 1.5% of a rate-1 sweep
 * point each time: evq_duration_ns, overhead_output_ns).
 *
 * What it owns: one inline function, iround(x) == llround(x) for every
 * double x, bit for bit (tests/test_evq.c, duration_rounds_as_llround and
 * iround_is_llround). Cannot fail; out of llround's range (or NaN) its
 * answer is llround's own, whatever the platform gives.
 */
#ifndef SERVESIM_IROUND_H
#define SERVESIM_IROUND_H

#include <math.h>
#include <stdint.h>

/* For |x| < 2^52 the truncation is exact, so is the fraction x - t (x and
 * t are within 1 of each other and share x's exponent or less), and a
 * fraction of at least one half rounds away from zero, as llround does.
 * Beyond (or NaN, infinite) llround itself. */
static inline int64_t iround(double x)
{
	if (!(x > -0x1p52 && x < 0x1p52))
		return (int64_t)llround(x);
	int64_t t = (int64_t)x;
	double f = x - (double)t;
	return t + (f >= 0.5) - (f <= -0.5);
}

#endif
