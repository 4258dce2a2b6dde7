#include "runfit.h"

#include <gsl/gsl_errno.h>
#include <gsl/gsl_multimin.h>
#include <gsl/gsl_vector.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "model.h"
#include "par.h"
#include "profwrite.h"
#include "run.h"
#include "wholefile.h"
#include "progress.h"
#include "xalloc.h"

#define DEFAULT_MAX_EVALS 200
#define DEFAULT_TOL 0.02
#define STEP_FRACTION 0.3     /* initial simplex, logit units */
#define STEP_AMOUNT 0.5       /* initial simplex, log units */
#define FRACTION_START_MAX 0.95
#define STALL_REL 1e-6        /* a best-cost change below this (relative) is no change */
#define STALL_ITERS_PER_PARAM 10

/* In order of priority: the first four are always fitted (the request
 * overhead only on the client clock); the rest join while the runs have
 * RUNFIT_MIN_VALUES_PER_PARAM measured values for each, and
 * moe_efficiency only when a training run serves an MoE model. */
static const int fit_ids[] = { EFF_BANDWIDTH, EFF_COMPUTE_MAX, EFF_STEP_OVERHEAD_US,
			       EFF_REQUEST_OVERHEAD_MS, EFF_ATTENTION_BANDWIDTH,
			       EFF_ATTENTION_HALF_SEQS, EFF_MOE_EFFICIENCY };
enum { N_FIT_IDS = sizeof fit_ids / sizeof *fit_ids, N_CORE_IDS = 4 };

/* ---- simulating the observations ----------------------------------------- */

void runfit_measure(const struct run_result *res, const struct runobs *ob, const struct runobs_point *pt,
		    double ms[OBS_N_METRICS])
{
	double ttft = 0, e2e = 0, out = 0, gaps = 0, n_gaps = 0;
	size_t n = 0;
	for (size_t i = 0; i < res->reqs.len; i++) {
		const struct request *r = &res->reqs.v[i];
		if (r->state != REQ_FINISHED || (pt->stage >= 0 && r->stage != pt->stage))
			continue;
		int64_t t0 = ob->clock == OBS_CLOCK_CLIENT ? r->send_ns : r->enqueue_ns;
		ttft += (double)(r->first_token_ns - t0);
		e2e += (double)(r->finish_ns - t0);
		out += r->output_len;
		if (r->output_len > 1) {
			gaps += (double)(r->last_token_ns - r->first_token_ns);
			n_gaps += r->output_len - 1;
		}
		n++;
	}
	for (int m = 0; m < OBS_N_METRICS; m++)
		ms[m] = NAN;
	if (!n)
		return;
	ms[OBS_TTFT] = ttft / (double)n / 1e6;
	ms[OBS_E2E] = e2e / (double)n / 1e6;
	if (ob->itl == OBS_ITL_GAPS)
		ms[OBS_ITL] = n_gaps > 0 ? gaps / n_gaps / 1e6 : NAN;
	else if (out / (double)n > 1)
		ms[OBS_ITL] = (ms[OBS_E2E] - ms[OBS_TTFT]) / (out / (double)n - 1);
}

struct sim_job {
	const struct runobs_set *set;
	const bool *skip;            /* observations not to simulate */
	const char *profile;         /* the candidate profile */
	double (*ms)[RUNOBS_MAX_POINTS][OBS_N_METRICS];   /* per observation */
	struct err *errs;            /* per observation */
	int *failed;                 /* per observation */
};

/* par_for's job: simulates observation i unless it is skipped. */
static void simulate_one(void *ctx, size_t i)
{
	struct sim_job *j = ctx;
	if (j->skip && j->skip[i])
		return;
	const struct runobs *ob = &j->set->v[i];
	struct scenario sc = ob->sc;
	snprintf(sc.hardware, sizeof sc.hardware, "%s", j->profile);
	struct run_result res;
	if (run_simulate(&sc, &res, &j->errs[i])) {
		err_prefix(&j->errs[i], "%s", ob->id);
		j->failed[i] = 1;
	} else {
		for (int p = 0; p < ob->n_pts; p++)
			runfit_measure(&res, ob, &ob->pts[p], j->ms[i][p]);
	}
	run_result_free(&res);
}

/* Simulates every observation not skipped on profile, on up to jobs
 * threads (the caller's among them). Returns 0 or -1 with e set to the
 * first failure in observation order. */
static int simulate_all(const struct runobs_set *set, const bool *skip, const char *profile, int jobs,
			double (*ms)[RUNOBS_MAX_POINTS][OBS_N_METRICS], struct err *e)
{
	struct sim_job j = { set, skip, profile, ms, xcalloc(set->len, sizeof *j.errs),
			     xcalloc(set->len, sizeof *j.failed) };
	par_for(set->len, jobs, simulate_one, &j);
	int rc = 0;
	for (size_t i = 0; i < set->len && !rc; i++)
		if (j.failed[i]) {
			*e = j.errs[i];
			rc = -1;
		}
	free(j.errs);
	free(j.failed);
	return rc;
}

/* ---- the objective --------------------------------------------------------- */

struct fit_ctx {
	const struct runobs_set *set;
	const struct runfit_opts *o;
	const struct hw_profile *base;
	struct runfit_result *res;
	const int *ids;
	size_t n_ids;
	bool *skip_holdout;           /* holdout observations, skipped by the optimiser */
	char profile[4096];           /* the temporary candidate profile */
	double (*ms)[RUNOBS_MAX_POINTS][OBS_N_METRICS];
	int jobs;
	int evals;
	bool failed;
	struct err err;
};

static void apply(const struct fit_ctx *c, const gsl_vector *x, struct hw_efficiency *eff)
{
	*eff = c->res->before;
	for (size_t i = 0; i < c->n_ids; i++)
		effparam_set(eff, c->ids[i], effparam_from_x(c->ids[i], gsl_vector_get(x, i)));
}

static double term(double sim, double meas)
{
	if (!(sim > 0) || !isfinite(sim))
		return RUNFIT_BAD_TERM;
	return fmin(fabs(log(sim / meas)), RUNFIT_BAD_TERM);
}

/* Mean term over the values of one side (holdout or training), reading
 * the simulated ms; also stores them into the values' `slot`. */
static double cost_of(struct fit_ctx *c, bool holdout, int slot)
{
	double sum = 0;
	size_t n = 0;
	for (size_t k = 0; k < c->res->n_vals; k++) {
		struct runfit_value *v = &c->res->vals[k];
		if (v->holdout != holdout)
			continue;
		double sim = c->ms[v->obs][v->point][v->metric];
		if (slot == 0)
			v->before_ms = sim;
		else if (slot == 1)
			v->after_ms = sim;
		sum += term(sim, v->measured_ms);
		n++;
	}
	return n ? sum / (double)n : 0;
}

static int evaluate(struct fit_ctx *c, const struct hw_efficiency *eff, const bool *skip, struct err *e)
{
	if (profwrite_save(c->profile, c->o->base_path, eff, "runfit candidate", NULL, 0, e))
		return -1;
	c->evals++;
	int max_evals = c->o->max_evals > 0 ? c->o->max_evals : DEFAULT_MAX_EVALS;
	progress_points(c->o->progress, 1, max_evals);   /* an estimate: it may stop sooner */
	return simulate_all(c->set, skip, c->profile, c->jobs, c->ms, e);
}

static double objective(const gsl_vector *x, void *params)
{
	struct fit_ctx *c = params;
	if (c->failed)
		return GSL_POSINF;
	struct hw_efficiency eff;
	apply(c, x, &eff);
	if (evaluate(c, &eff, c->skip_holdout, &c->err)) {
		c->failed = true;
		return GSL_POSINF;
	}
	return cost_of(c, false, -1);
}

/* ---- the fit ------------------------------------------------------------------ */

static void collect_values(struct runfit_result *res, const struct runobs_set *set, const bool *holdout)
{
	size_t cap = 0;
	for (size_t i = 0; i < set->len; i++) {
		const struct runobs *ob = &set->v[i];
		for (int p = 0; p < ob->n_pts; p++)
			for (int m = 0; m < OBS_N_METRICS; m++) {
				if (isnan(ob->pts[p].ms[m]))
					continue;
				xgrow(&res->vals, &cap, res->n_vals + 1, sizeof *res->vals);
				bool h = holdout && holdout[i];
				res->vals[res->n_vals++] = (struct runfit_value){
					.obs = i, .point = p, .metric = m, .holdout = h,
					.measured_ms = ob->pts[p].ms[m], .before_ms = NAN, .after_ms = NAN };
				if (h)
					res->n_holdout++;
				else
					res->n_train++;
			}
	}
}

/* Whether the run's model routes tokens to experts (a model that does not
 * load counts as dense: the run itself reports that error when simulated). */
static bool serves_moe(const struct runobs *ob)
{
	struct model m;
	struct err e;
	return model_load_named(&m, ob->sc.model, &e) == 0 && m.n_experts > 0;
}

int runfit_fit(struct runfit_result *res, const struct runobs_set *set, const struct hw_profile *base,
	       const struct runfit_opts *o, struct err *e)
{
	memset(res, 0, sizeof *res);
	res->before = res->after = base->eff;
	collect_values(res, set, o->holdout);

	bool client = false, moe = false;
	for (size_t i = 0; i < set->len; i++) {
		if (o->holdout && o->holdout[i])
			continue;
		client |= set->v[i].clock == OBS_CLOCK_CLIENT;
		moe |= serves_moe(&set->v[i]);
	}
	int ids[N_FIT_IDS];
	size_t n_ids = 0;
	for (size_t i = 0; i < N_FIT_IDS; i++) {
		if ((fit_ids[i] == EFF_REQUEST_OVERHEAD_MS && !client) ||
		    (fit_ids[i] == EFF_MOE_EFFICIENCY && !moe))
			continue;
		if (i >= N_CORE_IDS && res->n_train < RUNFIT_MIN_VALUES_PER_PARAM * (n_ids + 1))
			break;
		ids[n_ids++] = fit_ids[i];
		res->fitted[fit_ids[i]] = true;
	}
	if (res->n_train < RUNFIT_MIN_VALUES_PER_PARAM * n_ids) {
		err_set(e, "too few measurements to fit: %zu measured values outside the held-out runs for %zu parameters; need at least %zu (%d per parameter)",
			res->n_train, n_ids, RUNFIT_MIN_VALUES_PER_PARAM * n_ids, RUNFIT_MIN_VALUES_PER_PARAM);
		runfit_result_free(res);
		return -1;
	}

	struct fit_ctx c = { .set = set, .o = o, .base = base, .res = res, .ids = ids, .n_ids = n_ids };
	c.jobs = o->jobs > 0 ? o->jobs : (int)sysconf(_SC_NPROCESSORS_ONLN);
	if (c.jobs < 1)
		c.jobs = 1;
	c.ms = xcalloc(set->len, sizeof *c.ms);
	c.skip_holdout = xcalloc(set->len ? set->len : 1, sizeof *c.skip_holdout);
	for (size_t i = 0; i < set->len; i++)
		c.skip_holdout[i] = o->holdout && o->holdout[i];
	int rc = wholefile_temp(c.profile, sizeof c.profile, "fit", ".ini", e);

	/* Before: every observation, held-out ones included. */
	if (!rc)
		rc = evaluate(&c, &res->before, NULL, e);
	if (!rc) {
		res->cost_before = cost_of(&c, false, 0);
		res->holdout_before = cost_of(&c, true, 0);
	}

	gsl_multimin_fminimizer *s = NULL;
	gsl_vector *x0 = gsl_vector_alloc(n_ids), *step = gsl_vector_alloc(n_ids);
	if (!rc) {
		for (size_t i = 0; i < n_ids; i++) {
			bool fraction = effparam_get(ids[i])->fraction;
			double v = effparam_value(&res->before, ids[i]);
			/* A fraction at 1 (moe_efficiency's neutral value) sits
			 * where the logit is flat: the simplex starts just
			 * inside, or it could never move it. */
			if (fraction && v > FRACTION_START_MAX)
				v = FRACTION_START_MAX;
			gsl_vector_set(x0, i, effparam_to_x(ids[i], v));
			gsl_vector_set(step, i, fraction ? STEP_FRACTION : STEP_AMOUNT);
		}
		gsl_multimin_function f = { objective, n_ids, &c };
		int max_evals = o->max_evals > 0 ? o->max_evals : DEFAULT_MAX_EVALS;
		double tol = o->tol > 0 ? o->tol : DEFAULT_TOL, size = INFINITY;
		s = gsl_multimin_fminimizer_alloc(gsl_multimin_fminimizer_nmsimplex2, n_ids);
		int status = gsl_multimin_fminimizer_set(s, &f, x0, step), stalled = 0;
		/* Not gsl_multimin_fminimizer_minimum(s): nmsimplex2's set
		 * leaves it unset until the first iteration (valgrind), and
		 * the stall test read garbage, so two identical fits could stop
		 * at different evaluations. */
		double best = INFINITY;
		while (status == GSL_SUCCESS && !c.failed && c.evals < max_evals) {
			status = gsl_multimin_fminimizer_iterate(s);
			if (status != GSL_SUCCESS)
				break;
			size = gsl_multimin_fminimizer_size(s);
			if (gsl_multimin_test_size(size, tol) == GSL_SUCCESS) {
				res->converged = true;
				break;
			}
			/* A parameter the runs cannot see (a fraction saturated at
			 * 1, an overhead hidden by the rest) leaves the simplex
			 * wide along it forever: stop when the best cost stalls. */
			double fmin_now = gsl_multimin_fminimizer_minimum(s);
			if (fmin_now < best - STALL_REL * fmax(1, fabs(best))) {
				best = fmin_now;
				stalled = 0;
			} else if (++stalled >= STALL_ITERS_PER_PARAM * (int)n_ids) {
				res->converged = true;
				res->stalled = true;
				break;
			}
		}
		if (c.failed) {
			*e = c.err;
			rc = -1;
		} else {
			res->evals = c.evals;
			if (res->stalled)
				snprintf(res->status, sizeof res->status,
					 "converged: the best cost moved less than %g in %d iterations (simplex size %.3g: a parameter the runs do not constrain) after %d evaluations",
					 STALL_REL, STALL_ITERS_PER_PARAM * (int)n_ids, size, c.evals);
			else if (res->converged)
				snprintf(res->status, sizeof res->status,
					 "converged: simplex size %.3g <= %.3g after %d evaluations", size, tol, c.evals);
			else
				snprintf(res->status, sizeof res->status,
					 "did not converge: simplex size %.3g > %.3g after %d evaluations%s%s", size, tol,
					 c.evals, status != GSL_SUCCESS ? ": " : " (raise --max-evals)",
					 status != GSL_SUCCESS ? gsl_strerror(status) : "");
			apply(&c, gsl_multimin_fminimizer_x(s), &res->after);
			/* After: every observation again at the best point. */
			rc = evaluate(&c, &res->after, NULL, e);
			if (!rc) {
				res->cost_after = cost_of(&c, false, 1);
				res->holdout_after = cost_of(&c, true, 1);
			}
		}
	}
	if (s)
		gsl_multimin_fminimizer_free(s);
	gsl_vector_free(x0);
	gsl_vector_free(step);
	if (c.profile[0])
		unlink(c.profile);
	free(c.ms);
	free(c.skip_holdout);
	if (rc)
		runfit_result_free(res);
	return rc;
}

void runfit_result_free(struct runfit_result *res)
{
	free(res->vals);
	res->vals = NULL;
	res->n_vals = 0;
}
