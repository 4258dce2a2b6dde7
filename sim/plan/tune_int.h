/*
 * tune_int: what the tuner's files share (tune.c: the settings, the
 * coarse and fine search, the item JSON; tune_space.c: the space, its key
 * table and the scenario's own values; tune_confirm.c: step 3, the
 * winner's confirmation on fresh seed blocks). Not for other modules:
 * they see tune.h.
 */
#ifndef SERVESIM_TUNE_INT_H
#define SERVESIM_TUNE_INT_H

#include <stddef.h>

#include "tune.h"

/* The scenario's own value of key as text ("default" for an unset
 * integer, "" for a key outside the table). */
void tune_own_text(const struct scenario *sc, const char *key, char *out, size_t cap);

/* Step 3 (tune.h): each of the n candidates' winner searched again on
 * o->confirm_blocks fresh seed blocks; the median block's search becomes
 * the candidate's answer. */
void tune_confirm(struct tune_cand *t, size_t n, const struct plan_slo *slo, const struct plan_opts *o);

#endif
