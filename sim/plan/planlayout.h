/*
 * planlayout: `plan --gpu-budget G`, every way to serve on G GPUs with
 * one configuration: n = floor(G / GPUs per engine) engines colocated
 * behind the scenario's router, or split xPyD (x prefill and n - x decode
 * replicas, x = 1 … n - 1, over the scenario's kv_transfer link; SEED
 * C24, C25). Each layout is a plan candidate of its own, searched for its
 * highest rate within the SLO, so the ranking answers which layout meets
 * the SLO at the lowest cost; the text adds, per configuration, the best
 * layout and its runners-up.
 *
 * Layout k of n engines: k = 0 colocated, k = x the split xP(n-x)D.
 */
#ifndef SERVESIM_PLANLAYOUT_H
#define SERVESIM_PLANLAYOUT_H

#include <jansson.h>
#include <stdint.h>
#include <stdio.h>

#include "err.h"
#include "inidoc.h"

/* Layouts of n engines (n >= 2): colocated and n - 1 splits. */
static inline int planlayout_count(int64_t engines)
{
	return (int)engines;
}

/* Layout k's name: "8 coloc", "4P4D". */
void planlayout_name(int64_t engines, int k, char *out, size_t cap);

/* Adds layout k's [cluster] overrides (replicas, prefill_replicas,
 * decode_replicas) to ov. Returns 0 or -1 with e (a value too long). */
int planlayout_overrides(struct inidoc *ov, int64_t engines, int k, struct err *e);

/* Marks plan result item it with layout k: "layout", "engines",
 * "prefill_replicas", "decode_replicas", "layout_set" (the --set flags).
 * Cannot fail. */
void planlayout_put(json_t *it, int64_t engines, int k);

/* With doc's "gpu_budget": per configuration (hardware, tp, pp, weights)
 * its layouts in rank order, the best and its runners-up, with their
 * rates. Nothing without it. Cannot fail. */
void planlayout_text(FILE *f, json_t *doc);

#endif
