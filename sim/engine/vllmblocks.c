/*
 * vllmblocks: a vLLM V1 request's KV blocks as the prefix cache sees them
 * (vllm/v1/core/kv_cache_manager.py, block_pool.py), over the pool of
 * kvpool.c: the content hash of each block, registering the blocks a
 * request fills, the prefix lookups (GPU blocks, then the CPU tier), and
 * releasing a request's blocks.
 *
 * Invariants: a block's hash depends only on its request's keys and its
 * position, so equal keys up to a block mean equal chained hashes; 0 is
 * never a hash; r->n_hashed <= r->n_blocks, and r's first n_hashed blocks
 * are registered; private blocks (only r could hit them) stay out of the
 * prefix table until a preemption publishes them.
 */
#include <stdlib.h>

#include "simassert.h"
#include "vllm_int.h"
#include "xalloc.h"

/* splitmix64's finalizer: a bijection on 64-bit words. */
static uint64_t scramble(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	x ^= x >> 31;
	return x;
}

/* Combines a key and a value; 0 is kept free for "no hash". */
static uint64_t mix(uint64_t a, uint64_t b)
{
	uint64_t x = scramble(a ^ scramble(b + 0x9e3779b97f4a7c15ULL));
	return x ? x : 1;
}

/* The content hash of block j of r. Identity is positional within a key,
 * so equal keys up to a block mean equal chained hashes, as vLLM's
 * hash(parent, tokens) chain gives. */
uint64_t vllm_block_hash(const struct request *r, int64_t j, int64_t bs)
{
	int64_t start = j * bs, end = start + bs;
	if (r->n_block512 > 0 && end <= (int64_t)r->n_block512 * 512) {
		uint64_t a = r->block512[start / 512], b = r->block512[(end - 1) / 512];
		return mix(mix(a, b), (uint64_t)start);
	}
	if (end <= r->shared_len)
		return mix(r->shared_key, (uint64_t)j);
	return mix(r->own_key, (uint64_t)j);
}
/* The first block of r that only r itself could ever hit (block_hash
 * of own_key, which a request outside a conversation has alone), or
 * INT64_MAX when every block may be shared. A preempted request's blocks
 * are all findable: it may come back for them. */
int64_t vllm_first_private_block(const struct request *r, int64_t bs)
{
	if (r->conversation >= 0 || r->preemptions > 0)
		return INT64_MAX;
	int64_t shared = r->shared_len;
	if ((int64_t)r->n_block512 * 512 > shared)
		shared = (int64_t)r->n_block512 * 512;
	return shared / bs;   /* the first block that ends past the shared part */
}

void vllm_note_private(struct request *r, int64_t bs)
{
	int64_t p = vllm_first_private_block(r, bs);
	r->first_private = p < INT32_MAX ? (int32_t)p : INT32_MAX;
}

/* Registers the hashes of r's blocks that the first tokens fill, once
 * vllm_cache_full_blocks (vllm_int.h) has seen caching on and a block
 * filled. Private blocks (vllm_first_private_block) stay out of the prefix
 * table until a preemption publishes them (vllm_publish_blocks). */
void vllm_cache_full_blocks_slow(struct engine *g, struct request *r, int64_t tokens)
{
	int64_t full = tokens / g->block_size;
	int64_t priv = r->first_private;
	/* A private block's hash is read only when a preemption publishes it
	 * (vllm_publish_blocks names it then), unless a CPU tier takes it at
	 * eviction. Without one, a private block is only counted
	 * (n_hashed): its release makes it the stand-in of a cached block
	 * (vllm_free_blocks), and nothing reads it before. */
	bool stand_in = !kvpool_reads_private_hashes(g->pool);
	int64_t end = full < r->n_blocks ? full : r->n_blocks;
	if (stand_in && r->n_hashed >= priv && end > r->n_hashed) {
		r->n_hashed = (int32_t)end;   /* every block to register is private */
		return;
	}
	for (int64_t j = r->n_hashed; j < end; j++) {
		if (j < priv)
			kvpool_set_hash(g->pool, r->blocks[j], vllm_block_hash(r, j, g->block_size));
		else if (!stand_in)
			kvpool_set_private_hash(g->pool, r->blocks[j], vllm_block_hash(r, j, g->block_size));
	}
	if (end > r->n_hashed)
		r->n_hashed = (int32_t)end;
}

/* The private blocks r has registered, [first_private, n_hashed), when
 * they carry no mark (no CPU tier: vllm_cache_full_blocks only counts
 * them); else 0. */
static int64_t unmarked_private(const struct engine *g, const struct request *r, int64_t *from)
{
	*from = r->first_private;
	if (!g->caching || kvpool_reads_private_hashes(g->pool) || *from >= r->n_hashed)
		return 0;
	return r->n_hashed - *from;
}

void vllm_publish_blocks(struct engine *g, struct request *r)
{
	bool named = kvpool_reads_private_hashes(g->pool);
	for (int32_t j = 0; j < r->n_hashed; j++) {
		if (!named && j >= r->first_private)
			kvpool_set_private_hash(g->pool, r->blocks[j], vllm_block_hash(r, j, g->block_size));
		kvpool_publish(g->pool, r->blocks[j]);
	}
	/* Published: none of its blocks is private any more (vllm_free_blocks
	 * releases them one by one, with their hashes). */
	r->first_private = INT32_MAX;
}

void vllm_mark_private(struct engine *g, struct request *r)
{
	int64_t from, n = unmarked_private(g, r, &from);
	if (n > 0)
		kvpool_set_stand_ins(g->pool, r->blocks + from, n);
}

void vllm_free_blocks(struct engine *g, struct request *r)
{
	/* Last block first, as kvpool_release_all: the unhashed tail, the
	 * private blocks as one run (their stand-ins), then the rest. */
	int64_t from, n = unmarked_private(g, r, &from);
	if (n > 0) {
		int32_t to = (int32_t)(from + n);
		kvpool_release_all(g->pool, r->blocks + to, r->n_blocks - to);
		kvpool_release_private(g->pool, r->blocks + from, (int32_t)n);
		kvpool_release_all(g->pool, r->blocks, (int32_t)from);
	} else {
		kvpool_release_all(g->pool, r->blocks, r->n_blocks);
	}
	r->n_blocks = 0;
	r->n_hashed = 0;
}

void vllm_grow_block_list(struct engine *g, struct request *r)
{
	/* Its whole length at once, not a realloc and copy at each doubling
	 * (they were 3% of the ShareGPT benchmark's CPU). */
	int64_t want = cdiv((int64_t)r->prompt_len + r->output_len, g->block_size);
	if (want < 8)
		want = 8;
	if (!r->cap_blocks && g->n_spare) {
		struct block_list l = g->spare[--g->n_spare];
		if (l.cap >= want) {
			r->blocks = l.v;
			r->cap_blocks = l.cap;
			return;
		}
		free(l.v);   /* too short for r, and nothing in it to keep */
	}
	if (want < 2 * (int64_t)r->cap_blocks)
		want = 2 * (int64_t)r->cap_blocks;   /* a full list doubles */
	r->cap_blocks = (int32_t)want;
	r->blocks = xrealloc(r->blocks, (size_t)r->cap_blocks * sizeof *r->blocks);
}

void vllm_spare_block_list(struct engine *g, struct request *r)
{
	SIM_ASSERT(r->n_blocks == 0, SIM_NO_TIME, r->n_blocks);
	if (r->cap_blocks) {
		xgrow(&g->spare, &g->cap_spare, g->n_spare + 1, sizeof *g->spare);
		g->spare[g->n_spare++] = (struct block_list){ .v = r->blocks, .cap = r->cap_blocks };
	}
	r->blocks = NULL;
	r->cap_blocks = 0;
}
/* Leading prefix-cache hits of r: GPU blocks into gpu[], then the count
 * of further blocks found in the CPU tier. */
int64_t vllm_lookup_prefix(struct engine *g, const struct request *r, int32_t *gpu,
			   int64_t *n_gpu, int64_t max_blocks)
{
	int64_t j = 0;
	*n_gpu = 0;
	if (!g->caching)
		return 0;
	for (; j < max_blocks; j++) {
		int32_t b = kvpool_lookup(g->pool, vllm_block_hash(r, j, g->block_size));
		if (b < 0)
			break;
		gpu[(*n_gpu)++] = b;
	}
	int64_t cpu = 0;
	while (j + cpu < max_blocks &&
	       kvpool_lookup_cpu(g->pool, vllm_block_hash(r, j + cpu, g->block_size)))
		cpu++;
	return cpu;
}

int64_t vllm_prefix_hit_tokens(const struct engine *g, const struct request *r)
{
	if (!g->caching)
		return 0;
	int64_t max_blocks = ((int64_t)r->prompt_len - 1) / g->block_size, j = 0;
	while (j < max_blocks && kvpool_lookup(g->pool, vllm_block_hash(r, j, g->block_size)) >= 0)
		j++;
	return j * g->block_size;
}
