/*
 * simassert: a failed invariant names the file, line, condition, the
 * simulated time and the request, then aborts (a bug, not bad input).
 * Each failure runs in a child process, its stderr read back.
 */
#include "testutil.h"

#include <signal.h>

#include "simassert.h"

/* Runs SIM_ASSERT(false, now_ns, req) in a child; its stderr in out. */
static void fail_in_child(int64_t now_ns, int64_t req, char *out, size_t cap)
{
	int fd[2];
	assert_int_equal(pipe(fd), 0);
	fflush(NULL);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		dup2(fd[1], 2);
		close(fd[0]);
		int broken = 1;
		SIM_ASSERT(broken == 0, now_ns, req);
		_exit(0);   /* not reached when the check works */
	}
	close(fd[1]);
	size_t n = 0;
	ssize_t got;
	while (n + 1 < cap && (got = read(fd[0], out + n, cap - 1 - n)) > 0)
		n += (size_t)got;
	out[n] = '\0';
	close(fd[0]);
	int status;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFSIGNALED(status));
	assert_int_equal(WTERMSIG(status), SIGABRT);
}

static void names_time_and_request(void **state)
{
	(void)state;
	char err[4096];
	fail_in_child(12345678901LL, 17, err, sizeof err);
	assert_contains(err, "servesim: bug: ");
	assert_contains(err, "test_simassert.c:");
	assert_contains(err, "broken == 0 failed at simulated time 12.345678901 s, request 17\n");
	/* Without a clock or a request the line says neither. */
	fail_in_child(SIM_NO_TIME, SIM_NO_REQ, err, sizeof err);
	assert_contains(err, "broken == 0 failed\n");
}

static void passing_checks_are_silent(void **state)
{
	(void)state;
	int64_t now = 5;
	SIM_ASSERT(now == 5, now, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(names_time_and_request),
		cmocka_unit_test(passing_checks_are_silent),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
