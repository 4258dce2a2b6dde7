/*
 * fitfamily: which servesim-probe family informs which [efficiency]
 * parameter, as one table, and whether a family's kernel is good enough
 * for its rows to set a parameter or only to bound it from below.
 *
 * A row belongs to the family of its kind and dtype (fitfamily_of): gemm
 * rows split into gemm_bf16, gemm_fp8 and gemv_int4. Each family names the
 * parameters its rows pin when the fitted GEMM dtype is bf16 (with
 * `--weights fp8` the two GEMM families trade places: gemm_fp8 sets
 * compute_max and the bf16 rows are only reported). A family without
 * parameters is reported against the profile (a host or peer link's
 * datasheet rate, launch latency) and not fitted.
 *
 * Lower bounds: an attention family is measured with the probe's own
 * kernels. Its grade is the best fraction its rows reach of the run's own
 * reference (decode: bytes/s against the best stream_read row; prefill:
 * FLOP/s against the best bf16 GEMM row). Below `production_frac`, the
 * kernel is slower than what vLLM's kernels reach (FlashAttention-2/3,
 * FlashInfer; docs/calibration.md has the figures), so its rows can only
 * say the efficiency is at least this high: the fit raises a parameter to
 * such a bound, never lowers one from it. With no reference row in the
 * file the grade is unknown and the family counts as a bound. Layer rows
 * run the same attention kernels: when either attention family is a bound
 * they are reported, not fitted.
 *
 * Invariant: every family the fit consumes is one servesim-probe --list
 * prints (tests/test_calib.c checks the names against the probe's table
 * when the probe is built).
 */
#ifndef SERVESIM_FITFAMILY_H
#define SERVESIM_FITFAMILY_H

#include <stdbool.h>
#include <stddef.h>

#include "effparam.h"
#include "probecsv.h"

#define FITFAM_MAX_PARAMS 4

enum fitfam_ref {
	FITFAM_REF_NONE,     /* a kernel that is the production one (cuBLAS, memcpy) */
	FITFAM_REF_STREAM,   /* graded by bytes/s against the best stream_read */
	FITFAM_REF_GEMM,     /* graded by FLOP/s against the best bf16 GEMM */
};

struct fitfam {
	const char *name;           /* the probe's family name */
	int kind;                   /* enum probe_kind */
	int dtype;                  /* enum probe_dtype, or -1 for any */
	int params[FITFAM_MAX_PARAMS];   /* effparam ids (bf16 weights), -1 ends */
	int ref;                    /* enum fitfam_ref */
	double production_frac;     /* grade below which the rows are lower bounds */
	const char *production;     /* what production kernels reach, with the source */
	const char *report;         /* report-only families: what the rows are compared with */
};

/* The table, n entries (static, borrowed). */
const struct fitfam *fitfamily_table(size_t *n);

/* The family of row r, or -1 (cannot happen for a row probecsv read). */
int fitfamily_of(const struct probe_row *r);

/* The parameters family f pins when the GEMM rows fitted are of dtype
 * main_dtype (enum probe_dtype): out[0..return) . */
int fitfamily_params(int f, int main_dtype, int out[FITFAM_MAX_PARAMS]);

/* The best fraction family f's rows in d reach of the file's reference, or
 * -1 when the family has no reference kind or the file has no reference
 * row. */
double fitfamily_grade(const struct probe_data *d, int f);

#endif
