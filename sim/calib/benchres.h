/*
 * benchres: the measured side of a `vllm bench serve` result JSON
 * (--save-result), in every version of ../shared/reference/formats.md §1:
 * the newest serve.py, the about-v0.11 one (no latencies, start_times,
 * queue_times, rtfx) and the old benchmark_serving.py (the key
 * "request_goodput:" with its typo, no "failed", arrays always saved).
 *
 * Read: the setup (model_id, request_rate as a number or "inf",
 * burstiness, max_concurrency, num_prompts), the results (duration,
 * completed, failed, token totals, throughputs), the summary statistics
 * mean_/median_/p99_ of ttft, tpot, itl and e2el in ms, and which
 * per-request arrays are present. E2EL statistics missing from the keys
 * (vLLM prints e2el only when asked) are computed from `latencies` when it
 * is there, as numpy computes them. The per-request arrays themselves are
 * trace.h's business (trace_load reads them for replay).
 *
 * SGLang's bench_serving results (one JSON line each) carry the same keys
 * but mean_/median_/p99_e2e_latency_ms for E2E and, in the newest
 * version, total_input / total_output: read as the vLLM names.
 *
 * The per-request arrays of either tool (vLLM --save-detailed, SGLang
 * --output-details) are checked request by request and their means fill
 * or must agree with the summary keys (benchdetail.h).
 *
 * Absent numbers are NAN; absent counts are -1.
 */
#ifndef SERVESIM_BENCHRES_H
#define SERVESIM_BENCHRES_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "err.h"
#include "latmetric.h"

enum benchres_stat { BENCH_MEAN, BENCH_MEDIAN, BENCH_P99, BENCH_N_STATS };

extern const char *const benchres_stat_keys[];     /* "mean", "median", "p99" */

struct benchres {
	char path[4096];
	char version[48];            /* which writer the keys point to */
	char model_id[256];          /* "" when absent */
	double request_rate;         /* requests/s; INFINITY for "inf"; NAN absent */
	double burstiness;           /* NAN absent */
	int64_t max_concurrency;     /* 0 when null or absent */
	int64_t num_prompts, completed, failed;
	double duration_s;
	int64_t total_input, total_output;
	double request_throughput, output_throughput, total_token_throughput;
	double ms[N_LAT_METRICS][BENCH_N_STATS];
	bool has_input_lens, has_output_lens, has_start_times, has_latencies;
	size_t n_detailed;           /* requests in the per-request arrays (benchdetail.h); 0 when none */
	size_t n_detailed_ok;        /* of them successful (output_lens > 0) */
};

/* Does this JSON object look like a vllm bench serve result? (It has at
 * least two of its characteristic keys.) */
bool benchres_sniff(const json_t *top);

/* Fills *b from an already parsed result object (path for messages).
 * Returns 0, or -1 with e when a present key has the wrong type. */
int benchres_from_json(struct benchres *b, const json_t *top, const char *path, struct err *e);

/* Reads path. Returns 0, or -1 with e naming the file (and line:column for
 * a syntax error). */
int benchres_load(struct benchres *b, const char *path, struct err *e);

/* How many of the mean TTFT, ITL and E2EL the file measured. */
int benchres_n_means(const struct benchres *b);

#endif
