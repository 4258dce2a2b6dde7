/*
 * jsonfile: one JSON document read from a file, with the one-line error
 * every reader gives for a file that is not JSON.
 */
#ifndef SERVESIM_JSONFILE_H
#define SERVESIM_JSONFILE_H

#include <jansson.h>
#include <stddef.h>

#include "err.h"

/* The JSON value in the file at path (jansson's json_load_file with
 * flags, e.g. JSON_REJECT_DUPLICATES), owned by the caller. Returns NULL
 * with e: "path:line:column: invalid JSON: what" for a syntax error,
 * "path: what" for a file that cannot be opened or read. */
json_t *jsonfile_load(const char *path, size_t flags, struct err *e);

#endif
