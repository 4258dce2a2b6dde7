/*
 * reqq: the growing ring buffer of request indices.
 */
#include "reqq.h"

#include <assert.h>
#include <stdlib.h>

#include "xalloc.h"

static void grow(struct reqq *q)
{
	if (q->len < q->cap)
		return;
	size_t ncap = q->cap ? 2 * q->cap : 64;
	size_t *nv = xmalloc(ncap * sizeof *nv);
	for (size_t i = 0; i < q->len; i++)
		nv[i] = q->v[(q->head + i) % q->cap];
	free(q->v);
	q->v = nv;
	q->cap = ncap;
	q->head = 0;
}

void reqq_push_back(struct reqq *q, size_t x)
{
	grow(q);
	q->v[(q->head + q->len++) % q->cap] = x;
}

void reqq_push_front(struct reqq *q, size_t x)
{
	grow(q);
	q->head = (q->head + q->cap - 1) % q->cap;
	q->v[q->head] = x;
	q->len++;
}

void reqq_remove(struct reqq *q, size_t x)
{
	size_t i = 0;
	while (i < q->len && *reqq_at(q, i) != x)
		i++;
	assert(i < q->len);
	for (; i + 1 < q->len; i++)
		*reqq_at(q, i) = *reqq_at(q, i + 1);
	q->len--;
}

void reqq_free(struct reqq *q)
{
	free(q->v);
	*q = (struct reqq){ 0 };
}
