/*
 * textfile: a whole input file in memory, NUL-terminated (the readers that
 * recognise a format by its content need all of it), and the walk over
 * its lines that those readers share.
 */
#ifndef SERVESIM_TEXTFILE_H
#define SERVESIM_TEXTFILE_H

#include <stdbool.h>
#include <stddef.h>

#include "err.h"

/* path's bytes plus a NUL (the caller's to free). NULL with e naming the
 * file when it cannot be opened or read, is larger than max_bytes, or
 * holds a NUL byte (not text: "FILE:LINE: a NUL byte at column C"). */
char *textfile_read(const char *path, size_t max_bytes, struct err *e);

/* The next line of a NUL-terminated text: *line its start (borrowed, in
 * the text), *len its length without the '\n' (a '\r' before it is kept,
 * for the caller to trim); *cur moves past the '\n'. A last line without
 * one counts; an empty text, or *cur at the text's end (or NULL), has no
 * more lines: returns false and leaves the outputs alone. Cannot fail.
 *   const char *cur = text, *row; size_t n;
 *   while (textfile_next_line(&cur, &row, &n)) … */
bool textfile_next_line(const char **cur, const char **line, size_t *len);

#endif
