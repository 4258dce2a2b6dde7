/*
 * kvhold: KV blocks a finished request still holds, by request, until the
 * one who needs them says they may go (vLLM's delayed free: with P/D
 * disaggregation the prefill side's NixlConnector keeps a finished
 * request's blocks until the decode side has read them, request_finished
 * returning delay_free_blocks, and frees them when get_finished reports
 * the send done).
 *
 * Invariants: an entry owns its block array and one pool reference per
 * block; a request has at most one entry. Lookups are O(entries): a pool
 * holds as many as there are transfers in flight.
 */
#ifndef SERVESIM_KVHOLD_H
#define SERVESIM_KVHOLD_H

#include <stddef.h>
#include <stdint.h>

#include "kvpool.h"
#include "request.h"

struct kvhold_entry {
	size_t req;
	int32_t *blocks;             /* owned */
	int32_t n_blocks;
};

struct kvhold {
	struct kvhold_entry *v;
	size_t len, cap;
	int64_t n_blocks;            /* held, over every entry */
};

/* Moves r's blocks (request index idx) into h: r is left without blocks
 * (n_blocks, cap_blocks, n_hashed 0, blocks NULL), the pool references
 * pass to h. Cannot fail. */
void kvhold_put(struct kvhold *h, size_t idx, struct request *r);

/* Releases request idx's held blocks into pool, last block first as
 * vLLM frees them (so a cached prompt's tail is evicted first); returns
 * how many. No entry: a no-op returning 0. */
int64_t kvhold_release(struct kvhold *h, size_t idx, struct kvpool *pool);

/* Frees h's memory (not the pool references: the pool is going too). */
void kvhold_free(struct kvhold *h);

#endif
