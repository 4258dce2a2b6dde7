/*
 * kvpool: vLLM's block pool. Usage counts evictable cached blocks as free;
 * allocation never hands out the null block and fails with -1 when empty;
 * released blocks without a hash are reused first, cached ones last and
 * least recently freed first; a cached free block is found by lookup and
 * taken out of the free queue by touch; allocating over it evicts its hash,
 * into the CPU tier when there is one (an LRU of its own). A property test
 * runs 100k random operations against a reference model of the pool.
 */
#include "testutil.h"

#include "kvpool.h"

/* A 64-bit LCG (Knuth's MMIX constants), high bits out. */
static uint64_t lcg_next(uint64_t *s)
{
	*s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
	return *s >> 33;
}

/* Usage is a ratio of small integers: computed exactly as 1 - f/u, so the
 * tolerance is one rounding of that expression. */
#define USAGE_TOL 1e-15

static void usage_and_exhaustion(void **state)
{
	(void)state;
	struct kvpool *p = kvpool_create(5, 0);
	assert_int_equal(kvpool_num_usable(p), 4);
	assert_int_equal(kvpool_num_free(p), 4);
	assert_double_near(kvpool_usage(p), 0.0, 0.0);
	bool seen[5] = { false };
	for (int i = 1; i <= 4; i++) {
		int32_t b = kvpool_alloc(p);
		/* Never the null block 0, never twice. */
		assert_true(b >= 1 && b <= 4);
		assert_false(seen[b]);
		seen[b] = true;
		assert_false(kvpool_is_free(p, b));
		assert_int_equal(kvpool_num_free(p), 4 - i);
		assert_double_near(kvpool_usage(p), 1.0 - (4.0 - i) / 4.0, USAGE_TOL);
	}
	assert_double_near(kvpool_usage(p), 1.0, 0.0);
	assert_int_equal(kvpool_alloc(p), -1);
	assert_int_equal(kvpool_alloc(p), -1);
	assert_int_equal(kvpool_num_free(p), 0);
	kvpool_release(p, 3);
	assert_true(kvpool_is_free(p, 3));
	assert_int_equal(kvpool_num_free(p), 1);
	assert_double_near(kvpool_usage(p), 0.75, 0.0);   /* 1 - 1/4, exact */
	kvpool_destroy(p);
	kvpool_destroy(NULL);
}

/* Uncached blocks go to the front of the free queue, cached ones to the
 * back in the order they are freed. */
static void release_order(void **state)
{
	(void)state;
	struct kvpool *p = kvpool_create(6, 0);
	int32_t b[5];
	for (int i = 0; i < 5; i++)
		b[i] = kvpool_alloc(p);
	assert_int_equal(kvpool_alloc(p), -1);
	kvpool_set_hash(p, b[1], 0x111);
	kvpool_set_hash(p, b[3], 0x333);
	/* Free a cached one first, then uncached, then the other cached. */
	kvpool_release(p, b[3]);   /* back:  3 */
	kvpool_release(p, b[0]);   /* front: 0 3 */
	kvpool_release(p, b[1]);   /* back:  0 3 1 */
	kvpool_release(p, b[2]);   /* front: 2 0 3 1 */
	kvpool_release(p, b[4]);   /* front: 4 2 0 3 1 */
	assert_int_equal(kvpool_num_free(p), 5);
	/* Evictable cached blocks count as free: usage 0. */
	assert_double_near(kvpool_usage(p), 0.0, 0.0);
	const int want[] = { 4, 2, 0, 3, 1 };
	for (int i = 0; i < 5; i++)
		assert_int_equal(kvpool_alloc(p), b[want[i]]);
	kvpool_destroy(p);
}

/* A hit on a free cached block: lookup finds it, touch takes a reference
 * and removes it from the free queue, so allocation cannot hand it out. */
static void lookup_and_touch(void **state)
{
	(void)state;
	struct kvpool *p = kvpool_create(4, 0);
	int32_t a = kvpool_alloc(p), b = kvpool_alloc(p), c = kvpool_alloc(p);
	assert_int_equal(kvpool_lookup(p, 0xabc), -1);
	kvpool_set_hash(p, b, 0xabc);
	assert_int_equal(kvpool_lookup(p, 0xabc), b);   /* findable while held */
	kvpool_release(p, c);
	kvpool_release(p, b);
	kvpool_release(p, a);
	assert_int_equal(kvpool_num_free(p), 3);
	assert_int_equal(kvpool_lookup(p, 0xabc), b);   /* and while free */
	assert_true(kvpool_is_free(p, b));
	kvpool_touch(p, b);
	assert_false(kvpool_is_free(p, b));
	assert_int_equal(kvpool_num_free(p), 2);
	assert_int_equal(kvpool_lookup(p, 0xabc), b);
	/* Touching a held block adds a reference: two releases free it. */
	kvpool_touch(p, b);
	assert_int_equal(kvpool_num_free(p), 2);
	int32_t x = kvpool_alloc(p), y = kvpool_alloc(p);
	assert_true(x != b && y != b);
	assert_int_equal(kvpool_alloc(p), -1);
	kvpool_release(p, b);
	assert_false(kvpool_is_free(p, b));
	kvpool_release(p, b);
	assert_true(kvpool_is_free(p, b));
	assert_int_equal(kvpool_lookup(p, 0xabc), b);
	kvpool_destroy(p);
}

/* Allocation over a free cached block evicts its hash: without a CPU tier
 * it is gone; with one, kvpool_lookup_cpu finds it. */
static void eviction_to_cpu_tier(void **state)
{
	(void)state;
	for (int64_t cpu = 0; cpu <= 4; cpu += 4) {
		struct kvpool *p = kvpool_create(2, cpu);   /* one usable block */
		int32_t b = kvpool_alloc(p);
		kvpool_set_hash(p, b, 0x77);
		kvpool_release(p, b);
		assert_false(kvpool_lookup_cpu(p, 0x77));   /* not evicted yet */
		assert_int_equal(kvpool_alloc(p), b);
		assert_int_equal(kvpool_lookup(p, 0x77), -1);
		assert_true(kvpool_lookup_cpu(p, 0x77) == (cpu > 0));
		/* The block comes back uncached: its release puts it in front
		 * and it holds no hash. */
		kvpool_release(p, b);
		assert_int_equal(kvpool_lookup(p, 0x77), -1);
		kvpool_destroy(p);
	}
}

/* The CPU tier holds cpu_blocks hashes and drops the oldest stored. */
static void cpu_tier_lru(void **state)
{
	(void)state;
	struct kvpool *p = kvpool_create(2, 2);
	for (uint64_t h = 1; h <= 3; h++) {
		int32_t b = kvpool_alloc(p);
		kvpool_set_hash(p, b, h);
		kvpool_release(p, b);
		kvpool_release(p, kvpool_alloc(p));   /* evicts h to the CPU tier */
	}
	assert_false(kvpool_lookup_cpu(p, 1));   /* oldest, dropped */
	assert_true(kvpool_lookup_cpu(p, 2));
	assert_true(kvpool_lookup_cpu(p, 3));
	kvpool_destroy(p);
}

/* set_hash on a hash another block already holds changes nothing: the first
 * stays the cached copy and the second stays uncached (so its release puts
 * it at the front). */
static void set_hash_keeps_first(void **state)
{
	(void)state;
	struct kvpool *p = kvpool_create(4, 0);
	int32_t a = kvpool_alloc(p), b = kvpool_alloc(p), c = kvpool_alloc(p);
	kvpool_set_hash(p, a, 0x42);
	kvpool_set_hash(p, b, 0x42);
	assert_int_equal(kvpool_lookup(p, 0x42), a);
	kvpool_release(p, a);   /* cached: back */
	kvpool_release(p, b);   /* uncached: front */
	kvpool_release(p, c);   /* uncached: front */
	assert_int_equal(kvpool_alloc(p), c);
	assert_int_equal(kvpool_alloc(p), b);
	assert_int_equal(kvpool_lookup(p, 0x42), a);   /* b's alloc evicted nothing */
	assert_int_equal(kvpool_alloc(p), a);
	assert_int_equal(kvpool_lookup(p, 0x42), -1);
	kvpool_destroy(p);
}

/* The reference model for the property test. */
enum { NB = 48, CPU = 6, HASHES = 64, OPS = 100000 };

struct model {
	int ref[NB];
	uint64_t hash[NB];     /* 0 = none */
	uint64_t cpu[CPU];     /* oldest first */
	int n_cpu;
	int held;              /* blocks with ref > 0 */
};

static int32_t model_lookup(const struct model *m, uint64_t h)
{
	for (int32_t b = 1; b < NB; b++)
		if (m->hash[b] == h)
			return b;
	return -1;
}

static bool model_cpu_has(const struct model *m, uint64_t h)
{
	for (int i = 0; i < m->n_cpu; i++)
		if (m->cpu[i] == h)
			return true;
	return false;
}

static void model_cpu_store(struct model *m, uint64_t h)
{
	if (model_cpu_has(m, h))
		return;
	if (m->n_cpu == CPU) {
		memmove(m->cpu, m->cpu + 1, (CPU - 1) * sizeof *m->cpu);
		m->n_cpu--;
	}
	m->cpu[m->n_cpu++] = h;
}

/* 100k random allocs, releases, set_hash and lookup+touch on a 47-block
 * pool with a 6-entry CPU tier and 64 possible hashes (so hits, duplicate
 * hashes and evictions all happen often). After every operation: free
 * count == usable - blocks we hold, 0 <= usage <= 1 and equal to
 * 1 - free/usable, and a random hash looks up where the model says. */
static void property_random_ops(void **state)
{
	(void)state;
	struct kvpool *p = kvpool_create(NB, CPU);
	static struct model m;
	memset(&m, 0, sizeof m);
	uint64_t rng = 2024;
	int64_t allocs = 0, fails = 0, hits = 0, evictions = 0;
	for (int op = 0; op < OPS; op++) {
		uint64_t r = lcg_next(&rng);
		int kind = (int)(r % 8);
		if (kind < 3) {                      /* alloc */
			int32_t b = kvpool_alloc(p);
			if (b < 0) {
				fails++;
				assert_int_equal(m.held, NB - 1);
			} else {
				allocs++;
				assert_true(b >= 1 && b < NB);
				assert_int_equal(m.ref[b], 0);
				if (m.hash[b]) {
					evictions++;
					model_cpu_store(&m, m.hash[b]);
					m.hash[b] = 0;
				}
				m.ref[b] = 1;
				m.held++;
			}
		} else if (kind < 6) {               /* release a reference */
			if (m.held == 0)
				continue;
			int32_t b;
			do
				b = 1 + (int32_t)(lcg_next(&rng) % (NB - 1));
			while (m.ref[b] == 0);
			kvpool_release(p, b);
			if (--m.ref[b] == 0)
				m.held--;
		} else if (kind == 6) {              /* set_hash on a held block */
			if (m.held == 0)
				continue;
			int32_t b;
			do
				b = 1 + (int32_t)(lcg_next(&rng) % (NB - 1));
			while (m.ref[b] == 0);
			uint64_t h = 1 + lcg_next(&rng) % HASHES;
			kvpool_set_hash(p, b, h);
			if (!m.hash[b] && model_lookup(&m, h) < 0)
				m.hash[b] = h;
		} else {                             /* a prefix-cache hit */
			uint64_t h = 1 + lcg_next(&rng) % HASHES;
			int32_t b = kvpool_lookup(p, h);
			assert_int_equal(b, model_lookup(&m, h));
			if (b >= 0) {
				hits++;
				kvpool_touch(p, b);
				if (m.ref[b]++ == 0)
					m.held++;
			}
		}
		assert_int_equal(kvpool_num_free(p), NB - 1 - m.held);
		double u = kvpool_usage(p);
		assert_true(u >= 0 && u <= 1);
		assert_double_near(u, 1.0 - (double)(NB - 1 - m.held) / (NB - 1), USAGE_TOL);
		uint64_t h = 1 + lcg_next(&rng) % HASHES;
		assert_int_equal(kvpool_lookup(p, h), model_lookup(&m, h));
		assert_true(kvpool_lookup_cpu(p, h) == model_cpu_has(&m, h));
		int32_t b = 1 + (int32_t)(lcg_next(&rng) % (NB - 1));
		assert_true(kvpool_is_free(p, b) == (m.ref[b] == 0));
	}
	/* The mix really exercised every path. */
	assert_true(allocs > 1000 && fails > 100 && hits > 1000 && evictions > 1000);
	kvpool_destroy(p);
}

/* Without a CPU tier a private hash's value is read by nobody before it
 * is published: a private block with no mark, given its real hash at
 * publishing (as vllm_publish_blocks does), is found under it and only
 * there; a stand-in is never found; a block with a shared hash keeps it.
 * With a CPU tier the pool says it reads them (the values go there). */
static void private_stand_in_named_at_publish(void **state)
{
	(void)state;
	struct kvpool *t = kvpool_create(5, 4);
	assert_true(kvpool_reads_private_hashes(t));
	kvpool_destroy(t);
	struct kvpool *p = kvpool_create(6, 0);
	assert_false(kvpool_reads_private_hashes(p));
	int32_t a = kvpool_alloc(p), b = kvpool_alloc(p), c = kvpool_alloc(p), d = kvpool_alloc(p);
	kvpool_set_private_hash(p, b, 1);          /* a stand-in: not in the table */
	kvpool_set_hash(p, c, 0x63);
	assert_int_equal(kvpool_lookup(p, 1), -1);
	kvpool_set_private_hash(p, a, 0x61);       /* no mark yet: named at publishing */
	kvpool_set_private_hash(p, c, 0x77);       /* a shared hash: left alone */
	kvpool_publish(p, a);
	kvpool_publish(p, c);                      /* not private: left alone */
	kvpool_publish(p, d);                      /* no hash: left alone */
	assert_int_equal(kvpool_lookup(p, 0x61), a);
	assert_int_equal(kvpool_lookup(p, 0x63), c);
	assert_int_equal(kvpool_lookup(p, 0x77), -1);
	assert_int_equal(kvpool_lookup(p, 1), -1);
	kvpool_set_private_hash(p, a, 0x62);       /* published: its hash kept */
	assert_int_equal(kvpool_lookup(p, 0x61), a);
	assert_int_equal(kvpool_lookup(p, 0x62), -1);
	/* The unnamed one still orders the free queue as a hashed block:
	 * released after d (no hash), it is taken after it. */
	kvpool_release(p, b);
	kvpool_release(p, d);
	assert_int_equal(kvpool_alloc(p), d);
	kvpool_destroy(p);
}

/* A private hash orders the free queue as a hash does and goes to the
 * CPU tier when evicted, but no lookup finds it until it is published;
 * published, it is found as kvpool_set_hash would have made it. */
static void private_hash_hidden_until_published(void **state)
{
	(void)state;
	struct kvpool *p = kvpool_create(5, 4);
	int32_t a = kvpool_alloc(p), b = kvpool_alloc(p), c = kvpool_alloc(p);
	kvpool_set_private_hash(p, a, 0x51);
	kvpool_set_private_hash(p, b, 0x52);
	kvpool_set_private_hash(p, b, 0x99);   /* already hashed: kept */
	assert_int_equal(kvpool_lookup(p, 0x51), -1);
	assert_int_equal(kvpool_lookup(p, 0x52), -1);
	kvpool_publish(p, b);
	kvpool_publish(p, c);                  /* no hash: nothing */
	assert_int_equal(kvpool_lookup(p, 0x52), b);
	assert_int_equal(kvpool_lookup(p, 0x99), -1);
	kvpool_release(p, a);   /* hashed: back   (x) a */
	kvpool_release(p, c);   /* none: front    c (x) a */
	kvpool_release(p, b);   /* hashed: back   c (x) a b */
	assert_int_equal(kvpool_alloc(p), c);
	int32_t x = kvpool_alloc(p);           /* the block never handed out */
	assert_int_equal(kvpool_alloc(p), a);  /* a's private hash goes to the CPU tier */
	assert_true(kvpool_lookup_cpu(p, 0x51));
	assert_int_equal(kvpool_lookup(p, 0x52), b);
	assert_int_equal(kvpool_alloc(p), b);  /* evicts the published one */
	assert_int_equal(kvpool_lookup(p, 0x52), -1);
	assert_true(kvpool_lookup_cpu(p, 0x52));
	(void)x;
	kvpool_destroy(p);
}

/* vLLM's free queue as it is written (block_pool.py's FreeKVCacheBlockQueue):
 * one explicit list, 1..n-1 at the start, an array here (O(n) per op). */
struct ref_queue {
	int32_t q[2048];
	int n;
};

static int ref_find(const struct ref_queue *r, int32_t b)
{
	for (int i = 0; i < r->n; i++)
		if (r->q[i] == b)
			return i;
	return -1;
}

static void ref_remove_at(struct ref_queue *r, int i)
{
	memmove(r->q + i, r->q + i + 1, (size_t)(r->n - i - 1) * sizeof *r->q);
	r->n--;
}

/* The pool hands blocks out in exactly the explicit queue's order though
 * it never links the blocks not used yet (the fresh range between its
 * front and back lists): random allocs, releases (hashed ones to the
 * back, others to the front), hashes, private hashes and hits on pools of
 * 8, 300 and 2000 blocks (so releases land while the fresh range is still
 * long, short and gone), every alloc compared, and the free count after
 * every op. */
static void order_equals_explicit_queue(void **state)
{
	(void)state;
	static const int32_t sizes[] = { 8, 300, 2000 };
	for (size_t t = 0; t < sizeof sizes / sizeof *sizes; t++) {
		int32_t nb = sizes[t];
		struct kvpool *p = kvpool_create(nb, 0);
		static struct ref_queue r;
		static int ref[2048];
		static uint64_t hash[2048];
		memset(ref, 0, sizeof ref);
		memset(hash, 0, sizeof hash);
		r.n = 0;
		for (int32_t b = 1; b < nb; b++)
			r.q[r.n++] = b;
		uint64_t rng = 77 + (uint64_t)t;
		int held = 0, fresh_hits = 0, back_pops = 0, front_pops = 0;
		uint64_t next_hash = 1;
		for (int op = 0; op < 60000; op++) {
			uint64_t x = lcg_next(&rng);
			int kind = (int)(x % 10);
			if (kind < 4) {
				int32_t b = kvpool_alloc(p);
				if (r.n == 0) {
					assert_int_equal(b, -1);
					continue;
				}
				assert_int_equal(b, r.q[0]);
				/* Which part of the queue it came from, for coverage. */
				if (hash[b])
					back_pops++;
				else if (b >= nb - r.n && op < 3 * nb)
					fresh_hits++;
				else
					front_pops++;
				ref_remove_at(&r, 0);
				hash[b] = 0;
				ref[b] = 1;
				held++;
			} else if (kind < 8) {
				if (held == 0)
					continue;
				int32_t b;
				do
					b = 1 + (int32_t)(lcg_next(&rng) % (uint64_t)(nb - 1));
				while (ref[b] == 0);
				kvpool_release(p, b);
				if (--ref[b] == 0) {
					held--;
					if (hash[b]) {
						r.q[r.n++] = b;
					} else {
						memmove(r.q + 1, r.q, (size_t)r.n * sizeof *r.q);
						r.q[0] = b;
						r.n++;
					}
				}
			} else if (kind == 8) {
				if (held == 0)
					continue;
				int32_t b;
				do
					b = 1 + (int32_t)(lcg_next(&rng) % (uint64_t)(nb - 1));
				while (ref[b] == 0);
				if (!hash[b]) {
					hash[b] = next_hash++;
					if (x & 16)
						kvpool_set_private_hash(p, b, hash[b]);
					else
						kvpool_set_hash(p, b, hash[b]);
				}
			} else {
				/* A hit on a published hash, free or held. */
				int32_t b = 1 + (int32_t)(lcg_next(&rng) % (uint64_t)(nb - 1));
				if (!hash[b])
					continue;
				kvpool_publish(p, b);
				assert_int_equal(kvpool_lookup(p, hash[b]), b);
				kvpool_touch(p, b);
				if (ref[b]++ == 0) {
					held++;
					int i = ref_find(&r, b);
					assert_true(i >= 0);
					ref_remove_at(&r, i);
				}
			}
			assert_int_equal(kvpool_num_free(p), r.n);
		}
		assert_true(fresh_hits > 0 && back_pops > 100 && front_pops > 100);
		kvpool_destroy(p);
	}
}

/* Cached blocks hit and freed again and again (a hot shared prefix)
 * leave stale entries in the back queue's ring until it drops them: the
 * LRU order holds through that (the order of the last releases), and the
 * ring stays bounded (the run would otherwise grow it by 4 entries a
 * round). */
static void back_queue_compacts_in_order(void **state)
{
	(void)state;
	struct kvpool *p = kvpool_create(9, 0);
	int32_t b[8];
	for (int i = 0; i < 8; i++) {
		b[i] = kvpool_alloc(p);
		kvpool_set_hash(p, b[i], 0x100 + (uint64_t)i);
	}
	for (int i = 0; i < 8; i++)
		kvpool_release(p, b[i]);
	/* 5000 rounds: the first four hit and freed in a rotating order. */
	int32_t order[8];
	for (int i = 0; i < 8; i++)
		order[i] = b[i];
	for (int round = 0; round < 5000; round++) {
		int32_t hot[4];
		for (int k = 0; k < 4; k++)
			hot[k] = b[(round + k) % 4];
		for (int k = 0; k < 4; k++) {
			assert_int_equal(kvpool_lookup(p, 0x100 + (uint64_t)(hot[k] - b[0])), hot[k]);
			kvpool_touch(p, hot[k]);
		}
		assert_int_equal(kvpool_num_free(p), 4);
		for (int k = 0; k < 4; k++)
			kvpool_release(p, hot[k]);
		/* LRU order: the four cold ones, then the hot ones as freed. */
		for (int k = 0; k < 4; k++)
			order[4 + k] = hot[k];
	}
	for (int i = 0; i < 4; i++)
		order[i] = b[4 + i];
	for (int i = 0; i < 8; i++)
		assert_int_equal(kvpool_alloc(p), order[i]);
	assert_int_equal(kvpool_alloc(p), -1);
	kvpool_destroy(p);
}

/* The batch calls are their one-at-a-time forms: two pools driven by the
 * same 20k random operations, one allocating n blocks with kvpool_alloc_n
 * and marking stand-ins with kvpool_set_stand_ins, the other with n
 * kvpool_alloc and kvpool_set_private_hash(.., 1), hand out the same
 * blocks in the same order and agree on every free count and lookup,
 * through the front list, the fresh range and the back queue. */
static void batch_calls_match_one_at_a_time(void **state)
{
	(void)state;
	enum { N = 200, HELD = 16, MAXB = 40 };
	struct kvpool *a = kvpool_create(N, 0), *b = kvpool_create(N, 0);
	int32_t held[HELD][MAXB], nh[HELD] = { 0 };
	uint64_t seed = 14;
	for (int op = 0; op < 20000; op++) {
		int h = (int)(lcg_next(&seed) % HELD), kind = (int)(lcg_next(&seed) % 4);
		if (kind < 2 && nh[h] < MAXB) {   /* allocate a few */
			int64_t n = (int64_t)(lcg_next(&seed) % (uint64_t)(MAXB - nh[h] + 1));
			if (n > kvpool_num_free(a))
				n = kvpool_num_free(a);
			kvpool_alloc_n(a, held[h] + nh[h], n);
			for (int64_t j = 0; j < n; j++)
				assert_int_equal(kvpool_alloc(b), held[h][nh[h] + j]);
			if (kind == 0 && n > 0) {   /* their hashes: stand-ins, or a shared one */
				if (lcg_next(&seed) % 2) {
					kvpool_set_stand_ins(a, held[h] + nh[h], n);
					for (int64_t j = 0; j < n; j++)
						kvpool_set_private_hash(b, held[h][nh[h] + j], 1);
				} else {
					uint64_t hash = 0x1000 + lcg_next(&seed) % 64;
					kvpool_set_hash(a, held[h][nh[h]], hash);
					kvpool_set_hash(b, held[h][nh[h]], hash);
				}
			}
			nh[h] += (int)n;
		} else if (kind == 2 && nh[h] > 0) {   /* a request done */
			kvpool_release_all(a, held[h], nh[h]);
			for (int j = nh[h]; j-- > 0;)
				kvpool_release(b, held[h][j]);
			nh[h] = 0;
		} else if (kind == 3 && nh[h] < MAXB) {   /* a prefix hit */
			uint64_t hash = 0x1000 + lcg_next(&seed) % 64;
			int32_t x = kvpool_lookup(a, hash);
			assert_int_equal(kvpool_lookup(b, hash), x);
			if (x > 0) {
				kvpool_touch(a, x);
				kvpool_touch(b, x);
				held[h][nh[h]++] = x;
			}
		}
		assert_int_equal(kvpool_num_free(a), kvpool_num_free(b));
	}
	for (int h = 0; h < HELD; h++) {
		kvpool_release_all(a, held[h], nh[h]);
		kvpool_release_all(b, held[h], nh[h]);
	}
	for (int64_t n = kvpool_num_free(a); n > 0; n--)
		assert_int_equal(kvpool_alloc(a), kvpool_alloc(b));
	kvpool_destroy(a);
	kvpool_destroy(b);
}

/* kvpool_release_private against stand-ins and kvpool_release_all: two
 * pools take the same requests, each a prefix (prefix-cache hits and
 * blocks given shared hashes), private blocks and an unhashed last block;
 * one marks the private blocks with stand-ins and releases the request
 * one block at a time, the other releases them as a run, and a third
 * releases as the second but allocates with kvpool_alloc_n (which takes a
 * run's ids at once) where the second takes one block at a time. Every
 * allocation must hand out the same block, every lookup find the same
 * one and the free counts agree, over 20,000 operations and the final
 * drain. Fails if a run leaves the queue in another order than its
 * blocks would have (reversed, or at the head), or counts them wrong. */
static void release_private_matches_stand_ins(void **state)
{
	(void)state;
	enum { N = 300, HELD = 12, MAXB = 40 };
	struct kvpool *a = kvpool_create(N, 0), *b = kvpool_create(N, 0);
	struct kvpool *c = kvpool_create(N, 0);   /* b's releases, batch allocations */
	int32_t held[HELD][MAXB];
	int n_pre[HELD] = { 0 }, n_priv[HELD] = { 0 }, n_all[HELD] = { 0 };
	int n_anon = 0;   /* allocations kvpool_head_anonymous vouched for */
	uint64_t seed = 21;
	for (int op = 0; op < 20000; op++) {
		int h = (int)(lcg_next(&seed) % HELD);
		if (n_all[h] == 0) {   /* a request arrives */
			int n = 0;
			for (int k = (int)(lcg_next(&seed) % 4); k > 0; k--) {   /* prefix hits */
				uint64_t hash = 0x2000 + lcg_next(&seed) % 48;
				int32_t x = kvpool_lookup(a, hash);
				assert_int_equal(kvpool_lookup(b, hash), x);
				assert_int_equal(kvpool_lookup(c, hash), x);
				if (x > 0 && n < MAXB) {
					kvpool_touch(a, x);
					kvpool_touch(b, x);
					kvpool_touch(c, x);
					held[h][n++] = x;
				}
			}
			int want[3] = { (int)(lcg_next(&seed) % 4), (int)(lcg_next(&seed) % 20),
					(int)(lcg_next(&seed) % 2) };
			for (int part = 0; part < 3; part++) {
				int64_t k = want[part];
				if (k > MAXB - n)
					k = MAXB - n;
				if (k > kvpool_num_free(a))
					k = kvpool_num_free(a);
				/* Where the first k blocks hold no hash, handing
				 * them out evicts none (vllm_ff_cross_take_all
				 * relies on it). */
				bool anon = kvpool_head_anonymous(b, k);
				int32_t before[48];
				for (int x = 0; x < 48; x++)
					before[x] = kvpool_lookup(b, 0x2000 + (uint64_t)x);
				kvpool_alloc_n(a, held[h] + n, k);
				int32_t from_c[MAXB];
				kvpool_alloc_n(c, from_c, k);
				for (int64_t j = 0; j < k; j++) {
					assert_int_equal(kvpool_alloc(b), held[h][n + j]);
					assert_int_equal(from_c[j], held[h][n + j]);
				}
				for (int x = 0; anon && x < 48; x++)
					assert_int_equal(kvpool_lookup(b, 0x2000 + (uint64_t)x), before[x]);
				n_anon += anon && k > 0;
				for (int64_t j = 0; part == 0 && j < k; j++) {
					if (lcg_next(&seed) % 2) {   /* a shared hash */
						uint64_t hash = 0x2000 + lcg_next(&seed) % 48;
						kvpool_set_hash(a, held[h][n + j], hash);
						kvpool_set_hash(b, held[h][n + j], hash);
						kvpool_set_hash(c, held[h][n + j], hash);
					}
				}
				if (part == 1)
					kvpool_set_stand_ins(a, held[h] + n, k);
				n += (int)k;
				if (part == 0)
					n_pre[h] = n;
				if (part == 1)
					n_priv[h] = n - n_pre[h];
			}
			n_all[h] = n;
		} else {   /* it is done */
			int to = n_pre[h] + n_priv[h];
			kvpool_release_all(a, held[h], n_all[h]);
			kvpool_release_all(b, held[h] + to, n_all[h] - to);
			kvpool_release_private(b, held[h] + n_pre[h], n_priv[h]);
			kvpool_release_all(b, held[h], n_pre[h]);
			kvpool_release_all(c, held[h] + to, n_all[h] - to);
			kvpool_release_private(c, held[h] + n_pre[h], n_priv[h]);
			kvpool_release_all(c, held[h], n_pre[h]);
			n_all[h] = n_pre[h] = n_priv[h] = 0;
		}
		assert_int_equal(kvpool_num_free(a), kvpool_num_free(b));
		assert_int_equal(kvpool_num_free(c), kvpool_num_free(b));
		for (uint64_t hash = 0x2000; hash < 0x2000 + 48; hash++) {
			assert_int_equal(kvpool_lookup(a, hash), kvpool_lookup(b, hash));
			assert_int_equal(kvpool_lookup(c, hash), kvpool_lookup(b, hash));
		}
	}
	assert_true(n_anon > 1000);   /* the check above ran (of 20,000 operations) */
	int32_t rest_c[N];
	int64_t n_rest = kvpool_num_free(c);
	kvpool_alloc_n(c, rest_c, n_rest);
	for (int64_t n = 0; n < n_rest; n++) {
		int32_t x = kvpool_alloc(a);
		assert_int_equal(kvpool_alloc(b), x);
		assert_int_equal(rest_c[n], x);
	}
	kvpool_destroy(a);
	kvpool_destroy(b);
	kvpool_destroy(c);
}

/* kvpool_head_anonymous's exact answers: the front and runs hold no
 * hash, a cached block does, a stale entry (touched since) is skipped. */
static void head_anonymous_reads_the_queue(void **state)
{
	(void)state;
	struct kvpool *p = kvpool_create(8, 0);
	assert_true(kvpool_head_anonymous(p, 7));   /* all fresh */
	int32_t b[7];
	for (int i = 0; i < 7; i++)
		b[i] = kvpool_alloc(p);
	assert_true(kvpool_head_anonymous(p, 0));
	assert_false(kvpool_head_anonymous(p, 1));   /* none free */
	kvpool_set_hash(p, b[0], 0x51);
	kvpool_release_private(p, b + 1, 2);   /* a run of 2 */
	kvpool_release(p, b[0]);               /* cached, behind the run */
	kvpool_release(p, b[3]);               /* no hash: the front */
	assert_true(kvpool_head_anonymous(p, 3));
	assert_false(kvpool_head_anonymous(p, 4));   /* the 4th is b[0], cached */
	kvpool_touch(p, b[0]);                 /* its entry goes stale */
	kvpool_release(p, b[4]);
	assert_true(kvpool_head_anonymous(p, 4));    /* front 2 + the run's 2 */
	assert_false(kvpool_head_anonymous(p, 5));   /* only 4 are free */
	kvpool_destroy(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(usage_and_exhaustion),
		cmocka_unit_test(release_order),
		cmocka_unit_test(lookup_and_touch),
		cmocka_unit_test(eviction_to_cpu_tier),
		cmocka_unit_test(cpu_tier_lru),
		cmocka_unit_test(set_hash_keeps_first),
		cmocka_unit_test(property_random_ops),
		cmocka_unit_test(private_hash_hidden_until_published),
		cmocka_unit_test(private_stand_in_named_at_publish),
		cmocka_unit_test(order_equals_explicit_queue),
		cmocka_unit_test(back_queue_compacts_in_order),
		cmocka_unit_test(batch_calls_match_one_at_a_time),
		cmocka_unit_test(release_private_matches_stand_ins),
		cmocka_unit_test(head_anonymous_reads_the_queue),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
