/*
 * sweep: a grid of scenario variants, each run with replications, one
 * summary (mean and 95% confidence interval) per point.
 *
 * An axis is `KEY=VALUES`: KEY is `section.key` of a scenario or a short
 * name (request_rate, max_concurrency, num_prompts → [workload];
 * hardware, model, weights, seed → [run]; tensor_parallel_size (tp),
 * max_num_batched_tokens, max_num_seqs → [engine]); VALUES is a
 * comma-separated list whose items are values or ranges START:STOP:STEP
 * (STOP included when the steps reach it, to 1e-9 of a step). Values stay
 * text and go through the scenario's own parser, so every key and value is
 * checked exactly as `--set` checks it.
 *
 * Points are the cartesian product of the axes, the first axis varying
 * slowest; point i's coordinates follow from i alone, so a shard can pick
 * its points without seeing the others.
 *
 * Cost: points × replications simulations, run on `jobs` threads.
 */
#ifndef SERVESIM_SWEEP_H
#define SERVESIM_SWEEP_H

#include <stddef.h>

#include "err.h"
#include "inidoc.h"
#include "measure.h"
#include "resultdoc.h"
#include "scenario.h"

#define SWEEP_MAX_POINTS 100000

struct sweep_axis {
	char key[2 * INI_NAME_MAX + 2];  /* section.key */
	char *spec;                      /* as given, for messages (owned) */
	char **values;                   /* owned */
	size_t n;
	bool numeric;                    /* every value is a number */
};

/* Parses one --vary spec into *ax (free with sweep_axis_free, also after a
 * failure). Returns 0, or -1 with e naming --vary and what was expected:
 * an unknown short name, an empty list or item, a range that is reversed,
 * empty or has a step <= 0, or more than SWEEP_MAX_POINTS values. Whether
 * a section.key exists is checked by sweep_build. */
int sweep_axis_parse(struct sweep_axis *ax, const char *spec, struct err *e);
void sweep_axis_free(struct sweep_axis *ax);

/* Expands a short name ("tp", "request_rate") into section.key in out;
 * returns -1 when name has no dot and is not a short name. */
int sweep_key_expand(const char *name, char *out, size_t cap);

/* The short names, for messages: "request_rate, max_concurrency, …". */
const char *sweep_short_names(void);

struct sweep {
	const char *scenario_path;       /* NULL: the built-in default (borrowed) */
	const struct inidoc *overrides;  /* --set, applied before the axes (borrowed) */
	const struct sweep_axis *axes;   /* borrowed */
	size_t n_axes;
	size_t n_points;                 /* product of the axis sizes */
	double duration_s;               /* > 0: every point with a finite request_rate sends at
					    least rate × this many requests, as plan's --duration
					    (0: the scenario's num_prompts); set after sweep_init */
};

/* Fills *sw and checks the grid's size. Returns 0 or -1 with e. */
int sweep_init(struct sweep *sw, const char *scenario_path, const struct inidoc *overrides,
	       const struct sweep_axis *axes, size_t n_axes, struct err *e);

/* The index into axis a's values of point i (i < n_points). Cannot fail. */
size_t sweep_coord(const struct sweep *sw, size_t i, size_t a);

/* Loads point i's scenario: the file, the overrides, then the point's
 * values. Returns 0 or -1 with e naming the --vary that does not fit. */
int sweep_point_scenario(const struct sweep *sw, size_t i, struct scenario *sc, struct err *e);

/* What a point gave: the summary over its replications, or the error of
 * the first replication that could not run. */
struct sweep_point {
	size_t index;
	struct measure_summary s;
	char *error;                     /* NULL when it ran (owned) */
};

/* Runs every point of the shard with `replications` seeds on `jobs`
 * threads, counting them on progress (NULL: none). *out gets the shard's points in index order (the caller frees
 * each error and the array). Returns 0, or -1 with e for a point whose
 * scenario does not load (bad input: nothing is run then). A point that
 * loads but cannot run (a model too large for the device) is not a
 * failure of the sweep: its error is kept in the point. */
struct progress;
int sweep_run(const struct sweep *sw, const struct shard *sh, int replications, int jobs,
	      struct progress *progress, struct sweep_point **out, size_t *n_out, struct err *e);

#endif
