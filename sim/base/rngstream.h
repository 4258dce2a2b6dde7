/*
 * rngstream: the run's named random streams (DESIGN.md "Time and
 * determinism"). Each draw site (arrivals, lengths, the router, the
 * drafter's acceptances) takes its own GSL stream derived from the run's
 * seed and its name, so changing one distribution does not shift the
 * others. In base so every layer (workload, engine, cluster) can take one
 * without depending on the others.
 */
#ifndef SERVESIM_RNGSTREAM_H
#define SERVESIM_RNGSTREAM_H

#include <gsl/gsl_rng.h>
#include <stdint.h>

/* The named random stream of a run with this seed (the caller frees it
 * with gsl_rng_free). Cannot fail (aborts on OOM). */
gsl_rng *rng_stream(const char *name, int64_t seed);

#endif
