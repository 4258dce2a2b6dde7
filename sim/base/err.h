/*
 * err: the one way bad input is reported.
 *
 * A function that reads user input takes a `struct err *` and, on failure,
 * fills it with one line in the form `path:line: key: expected …, got '…'`
 * (or as much of that as is known) and returns -1 or NULL. The command prints
 * the message and exits 2. Bugs are assertions, not errs; out of memory
 * aborts in xalloc.
 *
 * A message is one line of printable text: err_set and err_prefix write
 * every control byte of what they format (a newline quoted from a file, a
 * NUL's neighbours, an escape sequence) as \n, \r, \t or \xNN, so a quoted
 * input can neither break the line nor drive the terminal.
 */
#ifndef SERVESIM_ERR_H
#define SERVESIM_ERR_H

#include <stdarg.h>
#include <stddef.h>

#define ERR_MSG_MAX 1024

struct err {
	char msg[ERR_MSG_MAX];
};

/* Formats the message into e (when e is not NULL). Always returns -1 so a
 * caller can write `return err_set(e, …);`. Cannot fail. */
int err_set(struct err *e, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Prefixes the current message with "prefix: " (for adding the file name a
 * lower layer did not know). Returns -1. */
int err_prefix(struct err *e, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Copies src into dst (cap bytes, NUL-terminated) with control bytes
 * (0x00-0x1f, 0x7f) escaped as above and a backslash as itself; an escape
 * is never cut in half. Returns the length written. Cannot fail. */
size_t err_escape(char *dst, size_t cap, const char *src);

#endif
