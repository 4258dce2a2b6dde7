/*
 * vllmflags: vLLM's command lines and `vllm serve --config` YAML become
 * servesim's --set, and give the same run as the keys they stand for.
 * Flag names follow vLLM's vllm/engine/arg_utils.py and
 * vllm/benchmarks/serve.py (formats.md §1, §3).
 */
#include "testutil.h"

#include <stdlib.h>
#include <string.h>

#include "runobs.h"
#include "scenario.h"
#include "vllmflags.h"

static const struct option run_opts[] = {
	{ "model", required_argument, NULL, 'm' },
	{ "seed", required_argument, NULL, 's' },
	{ "set", required_argument, NULL, 'S' },
	{ "format", required_argument, NULL, 'f' },
	{ 0 },
};

/* The rewritten argv joined by spaces, into out. */
static void joined(const struct vllm_args *va, char *out, size_t cap)
{
	out[0] = '\0';
	for (int i = 1; i < va->argc; i++) {
		strncat(out, va->argv[i], cap - strlen(out) - 2);
		strcat(out, " ");
	}
}

static int rewrite(char *const *args, int n, struct vllm_args *va, struct err *e)
{
	char *argv[32] = { "run" };
	for (int i = 0; i < n; i++)
		argv[i + 1] = args[i];
	return vllmflags_rewrite("run", run_opts, n + 1, argv, va, e);
}

/* Each kind of row: a key, a bool and its --no- form, a short alias, the
 * '=' form and underscores, a many-valued flag, a human-readable length;
 * the verb's own options pass untouched. */
static void rewrites_to_set(void **state)
{
	(void)state;
	char *args[] = { "c13-bench-serve", "--num-prompts", "50", "--no-enable-prefix-caching", "-tp", "2",
			 "--max_num_seqs=64", "--goodput", "ttft:500", "tpot:50", "--max-model-len", "32k",
			 "--seed", "7", "--kv-cache-dtype", "fp8_e5m2", "--host", "0.0.0.0" };
	struct vllm_args va;
	struct err e;
	assert_int_equal(rewrite(args, 18, &va, &e), 0);
	char s[2048];
	joined(&va, s, sizeof s);
	assert_string_equal(s, "c13-bench-serve --set workload.num_prompts=50 --set engine.enable_prefix_caching=false "
			       "--set engine.tensor_parallel_size=2 --set engine.max_num_seqs=64 "
			       "--set slo.ttft_ms=500 --set slo.tpot_ms=50 --set engine.max_model_len=32000 "
			       "--seed 7 --set engine.kv_cache_dtype=fp8 ");
	vllmflags_free(&va);
}

/* Without a scenario, a vllm bench serve flag brings vLLM's defaults
 * (--num-prompts 1000, --request-rate inf) before the user's flags. */
static void bench_defaults_without_scenario(void **state)
{
	(void)state;
	char *args[] = { "--random-input-len", "512" };
	struct vllm_args va;
	struct err e;
	assert_int_equal(rewrite(args, 2, &va, &e), 0);
	char s[1024];
	joined(&va, s, sizeof s);
	assert_string_equal(s, "--set workload.num_prompts=1000 --set workload.request_rate=inf "
			       "--set workload.random_input_len=512 ");
	vllmflags_free(&va);
}

static void expect_error(char *const *args, int n, const char *needle)
{
	struct vllm_args va;
	struct err e;
	assert_int_equal(rewrite(args, n, &va, &e), -1);
	assert_contains(e.msg, needle);
	vllmflags_free(&va);
}

/* Unknown flags name themselves; features servesim lacks are refused
 * with the reason, never ignored. */
static void refusals_name_the_flag(void **state)
{
	(void)state;
	expect_error((char *[]){ "--num-prompt", "5" }, 2, "--num-prompt: not a servesim run option");
	expect_error((char *[]){ "--speculative-config", "{\"method\": \"eagle\"}" }, 2,
		     "expected \"num_speculative_tokens\"");
	expect_error((char *[]){ "--speculative-config", "{\"method\": \"medusa\", \"num_speculative_tokens\": 2}" },
		     2, "speculative method 'medusa' is not simulated");
	expect_error((char *[]){ "--speculative-config", "{\"method\": \"ngram\", \"num_speculative_tokens\": 2, \"x\": 1}" },
		     2, "\"x\": servesim reads method, model, num_speculative_tokens and draft_tensor_parallel_size");
	expect_error((char *[]){ "--kv-cache-dtype", "int4" }, 2, "--kv-cache-dtype: expected auto");
	expect_error((char *[]){ "--num-prompts", "many" }, 2, "--num-prompts: expected an integer, got 'many'");
	expect_error((char *[]){ "--goodput", "ttfb:5" }, 2, "--goodput: expected KEY:MS");
	expect_error((char *[]){ "--dataset-name", "sonnet" }, 2, "'sonnet' is not simulated");
	expect_error((char *[]){ "--enable-prefix-caching=yes" }, 1, "takes no value");
	/* --data-parallel-size 1 is one engine: accepted. */
	struct vllm_args va;
	struct err e;
	assert_int_equal(rewrite((char *[]){ "-dp", "1" }, 2, &va, &e), 0);
	vllmflags_free(&va);
}

/* A bad value given through a vLLM flag is named as the flag typed, not
 * as the --set it became (it was `--set engine.block_size: …` for
 * `--block-size 7`); one typed as --set stays --set; a --config key is its
 * file, line and key. */
static void errors_name_the_flag_typed(void **state)
{
	(void)state;
	char *args[] = { "--block-size", "7", "--set", "engine.max_num_seqs=4", "--config",
			 TEST_DATA_DIR "/vllmflags/serve.yaml" };
	struct vllm_args va;
	struct err e;
	assert_int_equal(rewrite(args, 6, &va, &e), 0);
	struct inidoc ov = { 0 };
	int n_from_flags = 0;
	for (int i = 1; i + 1 < va.argc; i += 2) {
		assert_string_equal(va.argv[i], "--set");
		const char *set = va.argv[i + 1], *origin = vllmflags_origin(&va, set);
		if (!strcmp(set, "engine.block_size=7"))
			assert_string_equal(origin, "--block-size");
		else if (!strcmp(set, "engine.max_num_seqs=4"))
			assert_null(origin);   /* typed as --set */
		else if (!strcmp(set, "engine.max_num_seqs=64"))
			assert_string_equal(origin, TEST_DATA_DIR "/vllmflags/serve.yaml:5: max-num-seqs");
		n_from_flags += origin != NULL;
		assert_int_equal(inidoc_add_override_from(&ov, set, origin, &e), 0);
	}
	assert_int_equal(n_from_flags, 8);   /* serve.yaml's seven keys and --block-size */
	struct scenario sc;
	assert_int_equal(scenario_load(&sc, NULL, &ov, &e), -1);
	assert_contains(e.msg, "--block-size: [engine] block_size: expected 1, 8, 16");
	assert_null(strstr(e.msg, "--set"));
	inidoc_free(&ov);
	vllmflags_free(&va);

	/* Through each verb that takes the flags: run and the planning verbs. */
	static const struct {
		const char *args, *needle;
	} verbs[] = {
		{ "run --block-size 7", "servesim run: --block-size: [engine] block_size: expected 1, 8" },
		{ "run --set engine.block_size=7", "servesim run: --set engine.block_size: [engine] block_size" },
		{ "sweep --vary request_rate=2,4 --max-num-seqs 0", "servesim sweep: --max-num-seqs: [engine] max_num_seqs" },
		{ "plan --gpu-memory-utilization 1.5", "--gpu-memory-utilization: [engine] gpu_memory_utilization" },
		/* A verb's own options that set keys, likewise (inidoc_add_option). */
		{ "run --seed x", "servesim run: --seed: [run] seed: expected an integer" },
		{ "report --seed -1 --out /nonexistent/r.html", "servesim report: --seed: [run] seed" },
		{ "explain --batch decode:1 --tp 0", "servesim explain: --tp: [engine] tensor_parallel_size" },
		{ "explain --batch decode:1 --kv-cache-dtype x", "servesim explain: --kv-cache-dtype: [engine] kv_cache_dtype" },
	};
	for (size_t i = 0; i < sizeof verbs / sizeof *verbs; i++) {
		struct cmd_result r;
		run_cmd(&r, "'%s' %s", SERVESIM_BIN, verbs[i].args);
		if (r.status != 2)
			fail_msg("%s: exit %d; stderr %s", verbs[i].args, r.status, r.err);
		assert_contains(r.err, verbs[i].needle);
		cmd_result_free(&r);
	}
}

/* Data parallelism is the cluster's replicas; --speculative-config's JSON
 * is engine.speculative_* (vLLM infers an EAGLE head from its name when
 * no method is given). */
static void cluster_and_speculation(void **state)
{
	(void)state;
	static const struct {
		char *args[2];
		const char *want;
	} cases[] = {
		{ { "-dp", "4" }, "--set cluster.replicas=4 " },
		{ { "--speculative-config", "{\"method\": \"ngram\", \"num_speculative_tokens\": 4, \"prompt_lookup_max\": 5}" },
		  "--set engine.speculative_method=ngram --set engine.num_speculative_tokens=4 " },
		{ { "--speculative-config", "{\"model\": \"yuhuili/EAGLE-LLaMA3.1-Instruct-8B\", \"num_speculative_tokens\": 3}" },
		  "--set engine.speculative_method=eagle --set engine.speculative_model=yuhuili/EAGLE-LLaMA3.1-Instruct-8B "
		  "--set engine.num_speculative_tokens=3 " },
		{ { "--speculative-config", "{\"method\": \"draft_model\", \"model\": \"llama-3.2-1b\", \"num_speculative_tokens\": 2}" },
		  "--set engine.speculative_method=draft --set engine.speculative_model=llama-3.2-1b "
		  "--set engine.num_speculative_tokens=2 " },
		{ { "--speculative-config", "{\"method\": \"deepseek_mtp\", \"num_speculative_tokens\": 1}" },
		  "--set engine.speculative_method=mtp --set engine.num_speculative_tokens=1 " },
		{ { "--speculative-config",
		    "{\"method\": \"eagle3\", \"model\": \"llama-3.2-1b\", \"num_speculative_tokens\": 3, \"draft_tensor_parallel_size\": 1}" },
		  "--set engine.speculative_method=eagle --set engine.speculative_model=llama-3.2-1b "
		  "--set engine.num_speculative_tokens=3 --set engine.draft_tensor_parallel_size=1 " },
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		struct vllm_args va;
		struct err e;
		assert_int_equal(rewrite(cases[i].args, 2, &va, &e), 0);
		char s[1024];
		joined(&va, s, sizeof s);
		assert_string_equal(s, cases[i].want);
		vllmflags_free(&va);
	}
}

/* --config: keys with dashes or underscores, booleans, vLLM's 16k; the
 * command line comes after the file, so its flags win. */
static void yaml_config(void **state)
{
	(void)state;
	char *args[] = { "--config", TEST_DATA_DIR "/vllmflags/serve.yaml", "--max-num-seqs", "128" };
	struct vllm_args va;
	struct err e;
	assert_int_equal(rewrite(args, 4, &va, &e), 0);
	char s[2048];
	joined(&va, s, sizeof s);
	assert_string_equal(s, "--set run.model=llama-3.1-8b --set engine.tensor_parallel_size=1 "
			       "--set engine.max_num_seqs=64 --set engine.max_model_len=16000 "
			       "--set engine.enable_prefix_caching=false --set engine.gpu_memory_utilization=0.85 "
			       "--set engine.kv_cache_dtype=fp8 --set engine.max_num_seqs=128 ");
	/* Loaded, the later max_num_seqs stands. */
	struct inidoc ov = { 0 };
	for (int i = 1; i + 1 < va.argc; i += 2)
		assert_int_equal(inidoc_add_override(&ov, va.argv[i + 1], &e), 0);
	struct scenario sc;
	assert_int_equal(scenario_load(&sc, NULL, &ov, &e), 0);
	assert_int_equal(sc.engine.max_num_seqs, 128);
	assert_int_equal(sc.engine.max_model_len, 16000);
	assert_false(sc.engine.enable_prefix_caching);
	assert_int_equal(sc.engine.kv_cache_dtype, 1);
	inidoc_free(&ov);
	vllmflags_free(&va);

	expect_error((char *[]){ "--config", TEST_DATA_DIR "/vllmflags/bad_key.yaml" }, 2,
		     "bad_key.yaml:2: max-num-sequences: not a vllm serve option");
	expect_error((char *[]){ "--config", TEST_DATA_DIR "/vllmflags/broken.yaml" }, 2, "broken.yaml:3: invalid YAML");
	expect_error((char *[]){ "--config", TEST_DATA_DIR "/vllmflags/none.yaml" }, 2, "none.yaml: cannot open");
	expect_error((char *[]){ "--config", TEST_DATA_DIR "/vllmflags/spec.yaml" }, 2,
		     "spec.yaml:2: speculative-config: a nested mapping servesim does not read from a file");
}

/* The same run through vLLM's flags and through --set: identical JSON. */
static void flags_equal_keys(void **state)
{
	(void)state;
	struct cmd_result a, b;
	run_cmd(&a, "'%s' run --format json --model llama-3.2-1b --num-prompts 40 --request-rate 6 "
		    "--burstiness 0.5 --random-input-len 300 --random-output-len 40 --random-range-ratio 0.2 "
		    "--max-num-seqs 16 --max-num-batched-tokens 1024 --no-enable-prefix-caching "
		    "--gpu-memory-utilization 0.8 --seed 3 --goodput ttft:200",
		SERVESIM_BIN);
	run_cmd(&b, "'%s' run --format json --set run.model=llama-3.2-1b --set workload.num_prompts=40 "
		    "--set workload.request_rate=6 --set workload.burstiness=0.5 "
		    "--set workload.random_input_len=300 --set workload.random_output_len=40 "
		    "--set workload.random_range_ratio=0.2 --set engine.max_num_seqs=16 "
		    "--set engine.max_num_batched_tokens=1024 --set engine.enable_prefix_caching=false "
		    "--set engine.gpu_memory_utilization=0.8 --set run.seed=3 --set slo.ttft_ms=200",
		SERVESIM_BIN);
	assert_int_equal(a.status, 0);
	assert_int_equal(b.status, 0);
	assert_true(strlen(a.out) > 1000);
	assert_string_equal(a.out, b.out);
	assert_contains(a.out, "\"version\": \"" SERVESIM_VERSION "\"");
	cmd_result_free(&a);
	cmd_result_free(&b);

	/* `vllm serve MODEL …` pasted: the model where the scenario goes. */
	run_cmd(&a, "'%s' run llama-3.2-1b --num-prompts 12 --max-num-seqs 4 --format json", SERVESIM_BIN);
	run_cmd(&b, "'%s' run --model llama-3.2-1b --num-prompts 12 --max-num-seqs 4 --format json", SERVESIM_BIN);
	assert_int_equal(a.status, 0);
	assert_string_equal(a.out, b.out);
	assert_contains(a.out, "\"request_rate\": \"inf\"");   /* vllm bench serve's default */
	cmd_result_free(&a);
	cmd_result_free(&b);

	/* The planning verbs take them too (cliplan_args); vllm bench serve's
	 * output flags stay with run. */
	run_cmd(&a, "'%s' sweep --vary request_rate=2,4 --model llama-3.2-1b --num-prompts 10 --max-num-seqs 8 "
		    "--format csv --jobs 1",
		SERVESIM_BIN);
	assert_int_equal(a.status, 0);
	assert_contains(a.out, "workload.request_rate");
	cmd_result_free(&a);
	run_cmd(&a, "'%s' plan --save-result", SERVESIM_BIN);
	assert_int_equal(a.status, 2);
	assert_contains(a.err, "belong to servesim run");
	cmd_result_free(&a);

	run_cmd(&a, "'%s' --version", SERVESIM_BIN);
	assert_int_equal(a.status, 0);
	assert_string_equal(a.out, "servesim " SERVESIM_VERSION "\n");
	cmd_result_free(&a);
}

/* --save-result --append-result twice: one file holding two results, as
 * vLLM's serve.py writes it, which servesim's own reader takes back as two
 * observations. The --result-dir is made first, parents too (serve.py's
 * os.makedirs). */
static void save_and_append(void **state)
{
	(void)state;
	char dir[64];
	test_tmpdir(dir, sizeof dir, "save");
	struct cmd_result r;
	for (int i = 0; i < 2; i++) {
		run_cmd(&r, "'%s' run --model llama-3.2-1b --num-prompts 10 --request-rate %d --save-result --append-result "
			    "--result-dir '%s/a/b' --result-filename res.json --label mine --metadata gpu=h100 >/dev/null",
			SERVESIM_BIN, 4 + 4 * i, dir);
		assert_int_equal(r.status, 0);
		cmd_result_free(&r);
	}
	char path[256];
	snprintf(path, sizeof path, "%s/a/b/res.json", dir);
	struct runobs_set set = { 0 };
	struct runobs_opts o = { .hardware = "h100-sxm" };
	struct err e;
	if (runobs_load(&set, path, &o, &e))
		fail_msg("%s", e.msg);
	assert_int_equal(set.len, 2);
	assert_double_near(set.v[1].sc.request_rate, 8, 0);
	runobs_set_free(&set);
	run_cmd(&r, "grep -c '\"label\": \"mine\"' '%s'; grep -c '\"gpu\": \"h100\"' '%s'", path, path);
	assert_string_equal(r.out, "2\n2\n");
	cmd_result_free(&r);
	test_rmdir(dir);
}

/* Every scenario key the table maps a flag to is a key the scenario
 * knows (a renamed key would otherwise turn a vLLM flag into an error at
 * run time only). Values: "1", which every such key either takes or
 * rejects as a value, never as an unknown key. */
static void table_keys_exist(void **state)
{
	(void)state;
	struct cmd_result r;
	run_cmd(&r, "'%s' vllm-flags | sed -n 's/^| `--[^|]*| `\\([a-z_]*\\.[a-z_]*\\)` |.*/\\1/p'", SERVESIM_BIN);
	assert_int_equal(r.status, 0);
	int n = 0;
	for (char *save = NULL, *key = strtok_r(r.out, "\n", &save); key; key = strtok_r(NULL, "\n", &save)) {
		struct inidoc ov = { 0 };
		struct err e = { { 0 } };
		char set[160];
		snprintf(set, sizeof set, "%s=1", key);
		assert_int_equal(inidoc_add_override(&ov, set, &e), 0);
		struct scenario sc;
		if (scenario_load(&sc, NULL, &ov, &e) && strstr(e.msg, "unknown"))
			fail_msg("%s: %s", key, e.msg);
		inidoc_free(&ov);
		n++;
	}
	assert_true(n >= 20);
	cmd_result_free(&r);
}

/* docs/interop.md's flag table is the code's (servesim vllm-flags). */
static void docs_table_is_the_code(void **state)
{
	(void)state;
	struct cmd_result r, d;
	run_cmd(&r, "'%s' vllm-flags", SERVESIM_BIN);
	run_cmd(&d, "sed -n '/^<!-- vllm-flags/,/^<!-- \\/vllm-flags/p' '%s/docs/interop.md' | sed '1d;$d'",
		getenv("SERVESIM_DATA_DIR"));
	assert_int_equal(r.status, 0);
	assert_true(strlen(r.out) > 1000);
	assert_string_equal(d.out, r.out);
	cmd_result_free(&r);
	cmd_result_free(&d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(rewrites_to_set),
		cmocka_unit_test(bench_defaults_without_scenario),
		cmocka_unit_test(refusals_name_the_flag),
		cmocka_unit_test(errors_name_the_flag_typed),
		cmocka_unit_test(cluster_and_speculation),
		cmocka_unit_test(yaml_config),
		cmocka_unit_test(flags_equal_keys),
		cmocka_unit_test(docs_table_is_the_code),
		cmocka_unit_test(save_and_append),
		cmocka_unit_test(table_keys_exist),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
