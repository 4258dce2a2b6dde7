/*
 * runfit: the [efficiency] parameters that make simulated serving match
 * real runs (runobs): Nelder-Mead (GSL gsl_multimin_fminimizer_nmsimplex2)
 * over bandwidth, compute_max, step_overhead_us and request_overhead_ms,
 * searched in effparam's unconstrained space. Each evaluation writes the
 * candidate into a temporary copy of the base profile (profwrite) and
 * simulates every training observation on it with run_simulate, on
 * opts->jobs threads (observations share nothing; results do not depend on
 * the thread count).
 *
 * Cost: the mean, over the training set's measured values (observation x
 * stage x metric), of |ln(simulated / measured)|: about the mean absolute
 * percentage error for small errors, and, unlike a squared error, not
 * dominated by one run the model cannot explain (a fit is for the typical
 * run). (Weighting each run equally instead, whatever its number of
 * stages, did worse on held-out runs in a 3-fold check over the 15 H100
 * runs.) A value the simulation cannot produce (no request
 * finished, or an ITL of one-token outputs) costs RUNFIT_BAD_TERM.
 * Simulated values are computed from the request records as the
 * measurement defines them: client clock from the send, engine clock from
 * arrival at the engine; ITL as the mean token gap, or derived from the
 * stage means (calibration CSVs).
 *
 * request_overhead_ms is fitted only when some training observation is on
 * the client clock (the engine clock cannot see it). Held-out observations
 * (opts->holdout) are simulated before and after, never by the optimiser.
 *
 * Failure contract: runfit_fit returns -1 with e set (and res holding
 * nothing to free) for too few training values (fewer than
 * RUNFIT_MIN_VALUES_PER_PARAM per parameter), a scenario that does not
 * simulate, or a temporary profile that cannot be written; otherwise 0,
 * with res->converged false when the evaluation budget ran out before the
 * simplex shrank below opts->tol or the best cost stalled (no relative
 * change above 1e-6 in 10 iterations per parameter, which is how a
 * parameter the runs do not constrain ends); callers then write nothing.
 */
#ifndef SERVESIM_RUNFIT_H
#define SERVESIM_RUNFIT_H

#include <stdbool.h>
#include <stddef.h>

#include "effparam.h"
#include "err.h"
#include "hwprofile.h"
#include "runobs.h"

#define RUNFIT_MIN_VALUES_PER_PARAM 2
#define RUNFIT_BAD_TERM 5.0     /* |ln-ratio| of a value not produced: a factor e^5 off */

struct runfit_opts {
	const char *base_path;       /* the base profile's INI (required) */
	const bool *holdout;         /* per observation of the set; NULL: none */
	int max_evals;               /* simulations of the training set; 0: 200 */
	double tol;                  /* simplex size to stop at; 0: 0.02 */
	int jobs;                    /* threads; <= 0: the online CPUs */
	struct progress *progress;   /* evaluations done, on stderr (progress.h); NULL: none */
};

/* One measured value and what the simulator made of it. */
struct runfit_value {
	size_t obs;                  /* index in the set */
	int point;                   /* index in the observation's pts */
	int metric;                  /* enum runobs_metric */
	bool holdout;
	double measured_ms, before_ms, after_ms;   /* NAN: not produced */
};

struct runfit_result {
	struct hw_efficiency before, after;
	bool fitted[EFF_N_PARAMS];
	struct runfit_value *vals;
	size_t n_vals, n_train, n_holdout;
	double cost_before, cost_after;           /* training set */
	double holdout_before, holdout_after;     /* the same cost on held-out values */
	int evals;
	bool converged;
	bool stalled;                 /* converged by a stalled best cost, not by size */
	char status[224];
};

/* Fits set on base (hw: the base profile as loaded, whose [efficiency] is
 * the start and "before"). Returns 0 (see res->converged) or -1 with e. */
int runfit_fit(struct runfit_result *res, const struct runobs_set *set, const struct hw_profile *base,
	       const struct runfit_opts *opts, struct err *e);

void runfit_result_free(struct runfit_result *res);   /* safe on a zeroed struct */

/* The metrics of one measured point of ob from a simulated run's request
 * records, as the measurement defines them (its clock, its ITL). NAN where
 * the run produced none. Cannot fail. */
struct run_result;
void runfit_measure(const struct run_result *res, const struct runobs *ob, const struct runobs_point *pt,
		    double ms[OBS_N_METRICS]);

#endif
