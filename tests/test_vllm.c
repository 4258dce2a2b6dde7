/*
 * The vLLM V1 engine's scheduling rules (formats.md §3), each seen in a
 * small run where the answer is known exactly: chunking by the token
 * budget and by long_prefill_token_threshold, prefill without chunking,
 * max_num_seqs, the preemption order (the last admitted goes first), the
 * prefix-cache hit limit and the running requests' claim on the budget
 * before any waiting request's prefill chunk. The exact TTFTs are servesim 1's timing
 * (engine.vllm_version = 0.8): one step after another, no output path;
 * test_vllm_timing.c has the newer versions' timing.
 */
#include "simutil.h"

#include "steptime.h"

/* The TTFT of one request alone whose prompt is prefilled in the given
 * chunks: the API path plus one step per chunk (the last samples). */
static int64_t expected_ttft(struct run_result *r, const int64_t *chunks, int n)
{
	struct perf p;
	perf_init(&p, &r->model, &r->hw, r->weights, 1, 2);
	int64_t t = llround(r->hw.eff.request_overhead_ms * 1e6), done = 0;
	for (int i = 0; i < n; i++) {
		struct perf_step s;
		perf_step_clear(&s);
		perf_step_add(&s, &p, chunks[i], done, i == n - 1);
		t += llround(perf_step_time(&p, &s, NULL) * 1e9);
		done += chunks[i];
	}
	return t;
}

static int64_t ttft_ns(const struct run_result *r, size_t i)
{
	return r->reqs.v[i].first_token_ns - r->reqs.v[i].send_ns;
}

/* A 5,000-token prompt with max_num_batched_tokens 2048: chunks of 2048,
 * 2048 and 904, each a step, exactly. */
static void chunked_by_the_token_budget(void **state)
{
	(void)state;
	struct run_result r;
	simulate(&r, NULL, "workload.num_prompts=1", "workload.request_rate=inf",
		 "workload.random_input_len=5000", "workload.random_output_len=2",
		 "engine.max_num_batched_tokens=2048", "engine.vllm_version=0.8", NULL);
	const int64_t chunks[] = { 2048, 2048, 904 };
	assert_int_equal(ttft_ns(&r, 0), expected_ttft(&r, chunks, 3));
	run_result_free(&r);
}

/* long_prefill_token_threshold 512 caps each chunk below the budget. */
static void chunked_by_the_long_prefill_threshold(void **state)
{
	(void)state;
	struct run_result r;
	simulate(&r, NULL, "workload.num_prompts=1", "workload.request_rate=inf",
		 "workload.random_input_len=2000", "workload.random_output_len=2",
		 "engine.long_prefill_token_threshold=512", "engine.vllm_version=0.8", NULL);
	const int64_t chunks[] = { 512, 512, 512, 464 };
	assert_int_equal(ttft_ns(&r, 0), expected_ttft(&r, chunks, 4));
	run_result_free(&r);
}

/* Without chunked prefill, vLLM sets max_num_batched_tokens to
 * max_model_len: the whole prompt is one step. */
static void unchunked_prefill_is_one_step(void **state)
{
	(void)state;
	struct run_result r;
	simulate(&r, NULL, "workload.num_prompts=1", "workload.request_rate=inf",
		 "workload.random_input_len=12000", "workload.random_output_len=2",
		 "engine.enable_chunked_prefill=false", "engine.max_model_len=16384",
		 "engine.vllm_version=0.8", NULL);
	assert_int_equal(r.engine.max_num_batched_tokens, 16384);
	const int64_t chunks[] = { 12000 };
	assert_int_equal(ttft_ns(&r, 0), expected_ttft(&r, chunks, 1));
	run_result_free(&r);
}

/* max_num_seqs bounds the running requests at every step. */
static void max_num_seqs_bounds_running(void **state)
{
	(void)state;
	struct run_result r;
	simulate(&r, NULL, "workload.num_prompts=12", "workload.request_rate=inf",
		 "engine.max_num_seqs=3", "run.timeseries_interval_s=0.000001", NULL);
	int64_t peak = 0;
	for (size_t i = 0; i < r.n_ts; i++)
		if (r.ts[i].running > peak)
			peak = r.ts[i].running;
	assert_int_equal(peak, 3);
	assert_int_equal(r.all.completed, 12);
	run_result_free(&r);
}

/* When a running request cannot get a block, the last admitted running
 * request is preempted (FCFS), never an earlier one first: with all
 * requests sent at once and admitted in order, the first request is never
 * preempted and the preempted ones are the latest admitted. */
static void preemption_takes_the_last_admitted(void **state)
{
	(void)state;
	struct run_result r;
	/* 4 × (512 + 1024) tokens need 384 blocks; the pool has 200. */
	simulate(&r, NULL, "workload.num_prompts=4", "workload.request_rate=inf",
		 "workload.random_input_len=512", "workload.random_output_len=1024",
		 "engine.num_gpu_blocks_override=200", "engine.enable_prefix_caching=false", NULL);
	assert_int_equal(r.all.completed, 4);
	assert_true(r.engine.preemptions > 0);
	assert_int_equal(r.reqs.v[0].preemptions, 0);
	assert_true(r.reqs.v[3].preemptions >= r.reqs.v[1].preemptions);
	/* The first request, never preempted, finishes first. */
	for (size_t i = 1; i < 4; i++)
		assert_true(r.reqs.v[0].finish_ns <= r.reqs.v[i].finish_ns);
	run_result_free(&r);
}

/* A prefix hit covers whole blocks and at most (tokens - 1) / block_size of
 * them: the last token is always recomputed for its logits. A Mooncake
 * trace sends the same 64-token prompt twice (one 512-token hash block):
 * the second hits 48 tokens (blocks 0-2), not 64; a 65-token prompt with
 * the same first 64 then hits all 64. */
static void prefix_hit_leaves_the_last_token(void **state)
{
	(void)state;
	struct run_result r;
	simulate(&r, NULL, "workload.trace=" TEST_DATA_DIR "/run/same_prompt.jsonl", NULL);
	assert_int_equal(r.reqs.v[0].cached_tokens, 0);
	assert_int_equal(r.reqs.v[1].cached_tokens, 48);
	assert_int_equal(r.reqs.v[2].cached_tokens, 64);
	run_result_free(&r);
}

/* vLLM's OpenAI-server defaults (arg_utils.py): 8192 batched tokens and
 * 1024 sequences on a GPU of >= 70 GiB that is not an A100, else 2048 and
 * 256; block 16. */
static void defaults_follow_the_device(void **state)
{
	(void)state;
	static const struct {
		const char *hw;
		int64_t mnbt, seqs;
	} cases[] = {
		{ "run.hardware=h100-sxm", 8192, 1024 },
		{ "run.hardware=h200-sxm", 8192, 1024 },
		{ "run.hardware=a100-80gb-sxm", 2048, 256 },
		{ "run.hardware=l40s", 2048, 256 },
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		struct run_result r;
		simulate(&r, NULL, "workload.num_prompts=1", cases[i].hw, NULL);
		assert_int_equal(r.engine.max_num_batched_tokens, cases[i].mnbt);
		assert_int_equal(r.engine.max_num_seqs, cases[i].seqs);
		assert_int_equal(r.engine.block_size, 16);
		run_result_free(&r);
	}
}

/* Pipeline stages split the layers: with 2 stages each GPU holds 16 of
 * Llama-3.1-8B's 32 layers (their weights and their KV) plus one vocab ×
 * hidden table (the last stage's LM head; the first's embedding is the
 * same size), so a block of 16 tokens is half the bytes and the pool holds
 * more than twice the blocks. 3 stages: ceil(32/3) = 11 layers on the
 * fullest. A stage count above the layers is an error naming the key. */
static void pipeline_stages_split_the_pool(void **state)
{
	(void)state;
	struct run_result one, two, three;
	simulate(&one, NULL, "workload.num_prompts=1", NULL);
	simulate(&two, NULL, "workload.num_prompts=1", "engine.pipeline_parallel_size=2", NULL);
	simulate(&three, NULL, "workload.num_prompts=1", "engine.pipeline_parallel_size=3", NULL);
	assert_double_rel(two.engine.kv_bytes_per_block, one.engine.kv_bytes_per_block / 2, 1e-12);
	assert_double_rel(three.engine.kv_bytes_per_block, one.engine.kv_bytes_per_block * 11 / 32, 1e-12);
	double table = 128256.0 * 4096 * 2, all = one.engine.weight_bytes_per_gpu;
	assert_double_rel(two.engine.weight_bytes_per_gpu, (all - 2 * table) / 2 + table, 1e-12);
	assert_true(two.engine.num_gpu_blocks > 2 * one.engine.num_gpu_blocks);
	run_result_free(&one);
	run_result_free(&two);
	run_result_free(&three);

	struct cmd_result c;
	run_cmd(&c, "'%s' run --set engine.pipeline_parallel_size=33", SERVESIM_BIN);
	assert_int_equal(c.status, 2);
	assert_contains(c.err, "--set engine.pipeline_parallel_size: [engine] pipeline_parallel_size: expected at most the model's 32 layers, got 33");
	cmd_result_free(&c);
	run_cmd(&c, "'%s' run --set engine.kind=ollama --set run.weights=q4_k_m --set engine.pipeline_parallel_size=2",
		SERVESIM_BIN);
	assert_int_equal(c.status, 2);
	assert_contains(c.err, "[engine] pipeline_parallel_size: expected 1 for kind = ollama");
	cmd_result_free(&c);
}

/* The CPU tier (kv_offload_gib): a prefix evicted from the GPU pool and
 * found again in host memory counts as a hit (cpu hits) instead of being
 * recomputed. A pool of 120 blocks holds one 1,600-token conversation at a
 * time; 20 prefix groups of 1,024 tokens cycle through it. */
static void evicted_prefixes_hit_the_cpu_tier(void **state)
{
	(void)state;
	struct run_result off, on;
	const char *common[] = { "workload.num_prompts=60", "workload.request_rate=inf",
				 "workload.max_concurrency=1", "workload.random_prefix_len=1024",
				 "workload.prefix_groups=20", "workload.random_input_len=64",
				 "workload.random_output_len=16", "engine.num_gpu_blocks_override=120" };
	simulate(&off, NULL, common[0], common[1], common[2], common[3], common[4], common[5],
		 common[6], common[7], NULL);
	simulate(&on, NULL, common[0], common[1], common[2], common[3], common[4], common[5],
		 common[6], common[7], "engine.kv_offload_gib=4", NULL);
	assert_int_equal(off.engine.prefix_cpu_hits, 0);
	assert_true(on.engine.prefix_cpu_hits > 0);
	assert_true(on.engine.prefix_hits > off.engine.prefix_hits);
	run_result_free(&off);
	run_result_free(&on);
}

/* vLLM V1's scheduler (vllm/v1/core/sched/scheduler.py, schedule()) takes
 * the running requests first, each its decode token, and only then lets
 * waiting requests' prefill chunks take what is left of
 * max_num_batched_tokens: a chunk never crowds out a decode. Four requests
 * decode (16-token prompts, 300 tokens out); at 100 ms a 2,000-token
 * prompt arrives with a budget of 512: its chunks are 508, 508, 508 and
 * 476, each sharing its step with the four decodes (steps of 512, 512,
 * 512, 480 tokens), then the five decode together (5). Seen in the time
 * series, one row a step (sampled every 1 ns, a row at each step's start).
 */
static void prefill_chunks_share_the_budget_with_running(void **state)
{
	(void)state;
	struct run_result r;
	simulate(&r, NULL, "workload.trace=" TEST_DATA_DIR "/run/decodes_then_long_prompt.jsonl",
		 "engine.max_num_batched_tokens=512", "engine.enable_prefix_caching=false",
		 "run.timeseries_interval_s=0.000000001", NULL);
	assert_int_equal(r.all.completed, 5);
	const int64_t want[] = { 512, 512, 512, 480, 5 };
	size_t i = 0, mixed = 0;
	while (i < r.n_ts && (r.ts[i].t_s < 0.1 || r.ts[i].step_tokens == 4))
		i++;
	assert_true(i + 5 <= r.n_ts);
	for (size_t k = 0; k < 5; k++)
		assert_int_equal(r.ts[i + k].step_tokens, want[k]);
	/* From 100 ms on, only those four steps carry prefill tokens (more
	 * than the five decodes); the short prompts were prefilled before. */
	for (size_t j = 0; j < r.n_ts; j++)
		mixed += r.ts[j].t_s >= 0.1 && r.ts[j].step_tokens > 5;
	assert_int_equal(mixed, 4);
	run_result_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(chunked_by_the_token_budget),
		cmocka_unit_test(chunked_by_the_long_prefill_threshold),
		cmocka_unit_test(unchunked_prefill_is_one_step),
		cmocka_unit_test(max_num_seqs_bounds_running),
		cmocka_unit_test(preemption_takes_the_last_admitted),
		cmocka_unit_test(prefix_hit_leaves_the_last_token),
		cmocka_unit_test(defaults_follow_the_device),
		cmocka_unit_test(evicted_prefixes_hit_the_cpu_tier),
		cmocka_unit_test(pipeline_stages_split_the_pool),
		cmocka_unit_test(prefill_chunks_share_the_budget_with_running),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
