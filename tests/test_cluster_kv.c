/*
 * The KV cache of a disaggregated cluster (sim/cluster, sim/engine/kvhold):
 * the prefill side holds a request's blocks until the decode side has read
 * them (vLLM's NixlConnector delayed free), so its KV pressure counts the
 * transfers in flight and the requests still waiting for decode blocks;
 * TTFT never falls as the link slows; VLLM_NIXL_ABORT_REQUEST_TIMEOUT frees
 * what no decode side read in time; pools of different tensor parallelism
 * re-shard the KV (kvshard.h) within NIXL's constraints; the decode side
 * computes the prompt's last token again and samples the first token.
 */
#include "simutil.h"

#include "kvshard.h"
#include "model.h"

/* c25-disagg-small at 8 req/s with a prefill pool of 400 blocks: three
 * 2,000-token prompts (125 blocks each) at a time. */
#define SMALL_PREFILL "workload.num_prompts=60", "workload.request_rate=8", "prefill.num_gpu_blocks_override=400"

static void ttft_never_falls_as_the_link_slows(void **state)
{
	(void)state;
	/* Measured mean TTFT 9.4 s, 3.1 s, 199, 99, 77, 60 ms from 5 to 400
	 * Gb/s; the prefill pool's peak and the hold fall with it. Asserted
	 * monotone, each step within 0.1% (the order of requests on a port
	 * may change with the timing). */
	static const char *const bw[] = { "cluster.kv_transfer_gbit_s=5", "cluster.kv_transfer_gbit_s=10",
					  "cluster.kv_transfer_gbit_s=25", "cluster.kv_transfer_gbit_s=50",
					  "cluster.kv_transfer_gbit_s=100", "cluster.kv_transfer_gbit_s=400" };
	double prev_ttft = INFINITY, prev_kv = INFINITY, prev_hold = INFINITY;
	for (size_t i = 0; i < sizeof bw / sizeof *bw; i++) {
		struct run_result r;
		simulate(&r, "c25-disagg-small", SMALL_PREFILL, bw[i], NULL);
		assert_int_equal(r.all.completed, 60);
		double ttft = samples_mean(&r.all.ttft), kv = r.replicas[0].engine.peak_kv_usage;
		double hold = r.kv.hold_s / (double)r.kv.transfers;
		assert_true(ttft <= prev_ttft * 1.001);
		assert_true(kv <= prev_kv + 1e-9);
		assert_true(hold <= prev_hold * 1.001);
		/* Held from the prefill's end until landed: at least the pull. */
		assert_true(r.kv.hold_s >= r.kv.transfer_s - 1e-9);
		prev_ttft = ttft;
		prev_kv = kv;
		prev_hold = hold;
		run_result_free(&r);
	}
	assert_true(prev_ttft < 0.1);   /* 400 Gb/s: tens of ms */
}

static void prefill_holds_blocks_until_pulled(void **state)
{
	(void)state;
	/* At 5 Gb/s a 262 MB pull takes 0.42 s while a prompt arrives every
	 * 125 ms: the prefill engine runs one 125-block prompt a step (a third
	 * of its pool), so only held blocks fill its pool, and the prompts
	 * behind them wait there (TTFT in seconds, where freeing at once
	 * would leave the prefill side idle and the wait on the link alone).
	 * Every request still ends, and every held block is let go. */
	struct run_result slow, fast;
	simulate(&slow, "c25-disagg-small", SMALL_PREFILL, "cluster.kv_transfer_gbit_s=5", NULL);
	simulate(&fast, "c25-disagg-small", SMALL_PREFILL, NULL);
	assert_double_near(slow.replicas[0].engine.peak_kv_usage, 1.0, 1e-9);
	assert_true(fast.replicas[0].engine.peak_kv_usage < 0.7);
	assert_int_equal(slow.all.completed, 60);
	assert_true(slow.kv.hold_s / (double)slow.kv.transfers > 0.42);
	run_result_free(&slow);
	run_result_free(&fast);
	/* A decode pool of 300 blocks (two requests): pulls wait for decode
	 * blocks, and the prefill side holds theirs meanwhile: the hold is the
	 * wait for blocks plus the pull, and exceeds the pull alone. */
	struct run_result tight;
	simulate(&tight, "c25-disagg-small", SMALL_PREFILL, "decode.num_gpu_blocks_override=300", NULL);
	assert_int_equal(tight.all.completed, 60);
	assert_true(tight.kv.block_wait_s > 0);
	assert_double_near(tight.kv.hold_s, tight.kv.block_wait_s + tight.kv.transfer_s, 1e-6);
	assert_true(tight.replicas[0].engine.peak_kv_usage > 0.6);
	run_result_free(&tight);
}

static void a_request_failed_on_the_decode_side_lets_its_blocks_go(void **state)
{
	(void)state;
	/* A decode pool of 100 blocks cannot hold a 2,000-token prompt (125):
	 * every request fails there, before any pull. Their prefill blocks
	 * (two prompts fill the 300-block prefill pool) must go at the
	 * failure, or the prefill side would wait for them for ever. */
	struct run_result r;
	simulate(&r, "c25-disagg-small", "workload.num_prompts=20", "prefill.num_gpu_blocks_override=300",
		 "decode.num_gpu_blocks_override=100", NULL);
	assert_int_equal(r.all.failed, 20);
	assert_int_equal(r.kv.transfers, 0);
	run_result_free(&r);
}

static void abort_timeout_frees_unread_blocks(void **state)
{
	(void)state;
	/* vLLM's NixlConnector frees a finished prefill's blocks
	 * VLLM_NIXL_ABORT_REQUEST_TIMEOUT (480 s by default) after it finished
	 * if no decode side has read them. A decode pool of 300 blocks (two
	 * requests) makes pulls wait for blocks for seconds. Measured, default
	 * and 2, 0.5, 0.1 s: freed unread 0, 32, 58, 58 of 60; mean hold 2,211,
	 * 1,759, 484, 97 ms; mean wait for decode blocks 2,190, 2,286, 14,279,
	 * 19,594 ms (once its blocks go, the prefill side runs ahead of the
	 * decode side, and more requests wait there). Asserted: every request
	 * prefilled once and decoded once; none expires at the default; the
	 * mean hold within the timeout (a hold ends at the landing or the
	 * timeout, whichever is first); as the timeout shrinks, expiries never
	 * fewer and the decode-side wait never shorter (within 0.1%). */
	static const char *const to[] = { NULL, "cluster.kv_abort_request_timeout_s=2",
					  "cluster.kv_abort_request_timeout_s=0.5",
					  "cluster.kv_abort_request_timeout_s=0.1" };
	static const double secs[] = { 480, 2, 0.5, 0.1 };
	int64_t prev_expired = -1;
	double prev_wait = 0;
	for (size_t i = 0; i < sizeof to / sizeof *to; i++) {
		struct run_result r;
		simulate(&r, "c25-disagg-small", SMALL_PREFILL, "decode.num_gpu_blocks_override=300", to[i], NULL);
		assert_int_equal(r.all.completed, 60);
		assert_int_equal(r.replicas[0].requests, 60);
		assert_int_equal(r.replicas[1].requests, 60);
		assert_int_equal(r.kv.transfers, 60);
		assert_double_near(r.kv.abort_timeout_s, secs[i], 1e-12);
		if (i == 0)
			assert_int_equal(r.kv.expired, 0);
		assert_true(r.kv.hold_s <= (double)r.kv.transfers * secs[i] + 1e-6);
		assert_true(r.kv.expired >= prev_expired);
		assert_true(r.kv.block_wait_s >= prev_wait * 0.999);
		prev_expired = r.kv.expired;
		prev_wait = r.kv.block_wait_s;
		run_result_free(&r);
	}
	assert_true(prev_expired > 30);
}

static void default_abort_timeout_changes_nothing(void **state)
{
	(void)state;
	/* Runs of tens of seconds never reach 480 s: the default and a timeout
	 * of a million seconds give the same requests, byte for byte. */
	struct run_result a, b;
	simulate(&a, "c25-disagg-small", SMALL_PREFILL, "decode.num_gpu_blocks_override=300", NULL);
	simulate(&b, "c25-disagg-small", SMALL_PREFILL, "decode.num_gpu_blocks_override=300",
		 "cluster.kv_abort_request_timeout_s=1e6", NULL);
	assert_int_equal(a.reqs.len, b.reqs.len);
	for (size_t i = 0; i < a.reqs.len; i++) {
		assert_int_equal(a.reqs.v[i].first_token_ns, b.reqs.v[i].first_token_ns);
		assert_int_equal(a.reqs.v[i].finish_ns, b.reqs.v[i].finish_ns);
	}
	assert_double_near(a.kv.hold_s, b.kv.hold_s, 0);
	run_result_free(&a);
	run_result_free(&b);
}

/* c25-disagg-small's pools at their own tensor parallelisms (the model
 * too when given: the last override, as NULL ends them). */
static struct run_result split_tp(const char *model, const char *pre_tp, const char *dec_tp)
{
	struct run_result r;
	simulate(&r, "c25-disagg-small", "workload.num_prompts=20", pre_tp, dec_tp, model, NULL);
	assert_int_equal(r.all.completed, 20);
	assert_int_equal(r.kv.transfers, 20);
	return r;
}

static void heterogeneous_tp_reshards_the_kv(void **state)
{
	(void)state;
	/* vLLM's NixlConnector between pools of different tensor parallelism:
	 * each decode rank reads its own shard, from one prefill rank (D >= P)
	 * or from P / D of them; the busier port of a rank pair sets the
	 * bytes. Llama-3.1-8B (8 KV heads, 131,072 B a token whole): 1 -> 2
	 * and 2 -> 1 move a whole token's KV through one port, 2 -> 4 half of
	 * it. */
	static const struct {
		const char *pre, *dec;
		double bytes;
	} llama[] = {
		{ "prefill.tensor_parallel_size=1", "decode.tensor_parallel_size=2", 131072 },
		{ "prefill.tensor_parallel_size=2", "decode.tensor_parallel_size=1", 131072 },
		{ "prefill.tensor_parallel_size=2", "decode.tensor_parallel_size=4", 65536 },
		{ "prefill.tensor_parallel_size=4", "decode.tensor_parallel_size=2", 65536 },
	};
	for (size_t i = 0; i < sizeof llama / sizeof *llama; i++) {
		struct run_result r = split_tp(NULL, llama[i].pre, llama[i].dec);
		assert_double_near(r.kv.bytes, (double)r.all.total_input * llama[i].bytes, 1.0);
		run_result_free(&r);
	}
	/* Gemma-3-1B has one KV head: at TP 2 both decode ranks hold it (a
	 * replica each) and both read it from the one prefill rank, whose port
	 * carries it twice. */
	struct model g;
	struct err e;
	assert_int_equal(model_load_named(&g, "gemma-3-1b", &e), 0);
	double whole = model_kv_bytes_per_token(&g, 2);
	struct run_result r = split_tp("run.model=gemma-3-1b", "prefill.tensor_parallel_size=1",
				       "decode.tensor_parallel_size=2");
	assert_double_near(r.kv.bytes, (double)r.all.total_input * 2 * whole, 1.0);
	run_result_free(&r);
	assert_double_near(kvshard_bytes_per_token(&g, 2, 1, 1), whole, 1e-9);
	/* MLA's latent is whole on every rank: four decode ranks reading it
	 * from one prefill rank take it four times through that port; the
	 * other way each decode rank reads it once. */
	struct model ds;
	assert_int_equal(model_load_named(&ds, "deepseek-v3", &e), 0);
	double latent = model_kv_bytes_per_token(&ds, 1);
	assert_double_near(kvshard_bytes_per_token(&ds, 1, 2, 8), 4 * latent, 1e-6);
	assert_double_near(kvshard_bytes_per_token(&ds, 1, 8, 2), latent, 1e-6);
	assert_double_near(kvshard_bytes_per_token(&ds, 1, 8, 8), latent, 1e-6);
	/* Never fewer bytes a port than the decode rank's own shard, nor than
	 * the prefill rank's: over 1..8 ranks either side. */
	char why[256];
	struct model l;
	assert_int_equal(model_load_named(&l, "llama-3.1-8b", &e), 0);
	for (int p = 1; p <= 8; p *= 2)
		for (int d = 1; d <= 8; d *= 2) {
			assert_int_equal(kvshard_check(&l, p, d, why, sizeof why), 0);
			double b = kvshard_bytes_per_token(&l, 2, p, d);
			assert_true(b >= model_kv_bytes_per_token_per_rank(&l, 2, d) - 1e-9);
			assert_true(b >= model_kv_bytes_per_token_per_rank(&l, 2, p) - 1e-9);
		}
}

static void heterogeneous_tp_constraints(void **state)
{
	(void)state;
	/* What NIXL's handshake refuses, refused at load with the reason. */
	static const struct {
		const char *a, *b, *needle;
	} bad[] = {
		{ "prefill.tensor_parallel_size=2", "decode.tensor_parallel_size=3", "must be a multiple of the smaller" },
		{ "run.model=gemma-3-1b", "prefill.tensor_parallel_size=2", "replicates them" },
		{ "decode.kv_cache_dtype=fp8", NULL, "[decode] kv_cache_dtype: expected the prefill pool's" },
		{ "prefill.block_size=32", NULL, "[decode] block_size: expected a multiple of the prefill pool's 32" },
	};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		struct inidoc ov = { 0 };
		struct err e;
		char path[4096];
		assert_int_equal(catalog_resolve(CATALOG_SCENARIOS, "c25-disagg-small", path, sizeof path, &e), 0);
		assert_int_equal(inidoc_add_override(&ov, bad[i].a, &e), 0);
		if (bad[i].b)
			assert_int_equal(inidoc_add_override(&ov, bad[i].b, &e), 0);
		struct scenario sc;
		int rc = scenario_load(&sc, path, &ov, &e);
		if (rc == 0) {
			struct run_result r;
			rc = run_simulate(&sc, &r, &e);
			run_result_free(&r);
		}
		assert_int_equal(rc, -1);
		assert_contains(e.msg, bad[i].needle);
		inidoc_free(&ov);
	}
}

/* vLLM's decode side counts every pulled token but the prompt's last as
 * computed (Scheduler._update_waiting_for_remote_kv: num_computed_tokens
 * -= 1 on a full hit) and computes that one token to sample the client's
 * first token itself (vLLM's proxy drops the prefill side's). One request
 * alone on c24 (8,000-token prompt): with one output token the client's
 * token is the prefill side's, at its end; with 64 the first comes from
 * the decode side, after the pull and one step of one token there. So
 * the decode replica runs 64 steps for 64 tokens (not 63), and the TTFT
 * beyond the prefill and the pull is one of its steps: within 25% of its
 * mean step (the first step reads the same 8,000-token KV as the next,
 * one token more; the 25% is the step overhead's spread and the kick of
 * an idle engine). */
static void decode_side_recomputes_the_last_prompt_token(void **state)
{
	(void)state;
	struct run_result one, many;
	simulate(&one, "c24-disaggregation", "workload.num_prompts=1", "workload.random_output_len=1", NULL);
	simulate(&many, "c24-disaggregation", "workload.num_prompts=1", "workload.random_output_len=64", NULL);
	assert_int_equal(one.all.completed, 1);
	assert_int_equal(many.all.completed, 1);
	const struct replica_result *dec = NULL;
	for (int i = 0; i < many.n_replicas; i++)
		if (!strcmp(many.replicas[i].role, "decode") && many.replicas[i].requests == 1)
			dec = &many.replicas[i];
	assert_non_null(dec);
	assert_int_equal(dec->output_tokens, 64);
	assert_int_equal(dec->engine.steps, 64);
	double step = dec->engine.busy_s / (double)dec->engine.steps;
	double extra = samples_mean(&many.all.ttft) - samples_mean(&one.all.ttft) - many.kv.transfer_s -
		       many.kv.block_wait_s;
	print_message("TTFT %.2f ms with 1 token, %.2f with 64: pull %.2f ms, then %.2f ms (mean step %.2f ms)\n",
		      samples_mean(&one.all.ttft) * 1e3, samples_mean(&many.all.ttft) * 1e3, many.kv.transfer_s * 1e3,
		      extra * 1e3, step * 1e3);
	assert_true(extra >= 0.75 * step);
	assert_true(extra <= 1.25 * step);
	run_result_free(&one);
	run_result_free(&many);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(ttft_never_falls_as_the_link_slows),
		cmocka_unit_test(prefill_holds_blocks_until_pulled),
		cmocka_unit_test(a_request_failed_on_the_decode_side_lets_its_blocks_go),
		cmocka_unit_test(abort_timeout_frees_unread_blocks),
		cmocka_unit_test(default_abort_timeout_changes_nothing),
		cmocka_unit_test(heterogeneous_tp_reshards_the_kv),
		cmocka_unit_test(heterogeneous_tp_constraints),
		cmocka_unit_test(decode_side_recomputes_the_last_prompt_token),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
