/*
 * scenario: the built-in default is `vllm bench serve --num-prompts 200
 * --request-rate 4` on Llama-3.1-8B / H100 SXM (SEED C13); a file with every
 * section binds each key to its field; --set overrides apply after the file;
 * stages set num_prompts; bad input names the file, the line and the key.
 * Fixtures are under tests/data/scenarios/.
 */
#include "testutil.h"

#include "engine.h"
#include "scenario.h"

static void fixture(char *out, size_t cap, const char *file)
{
	snprintf(out, cap, "%s/scenarios/%s", TEST_DATA_DIR, file);
}

/* Loads a fixture that must load (with optional --set overrides). */
static void load_ok(struct scenario *sc, const char *file, const char *const *sets)
{
	char path[512];
	struct err e = { { 0 } };
	struct inidoc ov = { 0 };
	if (file)
		fixture(path, sizeof path, file);
	for (; sets && *sets; sets++)
		assert_int_equal(inidoc_add_override(&ov, *sets, &e), 0);
	int rc = scenario_load(sc, file ? path : NULL, ov.len ? &ov : NULL, &e);
	inidoc_free(&ov);
	if (rc) {
		print_error("%s: %s\n", file ? file : "(default)", e.msg);
		fail();
	}
}

/* Loads a fixture that must fail; checks the message names path:line and
 * each of the needles. */
static void load_bad(const char *file, int line, const char *const *needles)
{
	char path[512], at[600];
	struct scenario sc;
	struct err e = { { 0 } };
	fixture(path, sizeof path, file);
	assert_int_equal(scenario_load(&sc, path, NULL, &e), -1);
	snprintf(at, sizeof at, "%s:%d:", path, line);
	assert_contains(e.msg, at);
	for (; *needles; needles++)
		assert_contains(e.msg, *needles);
}

static void defaults(void **state)
{
	(void)state;
	struct scenario sc;
	scenario_default(&sc);
	assert_int_equal(sc.num_prompts, 200);
	/* Small integers and 1.0 are exact in a double: tolerance 0. */
	assert_double_near(sc.request_rate, 4.0, 0.0);
	assert_string_equal(sc.model, "llama-3.1-8b");
	assert_string_equal(sc.hardware, "h100-sxm");
	assert_int_equal(sc.input.mean, 1024);
	assert_int_equal(sc.output.mean, 128);
	assert_int_equal(sc.arrival, ARRIVAL_POISSON);
	assert_double_near(sc.burstiness, 1.0, 0.0);
	assert_int_equal(sc.input.dist, LEN_UNIFORM);
	assert_int_equal(sc.n_stages, 0);
	assert_int_equal(sc.users, 0);
	assert_int_equal(sc.turns, 1);
	assert_int_equal(sc.prefix_groups, 1);
	/* vLLM's engine defaults, and "unset" for the device-dependent ones. */
	assert_int_equal(sc.engine.block_size, 16);
	assert_double_near(sc.engine.gpu_memory_utilization, 0.9, 0.0);
	assert_true(sc.engine.enable_prefix_caching);
	assert_true(sc.engine.enable_chunked_prefill);
	assert_int_equal(sc.engine.max_num_batched_tokens, -1);
	assert_int_equal(sc.engine.max_num_seqs, -1);
	assert_int_equal(sc.engine.max_model_len, -1);
	assert_int_equal(sc.engine.tensor_parallel_size, 1);

	/* scenario_load without a file or overrides is the same default. */
	struct scenario loaded;
	load_ok(&loaded, NULL, NULL);
	assert_int_equal(loaded.num_prompts, 200);
	assert_double_near(loaded.request_rate, 4.0, 0.0);
	assert_string_equal(loaded.model, "llama-3.1-8b");
	assert_false(loaded.num_prompts_given);
}

static void every_section_loads(void **state)
{
	(void)state;
	struct scenario sc;
	load_ok(&sc, "full.ini", NULL);
	/* Every value below is the file's text, parsed exactly (decimal
	 * fractions compare to the same literal): tolerance 0. */
	assert_contains(sc.path, "full.ini");
	assert_string_equal(sc.model, "mixtral-8x7b");
	assert_string_equal(sc.hardware, "a100-80gb-sxm");
	assert_int_equal(sc.seed, 42);
	assert_string_equal(sc.weights, "fp8");
	assert_double_near(sc.timeseries_interval_s, 0.5, 0.0);

	assert_int_equal(sc.num_prompts, 321);
	assert_true(sc.num_prompts_given);
	assert_double_near(sc.request_rate, 7.5, 0.0);
	assert_double_near(sc.burstiness, 0.25, 0.0);
	assert_int_equal(sc.arrival, ARRIVAL_GAMMA);
	assert_int_equal(sc.max_concurrency, 16);
	assert_int_equal(sc.input.mean, 2000);
	assert_int_equal(sc.output.mean, 300);
	assert_double_near(sc.random_range_ratio, 0.2, 0.0);
	assert_int_equal(sc.random_prefix_len, 100);
	assert_int_equal(sc.prefix_groups, 4);
	assert_int_equal(sc.input.dist, LEN_NORMAL);
	assert_double_near(sc.input.stddev, 150, 0.0);
	assert_int_equal(sc.output.dist, LEN_LOGNORMAL);
	assert_double_near(sc.output.stddev, 80, 0.0);
	assert_int_equal(sc.users, 0);
	assert_double_near(sc.think_time_s, 1.5, 0.0);
	assert_int_equal(sc.turns, 2);
	assert_string_equal(sc.trace_format, "azure");
	assert_double_near(sc.trace_time_scale, 0.5, 0.0);

	assert_ptr_equal(sc.engine.cls, &vllm_engine_class);
	assert_string_equal(sc.engine.kind, "vllm");
	assert_int_equal(sc.engine.tensor_parallel_size, 2);
	assert_int_equal(sc.engine.max_num_batched_tokens, 4096);
	assert_int_equal(sc.engine.max_num_seqs, 128);
	assert_int_equal(sc.engine.max_model_len, 16384);
	assert_double_near(sc.engine.gpu_memory_utilization, 0.85, 0.0);
	assert_int_equal(sc.engine.block_size, 32);
	assert_false(sc.engine.enable_prefix_caching);
	assert_false(sc.engine.enable_chunked_prefill);
	assert_int_equal(sc.engine.long_prefill_token_threshold, 512);
	assert_int_equal(sc.engine.num_gpu_blocks_override, 5000);
	assert_double_near(sc.engine.vllm.kv_offload_gib, 64, 0.0);
	assert_int_equal(sc.engine.kv_cache_dtype, 1);

	assert_double_near(sc.slo_ttft_ms, 2000, 0.0);
	assert_double_near(sc.slo_tpot_ms, 50, 0.0);
	assert_double_near(sc.slo_e2el_ms, 30000, 0.0);
}

/* --set entries win over the file and over the default; keys the file
 * does not set keep the file's or the default's values. */
static void set_overrides(void **state)
{
	(void)state;
	struct scenario sc;
	static const char *const sets[] = { "workload.request_rate=12", "engine.block_size=64",
					    "run.model=qwen2.5-7b", NULL };
	load_ok(&sc, "full.ini", sets);
	assert_double_near(sc.request_rate, 12.0, 0.0);
	assert_int_equal(sc.engine.block_size, 64);
	assert_string_equal(sc.model, "qwen2.5-7b");
	assert_int_equal(sc.num_prompts, 321);   /* from the file */

	load_ok(&sc, NULL, sets);
	assert_double_near(sc.request_rate, 12.0, 0.0);
	assert_int_equal(sc.num_prompts, 200);   /* the built-in default */

	/* A bad --set names itself and the key. */
	struct inidoc ov = { 0 };
	struct err e = { { 0 } };
	assert_int_equal(inidoc_add_override(&ov, "workload.request_rate=-3", &e), 0);
	assert_int_equal(scenario_load(&sc, NULL, &ov, &e), -1);
	inidoc_free(&ov);
	assert_contains(e.msg, "--set workload.request_rate");
	assert_contains(e.msg, "request_rate");
	assert_contains(e.msg, "'-3'");
}

static void stages_set_num_prompts(void **state)
{
	(void)state;
	struct scenario sc;
	load_ok(&sc, "stages.ini", NULL);
	assert_int_equal(sc.n_stages, 2);
	assert_int_equal(sc.num_prompts, 210);   /* 2·30 + 5·30 */
	/* Whole numbers from the text: exact. */
	assert_double_near(sc.stages[0].rate, 2, 0.0);
	assert_double_near(sc.stages[0].duration_s, 30, 0.0);
	assert_double_near(sc.stages[1].rate, 5, 0.0);
	assert_double_near(sc.stages[1].duration_s, 30, 0.0);

	/* The same through --set. */
	static const char *const sets[] = { "workload.stages=2:30, 5:30", NULL };
	load_ok(&sc, NULL, sets);
	assert_int_equal(sc.n_stages, 2);
	assert_int_equal(sc.num_prompts, 210);
}

static void bad_negative_rate(void **state)
{
	(void)state;
	static const char *const n[] = { "request_rate", "'-1'", NULL };
	load_bad("bad_rate.ini", 4, n);
}

static void bad_range_ratio_one(void **state)
{
	(void)state;
	static const char *const n[] = { "random_range_ratio", "'1'", NULL };
	load_bad("bad_range_ratio.ini", 4, n);
}

static void bad_unknown_key(void **state)
{
	(void)state;
	/* Names the key and lists the known ones. */
	static const char *const n[] = { "request_rat", "unknown key", "request_rate", NULL };
	load_bad("bad_unknown_key.ini", 4, n);
}

static void bad_unknown_section(void **state)
{
	(void)state;
	/* inih reports keys, not section headers: the line is the first key's.
	 * The message names the section, the key on that line and the known ones.
	 */
	static const char *const n[] = { "[workloads]", "unknown section", "num_prompts", NULL };
	load_bad("bad_unknown_section.ini", 5, n);
}

static void bad_arrival(void **state)
{
	(void)state;
	static const char *const n[] = { "arrival", "'weird'", "poisson", NULL };
	load_bad("bad_arrival.ini", 4, n);
}

static void bad_stages(void **state)
{
	(void)state;
	static const char *const n[] = { "stages", "RATE:DURATION_S", "'2-30'", NULL };
	load_bad("bad_stages.ini", 4, n);
}

static void rate_inf_accepted(void **state)
{
	(void)state;
	struct scenario sc;
	load_ok(&sc, "rate_inf.ini", NULL);
	assert_true(isinf(sc.request_rate) && sc.request_rate > 0);
	assert_int_equal(sc.num_prompts, 50);
}

static void burstiness_means_gamma(void **state)
{
	(void)state;
	struct scenario sc;
	load_ok(&sc, "burstiness.ini", NULL);
	assert_double_near(sc.burstiness, 0.5, 0.0);
	assert_int_equal(sc.arrival, ARRIVAL_GAMMA);
	/* An explicit arrival is kept. */
	static const char *const sets[] = { "workload.arrival=constant", NULL };
	load_ok(&sc, "burstiness.ini", sets);
	assert_int_equal(sc.arrival, ARRIVAL_CONSTANT);
}

/* Loads the default with sets; returns scenario_load's result (e set). */
static int load_sets(struct scenario *sc, const char *const *sets, struct err *e)
{
	struct inidoc ov = { 0 };
	for (; *sets; sets++)
		assert_int_equal(inidoc_add_override(&ov, *sets, e), 0);
	int rc = scenario_load(sc, NULL, &ov, e);
	inidoc_free(&ov);
	return rc;
}

/* The vLLM class checks its own keys (vllmcfg_check), in [engine] and in
 * each pool: a pool's speculative keys are checked under the pool's name,
 * and a pool inherits [engine]'s settings for the keys it leaves out. */
static void pool_vllm_keys_checked_by_class(void **state)
{
	(void)state;
	struct scenario *sc = calloc(1, sizeof *sc), *pool = calloc(1, sizeof *pool);
	struct err e = { { 0 } };
	const char *const bogus[] = { "cluster.prefill_replicas=1", "cluster.decode_replicas=1",
				      "prefill.speculative_method=bogus", NULL };
	assert_int_equal(load_sets(sc, bogus, &e), -1);
	assert_contains(e.msg, "--set prefill.speculative_method: [prefill] speculative_method: expected one of ngram");

	/* [engine] k = 3; the pool's four acceptances are one too many. */
	const char *const too_many[] = { "cluster.prefill_replicas=1", "cluster.decode_replicas=1",
					 "engine.speculative_method=ngram", "engine.num_speculative_tokens=3",
					 "decode.speculative_acceptance=0.9,0.8,0.7,0.6", NULL };
	assert_int_equal(load_sets(sc, too_many, &e), -1);
	assert_contains(e.msg, "--set decode.speculative_acceptance: [decode] speculative_acceptance:");

	const char *const ok[] = { "cluster.prefill_replicas=1", "cluster.decode_replicas=1",
				   "engine.speculative_method=ngram", "engine.num_speculative_tokens=3",
				   "decode.speculative_acceptance=0.9,0.8", "prefill.async_scheduling=false", NULL };
	assert_int_equal(load_sets(sc, ok, &e), 0);
	assert_false(sc->engine.vllm.async_scheduling_given);
	assert_int_equal(scenario_pool(sc, POOL_DECODE, pool, &e), 0);
	assert_string_equal(pool->engine.vllm.speculative_method, "ngram");   /* inherited */
	assert_int_equal(pool->engine.vllm.num_speculative_tokens, 3);
	assert_string_equal(pool->engine.vllm.speculative_acceptance, "0.9,0.8");
	assert_false(pool->engine.vllm.async_scheduling_given);
	assert_int_equal(scenario_pool(sc, POOL_PREFILL, pool, &e), 0);
	assert_true(pool->engine.vllm.async_scheduling_given);
	assert_false(pool->engine.vllm.async_scheduling);
	assert_string_equal(pool->engine.vllm.async_scheduling_at, "--set prefill.async_scheduling");
	free(sc);
	free(pool);
}

/* The A:B lists read as every list does (list.h): commas only, and an
 * empty entry is an error naming the key, not skipped. */
static void stage_lists_read_as_lists(void **state)
{
	(void)state;
	struct scenario *sc = calloc(1, sizeof *sc);
	struct err e = { { 0 } };
	const char *const ok[] = { "workload.stages= 2:30 , 5:30 ", NULL };
	assert_int_equal(load_sets(sc, ok, &e), 0);
	assert_int_equal(sc->n_stages, 2);
	assert_double_near(sc->stages[1].rate, 5, 0);   /* small integers: exact */
	const char *const empty[] = { "workload.stages=2:30,,5:30", NULL };
	assert_int_equal(load_sets(sc, empty, &e), -1);
	assert_contains(e.msg, "--set workload.stages: [workload] stages: expected RATE:DURATION_S, … with no empty entry");
	const char *const semi[] = { "workload.priorities=0:1;5:1", NULL };
	assert_int_equal(load_sets(sc, semi, &e), -1);
	assert_contains(e.msg, "[workload] priorities:");
	free(sc);
}

/* [run] weights left out: each class's default_weights (engine.h) — the
 * model's stored precision for vLLM, Q4_K_M for the llama.cpp servers —
 * and a weights given stands whatever the kind. */
static void default_weights_by_class(void **state)
{
	(void)state;
	struct scenario *sc = calloc(1, sizeof *sc);
	struct err e = { { 0 } };
	for (size_t i = 0; engine_classes[i]; i++) {
		char set[64];
		snprintf(set, sizeof set, "engine.kind=%s", engine_classes[i]->name);
		const char *const sets[] = { set, NULL };
		assert_int_equal(load_sets(sc, sets, &e), 0);
		const char *want = engine_classes[i]->default_weights;
		assert_string_equal(sc->weights, want ? want : "");
		const char *const given[] = { set, "run.weights=fp8", NULL };
		assert_int_equal(load_sets(sc, given, &e), 0);
		assert_string_equal(sc->weights, "fp8");
	}
	assert_string_equal(engine_class_find("ollama")->default_weights, "q4_k_m");
	assert_null(engine_class_find("vllm")->default_weights);
	free(sc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(defaults),
		cmocka_unit_test(every_section_loads),
		cmocka_unit_test(set_overrides),
		cmocka_unit_test(stages_set_num_prompts),
		cmocka_unit_test(bad_negative_rate),
		cmocka_unit_test(bad_range_ratio_one),
		cmocka_unit_test(bad_unknown_key),
		cmocka_unit_test(bad_unknown_section),
		cmocka_unit_test(bad_arrival),
		cmocka_unit_test(bad_stages),
		cmocka_unit_test(rate_inf_accepted),
		cmocka_unit_test(burstiness_means_gamma),
		cmocka_unit_test(pool_vllm_keys_checked_by_class),
		cmocka_unit_test(stage_lists_read_as_lists),
		cmocka_unit_test(default_weights_by_class),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
