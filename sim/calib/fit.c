#include "fit.h"

#include <gsl/gsl_blas.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_matrix.h>
#include <gsl/gsl_multifit_nlinear.h>
#include <gsl/gsl_vector.h>
#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fitfamily.h"
#include "probepred.h"
#include "xalloc.h"

#define DEFAULT_MAX_ITER 200

const char *const fit_row_use_names[] = { "", "other dtype", "launch-bound", "lower bound (stand-in kernel)",
					  "reported", NULL };
#define BAD_RESIDUAL 50.0    /* ln-ratio for a prediction that is not a time */

struct fit_ctx {
	const struct probe_data *d;
	const struct probepred *pp;
	const struct hw_efficiency *base;
	const int *ids;           /* fitted parameters */
	size_t n_ids;
	const size_t *rows;       /* used rows */
	size_t n_rows;
};

static void apply(const struct fit_ctx *c, const gsl_vector *x, struct hw_efficiency *eff)
{
	*eff = *c->base;
	for (size_t i = 0; i < c->n_ids; i++)
		effparam_set(eff, c->ids[i], effparam_from_x(c->ids[i], gsl_vector_get(x, i)));
}

static double log_ratio(double pred, double meas)
{
	double r = pred > 0 && isfinite(pred) ? log(pred / meas) : BAD_RESIDUAL;
	return fmin(fmax(r, -BAD_RESIDUAL), BAD_RESIDUAL);
}

static int residuals(const gsl_vector *x, void *data, gsl_vector *f)
{
	const struct fit_ctx *c = data;
	struct hw_efficiency eff;
	apply(c, x, &eff);
	for (size_t j = 0; j < c->n_rows; j++) {
		const struct probe_row *r = &c->d->rows[c->rows[j]];
		gsl_vector_set(f, j, log_ratio(probepred_time_us(c->pp, &eff, r), r->time_us));
	}
	return GSL_SUCCESS;
}

/* Adds v to the set xs[*n] (at most 64 entries; more are not counted). */
static void add_distinct(int64_t *xs, size_t *n, int64_t v)
{
	for (size_t k = 0; k < *n; k++)
		if (xs[k] == v)
			return;
	if (*n < 64)
		xs[(*n)++] = v;
}

/* What each parameter needs to be fitted: rows that inform it, and for
 * the curves, distinct token counts (GEMMs) or batch sizes (decode). */
static const struct {
	int param;
	size_t min_rows;
	bool distinct;            /* min_rows counts distinct `tokens` values */
} needs[] = {
	{ EFF_BANDWIDTH, 1, false },
	{ EFF_ATTENTION_BANDWIDTH, 2, false },
	{ EFF_ATTENTION_HALF_SEQS, 3, true },
	{ EFF_COMPUTE_MAX, 3, true },
	{ EFF_COMPUTE_HALF_TOKENS, 3, true },
	{ EFF_ATTENTION_COMPUTE, 2, false },
	{ EFF_LOW_PRECISION_COMPUTE, 3, true },
	{ EFF_MOE_EFFICIENCY, 3, true },
};

/* Whether row r (of family f) informs param: its family lists it, and a
 * layer row informs the attention term of its own phase only. */
static bool informs(const struct probe_row *r, int f, int main_dtype, int param)
{
	int ps[FITFAM_MAX_PARAMS];
	int n = fitfamily_params(f, main_dtype, ps);
	if (r->kind == PROBE_LAYER && ((param == EFF_ATTENTION_BANDWIDTH && !r->decode) ||
				       (param == EFF_ATTENTION_COMPUTE && r->decode)))
		return false;
	for (int i = 0; i < n; i++)
		if (ps[i] == param)
			return true;
	return false;
}

/* Which parameters the rows whose use is `use` can pin down. */
static void choose_params(const struct probe_data *d, const int *use, int want_use, int main_dtype,
			  bool fitted[EFF_N_PARAMS])
{
	memset(fitted, 0, EFF_N_PARAMS * sizeof *fitted);
	for (size_t k = 0; k < sizeof needs / sizeof *needs; k++) {
		int64_t seen[64];
		size_t n = 0;
		for (size_t i = 0; i < d->len; i++) {
			const struct probe_row *r = &d->rows[i];
			if (use[i] != want_use || !informs(r, fitfamily_of(r), main_dtype, needs[k].param))
				continue;
			if (needs[k].distinct)
				add_distinct(seen, &n, r->tokens);
			else
				n++;
		}
		fitted[needs[k].param] = n >= needs[k].min_rows;
	}
}

static double rms_log(const struct probe_data *d, const int *use, const double *pred_us)
{
	double s = 0;
	size_t n = 0;
	for (size_t i = 0; i < d->len; i++)
		if (use[i] == FIT_ROW_USED) {
			double r = log_ratio(pred_us[i], d->rows[i].time_us);
			s += r * r;
			n++;
		}
	return n ? sqrt(s / (double)n) : 0;
}

/* Standard errors of the fitted values from the Jacobian at the solution:
 * cov_x = s² (JᵀJ)⁻¹ with s² = Σr²/(n-p), mapped through dv/dx. */
static void standard_errors(gsl_multifit_nlinear_workspace *w, const struct fit_ctx *c,
			    const struct hw_efficiency *after, double *out)
{
	size_t p = c->n_ids, n = c->n_rows;
	if (n <= p)
		return;
	gsl_matrix *cov = gsl_matrix_alloc(p, p);
	gsl_matrix *J = gsl_multifit_nlinear_jac(w);
	gsl_vector *f = gsl_multifit_nlinear_residual(w);
	double chisq;
	gsl_blas_ddot(f, f, &chisq);
	if (gsl_multifit_nlinear_covar(J, 0.0, cov) == GSL_SUCCESS) {
		double s2 = chisq / (double)(n - p);
		for (size_t i = 0; i < p; i++) {
			int id = c->ids[i];
			double v = effparam_value(after, id);
			double dvdx = effparam_get(id)->fraction ? v * (1 - v) : v;
			double var = gsl_matrix_get(cov, i, i) * s2;
			out[id] = var > 0 ? fabs(dvdx) * sqrt(var) : 0;
		}
	}
	gsl_matrix_free(cov);
}

/* One least-squares solve of c's parameters over c's rows; *after gets the
 * solution (from c->base where nothing moved). Fills stderr_out when it
 * converged. Returns whether it converged; status describes the stop. */
static bool solve(const struct fit_ctx *c, int max_iter, struct hw_efficiency *after, double *stderr_out,
		  int *iterations, char *status, size_t status_cap)
{
	gsl_multifit_nlinear_parameters params = gsl_multifit_nlinear_default_parameters();
	gsl_multifit_nlinear_fdf fdf = { 0 };
	fdf.f = residuals;
	fdf.n = c->n_rows;
	fdf.p = c->n_ids;
	fdf.params = (void *)c;
	gsl_multifit_nlinear_workspace *w =
		gsl_multifit_nlinear_alloc(gsl_multifit_nlinear_trust, &params, fdf.n, fdf.p);
	gsl_vector *x0 = gsl_vector_alloc(c->n_ids);
	for (size_t i = 0; i < c->n_ids; i++)
		gsl_vector_set(x0, i, effparam_to_x(c->ids[i], effparam_value(c->base, c->ids[i])));
	int info = 0;
	int st = gsl_multifit_nlinear_init(x0, &fdf, w);
	if (st == GSL_SUCCESS)
		st = gsl_multifit_nlinear_driver((size_t)max_iter, 1e-8, 1e-8, 1e-10, NULL, NULL, &info, w);
	*iterations = (int)gsl_multifit_nlinear_niter(w);
	bool ok = st == GSL_SUCCESS;
	if (ok)
		snprintf(status, status_cap, "converged in %d iterations (%s)", *iterations,
			 info == 1 ? "small step" : info == 2 ? "small gradient" : "small change");
	else
		snprintf(status, status_cap, "did not converge: %s after %d iterations", gsl_strerror(st),
			 *iterations);
	apply(c, gsl_multifit_nlinear_position(w), after);
	if (ok && stderr_out)
		standard_errors(w, c, after, stderr_out);
	gsl_vector_free(x0);
	gsl_multifit_nlinear_free(w);
	return ok;
}

/* Each row's use, from its family, its family's grade and its base
 * prediction. bound[f]: family f is graded below production. */
static void classify(struct fit_result *res, const struct probe_data *d, int main_dtype, const bool *bound,
		     bool attn_bound)
{
	for (size_t i = 0; i < d->len; i++) {
		const struct probe_row *r = &d->rows[i];
		int f = fitfamily_of(r), ps[FITFAM_MAX_PARAMS];
		assert(f >= 0);   /* every kind probecsv reads has a family */
		if (fitfamily_params(f, main_dtype, ps) == 0)
			res->use[i] = r->kind == PROBE_GEMM && r->dtype != PROBE_DT_INT4 ? FIT_ROW_OTHER_DTYPE
											 : FIT_ROW_REPORT;
		else if (!isfinite(res->before_us[i]))
			res->use[i] = FIT_ROW_REPORT;
		else if (res->before_us[i] < FIT_MIN_KERNEL_US)
			res->use[i] = FIT_ROW_LAUNCH_BOUND;
		else if (bound[f])
			res->use[i] = FIT_ROW_LOWER_BOUND;
		else if (r->kind == PROBE_LAYER && attn_bound)
			res->use[i] = FIT_ROW_REPORT;
		else
			res->use[i] = FIT_ROW_USED;
	}
}

/* The lower bound family f's rows put on its fractions: its parameters
 * fitted on its rows alone (the rest held at res->after), and only the
 * fractions kept, as bounds; raises res->after to them. */
static void apply_bound(struct fit_result *res, const struct probe_data *d, const struct probepred *pp, int f,
			int main_dtype, int max_iter, double *rms)
{
	int ids[FITFAM_MAX_PARAMS];
	size_t n_ids = 0;
	int ps[FITFAM_MAX_PARAMS], np = fitfamily_params(f, main_dtype, ps);
	for (int k = 0; k < np; k++)
		ids[n_ids++] = ps[k];
	size_t *rows = xcalloc(d->len, sizeof *rows), n = 0;
	for (size_t i = 0; i < d->len; i++)
		if (res->use[i] == FIT_ROW_LOWER_BOUND && fitfamily_of(&d->rows[i]) == f)
			rows[n++] = i;
	if (n_ids && n >= FIT_MIN_ROWS_PER_PARAM * n_ids) {
		struct hw_efficiency base = res->after, got;
		struct fit_ctx c = { d, pp, &base, ids, n_ids, rows, n };
		char status[160];
		int iters;
		bool ok = solve(&c, max_iter, &got, NULL, &iters, status, sizeof status);
		double ss = 0;
		for (size_t j = 0; j < n; j++) {
			const struct probe_row *r = &d->rows[rows[j]];
			double lr = log_ratio(probepred_time_us(pp, &got, r), r->time_us);
			ss += lr * lr;
		}
		*rms = sqrt(ss / (double)n);
		if (ok)
			for (size_t k = 0; k < n_ids; k++) {
				if (!effparam_get(ids[k])->fraction)
					continue;   /* a curve's shape from a stand-in: not kept */
				double b = effparam_value(&got, ids[k]);
				res->bounded[ids[k]] = true;
				res->bound[ids[k]] = b;
				if (b > effparam_value(&res->after, ids[k]))
					effparam_set(&res->after, ids[k], b);
			}
	}
	free(rows);
}

static void family_results(struct fit_result *res, const struct probe_data *d, const bool *bound,
			   const double *grade, const double *bound_rms)
{
	size_t n_tab;
	fitfamily_table(&n_tab);
	res->fams = xcalloc(n_tab, sizeof *res->fams);
	for (size_t f = 0; f < n_tab; f++) {
		struct fit_family_result fr = { .family = (int)f, .grade = grade[f], .bound = bound[f] };
		double ss = 0, ratios[512];
		size_t n_ss = 0, n_ratio = 0;
		for (size_t i = 0; i < d->len; i++) {
			if (fitfamily_of(&d->rows[i]) != (int)f)
				continue;
			fr.n_rows++;
			const struct probe_row *row = &d->rows[i];
			if (row->tokens >= 1 && (!fr.first_tokens || row->tokens < fr.first_tokens)) {
				fr.first_tokens = row->tokens;
				fr.first_us = row->time_us;
			}
			int u = res->use[i];
			fr.n_used += u == FIT_ROW_USED;
			fr.n_bound += u == FIT_ROW_LOWER_BOUND;
			if (u == FIT_ROW_USED) {
				double r = log_ratio(res->after_us[i], d->rows[i].time_us);
				ss += r * r;
				n_ss++;
			} else if (isfinite(res->after_us[i]) && res->after_us[i] > 0 && n_ratio < 512) {
				ratios[n_ratio++] = d->rows[i].time_us / res->after_us[i];
			}
		}
		if (!fr.n_rows)
			continue;
		fr.rms_after = n_ss ? sqrt(ss / (double)n_ss) : bound_rms[f];
		for (size_t a = 1; a < n_ratio; a++)   /* insertion sort: a few hundred at most */
			for (size_t b = a; b > 0 && ratios[b] < ratios[b - 1]; b--) {
				double t = ratios[b];
				ratios[b] = ratios[b - 1];
				ratios[b - 1] = t;
			}
		fr.median_ratio = n_ratio ? ratios[n_ratio / 2] : 0;
		res->fams[res->n_fams++] = fr;
	}
}

int fit_probe(struct fit_result *res, const struct probe_data *d, const struct hw_profile *hw,
	      const struct fit_opts *opts, struct err *e)
{
	memset(res, 0, sizeof *res);
	if (!d->has_dims)
		return err_set(e, "%s: no '# dims:' line: the probe's model dimensions are needed to predict attention and layer rows",
			       d->path);
	int dtype = opts && opts->dtype ? opts->dtype : PROBE_DT_BF16;
	int max_iter = opts && opts->max_iter > 0 ? opts->max_iter : DEFAULT_MAX_ITER;
	struct probepred pp;
	probepred_init(&pp, hw, &d->dims);

	size_t n_tab;
	const struct fitfam *tab = fitfamily_table(&n_tab);
	bool *bound = xcalloc(n_tab, sizeof *bound), attn_bound = false;
	double *grade = xcalloc(n_tab, sizeof *grade), *bound_rms = xcalloc(n_tab, sizeof *bound_rms);
	for (size_t f = 0; f < n_tab; f++) {
		grade[f] = fitfamily_grade(d, (int)f);
		bound[f] = tab[f].production_frac > 0 && grade[f] < tab[f].production_frac;
		attn_bound |= bound[f];
	}
	res->before = res->after = hw->eff;
	res->n_rows = d->len;
	res->use = xcalloc(d->len, sizeof *res->use);
	res->before_us = xcalloc(d->len, sizeof *res->before_us);
	res->after_us = xcalloc(d->len, sizeof *res->after_us);
	for (size_t i = 0; i < d->len; i++)
		res->before_us[i] = probepred_time_us(&pp, &res->before, &d->rows[i]);
	classify(res, d, dtype, bound, attn_bound);
	size_t *rows = xcalloc(d->len, sizeof *rows);
	for (size_t i = 0; i < d->len; i++)
		if (res->use[i] == FIT_ROW_USED)
			rows[res->n_used++] = i;
	choose_params(d, res->use, FIT_ROW_USED, dtype, res->fitted);
	int ids[EFF_N_PARAMS];
	size_t n_ids = 0;
	for (int id = 0; id < EFF_N_PARAMS; id++)
		if (res->fitted[id])
			ids[n_ids++] = id;
	res->n_fitted = (int)n_ids;
	if (n_ids == 0 || res->n_used < FIT_MIN_ROWS_PER_PARAM * n_ids) {
		size_t need = FIT_MIN_ROWS_PER_PARAM * (n_ids ? n_ids : 1);
		err_set(e, "%s: too few measurements to fit: %zu usable rows (of %zu) for %zu parameters; need at least %zu (%d per parameter; rows under %.0f us, stand-in kernels' rows and gemm rows of another dtype do not count)",
			d->path, res->n_used, d->len, n_ids, need, FIT_MIN_ROWS_PER_PARAM, FIT_MIN_KERNEL_US);
		free(rows);
		free(bound);
		free(grade);
		free(bound_rms);
		fit_result_free(res);
		return -1;
	}

	struct fit_ctx c = { d, &pp, &res->before, ids, n_ids, rows, res->n_used };
	res->converged = solve(&c, max_iter, &res->after, res->stderr_after, &res->iterations, res->status,
			       sizeof res->status);
	if (res->converged)
		for (size_t f = 0; f < n_tab; f++)
			if (bound[f])
				apply_bound(res, d, &pp, (int)f, dtype, max_iter, &bound_rms[f]);
	for (size_t i = 0; i < d->len; i++)
		res->after_us[i] = probepred_time_us(&pp, &res->after, &d->rows[i]);
	res->rms_before = rms_log(d, res->use, res->before_us);
	res->rms_after = rms_log(d, res->use, res->after_us);
	family_results(res, d, bound, grade, bound_rms);
	free(rows);
	free(bound);
	free(grade);
	free(bound_rms);
	return 0;
}

void fit_result_free(struct fit_result *res)
{
	free(res->use);
	free(res->before_us);
	free(res->after_us);
	free(res->fams);
	res->use = NULL;
	res->before_us = res->after_us = NULL;
	res->fams = NULL;
	res->n_fams = 0;
}
