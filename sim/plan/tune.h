/*
 * tune: each plan or compare candidate at its best engine settings for the
 * SLO, so that GPUs are compared at their best configuration and not at one
 * setting that suits one of them (issue 12: an A100 at vLLM's default
 * max_num_batched_tokens holds 0.77 req/s within ttft_p99 2 s and itl_p99
 * 50 ms; at 512 it holds about 11).
 *
 * The space: axes of [engine] keys, each a list of values (tune_keys in
 * tune.c: max_model_len (one value, the workload's longest request
 * rounded up to a power of two, when the scenario leaves it to the model's
 * whole context, which a small device's KV pool may not hold; searched
 * only for a setting that cannot start),
 * max_num_batched_tokens, enable_chunked_prefill,
 * long_prefill_token_threshold, max_num_seqs, kv_cache_dtype,
 * enable_prefix_caching where the workload shares prefixes,
 * gpu_memory_utilization up to the user's bound). `--search KEY=V1,V2,…`
 * replaces an axis's values or adds an axis for any other [engine] key.
 *
 * The search, per candidate, every step of it for all candidates at once
 * (one plan_search per step, so the simulations of a step run in parallel
 * and the answer does not depend on the thread count):
 *   1. coarse: coordinate descent from the scenario's own settings. For
 *      each axis in table order, every value is searched for its SLO rate
 *      with one replication and a looser tolerance (>= 5%), starting at
 *      the best rate so far (so a bracket takes few loads); the axis moves
 *      to the best value only when it beats the current one by more than
 *      that tolerance (a coarse difference within it is noise). Two passes
 *      at most; a second only when the first moved something.
 *   2. fine: the TUNE_FINALISTS best distinct settings (coarse rate, ties
 *      in the order they were tried; a setting whose coarse rate equals a
 *      better one's, within 0.1%, most likely differs only in a knob that
 *      does nothing for this load and is skipped, so that the runners-up
 *      show real alternatives) are searched again with the caller's
 *      replications, confidence and tolerance, each from the scenario's
 *      own load, as `--fixed` with its --set line searches it (so the
 *      selection rate reproduces). The winner is the highest
 *      fine rate (ties: the better coarse rank); the others are the
 *      runners-up, with their rates.
 *   3. confirm (winner's curse): the winner's fine rate is the largest of
 *      TUNE_FINALISTS noisy estimates on the seeds that chose it, so it
 *      overstates the winner. The winner is searched again on
 *      o->confirm_blocks (default 3) fresh seed blocks, block b on seeds
 *      seed + R(b + 1) … seed + R(b + 2) - 1 (disjoint from the
 *      selection's seed … seed + R - 1, and the same for every candidate,
 *      so GPUs are compared on common random numbers), each with the
 *      caller's R, confidence and tolerance, starting at the fine rate and
 *      stepping by 1 + 4 × tolerance. The candidate's answer (its rate,
 *      statistics and binding limit) is the median block's search; the
 *      blocks' mean and 95% half-width (Student t over the blocks) are its
 *      spread. The fine rate stays as selection_rate. A runner-up whose
 *      selection rate is within that half-width of the winner's is
 *      "indistinguishable" from it (the choice between them is noise).
 *      With confirm_blocks 0 the answer is the winner's fine search.
 * Runs already made are reused: a setting (keyed by its override set) is
 * searched once per candidate however often the descent comes back to it.
 * Deterministic for given inputs; each candidate is tuned on its own, so
 * plan's and compare's --shard slices tune the same as the whole.
 */
#ifndef SERVESIM_TUNE_H
#define SERVESIM_TUNE_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "err.h"
#include "inidoc.h"
#include "plan.h"

#define TUNE_MAX_AXES 12
#define TUNE_MAX_VALUES 12
#define TUNE_FINALISTS 3
#define TUNE_MAX_CONFIGS 96          /* distinct settings tried per candidate, at most */
#define TUNE_MAX_CONFIRM 16          /* confirmation blocks, at most */

struct tune_axis {
	char key[48];                /* an [engine] key, without "engine." */
	int n;
	char values[TUNE_MAX_VALUES][24];
};

struct tune_space {
	int n;
	struct tune_axis axis[TUNE_MAX_AXES];
};

/* The default space for scenario sc (no axes for engines other than vLLM;
 * enable_prefix_caching only when the workload shares prefixes: a
 * random_prefix_len or several turns). gpu_memory_utilization's axis is
 * the scenario's own value and max_gmu when that is higher. Cannot fail. */
void tune_space_default(struct tune_space *s, const struct scenario *sc, double max_gmu);

/* Applies one --search KEY=V1,V2,… (KEY with or without "engine."):
 * replaces that axis's values, or adds the axis. Returns 0 or -1 with e
 * naming --search (malformed, too many values or axes, a key outside
 * [engine]). Values are checked against the scenario later, by
 * tune_space_check. */
int tune_space_add(struct tune_space *s, const char *spec, struct err *e);

/* Checks every value of every axis by loading scenario path with base
 * overrides plus KEY=VALUE. Returns 0 or -1 with e naming --search. */
int tune_space_check(const struct tune_space *s, const char *path, const struct inidoc *base,
		     struct err *e);

/* One setting: per axis the value index, -1 for the scenario's own. */
struct tune_config {
	int8_t pick[TUNE_MAX_AXES];
};

struct tune_tried {
	struct tune_config cfg;
	double coarse_rate;          /* req/s (or concurrency) of the coarse search; 0: none passes */
	double rate;                 /* the fine search's sustained rate; NaN when not a finalist */
	char *error;                 /* the setting cannot run (owned) */
};

/* A candidate to tune: its scenario file and overrides (the candidate's
 * hardware, tp … among them), and the plan candidate the answer goes to. */
struct tune_cand {
	const char *path;            /* scenario file, or NULL for the built-in default */
	struct inidoc ov;            /* owned by the caller */
	struct plan_cand *cand;      /* borrowed; gets the winner's scenario and search */
	/* Out. */
	struct tune_tried *tried;    /* owned; in the order tried */
	size_t n_tried;
	int winner;                  /* index in tried; -1 when nothing was tuned */
	int finalists[TUNE_FINALISTS], n_finalists;  /* indices in tried, best first */
	double selection_rate;       /* the winner's fine rate (selection seeds); NaN: none */
	double confirmed[TUNE_MAX_CONFIRM];  /* its rate on each fresh seed block (req/s) */
	double confirmed_load[TUNE_MAX_CONFIRM];  /* and the load found (tried's unit: req/s,
						     or concurrent requests --by concurrency) */
	int n_confirmed;             /* 0: not confirmed (--confirm 0, or nothing passes) */
	int64_t confirm_seed_offset; /* block b's seeds: seed + offset × (b + 1) + r */
	int64_t simulations;         /* simulations run for this candidate (confirmation too) */
	int64_t reused;              /* searches saved by the cache */
};

/* Tunes every candidate (see the header comment). Each cand's plan_cand
 * must be initialised (plan_cand_init); it ends as a searched candidate of
 * the winning setting, with that setting's scenario. Cannot fail: a
 * setting that cannot run counts as rate 0 with its error; when none runs,
 * the candidate is searched as given (and ends infeasible as plan_search
 * makes it). */
void tune_run(struct tune_cand *t, size_t n, const struct tune_space *s, const struct plan_slo *slo,
	      const struct plan_opts *o);
void tune_cand_free(struct tune_cand *t);

/* The setting as JSON {"key": value, …} (every axis; the scenario's own
 * value for -1) and as the --set flags that reproduce it from the scenario
 * ("" when it is the scenario's own). Cannot fail. */
json_t *tune_config_json(const struct tune_space *s, const struct tune_config *c,
			 const struct scenario *own);
void tune_config_flags(const struct tune_space *s, const struct tune_config *c, char *out,
		       size_t cap);

/* The "tuning" object of a result item: config, set, simulations, reused,
 * settings_tried, selection_rate, confirmation ({seed_offset, blocks,
 * rates, mean, ci95}; absent when not confirmed) and runners_up ([{config,
 * set, max_rate, indistinguishable}…], their rates on the selection seeds).
 * Cannot fail. */
json_t *tune_item_json(const struct tune_cand *t, const struct tune_space *s,
		       const struct plan_opts *o);

/* The space as JSON {"key": [values…], …} for the document's search
 * object. Cannot fail. */
json_t *tune_space_json(const struct tune_space *s);

#endif
