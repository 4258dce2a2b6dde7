/*
 * reqcsv: requests.csv streamed while a lean run goes (rows held until
 * every earlier id's is written) gives the same bytes as the full run's
 * requests.csv, and so do its timeseries.csv and itl_histogram.csv, for
 * workloads whose requests finish out of id order: preemption under FCFS
 * and priority, failures, multi-turn and closed-loop users, a cluster, P/D
 * disaggregation, Ollama. A folder that cannot be made leaves nothing.
 * The --save-detailed arrays streamed the same way (reqdetail) give the
 * same JSON, byte for byte, as json_dumpf of the full run's object, in
 * both layouts the CLI writes (indented on stdout, one line for
 * --save-result).
 */
#include "simutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

/* Loads scenario id with the NULL-terminated overrides and runs it with o. */
static void run_case(const char *const *c, struct run_result *res, const struct run_opts *o)
{
	struct inidoc ov = { 0 };
	struct err e;
	for (size_t i = 1; c[i]; i++)
		if (inidoc_add_override(&ov, c[i], &e))
			fail_msg("%s", e.msg);
	char path[4096];
	if (catalog_resolve(CATALOG_SCENARIOS, c[0], path, sizeof path, &e))
		fail_msg("%s", e.msg);
	struct scenario sc;
	if (scenario_load(&sc, path, &ov, &e) || run_simulate_opts(&sc, res, o, &e))
		fail_msg("%s", e.msg);
	inidoc_free(&ov);
}

static char *slurp(const char *dir, const char *name)
{
	char path[4200];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	FILE *f = fopen(path, "rb");
	if (!f)
		fail_msg("%s: cannot open", path);
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *s = calloc((size_t)n + 1, 1);
	assert_int_equal(fread(s, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	return s;
}

/* Some request finished before one made earlier: the rows must be held. */
static bool out_of_order(const struct run_result *r)
{
	int64_t latest = INT64_MIN;
	for (size_t i = 0; i < r->reqs.len; i++) {
		if (r->reqs.v[i].finish_ns < latest)
			return true;
		if (r->reqs.v[i].finish_ns > latest)
			latest = r->reqs.v[i].finish_ns;
	}
	return false;
}

static const char *const cases[][5] = {
		{ "c17-kv-pressure", "engine.num_gpu_blocks_override=300", "workload.num_prompts=150", NULL },
		{ "c17-kv-pressure", "engine.num_gpu_blocks_override=300", "engine.scheduling_policy=priority", NULL },
		{ "c13-bench-serve", "workload.input_distribution=normal", "workload.input_stddev=300",
		  "engine.max_model_len=1400", NULL },   /* about a fifth fail */
		{ "c13-bench-serve", "workload.turns=3", "workload.max_concurrency=8", NULL },
		{ "c13-bench-serve", "workload.users=10", "workload.num_prompts=120", NULL },
		{ "c13-bench-serve", "cluster.replicas=3", "workload.num_prompts=150", NULL },
		{ "c25-disagg-small", "workload.num_prompts=60", NULL },
		{ "c28-ollama-vs-vllm", "workload.users=0", "workload.request_rate=1", "engine.num_parallel=4" },
};

static void streamed_equals_full(void **state)
{
	(void)state;
	static const char *const files[] = { "requests.csv", "timeseries.csv", "itl_histogram.csv" };
	char tmp[] = "/tmp/servesim-reqcsv-XXXXXX";
	assert_non_null(mkdtemp(tmp));
	int unordered = 0;
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		const char *const c[6] = { cases[i][0], cases[i][1], cases[i][2], cases[i][3], cases[i][4], NULL };
		struct run_result full, lean;
		struct err e;
		run_case(c, &full, NULL);
		unordered += out_of_order(&full);
		struct reqcsv *w = reqcsv_create(&e);
		assert_non_null(w);
		struct run_opts o = { .lean = true, .timeseries = true, .on_record = reqcsv_row, .record_ctx = w };
		run_case(c, &lean, &o);
		assert_int_equal(lean.reqs.len, 0);   /* lean: no record kept */
		lean.rows = w;
		char a[300], b[300];
		snprintf(a, sizeof a, "%s/full%zu", tmp, i);
		snprintf(b, sizeof b, "%s/lean%zu", tmp, i);
		if (report_csv(a, &full, &e) || report_csv(b, &lean, &e))
			fail_msg("%s", e.msg);
		for (size_t k = 0; k < sizeof files / sizeof *files; k++) {
			char *x = slurp(a, files[k]), *y = slurp(b, files[k]);
			if (strcmp(x, y))
				fail_msg("%s %s: the streamed %s differs", c[0], c[1], files[k]);
			if (k == 0)   /* a header and a row per request */
				assert_int_equal(strlen(x) > 0, 1);
			free(x);
			free(y);
		}
		run_result_free(&full);
		run_result_free(&lean);
		reqcsv_destroy(w);
	}
	assert_true(unordered >= 3);   /* the holding was exercised */
	char cmd[400];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
	assert_int_equal(system(cmd), 0);
}

/* json written with flags: of the full run (json_dumps) or spliced
 * (report_json_dumpf, res->detail set). Caller frees. */
static char *json_text(struct run_result *res, size_t flags)
{
	double p99 = 99;
	struct report_opts ro = { &p99, 1, true, 0 };
	json_t *j = report_json(res, &ro);
	char *text = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&text, &n);
	struct err e;
	if (report_json_dumpf(j, f, flags, res, &e))
		fail_msg("%s", e.msg);
	fclose(f);
	json_decref(j);
	return text;
}

static void detailed_streamed_equals_full(void **state)
{
	(void)state;
	static const size_t layouts[] = { JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(12),
					  JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(12) };
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		const char *const c[6] = { cases[i][0], cases[i][1], cases[i][2], cases[i][3], cases[i][4], NULL };
		struct run_result full, lean;
		struct err e;
		run_case(c, &full, NULL);
		struct reqdetail *d = reqdetail_create(&e);
		assert_non_null(d);
		struct run_opts o = { .lean = true, .on_record = reqdetail_row, .record_ctx = d };
		run_case(c, &lean, &o);
		assert_int_equal(lean.reqs.len, 0);
		lean.detail = d;
		for (size_t k = 0; k < sizeof layouts / sizeof *layouts; k++) {
			/* Twice: --save-result and stdout read the same rows. */
			for (int twice = 0; twice < 2; twice++) {
				char *x = json_text(&full, layouts[k]), *y = json_text(&lean, layouts[k]);
				if (strcmp(x, y))
					fail_msg("%s %s: the streamed detailed JSON differs (layout %zu)", c[0], c[1], k);
				assert_non_null(strstr(x, "\"ollama_metrics\""));
				free(x);
				free(y);
			}
		}
		run_result_free(&full);
		run_result_free(&lean);
		reqdetail_destroy(d);
	}
}

/* A folder that cannot be made: an error, and nothing written. */
static void unwritable_leaves_nothing(void **state)
{
	(void)state;
	const char *const c[] = { "c13-bench-serve", "workload.num_prompts=20", NULL };
	struct run_result lean;
	struct err e;
	struct reqcsv *w = reqcsv_create(&e);
	struct run_opts o = { .lean = true, .on_record = reqcsv_row, .record_ctx = w };
	run_case(c, &lean, &o);
	lean.rows = w;
	char tmp[] = "/tmp/servesim-reqcsv-XXXXXX";
	assert_non_null(mkdtemp(tmp));
	char file[300], dir[400];
	snprintf(file, sizeof file, "%s/a-file", tmp);
	FILE *f = fopen(file, "w");
	assert_non_null(f);
	fclose(f);
	snprintf(dir, sizeof dir, "%s/out", file);   /* under a file: cannot be made */
	assert_int_equal(report_csv(dir, &lean, &e), -1);
	struct stat st;
	assert_int_not_equal(stat(dir, &st), 0);
	run_result_free(&lean);
	reqcsv_destroy(w);
	char cmd[400];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
	assert_int_equal(system(cmd), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(streamed_equals_full),
		cmocka_unit_test(detailed_streamed_equals_full),
		cmocka_unit_test(unwritable_leaves_nothing),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
