/*
 * servesim validate (issue 7): a real vllm bench serve result replayed
 * through the simulator, measured beside predicted with the error of each,
 * in every version of the result file (formats.md §1).
 *
 * The fixture tests/data/calib/vllm_llama8b_h100.json is a hand-made
 * newest-format result (--save-detailed, e2el selected) of 40 requests of
 * about 512 prompt and 64 output tokens at 4 req/s to Llama-3.1-8B-Instruct
 * on an H100: TTFT about 37 ms, ITL about 7.3 ms. vllm_summary_only.json is
 * the same run saved without --save-detailed (no per-request arrays, no
 * e2el keys), vllm_old_typo.json an old benchmark_serving.py result,
 * vllm_v011.json an about-v0.11 one.
 */
#include "testutil.h"

#include <jansson.h>

#include "validate.h"

#define CAL TEST_DATA_DIR "/calib/"

static const struct validate_row *row(const struct validate_result *r, const char *key)
{
	for (int i = 0; i < VALIDATE_N_ROWS; i++)
		if (!strcmp(r->rows[i].key, key))
			return &r->rows[i];
	fail_msg("no row %s", key);
	return NULL;
}

static void replays_the_runs_own_requests(void **state)
{
	(void)state;
	struct validate_result r;
	struct validate_opts o = { .hardware = "h100-sxm" };
	struct err e;
	if (validate_run(&r, CAL "vllm_llama8b_h100.json", &o, &e))
		fail_msg("%s", e.msg);
	assert_string_equal(r.meas.version, "serve.py (newest)");
	assert_int_equal(r.n_requests, 40);
	assert_contains(r.replay, "at their start_times");
	/* Measured values are the file's own keys. */
	assert_double_near(row(&r, "mean_ttft_ms")->measured, 36.9055, 0);
	assert_double_near(row(&r, "p99_itl_ms")->measured, 19.03, 0);
	assert_double_near(row(&r, "median_e2el_ms")->measured, 492.225, 0);
	assert_double_near(row(&r, "output_throughput")->measured, 239.8606, 0);
	for (int i = 0; i < VALIDATE_N_ROWS; i++) {
		const struct validate_row *x = &r.rows[i];
		assert_true(x->predicted > 0 && isfinite(x->predicted));
		assert_double_near(x->error_pct, 100 * (x->predicted - x->measured) / x->measured, 1e-9);
	}
	/* An 8B model at 4 req/s on an H100: decode is bandwidth-bound at a
	 * few ms per token (C7, C8), so the predicted ITL lands within 25% of
	 * the measured 7.3 ms, and the throughput follows the arrival rate. */
	assert_true(fabs(row(&r, "mean_itl_ms")->error_pct) < 25);
	assert_true(fabs(row(&r, "request_throughput")->error_pct) < 10);
	assert_int_equal(r.n_notes, 0);
}

static void replays_every_version(void **state)
{
	(void)state;
	struct validate_opts o = { .hardware = "h100-sxm" };
	struct validate_result r;
	struct err e;
	/* Without the arrays: the mean lengths, and a note saying so. */
	if (validate_run(&r, CAL "vllm_summary_only.json", &o, &e))
		fail_msg("%s", e.msg);
	assert_contains(r.replay, "40 requests of the mean lengths (504 in, 63 out)");
	assert_contains(r.notes[0], "input_lens, output_lens, start_times: missing (saved without --save-detailed)");
	/* No e2el keys; the latencies array gives them, as numpy would. */
	assert_double_near(row(&r, "mean_e2el_ms")->measured, 492.2397, 1e-3);
	assert_double_near(row(&r, "median_e2el_ms")->measured, 492.225, 1e-3);
	assert_double_near(row(&r, "p99_e2el_ms")->measured, 546.5959, 1e-3);

	/* Old benchmark_serving.py: the typo key, no failed, no start_times. */
	if (validate_run(&r, CAL "vllm_old_typo.json", &o, &e))
		fail_msg("%s", e.msg);
	assert_string_equal(r.meas.version, "benchmark_serving.py (old)");
	assert_contains(r.replay, "sent at request_rate 2");
	assert_contains(r.notes[0], "start_times: missing");
	assert_true(isnan(row(&r, "mean_e2el_ms")->measured));
	assert_true(isnan(row(&r, "mean_e2el_ms")->error_pct));
	assert_int_equal(r.n_requests, 8);

	/* About v0.11: rate inf with a client-side max_concurrency. */
	if (validate_run(&r, CAL "vllm_v011.json", &o, &e))
		fail_msg("%s", e.msg);
	assert_string_equal(r.meas.version, "serve.py (about v0.11)");
	assert_contains(r.replay, "max_concurrency 4");
	assert_int_equal(r.n_requests, 12);
}

static void the_device_matters(void **state)
{
	(void)state;
	struct validate_result h100, a10g;
	struct validate_opts o = { .hardware = "h100-sxm" };
	struct err e;
	if (validate_run(&h100, CAL "vllm_llama8b_h100.json", &o, &e))
		fail_msg("%s", e.msg);
	/* vLLM refuses the model's 131072-token context on a 24 GB A10G
	 * (startup.h): the run there needs a shorter max_model_len. */
	struct inidoc ov = { 0 };
	if (inidoc_add_override(&ov, "engine.max_model_len=8192", &e))
		fail_msg("%s", e.msg);
	o.hardware = "a10g";
	o.overrides = &ov;
	if (validate_run(&a10g, CAL "vllm_llama8b_h100.json", &o, &e))
		fail_msg("%s", e.msg);
	o.overrides = NULL;
	inidoc_free(&ov);
	/* 600 vs 3350 GB/s: the A10G decodes several times slower (C22). */
	assert_true(row(&a10g, "mean_itl_ms")->predicted > 3 * row(&h100, "mean_itl_ms")->predicted);
	/* Without --hardware: the default, and a note. */
	o.hardware = NULL;
	if (validate_run(&h100, CAL "vllm_llama8b_h100.json", &o, &e))
		fail_msg("%s", e.msg);
	assert_string_equal(h100.hardware, VALIDATE_DEFAULT_HARDWARE);
	assert_contains(h100.notes[0], "does not name its GPU");
}

static void bad_input_says_what_is_wrong(void **state)
{
	(void)state;
	struct validate_result r;
	struct validate_opts o = { .hardware = "h100-sxm" };
	struct err e;
	assert_int_equal(validate_run(&r, CAL "mini_measured.csv", &o, &e), -1);
	assert_contains(e.msg, "mini_measured.csv:1:10: invalid JSON");
	/* A result without model_id and no --model. */
	char path[] = "/tmp/servesim-validate-XXXXXX.json";
	int fd = mkstemps(path, 5);
	assert_true(fd >= 0);
	const char *doc = "{\"num_prompts\": 2, \"request_rate\": \"inf\", \"completed\": 2, "
			  "\"total_input_tokens\": 200, \"total_output_tokens\": 20, \"mean_ttft_ms\": 30}";
	assert_int_equal(write(fd, doc, strlen(doc)), (ssize_t)strlen(doc));
	close(fd);
	assert_int_equal(validate_run(&r, path, &o, &e), -1);
	assert_contains(e.msg, "model_id: missing; pass --model");
	o.model = "llama-3.1-8b";
	if (validate_run(&r, path, &o, &e))
		fail_msg("%s", e.msg);
	assert_int_equal(r.n_requests, 2);
	/* A model servesim does not know. */
	o.model = "acme/unknown-7b";
	assert_int_equal(validate_run(&r, path, &o, &e), -1);
	assert_contains(e.msg, "acme/unknown-7b");
	unlink(path);
}

static void cli_text_and_json(void **state)
{
	(void)state;
	struct cmd_result c;
	run_cmd(&c, "'%s' validate '%s' --hardware h100-sxm", SERVESIM_BIN, CAL "vllm_llama8b_h100.json");
	if (c.status != 0)
		fail_msg("exit %d: %s", c.status, c.err);
	assert_contains(c.out, "measured    predicted     error");
	assert_contains(c.out, "Mean TTFT (ms)                            36.91");
	assert_contains(c.out, "P99 E2EL (ms)");
	assert_contains(c.out, "Request throughput (req/s)");
	cmd_result_free(&c);

	run_cmd(&c, "'%s' validate '%s' '%s' --hardware h100-sxm --format json", SERVESIM_BIN,
		CAL "vllm_llama8b_h100.json", CAL "vllm_old_typo.json");
	assert_int_equal(c.status, 0);
	json_error_t je;
	json_t *j = json_loads(c.out, 0, &je);
	assert_non_null(j);
	assert_int_equal(json_array_size(j), 2);
	json_t *m = json_object_get(json_array_get(j, 0), "metrics");
	assert_int_equal(json_array_size(m), VALIDATE_N_ROWS);
	json_t *first = json_array_get(m, 0);
	assert_string_equal(json_string_value(json_object_get(first, "metric")), "mean_ttft_ms");
	assert_double_near(json_number_value(json_object_get(first, "measured")), 36.9055, 1e-9);
	assert_true(json_is_number(json_object_get(first, "error_pct")));
	/* Not measured: null, not 0. */
	json_t *old = json_object_get(json_array_get(j, 1), "metrics");
	assert_true(json_is_null(json_object_get(json_array_get(old, 9), "measured")));
	json_decref(j);
	cmd_result_free(&c);

	run_cmd(&c, "'%s' validate", SERVESIM_BIN);
	assert_int_equal(c.status, 2);
	cmd_result_free(&c);
	run_cmd(&c, "'%s' validate '%s'", SERVESIM_BIN, CAL "ollama_generate.jsonl");
	assert_int_equal(c.status, 2);
	assert_contains(c.err, "ollama_generate.jsonl:2:1: invalid JSON");
	cmd_result_free(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(replays_the_runs_own_requests),
		cmocka_unit_test(replays_every_version),
		cmocka_unit_test(the_device_matters),
		cmocka_unit_test(bad_input_says_what_is_wrong),
		cmocka_unit_test(cli_text_and_json),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
