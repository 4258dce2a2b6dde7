/*
 * accdata: how servesim compares with real runs, as the report prints it
 * (scenarios/calibration/accuracy.data, written by scripts/accuracy-data
 * from tests/accuracy/vllm_h100.py and checked by the CTest test
 * accuracy_data). One source for the figures, so the page cannot drift
 * from what the accuracy script measures: a [summary] section for the
 * device the runs were on and one section per model run there.
 */
#ifndef SERVESIM_ACCDATA_H
#define SERVESIM_ACCDATA_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "inidoc.h"

enum { ACC_TTFT, ACC_ITL, ACC_E2E, ACC_N_METRICS };

/* One model's whole-run errors over its runs, percent (simulated against
 * measured, signed). */
struct accdata_model {
	char id[INI_NAME_MAX];
	int64_t runs;
	char tp[INI_VALUE_MAX]; /* its tensor-parallel sizes, "1" or "1,2" */
	double min_pct[ACC_N_METRICS], max_pct[ACC_N_METRICS];
};

struct accdata {
	char hardware[INI_VALUE_MAX]; /* the profile id the runs were on */
	char vllm_version[INI_VALUE_MAX];
	int64_t runs, models, tp_min, tp_max;
	double mape_pct[ACC_N_METRICS]; /* whole run, in sample */
	double cv_pct[ACC_N_METRICS];	/* each model family left out */
	struct accdata_model *model;
	size_t n_models;
};

/* Reads path into *a (freed with accdata_free, also on failure). Returns
 * 0, or -1 with e as `path:line: [section] key: …` or the missing key. */
int accdata_load(struct accdata *a, const char *path, struct err *e);

/* accdata_load of the data folder's scenarios/calibration/accuracy.data. */
int accdata_load_default(struct accdata *a, struct err *e);

/* The model's figures, or NULL when no run of it is there. */
const struct accdata_model *accdata_find(const struct accdata *a, const char *model_id);

void accdata_free(struct accdata *a);

#endif
