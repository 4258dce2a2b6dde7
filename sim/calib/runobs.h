/*
 * runobs: real serving measurements turned into observations: a scenario
 * that reproduces the run in the simulator, and the mean TTFT, ITL and E2E
 * latency it measured (per load stage where the file has stages).
 *
 * runobs_load recognises a file by its content, trying in turn:
 *   vllm-bench   a `vllm bench serve` result JSON, any version (benchres):
 *                replayed from its per-request arrays (input_lens,
 *                output_lens, start_times: trace.h); without them, as
 *                `completed` requests of the mean lengths. request_rate,
 *                burstiness and max_concurrency are the run's. Client
 *                clock; ITL = the mean gap between tokens (mean_itl_ms).
 *   ollama       Ollama /api/generate responses, one JSON object a line
 *                (ollamaresp): each response one request alone. Engine
 *                clock: TTFT = prompt_eval_duration, ITL = eval_duration /
 *                eval_count, E2E = their sum.
 *   llama-bench  llama-bench CSV, JSON or JSONL (llamabench): a pp test is
 *                one prompt (TTFT = avg_ns), a tg test one generation (ITL
 *                = avg_ns / n_gen), pp+tg both (E2E = avg_ns); tests with a
 *                depth are skipped (a simulation starts with an empty KV
 *                cache). Weights from model_type unless --weights.
 *   prometheus   a scrape of vLLM's /metrics (promscrape): one observation
 *                of the server's finished requests at their mean prompt and
 *                generation lengths; engine clock; means from the TTFT, ITL
 *                and E2E histograms' _sum / _count; cache_config_info's
 *                num_gpu_blocks and block_size become engine settings. A
 *                scrape has no arrival times: the requests run one at a
 *                time unless --set gives a rate or a concurrency.
 *   calibration  ../shared/calibration's experiments and measured CSVs
 *                (calibcsv; either file finds the other beside it): each
 *                experiment runs its scenarios/calibration/<id>.ini;
 *                measured per stage: ttft_mean, e2e_mean and the derived
 *                itl_mean; client clock. Experiments keep their own models.
 * A file in none of these formats is an error that lists what was tried.
 *
 * Every observation runs on opts->hardware (the profile being fitted);
 * opts->model and opts->weights apply to the formats that measure one
 * model (all but calibration); opts->overrides (--set) apply last, to all.
 * opts->max_requests > 0 subsamples: a staged run's stage durations are
 * scaled down (rates kept), a trace or a fixed-count run is cut to its
 * first max_requests requests; the measured means stay those of the whole
 * run.
 */
#ifndef SERVESIM_RUNOBS_H
#define SERVESIM_RUNOBS_H

#include <stdbool.h>
#include <stddef.h>

#include "err.h"
#include "inidoc.h"
#include "scenario.h"

enum runobs_metric { OBS_TTFT, OBS_ITL, OBS_E2E, OBS_N_METRICS };
extern const char *const runobs_metric_names[];   /* "ttft", "itl", "e2e" */

enum runobs_clock {
	OBS_CLOCK_CLIENT,    /* from the client's send: includes request_overhead_ms */
	OBS_CLOCK_ENGINE,    /* from arrival at the engine (queue included) */
};

enum runobs_itl {
	OBS_ITL_GAPS,        /* mean gap between consecutive tokens */
	OBS_ITL_DERIVED,     /* (mean E2E - mean TTFT) / (mean output - 1) */
};

#define RUNOBS_MAX_POINTS (SCENARIO_MAX_STAGES + 1)

struct runobs_point {
	int stage;                       /* -1: every request of the run */
	double ms[OBS_N_METRICS];        /* NAN where not measured */
};

struct runobs {
	char id[160];                    /* experiment id, or file[:line][ (test)] */
	const char *format;              /* static: "vllm-bench", "ollama", … */
	struct scenario sc;
	int clock;                       /* enum runobs_clock */
	int itl;                         /* enum runobs_itl */
	struct runobs_point pts[RUNOBS_MAX_POINTS];
	int n_pts;
};

struct runobs_set {
	struct runobs *v;
	size_t len, cap;
	char **notes;                    /* what readers had to assume or skip */
	size_t n_notes, cap_notes;
};

struct runobs_opts {
	const char *hardware;            /* required: id or path */
	const char *model;               /* NULL: the file's own model name */
	const char *weights;             /* NULL: the model's (or the file's) */
	const struct inidoc *overrides;  /* --set entries; may be NULL */
	long long max_requests;          /* 0: no subsampling */
};

/* A measurement file's text as runobs_load reads it (textfile_read, at
 * most 1 GiB): the caller's to free; NULL with e naming the file. The
 * limit validate's readers share (validateany.c). */
#define RUNOBS_MAX_FILE_BYTES ((size_t)1 << 30)
char *runobs_read_text(const char *path, struct err *e);

/* Appends path's observations to *set. Returns 0, or -1 with e naming the
 * file (and line, key) and *set holding what earlier files added. */
int runobs_load(struct runobs_set *set, const char *path, const struct runobs_opts *opts,
		struct err *e);

void runobs_set_free(struct runobs_set *set);   /* safe on a zeroed set */

/* Measured values (non-NAN) in observation o. */
int runobs_n_values(const struct runobs *o);

#endif
