/*
 * proberun: runs servesim-probe for `servesim calibrate gpu`.
 *
 * Built with CUDA (CMake found nvcc and defines SERVESIM_WITH_CUDA for this
 * file alone), it looks for servesim-probe next to the running servesim
 * (/proc/self/exe), then on PATH, and runs it with a model's dimensions,
 * its output going to a CSV file and its messages to stderr. Built
 * without, proberun_available() is false and the others fail with "built
 * without CUDA support": no other file knows which build it is in.
 */
#ifndef SERVESIM_PROBERUN_H
#define SERVESIM_PROBERUN_H

#include <stdbool.h>
#include <stddef.h>

#include "err.h"
#include "model.h"
#include "probecsv.h"

/* Whether this servesim was built with the CUDA probe. */
bool proberun_available(void);

/* The probe's dimensions for model m at tensor-parallel size tp. Returns
 * 0, or -1 with e for a model the probe cannot measure (MLA attention). */
int proberun_dims(struct probe_dims *d, const struct model *m, int tp, struct err *e);

/* Finds servesim-probe into out (explicit: a path given by the user, or
 * NULL to search). Returns 0, or -1 with e. */
int proberun_find(char *out, size_t cap, const char *explicit_path, struct err *e);

/* Runs probe with dims, writing its CSV to csv_path, for at most budget_s
 * seconds of measuring. Returns 0 when it exited 0; 1 with e saying so
 * when some families failed (exit 3: the CSV holds the others); -1 with
 * e (could not start, killed, another non-zero exit; the CSV, flushed row
 * by row, holds what was measured before). */
int proberun_exec(const char *probe, const struct probe_dims *d, int budget_s, const char *csv_path,
		  struct err *e);

#endif
