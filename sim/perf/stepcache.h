/*
 * stepcache: memoised parts of a step's time (issue 14: a sweep point
 * spent a third of its time in the step model, recomputing the same
 * rows for the same batch sizes step after step).
 *
 * What it owns: a bounded table from a key (which part, a count of
 * tokens, the microbatches m) to a few doubles, and a bounded table of
 * whole steps (every input of struct perf_step) with their times. It knows no formula: steptime.c computes every
 * value at its first miss and reads it back at the next hit, so a change
 * to a row of the step model needs no change here.
 *
 * Invariants:
 *   - a cache belongs to one struct perf, its owner, by address; steptime
 *     consults it only for that perf (a copy of the perf, which another
 *     caller may go on to change, never reads it), and the owner must not
 *     change once the cache is attached (the engine attaches it last);
 *   - a value is exactly what steptime computed for its key, so a step
 *     timed through the cache is bit-identical to one timed without it
 *     (tests/test_stepcache.c, over random batches);
 *   - memory is bounded: past STEPCACHE_MAX_SLOTS the table empties and
 *     refills (a cost, never a different answer).
 * Not thread-safe: one engine (one thread) per cache.
 */
#ifndef SERVESIM_STEPCACHE_H
#define SERVESIM_STEPCACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "steptime.h"

/* The memoised parts. Each is a function of its key alone (steptime.c
 * says which rows go in which part). */
enum stepcache_part {
	STEPCACHE_TOKENS,    /* rows set by the tokens of a microbatch */
	STEPCACHE_SAMPLED,   /* rows set by the sequences that sample */
};

/* Doubles a key holds: a time per operator row, and one more. */
enum { STEPCACHE_VALS = PERF_N_OPS + 1, STEPCACHE_MAX_SLOTS = 1 << 13 };

struct stepcache_stats {
	int64_t hits, misses;        /* part lookups */
	int64_t step_hits, step_misses;   /* whole-step lookups (stepcache_step) */
	int64_t resets;              /* times the table was full and emptied */
	size_t slots;                /* the table's size now */
};

/* A cache for owner (which it never reads, only compares). */
struct stepcache *stepcache_new(const struct perf *owner);
void stepcache_free(struct stepcache *c);   /* NULL: nothing */

/* Whether c may answer for p: c is not NULL and is p's own cache. */
bool stepcache_for(const struct stepcache *c, const struct perf *p);

/* The STEPCACHE_VALS doubles of (part, count, m): *found says whether they
 * hold what an earlier call stored; if not, the caller fills them. The
 * pointer is valid until the next call on c. NULL when the key is out of
 * range (count < 0, m outside 1..65535): compute without the cache. */
double *stepcache_slot(struct stepcache *c, enum stepcache_part part, int64_t count, int m,
		       bool *found);

/* A whole step's answer. */
struct stepcache_answer {
	double total;
	struct perf_breakdown b;
};

/* Whole steps: the answer for s, *found when s is bit for bit a step an
 * earlier call stored and no other step has taken its place since (a
 * bounded table: a step that recurs, as a lone request's decodes do from
 * one request to the next, is computed once). When not found, s has
 * taken the slot and the caller fills the answer before the next
 * stepcache_step (stepcache_slot calls leave it in place). NULL (not
 * found, nothing to fill) while the table rests: after a window of
 * lookups that mostly missed, it is skipped for a while. */
struct stepcache_answer *stepcache_step(struct stepcache *c, const struct perf_step *s, bool *found);

void stepcache_stats(const struct stepcache *c, struct stepcache_stats *out);

#endif
