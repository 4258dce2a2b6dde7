#include "fit.h"

#include <gsl/gsl_blas.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_matrix.h>
#include <gsl/gsl_multifit_nlinear.h>
#include <gsl/gsl_vector.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probepred.h"
#include "xalloc.h"

#define DEFAULT_MAX_ITER 200
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

/* Which parameters the used rows can pin down. */
static void choose_params(const struct probe_data *d, const int *use, bool fitted[EFF_N_PARAMS])
{
	size_t n_bw = 0, n_gemm = 0, n_pre = 0, n_dec = 0, n_tok = 0, n_batch = 0;
	int64_t toks[64], batches[64];
	for (size_t i = 0; i < d->len; i++) {
		if (use[i] != FIT_ROW_USED)
			continue;
		const struct probe_row *r = &d->rows[i];
		switch (r->kind) {
		case PROBE_STREAM_READ:
		case PROBE_D2D_COPY:
			n_bw++;
			break;
		case PROBE_GEMM:
			n_gemm++;
			add_distinct(toks, &n_tok, r->tokens);
			break;
		case PROBE_ATTN_PREFILL:
			n_pre++;
			break;
		case PROBE_ATTN_DECODE:
			n_dec++;
			add_distinct(batches, &n_batch, r->tokens);
			break;
		case PROBE_LAYER:
			if (r->decode)
				n_dec++;
			else
				n_pre++;
			n_bw++;
			break;
		}
	}
	memset(fitted, 0, EFF_N_PARAMS * sizeof *fitted);
	fitted[EFF_BANDWIDTH] = n_bw > 0 || n_gemm >= 3;
	fitted[EFF_ATTENTION_BANDWIDTH] = n_dec >= 2;
	/* How decode attention's efficiency rises with the sequences in a
	 * batch needs kernels timed at three batch sizes or more. */
	fitted[EFF_ATTENTION_HALF_SEQS] = n_batch >= 3;
	fitted[EFF_COMPUTE_MAX] = fitted[EFF_COMPUTE_HALF_TOKENS] = n_tok >= 3;
	fitted[EFF_ATTENTION_COMPUTE] = n_pre >= 2;
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

	res->before = res->after = hw->eff;
	res->n_rows = d->len;
	res->use = xcalloc(d->len, sizeof *res->use);
	res->before_us = xcalloc(d->len, sizeof *res->before_us);
	res->after_us = xcalloc(d->len, sizeof *res->after_us);
	size_t *rows = xcalloc(d->len, sizeof *rows);
	for (size_t i = 0; i < d->len; i++) {
		const struct probe_row *r = &d->rows[i];
		res->before_us[i] = probepred_time_us(&pp, &res->before, r);
		if (r->kind == PROBE_GEMM && r->dtype != dtype)
			res->use[i] = FIT_ROW_OTHER_DTYPE;
		else if (res->before_us[i] < FIT_MIN_KERNEL_US)
			res->use[i] = FIT_ROW_LAUNCH_BOUND;
		else
			rows[res->n_used++] = i;
	}
	choose_params(d, res->use, res->fitted);
	int ids[EFF_N_PARAMS];
	size_t n_ids = 0;
	for (int id = 0; id < EFF_N_PARAMS; id++)
		if (res->fitted[id])
			ids[n_ids++] = id;
	res->n_fitted = (int)n_ids;
	if (n_ids == 0 || res->n_used < FIT_MIN_ROWS_PER_PARAM * n_ids) {
		size_t need = FIT_MIN_ROWS_PER_PARAM * (n_ids ? n_ids : 1);
		err_set(e, "%s: too few measurements to fit: %zu usable rows (of %zu) for %zu parameters; need at least %zu (%d per parameter; rows under %.0f us and gemm rows of another dtype do not count)",
			d->path, res->n_used, d->len, n_ids, need, FIT_MIN_ROWS_PER_PARAM, FIT_MIN_KERNEL_US);
		free(rows);
		fit_result_free(res);
		return -1;
	}

	struct fit_ctx c = { d, &pp, &res->before, ids, n_ids, rows, res->n_used };
	gsl_multifit_nlinear_parameters params = gsl_multifit_nlinear_default_parameters();
	gsl_multifit_nlinear_fdf fdf = { 0 };
	fdf.f = residuals;
	fdf.n = res->n_used;
	fdf.p = n_ids;
	fdf.params = &c;
	gsl_multifit_nlinear_workspace *w =
		gsl_multifit_nlinear_alloc(gsl_multifit_nlinear_trust, &params, fdf.n, fdf.p);
	gsl_vector *x0 = gsl_vector_alloc(n_ids);
	for (size_t i = 0; i < n_ids; i++)
		gsl_vector_set(x0, i, effparam_to_x(ids[i], effparam_value(&res->before, ids[i])));
	int info = 0;
	int status = gsl_multifit_nlinear_init(x0, &fdf, w);
	if (status == GSL_SUCCESS)
		status = gsl_multifit_nlinear_driver((size_t)max_iter, 1e-8, 1e-8, 1e-10, NULL, NULL, &info, w);
	res->iterations = (int)gsl_multifit_nlinear_niter(w);
	res->converged = status == GSL_SUCCESS;
	if (res->converged)
		snprintf(res->status, sizeof res->status, "converged in %d iterations (%s)", res->iterations,
			 info == 1 ? "small step" : info == 2 ? "small gradient" : "small change");
	else
		snprintf(res->status, sizeof res->status, "did not converge: %s after %d iterations",
			 gsl_strerror(status), res->iterations);
	apply(&c, gsl_multifit_nlinear_position(w), &res->after);
	if (res->converged)
		standard_errors(w, &c, &res->after, res->stderr_after);
	for (size_t i = 0; i < d->len; i++)
		res->after_us[i] = probepred_time_us(&pp, &res->after, &d->rows[i]);
	res->rms_before = rms_log(d, res->use, res->before_us);
	res->rms_after = rms_log(d, res->use, res->after_us);
	gsl_vector_free(x0);
	gsl_multifit_nlinear_free(w);
	free(rows);
	return 0;
}

void fit_result_free(struct fit_result *res)
{
	free(res->use);
	free(res->before_us);
	free(res->after_us);
	res->use = NULL;
	res->before_us = res->after_us = NULL;
}
