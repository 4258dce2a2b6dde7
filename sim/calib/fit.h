/*
 * fit: the [efficiency] parameters that make the step-time model match one
 * GPU's probe measurements (servesim-probe CSV), by nonlinear least squares
 * (GSL gsl_multifit_nlinear: trust region, Levenberg-Marquardt steps,
 * finite-difference Jacobian).
 *
 * The residual of a row is ln(predicted / measured), predicted by probepred,
 * i.e. by the simulator's own roofline: relative, so a 5 us GEMM counts as
 * much as a 50 ms one. Parameters are searched through effparam's
 * transforms, so they stay inside the ranges a profile accepts:
 *   bandwidth                 stream_read, d2d_copy, small-M gemm, layers
 *   attention_bandwidth       attn_decode (and decode layers)
 *   attention_half_seqs       attn_decode rows at >= 3 batch sizes
 *   compute_max, compute_half_tokens   gemm rows at >= 3 token counts
 *   attention_compute         attn_prefill (and prefill layers)
 *   low_precision_compute     fp8 gemm rows at >= 3 token counts (bf16 weights)
 *   moe_efficiency            moe_gemm rows at >= 3 tokens-per-expert counts
 * Which family sets which parameter is fitfamily.h's table. A parameter
 * without its rows keeps the base profile's value. With opts->dtype fp8
 * the fp8 gemm rows set the GEMM curve and the bf16 ones are reported
 * (a profile has one compute_max, for the weights' dtype). Rows whose base
 * prediction is under FIT_MIN_KERNEL_US measure launch latency, which the
 * model carries in step_overhead_us, not in an efficiency: they are
 * reported, not fitted; so are the families with no parameter (links,
 * launches, the int4 GEMV). The step and request
 * overheads are not properties of the GPU's kernels and stay as they are
 * (`calibrate runs` fits them).
 *
 * Lower bounds (fitfamily.h): the rows of an attention family whose kernel
 * is graded below production are left out of the main fit; afterwards
 * they are fitted alone for their fraction (attention_bandwidth or
 * attention_compute, the rest held at the main fit's values), and the
 * parameter becomes the larger of that bound and its value: a stand-in
 * kernel never lowers an efficiency. attention_half_seqs is not fitted
 * from a bound.
 *
 * Failure contract: fit_probe returns -1 with e set (and res holding
 * nothing to free) when there are fewer than FIT_MIN_ROWS_PER_PARAM usable
 * rows per fitted parameter, or none at all; otherwise 0 with res filled,
 * res->converged false when the solver stopped without meeting its
 * tolerances (callers then write nothing).
 */
#ifndef SERVESIM_FIT_H
#define SERVESIM_FIT_H

#include <stdbool.h>
#include <stddef.h>

#include "effparam.h"
#include "err.h"
#include "hwprofile.h"
#include "probecsv.h"

#define FIT_MIN_ROWS_PER_PARAM 3
#define FIT_MIN_KERNEL_US 20.0

struct fit_opts {
	int dtype;              /* enum probe_dtype of the gemm rows fitted; 0 = bf16 */
	int max_iter;           /* solver iterations; 0 = 200 */
};

enum fit_row_use {
	FIT_ROW_USED,
	FIT_ROW_OTHER_DTYPE,    /* a gemm of the dtype not fitted */
	FIT_ROW_LAUNCH_BOUND,   /* base prediction under FIT_MIN_KERNEL_US */
	FIT_ROW_LOWER_BOUND,    /* a stand-in kernel: bounds its parameter from below */
	FIT_ROW_REPORT,         /* a family with no parameter, or a layer with stand-in attention */
	FIT_N_ROW_USES
};

extern const char *const fit_row_use_names[];   /* "", "other dtype", "launch-bound", … */

/* One family of the file (fitfamily.h), after the fit. */
struct fit_family_result {
	int family;               /* index into fitfamily_table */
	size_t n_rows, n_used;    /* rows of the family; rows in the main fit */
	size_t n_bound;           /* rows used as a lower bound */
	double grade;             /* fitfamily_grade; -1 unknown or not graded */
	bool bound;               /* graded below production: its rows are bounds */
	double rms_after;         /* RMS ln(pred/meas) over its used rows, or for a
				   * bound family over its rows at the bound */
	double median_ratio;      /* median measured / datasheet-rate prediction (report rows); 0 none */
	double first_us;          /* measured time of its row with the fewest tokens (>= 1); 0 none */
	int64_t first_tokens;     /* those tokens */
};

struct fit_result {
	struct hw_efficiency before, after;
	bool fitted[EFF_N_PARAMS];
	double stderr_after[EFF_N_PARAMS];   /* standard error of fitted values; 0 otherwise */
	bool bounded[EFF_N_PARAMS];   /* a stand-in's lower bound was applied */
	double bound[EFF_N_PARAMS];   /* that bound (after = max(fitted or base, bound)) */
	struct fit_family_result *fams;   /* per family present in the file */
	size_t n_fams;
	int n_fitted;
	size_t n_rows, n_used;
	int *use;                 /* per row: enum fit_row_use */
	double *before_us, *after_us;   /* per row: predictions */
	double rms_before, rms_after;   /* RMS of ln(pred/meas) over used rows */
	int iterations;
	bool converged;
	char status[160];         /* why the solver stopped */
};

/* Fits d's rows measured on hw (its [efficiency] is the starting point and
 * the "before"). Returns 0 (see res->converged) or -1 with e set. */
int fit_probe(struct fit_result *res, const struct probe_data *d, const struct hw_profile *hw,
	      const struct fit_opts *opts, struct err *e);

void fit_result_free(struct fit_result *res);   /* safe on a zeroed struct */

#endif
