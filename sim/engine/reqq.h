/*
 * reqq: a queue of request indices (a ring buffer that grows), for the
 * engines' waiting queues. Push and pop at either end are O(1) amortized;
 * removing from the middle is O(len).
 *
 * Invariant: len <= cap; the elements are v[(head + k) % cap], k < len.
 */
#ifndef SERVESIM_REQQ_H
#define SERVESIM_REQQ_H

#include <stddef.h>

struct reqq {
	size_t *v;
	size_t cap, head, len;
};

/* Cannot fail (aborts on OOM). */
void reqq_push_back(struct reqq *q, size_t x);
void reqq_push_front(struct reqq *q, size_t x);

/* The k-th element from the front (k < len). */
static inline size_t *reqq_at(const struct reqq *q, size_t k)
{
	return &q->v[(q->head + k) % q->cap];
}

static inline size_t reqq_front(const struct reqq *q)
{
	return *reqq_at(q, 0);
}

/* Drops the front element (len > 0). */
static inline void reqq_pop_front(struct reqq *q)
{
	q->head = (q->head + 1) % q->cap;
	q->len--;
}

/* Removes x, which must be present (once). O(len). */
void reqq_remove(struct reqq *q, size_t x);

void reqq_free(struct reqq *q);

#endif
