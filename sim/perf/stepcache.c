/*
 * stepcache: the memo of a step model's parts (stepcache.h). An open-
 * addressing table of 64-bit keys, linear probing, at most half full.
 */
#include "stepcache.h"

#include <stdlib.h>
#include <string.h>

#include "xalloc.h"

struct slot {
	uint64_t key;                /* 0: empty */
	double v[STEPCACHE_VALS];
};

/* A whole step and its answer, in a direct-mapped table (a new step
 * takes its slot's place). */
struct whole {
	struct perf_step step;
	struct stepcache_answer a;
	bool full;
};

/* WINDOW lookups with under a quarter hits rest the table for REST
 * steps (estimate: on the ShareGPT benchmark, 10% hits, the table cost
 * about 5% of the run's CPU; at a low-rate point of the default workload
 * it hits 94%). */
enum { WHOLE_SLOTS = 2048, WINDOW = 4096, REST = 1 << 16 };

struct stepcache {
	const struct perf *owner;
	struct slot *tab;
	size_t cap, used;            /* cap a power of two */
	struct whole *whole;          /* WHOLE_SLOTS, allocated at the first lookup */
	int64_t win_n, win_hits, skip;   /* this window's lookups and hits; steps left to rest */
	struct stepcache_stats st;
};

enum { MIN_SLOTS = 256 };

_Static_assert(sizeof(struct perf_step) == 4 * sizeof(int64_t) + 6 * sizeof(double),
	       "stepcache_step compares steps by their bytes: struct perf_step must have no padding");

struct stepcache *stepcache_new(const struct perf *owner)
{
	struct stepcache *c = xcalloc(1, sizeof *c);
	c->owner = owner;
	c->cap = MIN_SLOTS;
	c->tab = xcalloc(c->cap, sizeof *c->tab);
	return c;
}

void stepcache_free(struct stepcache *c)
{
	if (!c)
		return;
	free(c->tab);
	free(c->whole);
	free(c);
}

bool stepcache_for(const struct stepcache *c, const struct perf *p)
{
	return c && c->owner == p;
}

/* A key never 0: the part in bit 0, m in bits 1-16, the count above. */
static uint64_t make_key(enum stepcache_part part, int64_t count, int m)
{
	return ((uint64_t)count << 17 | (uint64_t)m << 1 | (uint64_t)part) + 1;
}

static size_t hash(uint64_t k)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdULL;
	k ^= k >> 33;
	return (size_t)k;
}

static struct slot *probe(struct slot *tab, size_t cap, uint64_t key)
{
	size_t i = hash(key) & (cap - 1);
	while (tab[i].key && tab[i].key != key)
		i = (i + 1) & (cap - 1);
	return &tab[i];
}

/* Doubles the table, or empties it at STEPCACHE_MAX_SLOTS. */
static void grow(struct stepcache *c)
{
	if (c->cap >= STEPCACHE_MAX_SLOTS) {
		memset(c->tab, 0, c->cap * sizeof *c->tab);
		c->used = 0;
		c->st.resets++;
		return;
	}
	size_t cap = c->cap * 2;
	struct slot *tab = xcalloc(cap, sizeof *tab);
	for (size_t i = 0; i < c->cap; i++)
		if (c->tab[i].key)
			*probe(tab, cap, c->tab[i].key) = c->tab[i];
	free(c->tab);
	c->tab = tab;
	c->cap = cap;
}

double *stepcache_slot(struct stepcache *c, enum stepcache_part part, int64_t count, int m,
		       bool *found)
{
	if (count < 0 || count >= (int64_t)1 << 46 || m < 1 || m > 65535)
		return NULL;
	uint64_t key = make_key(part, count, m);
	struct slot *s = probe(c->tab, c->cap, key);
	if (s->key) {
		c->st.hits++;
		*found = true;
		return s->v;
	}
	c->st.misses++;
	if (2 * (c->used + 1) > c->cap) {
		grow(c);
		s = probe(c->tab, c->cap, key);
	}
	s->key = key;
	c->used++;
	*found = false;
	return s->v;
}

/* The whole-step table's slot of s, and its hash. struct perf_step is 4
 * int64 and 6 doubles, no padding: equal bytes are equal inputs (a -0.0
 * against 0.0 is only a miss). */
enum { STEP_WORDS = sizeof(struct perf_step) / sizeof(uint64_t) };

/* Word i of a step's bytes. */
static inline uint64_t word(const struct perf_step *s, size_t i)
{
	uint64_t x;
	memcpy(&x, (const char *)s + i * sizeof x, sizeof x);
	return x;
}

static struct whole *whole_slot(struct stepcache *c, const struct perf_step *s)
{
	/* Each word times its own odd constant, summed: the multiplies are
	 * independent, where a chain of them through h made each lookup wait
	 * on the one before (a rate-1 point of the default workload, 80k
	 * requests: 0.72 -> 0.66 s); hash() brings the high bits down. */
	static const uint64_t mul[STEP_WORDS] = {
		0x9e3779b97f4a7c15ULL, 0xff51afd7ed558ccdULL, 0xc4ceb9fe1a85ec53ULL,
		0xd6e8feb86659fd93ULL, 0xa0761d6478bd642fULL, 0xe7037ed1a0b428dbULL,
		0x8ebc6af09c88c6e3ULL, 0x589965cc75374cc3ULL, 0x1d8e4e27c47d124fULL,
		0xbf58476d1ce4e5b9ULL,
	};
	_Static_assert(sizeof mul / sizeof *mul == STEP_WORDS, "a constant for each word of a step");
	uint64_t h = 0;
#pragma GCC unroll 16
	for (size_t i = 0; i < STEP_WORDS; i++)
		h += word(s, i) * mul[i];
	return &c->whole[hash(h) & (WHOLE_SLOTS - 1)];
}

/* Whether two steps' bytes are equal (memcmp's answer, inline: the call
 * was a fifth of a lookup). */
static bool same_bytes(const struct perf_step *a, const struct perf_step *b)
{
	uint64_t diff = 0;
#pragma GCC unroll 16
	for (size_t i = 0; i < STEP_WORDS; i++)
		diff |= word(a, i) ^ word(b, i);
	return diff == 0;
}

struct stepcache_answer *stepcache_step(struct stepcache *c, const struct perf_step *s, bool *found)
{
	*found = false;
	if (c->skip > 0) {
		c->skip--;
		return NULL;
	}
	if (!c->whole)
		c->whole = xcalloc(WHOLE_SLOTS, sizeof *c->whole);
	struct whole *e = whole_slot(c, s);
	*found = e->full && same_bytes(&e->step, s);
	c->win_n++;
	c->win_hits += *found;
	if (c->win_n == WINDOW) {
		/* Steps that rarely recur (lengths drawn from a distribution):
		 * the table costs more than it saves; rest it a while. */
		if (4 * c->win_hits < c->win_n)
			c->skip = REST;
		c->win_n = c->win_hits = 0;
	}
	if (*found) {
		c->st.step_hits++;
	} else {
		c->st.step_misses++;
		e->full = true;   /* s takes the slot; the caller fills the answer */
		e->step = *s;
	}
	return &e->a;
}

void stepcache_stats(const struct stepcache *c, struct stepcache_stats *out)
{
	*out = c->st;
	out->slots = c->cap;
}
