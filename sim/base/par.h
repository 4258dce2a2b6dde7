/*
 * par: run n independent jobs on up to `jobs` threads.
 *
 * Sweeps, plans, comparisons and calibration fits are made of simulations
 * that share nothing
 * (run_simulate keeps no global state), so each job writes only its own
 * slot of the caller's output array and the caller reads the slots in index
 * order afterwards: the results do not depend on the number of threads or
 * on which thread ran which job. Jobs are handed out one index at a time
 * from a shared counter, so a slow job does not hold back the others.
 */
#ifndef SERVESIM_PAR_H
#define SERVESIM_PAR_H

#include <stddef.h>

/* Calls fn(ctx, i) once for every i in [0, n), on min(jobs, n) threads
 * (jobs <= 1: in the calling thread, in order). Returns when all calls have
 * returned. fn must be safe to run concurrently for different i. When a
 * thread cannot be created the remaining work runs on the threads that
 * exist (at least the caller's); this cannot fail. */
void par_for(size_t n, int jobs, void (*fn)(void *ctx, size_t i), void *ctx);

struct progress;

/* par_for that counts each finished job on the progress display p
 * (progress.h; NULL: none). */
void par_for_progress(size_t n, int jobs, void (*fn)(void *ctx, size_t i), void *ctx,
		      struct progress *p);

/* The number of online processors (at least 1): the default for --jobs. */
int par_default_jobs(void);

#endif
