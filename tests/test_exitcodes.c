/*
 * Outputs and exit codes (issue 15, docs/robustness.md "Exit codes"):
 * misuse is one line and exit 2; an output that cannot be written (a full
 * stdout, a folder through a file, a full disk midway) is one line and
 * exit 1, with outputs whole or absent and nothing printed before them;
 * and the table of both over every verb. Through the command.
 */
#include <stdbool.h>
#include <sys/stat.h>

#include "robustutil.h"

/* Misuse of the command line is one line too: the hint to --help on it,
 * an unknown verb with the verbs named (the usage went to stderr). */
static void misuse_is_one_line(void **state)
{
	(void)state;
	char cmd[4096];
	cmdf(cmd, sizeof cmd, "%s", "run a.ini b.ini");
	one_line_error(cmd, 2, "servesim run: expected at most one scenario, got 'b.ini' too (servesim run --help)",
		       NULL);
	cmdf(cmd, sizeof cmd, "%s", "calibrate bogus");
	one_line_error(cmd, 2, "(servesim calibrate --help)", NULL);
	cmdf(cmd, sizeof cmd, "%s", "list models");   /* read as a filter, ignored */
	one_line_error(cmd, 2, "servesim list: expected no argument, got 'models'", NULL);
	/* An option getopt refuses: its own message is off, the verb's one
	 * line names it (it was two lines, getopt's and "unknown option"). */
	static const struct {
		const char *args, *needle;
	} refused[] = {
		{ "run --svg=x", "servesim run: option '--svg' takes no value, got '--svg=x'" },
		{ "run --out", "servesim run: option '--out' expects a value" },
		{ "report --format x", "servesim report: unknown option '--format'" },
		{ "explain --ideal=1", "servesim explain: option '--ideal' takes no value" },
		{ "plan --slo", "servesim plan: option '--slo' expects a value" },
		{ "merge --shard=1/2 a.json", "servesim merge: unknown option '--shard'" },
		{ "calibrate runs -x", "servesim calibrate runs: unknown option '-x'" },
	};
	for (size_t i = 0; i < sizeof refused / sizeof *refused; i++) {
		cmdf(cmd, sizeof cmd, "%s", refused[i].args);
		one_line_error(cmd, 2, refused[i].needle, NULL);
	}
	/* No verb: one usage line naming the verbs (it was the whole --help,
	 * nine lines, on stderr); a verb of verbs without its own the same. */
	cmdf(cmd, sizeof cmd, "%s", "");
	one_line_error(cmd, 2, "usage: servesim VERB [options]; expected a VERB: calibrate, ceiling, explain",
		       "vllm-flags (servesim --help)", NULL);
	cmdf(cmd, sizeof cmd, "%s", "calibrate");
	one_line_error(cmd, 2, "servesim calibrate: expected fit, gpu or runs (servesim calibrate --help)", NULL);
	cmdf(cmd, sizeof cmd, "%s", "bogusverb");
	one_line_error(cmd, 2, "servesim: unknown verb 'bogusverb'; expected calibrate, ceiling, explain",
		       "vllm-flags (servesim --help)", NULL);
}

/* A full stdout is one line and exit 1, for every verb that prints. */
static void full_stdout(void **state)
{
	(void)state;
	static const char *const verbs[] = {
		"run",
		"run --format json",
		"run --format prom",
		"ceiling",
		"model llama-3.1-8b",
		"list",
		"explain c13-bench-serve",
		"run --help",
	};
	for (size_t i = 0; i < sizeof verbs / sizeof *verbs; i++) {
		char cmd[4096];
		cmdf(cmd, sizeof cmd, "%s > /dev/full", verbs[i]);
		one_line_error(cmd, 1, "cannot write the output to stdout", NULL);
	}
}

/* run --out: parents are created; a write failing midway (the file size
 * limit standing in for a full disk) leaves no folder, no temporary. */
static void out_folder_whole_or_absent(void **state)
{
	(void)state;
	char dir[512], cmd[4096], check[1024];
	snprintf(dir, sizeof dir, "%s/a/b/c", tmpdir);
	cmdf(cmd, sizeof cmd, "run --out '%s' > /dev/null", dir);
	struct cmd_result r;
	run_cmd(&r, "%s", cmd);
	assert_int_equal(r.status, 0);
	cmd_result_free(&r);
	static const char *const files[] = { "requests.csv", "timeseries.csv",
					     "itl_histogram.csv" };
	for (size_t i = 0; i < 3; i++) {
		snprintf(check, sizeof check, "%s/%s", dir, files[i]);
		assert_int_equal(access(check, R_OK), 0);
	}
	/* 16 KiB: requests.csv (~32 KB for the default run) cannot be written,
	 * nor openmetrics.txt's scrapes saved as the lean run goes (omsnap.h),
	 * which fail first. */
	snprintf(dir, sizeof dir, "%s/full/out", tmpdir);
	char tail[2048];
	snprintf(tail, sizeof tail, "run --out '%s' > /dev/null", dir);
	snprintf(cmd, sizeof cmd, "trap '' XFSZ; ulimit -f 16; '%s' %s", SERVESIM_BIN, tail);
	one_line_error(cmd, 1, "cannot write", NULL);
	assert_int_not_equal(access(dir, F_OK), 0);
	snprintf(check, sizeof check, "%s/full", tmpdir);
	run_cmd(&r, "ls -A '%s'", check);
	assert_string_equal(r.out, ""); /* no temporary sibling left */
	cmd_result_free(&r);
	/* Into an existing folder: its old files stay as they were. */
	snprintf(dir, sizeof dir, "%s/a/b/c", tmpdir);
	snprintf(check, sizeof check, "%s/requests.csv", dir);
	struct stat before, after;
	assert_int_equal(stat(check, &before), 0);
	snprintf(tail, sizeof tail, "run --out '%s' --set workload.num_prompts=2000 > /dev/null",
		 dir);
	snprintf(cmd, sizeof cmd, "trap '' XFSZ; ulimit -f 64; '%s' %s", SERVESIM_BIN, tail);
	one_line_error(cmd, 1, "cannot write", NULL);
	assert_int_equal(stat(check, &after), 0);
	assert_int_equal(after.st_size, before.st_size);
	run_cmd(&r, "ls -A '%s'", dir);
	assert_string_equal(r.out, "itl_histogram.csv\nopenmetrics.txt\nrequests.csv\ntimeseries.csv\n");
	cmd_result_free(&r);
}

/* The command exits with status 1, its last line on stderr (after the
 * notes calibrate prints as it reads) holding needle, and wrote nothing on
 * stdout: an output that cannot be written fails the verb before its table
 * is printed. */
static void absent_on_failure(const char *cmd, const char *needle)
{
	struct cmd_result r;
	run_cmd(&r, "%s", cmd);
	if (r.status != 1)
		fail_msg("%s: exit %d, expected 1; stderr: %s", cmd, r.status, r.err);
	size_t len = strlen(r.err);
	assert_true(len > 1 && r.err[len - 1] == '\n');
	r.err[len - 1] = '\0';
	const char *last = strrchr(r.err, '\n');
	assert_contains(last ? last + 1 : r.err, needle);
	if (r.out[0])
		fail_msg("%s: printed on stdout before failing: %.200s", cmd, r.out);
	cmd_result_free(&r);
}

/* sweep --plot, run --plot and calibrate runs --out into a folder that
 * cannot be made (a path through a regular file): exit 1, no table, no
 * file (calibrate fit: test_probecli). */
static void outputs_before_the_table(void **state)
{
	(void)state;
	char file[512], cmd[4096], tail[2048];
	write_file(file, sizeof file, "plain", "x", 1);
	snprintf(tail, sizeof tail,
		 "sweep --vary max_concurrency=1,2 --set workload.num_prompts=4 --no-progress "
		 "--plot '%s/plots'",
		 file);
	cmdf(cmd, sizeof cmd, "%s", tail);
	absent_on_failure(cmd, file);
	snprintf(tail, sizeof tail, "run --set workload.num_prompts=4 --plot '%s/plots'", file);
	cmdf(cmd, sizeof cmd, "%s", tail);
	absent_on_failure(cmd, file);
	snprintf(tail, sizeof tail,
		 "calibrate runs '%s/calib/ollama_generate.jsonl' '%s/calib/llama_bench.jsonl' "
		 "--hardware rtx-4090 "
		 "--model llama-3.1-8b --weights q4_k_m --max-evals 150 --tol 0.05 --no-progress "
		 "--out '%s/p.ini'",
		 TEST_DATA_DIR, TEST_DATA_DIR, file);
	cmdf(cmd, sizeof cmd, "%s", tail);
	absent_on_failure(cmd, file);
}

/* Each whole word name of s (cap bytes) replaced by value. */
static void replace_word(char *s, size_t cap, const char *name, const char *value)
{
	char out[4096] = "";
	size_t n = strlen(name);
	for (const char *p = s; *p;) {
		bool at_word = (p == s || p[-1] == ' ') && !strncmp(p, name, n) && (!p[n] || p[n] == ' ' || p[n] == '/');
		if (at_word) {
			strncat(out, value, sizeof out - strlen(out) - 1);
			p += n;
		} else {
			strncat(out, (char[]){ *p, '\0' }, sizeof out - strlen(out) - 1);
			p++;
		}
	}
	snprintf(s, cap, "%s", out);
}

/* Exit codes over the battery (docs/robustness.md "Exit codes"): 1 when an
 * output cannot be written (a path through a regular file, a full device,
 * a full stdout), 2 for bad input, every verb; one line on stderr last,
 * nothing on stdout. OUT is an output path that cannot be written, FREE one
 * that can, SWEEP a sweep's result, RUN a run's --out folder, BAD a
 * document that is not servesim's. */
static void exit_codes_io_and_input(void **state)
{
	(void)state;
	char plain[512], out[600], sweep[512], rundir[512], bad[512];
	write_file(plain, sizeof plain, "plain-exit", "x", 1);
	snprintf(out, sizeof out, "%s/x", plain);   /* through a regular file */
	char free_out[512];                           /* one that can be written */
	snprintf(free_out, sizeof free_out, "%s/free-exit.ini", tmpdir);
	write_file(bad, sizeof bad, "bad-exit.json", "{\"kind\":\"plan\",\"candidates\":[]}", 30);
	snprintf(sweep, sizeof sweep, "%s/sweep-exit.json", tmpdir);
	snprintf(rundir, sizeof rundir, "%s/run-exit", tmpdir);
	struct cmd_result r;
	run_cmd(&r, "'%s' sweep --vary max_concurrency=1,2 --set workload.num_prompts=8 --no-progress --format json > '%s' "
		    "&& '%s' run --set workload.num_prompts=8 --out '%s' > /dev/null",
		SERVESIM_BIN, sweep, SERVESIM_BIN, rundir);
	assert_int_equal(r.status, 0);
	cmd_result_free(&r);
	static const struct {
		const char *args;
		int status;
	} table[] = {
		{ "run --set workload.num_prompts=4 --out OUT", 1 },
		{ "run --set workload.num_prompts=4 --plot OUT", 1 },
		{ "run --set workload.num_prompts=4 --save-result --result-filename OUT", 1 },
		{ "run --set workload.num_prompts=4 --save-result --result-dir OUT", 1 },
		{ "run --set workload.num_prompts=4 --save-detailed --save-result --result-filename /dev/full", 1 },
		{ "sweep --vary max_concurrency=1,2 --set workload.num_prompts=8 --no-progress --plot OUT", 1 },
		{ "plot SWEEP --out OUT", 1 },
		{ "plot RUN --out OUT", 1 },
		{ "plot RUN --out /dev/full", 1 },
		{ "report SWEEP --out OUT", 1 },
		{ "report --set workload.num_prompts=4 --out /dev/full", 1 },
		{ "merge SWEEP > /dev/full", 1 },
		{ "list > /dev/full", 1 },
		{ "explain --batch decode:4 > /dev/full", 1 },
		{ "keys > /dev/full", 1 },
		{ "run --set engine.block_size=7", 2 },
		{ "run --bogus", 2 },
		{ "run --set workload.input_file=OUT", 2 },
		{ "plot BAD --out OUT", 2 },
		{ "plot RUN/requests.csv", 2 },
		{ "merge BAD", 2 },
		{ "report BAD --out OUT", 2 },
		{ "sweep --vary bogus=1,2", 2 },
		{ "plan --slo itl_p99_ms=0", 2 },
		{ "compare --hardware nope", 2 },
		{ "explain --batch nope", 2 },
		{ "ceiling --model nope", 2 },
		{ "model nope", 2 },
		{ "keys --format x", 2 },
		{ "list x", 2 },
		{ "validate BAD", 2 },
		{ "advise --result BAD", 2 },
		{ "calibrate fit --list --out OUT", 2 },
		{ "calibrate runs BAD --hardware h100-sxm --out FREE", 2 },
		/* calibrate checks its output's folder before a fit of minutes. */
		{ "calibrate runs BAD --hardware h100-sxm --out OUT", 1 },
		{ "calibrate fit BAD --out OUT", 1 },
		{ "calibrate gpu --model nope", 2 },
		{ "vllm-flags --bogus", 2 },
	};
	for (size_t i = 0; i < sizeof table / sizeof *table; i++) {
		char args[4096];
		snprintf(args, sizeof args, "%s", table[i].args);
		const char *const names[] = { "OUT", "SWEEP", "RUN", "BAD", "FREE" };
		const char *const values[] = { out, sweep, rundir, bad, free_out };
		for (size_t k = 0; k < 5; k++)
			replace_word(args, sizeof args, names[k], values[k]);
		run_cmd(&r, "'%s' %s", SERVESIM_BIN, args);
		if (r.status != table[i].status)
			fail_msg("servesim %s: exit %d, expected %d; stderr: %s", args, r.status, table[i].status, r.err);
		if (r.out[0] && !strstr(args, "/dev/full"))
			fail_msg("servesim %s: printed on stdout: %.200s", args, r.out);
		size_t len = strlen(r.err);
		if (len < 2 || r.err[len - 1] != '\n' || !strstr(r.err, "servesim"))
			fail_msg("servesim %s: expected a message on stderr, got '%s'", args, r.err);
		cmd_result_free(&r);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(misuse_is_one_line),
		cmocka_unit_test(full_stdout),
		cmocka_unit_test(out_folder_whole_or_absent),
		cmocka_unit_test(outputs_before_the_table),
		cmocka_unit_test(exit_codes_io_and_input),
	};
	return cmocka_run_group_tests(tests, tmpdir_setup, tmpdir_teardown);
}
