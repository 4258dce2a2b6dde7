/*
 * numfmt: numbers as text for the per-request writers (requests.csv,
 * --save-detailed's arrays), byte for byte what printf and jansson write,
 * at a fraction of their cost (issue 14: printf's exact decimal expansion
 * was a fifth of a 1M-request run with --out).
 *
 * How it stays exact: the digits wanted are round(|v| * 10^k) for a k that
 * puts them left of the point. 10^k (k <= 15) is exact, so the product is
 * one rounding away from the exact value: within half its ulp. Where its
 * fraction is further than an ulp from one half, rounding the product
 * rounds the exact value the same way, and the digits are printf's.
 * Nearer a half (a tie or a value that could be on either side), and
 * outside the ranges below, the numbers go to snprintf itself. So every
 * output is printf's (tests/test_numfmt.c: random doubles and the
 * near-ties, both ways, byte for byte).
 *
 * Invariants: no state; every function writes a NUL-terminated string
 * into buf (NUMFMT_CAP bytes suffice) and returns its length.
 */
#ifndef SERVESIM_NUMFMT_H
#define SERVESIM_NUMFMT_H

#include <stddef.h>
#include <stdint.h>

/* The longest output plus its NUL: "%.9f" of -DBL_MAX is 320 bytes (309
 * digits before the point), which snprintf, numfmt_fixed's way out of
 * its fast range, writes whole. */
enum { NUMFMT_CAP = 321 };

/* v as snprintf's "%.*f" with prec in 0..9 writes it. */
int numfmt_fixed(char *buf, double v, int prec);

/* v as jansson writes a real at JSON_REAL_PRECISION(12): "%.12g", then
 * ".0" when neither a point nor an exponent shows, the exponent without
 * '+' or leading zeros. */
int numfmt_json_real12(char *buf, double v);

/* x in decimal, as "%lld". */
int numfmt_int(char *buf, int64_t x);

#endif
