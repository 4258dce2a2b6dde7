/*
 * textfile: a whole input file in memory, NUL-terminated (the readers that
 * recognise a format by its content need all of it).
 */
#ifndef SERVESIM_TEXTFILE_H
#define SERVESIM_TEXTFILE_H

#include <stddef.h>

#include "err.h"

/* path's bytes plus a NUL (the caller's to free). NULL with e naming the
 * file when it cannot be opened or read, or is larger than max_bytes. */
char *textfile_read(const char *path, size_t max_bytes, struct err *e);

#endif
