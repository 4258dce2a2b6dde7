/*
 * The planning verbs as users run them: --jobs 2 prints the bytes --jobs 1
 * prints; the shards of a run merged print the bytes the whole run prints;
 * --plot writes PNG files gnuplot drew (skipped without gnuplot) and, with
 * no gnuplot on PATH, still the data files and how to install it; and each
 * bad input exits 2 naming the flag and what was expected.
 */
#include "testutil.h"

#include <stdbool.h>
#include <sys/stat.h>

/* Small runs: the whole group stays within seconds on 2 cores. */
#define SWEEP "sweep --set workload.num_prompts=60 --vary request_rate=2:14:4 --vary max_num_seqs=8,64 " \
	      "--replications 2"
#define PLAN "plan --set workload.num_prompts=60 --slo ttft_p99_ms=400,itl_p99_ms=60 --tp 1,2 " \
	     "--hardware h100-sxm,l40s --replications 2 --duration 5 --target-rate 30 --fixed"
#define COMPARE "compare --set workload.num_prompts=60 --hardware a100-80gb-sxm,h100-sxm,l40s " \
		"--slo ttft_p99_ms=500,itl_p99_ms=80 --replications 2 --duration 5 --fixed"

TEST_TMPDIR_GROUP("plan")

static void same_bytes(const char *what, const char *a, const char *b)
{
	if (strcmp(a, b)) {
		size_t i = 0;
		while (a[i] && a[i] == b[i])
			i++;
		fail_msg("%s: outputs differ at byte %zu:\n…%.80s\nvs\n…%.80s", what, i, a + i, b + i);
	}
}

static void jobs_do_not_change_the_output(void **state)
{
	(void)state;
	const char *verbs[] = { SWEEP " --format json", PLAN " --format text", COMPARE " --format csv" };
	for (size_t v = 0; v < 3; v++) {
		char args[1024];
		snprintf(args, sizeof args, "%s --jobs 1", verbs[v]);
		char *one = test_servesim(0, args);
		snprintf(args, sizeof args, "%s --jobs 2", verbs[v]);
		char *two = test_servesim(0, args);
		assert_true(strlen(one) > 200);
		same_bytes(verbs[v], one, two);
		free(one);
		free(two);
	}
}

/* Shards written to files, merged in a shuffled order, in each format. */
static void shards_merge_into_the_whole(void **state)
{
	(void)state;
	const struct {
		const char *args;
		int n;
	} runs[] = { { SWEEP, 3 }, { PLAN, 2 }, { COMPARE, 2 } };
	const char *formats[] = { "json", "text", "csv" };
	for (size_t v = 0; v < 3; v++) {
		char args[2048], files[1024] = "";
		for (int k = runs[v].n; k >= 1; k--) {
			snprintf(args, sizeof args, "%s --shard %d/%d --format json > '%s/shard%d.json'",
				 runs[v].args, k, runs[v].n, tmpdir, k);
			free(test_servesim(0, args));
			size_t len = strlen(files);
			snprintf(files + len, sizeof files - len, " '%s/shard%d.json'", tmpdir, k);
		}
		for (size_t f = 0; f < 3; f++) {
			snprintf(args, sizeof args, "%s --format %s", runs[v].args, formats[f]);
			char *whole = test_servesim(0, args);
			snprintf(args, sizeof args, "merge%s --format %s", files, formats[f]);
			char *merged = test_servesim(0, args);
			same_bytes(args, whole, merged);
			free(whole);
			free(merged);
		}
	}
	/* A missing shard, or one of another run, is refused. */
	char args[1024];
	snprintf(args, sizeof args, "merge '%s/shard1.json'", tmpdir);
	free(test_servesim(2, args));
}

static bool have_gnuplot(void)
{
	return system("command -v gnuplot >/dev/null 2>&1") == 0;
}

/* A PNG starts with its 8-byte signature and is more than a header. */
static void assert_png(const char *dir, const char *name)
{
	char path[512];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	FILE *f = fopen(path, "rb");
	if (!f)
		fail_msg("%s: missing", path);
	unsigned char sig[8] = { 0 };
	size_t n = fread(sig, 1, 8, f);
	fseek(f, 0, SEEK_END);
	long size = ftell(f);
	fclose(f);
	static const unsigned char png[8] = { 0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n' };
	assert_int_equal(n, 8);
	assert_memory_equal(sig, png, 8);
	if (size < 5000)
		fail_msg("%s: only %ld bytes", path, size);
}

static void plots_are_pngs(void **state)
{
	(void)state;
	if (!have_gnuplot())
		skip();
	char args[2048], dir[256];
	snprintf(dir, sizeof dir, "%s/sweep", tmpdir);
	snprintf(args, sizeof args, "%s --plot '%s'", SWEEP, dir);
	free(test_servesim(0, args));
	assert_png(dir, "latency_vs_rate.png");
	assert_png(dir, "throughput_vs_rate.png");
	/* servesim plot redraws from the JSON alone. */
	snprintf(args, sizeof args, "plot '%s/result.json' --out '%s/again'", dir, tmpdir);
	free(test_servesim(0, args));
	snprintf(dir, sizeof dir, "%s/again", tmpdir);
	assert_png(dir, "latency_vs_rate.png");

	snprintf(dir, sizeof dir, "%s/plan", tmpdir);
	snprintf(args, sizeof args, "%s --plot '%s'", PLAN, dir);
	free(test_servesim(0, args));
	assert_png(dir, "plan_search.png");
	assert_png(dir, "goodput_vs_cost.png");

	snprintf(dir, sizeof dir, "%s/compare", tmpdir);
	snprintf(args, sizeof args, "%s --plot '%s'", COMPARE, dir);
	free(test_servesim(0, args));
	assert_png(dir, "compare.png");
	assert_png(dir, "goodput_vs_cost.png");

	snprintf(dir, sizeof dir, "%s/run", tmpdir);
	snprintf(args, sizeof args, "run --set workload.num_prompts=60 --plot '%s'", dir);
	free(test_servesim(0, args));
	assert_png(dir, "latency_cdf.png");
	assert_png(dir, "timeseries.png");
}

static void without_gnuplot_the_data_is_written(void **state)
{
	(void)state;
	struct cmd_result r;
	run_cmd(&r, "PATH=/nonexistent '%s' %s --plot '%s/nognuplot'", SERVESIM_BIN, SWEEP, tmpdir);
	assert_int_equal(r.status, 0);
	assert_contains(r.err, "gnuplot not found");
	assert_contains(r.err, "apt-get install gnuplot-nox");
	cmd_result_free(&r);
	char path[256];
	struct stat st;
	snprintf(path, sizeof path, "%s/nognuplot/sweep.dat", tmpdir);
	assert_int_equal(stat(path, &st), 0);
	assert_true(st.st_size > 100);
	snprintf(path, sizeof path, "%s/nognuplot/latency_vs_rate.png", tmpdir);
	assert_int_not_equal(stat(path, &st), 0);
}

/* A --plot folder is whole or absent (wholedir_stage): a gnuplot that
 * fails after the data files were written leaves no folder (nor its
 * temporary sibling), and a picture folder that exists keeps what it had;
 * the folder's parents are created as run --out creates them. */
static void plot_folder_whole_or_absent(void **state)
{
	(void)state;
	char bin[256], dir[256], cmd[2048];
	snprintf(bin, sizeof bin, "%s/fakebin", tmpdir);
	snprintf(cmd, sizeof cmd,
		 "mkdir -p '%s' && printf '#!/bin/sh\\necho \"line 1: no terminal\" >&2\\nexit 1\\n' > '%s/gnuplot' && chmod +x '%s/gnuplot'",
		 bin, bin, bin);
	assert_int_equal(system(cmd), 0);
	struct cmd_result r;
	snprintf(dir, sizeof dir, "%s/failing/a/b", tmpdir);
	run_cmd(&r, "PATH='%s':\"$PATH\" '%s' run --set workload.num_prompts=20 --plot '%s'", bin, SERVESIM_BIN, dir);
	assert_int_equal(r.status, 1);
	assert_contains(r.err, "gnuplot failed");
	assert_contains(r.err, "/failing/a/b/latency_cdf.png: ");   /* the folder asked for, not the stage */
	cmd_result_free(&r);
	struct stat st;
	assert_int_not_equal(stat(dir, &st), 0);
	snprintf(cmd, sizeof cmd, "%s/failing/a", tmpdir);
	run_cmd(&r, "ls -A '%s'", cmd);
	assert_string_equal(r.out, "");   /* the parents made, no stage left */
	cmd_result_free(&r);
	/* Into a folder that exists: its files stay, nothing is added. */
	snprintf(dir, sizeof dir, "%s/failing/kept", tmpdir);
	snprintf(cmd, sizeof cmd, "mkdir -p '%s' && echo mine > '%s/notes.txt'", dir, dir);
	assert_int_equal(system(cmd), 0);
	run_cmd(&r, "PATH='%s':\"$PATH\" '%s' run --set workload.num_prompts=20 --plot '%s'", bin, SERVESIM_BIN, dir);
	assert_int_equal(r.status, 1);
	cmd_result_free(&r);
	run_cmd(&r, "ls -A '%s'", dir);
	assert_string_equal(r.out, "notes.txt\n");
	cmd_result_free(&r);
	/* Without gnuplot the data files arrive whole, parents made. */
	snprintf(dir, sizeof dir, "%s/nognuplot-run/x/y/z", tmpdir);
	run_cmd(&r, "PATH=/nonexistent '%s' run --set workload.num_prompts=20 --plot '%s'", SERVESIM_BIN, dir);
	assert_int_equal(r.status, 0);
	cmd_result_free(&r);
	run_cmd(&r, "ls -A '%s'", dir);
	assert_string_equal(r.out, "itl_cdf.dat\nitl_histogram.csv\nrequests.csv\ntimeseries.csv\ntpot_cdf.dat\nttft_cdf.dat\n");
	cmd_result_free(&r);
}

static void bad_input(void **state)
{
	(void)state;
	static const struct {
		const char *args, *want;
	} bad[] = {
		{ "sweep --vary bogus=1,2", "--vary bogus=1,2: unknown key 'bogus'" },
		{ "sweep --vary workload.bogus=1,2", "--vary workload.bogus=1,2: [workload] bogus: unknown key" },
		{ "sweep --vary request_rate=10:1:1", "--vary request_rate=10:1:1: reversed range" },
		{ "sweep --vary request_rate=", "--vary request_rate=: expected a value or START:STOP:STEP" },
		{ "sweep --vary request_rate=1:5:0", "expected a STEP > 0" },
		{ "sweep --vary request_rate=0,1", "expected requests per second > 0" },
		{ "sweep --vary hardware=h100-sxm,nope", "--vary hardware=h100-sxm,nope: unknown hardware 'nope'" },
		{ "sweep", "--vary: expected at least one" },
		{ "sweep --vary request_rate=1 --shard 0/2", "--shard: expected K/N" },
		{ "sweep --vary request_rate=1 --jobs 0", "--jobs: expected a thread count" },
		{ "sweep --vary request_rate=1 --replications 0", "--replications: expected" },
		{ "sweep --vary request_rate=1 --format prom", "--format: expected" },
		{ "plan --slo ttft_p99_us=200", "--slo: unknown unit 'us'" },
		{ "plan --slo ttfb_p99_ms=200", "--slo: unknown metric 'ttfb_p99_ms'" },
		{ "plan --slo ttft_p99.9_ms=200", "--slo: unknown" },
		{ "plan --slo ttft_p99_ms=0", "--slo: ttft_p99_ms: expected a limit > 0" },
		{ "plan", "--slo: missing" },
		{ "plan --slo itl_p99_ms=50 --hardware m4-max", "--hardware m4-max: hardware 'm4-max' has no [price]" },
		{ "plan --slo itl_p99_ms=50 --hardware nope", "--hardware nope: unknown hardware" },
		{ "plan --slo itl_p99_ms=50 --tp 0", "--tp: expected tensor parallel sizes" },
		{ "plan --slo itl_p99_ms=50 --by tokens", "--by: expected rate or concurrency" },
		{ "compare --hardware h100-sxm,m3-max", "--hardware m3-max: hardware 'm3-max' has no [price]" },
		{ "compare", "--hardware: expected device ids" },
		{ "compare --hardware h100-sxm,,l40s", "--hardware: expected comma-separated device ids, got 'h100-sxm,,l40s'" },
		{ "plan --slo itl_p99_ms=50 --tp 1,", "--tp: expected a comma-separated list" },
		{ "merge", "expected the shards' JSON files" },
		{ "merge /nonexistent.json", "/nonexistent.json" },
		{ "plot /nonexistent", "/nonexistent: cannot open" },
	};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		struct cmd_result r;
		run_cmd(&r, "'%s' %s", SERVESIM_BIN, bad[i].args);
		if (r.status != 2)
			fail_msg("servesim %s: exit %d, expected 2\nstderr: %s", bad[i].args, r.status, r.err);
		const char *verb = bad[i].args;
		char prefix[64];
		snprintf(prefix, sizeof prefix, "servesim %.*s: ", (int)strcspn(verb, " "), verb);
		assert_contains(r.err, prefix);
		assert_contains(r.err, bad[i].want);
		assert_string_equal(r.out, "");
		cmd_result_free(&r);
	}
	/* Without a price, --no-cost compares anyway. */
	free(test_servesim(0, "compare --set workload.num_prompts=20 --hardware m3-max,h100-sxm --no-cost "
			 "--replications 1"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(jobs_do_not_change_the_output),
		cmocka_unit_test(shards_merge_into_the_whole),
		cmocka_unit_test(plots_are_pngs),
		cmocka_unit_test(plot_folder_whole_or_absent),
		cmocka_unit_test(without_gnuplot_the_data_is_written),
		cmocka_unit_test(bad_input),
	};
	return cmocka_run_group_tests(tests, tmpdir_setup, tmpdir_teardown);
}
