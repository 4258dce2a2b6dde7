/*
 * kvhold: a finished request's blocks, kept until released.
 */
#include "kvhold.h"

#include <stdlib.h>

#include "xalloc.h"

void kvhold_put(struct kvhold *h, size_t idx, struct request *r)
{
	if (!r->n_blocks)
		return;
	xgrow(&h->v, &h->cap, h->len + 1, sizeof *h->v);
	h->v[h->len++] = (struct kvhold_entry){ .req = idx, .blocks = r->blocks, .n_blocks = r->n_blocks };
	h->n_blocks += r->n_blocks;
	r->blocks = NULL;
	r->n_blocks = r->cap_blocks = 0;
	r->n_hashed = 0;
}

int64_t kvhold_release(struct kvhold *h, size_t idx, struct kvpool *pool)
{
	for (size_t i = 0; i < h->len; i++) {
		struct kvhold_entry *en = &h->v[i];
		if (en->req != idx)
			continue;
		int64_t n = en->n_blocks;
		kvpool_release_all(pool, en->blocks, en->n_blocks);   /* last block first */
		free(en->blocks);
		h->n_blocks -= n;
		h->v[i] = h->v[--h->len];
		return n;
	}
	return 0;
}

void kvhold_free(struct kvhold *h)
{
	for (size_t i = 0; i < h->len; i++)
		free(h->v[i].blocks);
	free(h->v);
	*h = (struct kvhold){ 0 };
}
