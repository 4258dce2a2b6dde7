/*
 * routerskew: how unevenly a model family's trained router spreads its
 * tokens over the experts, as the Zipf exponent the step model's routing
 * takes (sim/perf/moe.c: expert i's share of picks ∝ i^-skew, 0 uniform).
 *
 * Owns the table of family defaults, each set from a published
 * measurement of expert loads under inference (the source beside it) and
 * none from end-to-end timings. A family no measurement covers routes
 * uniformly (0), and says so. Invariant: every row's skew is >= 0; a
 * scenario's own [engine] moe_router_skew (>= 0) always wins.
 */
#ifndef SERVESIM_ROUTERSKEW_H
#define SERVESIM_ROUTERSKEW_H

#include "model.h"

/* The unset value of [engine] moe_router_skew: take the family's. */
#define ROUTER_SKEW_FAMILY (-1.0)

/* given when >= 0, else the default of m's family (by model_type; 0 for
 * a family with no row or a dense model). source, when not NULL, is set
 * to where the number comes from (never NULL). */
double model_router_skew(const struct model *m, double given, const char **source);

#endif
