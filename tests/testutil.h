/*
 * testutil: what the cmocka tests share. Header-only (static functions):
 * each test is its own executable with its own main.
 *
 * assert_double_near(a, b, tol): |a - b| <= tol for doubles. cmocka 1.1.5's
 * assert_float_equal converts to float, which loses the digits the
 * simulator's arithmetic is checked to, so this prints both values and the
 * tolerance with 17 significant digits on failure.
 *
 * assert_contains(haystack, needle): needle is a substring; both are shown
 * on failure (for error messages).
 *
 * skip_without_dir(dir): skips the test, saying why on stderr, when dir (a
 * folder of ../shared, which a bare clone lacks) is missing.
 *
 * run_cmd(&r, fmt, …): runs a shell command, capturing stdout, stderr and
 * the exit status; free with cmd_result_free. For the CLI tests.
 * test_servesim(want, args): `SERVESIM_BIN ARGS` (args as the shell reads
 * them) must exit with status want; returns its stdout (owned), or fails
 * the test showing stderr.
 *
 * test_slurp_path(path): a file's whole text, NUL-terminated (owned);
 * fails the test when it cannot be opened. test_write_file(path, bytes, n)
 * / test_write_text(path, text): the other way, a fixture written whole
 * (replacing the file), failing the test when it cannot be.
 *
 * test_tmpdir_make(dir, cap, stem) / test_tmpdir_remove(dir): a fresh
 * folder /tmp/servesim-STEM-XXXXXX for a group's files (cmocka setup)
 * and its removal with everything in it (teardown); 0 or -1 each.
 * test_tmpdir(dir, cap, stem) / test_rmdir(dir): the same inside a test,
 * failing it (the folder named) when they cannot. test_path_exists(path):
 * whether stat finds it. TEST_TMPDIR_GROUP("stem"): a group's folder,
 * static char tmpdir[64], made by the group fixture tmpdir_setup and
 * removed by tmpdir_teardown (cmocka_run_group_tests(tests, tmpdir_setup,
 * tmpdir_teardown)). The tests' one home for scratch folders.
 */
#ifndef SERVESIM_TESTUTIL_H
#define SERVESIM_TESTUTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <limits.h>
#include <stdbool.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static inline void test_double_near(double a, double b, double tol, const char *sa,
				    const char *sb, const char *file, int line)
{
	/* !(<=) so that a NaN on either side fails too. */
	if (!(fabs(a - b) <= tol)) {
		print_error("%s = %.17g\n%s = %.17g\n|difference| = %.17g > tolerance %.17g\n",
			    sa, a, sb, b, fabs(a - b), tol);
		_fail(file, line);
	}
}

#define assert_double_near(a, b, tol) \
	test_double_near((a), (b), (tol), #a, #b, __FILE__, __LINE__)

/* Relative form: |a - b| <= rel * |b|, b being the reference figure. */
#define assert_double_rel(a, b, rel) \
	test_double_near((a), (b), (rel) * fabs((double)(b)), #a, #b, __FILE__, __LINE__)

static inline void test_contains(const char *hay, const char *needle, const char *sh,
				 const char *file, int line)
{
	if (!hay || !strstr(hay, needle)) {
		print_error("%s does not contain \"%s\"; it is:\n\"%s\"\n", sh, needle,
			    hay ? hay : "(null)");
		_fail(file, line);
	}
}

#define assert_contains(hay, needle) test_contains((hay), (needle), #hay, __FILE__, __LINE__)

#define skip_without_dir(dir)                                                              \
	do {                                                                               \
		struct stat st_;                                                           \
		if (stat((dir), &st_) != 0 || !S_ISDIR(st_.st_mode)) {                      \
			fprintf(stderr, "skipped: %s is missing (../shared is not beside the " \
					"source tree)\n", (dir));                                \
			skip();                                                            \
		}                                                                          \
	} while (0)

struct cmd_result {
	int status;   /* exit status; -1 when the command did not exit normally */
	char *out;    /* stdout, NUL-terminated; owned */
	char *err;    /* stderr, NUL-terminated; owned */
};

/* Reads all of f into a malloc'd, NUL-terminated string. */
static inline char *test_slurp(FILE *f)
{
	size_t len = 0, cap = 4096;
	char *buf = malloc(cap);
	assert_non_null(buf);
	size_t n;
	while ((n = fread(buf + len, 1, cap - len - 1, f)) > 0) {
		len += n;
		if (cap - len < 2) {
			cap *= 2;
			buf = realloc(buf, cap);
			assert_non_null(buf);
		}
	}
	buf[len] = '\0';
	return buf;
}

/* Runs the command (printf-formatted) through /bin/sh. stdout comes through
 * popen, stderr through a temporary file. Fails the test when the command
 * cannot be started at all. */
static inline void run_cmd(struct cmd_result *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static inline void run_cmd(struct cmd_result *r, const char *fmt, ...)
{
	char cmd[4096], errpath[] = "/tmp/servesim-test-XXXXXX";
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(cmd, sizeof cmd, fmt, ap);
	va_end(ap);
	assert_true(n > 0 && (size_t)n < sizeof cmd - sizeof errpath - 8);
	int fd = mkstemp(errpath);
	assert_true(fd >= 0);
	close(fd);
	snprintf(cmd + n, sizeof cmd - (size_t)n, " 2>%s", errpath);

	FILE *p = popen(cmd, "r");
	assert_non_null(p);
	r->out = test_slurp(p);
	int ws = pclose(p);
	r->status = ws != -1 && WIFEXITED(ws) ? WEXITSTATUS(ws) : -1;
	FILE *ef = fopen(errpath, "r");
	assert_non_null(ef);
	r->err = test_slurp(ef);
	fclose(ef);
	unlink(errpath);
}

static inline void cmd_result_free(struct cmd_result *r)
{
	free(r->out);
	free(r->err);
	r->out = r->err = NULL;
}

static inline char *test_slurp_path(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		fail_msg("%s: cannot open", path);
	char *s = test_slurp(f);
	fclose(f);
	return s;
}

static inline void test_write_file(const char *path, const void *bytes, size_t n)
{
	FILE *f = fopen(path, "wb");
	if (!f)
		fail_msg("%s: cannot create", path);
	size_t put = fwrite(bytes, 1, n, f);
	if (fclose(f) != 0 || put != n)
		fail_msg("%s: cannot write %zu bytes", path, n);
}

static inline void test_write_text(const char *path, const char *text)
{
	test_write_file(path, text, strlen(text));
}

#ifdef SERVESIM_BIN
static inline char *test_servesim(int want, const char *args)
{
	struct cmd_result r;
	run_cmd(&r, "'%s' %s", SERVESIM_BIN, args);
	if (r.status != want)
		fail_msg("servesim %s: exit %d, expected %d\nstderr: %s", args, r.status, want, r.err);
	free(r.err);
	return r.out;
}
#endif

static inline int test_tmpdir_make(char *dir, size_t cap, const char *stem)
{
	int n = snprintf(dir, cap, "/tmp/servesim-%s-XXXXXX", stem);
	return n > 0 && (size_t)n < cap && mkdtemp(dir) ? 0 : -1;
}

static inline int test_tmpdir_remove(const char *dir)
{
	char cmd[PATH_MAX + 16];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

static inline void test_tmpdir(char *dir, size_t cap, const char *stem)
{
	if (test_tmpdir_make(dir, cap, stem))
		fail_msg("cannot make a folder /tmp/servesim-%s-XXXXXX", stem);
}

static inline void test_rmdir(const char *dir)
{
	if (test_tmpdir_remove(dir))
		fail_msg("cannot remove %s", dir);
}

static inline bool test_path_exists(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0;
}

#define TEST_TMPDIR_GROUP(stem)                                          \
	static char tmpdir[64];                                          \
	static int tmpdir_setup(void **state)                            \
	{                                                                \
		(void)state;                                             \
		return test_tmpdir_make(tmpdir, sizeof tmpdir, (stem));  \
	}                                                                \
	static int tmpdir_teardown(void **state)                         \
	{                                                                \
		(void)state;                                             \
		return test_tmpdir_remove(tmpdir);                       \
	}

#endif
