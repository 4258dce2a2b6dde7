/*
 * fsum: n additions of one value to a running double sum, with the bits of
 * adding it n times in order, without n additions. The run's histograms
 * (the ITL log histogram's sum and sum of squares, the time line's window
 * sums) add a fast-forwarded step's n equal token gaps one by one, so that
 * their bits are the reference's; at a thousand lazy requests a step that
 * loop was 3% of the benchmark.
 *
 * Invariant: fsum_repeat(acc, v, n) == the result of `for n: acc += v`,
 * bit for bit, for every acc, v and n (test_fsum checks it against the loop
 * over sums of every scale, ties, binade crossings, zeros, negatives and
 * non-finite values).
 */
#ifndef SERVESIM_FSUM_H
#define SERVESIM_FSUM_H

#include <stddef.h>

#define FSUM_LONG 8   /* fewer additions: the loop */

double fsum_repeat_long(double acc, double v, size_t n);

/* A few additions inline (most steps of a low rate add one gap); more,
 * fsum_repeat_long. */
static inline double fsum_repeat(double acc, double v, size_t n)
{
	if (n == 1)
		return acc + v;
	if (n >= FSUM_LONG)
		return fsum_repeat_long(acc, v, n);
	for (size_t k = 0; k < n; k++)
		acc += v;
	return acc;
}

#endif
