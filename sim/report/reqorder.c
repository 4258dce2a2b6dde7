/*
 * reqorder: rows by request id, held while an earlier id runs (reqorder.h).
 */
#include "reqorder.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "xalloc.h"

bool reqorder_due(const struct reqorder *o, int64_t id)
{
	return id == o->next;
}

void reqorder_hold(struct reqorder *o, int64_t id, char *row)
{
	assert(id > o->next);
	if ((uint64_t)(id - o->next) >= o->cap) {
		size_t cap = o->cap ? o->cap : 64;
		while ((uint64_t)(id - o->next) >= cap)
			cap *= 2;
		char **held = xcalloc(cap, sizeof *held);
		for (size_t k = 0; k < o->cap; k++) {
			int64_t i = o->next + (int64_t)k;
			held[(size_t)i & (cap - 1)] = o->held[(size_t)i & (o->cap - 1)];
		}
		free(o->held);
		o->held = held;
		o->cap = cap;
	}
	o->held[(size_t)id & (o->cap - 1)] = row;
	o->n_held++;
}

void reqorder_done(struct reqorder *o, void (*put)(void *ctx, const char *row), void *ctx)
{
	o->next++;
	while (o->n_held && o->held[(size_t)o->next & (o->cap - 1)]) {
		char **row = &o->held[(size_t)o->next & (o->cap - 1)];
		put(ctx, *row);
		free(*row);
		*row = NULL;
		o->n_held--;
		o->next++;
	}
}

void reqorder_free(struct reqorder *o)
{
	for (size_t k = 0; k < o->cap; k++)
		free(o->held[k]);
	free(o->held);
	memset(o, 0, sizeof *o);
}
