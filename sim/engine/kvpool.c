#include "kvpool.h"

#include <assert.h>
#include <stdlib.h>

#include "dlist.h"
#include "hmap.h"
#include "xalloc.h"

/* Which part of the free queue a block below fresh is in. */
enum { IN_NONE, IN_FRONT, IN_BACK };

/* One GPU block: what allocation, release and hashing read, together
 * (24 bytes; the free queue's walk was a cache miss per array). */
struct block {
	union {
		struct link free;    /* in the front list */
		int64_t seq;         /* in the back queue: its entry's number */
	} q;
	int32_t ref;
	uint8_t private_hash;    /* 1: hash is private, not in cached */
	uint8_t queue;           /* IN_FRONT, IN_BACK while free; IN_NONE held */
	uint64_t hash;           /* 0 = not cached */
};

/* The back of the free queue (the cached blocks, least recently freed
 * first) as a ring of block ids in release order. A hit takes a block
 * out by marking it (its entry goes stale: the block's seq no longer
 * names it); the head skips stale entries. An array, not links, so
 * allocation can fetch the records of the blocks it will hand out next
 * (the release order is scattered over the pool: a miss each). */
struct backq {
	int32_t *ring;
	size_t mask;             /* capacity - 1 (0: none yet) */
	int64_t head, tail;      /* entry numbers: [head, tail) in the ring */
	int64_t len;             /* blocks in it: live entries, runs by their length */
	/* A run (kvpool_release_private): one entry -k for k private blocks
	 * released together, their ids in run_ids (a FIFO: runs leave the
	 * queue in the order they joined it, so the ids do too), in the
	 * order they leave. Their records are not touched until then. */
	int32_t *run_ids;
	size_t run_mask;         /* run_ids capacity - 1 (0: none yet) */
	int64_t run_head, run_tail;
};

struct kvpool {
	int64_t num_blocks;
	struct block *blk;
	/* The free queue, head to tail: front, [fresh, num_blocks), back. */
	struct dlist front;
	struct backq back;
	int32_t fresh;           /* the first block never handed out */
	struct hmap cached;      /* hash -> GPU block */

	int64_t cpu_blocks;      /* CPU tier capacity, 0 = off */
	uint64_t *cpu_hash;      /* slot -> hash */
	struct link *cpu_links;
	struct dlist cpu_lru;    /* slots, least recently stored first */
	struct hmap cpu_map;     /* hash -> slot */
	int64_t cpu_used;
};

struct kvpool *kvpool_create(int64_t num_blocks, int64_t cpu_blocks)
{
	assert(num_blocks >= 2 && num_blocks < INT32_MAX);
	struct kvpool *p = xcalloc(1, sizeof *p);
	p->num_blocks = num_blocks;
	p->blk = xcalloc((size_t)num_blocks, sizeof *p->blk);
	dlist_init(&p->front, &p->blk[0].q.free, sizeof *p->blk);
	p->fresh = 1;
	hmap_init(&p->cached, (size_t)num_blocks);
	p->cpu_blocks = cpu_blocks;
	if (cpu_blocks > 0) {
		p->cpu_hash = xcalloc((size_t)cpu_blocks, sizeof *p->cpu_hash);
		p->cpu_links = xmalloc((size_t)cpu_blocks * sizeof *p->cpu_links);
		dlist_init(&p->cpu_lru, p->cpu_links, sizeof *p->cpu_links);
		hmap_init(&p->cpu_map, (size_t)cpu_blocks);
	}
	return p;
}

void kvpool_destroy(struct kvpool *p)
{
	if (!p)
		return;
	free(p->blk);
	free(p->back.ring);
	free(p->back.run_ids);
	hmap_free(&p->cached);
	if (p->cpu_blocks > 0) {
		free(p->cpu_hash);
		free(p->cpu_links);
		hmap_free(&p->cpu_map);
	}
	free(p);
}

int64_t kvpool_num_usable(const struct kvpool *p)
{
	return p->num_blocks - 1;
}

int64_t kvpool_num_free(const struct kvpool *p)
{
	return p->front.len + (p->num_blocks - p->fresh) + p->back.len;
}

double kvpool_usage(const struct kvpool *p)
{
	return 1.0 - (double)kvpool_num_free(p) / (double)(p->num_blocks - 1);
}

int32_t kvpool_lookup(const struct kvpool *p, uint64_t hash)
{
	return hmap_get(&p->cached, hash);
}

bool kvpool_lookup_cpu(const struct kvpool *p, uint64_t hash)
{
	return p->cpu_blocks > 0 && hmap_get(&p->cpu_map, hash) >= 0;
}

bool kvpool_is_free(const struct kvpool *p, int32_t block)
{
	return p->blk[block].ref == 0;
}

void kvpool_touch(struct kvpool *p, int32_t block)
{
	assert(block > 0 && block < p->fresh && p->blk[block].hash != 0);
	struct block *x = &p->blk[block];
	if (x->ref++ > 0)
		return;
	if (x->queue == IN_BACK)
		p->back.len--;           /* its entry is stale now */
	else
		dlist_unlink(&p->front, block);
	x->queue = IN_NONE;
}

/* Whether entry s of the back queue, naming block b, still holds it. */
static bool back_live(const struct kvpool *p, int32_t b, int64_t s)
{
	return p->blk[b].queue == IN_BACK && p->blk[b].q.seq == s;
}

/* A FIFO of block ids in a power-of-two array, entries [head, tail)
 * indexed by mask, moved to one with room for need more (twice the size,
 * or 64, doubled until they fit). */
static void fifo_regrow(int32_t **v, size_t *mask, int64_t head, int64_t tail, size_t need)
{
	size_t ncap = *mask ? 2 * (*mask + 1) : 64;
	while (ncap < (size_t)(tail - head) + need)
		ncap *= 2;
	int32_t *nv = xmalloc(ncap * sizeof *nv);
	for (int64_t s = head; s < tail; s++)
		nv[(size_t)s & (ncap - 1)] = (*v)[(size_t)s & *mask];
	free(*v);
	*v = nv;
	*mask = ncap - 1;
}

/* Room for n more entries: the stale ones dropped when they are at least
 * half the ring and that leaves room, else a ring twice the size (at most
 * 4 x num_blocks; n is a request's blocks, at most num_blocks). */
__attribute__((noinline, cold)) static void back_make_room(struct kvpool *p, size_t n)
{
	struct backq *q = &p->back;
	size_t cap = q->mask + 1;
	if (q->mask && (size_t)q->len <= cap / 2 && (size_t)q->len + n <= cap) {
		int64_t w = q->head;
		for (int64_t s = q->head; s < q->tail; s++) {
			int32_t b = q->ring[(size_t)s & q->mask];
			if (b < 0) {   /* a run: live until its last block leaves */
				q->ring[(size_t)w++ & q->mask] = b;
				continue;
			}
			if (back_live(p, b, s)) {
				q->ring[(size_t)w & q->mask] = b;
				p->blk[b].q.seq = w++;
			}
		}
		q->tail = w;
		return;
	}
	fifo_regrow(&q->ring, &q->mask, q->head, q->tail, n);
}

enum { AHEAD = 8 };   /* entries (or a run's ids) whose records are fetched ahead */

/* Takes the first m ids of the run at the back queue's head (entry -k,
 * 1 <= m <= k) into out, in the order they leave; their records are the
 * caller's to write (take_run). */
static inline void run_take(struct kvpool *p, int32_t *out, int64_t m)
{
	struct backq *q = &p->back;
	int32_t e = q->ring[(size_t)q->head & q->mask];
	assert(e < 0 && m >= 1 && m <= -(int64_t)e);
	for (int64_t i = 0; i < m; i++)
		out[i] = q->run_ids[(size_t)(q->run_head + i) & q->run_mask];
	q->run_head += m;
	if (q->run_head + AHEAD - 1 < q->run_tail)
		__builtin_prefetch(&p->blk[q->run_ids[(size_t)(q->run_head + AHEAD - 1) & q->run_mask]]);
	if (e + m == 0)
		q->head++;
	else
		q->ring[(size_t)q->head & q->mask] = e + (int32_t)m;
	q->len -= m;
}

/* The back queue's first live block, taken out (len > 0); *run: it left
 * a run (its record is its last holder's: take_run, not take). */
static inline int32_t back_pop(struct kvpool *p, bool *run)
{
	struct backq *q = &p->back;
	for (;;) {
		int64_t s = q->head;
		int32_t b = q->ring[(size_t)s & q->mask];
		if (b < 0) {
			int32_t id;
			run_take(p, &id, 1);
			*run = true;
			return id;
		}
		q->head++;
		if (s + AHEAD < q->tail) {
			int32_t ahead = q->ring[(size_t)(s + AHEAD) & q->mask];
			if (ahead > 0)
				__builtin_prefetch(&p->blk[ahead]);
		}
		if (back_live(p, b, s)) {
			q->len--;
			*run = false;
			return b;
		}
	}
}

/* Stores an evicted hash in the CPU tier, dropping its oldest entry when
 * full. */
static void cpu_store(struct kvpool *p, uint64_t hash)
{
	if (p->cpu_blocks == 0 || hmap_get(&p->cpu_map, hash) >= 0)
		return;
	int32_t slot;
	if (p->cpu_used < p->cpu_blocks) {
		slot = (int32_t)p->cpu_used++;
	} else {
		slot = p->cpu_lru.head;
		dlist_unlink(&p->cpu_lru, slot);
		hmap_del(&p->cpu_map, p->cpu_hash[slot]);
	}
	p->cpu_hash[slot] = hash;
	hmap_put(&p->cpu_map, hash, slot);
	dlist_push_back(&p->cpu_lru, slot);
}

/* Takes the free queue's head out of it; -1 when it is empty. *run as
 * back_pop's (false from the front and the fresh range). */
static int32_t pop_free(struct kvpool *p, bool *run)
{
	*run = false;
	int32_t b = p->front.head;
	if (b >= 0)
		dlist_unlink(&p->front, b);
	else if (p->fresh < p->num_blocks)
		b = p->fresh++;
	else if (p->back.len > 0)
		b = back_pop(p, run);
	else
		return -1;
	p->blk[b].queue = IN_NONE;
	return b;
}

/* Hands out b, just taken off the free queue: its hash evicted (to the
 * CPU tier, if any), ref 1. */
static inline void take(struct kvpool *p, int32_t b)
{
	assert(p->blk[b].ref == 0);
	if (p->blk[b].hash) {
		if (p->blk[b].private_hash)
			p->blk[b].private_hash = 0;
		else
			hmap_del(&p->cached, p->blk[b].hash);
		if (p->cpu_blocks > 0)
			cpu_store(p, p->blk[b].hash);
		p->blk[b].hash = 0;
	}
	p->blk[b].ref = 1;
}

/* Hands out b, just taken out of a run: its record still says what its
 * last holder left (ref 1, no hash: a private block's stand-in is the
 * run itself), so it is written whole. */
static inline void take_run(struct kvpool *p, int32_t b)
{
	struct block *x = &p->blk[b];
	x->ref = 1;
	x->hash = 0;
	x->private_hash = 0;
	x->queue = IN_NONE;
}

int32_t kvpool_alloc(struct kvpool *p)
{
	bool run;
	int32_t b = pop_free(p, &run);
	if (b < 0)
		return -1;
	if (run)
		take_run(p, b);
	else
		take(p, b);
	return b;
}

void kvpool_alloc_n(struct kvpool *p, int32_t *out, int64_t n)
{
	assert(n >= 0 && n <= kvpool_num_free(p));
	int64_t k = 0;
	/* The queue's three parts in its order, each drained before the
	 * next (nothing joins the queue meanwhile): pop_free's order. */
	for (; k < n && p->front.head >= 0; k++) {
		int32_t b = p->front.head;
		dlist_unlink(&p->front, b);
		p->blk[b].queue = IN_NONE;
		take(p, b);
		out[k] = b;
	}
	for (; k < n && p->fresh < p->num_blocks; k++) {
		int32_t b = p->fresh++;
		assert(p->blk[b].ref == 0 && p->blk[b].hash == 0 && p->blk[b].queue == IN_NONE);
		p->blk[b].ref = 1;
		out[k] = b;
	}
	struct backq *q = &p->back;
	while (k < n) {
		int32_t e = q->ring[(size_t)q->head & q->mask];
		if (e < 0) {
			/* A run at the head: as many of its ids as wanted at once. */
			int64_t m = -(int64_t)e < n - k ? -(int64_t)e : n - k;
			run_take(p, out + k, m);
			for (int64_t i = 0; i < m; i++)
				take_run(p, out[k + i]);
			k += m;
			continue;
		}
		bool run;
		int32_t b = back_pop(p, &run);
		if (run) {
			take_run(p, b);
		} else {
			p->blk[b].queue = IN_NONE;
			take(p, b);
		}
		out[k++] = b;
	}
}

bool kvpool_head_anonymous(const struct kvpool *p, int64_t n)
{
	/* The front and the fresh range hold none; in the back queue a run's
	 * blocks hold stand-ins, a stale entry nothing, a live one its hash.
	 * (A few entries: runs are a request's private blocks each.) */
	n -= p->front.len + (p->num_blocks - p->fresh);
	const struct backq *q = &p->back;
	for (int64_t s = q->head; n > 0 && s < q->tail && s < q->head + AHEAD; s++) {
		int32_t e = q->ring[(size_t)s & q->mask];
		if (e < 0)
			n += e;
		else if (back_live(p, e, s))
			return false;
	}
	return n <= 0;
}

void kvpool_release(struct kvpool *p, int32_t block)
{
	kvpool_release_all(p, &block, 1);
}

void kvpool_release_all(struct kvpool *p, const int32_t *blocks, int32_t n)
{
	/* The blocks of a request about to be done were last read when they
	 * filled, long ago: their records are fetched all at once first (in
	 * parallel; one at a time, each release waited for its miss). */
	for (int32_t j = 0; j < n; j++)
		__builtin_prefetch(&p->blk[blocks[j]]);
	/* Each, last first: one reference less; at none, to the back queue
	 * with a hash, else to the front. The back queue's room is made for
	 * all of them at once and its ends kept in locals (a store to a block
	 * may alias them: the compiler would reload them at every block). */
	struct backq *q = &p->back;
	if (!q->mask || (size_t)(q->tail - q->head) + (size_t)n > q->mask + 1)
		back_make_room(p, (size_t)n);
	int32_t *ring = q->ring;
	struct block *blk = p->blk;
	const size_t mask = q->mask;
	const int32_t fresh = p->fresh;
	int64_t tail = q->tail, len = q->len;
	for (int32_t j = n; j-- > 0;) {
		int32_t block = blocks[j];
		assert(block > 0 && block < fresh && blk[block].ref > 0);
		struct block *x = &blk[block];
		if (--x->ref > 0)
			continue;
		if (x->hash) {
			ring[(size_t)tail & mask] = block;
			x->q.seq = tail++;
			x->queue = IN_BACK;
			len++;
		} else {
			x->queue = IN_FRONT;
			dlist_push_front(&p->front, block);
		}
	}
	q->tail = tail;
	q->len = len;
}

void kvpool_release_private(struct kvpool *p, const int32_t *blocks, int32_t n)
{
	assert(n >= 0 && !kvpool_reads_private_hashes(p));
	if (n == 0)
		return;
	struct backq *q = &p->back;
	if (!q->mask || (size_t)(q->tail - q->head) > q->mask)
		back_make_room(p, 1);
	/* (At most every usable block is in a run: the FIFO stays within
	 * twice num_blocks.) */
	if (!q->run_mask || (size_t)(q->run_tail - q->run_head) + (size_t)n > q->run_mask + 1)
		fifo_regrow(&q->run_ids, &q->run_mask, q->run_head, q->run_tail, (size_t)n);
	for (int32_t j = n; j-- > 0;) {   /* last first: the order they leave in */
		assert(blocks[j] > 0 && blocks[j] < p->fresh);
		q->run_ids[(size_t)q->run_tail++ & q->run_mask] = blocks[j];
	}
	q->ring[(size_t)q->tail++ & q->mask] = -n;
	q->len += n;
}

void kvpool_set_hash(struct kvpool *p, int32_t block, uint64_t hash)
{
	assert(block > 0 && block < p->fresh && hash != 0);
	if (p->blk[block].hash || hmap_get(&p->cached, hash) >= 0)
		return;
	p->blk[block].hash = hash;
	hmap_put(&p->cached, hash, block);
}

void kvpool_set_private_hash(struct kvpool *p, int32_t block, uint64_t hash)
{
	assert(block > 0 && block < p->fresh && hash != 0);
	if (p->blk[block].hash)
		return;
	p->blk[block].hash = hash;
	p->blk[block].private_hash = 1;
}

void kvpool_set_stand_ins(struct kvpool *p, const int32_t *blocks, int64_t n)
{
	assert(!kvpool_reads_private_hashes(p));
	for (int64_t j = 0; j < n; j++) {
		struct block *x = &p->blk[blocks[j]];
		assert(blocks[j] > 0 && blocks[j] < p->fresh);
		if (!x->hash) {
			x->hash = 1;
			x->private_hash = 1;
		}
	}
}

bool kvpool_reads_private_hashes(const struct kvpool *p)
{
	return p->cpu_blocks > 0;
}

void kvpool_publish(struct kvpool *p, int32_t block)
{
	assert(block > 0 && block < p->fresh);
	if (!p->blk[block].private_hash)
		return;
	p->blk[block].private_hash = 0;
	/* As kvpool_set_hash: the first block to hold a hash stays its copy
	 * (no other can hold a private one; kept for the contract). */
	if (hmap_get(&p->cached, p->blk[block].hash) >= 0)
		p->blk[block].hash = 0;
	else
		hmap_put(&p->cached, p->blk[block].hash, block);
}
