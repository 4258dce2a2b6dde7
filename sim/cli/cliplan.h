/*
 * cliplan: what the planning verbs (sweep, plan, compare) share on the
 * command line: the scenario argument and --set, --replications, --jobs,
 * --shard, --format, --plot and --svg, and printing the result document
 * (then plotting it). Each verb keeps its own option table and adds
 * CLIPLAN_OPTIONS to it; cliplan_option handles those.
 */
#ifndef SERVESIM_CLIPLAN_H
#define SERVESIM_CLIPLAN_H

#include <getopt.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "cli.h"
#include "inidoc.h"
#include "plan.h"
#include "resultdoc.h"
#include "scenario.h"
#include "vllmflags.h"
#include "tune.h"

/* getopt_long entries for the shared options (their codes are 1000…). */
#define CLIPLAN_OPTIONS                                              \
	{ "format", required_argument, NULL, 1000 },                 \
	{ "jobs", required_argument, NULL, 1001 },                   \
	{ "plot", required_argument, NULL, 1002 },                   \
	{ "replications", required_argument, NULL, 1003 },           \
	{ "set", required_argument, NULL, 1004 },                    \
	{ "shard", required_argument, NULL, 1005 },                  \
	{ "svg", no_argument, NULL, 1006 },                          \
	{ "progress", no_argument, NULL, 1007 },                     \
	{ "no-progress", no_argument, NULL, 1008 }

/* The SLO search's options (plan, compare), handled by cliplan_option
 * into c->search. */
#define CLIPLAN_SEARCH_OPTIONS                                       \
	{ "by", required_argument, NULL, 1010 },                     \
	{ "confidence", required_argument, NULL, 1011 },             \
	{ "duration", required_argument, NULL, 1012 },               \
	{ "max-load", required_argument, NULL, 1013 },               \
	{ "tolerance", required_argument, NULL, 1014 },              \
	{ "fixed", no_argument, NULL, 1015 },                        \
	{ "search", required_argument, NULL, 1016 },                 \
	{ "max-gpu-memory-utilization", required_argument, NULL, 1017 }, \
	{ "cost", required_argument, NULL, 1018 },                   \
	{ "years", required_argument, NULL, 1019 },                  \
	{ "power-usd-kwh", required_argument, NULL, 1020 },          \
	{ "utilization", required_argument, NULL, 1021 },            \
	{ "confirm", required_argument, NULL, 1022 }

#define CLIPLAN_SEARCH_HELP                                                                          \
	"  --by rate|concurrency  what the SLO search varies (default rate)\n"                         \
	"  --confidence C      a load passes when the one-sided C upper confidence bound of the\n"    \
	"                      mean over replications is within each limit (default 0.95;\n"          \
	"                      0.5: the mean itself)\n"                                               \
	"  --tolerance F       stop when the bracket is within F of its top (default 0.02)\n"        \
	"  --max-load X        the search's upper end (default 1000 req/s, or 1024 requests)\n"      \
	"  --duration S        rate search: every load sends at least rate × S requests, so runs\n" \
	"                      at high rates last long enough for a queue to build (default 60;\n"  \
	"                      0: the scenario's num_prompts at every load)\n"                     \
	"  --fixed             keep the scenario's engine settings (no tuning)\n"                  \
	"  --search K=V1,V2,…  tuning: search [engine] key K over these values (replaces that\n"   \
	"                      axis, or adds one; repeatable). Default axes: max_num_batched_tokens,\n" \
	"                      enable_chunked_prefill, long_prefill_token_threshold, max_num_seqs,\n" \
	"                      kv_cache_dtype, enable_prefix_caching (shared prefixes only),\n"    \
	"                      gpu_memory_utilization (up to the bound below)\n"                   \
	"  --confirm B         tuning: search the chosen setting again on B fresh seed blocks\n"  \
	"                      and report the median block's rate with the blocks' spread, not\n"  \
	"                      the best of the noisy rates that chose it (default 3; 0: off)\n"  \
	"  --max-gpu-memory-utilization F  tuning's bound on gpu_memory_utilization (default\n"   \
	"                      0.9, vLLM's default: the scenario's own when higher)\n"             \
	"  --cost cloud|own    price a GPU-hour at the profile's cloud price (default), or\n"      \
	"                      own it: purchase over --years (default 3) at --utilization\n"      \
	"                      (default 0.6) plus power at --power-usd-kwh (default 0.12)\n"

/* The --help lines of the shared options. */
#define CLIPLAN_HELP                                                                             \
	"  --set S.K=V         override a scenario key before anything is varied (repeatable)\n" \
	"  --replications N    seeds per point: seed, seed+1, … (mean and 95%% CI when N >= 2)\n" \
	"  --jobs N            simulations on N threads (default: all processors); the output\n" \
	"                      is the same for every N\n"                                          \
	"  --shard K/N         run only slice K of N (items i with i mod N = K-1); join the\n"    \
	"                      slices' --format json outputs with servesim merge\n"               \
	"  --format F          text (default), csv or json\n"                                     \
	"  --plot DIR          also write DIR/result.json, the data files and the pictures\n"     \
	"  --svg               pictures as SVG instead of PNG\n"                                 \
	"  --progress, --no-progress  the progress line on stderr (default: when it is a\n"     \
	"                      terminal)\n"                                                     \
	VLLMFLAGS_HELP

struct cliplan {
	const char *verb;
	enum out_format fmt;
	int jobs;
	int replications;
	struct shard shard;
	const char *plot_dir;
	bool svg;
	struct inidoc ov;            /* --set, in order */
	const char *scenario;        /* resolved path, or NULL for the built-in default */
	char path[4096];
	struct plan_opts search;     /* CLIPLAN_SEARCH_OPTIONS; see cliplan_search */
	bool max_load_given;
	bool confirm_given;          /* --confirm (an error with --fixed) */
	struct vllm_args vllm;       /* the command line with vLLM's flags rewritten */
	bool fixed;                  /* --fixed: no tuning */
	const char *search_specs[TUNE_MAX_AXES];  /* --search, in order (borrowed argv) */
	int n_search;
	double max_gmu;              /* --max-gpu-memory-utilization */
	struct plan_cost cost;       /* --cost, --years, --power-usd-kwh, --utilization */
	bool cost_own_flags;         /* one of the last three was given */
	struct progress *progress;   /* the points done, on stderr (NULL: off); wiped
				      * by cliplan_emit and cliplan_free */
};

/* Defaults: text, all processors, `replications`, shard 1/1, plan's
 * search defaults. Cannot fail; cliplan_free is safe after it. */
void cliplan_init(struct cliplan *c, const char *verb, int replications);
void cliplan_free(struct cliplan *c);

/* Rewrites vLLM's flags in argc and argv into --set (vllmflags.h) against
 * the verb's table; the new argv lives in c. vllm bench serve's output
 * flags (--save-result, …) are refused: only servesim run writes them.
 * Sets optind = 1 for the walk over the new argv. Returns 0 or -1 with e. */
int cliplan_args(struct cliplan *c, const struct option *opts, int *argc, char ***argv, struct err *e);

/* The walk over the options after cliplan_args: getopt_long with opts,
 * the shared options (CLIPLAN_OPTIONS, CLIPLAN_SEARCH_OPTIONS) handled by
 * cliplan_option on the way. Returns the next option that is the verb's
 * own (or getopt's '?'), with optarg set; -1 when the options are done;
 * CLIPLAN_BAD with e naming the flag when a shared option's value is bad. */
#define CLIPLAN_BAD (-2)
int cliplan_next(struct cliplan *c, int argc, char **argv, const struct option *opts, struct err *e);

/* Handles option code opt (from CLIPLAN_OPTIONS) with its argument.
 * Returns 1 when it was a shared option and was fine, 0 when it is not a
 * shared option, -1 with e naming the flag when its value is bad. */
int cliplan_option(struct cliplan *c, int opt, const char *arg, struct err *e);

/* The SLO search's options with --replications, --jobs and the default
 * upper end of a concurrency search filled in. */
void cliplan_search(const struct cliplan *c, struct plan_opts *out);

/* Checks the --cost flags together (--years etc. only with --cost own).
 * Returns 0 or -1 with e. */
int cliplan_cost_check(const struct cliplan *c, struct err *e);

/* The "cost_basis" object of a document ({"kind": "cloud"} or the own
 * model's figures). Cannot fail. */
json_t *cliplan_cost_json(const struct plan_cost *pc);

/* The tuning space for base scenario sc (tune_space_default with
 * --search applied and checked against the scenario with overrides ov).
 * Returns 0 or -1 with e naming --search. */
int cliplan_tune_space(const struct cliplan *c, const struct scenario *sc, const struct inidoc *ov,
		       struct tune_space *out, struct err *e);

/* Takes the optional SCENARIO argument (argv[optind…]) and loads the base
 * scenario with --set into *sc. Returns 0 or -1 with e. */
int cliplan_scenario(struct cliplan *c, int argc, char **argv, int optind_, struct scenario *sc,
		     struct err *e);

/* Parses an integer or a number flag strictly, in [min, max]. Returns 0 or
 * -1 with e as "FLAG: expected WHAT, got 'S'". */
int cliplan_int(const char *flag, const char *s, int64_t min, int64_t max, const char *what,
		int64_t *out, struct err *e);
int cliplan_double(const char *flag, const char *s, double min, double max, const char *what,
		   double *out, struct err *e);

/* Prints doc in --format, then plots it under --plot. Drops the reference.
 * Returns the exit status. */
int cliplan_emit(struct cliplan *c, json_t *doc);

#endif
