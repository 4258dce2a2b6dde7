/*
 * explain's kernel rows (sim/cli/cmd_explain.c): each operator row names
 * the source of the efficiency it applied. Where the profile's measured
 * best-shape GEMM ([arch] matmul_bf16_tflops, steptime.c) set the dense
 * GEMM's number, that measurement is the source, not the kernel row's
 * fraction of the datasheet.
 *
 * explain --batch's step overhead is the one a run of the scenario's
 * engine charges (vLLM's overhead model, sim/perf/overhead.c), not the
 * profile's single figure: the sampler's path moves it by the two
 * sampler lines, and a version without the split timing (0.8) keeps the
 * profile's figure whatever the path.
 */
#include "testutil.h"

#include <jansson.h>
#include <math.h>

#include "testjson.h"

/* The operator row named op of an explain document. */
static json_t *row(json_t *doc, const char *op)
{
	return item_with(json_object_get(doc, "operators"), "operator", op);
}

static const char *str(json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));
	return s ? s : "";
}

/* A row that moves no device-memory bytes and no FLOPs (a decode's norms,
 * rotary and activation kernels, whose tensors stay in the L2: their time
 * is launch floors, sim/perf/elementwise.c) is "fixed", not "memory" at
 * 0% of peak; every row that says memory or compute moved something. */
static void rows_without_traffic_are_fixed(void **state)
{
	(void)state;
	json_t *doc = servesim_json("explain --batch decode:32x700 --model llama-3.1-8b --hardware h100-sxm --format json");
	json_t *d = row(doc, "norms, rotary, act");
	assert_true(num(d, "time_ms") > 0);
	assert_true(num(d, "bytes") == 0 && num(d, "flops") == 0);
	assert_string_equal(str(d, "bound"), "fixed");
	size_t i;
	json_t *r;
	json_array_foreach(json_object_get(doc, "operators"), i, r)
	{
		const char *b = str(r, "bound");
		if (!strcmp(b, "memory") || !strcmp(b, "compute"))
			assert_true(num(r, "bytes") > 0 || num(r, "flops") > 0);
	}
	json_decref(doc);
	struct cmd_result c;
	run_cmd(&c, "'%s' explain --batch decode:32x700 --model llama-3.1-8b --hardware h100-sxm", SERVESIM_BIN);
	assert_int_equal(c.status, 0);
	assert_contains(c.out, "norms, rotary, act            -          -");
	cmd_result_free(&c);
}

static void measured_gemm_is_the_source(void **state)
{
	(void)state;
	/* B200: matmul_bf16_tflops = 1745 against a 2250 TFLOP/s datasheet
	 * (hardware_profiles/b200.ini); a 16k-token prefill is compute-bound. */
	json_t *doc = servesim_json("explain --batch prefill:16384 --model llama-3.1-8b --hardware b200 --format json");
	json_t *d = row(doc, "dense matmuls");
	assert_string_equal(str(d, "bound"), "compute");
	assert_contains(str(d, "source"), "measured best-shape BF16 GEMM ([arch] matmul_bf16_tflops)");
	assert_contains(str(d, "measured"), "matmul_bf16_tflops = 1745");
	assert_contains(str(d, "measured"), "b200 [arch] source: ");
	assert_null(strstr(str(d, "measured"), "fp8"));   /* bf16 weights: only the BF16 figure */
	/* The number it set: 0.95 of the measured rate at most (tile
	 * padding and waves take a little more at this shape). */
	double eff = num(d, "efficiency");
	assert_true(eff <= 0.95 * 1745 / 2250 * (1 + 1e-9));
	assert_true(eff >= 0.9 * 0.95 * 1745 / 2250);
	json_decref(doc);
	/* FP8 weights: the FP8 figure too. */
	doc = servesim_json("explain --batch prefill:16384 --model llama-3.1-8b --hardware b200 --weights fp8 --format json");
	assert_contains(str(row(doc, "dense matmuls"), "measured"), "matmul_fp8_tflops = 3432.5");
	json_decref(doc);
	/* A batch-1 decode is bound by the weight reads: the GEMV's source,
	 * no measurement. */
	doc = servesim_json("explain --batch decode:1x1000 --model llama-3.1-8b --hardware b200 --format json");
	d = row(doc, "dense matmuls");
	assert_string_equal(str(d, "bound"), "memory");
	assert_null(json_object_get(d, "measured"));
	assert_null(strstr(str(d, "source"), "measured best-shape"));
	json_decref(doc);
	/* H100 SXM's profile has no measured GEMM: the kernel row's source. */
	doc = servesim_json("explain --batch prefill:16384 --model llama-3.1-8b --hardware h100-sxm --format json");
	d = row(doc, "dense matmuls");
	assert_null(json_object_get(d, "measured"));
	assert_contains(str(d, "source"), "cuBLAS BF16");
	json_decref(doc);
	/* The text prints the same lines. */
	struct cmd_result r;
	run_cmd(&r, "'%s' explain --batch prefill:16384 --model llama-3.1-8b --hardware b200", SERVESIM_BIN);
	assert_int_equal(r.status, 0);
	assert_contains(r.out, "0.95 x the profile's measured best-shape BF16 GEMM");
	assert_contains(r.out, "measured: matmul_bf16_tflops = 1745 (b200 [arch] source: ");
	cmd_result_free(&r);
}

/* explain --batch ARGS's step-overhead row, ms. */
static double step_overhead_ms(const char *args)
{
	char cmd[512];
	snprintf(cmd, sizeof cmd, "explain --batch %s --model llama-3.1-8b --hardware h100-sxm --format json", args);
	json_t *doc = servesim_json(cmd);
	double ms = num(row(doc, "step overhead"), "time_ms");
	json_decref(doc);
	return ms;
}

static void batch_step_overhead_is_the_engines(void **state)
{
	(void)state;
	/* Llama-3.1-8B's 128,256-entry vocabulary, one row of logits a
	 * sequence. overhead.c's sampler lines: top-p (the model's
	 * generation_config under vLLM 0.15's --generation-config auto)
	 * 100 us + 0.13 ns a logit, greedy (temperature 0) 10 us + 0.025 ns a
	 * logit; nothing else in the step depends on the path. */
	const int seqs[2] = { 1, 64 };
	for (int i = 0; i < 2; i++) {
		char topp[64], greedy[96];
		snprintf(topp, sizeof topp, "decode:%dx1000", seqs[i]);
		snprintf(greedy, sizeof greedy, "decode:%dx1000 --set workload.temperature=0", seqs[i]);
		double logits = seqs[i] * 128256.0;
		double want = (100 + 0.13e-3 * logits - 10 - 0.025e-3 * logits) * 1e-3;
		double got = step_overhead_ms(topp) - step_overhead_ms(greedy);
		print_message("%d sequences: top-p - greedy %.4f ms (sampler lines %.4f)\n", seqs[i], got, want);
		assert_double_rel(got, want, 1e-3);   /* the JSON's rounding */
	}
	/* vLLM 0.8 (no split timing): the profile's step overhead (a fixed
	 * part and one a sequence), the same on either path. */
	double one = step_overhead_ms("decode:64x1000 --set engine.vllm_version=0.8");
	assert_true(one > 0);
	assert_double_rel(step_overhead_ms("decode:64x1000 --set engine.vllm_version=0.8 --set workload.temperature=0"),
			  one, 1e-9);
	assert_true(step_overhead_ms("decode:1x1000 --set engine.vllm_version=0.8") < one);
	/* vLLM 0.10 ran piecewise graphs only (cudagraph_mode PIECEWISE): a
	 * decode step replays Llama-3.1-8B's 32 + 1 pieces at 4.7 us each
	 * where 0.11's one full graph costs 10 us (overhead.c; both rows
	 * synchronous, nothing else differs): 33 x 4.7 - 10 = 145.1 us more. */
	for (int i = 0; i < 2; i++) {
		char v10[96], v11[96];
		snprintf(v10, sizeof v10, "decode:%dx1000 --set engine.vllm_version=0.10", seqs[i]);
		snprintf(v11, sizeof v11, "decode:%dx1000 --set engine.vllm_version=0.11", seqs[i]);
		double got = step_overhead_ms(v10) - step_overhead_ms(v11);
		print_message("%d sequences: piecewise - full graph %.4f ms\n", seqs[i], got);
		assert_double_rel(got, 0.1451, 2e-3);   /* the JSON's rounding */
	}
	/* A step with prefill tokens runs the pieces under either row. */
	assert_double_rel(step_overhead_ms("prefill:1000 --set engine.vllm_version=0.10"),
			  step_overhead_ms("prefill:1000 --set engine.vllm_version=0.11"), 1e-6);
}

/* explain --batch prefill:N times the step a run of the same scenario
 * times: one request of N prompt tokens and one output token is one
 * engine step, and its breakdown (servesim.step_time_s) equals explain's
 * rows, row by row, because both come from the engine's one step-model
 * builder (engine_class.step_model: vllm.c build_perf, with the
 * scenario's tensor and pipeline parallelism, --cpu-offload-gb, expert
 * parallelism, the version's overheads and the sampler's path; a llama.cpp
 * server's llama_resolve, with num_gpu's split between the GPU and the CPU
 * profile) and one pass's timing (stepmodel.h). 1e-9: the JSON's printed
 * digits. */
static void batch_rows_are_the_engines_step(void **state)
{
	(void)state;
	/* Prompts: one pass of the engine (a llama.cpp server cuts a batch
	 * into passes of n_ubatch = 512 tokens; explain shows one pass). */
	static const struct {
		int prompt;
		const char *set;
	} variants[] = {
		{ 1000, "" },
		{ 1000, "--set engine.tensor_parallel_size=2" },
		{ 1000, "--set engine.cpu_offload_gb=4" },
		{ 1000, "--set engine.vllm_version=0.8" },
		{ 1000, "--set engine.pipeline_parallel_size=2" },
		{ 1000, "--set workload.temperature=0" },
		{ 1000, "--model qwen3-30b-a3b --set engine.tensor_parallel_size=2 --set engine.enable_expert_parallel=true" },
		{ 1000, "--hardware a100-80gb-sxm --set engine.kv_cache_dtype=fp8" },
		/* Ollama and llama-server: all layers on the GPU; 20 of 32 (the
		 * rest and the LM head on the CPU profile); none; every repeating
		 * layer but the output layer's on the GPU; an MoE model split;
		 * a CPU-only machine. */
		{ 500, "--set engine.kind=ollama" },
		{ 500, "--set engine.kind=ollama --set engine.num_gpu=20" },
		{ 500, "--set engine.kind=ollama --set engine.num_gpu=0" },
		{ 500, "--set engine.kind=llamacpp --set engine.num_gpu=32" },
		{ 500, "--set engine.kind=llamacpp --model qwen3-30b-a3b --set engine.num_gpu=30" },
		{ 500, "--set engine.kind=ollama --hardware cpu-ddr5-5600" },
	};
	static const struct {
		const char *run, *row;
	} rows[] = {
		{ "dense", "dense matmuls" },	     { "experts", "MoE experts" },
		{ "lm_head", "LM head" },	     { "attention_prefill", "prefill attention" },
		{ "allreduce", "all-reduce" },	     { "weight_offload", "weight offload" },
		{ "overhead", "step overhead" },     { "pipeline", "pipeline bubble" },
		{ "elementwise", "norms, rotary, act" },
	};
	for (size_t v = 0; v < sizeof variants / sizeof *variants; v++) {
		char cmd[1024];
		const char *set = variants[v].set;
		snprintf(cmd, sizeof cmd,
			 "run --set workload.num_prompts=1 --set workload.random_input_len=%d "
			 "--set workload.random_output_len=1 --set workload.random_range_ratio=0 %s --format json",
			 variants[v].prompt, set);
		json_t *run = servesim_json(cmd);
		json_t *ss = json_object_get(run, "servesim");
		assert_int_equal(json_integer_value(json_object_get(ss, "engine_steps")), 1);
		json_t *st = json_object_get(ss, "step_time_s");
		snprintf(cmd, sizeof cmd, "explain --batch prefill:%d %s --format json", variants[v].prompt, set);
		json_t *ex = servesim_json(cmd);
		double sum = 0;
		for (size_t i = 0; i < sizeof rows / sizeof *rows; i++) {
			double want = num(st, rows[i].run) * 1e3, got = num(row(ex, rows[i].row), "time_ms");
			if (fabs(got - want) > 1e-9 * fmax(1, want))
				fail_msg("%s: %s: explain %.9f ms, the run's step %.9f ms", set, rows[i].row, got,
					 want);
			sum += want;
		}
		assert_true(num(row(ex, "step overhead"), "time_ms") > 0);
		if (strstr(set, "num_gpu=20"))   /* 20 of llama-3.1-8b's 32 layers on the GPU */
			assert_double_rel(num(ex, "device_layer_share"), 20.0 / 32, 1e-12);
		assert_double_rel(num(ex, "step_ms"), sum, 1e-9);
		json_decref(run);
		json_decref(ex);
	}
}

/* A batch past the bounds is one line and exit 2, at once: a count of
 * 10^12 decodes looped for hours, and token sums past int64 overflowed. */
static void batch_bounds(void **state)
{
	(void)state;
	static const char *const bad[] = { "decode:1000000000000x10", "decode:10x3000000000", "prefill:3000000000",
					   "prefill:10@3000000000", "decode:0x10", "prefill:0" };
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		struct cmd_result r;
		run_cmd(&r, "'%s' explain --batch %s --model llama-3.1-8b", SERVESIM_BIN, bad[i]);
		assert_int_equal(r.status, 2);
		assert_contains(r.err, "--batch: expected prefill:TOKENS");
		assert_contains(r.err, bad[i]);
		assert_int_equal(strchr(r.err, '\n') - r.err + 1, (long)strlen(r.err));   /* one line */
		cmd_result_free(&r);
	}
	struct cmd_result r;
	run_cmd(&r, "'%s' explain --batch decode:1000000x10 --model llama-3.1-8b --format json", SERVESIM_BIN);
	assert_int_equal(r.status, 0);
	cmd_result_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(rows_without_traffic_are_fixed),
		cmocka_unit_test(measured_gemm_is_the_source),
		cmocka_unit_test(batch_step_overhead_is_the_engines),
		cmocka_unit_test(batch_rows_are_the_engines_step),
		cmocka_unit_test(batch_bounds),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
