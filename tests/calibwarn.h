/*
 * calibwarn.h: the contract of a `servesim calibrate fit` or `calibrate
 * runs` whose fit did not converge, shared by the tests of both
 * (test_probecli.c, test_calib.c). Header-only; needs testutil.h.
 *
 * assert_fit_did_not_converge(c, out, table_head): exit 2; nothing on
 * stdout (a table there would read as a result); on stderr a warning
 * ("warning: the fit did not converge"), the diagnostic table (its header
 * line starts with table_head) after it, and last the line ending
 * "nothing written"; and no profile at out.
 */
#ifndef SERVESIM_CALIBWARN_H
#define SERVESIM_CALIBWARN_H

#include <string.h>
#include <sys/stat.h>

#include "testutil.h"

static inline void assert_fit_did_not_converge(const struct cmd_result *c, const char *out,
					       const char *table_head)
{
	assert_int_equal(c->status, 2);
	assert_string_equal(c->out, "");
	assert_contains(c->err, "warning: the fit did not converge");
	assert_contains(c->err, table_head);
	/* The warning first, the table after it, the verdict last. */
	const char *warn = strstr(c->err, "warning:"), *tab = strstr(c->err, table_head);
	assert_true(warn && tab && warn < tab);
	size_t n = strlen(c->err);
	const char *tail = "nothing written\n";
	assert_true(n >= strlen(tail) && !strcmp(c->err + n - strlen(tail), tail));
	struct stat st;
	assert_true(stat(out, &st) != 0);
}

#endif
