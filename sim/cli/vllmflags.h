/*
 * vllmflags: `vllm serve` and `vllm bench serve` command lines, as users
 * copy them, turned into servesim's own.
 *
 * One table (vllmflags.c) names every vLLM flag servesim knows, with what
 * it becomes: a scenario key (`--num-prompts 50` → `--set
 * workload.num_prompts=50`), an output setting of `vllm bench serve`
 * (--save-result, --percentile-metrics, …) collected in struct vllm_out,
 * nothing (a client setting with no meaning in a simulation: --host,
 * --port, --endpoint, …), or a refusal (a feature servesim does not model:
 * data parallelism, speculative decoding, …). `--config FILE` reads
 * `vllm serve`'s YAML config, keys as flags (dashes or underscores); flags
 * on the command line come after it, so they win, as in vLLM.
 *
 * vllmflags_rewrite runs once, before a verb's getopt_long: options the
 * verb declares itself pass through untouched (run's --model, --seed,
 * --metric-percentiles, --save-detailed), vLLM flags are rewritten to
 * `--set SECTION.KEY=VALUE`, and anything else that looks like a flag is an
 * error naming it. Invariant: a vLLM flag and the `--set` it maps to give
 * the same scenario, so the same output (tests/test_vllmflags.c).
 *
 * Without a SCENARIO argument and with any `vllm bench serve` flag, the
 * run starts from `vllm bench serve`'s own defaults (--num-prompts 1000,
 * --request-rate inf), not the built-in demo (200 prompts at 4 req/s).
 */
#ifndef SERVESIM_VLLMFLAGS_H
#define SERVESIM_VLLMFLAGS_H

#include <getopt.h>
#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "err.h"

/* vllm bench serve's output flags; NULL / false / 0 when not given. */
struct vllm_out {
	bool save_result, append_result, save_detailed;
	const char *result_dir, *result_filename, *label;
	const char *metric_percentiles;    /* "50,90,99" as given */
	unsigned percentile_metrics;       /* bit m: ttft, tpot, itl, e2el; 0 = not given */
	char **metadata;                   /* KEY=VALUE, n_metadata of them */
	size_t n_metadata, cap_metadata;
	bool any;                          /* one of the above was given */
};

/* The rewritten command line. argv is owned (free with vllmflags_free);
 * its strings are borrowed from the original argv or owned by `owned`. */
struct vllm_args {
	int argc;
	char **argv;
	struct vllm_out out;
	char **owned;
	size_t n_owned, cap_owned;
	size_t argv_cap;
	/* Each --set the rewrite made and the flag it was typed as
	 * (vllmflags_origin). */
	struct vllm_origin {
		const char *set;        /* an owned string of argv */
		char flag[256];         /* "--block-size", "FILE:LINE: block-size" (cut) */
	} *origins;
	size_t n_origins, cap_origins;
};

/* Rewrites argc/argv (argv[0] is the verb) against the verb's own option
 * table. Returns 0 with *va filled, or -1 with e naming the flag (an
 * unknown flag, a refused feature, a bad value, an unreadable --config).
 * vllmflags_free is safe after either. */
int vllmflags_rewrite(const char *verb, const struct option *verb_opts, int argc, char **argv,
		      struct vllm_args *va, struct err *e);
void vllmflags_free(struct vllm_args *va);

/* The flag the user typed for assignment, an argument of va's `--set`
 * (the very string: what getopt_long gives as optarg), or NULL when it
 * was typed as --set itself. For inidoc_add_override_from, so that an
 * error names `--block-size`, not the key it set. */
const char *vllmflags_origin(const struct vllm_args *va, const char *assignment);

/* vllm bench serve's --save-result for `servesim run` (vllmsave.c): adds
 * --label and --metadata to result (a report_json object, borrowed), names
 * the file as vLLM does ({label}-{rate}qps[-concurrency{N}]-{model}-
 * {YYYYmmdd-HHMMSS}.json in --result-dir) unless --result-filename, and
 * writes it whole; --append-result adds it as one more JSON line. Prints
 * the path to stderr. run: the run whose --save-detailed arrays were
 * streamed (report.h: report_json_dumpf), or NULL. Returns 0, or -1 with e. */
struct scenario;
struct run_result;
int vllmflags_save_result(const struct vllm_out *o, json_t *result, const struct scenario *sc,
			  const char *model_id, const struct run_result *run, struct err *e);

/* The SCENARIO argument, or a model named where vllm serve names it
 * (`vllm serve MODEL …` pasted as `servesim run MODEL …`): a scenario id or
 * path resolves into out (returns 1); a name no scenario has but a model
 * has (modelname.h) becomes run.model ahead of the overrides already in *ov
 * (returns 0, out = ""); anything else is -1 with e (the scenario's error,
 * which lists the known ids). */
struct inidoc;
int vllmflags_scenario_or_model(const char *arg, char *out, size_t cap, struct inidoc *ov, struct err *e);

/* Prints the table: flag, what it becomes, its help (docs/interop.md is
 * checked against it). */
void vllmflags_print_table(FILE *f);

/* The help line every verb that takes vLLM flags adds to its --help. */
#define VLLMFLAGS_HELP                                                                            \
	"  vLLM flags          `vllm serve` and `vllm bench serve` flags with vLLM's names\n"    \
	"                      (--num-prompts, --request-rate, --tensor-parallel-size, …) and\n"  \
	"                      --config FILE (vllm serve's YAML); servesim vllm-flags lists them\n"

#endif
