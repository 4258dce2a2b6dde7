/*
 * names: every user-visible list of choices equals the one table it comes
 * from (issue 20). A list is what a user reads: the error naming the valid
 * values, the INI choices the loader accepts, the keys a writer prints. Each
 * test takes the list a user would see and compares it, name by name and in
 * order, with the table: a name added to a table and not to its list (or
 * copied into a list by hand and left behind) fails here.
 */
#include "testutil.h"

#include <stdlib.h>
#include <string.h>

#include "benchres.h"
#include "engine.h"
#include "latmetric.h"
#include "precision.h"
#include "report.h"
#include "router.h"
#include "run.h"
#include "scenario.h"
#include "trace.h"

/* Loads the built-in default with one --set; returns scenario_load's rc. */
static int load_with(struct scenario *sc, const char *set, struct err *e)
{
	struct inidoc ov = { 0 };
	if (inidoc_add_override(&ov, set, e))
		fail_msg("%s", e->msg);
	int rc = scenario_load(sc, NULL, &ov, e);
	inidoc_free(&ov);
	return rc;
}

/* The list of an "expected one of A, B, C, got 'x'" error, into out. */
static void listed(const char *msg, char *out, size_t cap)
{
	const char *a = strstr(msg, "expected one of ");
	const char *b = a ? strstr(a, ", got '") : NULL;
	if (!a || !b)
		fail_msg("no list of choices in '%s'", msg);
	a += strlen("expected one of ");
	snprintf(out, cap, "%.*s", (int)(b - a), a);
}

/* names[0..n) joined as "a, b, c". */
static void joined(const char *const *names, size_t n, char *out, size_t cap)
{
	size_t used = 0;
	out[0] = '\0';
	for (size_t i = 0; i < n; i++)
		used += (size_t)snprintf(out + used, cap - used, "%s%s", i ? ", " : "", names[i]);
}

/* The error for a bad value of section.key lists want; every name in it
 * loads. */
static void error_lists(const char *key, const char *want)
{
	struct scenario *sc = malloc(sizeof *sc);
	struct err e;
	char set[256], got[1024];
	snprintf(set, sizeof set, "%s=no-such-name", key);
	assert_int_equal(load_with(sc, set, &e), -1);
	listed(e.msg, got, sizeof got);
	assert_string_equal(got, want);
	char buf[1024], *save = NULL;
	snprintf(buf, sizeof buf, "%s", want);
	for (char *tok = strtok_r(buf, ", ", &save); tok; tok = strtok_r(NULL, ", ", &save)) {
		snprintf(set, sizeof set, "%s=%s", key, tok);
		if (load_with(sc, set, &e))
			fail_msg("%s listed but refused: %s", set, e.msg);
	}
	free(sc);
}

/* [engine] kind: the classes of engine_classes, the first the default. */
static void engine_kinds(void **state)
{
	(void)state;
	const char *names[16];
	size_t n = 0;
	for (; engine_classes[n]; n++)
		names[n] = engine_classes[n]->name;
	assert_true(n >= 3);   /* vllm, ollama, llamacpp */
	char want[256];
	joined(names, n, want, sizeof want);
	error_lists("engine.kind", want);
	struct scenario *sc = malloc(sizeof *sc);
	struct err e;
	scenario_default(sc);
	assert_ptr_equal(sc->engine.cls, engine_classes[0]);
	for (size_t i = 0; i < n; i++) {
		char set[64];
		snprintf(set, sizeof set, "engine.kind=%s", names[i]);
		assert_int_equal(load_with(sc, set, &e), 0);
		assert_ptr_equal(sc->engine.cls, engine_classes[i]);
		assert_ptr_equal(engine_class_find(names[i]), engine_classes[i]);
	}
	free(sc);
}

/* [cluster] router: router_classes. */
static void routers(void **state)
{
	(void)state;
	const char *names[32];
	size_t n = 0;
	for (; router_classes[n].name; n++)
		names[n] = router_classes[n].name;
	char want[512];
	joined(names, n, want, sizeof want);
	error_lists("cluster.router", want);
}

/* [workload] trace_format: "auto" and the readers of trace.c; the reader's
 * own error lists the same. */
static void trace_formats(void **state)
{
	(void)state;
	char want[256];
	trace_format_list(want, sizeof want);
	assert_int_equal(strncmp(want, "auto, ", 6), 0);
	error_lists("workload.trace_format", want);
	struct trace t;
	struct err e;
	char got[256];
	assert_int_equal(trace_load(&t, TEST_DATA_DIR "/traces/csv_ok.csv", "parquet", &e), -1);
	listed(e.msg, got, sizeof got);
	assert_string_equal(got, want);
}

/* [run] weights: the precision table, fp32 included. */
static void precisions(void **state)
{
	(void)state;
	size_t n;
	const struct precision *p = precision_all(&n);
	const char **names = malloc(n * sizeof *names);
	for (size_t i = 0; i < n; i++)
		names[i] = p[i].name;
	char want[1024];
	joined(names, n, want, sizeof want);
	assert_non_null(strstr(want, "fp32"));
	error_lists("run.weights", want);
	free(names);
}

/* The latency metrics: the JSON a run writes has vllm bench serve's keys
 * for each (mean_ttft_ms …), and the calibration reader reads back from
 * that JSON the very numbers the writer put there. */
static void metric_keys(void **state)
{
	(void)state;
	char list[64];
	lat_metric_list(list, sizeof list);
	assert_string_equal(list, "ttft, tpot, itl, e2el");   /* vllm bench serve's order */
	struct scenario *sc = malloc(sizeof *sc);
	struct err e;
	assert_int_equal(load_with(sc, "workload.num_prompts=8", &e), 0);
	struct run_result *res = calloc(1, sizeof *res);
	if (run_simulate(sc, res, &e))
		fail_msg("%s", e.msg);
	struct report_opts o = { 0 };
	json_t *j = report_json(res, &o);
	struct benchres b;
	assert_int_equal(benchres_from_json(&b, j, "run", &e), 0);
	for (int m = 0; m < N_LAT_METRICS; m++) {
		assert_int_equal(lat_metric_find(lat_metrics[m].key), m);
		char key[64];
		snprintf(key, sizeof key, "mean_%s_ms", lat_metrics[m].key);
		json_t *v = json_object_get(j, key);
		if (!json_is_number(v))
			fail_msg("the run's JSON has no %s", key);
		/* Exact: the reader takes the number the writer stored. */
		assert_true(b.ms[m][0] == json_number_value(v));
	}
	json_decref(j);
	run_result_free(res);
	free(res);
	free(sc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(engine_kinds),  cmocka_unit_test(routers),
		cmocka_unit_test(trace_formats), cmocka_unit_test(precisions),
		cmocka_unit_test(metric_keys),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
