/*
 * vllmffgap: fast-forward's table of the steps' gaps (vllmff.c): the gap
 * each ended pass's tokens had to the pass before, and a sparse table of
 * their maxima (gmax[k][e]: the longest gap of the ends (e - 2^k, e]), so
 * a request caught up after a lazy run of any length gets its longest gap
 * from a few lookups. Rings of FF_RING ended passes, indexed by mask; a
 * lazy run is shorter than the ring. Inline: one update a step, one
 * query a catch-up.
 */
#ifndef SERVESIM_VLLMFFGAP_H
#define SERVESIM_VLLMFFGAP_H

#include "vllm_int.h"

/* The gap of ended pass `pass` into the table. */
static inline void ffgap_end(struct vllm_ff *f, int64_t pass, int64_t gap)
{
	uint64_t e = (uint64_t)pass;
	f->gmax[0][e & (FF_RING - 1)] = gap;
	for (int k = 1; k < FF_LEVELS; k++) {
		int64_t x = f->gmax[k - 1][e & (FF_RING - 1)];
		int64_t y = f->gmax[k - 1][(e - ((uint64_t)1 << (k - 1))) & (FF_RING - 1)];
		f->gmax[k][e & (FF_RING - 1)] = x > y ? x : y;
	}
}

/* The longest of most and the gaps of the ended passes [from, to), to -
 * from <= FF_RING (from >= 0: the ring index is a mask): under 2 x
 * FF_CHUNK ends, two lookups in the sparse table of the ring (the two
 * spans of 2^k ends that cover the range); longer, its top level's spans
 * of FF_CHUNK one after another and one more ending at to. A maximum of
 * integers: the same value whichever spans cover the range. */
static inline int64_t ffgap_max(const struct vllm_ff *f, int64_t from, int64_t to, int64_t most)
{
	uint64_t len = (uint64_t)(to - from);
	if (len < 2 * FF_CHUNK) {
		int k = 63 - __builtin_clzll(len);
		int64_t a = f->gmax[k][(uint64_t)(to - 1) & (FF_RING - 1)];
		int64_t b = f->gmax[k][(uint64_t)(from + ((int64_t)1 << k) - 1) & (FF_RING - 1)];
		a = a > b ? a : b;
		return a > most ? a : most;
	}
	const int64_t *top = f->gmax[FF_LEVELS - 1];
	int64_t s = from;
	for (; s + FF_CHUNK <= to; s += FF_CHUNK) {
		int64_t a = top[(uint64_t)(s + FF_CHUNK - 1) & (FF_RING - 1)];
		most = a > most ? a : most;
	}
	if (s < to) {
		int64_t a = top[(uint64_t)(to - 1) & (FF_RING - 1)];
		most = a > most ? a : most;
	}
	return most;
}

#endif
