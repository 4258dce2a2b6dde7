/*
 * Result files as people have them on disk, each read into observations
 * (runobs) with the numbers the file holds: llama-bench Markdown and SQL,
 * `ollama run --verbose` text, pretty-printed Ollama chat/generate JSON,
 * vllm bench serve --append-result files, SGLang bench_serving JSON lines
 * (E2E kept) and SGLang's /metrics, a vLLM start-up log, a BurstGPT trace.
 * tests/data/readers/README.md says which upstream source each sample
 * follows.
 */
#include "testutil.h"

#include <jansson.h>
#include <math.h>
#include <string.h>

#include "llamabenchtext.h"
#include "ollamaverbose.h"
#include "runobs.h"
#include "trace.h"
#include "vllmlog.h"

#define RD TEST_DATA_DIR "/readers/"

/* Values the readers copy or convert exactly; 1e-9 ms is rounding only. */
#define EXACT 1e-9

static void load(struct runobs_set *set, const char *file, const char *weights)
{
	struct runobs_opts o = { .hardware = "h100-sxm", .model = "llama-3.1-8b", .weights = weights };
	struct err e;
	memset(set, 0, sizeof *set);
	if (runobs_load(set, file, &o, &e))
		fail_msg("%s", e.msg);
}

/* Markdown (after the device lines llama-bench prints on stderr, as a
 * `2>&1` capture has them): pp512 → TTFT = 512 tokens / 5761.37 tok/s; tg128 → ITL =
 * 1/142.60 s; pp+tg → E2E = 640 / 577.43 s; the depth test is skipped. */
static void llama_bench_markdown(void **state)
{
	(void)state;
	struct runobs_set set;
	load(&set, RD "llama_bench.md", NULL);
	assert_int_equal(set.len, 3);
	assert_string_equal(set.v[0].format, "llama-bench");
	assert_string_equal(set.v[0].id, "llama_bench.md:7 (pp512)");
	assert_double_near(set.v[0].pts[0].ms[OBS_TTFT], 512 / 5761.37 * 1e3, 1e-6);
	assert_double_near(set.v[1].pts[0].ms[OBS_ITL], 1e3 / 142.60, 1e-6);
	assert_double_near(set.v[2].pts[0].ms[OBS_E2E], 640 / 577.43 * 1e3, 1e-6);
	assert_string_equal(set.v[0].sc.weights, "q4_k_m");   /* from "Q4_K - Medium" */
	assert_int_equal(set.v[0].sc.input.mean, 512);
	runobs_set_free(&set);
}

/* A token count past llama-bench's int range is a one-line error naming
 * the file and line, not an overflow (the fuzz campaign's pp2^63-1+tg128,
 * tests/fuzz/regress/calibrate_runs); 2^30 is the largest count accepted. */
static void llama_bench_markdown_counts_are_bounded(void **state)
{
	(void)state;
	const char *head = "| model | test | t/s |\n| --- | ---: | ---: |\n";
	const char *bad[] = { "pp9223372036854775807+tg128", "pp1073741825", "tg99999999999999999999",
			      "pp512 @ d9223372036854775807", "pp+5", "pp-1" };
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		char text[512];
		snprintf(text, sizeof text, "%s| llama 7B | %s | 10.0 ± 1.0 |\n", head, bad[i]);
		struct err e = { 0 };
		char *csv = llamabenchtext_md_to_csv(text, "b.md", &e);
		assert_null(csv);
		assert_non_null(strstr(e.msg, "b.md:3: expected a test like pp512"));
		assert_null(strchr(e.msg, '\n'));
	}
	char ok[512];
	snprintf(ok, sizeof ok, "%s| llama 7B | pp1073741824 | 10.0 ± 1.0 |\n", head);
	struct err e = { 0 };
	char *csv = llamabenchtext_md_to_csv(ok, "b.md", &e);
	assert_non_null(csv);
	free(csv);
}

/* SQL: avg_ns as written. */
static void llama_bench_sql(void **state)
{
	(void)state;
	struct runobs_set set;
	load(&set, RD "llama_bench.sql", NULL);
	assert_int_equal(set.len, 2);
	assert_string_equal(set.v[0].id, "llama_bench.sql:17 (pp512)");
	assert_double_near(set.v[0].pts[0].ms[OBS_TTFT], 88.866925, EXACT);
	assert_double_near(set.v[1].pts[0].ms[OBS_ITL], 897.616 / 128, EXACT);
	runobs_set_free(&set);
}

/* `ollama run --verbose`: each summary block is one response. */
static void ollama_verbose(void **state)
{
	(void)state;
	double ns;
	assert_int_equal(ollamaverbose_duration("1m2.5s", &ns), 0);
	assert_double_near(ns, 62.5e9, 1e-3);
	assert_int_equal(ollamaverbose_duration("850\xc2\xb5s", &ns), 0);
	assert_double_near(ns, 850e3, 1e-6);
	assert_int_equal(ollamaverbose_duration("12.3 ms", &ns), -1);
	/* Decimal only, as Go writes and reads them (strtod took these). */
	assert_int_equal(ollamaverbose_duration("0x1p3s", &ns), -1);
	assert_int_equal(ollamaverbose_duration("infs", &ns), -1);
	assert_int_equal(ollamaverbose_duration("1s0x2ms", &ns), -1);
	/* A count past Ollama's int range is an error, not LLONG_MAX tokens. */
	struct err e = { 0 };
	assert_null(ollamaverbose_to_jsonl("prompt eval count:    99999999999999999999 token(s)\n", "v.txt", &e));
	assert_non_null(strstr(e.msg, "v.txt:1: prompt eval count"));

	struct runobs_set set;
	load(&set, RD "ollama_verbose.txt", "q4_k_m");
	assert_int_equal(set.len, 2);
	assert_string_equal(set.v[0].id, "ollama_verbose.txt:5");
	assert_double_near(set.v[0].pts[0].ms[OBS_TTFT], 123.456, EXACT);
	assert_double_near(set.v[0].pts[0].ms[OBS_ITL], 3456.0 / 298, EXACT);
	assert_double_near(set.v[1].pts[0].ms[OBS_TTFT], 402.1, EXACT);
	assert_int_equal(set.v[1].sc.input.mean, 340);
	assert_int_equal(set.v[1].sc.output.mean, 120);
	runobs_set_free(&set);
}

/* Pretty-printed JSON, a chat response then a generate one. */
static void ollama_pretty_chat(void **state)
{
	(void)state;
	struct runobs_set set;
	load(&set, RD "ollama_chat_pretty.json", "q4_k_m");
	assert_int_equal(set.len, 2);
	assert_string_equal(set.v[1].id, "ollama_chat_pretty.json:17");
	assert_double_near(set.v[0].pts[0].ms[OBS_E2E], 123.456 + 3456, EXACT);
	assert_double_near(set.v[1].pts[0].ms[OBS_ITL], 1392.0 / 120, EXACT);
	runobs_set_free(&set);
}

/* llama-server replies: timings as Ollama's runner maps them (cache_n +
 * prompt_n prompt tokens; prompt_ms is TTFT on the engine's clock). */
static void llama_server(void **state)
{
	(void)state;
	struct runobs_set set;
	load(&set, RD "llama_server.json", "q4_k_m");
	assert_int_equal(set.len, 2);
	assert_string_equal(set.v[0].format, "llama-server");
	assert_string_equal(set.v[1].id, "llama_server.json:25");
	assert_double_near(set.v[0].pts[0].ms[OBS_TTFT], 120.5, EXACT);
	assert_double_near(set.v[0].pts[0].ms[OBS_ITL], 1010.24 / 128, 1e-6);
	assert_int_equal(set.v[1].sc.input.mean, 300);
	assert_int_equal(set.v[1].sc.output.mean, 64);
	runobs_set_free(&set);
}

/* --append-result: two results, two observations, each its own rate. */
static void vllm_append_result(void **state)
{
	(void)state;
	struct runobs_set set;
	load(&set, RD "vllm_append.json", NULL);
	assert_int_equal(set.len, 2);
	assert_string_equal(set.v[1].id, "vllm_append.json:2");
	assert_double_near(set.v[0].sc.request_rate, 2.0, 0);
	assert_double_near(set.v[1].sc.request_rate, 8.0, 0);
	assert_double_near(set.v[1].pts[0].ms[OBS_E2E], 1050.7, EXACT);
	assert_double_near(set.v[0].pts[0].ms[OBS_TTFT], 45.1, EXACT);
	runobs_set_free(&set);
}

/* SGLang: E2E from mean_e2e_latency_ms (it was dropped before), both key
 * generations of the token totals, Python's bare Infinity as the rate. */
static void sglang_bench_serving(void **state)
{
	(void)state;
	struct runobs_set set;
	load(&set, RD "sglang_bench.jsonl", NULL);
	assert_int_equal(set.len, 2);
	for (int i = 0; i < 2; i++) {
		assert_true(isfinite(set.v[i].pts[0].ms[OBS_E2E]));
		assert_int_equal(set.v[i].sc.input.mean, 1024);    /* 204800 / 200 */
		assert_int_equal(set.v[i].sc.output.mean, 128);
	}
	assert_double_near(set.v[0].pts[0].ms[OBS_E2E], 955.4, EXACT);
	assert_double_near(set.v[1].pts[0].ms[OBS_E2E], 1001.6, EXACT);
	assert_true(isinf(set.v[0].sc.request_rate));
	assert_double_near(set.v[1].sc.request_rate, 8.0, 0);
	assert_double_near(set.v[0].pts[0].ms[OBS_ITL], 7.2, EXACT);
	runobs_set_free(&set);
}

/* SGLang's /metrics: the histograms' _sum / _count, in ms. */
static void sglang_metrics(void **state)
{
	(void)state;
	struct runobs_set set;
	load(&set, RD "sglang_metrics.prom", NULL);
	assert_int_equal(set.len, 1);
	assert_double_near(set.v[0].pts[0].ms[OBS_TTFT], 10.46 / 200 * 1e3, 1e-9);
	assert_double_near(set.v[0].pts[0].ms[OBS_ITL], 182.88 / 25400 * 1e3, 1e-9);
	assert_double_near(set.v[0].pts[0].ms[OBS_E2E], 191.08 / 200 * 1e3, 1e-9);
	assert_int_equal(set.v[0].sc.num_prompts, 200);
	assert_int_equal(set.v[0].sc.input.mean, 1024);
	runobs_set_free(&set);
}

/* The start-up log's memory lines; as a calibration run it is refused
 * with the reason (it holds no latency). */
static void vllm_startup_log(void **state)
{
	(void)state;
	struct cmd_result r;
	run_cmd(&r, "cat '%s'", RD "vllm_startup.log");
	struct vllmlog l;
	struct err e;
	assert_int_equal(vllmlog_parse(&l, r.out, "log", &e), 0);
	assert_double_near(l.weights_gib, 14.99, EXACT);   /* the profiling line comes last */
	assert_double_near(l.kv_gib, 54.92, EXACT);
	assert_double_near(l.activation_gib, 1.22, EXACT);
	assert_double_near(l.total_gpu_gib, 79.19, EXACT);
	assert_double_near(l.gpu_memory_utilization, 0.90, EXACT);
	assert_double_near(l.kv_tokens, 449904, 0);
	cmd_result_free(&r);
	struct runobs_set set = { 0 };
	struct runobs_opts o = { .hardware = "h100-sxm", .model = "llama-3.1-8b" };
	assert_int_equal(runobs_load(&set, RD "vllm_startup.log", &o, &e), -1);
	assert_contains(e.msg, "start-up log");
	runobs_set_free(&set);
}

/* BurstGPT: Timestamp in seconds, Request/Response tokens; the failed
 * request (0 response tokens) is left out. */
static void burstgpt_trace(void **state)
{
	(void)state;
	struct trace t;
	struct err e;
	if (trace_load(&t, RD "burstgpt.csv", "auto", &e))
		fail_msg("%s", e.msg);
	assert_string_equal(t.format, "burstgpt");
	assert_int_equal(t.len, 4);
	assert_double_near(t.rows[0].time_s, 0, 0);
	assert_double_near(t.rows[1].time_s, 40, 0);
	assert_int_equal(t.rows[1].input_len, 1087);
	assert_int_equal(t.rows[3].output_len, 188);
	assert_int_equal(t.skipped_failed, 1);
	trace_free(&t);
}

/* Other benchmarks' summaries: their request count at their mean lengths,
 * at their load, against their mean TTFT and E2E (in ms). */
static void other_benchmarks(void **state)
{
	(void)state;
	static const struct {
		const char *file, *format;
		double ttft_ms, e2e_ms, rate;
		long long n, in, out, conc;
	} cases[] = {
		{ "llmperf_summary.json", "llmperf", 70.2, 1781.5, INFINITY, 100, 550, 150, 8 },
		{ "trtllm_report.json", "trtllm", 41.7, 1130.5, 4.0, 300, 1024, 128, 0 },
		{ "genai_perf.json", "genai-perf", 47.9, 1068.2, INFINITY, 400, 512, 128, 8 },
		{ "vllm_result.pytorch.json", "vllm-pytorch", 38.2, 978.3, 4.0, 200, 1024, 128, 0 },
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		char path[512];
		snprintf(path, sizeof path, RD "%s", cases[i].file);
		struct runobs_set set;
		load(&set, path, NULL);
		assert_int_equal(set.len, 1);
		const struct runobs *ob = &set.v[0];
		assert_string_equal(ob->format, cases[i].format);
		assert_double_near(ob->pts[0].ms[OBS_TTFT], cases[i].ttft_ms, 1e-6);
		assert_double_near(ob->pts[0].ms[OBS_E2E], cases[i].e2e_ms, 1e-6);
		if (strcmp(cases[i].format, "vllm-pytorch"))
			assert_true(isnan(ob->pts[0].ms[OBS_ITL]));   /* their "ITL" is not a token gap */
		else
			assert_double_near(ob->pts[0].ms[OBS_ITL], 7.4, EXACT);   /* vLLM's own mean_itl_ms */
		assert_int_equal(ob->sc.num_prompts, cases[i].n);
		assert_int_equal(ob->sc.input.mean, cases[i].in);
		assert_int_equal(ob->sc.output.mean, cases[i].out);
		assert_int_equal(ob->sc.max_concurrency, cases[i].conc);
		if (isinf(cases[i].rate))
			assert_true(isinf(ob->sc.request_rate));
		else
			assert_double_near(ob->sc.request_rate, cases[i].rate, 0);
		runobs_set_free(&set);
	}
}

/* GuideLLM: one observation per benchmark, each at its strategy's load. */
static void guidellm(void **state)
{
	(void)state;
	struct runobs_set set;
	load(&set, RD "guidellm_benchmarks.json", NULL);
	assert_int_equal(set.len, 3);
	assert_string_equal(set.v[2].id, "guidellm_benchmarks.json#2");
	assert_int_equal(set.v[0].sc.max_concurrency, 1);          /* synchronous */
	assert_double_near(set.v[1].sc.request_rate, 6.0, 0);      /* constant */
	assert_int_equal(set.v[2].sc.max_concurrency, 16);         /* concurrent */
	assert_int_equal(set.v[1].sc.num_prompts, 120);
	assert_int_equal(set.v[1].sc.input.mean, 256);
	assert_double_near(set.v[2].pts[0].ms[OBS_TTFT], 61.0, EXACT);
	assert_double_near(set.v[2].pts[0].ms[OBS_E2E], 710.0, 1e-6);
	runobs_set_free(&set);
}

/* validate takes these files too: the start-up log against the simulated
 * pool (every row measured and predicted), SGLang's lines per result. */
static void validate_any_format(void **state)
{
	(void)state;
	struct cmd_result r;
	run_cmd(&r, "'%s' validate --format json --model llama-3.1-8b --hardware h100-sxm '%s' '%s' '%s'", SERVESIM_BIN,
		RD "vllm_startup.log", RD "sglang_bench.jsonl", RD "vllm_append.json");
	assert_int_equal(r.status, 0);
	json_error_t je;
	json_t *all = json_loads(r.out, 0, &je);
	assert_non_null(all);
	assert_int_equal(json_array_size(all), 3);
	json_t *rows = json_object_get(json_array_get(all, 0), "rows");
	assert_int_equal(json_array_size(rows), 5);
	size_t i;
	json_t *x;
	json_array_foreach(rows, i, x) {
		assert_true(json_is_number(json_object_get(x, "measured")));
		assert_true(json_is_number(json_object_get(x, "predicted")));
	}
	/* SGLang: TTFT, ITL and E2E of each of the two results. */
	assert_int_equal(json_array_size(json_object_get(json_array_get(all, 1), "rows")), 6);
	/* --append-result, the second saved with --save-detailed: simulated too. */
	json_t *app = json_object_get(json_array_get(all, 2), "rows");
	assert_int_equal(json_array_size(app), 6);
	assert_true(json_is_number(json_object_get(json_array_get(app, 5), "predicted")));
	json_decref(all);
	cmd_result_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(llama_bench_markdown), cmocka_unit_test(llama_bench_markdown_counts_are_bounded), cmocka_unit_test(llama_bench_sql),
		cmocka_unit_test(ollama_verbose),       cmocka_unit_test(ollama_pretty_chat),
		cmocka_unit_test(vllm_append_result),   cmocka_unit_test(sglang_bench_serving),
		cmocka_unit_test(sglang_metrics),       cmocka_unit_test(vllm_startup_log),
		cmocka_unit_test(burstgpt_trace),       cmocka_unit_test(validate_any_format),
		cmocka_unit_test(other_benchmarks),     cmocka_unit_test(guidellm),
		cmocka_unit_test(llama_server),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
