/*
 * hmap: an open-addressing map from nonzero 64-bit hashes to int32
 * values, linear probing and backward-shift deletion (no tombstones):
 * the KV pool's prefix cache (hash -> GPU block) and its CPU tier (hash
 * -> slot). Static inline: a lookup is on the scheduler's path.
 *
 * What it owns: its two arrays (hmap_init allocates, aborting on OOM;
 * hmap_free frees). Sized once for the entries it will ever hold (at
 * most half full), so a put never grows it. Key 0 is reserved (empty).
 */
#ifndef SERVESIM_HMAP_H
#define SERVESIM_HMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "xalloc.h"

/* An open-addressing map from nonzero 64-bit hashes to int32 values, with
 * linear probing and backward-shift deletion (no tombstones). */
struct hmap {
	uint64_t *keys;     /* 0 = empty slot */
	int32_t *vals;
	size_t mask;
};

static inline void hmap_init(struct hmap *m, size_t entries)
{
	size_t cap = 16;
	while (cap < 2 * entries + 1)
		cap *= 2;
	m->keys = xcalloc(cap, sizeof *m->keys);
	m->vals = xcalloc(cap, sizeof *m->vals);
	m->mask = cap - 1;
}

static inline void hmap_free(struct hmap *m)
{
	free(m->keys);
	free(m->vals);
}

static inline size_t slot_of(uint64_t key, size_t mask)
{
	key ^= key >> 33;
	key *= 0xff51afd7ed558ccdULL;
	key ^= key >> 33;
	return (size_t)key & mask;
}

static inline int32_t hmap_get(const struct hmap *m, uint64_t key)
{
	for (size_t i = slot_of(key, m->mask);; i = (i + 1) & m->mask) {
		if (m->keys[i] == key)
			return m->vals[i];
		if (m->keys[i] == 0)
			return -1;
	}
}

static inline void hmap_put(struct hmap *m, uint64_t key, int32_t val)
{
	size_t i = slot_of(key, m->mask);
	while (m->keys[i] != 0 && m->keys[i] != key)
		i = (i + 1) & m->mask;
	m->keys[i] = key;
	m->vals[i] = val;
}

static inline void hmap_del(struct hmap *m, uint64_t key)
{
	size_t i = slot_of(key, m->mask);
	while (m->keys[i] != key) {
		if (m->keys[i] == 0)
			return;
		i = (i + 1) & m->mask;
	}
	/* Backward shift: pull later entries of the probe run into the hole. */
	for (size_t j = (i + 1) & m->mask; m->keys[j] != 0; j = (j + 1) & m->mask) {
		size_t home = slot_of(m->keys[j], m->mask);
		bool movable = i <= j ? (home <= i || home > j) : (home <= i && home > j);
		if (movable) {
			m->keys[i] = m->keys[j];
			m->vals[i] = m->vals[j];
			i = j;
		}
	}
	m->keys[i] = 0;
}

#endif
