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

struct stepcache {
	const struct perf *owner;
	struct slot *tab;
	size_t cap, used;            /* cap a power of two */
	bool has_last;
	struct perf_step last;
	double last_total;
	struct perf_breakdown last_b;
	struct stepcache_stats st;
};

enum { MIN_SLOTS = 256 };

_Static_assert(sizeof(struct perf_step) == 4 * sizeof(int64_t) + 6 * sizeof(double),
	       "stepcache_last compares steps by their bytes: struct perf_step must have no padding");

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

bool stepcache_last(struct stepcache *c, const struct perf_step *s, double *total,
		    struct perf_breakdown *b)
{
	/* struct perf_step is 4 int64 and 6 doubles: no padding, so equal
	 * bytes are equal inputs (a -0.0 against 0.0 is only a miss). */
	if (!c->has_last || memcmp(&c->last, s, sizeof *s) != 0) {
		c->st.last_misses++;
		return false;
	}
	c->st.last_hits++;
	*total = c->last_total;
	if (b)
		*b = c->last_b;
	return true;
}

void stepcache_set_last(struct stepcache *c, const struct perf_step *s, double total,
			const struct perf_breakdown *b)
{
	c->has_last = true;
	c->last = *s;
	c->last_total = total;
	c->last_b = *b;
}

void stepcache_stats(const struct stepcache *c, struct stepcache_stats *out)
{
	*out = c->st;
	out->slots = c->cap;
}
