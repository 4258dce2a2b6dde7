/*
 * compare: one workload on several devices, side by side (SEED C22, C23,
 * C31: "compare GPUs before buying").
 *
 * Per device: the single-stream decode ceiling (tensor_parallel_size ×
 * bandwidth ÷ the weight bytes one token reads, model_active_weight_bytes,
 * at datasheet peaks: SEED C8's arithmetic); throughput and latency
 * percentiles at the scenario's own load (mean over replications, 95%
 * interval); the highest rate within the SLO (plan's search, when an SLO is
 * given); and cost: $/hour (price × GPUs), $ per 1M output tokens at the
 * scenario's load and at the SLO limit, output tok/s per $/hour.
 */
#ifndef SERVESIM_COMPARE_H
#define SERVESIM_COMPARE_H

#include <stdbool.h>

#include "measure.h"
#include "plan.h"
#include "tune.h"

struct compare_row {
	struct plan_cand cand;       /* the configuration and its SLO search */
	char name[256];              /* the device's name */
	double bandwidth_gb_s;
	double decode_ceiling_tok_s;
	struct measure_summary at_load;
	char *error;                 /* the run at load could not run (owned) */
};

/* Fills *r for scenario sc (its hardware is the device compared). With
 * `cost`, the profile must have a price (see plan_cand_init). Returns 0 or
 * -1 with e naming `origin` for an unknown device or a missing price. */
int compare_row_init(struct compare_row *r, size_t index, const struct scenario *sc, bool cost,
		     const char *origin, struct err *e);
void compare_row_free(struct compare_row *r);

/* With an SLO and tuned (one tune_cand per row, its cand the row's; NULL:
 * --fixed), first tunes every row (tune.h), so that the rest runs with
 * each row's best setting. Then runs every row at load (R replications),
 * then, when slo->n > 0 and not tuned, plan's search on the rows that ran
 * (tuning has searched them). Cannot fail: a row that cannot run keeps
 * its error. */
void compare_run(struct compare_row *rows, size_t n, const struct plan_slo *slo,
		 const struct plan_opts *o, struct tune_cand *tuned, const struct tune_space *space);

#endif
