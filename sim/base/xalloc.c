#include "xalloc.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void out_of_memory(size_t n)
{
	fprintf(stderr, "servesim: out of memory allocating %zu bytes\n", n);
	abort();
}

void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		out_of_memory(n);
	return p;
}

void *xcalloc(size_t count, size_t size)
{
	void *p = calloc(count ? count : 1, size ? size : 1);
	if (!p)
		out_of_memory(count * size);
	return p;
}

void *xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);
	if (!q)
		out_of_memory(n);
	return q;
}

char *xstrdup(const char *s)
{
	size_t n = strlen(s) + 1;
	return memcpy(xmalloc(n), s, n);
}

void xgrow_slow(void *p, size_t *cap, size_t need, size_t elem_size)
{
	void **arr = p;
	if (need <= *cap)
		return;
	size_t c = *cap ? *cap : 16;
	while (c < need)
		c *= 2;
	*arr = xrealloc(*arr, c * elem_size);
	*cap = c;
}

void xgrow_zeroed(void *p, size_t *cap, size_t need, size_t elem_size)
{
	size_t had = *cap;
	xgrow(p, cap, need, elem_size);
	memset((char *)*(void **)p + had * elem_size, 0, (*cap - had) * elem_size);
}

void xappendf(char **s, size_t *len, size_t *cap, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0) {   /* only an encoding error of the format itself */
		fputs("servesim: xappendf: cannot format\n", stderr);
		abort();
	}
	xgrow(s, cap, *len + (size_t)n + 1, 1);
	va_start(ap, fmt);
	vsnprintf(*s + *len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	*len += (size_t)n;
}
