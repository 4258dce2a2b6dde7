/*
 * wholefile: an output file written whole or not at all (DESIGN "Errors").
 *
 * wholefile_open writes to a temporary name beside the destination
 * (".NAME.PID.tmp" in the same folder, so the rename stays on one file
 * system); wholefile_commit closes it and renames it into place. On any
 * failure the temporary file is removed and the destination is untouched.
 */
#ifndef SERVESIM_WHOLEFILE_H
#define SERVESIM_WHOLEFILE_H

#include <stdio.h>

#include "err.h"

/* Opens the temporary file for path. Returns NULL with e set (the
 * temporary's name and the reason) when it cannot be created. */
FILE *wholefile_open(const char *path, struct err *e);

/* Closes f (from wholefile_open(path)) and renames it to path. Returns 0,
 * or -1 with e set after a write, close or rename error; then nothing of it
 * is left. */
int wholefile_commit(FILE *f, const char *path, struct err *e);

/* Closes f and removes the temporary file: nothing is written. */
void wholefile_abort(FILE *f, const char *path);

#endif
