/*
 * xalloc: allocation that cannot fail. Out of memory is not an input error
 * the simulator can recover from, so these print one line and abort.
 */
#ifndef SERVESIM_XALLOC_H
#define SERVESIM_XALLOC_H

#include <stddef.h>

void *xmalloc(size_t n);
void *xcalloc(size_t count, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);

/* Grows *p (an array of elem_size elements with capacity *cap) to hold at
 * least need elements, doubling. */
void xgrow_slow(void *p, size_t *cap, size_t need, size_t elem_size);
static inline void xgrow(void *p, size_t *cap, size_t need, size_t elem_size)
{
	if (need > *cap)   /* inline: most calls, once per step or token, need nothing */
		xgrow_slow(p, cap, need, elem_size);
}
/* xgrow, with every element it adds zeroed. */
void xgrow_zeroed(void *p, size_t *cap, size_t need, size_t elem_size);

/* Appends printf(fmt, ...) to the string *s of length *len in a buffer of
 * capacity *cap (grown with xgrow; NUL-terminated after). No length limit:
 * a number of 309 digits fits as well as one of 3. */
void xappendf(char **s, size_t *len, size_t *cap, const char *fmt, ...) __attribute__((format(printf, 4, 5)));

#endif
