/*
 * The KV cache of a disaggregated cluster (sim/cluster, sim/engine/kvhold):
 * the prefill side holds a request's blocks until the decode side has read
 * them (vLLM's NixlConnector delayed free), so its KV pressure counts the
 * transfers in flight and the requests still waiting for decode blocks;
 * TTFT never falls as the link slows.
 */
#include "simutil.h"

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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(ttft_never_falls_as_the_link_slows),
		cmocka_unit_test(prefill_holds_blocks_until_pulled),
		cmocka_unit_test(a_request_failed_on_the_decode_side_lets_its_blocks_go),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
