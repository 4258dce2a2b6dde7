/*
 * What tests/test_robust.c and tests/test_exitcodes.c share: a scratch
 * folder made by setup and removed by teardown, a file written there, and
 * the check that a command fails with one line naming what it should.
 */
#ifndef SERVESIM_TEST_ROBUSTUTIL_H
#define SERVESIM_TEST_ROBUSTUTIL_H

#include "testutil.h"

TEST_TMPDIR_GROUP("robust")

/* tmpdir/name holding text; the path in out. */
static void write_file(char *out, size_t cap, const char *name, const char *text, size_t len)
{
	snprintf(out, cap, "%s/%s", tmpdir, name);
	test_write_file(out, text, len);
}

static size_t count_lines(const char *s)
{
	size_t n = 0;
	for (; *s; s++)
		n += *s == '\n';
	return n;
}

/* The command exits with status, and says so in one line holding each of
 * the needles (NULL-terminated). */
static void one_line_error(const char *cmd, int status, ...)
{
	struct cmd_result r;
	run_cmd(&r, "%s", cmd);
	if (r.status != status)
		fail_msg("%s: exit %d, expected %d; stderr: %s", cmd, r.status, status, r.err);
	assert_int_equal(count_lines(r.err), 1);
	va_list ap;
	va_start(ap, status);
	const char *needle;
	while ((needle = va_arg(ap, const char *)))
		assert_contains(r.err, needle);
	va_end(ap);
	cmd_result_free(&r);
}

static void cmdf(char *out, size_t cap, const char *fmt, const char *arg)
{
	char tail[2048];
	snprintf(tail, sizeof tail, fmt, arg);
	snprintf(out, cap, "'%s' %s", SERVESIM_BIN, tail);
}

#endif
