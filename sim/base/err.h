/*
 * err: the one way bad input is reported.
 *
 * A function that reads user input takes a `struct err *` and, on failure,
 * fills it with one line in the form `path:line: key: expected …, got '…'`
 * (or as much of that as is known) and returns -1 or NULL. The command prints
 * the message and exits 2. Bugs are assertions, not errs; out of memory
 * aborts in xalloc.
 */
#ifndef SERVESIM_ERR_H
#define SERVESIM_ERR_H

#include <stdarg.h>

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

#endif
