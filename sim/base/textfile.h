/*
 * textfile: a whole input file in memory, NUL-terminated (the readers that
 * recognise a format by its content need all of it).
 */
#ifndef SERVESIM_TEXTFILE_H
#define SERVESIM_TEXTFILE_H

#include <stddef.h>

#include "err.h"

/* path's bytes plus a NUL (the caller's to free). NULL with e naming the
 * file when it cannot be opened or read, is larger than max_bytes, or
 * holds a NUL byte (not text: "FILE:LINE: a NUL byte at column C"). */
char *textfile_read(const char *path, size_t max_bytes, struct err *e);

#endif
