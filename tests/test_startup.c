/*
 * startup (engine/startup.h): what vLLM, Ollama and llama-server refuse at
 * start-up is refused here with exit 2, the setting at fault and the value
 * that would work; and plan lists such a candidate as infeasible with its
 * reason instead of dropping it.
 */
#include "testutil.h"

#include <stdbool.h>

static void refused(const char *args, const char *want1, const char *want2)
{
	struct cmd_result r;
	run_cmd(&r, "'%s' run --set workload.num_prompts=4 %s", SERVESIM_BIN, args);
	if (r.status != 2)
		fail_msg("servesim run %s: exit %d, expected 2\nstderr: %s", args, r.status, r.err);
	assert_contains(r.err, want1);
	if (want2)
		assert_contains(r.err, want2);
	cmd_result_free(&r);
}

static int runs(const char *args)
{
	struct cmd_result r;
	run_cmd(&r, "'%s' run --set workload.num_prompts=4 %s", SERVESIM_BIN, args);
	int st = r.status;
	cmd_result_free(&r);
	return st;
}

static void vllm_refuses_apple_gpus(void **state)
{
	(void)state;
	refused("--set run.hardware=m2-ultra", "vLLM does not run on Apple GPUs",
		"expected kind = ollama or kind = llamacpp");
	/* The engines that do run there. */
	assert_int_equal(runs("--set run.hardware=m2-ultra --set engine.kind=ollama --set run.weights=q4_k_m"), 0);
}

static void tp_must_divide_the_heads(void **state)
{
	(void)state;
	/* Llama-3.1-8B has 32 attention heads. */
	refused("--set engine.tensor_parallel_size=3",
		"Total number of attention heads (32) must be divisible by tensor parallel size (3)",
		"expected one of 1, 2, 4, 8, 16, 32");
	assert_int_equal(runs("--set engine.tensor_parallel_size=4"), 0);
}

static void one_node_holds_eight_gpus(void **state)
{
	(void)state;
	refused("--set engine.tensor_parallel_size=16",
		"World size (16) is larger than the number of available GPUs (8) in this node",
		"set nnodes = 2");
	refused("--set engine.tensor_parallel_size=8 --set engine.pipeline_parallel_size=2",
		"World size (16)", "set nnodes = 2");
	/* Saying it spans two nodes is enough. */
	assert_int_equal(runs("--set engine.tensor_parallel_size=16 --set engine.nnodes=2"), 0);
}

/* A GB200 tray holds 4 GPUs, but the NVL72 rack's NVLink Switch joins 72
 * ([interconnect] link_domain_gpus): a world of 8 or 32 stays in that
 * domain and starts without nnodes; 128 is beyond it and is refused,
 * naming the domain. */
static void the_link_domain_bounds_the_world(void **state)
{
	(void)state;
	assert_int_equal(runs("--set run.hardware=gb200 --set engine.tensor_parallel_size=8"), 0);
	assert_int_equal(runs("--set run.hardware=gb200 --set engine.tensor_parallel_size=32"), 0);
	refused("--set run.hardware=gb200 --set engine.tensor_parallel_size=32 --set engine.pipeline_parallel_size=4",
		"World size (128) is larger than the number of available GPUs (4) in this node",
		"beyond its link domain of 72 GPUs ([interconnect] link_domain_gpus); set nnodes = 32");
	/* An HGX node's domain is its 8 GPUs: unchanged. */
	refused("--set engine.tensor_parallel_size=16", "World size (16)", "set nnodes = 2");
}

/* vLLM's check that one request of max_model_len fits the pool, and the
 * largest max_model_len it names: that one runs, one block more does not. */
static void the_pool_must_hold_max_model_len(void **state)
{
	(void)state;
	struct cmd_result r;
	run_cmd(&r, "'%s' run --set workload.num_prompts=4 --set run.hardware=a10g", SERVESIM_BIN);
	assert_int_equal(r.status, 2);
	assert_contains(r.err, "To serve at least one request with the models's max seq len (131072)");
	assert_contains(r.err, "16.00 GiB KV cache is needed");   /* 131072 × 128 KiB (C16) */
	const char *p = strstr(r.err, "estimated maximum model length is ");
	assert_non_null(p);
	long long fits = atoll(p + strlen("estimated maximum model length is "));
	cmd_result_free(&r);
	/* 24 GB less 16 GB of weights: a few GiB of KV, i.e. tens of
	 * thousands of tokens, in blocks of 16. */
	assert_true(fits > 8192 && fits < 131072);
	assert_int_equal(fits % 16, 0);
	char args[256];
	snprintf(args, sizeof args, "--set run.hardware=a10g --set engine.max_model_len=%lld", fits);
	assert_int_equal(runs(args), 0);
	snprintf(args, sizeof args, "--set run.hardware=a10g --set engine.max_model_len=%lld", fits + 16);
	refused(args, "estimated maximum model length is", NULL);
}

/* vLLM's hybrid KV cache manager (vllm/v1/core/kv_cache_utils.py,
 * _get_kv_cache_groups_uniform_page_size; engine/vllmpool.c): gpt-oss-120b's
 * 18 sliding-window layers (window 128) and 18 full-attention ones make two
 * groups of 18 layers, a pool block one block of 18 layers, 16 tokens × 2
 * (K, V) × 8 KV heads × 64 × 2 bytes × 18 = 589,824 bytes, half of one
 * group of 36: twice the blocks in the same memory. Its 131072-token
 * request needs 8192 blocks of the full group and cdiv(127 + 8192, 16) + 1
 * = 521 of the sliding one (SlidingWindowSpec.max_memory_usage_bytes;
 * max_num_batched_tokens 8192): 8713 × 576 KiB = 4.79 GiB, which fits the
 * 8.67 GiB pool of one H100; the single group's 9.00 GiB would not, as
 * with a KV connector (kv_offload_gib), which turns the manager off, or
 * before vLLM 0.10. */
static void sliding_layers_get_their_window(void **state)
{
	(void)state;
	const char *oss = "--model gpt-oss-120b --set engine.max_model_len=131072";
	char args[256];
	struct cmd_result r;
	run_cmd(&r, "'%s' run --set workload.num_prompts=4 %s --format json", SERVESIM_BIN, oss);
	assert_int_equal(r.status, 0);
	assert_contains(r.out, "\"kv_bytes_per_block\": 589824.0");
	/* The groups in the result (absent for one group of every layer). */
	assert_contains(r.out, "\"layers_per_group\": 18,");
	assert_contains(r.out, "\"full_attention\": 1,");
	assert_contains(r.out, "\"sliding_window\": 1,");
	assert_contains(r.out, "\"window_tokens\": 128");
	const char *p = strstr(r.out, "\"num_gpu_blocks\": ");
	assert_non_null(p);
	long long blocks = atoll(p + strlen("\"num_gpu_blocks\": "));
	cmd_result_free(&r);
	/* 8.67 GiB of 576 KiB blocks (15,780 when the pool was measured). */
	assert_in_range(blocks, 15700, 15860);
	assert_true(blocks >= 8713);
	/* One group of all 36 layers (a KV connector): half the blocks, too
	 * few for 131072 tokens. */
	snprintf(args, sizeof args, "%s --set engine.kv_offload_gib=10", oss);
	refused(args, "9.00 GiB KV cache is needed", "larger than the available KV cache memory (8.67 GiB)");
	run_cmd(&r, "'%s' run --set workload.num_prompts=4 --model gpt-oss-120b --set engine.max_model_len=65536 --set engine.kv_offload_gib=10 --format json",
		SERVESIM_BIN);
	assert_int_equal(r.status, 0);
	assert_null(strstr(r.out, "kv_cache_groups"));
	cmd_result_free(&r);
	/* So does vLLM before 0.10 (the version row's hybrid_kv;
	 * vllm-project/vllm#14097 kept such models full attention). */
	snprintf(args, sizeof args, "%s --set engine.vllm_version=0.9", oss);
	refused(args, "9.00 GiB KV cache is needed", NULL);
	/* At 0.85 of the memory the pool (about 8570 blocks, 4.71 GiB) holds
	 * less than 8713: refused with the hybrid sum, and the largest length
	 * it names is (blocks − 521) × 16, which runs; 16 more do not. */
	snprintf(args, sizeof args, "%s --set engine.gpu_memory_utilization=0.85", oss);
	run_cmd(&r, "'%s' run --set workload.num_prompts=4 %s", SERVESIM_BIN, args);
	assert_int_equal(r.status, 2);
	assert_contains(r.err, "(4.79 GiB KV cache is needed");
	p = strstr(r.err, "estimated maximum model length is ");
	assert_non_null(p);
	long long fits = atoll(p + strlen("estimated maximum model length is "));
	cmd_result_free(&r);
	assert_true(fits > 120000 && fits < 131072);
	assert_int_equal(fits % 16, 0);
	snprintf(args, sizeof args, "--model gpt-oss-120b --set engine.gpu_memory_utilization=0.85 --set engine.max_model_len=%lld",
		 fits);
	assert_int_equal(runs(args), 0);
	snprintf(args, sizeof args, "--model gpt-oss-120b --set engine.gpu_memory_utilization=0.85 --set engine.max_model_len=%lld",
		 fits + 16);
	refused(args, "estimated maximum model length is", NULL);
}

/* _get_kv_cache_groups_uniform_page_size's grouping on the shipped
 * hybrid configs: group_size is the fewer type's layer count unless the
 * larger is under 1.5 times it, each type's layers split into groups of
 * that size (the last padded), a pool block one 16-token block of
 * group_size layers (2 × KV heads × head_dim × 2 bytes a token a layer).
 * gemma-3-1b: 26 layers, every 6th global (4 full, 22 sliding, window
 * 512), 1 KV head of 256: groups of 4, 1 + cdiv(22, 4) = 6, blocks of
 * 4 × 16 × 1024 = 65,536 bytes. gemma-2-9b: 21 + 21 (window 4096), 8 KV
 * heads of 256: 1 + 1 of 21, 21 × 16 × 8192 = 2,752,512. gpt-oss-20b:
 * 12 + 12 (window 128), 8 of 64: 1 + 1 of 12, 12 × 16 × 2048 = 393,216. */
static void kv_cache_groups_follow_vllms_grouping(void **state)
{
	(void)state;
	static const struct {
		const char *model;
		int layers, full, sliding, window;
		double block_bytes;
	} cases[] = {
		{ "gemma-3-1b", 4, 1, 6, 512, 65536 },
		{ "gemma-2-9b", 21, 1, 1, 4096, 2752512 },
		{ "gpt-oss-20b", 12, 1, 1, 128, 393216 },
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		struct cmd_result r;
		run_cmd(&r, "'%s' run --set workload.num_prompts=4 --model %s --format json", SERVESIM_BIN,
			cases[i].model);
		assert_int_equal(r.status, 0);
		char want[160];
		snprintf(want, sizeof want, "\"layers_per_group\": %d,", cases[i].layers);
		assert_contains(r.out, want);
		snprintf(want, sizeof want, "\"full_attention\": %d,", cases[i].full);
		assert_contains(r.out, want);
		snprintf(want, sizeof want, "\"sliding_window\": %d,", cases[i].sliding);
		assert_contains(r.out, want);
		snprintf(want, sizeof want, "\"window_tokens\": %d", cases[i].window);
		assert_contains(r.out, want);
		snprintf(want, sizeof want, "\"kv_bytes_per_block\": %.1f", cases[i].block_bytes);
		assert_contains(r.out, want);
		cmd_result_free(&r);
	}
}

static void token_budget_checks(void **state)
{
	(void)state;
	refused("--set engine.enable_chunked_prefill=false --set engine.max_num_batched_tokens=2048",
		"max_num_batched_tokens (2048) is smaller than max_model_len (131072)",
		"enable_chunked_prefill = true");
	refused("--set engine.max_num_batched_tokens=256 --set engine.max_num_seqs=512",
		"max_num_batched_tokens (256) must be greater than or equal to max_num_seqs (512)", NULL);
}

static void llama_cpp_has_no_fp8_cache(void **state)
{
	(void)state;
	refused("--set engine.kind=ollama --set run.weights=q4_k_m --set engine.kv_cache_dtype=fp8",
		"llama.cpp has no fp8 KV cache", "expected kv_cache_dtype = auto for kind = ollama");
	refused("--set engine.kind=llamacpp --set run.weights=q4_k_m --set engine.kv_cache_dtype=fp8",
		"for kind = llamacpp", NULL);
	/* Ollama's own: num_ctx above the model's context. */
	refused("--set engine.kind=ollama --set run.weights=q4_k_m --set engine.num_ctx=262144",
		"num_ctx: expected at most the model's max_position_embeddings (131072", NULL);
}

/* plan keeps a refused candidate, as infeasible with the reason. */
static void plan_lists_refused_candidates(void **state)
{
	(void)state;
	struct cmd_result r;
	run_cmd(&r, "'%s' plan --slo ttft_p99_ms=2000 --hardware a10g,h100-sxm --tp 1,3 --fixed "
		    "--replications 1 --duration 5 --no-cost --format csv", SERVESIM_BIN);
	if (r.status != 0)
		fail_msg("exit %d: %s", r.status, r.err);
	assert_contains(r.out, "a10g,1,bf16,infeasible");
	assert_contains(r.out, "estimated maximum model length");
	assert_contains(r.out, "h100-sxm,3,bf16,infeasible");
	assert_contains(r.out, "must be divisible by tensor parallel size (3)");
	assert_contains(r.out, "h100-sxm,1,bf16,ok");
	cmd_result_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(vllm_refuses_apple_gpus),
		cmocka_unit_test(tp_must_divide_the_heads),
		cmocka_unit_test(one_node_holds_eight_gpus),
		cmocka_unit_test(the_link_domain_bounds_the_world),
		cmocka_unit_test(the_pool_must_hold_max_model_len),
		cmocka_unit_test(sliding_layers_get_their_window),
		cmocka_unit_test(kv_cache_groups_follow_vllms_grouping),
		cmocka_unit_test(token_budget_checks),
		cmocka_unit_test(llama_cpp_has_no_fp8_cache),
		cmocka_unit_test(plan_lists_refused_candidates),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
