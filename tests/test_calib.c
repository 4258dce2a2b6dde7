/*
 * Calibration (issue 7): the profile a fit writes, the real-run formats of
 * `calibrate runs` and its Nelder-Mead fit. The GPU probe's CSV, its fit
 * and `calibrate gpu` are tests/test_probefit.c.
 */
#include "testutil.h"
#include "calibwarn.h"

#include <sys/stat.h>

#include "calibcsv.h"
#include "catalog.h"
#include "effparam.h"
#include "hwprofile.h"
#include "llamabench.h"
#include "profwrite.h"
#include "runfit.h"
#include "runobs.h"

#define CAL TEST_DATA_DIR "/calib/"

/* A set of efficiencies unlike the defaults (profwrite round trip). */
static const struct hw_efficiency truth = {
	.bandwidth = 0.86, .attention_bandwidth = 0.69, .attention_half_seqs = 6,
	.compute_max = 0.62, .compute_half_tokens = 90, .attention_compute = 0.33,
	.low_precision_compute = 1, .moe_efficiency = 1,
	.step_overhead_us = 1400, .step_overhead_per_seq_us = 4, .request_overhead_ms = 10,
};

static void load_h100(struct hw_profile *hw)
{
	struct err e;
	if (hw_load_named(hw, "h100-sxm", &e))
		fail_msg("%s", e.msg);
}

static void profwrite_round_trip(void **state)
{
	(void)state;
	char dir[64];
	test_tmpdir(dir, sizeof dir, "calib");
	char out[128], base[4096];
	snprintf(out, sizeof out, "%s/p.ini", dir);
	struct hw_profile hw;
	load_h100(&hw);
	struct err e;
	if (catalog_resolve(CATALOG_HARDWARE, "h100-sxm", base, sizeof base, &e))
		fail_msg("%s", e.msg);
	struct hw_efficiency eff = truth;
	const char *comments[] = { "a comment longer than any INI line may be, repeated: "
				   "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
				   "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx" };
	if (profwrite_save(out, base, &eff, "test source", comments, 1, &e))
		fail_msg("%s", e.msg);
	struct hw_profile back;
	if (hw_load(&back, out, &e))
		fail_msg("%s", e.msg);
	for (int id = 0; id < EFF_N_PARAMS; id++)
		assert_double_rel(effparam_value(&back.eff, id), effparam_value(&truth, id), 1e-6);
	assert_string_equal(back.source_efficiency, "test source");
	assert_string_equal(back.name, hw.name);
	/* Writing over a profile that has an [efficiency] replaces it. */
	eff.bandwidth = 0.5;
	if (profwrite_save(out, out, &eff, "again", NULL, 0, &e))
		fail_msg("%s", e.msg);
	if (hw_load(&back, out, &e))
		fail_msg("%s", e.msg);
	assert_double_near(back.eff.bandwidth, 0.5, 0);
	/* A base that does not exist: an error, nothing written. */
	char out2[128];
	snprintf(out2, sizeof out2, "%s/q.ini", dir);
	assert_int_equal(profwrite_save(out2, "/nonexistent/base.ini", &eff, "x", NULL, 0, &e), -1);
	assert_contains(e.msg, "/nonexistent/base.ini: cannot open");
	assert_false(test_path_exists(out2));
	test_rmdir(dir);
}

/* ---- calibrate runs: formats --------------------------------------------- */

static struct runobs_opts ollama_opts(void)
{
	return (struct runobs_opts){ .hardware = "rtx-4090", .model = "llama-3.1-8b", .weights = "q4_k_m" };
}

static void runs_read_ollama_responses(void **state)
{
	(void)state;
	struct runobs_set set = { 0 };
	struct runobs_opts o = ollama_opts();
	struct err e;
	if (runobs_load(&set, CAL "ollama_generate.jsonl", &o, &e))
		fail_msg("%s", e.msg);
	/* Line 1 is a streaming chunk (done: false): skipped. */
	assert_int_equal(set.len, 4);
	assert_string_equal(set.v[0].id, "ollama_generate.jsonl:2");
	assert_int_equal(set.v[0].clock, OBS_CLOCK_ENGINE);
	assert_double_near(set.v[0].pts[0].ms[OBS_TTFT], 27.904, 1e-9);
	assert_double_near(set.v[0].pts[0].ms[OBS_ITL], 935.68 / 128, 1e-9);
	assert_double_near(set.v[0].pts[0].ms[OBS_E2E], 27.904 + 935.68, 1e-9);
	assert_int_equal(set.v[2].sc.input.mean, 2043);
	assert_int_equal(set.v[2].sc.output.mean, 128);
	assert_int_equal(set.v[2].sc.max_concurrency, 1);
	assert_string_equal(set.v[2].sc.weights, "q4_k_m");
	runobs_set_free(&set);
	/* Ollama names no servesim model. */
	o.model = NULL;
	assert_int_equal(runobs_load(&set, CAL "ollama_generate.jsonl", &o, &e), -1);
	assert_contains(e.msg, "'llama3.1:8b'");
	assert_contains(e.msg, "pass --model");
	runobs_set_free(&set);
}

static void runs_read_llama_bench_in_three_forms(void **state)
{
	(void)state;
	static const char *const files[] = { CAL "llama_bench.csv", CAL "llama_bench.json", CAL "llama_bench.jsonl" };
	for (int i = 0; i < 3; i++) {
		struct runobs_set set = { 0 };
		struct runobs_opts o = ollama_opts();
		o.weights = NULL;   /* from model_type */
		struct err e;
		if (runobs_load(&set, files[i], &o, &e))
			fail_msg("%s", e.msg);
		assert_int_equal(set.len, 3);   /* pp512, tg128, pp512+tg128; the depth test skipped */
		assert_contains(set.v[0].id, "(pp512)");
		assert_double_near(set.v[0].pts[0].ms[OBS_TTFT], 47.91312, 1e-9);
		assert_true(isnan(set.v[0].pts[0].ms[OBS_ITL]));
		assert_contains(set.v[1].id, "(tg128)");
		assert_double_near(set.v[1].pts[0].ms[OBS_ITL], 901.73326 / 128, 1e-9);
		assert_contains(set.v[2].id, "(pp512+tg128)");
		assert_double_near(set.v[2].pts[0].ms[OBS_E2E], 950.281004, 1e-9);
		assert_string_equal(set.v[0].sc.weights, "q4_k_m");
		assert_int_equal(set.v[1].sc.output.mean, 129);
		assert_int_equal(set.n_notes, 1);
		assert_contains(set.notes[0], "n_depth > 0 skipped");
		runobs_set_free(&set);
	}
	assert_string_equal(llamabench_weights("llama 8B Q8_0"), "q8_0");
	assert_null(llamabench_weights("llama 8B IQ2_XS - 2.3125 bpw"));
}

static void runs_read_a_vllm_metrics_scrape(void **state)
{
	(void)state;
	struct runobs_set set = { 0 };
	struct runobs_opts o = { .hardware = "h100-sxm" };   /* the model from model_name */
	struct err e;
	if (runobs_load(&set, CAL "vllm_metrics.prom", &o, &e))
		fail_msg("%s", e.msg);
	assert_int_equal(set.len, 1);
	const struct runobs *ob = &set.v[0];
	assert_double_near(ob->pts[0].ms[OBS_TTFT], 6.4213 / 200 * 1e3, 1e-9);
	assert_double_near(ob->pts[0].ms[OBS_ITL], 172.72 / 25400 * 1e3, 1e-9);
	assert_double_near(ob->pts[0].ms[OBS_E2E], 179.1413 / 200 * 1e3, 1e-9);
	assert_int_equal(ob->sc.num_prompts, 200);     /* 198 length + 2 stop */
	assert_int_equal(ob->sc.input.mean, 512);
	assert_int_equal(ob->sc.output.mean, 128);
	assert_int_equal(ob->sc.engine.num_gpu_blocks_override, 29358);
	assert_int_equal(ob->sc.max_concurrency, 1);
	assert_string_equal(ob->sc.model, "meta-llama/Llama-3.1-8B-Instruct");
	assert_contains(set.notes[0], "no arrival times");
	runobs_set_free(&set);
	/* With a load given, the requests are not serialised. */
	struct inidoc ov = { 0 };
	assert_int_equal(inidoc_add_override(&ov, "workload.request_rate=5", &e), 0);
	o.overrides = &ov;
	o.max_requests = 50;
	if (runobs_load(&set, CAL "vllm_metrics.prom", &o, &e))
		fail_msg("%s", e.msg);
	assert_int_equal(set.v[0].sc.max_concurrency, 0);
	assert_double_near(set.v[0].sc.request_rate, 5, 0);
	assert_int_equal(set.v[0].sc.num_prompts, 50);
	runobs_set_free(&set);
	inidoc_free(&ov);
}

static void runs_read_every_vllm_result_version(void **state)
{
	(void)state;
	struct runobs_opts o = { .hardware = "h100-sxm" };
	struct runobs_set set = { 0 };
	struct err e;
	/* Newest, with --save-detailed: a trace replay. */
	if (runobs_load(&set, CAL "vllm_llama8b_h100.json", &o, &e))
		fail_msg("%s", e.msg);
	assert_int_equal(set.len, 1);
	assert_contains(set.v[0].sc.trace, "vllm_llama8b_h100.json");
	assert_double_near(set.v[0].pts[0].ms[OBS_TTFT], 36.9055, 1e-9);
	assert_double_near(set.v[0].pts[0].ms[OBS_ITL], 7.3382, 1e-9);
	assert_double_near(set.v[0].pts[0].ms[OBS_E2E], 492.2397, 1e-9);
	assert_int_equal(set.n_notes, 0);
	/* Old benchmark_serving.py: "request_goodput:", no failed, no start_times. */
	if (runobs_load(&set, CAL "vllm_old_typo.json", &o, &e))
		fail_msg("%s", e.msg);
	assert_int_equal(set.len, 2);
	assert_double_near(set.v[1].sc.request_rate, 2, 0);
	assert_true(isnan(set.v[1].pts[0].ms[OBS_E2E]));
	assert_contains(set.notes[0], "start_times: missing (benchmark_serving.py (old))");
	/* About v0.11: rate inf, max_concurrency 4. */
	if (runobs_load(&set, CAL "vllm_v011.json", &o, &e))
		fail_msg("%s", e.msg);
	assert_true(isinf(set.v[2].sc.request_rate));
	assert_int_equal(set.v[2].sc.max_concurrency, 4);
	/* Without the per-request arrays: what is missing and what it does. */
	if (runobs_load(&set, CAL "vllm_summary_only.json", &o, &e))
		fail_msg("%s", e.msg);
	assert_contains(set.notes[2], "input_lens, output_lens, start_times: missing (saved without --save-detailed)");
	assert_contains(set.notes[2], "replayed as 40 requests of the mean lengths");
	assert_int_equal(set.v[3].sc.num_prompts, 40);
	assert_int_equal(set.v[3].sc.input.mean, 504);
	/* E2EL keys absent, latencies present: computed from them. */
	assert_double_near(set.v[3].pts[0].ms[OBS_E2E], 492.2397, 1e-3);
	runobs_set_free(&set);
}

static void runs_read_the_calibration_tables(void **state)
{
	(void)state;
	struct runobs_opts o = { .hardware = "h100-sxm", .max_requests = 300 };
	struct runobs_set set = { 0 };
	struct err e;
	/* Either table finds the other; both given, each experiment once. */
	if (runobs_load(&set, CAL "mini_measured.csv", &o, &e) ||
	    runobs_load(&set, CAL "mini_experiments.csv", &o, &e))
		fail_msg("%s", e.msg);
	assert_int_equal(set.len, 3);
	const struct runobs *ob = &set.v[0];
	assert_string_equal(ob->id, "63-mistral-nemo-12b-tp1-codegen-1-1");
	assert_int_equal(ob->itl, OBS_ITL_DERIVED);
	assert_int_equal(ob->n_pts, 2);
	assert_int_equal(ob->pts[1].stage, 1);
	assert_double_near(ob->pts[0].ms[OBS_TTFT], 31.899991, 0);
	/* Subsampled: stage durations scaled so the run has about 300 requests. */
	assert_true(ob->sc.num_prompts <= 300 && ob->sc.num_prompts >= 290);
	assert_double_near(ob->sc.stages[1].rate, 10, 0);
	runobs_set_free(&set);
}

/* gpu_kv_blocks, where the experiments table gives it: the count vLLM
 * reported, read as is; an empty field is "not given" (0); anything else
 * is an error naming the file, line and column. */
static void calibcsv_reads_reported_blocks(void **state)
{
	(void)state;
	struct calibcsv c;
	struct err e;
	if (calibcsv_load(&c, CAL "mini_experiments.csv", CAL "mini_measured.csv", &e))
		fail_msg("%s", e.msg);
	assert_int_equal(c.exps[0].gpu_kv_blocks, 19251);
	assert_int_equal(c.exps[2].gpu_kv_blocks, 7463);
	calibcsv_free(&c);
	char dir[64];
	test_tmpdir(dir, sizeof dir, "calib");
	char bad[128];
	snprintf(bad, sizeof bad, "%s/bad_experiments.csv", dir);
	test_write_text(bad, "experiment,model,hardware,tp,gpu_kv_blocks\n"
			     "a,meta-llama/Llama-2-7b-hf,H100-SXM-80GB,1,\n"
			     "b,meta-llama/Llama-2-7b-hf,H100-SXM-80GB,1,many\n");
	assert_int_equal(calibcsv_load(&c, bad, CAL "mini_measured.csv", &e), -1);
	assert_contains(e.msg, "bad_experiments.csv:3: gpu_kv_blocks: expected a block count >= 1 or nothing, got 'many'");
	calibcsv_free(&c);
	test_rmdir(dir);
}

static void runs_name_the_formats_they_tried(void **state)
{
	(void)state;
	struct runobs_opts o = { .hardware = "h100-sxm", .model = "llama-3.1-8b" };
	struct runobs_set set = { 0 };
	struct err e;
	assert_int_equal(runobs_load(&set, CAL "unknown_format.txt", &o, &e), -1);
	assert_contains(e.msg, "unknown_format.txt: not a known format; tried: vllm bench serve result JSON");
	assert_contains(e.msg, "Ollama /api/generate or /api/chat JSON, `ollama run --verbose` text, llama-server responses, "
			       "llama-bench Markdown/CSV/JSON/JSONL/SQL, LLMPerf, trtllm-bench, GenAI-Perf or GuideLLM summary JSON, Prometheus text");
	assert_int_equal(runobs_load(&set, CAL "probe_too_few.csv", &o, &e), -1);
	assert_contains(e.msg, "not a known format");
	runobs_set_free(&set);
}

/* ---- calibrate runs: the fit --------------------------------------------- */

static void runs_fit_improves_the_training_runs(void **state)
{
	(void)state;
	struct runobs_opts o = { .hardware = "h100-sxm", .max_requests = 300 };
	struct runobs_set set = { 0 };
	struct err e;
	if (runobs_load(&set, CAL "mini_experiments.csv", &o, &e))
		fail_msg("%s", e.msg);
	struct hw_profile hw;
	load_h100(&hw);
	char base[4096];
	if (catalog_resolve(CATALOG_HARDWARE, "h100-sxm", base, sizeof base, &e))
		fail_msg("%s", e.msg);
	/* Start far from the defaults so there is something to fit. */
	hw.eff.bandwidth = 0.5;
	hw.eff.step_overhead_us = 4000;
	bool holdout[3] = { false, true, false };   /* 64-qwen2.5-7b, one stage */
	struct runfit_opts fo = { .base_path = base, .holdout = holdout, .max_evals = 150, .tol = 0.05, .jobs = 2 };
	struct runfit_result r;
	if (runfit_fit(&r, &set, &hw, &fo, &e))
		fail_msg("%s", e.msg);
	assert_true(r.converged);
	assert_int_equal(r.n_holdout, 3);        /* one stage x TTFT, ITL, E2E */
	assert_int_equal(r.n_train, 12);
	/* From a bandwidth 40% too low and overheads 3x too high, the fit more
	 * than halves the error, on the held-out run too. */
	assert_true(r.cost_after < 0.5 * r.cost_before);
	assert_true(r.holdout_after < 0.5 * r.holdout_before);
	assert_true(r.after.bandwidth > 0.6);
	assert_true(r.fitted[EFF_REQUEST_OVERHEAD_MS]);
	for (size_t k = 0; k < r.n_vals; k++)
		assert_true(isfinite(r.vals[k].before_ms) && isfinite(r.vals[k].after_ms));
	runfit_result_free(&r);
	runobs_set_free(&set);
}

static void runs_fit_needs_enough_values(void **state)
{
	(void)state;
	struct runobs_opts o = ollama_opts();
	struct runobs_set set = { 0 };
	struct err e;
	if (runobs_load(&set, CAL "llama_bench.csv", &o, &e))
		fail_msg("%s", e.msg);
	struct hw_profile hw;
	if (hw_load_named(&hw, "rtx-4090", &e))
		fail_msg("%s", e.msg);
	char base[4096];
	if (catalog_resolve(CATALOG_HARDWARE, "rtx-4090", base, sizeof base, &e))
		fail_msg("%s", e.msg);
	struct runfit_opts fo = { .base_path = base };
	struct runfit_result r;
	assert_int_equal(runfit_fit(&r, &set, &hw, &fo, &e), -1);
	/* Engine-clock data only: request_overhead_ms is not among them. */
	assert_contains(e.msg, "too few measurements to fit: 3 measured values outside the held-out runs for 3 parameters");
	runobs_set_free(&set);
}

/* `calibrate runs` of the Ollama responses and llama-bench JSONL on an
 * RTX 4090 with fit options opts, into DIR/rtx.ini (dir made here, out
 * its path). */
static void run_rtx_fit(struct cmd_result *c, char *dir, size_t dir_cap, char *out, size_t out_cap,
			const char *opts)
{
	test_tmpdir(dir, dir_cap, "calib");
	snprintf(out, out_cap, "%s/rtx.ini", dir);
	run_cmd(c, "'%s' calibrate runs '%s' '%s' --hardware rtx-4090 --model llama-3.1-8b --weights q4_k_m "
		   "%s --out '%s'",
		SERVESIM_BIN, CAL "ollama_generate.jsonl", CAL "llama_bench.jsonl", opts, out);
}

static void runs_cli_fits_mixed_formats(void **state)
{
	(void)state;
	char dir[64], out[128];
	struct cmd_result c;
	run_rtx_fit(&c, dir, sizeof dir, out, sizeof out, "--max-evals 150 --tol 0.05");
	if (c.status != 0)
		fail_msg("exit %d\n%s\n%s", c.status, c.out, c.err);
	assert_contains(c.out, "ollama_generate.jsonl:4");
	assert_contains(c.out, "llama_bench.jsonl:2 (tg128)");
	assert_contains(c.out, "mean |error| before → after");
	assert_contains(c.err, "note: ");
	cmd_result_free(&c);
	struct hw_profile hw;
	struct err e;
	if (hw_load(&hw, out, &e))
		fail_msg("%s", e.msg);
	assert_true(hw.calibrated);
	assert_contains(hw.source_efficiency, "fitted by servesim calibrate from ollama_generate.jsonl and 1 more files");

	/* Bad input: exit 2, nothing written. */
	char out2[128];
	snprintf(out2, sizeof out2, "%s/none.ini", dir);
	run_cmd(&c, "'%s' calibrate runs '%s' --hardware h100-sxm --out '%s'", SERVESIM_BIN,
		CAL "unknown_format.txt", out2);
	assert_int_equal(c.status, 2);
	assert_contains(c.err, "not a known format; tried:");
	assert_false(test_path_exists(out2));
	cmd_result_free(&c);
	run_cmd(&c, "'%s' calibrate runs '%s' --hardware h100-sxm --holdout nosuch --out '%s'", SERVESIM_BIN,
		CAL "mini_experiments.csv", out2);
	assert_int_equal(c.status, 2);
	assert_contains(c.err, "--holdout: 'nosuch' is not one of the runs: 63-mistral-nemo-12b-tp1-codegen-1-1");
	cmd_result_free(&c);
	run_cmd(&c, "'%s' calibrate sideways", SERVESIM_BIN);
	assert_int_equal(c.status, 2);
	cmd_result_free(&c);
	test_rmdir(dir);
}

/* A fit stopped before it converges: its table is a diagnostic on stderr
 * after a warning, stdout stays empty and nothing is written (exit 2). */
static void runs_cli_warns_when_it_does_not_converge(void **state)
{
	(void)state;
	char dir[64], out[128];
	struct cmd_result c;
	/* 10 evaluations for 7 parameters cannot shrink the simplex to 1e-6. */
	run_rtx_fit(&c, dir, sizeof dir, out, sizeof out, "--max-evals 10 --tol 0.000001");
	assert_fit_did_not_converge(&c, out, "run ");
	assert_contains(c.err, "ollama_generate.jsonl:4");
	assert_contains(c.err, "mean |error| before → after");
	assert_contains(c.err, "parameter ");
	cmd_result_free(&c);
	test_rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(profwrite_round_trip),
		cmocka_unit_test(runs_read_ollama_responses),
		cmocka_unit_test(runs_read_llama_bench_in_three_forms),
		cmocka_unit_test(runs_read_a_vllm_metrics_scrape),
		cmocka_unit_test(runs_read_every_vllm_result_version),
		cmocka_unit_test(runs_read_the_calibration_tables),
		cmocka_unit_test(calibcsv_reads_reported_blocks),
		cmocka_unit_test(runs_name_the_formats_they_tried),
		cmocka_unit_test(runs_fit_improves_the_training_runs),
		cmocka_unit_test(runs_fit_needs_enough_values),
		cmocka_unit_test(runs_cli_fits_mixed_formats),
		cmocka_unit_test(runs_cli_warns_when_it_does_not_converge),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
