/*
 * num: strict parsing of numbers and booleans from text (INI values, flags,
 * trace fields). The whole string must be the number, surrounding blanks
 * aside; no trailing junk, no empty strings, no NaN, and decimal only (no
 * C hexadecimal float such as 0x1p3, which Python's float() refuses too).
 * Each returns 0 on success and -1 (leaving *out untouched) otherwise;
 * they never print.
 */
#ifndef SERVESIM_NUM_H
#define SERVESIM_NUM_H

#include <stdbool.h>
#include <stdint.h>

/* Units: one name for each factor (STYLE "Named constants for units"). */
#define GIB 1073741824.0          /* bytes in a GiB (2^30) */
#define MIB (1024.0 * 1024.0)     /* bytes in a MiB (2^20) */
#define NS_PER_S 1000000000LL     /* nanoseconds in a second */

int num_parse_double(const char *s, double *out);     /* also "inf" */
int num_parse_int64(const char *s, int64_t *out);
int num_parse_bool(const char *s, bool *out);         /* true/false/yes/no/on/off/1/0 */

#endif
