/*
 * effparam: the [efficiency] parameters a calibration can fit, as one table.
 *
 * Each entry names a field of struct hw_efficiency by its INI key (the key
 * hardware_profiles/<id>.ini uses), says whether it is a fraction of a peak
 * (in (0, 1]) or a positive amount with a unit, and maps it to and from an
 * unconstrained number for the optimisers: logit for fractions, log for
 * amounts. So a fitter never proposes a value the profile loader would
 * reject, and a value written back reads as what was fitted.
 *
 * Invariants: effparam_from_x(id, x) is in (0, 1) for fractions and >= the
 * entry's floor for amounts, for every finite x; effparam_from_x(id,
 * effparam_to_x(id, v)) == v within rounding for v inside those ranges.
 */
#ifndef SERVESIM_EFFPARAM_H
#define SERVESIM_EFFPARAM_H

#include <stdbool.h>
#include <stddef.h>

#include "hwprofile.h"

enum effparam_id {
	EFF_BANDWIDTH,
	EFF_ATTENTION_BANDWIDTH,
	EFF_ATTENTION_HALF_SEQS,
	EFF_COMPUTE_MAX,
	EFF_COMPUTE_HALF_TOKENS,
	EFF_ATTENTION_COMPUTE,
	EFF_LOW_PRECISION_COMPUTE,
	EFF_MOE_EFFICIENCY,
	EFF_STEP_OVERHEAD_US,
	EFF_STEP_OVERHEAD_PER_SEQ_US,
	EFF_REQUEST_OVERHEAD_MS,
	EFF_N_PARAMS
};

struct effparam {
	const char *key;        /* INI key in [efficiency] */
	size_t offset;          /* offsetof(struct hw_efficiency, field) */
	bool fraction;          /* a fraction of a peak, in (0, 1] */
	double floor;           /* amounts: the smallest value a fit proposes */
	const char *unit;       /* for messages: "", "tokens", "seqs", "us", "ms" */
};

/* The entry for id (0 <= id < EFF_N_PARAMS). Borrowed, static. */
const struct effparam *effparam_get(enum effparam_id id);

double effparam_value(const struct hw_efficiency *eff, enum effparam_id id);
void effparam_set(struct hw_efficiency *eff, enum effparam_id id, double v);

/* To and from the unconstrained space the optimisers search. */
double effparam_to_x(enum effparam_id id, double v);
double effparam_from_x(enum effparam_id id, double x);

#endif
