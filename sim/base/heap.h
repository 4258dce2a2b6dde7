/*
 * heap: a binary min-heap of plain records in a growing array, generated
 * for one record type and its order (libuv's src/heap-inl.h algorithm,
 * typed). One instance:
 *
 *     HEAP_DEFINE(evheap, struct event, before)
 *
 * defines, static inline,
 *     void evheap_push(struct event **v, size_t *len, size_t *cap,
 *                      const struct event *x);   adds *x (grows v: xgrow)
 *     void evheap_pop(struct event *v, size_t *len);   removes v[0]
 * where before(a, b) (const T *, const T *) -> bool is a strict order.
 * v[0] is the least record; the caller reads it directly.
 *
 * Invariant: no v[i] is before its parent v[(i - 1) / 2]. Equal records
 * come out in no particular order, so the order must break every tie
 * itself (the event queue's seq, the settle heap's request id).
 *
 * A macro rather than one heap over void * with a comparison function:
 * the event queue is the simulator's hottest loop, and its comparison and
 * its 32-byte record copies must inline into push and pop. Neither can
 * fail (out of memory aborts in xgrow).
 */
#ifndef SERVESIM_HEAP_H
#define SERVESIM_HEAP_H

#include <stddef.h>

#include "xalloc.h"

#define HEAP_DEFINE(prefix, T, before)                                                      \
	static inline void prefix##_push(T **v, size_t *len, size_t *cap, const T *x)        \
	{                                                                                   \
		xgrow(v, cap, *len + 1, sizeof **v);                                        \
		T *h = *v;                                                                  \
		size_t i = (*len)++;                                                        \
		while (i > 0 && before(x, &h[(i - 1) / 2])) {                               \
			h[i] = h[(i - 1) / 2];                                              \
			i = (i - 1) / 2;                                                    \
		}                                                                           \
		h[i] = *x;                                                                  \
	}                                                                                   \
	static inline void prefix##_pop(T *h, size_t *len)                                  \
	{                                                                                   \
		T last = h[--*len];                                                         \
		size_t i = 0, n = *len;                                                     \
		for (;;) {                                                                  \
			size_t c = 2 * i + 1;                                               \
			if (c >= n)                                                         \
				break;                                                      \
			if (c + 1 < n && before(&h[c + 1], &h[c]))                          \
				c++;                                                        \
			if (!before(&h[c], &last))                                          \
				break;                                                      \
			h[i] = h[c];                                                        \
			i = c;                                                              \
		}                                                                           \
		if (n)                                                                      \
			h[i] = last;                                                        \
	}

#endif
