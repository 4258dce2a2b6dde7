#include "request.h"

#include <stdlib.h>
#include <string.h>

#include "xalloc.h"

size_t reqtab_add(struct reqtab *t)
{
	size_t i;
	if (t->n_free) {
		i = t->free_idx[--t->n_free];
	} else {
		xgrow(&t->v, &t->cap, t->len + 1, sizeof *t->v);
		i = t->len++;
	}
	struct request *r = &t->v[i];
	memset(r, 0, sizeof *r);
	r->conversation = -1;
	r->first_scheduled_ns = -1;
	r->first_token_ns = -1;
	r->first_launch_ns = -1;
	r->id = t->made++;
	return i;
}

void reqtab_recycle(struct reqtab *t, size_t idx)
{
	free(t->v[idx].blocks);
	t->v[idx].blocks = NULL;
	xgrow(&t->free_idx, &t->cap_free, t->n_free + 1, sizeof *t->free_idx);
	t->free_idx[t->n_free++] = idx;
}

void reqtab_free(struct reqtab *t)
{
	for (size_t i = 0; i < t->len; i++)
		free(t->v[i].blocks);
	free(t->v);
	free(t->free_idx);
	*t = (struct reqtab){ 0 };
}
