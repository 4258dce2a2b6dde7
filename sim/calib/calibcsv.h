/*
 * calibcsv: the real-run tables of ../shared/calibration (its README):
 *   experiments  vllm_h100_experiments.csv: one row per experiment, columns
 *                found by name; servesim needs `experiment` (the id, also
 *                the name of its scenario, scenarios/calibration/<id>.ini),
 *                `model`, `hardware` and `tp` for messages, and, where
 *                given, `gpu_kv_blocks` (vLLM's KV pool at start-up);
 *   measured     vllm_h100_measured.csv: `experiment,stage,metric,value_ms`,
 *                stage -1 for the whole run, 0.. for load stages; metrics
 *                ttft_mean/p90/p99, e2e_mean/p90/p99, itl_mean (derived:
 *                (e2e_mean - ttft_mean) / (mean output - 1)).
 * Plain CSV: no quotes, no commas inside fields. Each table knows its
 * sibling's file name, so either file finds the other beside it.
 */
#ifndef SERVESIM_CALIBCSV_H
#define SERVESIM_CALIBCSV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "err.h"

#define CALIBCSV_ID_MAX 128

struct calibcsv_experiment {
	char id[CALIBCSV_ID_MAX];
	char model[128], hardware[64];
	int tp;
	int64_t gpu_kv_blocks;    /* what vLLM reported at start-up; 0 when not given */
	int line;
};

struct calibcsv_value {
	char id[CALIBCSV_ID_MAX];
	int stage;                /* -1 whole run */
	char metric[32];          /* "ttft_mean" … */
	double ms;
	int line;
};

struct calibcsv {
	struct calibcsv_experiment *exps;
	size_t n_exps, cap_exps;
	struct calibcsv_value *vals;
	size_t n_vals, cap_vals;
};

enum calibcsv_kind { CALIBCSV_NONE, CALIBCSV_EXPERIMENTS, CALIBCSV_MEASURED };

/* Which table a header line is (CALIBCSV_NONE when neither). */
enum calibcsv_kind calibcsv_sniff(const char *first_line);

/* The sibling of path: the other table's file in the same folder
 * ("…_experiments.csv" <-> "…_measured.csv"), in out. False when the name
 * follows neither pattern. */
bool calibcsv_sibling(const char *path, char *out, size_t cap);

/* Reads both tables: experiments_path and measured_path. Returns 0, or -1
 * with e naming the file and line; *c is the caller's to free with
 * calibcsv_free in both cases. Every measured experiment must be listed. */
int calibcsv_load(struct calibcsv *c, const char *experiments_path, const char *measured_path,
		  struct err *e);

void calibcsv_free(struct calibcsv *c);

/* The value of (id, stage, metric), or NAN when not measured. */
double calibcsv_value(const struct calibcsv *c, const char *id, int stage, const char *metric);

#endif
