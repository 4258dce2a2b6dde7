/*
 * ranknoise: whether the confirmation blocks (tune.h, step 3) resolve the
 * order of two ranked candidates on different GPUs, for plan's and
 * compare's documents.
 *
 * Every tuned candidate's chosen setting is searched again on the same
 * fresh seed blocks (block b: seeds seed + R(b+1) + r for every
 * candidate: common random numbers), so block b of two GPUs saw the same
 * arrivals and the comparison is paired. Per block the value is
 * v_b = rate_b / GPUs a replica (are the two as fast?), and, priced,
 * rate_b / (GPUs a replica × price of a GPU-hour) (do they cost the same
 * a token? up to the tokens per request, which the workload sets); then
 * d_b = ln v_b(A) - ln v_b(B). Each block's rate is the low end of a
 * bracket [lo, hi) at most `tolerance` of hi wide, and the two GPUs'
 * brackets fall alike on common seeds, so the blocks can agree to the
 * digit on a gap the search never resolved: the order of A and B is
 * resolved when |mean d| exceeds the 95% Student-t half-width over the B
 * blocks, t(0.975, B-1) × sd / √B, plus the bracket's width,
 * -ln(1 - tolerance) (2%: a gap under about 2% is never resolved). With
 * fewer than 2 blocks nothing is claimed.
 *
 * A pair whose rates are not resolved is "within noise" by rate: they
 * are as fast, so the cheaper one per hour serves as well (without cost:
 * which ranks first is the seeds' choice, and the one with fewer GPUs a
 * replica serves as well). A pair whose rates are resolved but whose cost
 * per token is not is within noise by cost: which ranks first is the
 * seeds' choice, and the faster one has the headroom.
 *
 * Invariants: only usable (max_rate > 0, no error), confirmed candidates
 * with different hardware and the same number of blocks; pairs listed in
 * rank order, the better-ranked first, each pair once.
 */
#ifndef SERVESIM_RANKNOISE_H
#define SERVESIM_RANKNOISE_H

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

#include "docschema.h"

/* How a document names its items' fields. */
struct ranknoise_keys {
	const char *index;           /* the item's index key ("candidate", "row") */
	const char *usd_per_hour;    /* the $/hour that names the cheaper of a pair */
	bool cost;                   /* the document is priced */
	double tolerance;            /* the search's bracket width (search.tolerance) */
};

/* The pairs of items (in the order of ranking, an array of index values;
 * NULL: the items' order) whose order is within noise, as a JSON array of
 * {"hardware": [A, B], "ranks": [a, b], INDEX: [i, j], "blocks", "basis"
 * ("rate per GPU" or "rate per $/hour"), "difference" (exp(mean d) - 1:
 * how much more A has), "margin" (the same for the margin it had to
 * exceed), "max_rate": [A, B], "gpus_per_replica": [A, B], "usd_per_hour":
 * [A, B] (by rate, priced), "pick" (by rate: the cheaper per hour, or the
 * one with fewer GPUs; by cost: the faster; null on a tie)}. NULL when no
 * item was confirmed (untuned or --confirm 0: the document keeps its old
 * form). Cannot fail. */
json_t *ranknoise_pairs(json_t *items, json_t *ranking, const struct ranknoise_keys *k);

/* What a document read back must hold in each within_noise pair for the
 * sentences (docschema.h): blocks an integer from 2 to TUNE_MAX_CONFIRM,
 * ranks integers, basis a string, difference and margin numbers. */
extern const struct docschema_field ranknoise_schema[];

/* Whether two items' order is resolved (see the header comment), from
 * their blocks' rates, their cost per replica (price × GPUs, or GPUs) and
 * the search's tolerance. *diff gets the mean of d and *half the margin it
 * must exceed (the 95% half-width plus the bracket's width). Returns
 * false with n < 2. */
bool ranknoise_resolved(const double *rate_a, const double *rate_b, int n, double cost_a, double cost_b,
			double tolerance, double *diff, double *half);

/* One pair as a sentence ("h100-sxm and h200 (ranks 1 and 2) are within
 * noise at this SLO: …; the cheaper one is h100-sxm …"). Cannot fail. */
void ranknoise_sentence(json_t *pair, char *out, size_t cap);

/* Prints every pair of doc's "within_noise" as "within noise: SENTENCE"
 * lines (nothing when there are none). */
void ranknoise_text(FILE *f, json_t *doc);

/* The better ranks (1-based) that rank `rank` of doc is within noise of,
 * as "1" or "1,2" in out ("" when none). Cannot fail. */
void ranknoise_of(json_t *doc, long long rank, char *out, size_t cap);

#endif
