/*
 * keydoc: the key reference (docs/keys.md), written from the key tables
 * the parsers bind (scenario_keys, clustercfg_keys, hw_profile_keys), so
 * it names exactly the keys a file may hold, their accepted values as the
 * error messages state them, and the defaults a scenario file starts from.
 * The output depends on the code alone (no data folder is read), so the
 * committed docs/keys.md can be compared with it byte for byte.
 */
#ifndef SERVESIM_KEYDOC_H
#define SERVESIM_KEYDOC_H

#include <stdio.h>

#include "err.h"

/* Writes the reference as Markdown to f. Returns 0, or -1 with e set when
 * the defaults cannot be loaded (a bug: the built-in scenario is always
 * valid). Write errors are the caller's to check on f. */
int keydoc_write_md(FILE *f, struct err *e);

#endif
