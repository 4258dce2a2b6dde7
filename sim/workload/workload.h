/*
 * workload: turns a scenario into requests, as `vllm bench serve` would
 * send them (../shared/reference/formats.md §1).
 *
 * Open loop: every request is made up front (or, by workload_open, one at
 * a time as the run reaches it) with the time the client wants to send it
 * (Poisson, gamma with burstiness, constant, all at t=0, staged rates, or
 * a trace's own times). Closed loop (users > 0) and multi-turn
 * conversations (turns > 1) make the next request when one finishes.
 *
 * Every random draw comes from its own named GSL stream derived from the
 * seed ("arrival", "input_len", "output_len", "prefix_group", "think"), so
 * changing one distribution does not move the others.
 */
#ifndef SERVESIM_WORKLOAD_H
#define SERVESIM_WORKLOAD_H

#include <gsl/gsl_rng.h>
#include <stdint.h>

#include "err.h"
#include "request.h"
#include "scenario.h"

struct workload;

/* Makes the workload and its first requests in *reqs. Reads trace and
 * empirical-length files; errors name file, line and field. */
struct workload *workload_create(const struct scenario *sc, struct reqtab *reqs,
				 struct err *e);
void workload_destroy(struct workload *w);   /* NULL is a no-op */

/* workload_create that leaves a single-stage, single-turn open loop's
 * requests to be made one at a time (workload_next), so the request table
 * and the event queue need not hold them all at once; other workloads are
 * made as workload_create makes them. The same RNG streams give the same
 * requests either way. Same errors as workload_create. */
struct workload *workload_open(const struct scenario *sc, struct reqtab *reqs,
			       struct err *e);

/* Requests workload_next has still to make (0 after workload_create). */
int64_t workload_lazy_left(const struct workload *w);

/* Makes the next request of a lazy open loop (its want_send_ns set, never
 * before the last one's) and returns its index, or -1 when none is left.
 * Cannot fail. */
int64_t workload_next(struct workload *w, struct reqtab *reqs);

/* Request idx finished (or failed) at now. Returns the index of a new
 * request to send (its want_send_ns set), or -1. */
int64_t workload_on_done(struct workload *w, struct reqtab *reqs, size_t idx, int64_t now);

/* Stage start times in ns (n_stages + 1 entries, the last being the end of
 * the last stage, or 0 for an unstaged run). Borrowed. */
const int64_t *workload_stage_starts(const struct workload *w, int *n_stages);

#endif
