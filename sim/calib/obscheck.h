/*
 * obscheck: what a measured value must be before an observation is kept
 * (runobs.c calls it for every reader, once, where observations are
 * collected): a latency > 0 ms and within the simulator's horizon
 * (EVQ_HORIZON_S; a latency past it could never be reproduced, and infinity
 * is past it). NAN means "not measured" and passes.
 */
#ifndef SERVESIM_OBSCHECK_H
#define SERVESIM_OBSCHECK_H

#include "err.h"
#include "runobs.h"

/* Returns 0 when every measured value of ob can be, or -1 with e naming
 * path, the observation (and stage), the key the value came from in ob's
 * format, what was expected and the value. Cannot fail otherwise. */
int obscheck_values(const struct runobs *ob, const char *path, struct err *e);

#endif
