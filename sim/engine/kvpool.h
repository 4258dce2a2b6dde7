/*
 * kvpool: vLLM's paged KV cache, block by block (vllm/v1/core/block_pool.py).
 *
 * num_blocks blocks of block_size tokens; block 0 is the null block and is
 * never handed out, so num_blocks - 1 are usable. Each block has a reference
 * count. A free block (ref 0) sits in one free queue: allocation pops
 * from the head and, when the block carries a prefix hash, evicts that
 * hash. Releasing puts blocks with no hash at the front (reused first) and
 * cached blocks at the back, so the least recently freed cached block is
 * evicted first (LRU). A hit on a free cached block takes it out of the
 * queue ("touch"). Usage is 1 - free/(num_blocks - 1), counting evictable
 * cached blocks as free, as vLLM's BlockPool.get_usage does.
 *
 * vLLM's queue starts as blocks 1..num_blocks-1 in order. Here the blocks
 * never handed out yet are implicit: the queue is a front list (released
 * without a hash), then the fresh range [fresh, num_blocks), then a back
 * queue (released with one: a ring in release order, where a hit leaves
 * a stale entry the head skips, so allocation can fetch the next blocks'
 * records ahead). It hands out blocks in exactly vLLM's order while
 * creation links nothing (O(1) but for the zeroed arrays).
 *
 * Optional CPU tier (kv_offload): blocks evicted from the GPU keep their hash
 * in a host-memory LRU of cpu_blocks entries; a later lookup can find them
 * there (the caller charges the transfer).
 *
 * A block can also carry a private hash (kvpool_set_private_hash): one only
 * its own request could ever hit, as a request's own prompt and output
 * blocks are when no other request shares its content. It orders the free
 * queue and goes to the CPU tier as any hash, but stays out of the hash
 * table (its upkeep was a fifth of a run's time) until kvpool_publish puts
 * it there, when its request is preempted and may come back for it.
 *
 * Invariants: free count == front length + fresh blocks left + live back
 * entries (a run counted by its blocks); a free block below fresh is in
 * the front list, has exactly one live back entry (its `queue` tag says
 * which; a held block neither) or is in one run (its record stale: a
 * held block's, until it leaves the run);
 * blocks from fresh on have ref 0, no hash and no links; every hashed
 * block that is not private is in the hash table exactly once; ref counts
 * never go negative (all asserted).
 */
#ifndef SERVESIM_KVPOOL_H
#define SERVESIM_KVPOOL_H

#include <stdbool.h>
#include <stdint.h>

struct kvpool;

/* Creates a pool of num_blocks (>= 2) blocks, and a CPU tier of cpu_blocks
 * hashes (0 = none). Cannot fail (aborts on OOM). */
struct kvpool *kvpool_create(int64_t num_blocks, int64_t cpu_blocks);
void kvpool_destroy(struct kvpool *p);   /* NULL is a no-op */

int64_t kvpool_num_usable(const struct kvpool *p);  /* num_blocks - 1 */
int64_t kvpool_num_free(const struct kvpool *p);    /* includes evictable cached */
double kvpool_usage(const struct kvpool *p);        /* in [0, 1] */

/* The GPU block holding hash, or -1. */
int32_t kvpool_lookup(const struct kvpool *p, uint64_t hash);

/* Whether the CPU tier holds hash. */
bool kvpool_lookup_cpu(const struct kvpool *p, uint64_t hash);

/* Whether block is in the free queue (ref 0). */
bool kvpool_is_free(const struct kvpool *p, int32_t block);

/* Takes a reference on a cached block found by kvpool_lookup. */
void kvpool_touch(struct kvpool *p, int32_t block);

/* Pops a free block (evicting its hash to the CPU tier, if any) with ref 1.
 * Returns -1 when no block is free. */
int32_t kvpool_alloc(struct kvpool *p);

/* n calls of kvpool_alloc into out[0..n), in their order, when n <=
 * kvpool_num_free (asserted): a request's new blocks at once. */
void kvpool_alloc_n(struct kvpool *p, int32_t *out, int64_t n);

/* Whether the first n blocks of the free queue hold no hash (handing them
 * out evicts nothing, so which of them goes to whom cannot show); false
 * also when that is not known from the queue's first few entries. */
bool kvpool_head_anonymous(const struct kvpool *p, int64_t n);

/* Drops one reference; at 0 the block joins the free queue. Callers
 * release a request's blocks last block first (vLLM frees in reverse). */
void kvpool_release(struct kvpool *p, int32_t block);

/* kvpool_release of blocks[n-1] down to blocks[0] (a request's list,
 * last block first, as vLLM frees them). */
void kvpool_release_all(struct kvpool *p, const int32_t *blocks, int32_t n);

/* kvpool_set_stand_ins(blocks, n) then kvpool_release_all(blocks, n), for
 * n full private blocks its request alone holds (ref 1, no hash, in a
 * pool that reads no private hash: asserted), in O(1) of their records:
 * they join the back of the free queue as one run, in the order the
 * release would have put them there, and each record is written when its
 * block leaves the run (allocation hands out the same blocks in the same
 * order). A run's blocks are free but their records are stale until then:
 * they are never looked up, touched or asked kvpool_is_free (private). */
void kvpool_release_private(struct kvpool *p, const int32_t *blocks, int32_t n);

/* Marks a full block as holding hash, making it findable. If another block
 * already holds hash, nothing changes (the first stays the cached copy). */
void kvpool_set_hash(struct kvpool *p, int32_t block, uint64_t hash);

/* kvpool_set_hash for a hash no other block holds and no lookup can ask
 * for until kvpool_publish(block): the block takes it without a table
 * entry. O(1), no hashing. */
void kvpool_set_private_hash(struct kvpool *p, int32_t block, uint64_t hash);

/* kvpool_set_private_hash(p, blocks[j], 1) for j in [0, n): the stand-in
 * of each, where the pool reads no private hash's value (asserted). */
void kvpool_set_stand_ins(struct kvpool *p, const int32_t *blocks, int64_t n);

/* Whether the pool reads a private hash's value before kvpool_publish
 * (its CPU tier takes the hashes of evicted blocks). When it does not,
 * a caller may leave a private block unmarked while its request holds it
 * (releasing it with kvpool_release_private, or after a stand-in: any
 * nonzero value), and give it the real hash with kvpool_set_private_hash
 * just before publishing it. */
bool kvpool_reads_private_hashes(const struct kvpool *p);

/* Makes a private hash findable, as kvpool_set_hash would have made it.
 * A block without one is left alone. */
void kvpool_publish(struct kvpool *p, int32_t block);

#endif
