/*
 * scenlists: the [workload] keys written as lists of A:B pairs, parsed
 * into the scenario once the whole document is bound (scenario.c calls
 * them): workload.stages (RATE:DURATION_S, …) and workload.priorities
 * (PRIORITY:WEIGHT, …, synthetic workloads only). Each bad entry is one
 * error naming where the key was given (file:line, or --set), the key and
 * what was expected.
 */
#ifndef SERVESIM_SCENLISTS_H
#define SERVESIM_SCENLISTS_H

#include "err.h"
#include "inidoc.h"
#include "scenario.h"

/* sc->stages_text into sc->stages; en: where the key was given (or NULL),
 * path: the scenario file. */
int scenario_parse_stages(struct scenario *sc, const struct inidoc_entry *en, const char *path,
			  struct err *e);

/* sc->priorities_text into sc->priorities; an error with a trace set (a
 * trace carries each request's own priority). */
int scenario_parse_priorities(struct scenario *sc, const struct inidoc_entry *en, const char *path,
			      struct err *e);

#endif
