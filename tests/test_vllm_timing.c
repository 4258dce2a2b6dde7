/*
 * vLLM V1's timing (issue 18), each rule seen where the answer is known
 * exactly: the engine is driven step by step from the test (submit, start a
 * step, end it), so which request is in which step is an exact count.
 *   - async scheduling: a request arriving during step k runs in step k+2
 *     (at tensor parallel 4 too: the wait is the step in flight);
 *     a finished request frees its slot one step later; a request whose
 *     step in flight samples its last token is not scheduled again;
 *   - blocks hittable at allocation (same-step prefix hits);
 *   - max_num_partial_prefills > 1: chunks of 4% of max_model_len;
 *   - CPU-tier hits parked while their blocks load;
 *   - priority scheduling preempts the lowest priority;
 *   - stream_interval > 1 sends tokens in chunks;
 *   - requests of the same instant share an idle engine's first step.
 * test_overhead.c has the overhead model (graphs, CPU, paths).
 */
#include "simutil.h"

#include "engine.h"
#include "run.h"
#include "vllm_int.h"     /* the waiting queue's order, for one test */
#include "vllmver.h"

/* One engine on a scenario built from --set style overrides. */
struct bench {
	struct scenario sc;
	struct model model;
	struct hw_profile hw;
	struct reqtab reqs;
	const struct engine_class *cls;
	struct engine *eng;
	int64_t now;
	int tokens[16];           /* tokens seen per request */
	int done[16];
};

static void on_token(void *ctx, size_t req, int64_t t)
{
	struct bench *b = ctx;
	(void)t;
	b->tokens[req]++;
}

static void on_done(void *ctx, size_t req, int64_t t)
{
	struct bench *b = ctx;
	(void)t;
	b->done[req]++;
}

static void bench_open(struct bench *b, const char *const *sets)
{
	memset(b, 0, sizeof *b);
	struct inidoc ov = { 0 };
	struct err e;
	for (; *sets; sets++)
		if (inidoc_add_override(&ov, *sets, &e))
			fail_msg("%s", e.msg);
	if (scenario_load(&b->sc, NULL, &ov, &e) || model_load_named(&b->model, b->sc.model, &e) ||
	    hw_load_named(&b->hw, b->sc.hardware, &e))
		fail_msg("%s", e.msg);
	inidoc_free(&ov);
	struct engine_setup setup = {
		.cfg = &b->sc.engine, .path = b->sc.path, .weights_at = b->sc.weights_at,
		.seed = b->sc.seed, .model = &b->model, .hw = &b->hw,
		.weights = precision_find(b->model.weights), .reqs = &b->reqs,
		.hooks = { b, on_token, on_done },
	};
	b->cls = &vllm_engine_class;
	b->eng = b->cls->create(&setup, &e);
	if (!b->eng)
		fail_msg("%s", e.msg);
}

static void bench_close(struct bench *b)
{
	b->cls->destroy(b->eng);
	reqtab_free(&b->reqs);
}

/* Submits a request of prompt tokens (own content unless key is shared)
 * and out output tokens at the bench's clock. */
static size_t submit(struct bench *b, int32_t prompt, int32_t out, uint64_t key)
{
	size_t i = reqtab_add(&b->reqs);
	struct request *r = &b->reqs.v[i];
	r->prompt_len = prompt;
	r->output_len = out;
	r->own_key = key ? key : 1000 + i;
	b->cls->submit(b->eng, i, b->now);
	return i;
}

/* Starts a step; returns its tokens (0: nothing to run) and keeps its
 * duration in *d. */
static int64_t start(struct bench *b, int64_t *d)
{
	*d = b->cls->start_step(b->eng, b->now);
	if (*d < 0)
		return 0;
	struct engine_gauges g;
	b->cls->gauges(b->eng, &g);
	return g.step_tokens;
}

static void finish(struct bench *b, int64_t d)
{
	b->now += d;
	b->cls->end_step(b->eng, b->now);
}

/* Async scheduling: EngineCore schedules step 2 while step 1 runs, so a
 * request that arrives during step 1 is first scheduled at step 1's end
 * (into step 3) and first runs when step 2 ends. Synchronously it runs in
 * step 2. */
static void async_admits_in_the_step_after_next(void **state)
{
	(void)state;
	for (int async = 0; async < 2; async++) {
		struct bench b;
		const char *sets[] = { async ? "engine.async_scheduling=true" : "engine.async_scheduling=false",
				       NULL };
		bench_open(&b, sets);
		int64_t d1, d2, d3;
		submit(&b, 64, 20, 0);
		assert_int_equal(start(&b, &d1), 64);
		b.now += d1 / 2;
		size_t late = submit(&b, 32, 4, 0);
		b.now -= d1 / 2;
		finish(&b, d1);
		int64_t end1 = b.now;
		int64_t t2 = start(&b, &d2);
		finish(&b, d2);
		int64_t t3 = start(&b, &d3);
		const struct request *r = &b.reqs.v[late];
		if (async) {
			assert_int_equal(t2, 1);          /* the first request's decode alone */
			assert_int_equal(t3, 1 + 32);
			assert_int_equal(r->first_scheduled_ns, end1);   /* seen at step 1's end */
			assert_int_equal(r->first_launch_ns, end1 + d2); /* run when step 2 ends */
		} else {
			assert_int_equal(t2, 1 + 32);
			assert_int_equal(r->first_scheduled_ns, end1);
			assert_int_equal(r->first_launch_ns, end1);
		}
		finish(&b, d3);
		bench_close(&b);
	}
}

/* The same rule at tensor parallel 4 (issue 11): vLLM 0.15 runs TP > 1 on
 * MultiprocExecutor, whose max_concurrent_batches is 2 under async
 * scheduling as UniProcExecutor's is, and EngineCore.step_with_batch_queue
 * pops (awaits) step k's output before it schedules step k+2; the scheduler
 * output reaches the workers over a shared-memory MessageQueue while step
 * k+1 runs. So a request that arrives during step 1 of Llama-3.1-70B at tp 4
 * waits in the batch queue exactly the step in flight when it is scheduled
 * (step 2), and its prefill's own step comes after. */
static void async_batch_queue_wait_at_tp4_is_one_step(void **state)
{
	(void)state;
	struct bench b;
	const char *sets[] = { "run.model=meta-llama/Llama-3.1-70B-Instruct", "engine.tensor_parallel_size=4",
			       NULL };
	bench_open(&b, sets);
	int64_t d1, d2, d3;
	for (int k = 0; k < 8; k++)
		submit(&b, 200, 50, 0);
	assert_int_equal(start(&b, &d1), 8 * 200);
	b.now += d1 / 3;
	size_t late = submit(&b, 500, 4, 0);
	b.now -= d1 / 3;
	finish(&b, d1);
	int64_t end1 = b.now;
	assert_int_equal(start(&b, &d2), 8);          /* the eight decodes alone */
	finish(&b, d2);
	assert_int_equal(start(&b, &d3), 8 + 500);    /* the late prompt, in one chunk */
	const struct request *r = &b.reqs.v[late];
	assert_int_equal(r->first_scheduled_ns, end1);
	assert_int_equal(r->first_launch_ns - r->first_scheduled_ns, d2);
	/* A decode step of a 70B model at tp 4 on H100: 35 GB of weights a
	 * GPU, so more than 10 ms and far less than the prefill step. */
	assert_true(d2 > 10000000 && d2 < d3);
	finish(&b, d3);
	assert_int_equal(b.tokens[late], 1);
	bench_close(&b);
}

/* max_num_seqs 2: A (2 output tokens) and C (10) run, B waits. A's last
 * token comes from step 2. Synchronously B is admitted into step 3. With
 * async scheduling step 3 was scheduled while step 2 ran: A (its last
 * token in flight) is not scheduled again but still holds its slot, so
 * step 3 is C's decode alone and B starts in step 4. */
static void async_frees_a_finished_slot_one_step_later(void **state)
{
	(void)state;
	for (int async = 0; async < 2; async++) {
		struct bench b;
		const char *sets[] = { "engine.max_num_seqs=2",
				       async ? "engine.async_scheduling=true" : "engine.async_scheduling=false",
				       NULL };
		bench_open(&b, sets);
		size_t a = submit(&b, 16, 2, 0);
		submit(&b, 16, 10, 0);
		size_t bb = submit(&b, 16, 3, 0);
		int64_t want_sync[] = { 32, 2, 1 + 16, 2 }, want_async[] = { 32, 2, 1, 1 + 16 };
		const int64_t *want = async ? want_async : want_sync;
		for (int k = 0; k < 4; k++) {
			int64_t d;
			assert_int_equal(start(&b, &d), want[k]);
			finish(&b, d);
		}
		/* A got exactly its two tokens: no step past max_tokens. */
		assert_int_equal(b.tokens[a], 2);
		assert_int_equal(b.done[a], 1);
		assert_true(b.tokens[bb] >= 1);
		int64_t d;
		while (start(&b, &d) > 0)
			finish(&b, d);
		assert_int_equal(b.tokens[a], 2);
		assert_int_equal(b.tokens[bb], 3);
		assert_int_equal(b.tokens[1], 10);
		bench_close(&b);
	}
}

/* KVCacheManager.allocate_slots registers a block's hash when it
 * allocates it: a second request with the same 256-token prefix,
 * admitted in the same step, hits 256 tokens. servesim 1 (0.8)
 * registered hashes when the step ended: no hit. */
static void blocks_hit_in_the_step_that_allocates_them(void **state)
{
	(void)state;
	const char *const versions[] = { "engine.vllm_version=0.15", "engine.vllm_version=0.8" };
	const int32_t want[] = { 256, 0 };
	for (int v = 0; v < 2; v++) {
		struct bench b;
		const char *sets[] = { versions[v], NULL };
		bench_open(&b, sets);
		for (int i = 0; i < 2; i++) {
			size_t k = reqtab_add(&b.reqs);
			struct request *r = &b.reqs.v[k];
			r->prompt_len = 300;
			r->output_len = 2;
			r->shared_key = 77;
			r->shared_len = 256;
			r->own_key = 500 + k;
			b.cls->submit(b.eng, k, 0);
		}
		int64_t d;
		assert_int_equal(start(&b, &d), 300 + 300 - want[v]);
		assert_int_equal(b.reqs.v[1].cached_tokens, want[v]);
		finish(&b, d);
		bench_close(&b);
	}
}

/* SchedulerConfig: with max_num_partial_prefills > 1 and no
 * long_prefill_token_threshold, chunks stop at 4% of max_model_len: 163
 * of 4096, so a 500-token prompt takes 4 steps (163, 163, 163, 11). */
static void partial_prefills_cap_chunks_at_4_percent(void **state)
{
	(void)state;
	static const struct {
		const char *set;
		int64_t chunks[4];
		int n;
	} cases[] = {
		{ "engine.max_num_partial_prefills=2", { 163, 163, 163, 11 }, 4 },
		{ "engine.max_num_partial_prefills=1", { 500 }, 1 },
	};
	for (size_t i = 0; i < 2; i++) {
		struct bench b;
		const char *sets[] = { cases[i].set, "engine.max_model_len=4096", "engine.async_scheduling=false",
				       NULL };
		bench_open(&b, sets);
		size_t r = submit(&b, 500, 2, 0);
		for (int k = 0; k < cases[i].n; k++) {
			int64_t d;
			assert_int_equal(start(&b, &d), cases[i].chunks[k]);
			assert_int_equal(b.tokens[r], 0);
			finish(&b, d);
		}
		assert_int_equal(b.tokens[r], 1);
		bench_close(&b);
	}
}

/* Runs the bench's engine until it has nothing to do. */
static void drain(struct bench *b)
{
	int64_t d;
	while ((d = b->cls->start_step(b->eng, b->now)) >= 0)
		finish(b, d);
}

static size_t submit_shared(struct bench *b, int32_t prompt, uint64_t group, int32_t shared)
{
	size_t i = reqtab_add(&b->reqs);
	struct request *r = &b->reqs.v[i];
	r->prompt_len = prompt;
	r->output_len = 2;
	r->shared_key = group;
	r->shared_len = shared;
	r->own_key = 1000 + i;
	b->cls->submit(b->eng, i, b->now);
	return i;
}

/* The offloading connector loads CPU-tier hits asynchronously: the request
 * waits (WAITING_FOR_REMOTE_KVS) while its blocks cross the host link and
 * no step is slowed by the transfer; then it runs with them as cached.
 * With nothing else to run the engine loop passes with empty steps.
 * A's 320-token prefix is pushed out of a 39-block pool by B and found
 * again in host memory by C. servesim 1 (0.8) instead ran C at once and
 * added the transfer to its step. */
static void cpu_tier_hits_park_until_loaded(void **state)
{
	(void)state;
	for (int v = 0; v < 2; v++) {
		struct bench b;
		const char *sets[] = { "engine.num_gpu_blocks_override=40", "engine.kv_offload_gib=1",
				       "engine.async_scheduling=false",
				       v ? "engine.vllm_version=0.8" : "engine.vllm_version=0.15", NULL };
		bench_open(&b, sets);
		submit_shared(&b, 330, 5, 320);
		drain(&b);
		submit_shared(&b, 600, 6, 0);
		drain(&b);
		struct engine_stats st;
		b.cls->stats(b.eng, &st);
		assert_int_equal(st.prefix_cpu_hits, 0);
		size_t c = submit_shared(&b, 330, 5, 320);
		int64_t d;
		int64_t tokens = start(&b, &d);
		b.cls->stats(b.eng, &st);
		int64_t n_cpu = st.prefix_cpu_hits / 16;
		assert_true(n_cpu >= 10);
		double block_s = st.kv_bytes_per_block / (b.hw.host_bandwidth_gb_s * 1e9);
		int64_t load_ns = llround((double)n_cpu * block_s * 1e9);
		if (v == 0) {
			/* Parked: the engine loop passes empty (200 us each) until
			 * the load is in, and no step runs meanwhile; C is
			 * scheduled at the end of the load exactly (the last pass
			 * is cut to it). */
			int64_t sent = b.now, steps = st.steps, passes = 0;
			while (tokens == 0 || b.reqs.v[c].first_scheduled_ns < 0) {
				assert_true(d <= 200000);
				assert_int_equal(b.reqs.v[c].first_scheduled_ns, -1);
				finish(&b, d);
				passes++;
				tokens = start(&b, &d);
			}
			assert_int_equal(passes, (load_ns + 199999) / 200000);
			assert_int_equal(b.reqs.v[c].first_scheduled_ns, sent + load_ns);
			b.cls->stats(b.eng, &st);
			assert_int_equal(st.steps, steps + 1);   /* the passes were no steps */
		} else {
			assert_true(d > load_ns);                 /* the load inside the step */
		}
		/* Either way C runs with its loaded blocks as cached. */
		int32_t cached = b.reqs.v[c].cached_tokens;
		assert_true(cached >= n_cpu * 16);
		assert_int_equal(tokens, 330 - cached);
		finish(&b, d);
		drain(&b);
		assert_int_equal(b.tokens[c], 2);
		bench_close(&b);
	}
}

/* Preemption under --scheduling-policy priority takes the running request
 * with the largest (priority, arrival), FCFS the last admitted. Blocks of
 * 16 tokens, 31-token prompts: each request holds 2 blocks until its
 * second output token, then needs a third.
 * Case 1: A(0) B(5) C(1) fill 6 blocks; at the third step A needs a block:
 * FCFS preempts C, priority preempts B.
 * Case 2: A(5) B(0) in 5 blocks: A takes the last free block, then B needs
 * one: FCFS preempts B itself, priority takes A back out of the step it
 * was just put in (so the step is B's decode alone either way). */
static void priority_preempts_the_lowest_priority(void **state)
{
	(void)state;
	static const struct {
		const char *blocks;
		int n;
		int32_t prio[3];
		int victim_fcfs, victim_prio;
	} cases[] = {
		{ "engine.num_gpu_blocks_override=7", 3, { 0, 5, 1 }, 2, 1 },
		{ "engine.num_gpu_blocks_override=6", 2, { 5, 0, 0 }, 1, 0 },
	};
	for (size_t c = 0; c < 2; c++) {
		for (int pol = 0; pol < 2; pol++) {
			struct bench b;
			const char *sets[] = { cases[c].blocks, "engine.enable_prefix_caching=false",
					       "engine.async_scheduling=false",
					       pol ? "engine.scheduling_policy=priority" : "engine.scheduling_policy=fcfs",
					       NULL };
			bench_open(&b, sets);
			for (int i = 0; i < cases[c].n; i++) {
				size_t k = reqtab_add(&b.reqs);
				b.reqs.v[k].prompt_len = 31;
				b.reqs.v[k].output_len = 6;
				b.reqs.v[k].own_key = 100 + k;
				b.reqs.v[k].priority = cases[c].prio[i];
				b.cls->submit(b.eng, k, 0);
			}
			int64_t d;
			assert_int_equal(start(&b, &d), 31 * cases[c].n);
			finish(&b, d);
			assert_int_equal(start(&b, &d), cases[c].n);
			finish(&b, d);
			int64_t t3 = start(&b, &d);
			int victim = pol ? cases[c].victim_prio : cases[c].victim_fcfs;
			for (int i = 0; i < cases[c].n; i++)
				assert_int_equal(b.reqs.v[i].preemptions, i == victim);
			assert_int_equal(t3, cases[c].n - 1);
			finish(&b, d);
			drain(&b);
			for (int i = 0; i < cases[c].n; i++)
				assert_int_equal(b.tokens[i], 6);
			bench_close(&b);
		}
	}
}

/* The waiting queue under priority: (priority, arrival), lower first,
 * except that a request holding its blocks (back from a CPU-tier load)
 * goes ahead of those that need blocks, so that a preempted request of a
 * better priority cannot wait at the head for blocks the ones behind it
 * hold. (The holder is faked: blocks are counted, none is allocated.) */
static void priority_queue_puts_block_holders_first(void **state)
{
	(void)state;
	struct bench b;
	const char *sets[] = { "engine.scheduling_policy=priority", NULL };
	bench_open(&b, sets);
	static const int32_t prio[] = { 3, 0, 5, 0, 1 };
	static const int holds[] = { 0, 0, 1, 0, 1 };
	for (size_t i = 0; i < 5; i++) {
		size_t k = reqtab_add(&b.reqs);
		b.reqs.v[k].prompt_len = 31;
		b.reqs.v[k].output_len = 2;
		b.reqs.v[k].priority = prio[i];
		b.reqs.v[k].n_blocks = holds[i];
		b.reqs.v[k].enqueue_ns = (int64_t)i;
		b.reqs.v[k].state = REQ_WAITING;
		vllm_enqueue_waiting(b.eng, k, false);
	}
	/* Holders 4 (priority 1) and 2 (5); then 1 and 3 (priority 0, by
	 * arrival), then 0 (3). */
	static const size_t want[] = { 4, 2, 1, 3, 0 };
	assert_int_equal(b.eng->waiting.len, 5);
	for (size_t k = 0; k < 5; k++)
		assert_int_equal(*reqq_at(&b.eng->waiting, k), want[k]);
	for (size_t i = 0; i < 5; i++)
		b.reqs.v[i].n_blocks = 0;
	bench_close(&b);
}

/* A synthetic workload's priorities (workload.priorities): each
 * conversation draws a class by weight from its own random stream, so the
 * lengths and arrivals do not move; the shares come out within sampling
 * error (3 sigma of 4,000 draws); a bad entry names the key. */
static void workloads_draw_priorities(void **state)
{
	(void)state;
	struct run_result plain, mixed;
	simulate(&plain, NULL, "workload.num_prompts=4000", "workload.random_output_len=2", NULL);
	simulate(&mixed, NULL, "workload.num_prompts=4000", "workload.random_output_len=2",
		 "workload.priorities=0:1, 7:3", "engine.scheduling_policy=priority", NULL);
	int64_t sevens = 0;
	for (size_t i = 0; i < mixed.reqs.len; i++) {
		const struct request *m = &mixed.reqs.v[i], *p = &plain.reqs.v[i];
		assert_true(m->priority == 0 || m->priority == 7);
		sevens += m->priority == 7;
		assert_int_equal(p->priority, 0);
		assert_int_equal(m->prompt_len, p->prompt_len);
		assert_int_equal(m->want_send_ns, p->want_send_ns);
	}
	assert_true(llabs(sevens - 3000) < 3 * 27);   /* sigma = sqrt(4000 × 0.75 × 0.25) */
	run_result_free(&plain);
	run_result_free(&mixed);
	struct cmd_result c;
	run_cmd(&c, "'%s' run --set workload.priorities=0:1,x:2", SERVESIM_BIN);
	assert_int_equal(c.status, 2);
	assert_contains(c.err, "[workload] priorities: expected an integer priority before ':', got 'x'");
	cmd_result_free(&c);
	run_cmd(&c, "'%s' run --set workload.priorities=0:0", SERVESIM_BIN);
	assert_int_equal(c.status, 2);
	assert_contains(c.err, "expected a weight > 0 after ':', got '0'");
	cmd_result_free(&c);
}

/* scheduling_policy = priority on a synthetic burst: with a queue (8
 * sequences at a time, 200 requests at once) the priority-0 half waits
 * less than the priority-5 half, by more than half of the latter's mean
 * TTFT; under FCFS the two halves wait alike (within 25%: the draws
 * interleave them). */
static double mean_ttft_of(const struct run_result *r, int32_t prio)
{
	double sum = 0;
	int n = 0;
	for (size_t i = 0; i < r->reqs.len; i++)
		if (r->reqs.v[i].priority == prio) {
			sum += (double)(r->reqs.v[i].first_token_ns - r->reqs.v[i].send_ns);
			n++;
		}
	return n ? sum / n : 0;
}

static void priorities_reorder_a_synthetic_queue(void **state)
{
	(void)state;
	struct run_result prio, fcfs;
	const char *w[] = { "workload.num_prompts=200", "workload.request_rate=inf",
			    "workload.random_output_len=16", "engine.max_num_seqs=8",
			    "workload.priorities=0:1, 5:1" };
	simulate(&prio, NULL, w[0], w[1], w[2], w[3], w[4], "engine.scheduling_policy=priority", NULL);
	simulate(&fcfs, NULL, w[0], w[1], w[2], w[3], w[4], NULL);
	double hi = mean_ttft_of(&prio, 0), lo = mean_ttft_of(&prio, 5);
	assert_true(hi > 0 && lo > 0);
	assert_true(hi < 0.5 * lo);
	assert_double_rel(mean_ttft_of(&fcfs, 0), mean_ttft_of(&fcfs, 5), 0.25);
	run_result_free(&prio);
	run_result_free(&fcfs);
}

/* A Mooncake trace may carry each request's priority; a bad one names the
 * file, the line and the key. */
static void traces_carry_priorities(void **state)
{
	(void)state;
	struct run_result r;
	simulate(&r, NULL, "workload.trace=" TEST_DATA_DIR "/timing/priority.jsonl",
		 "engine.scheduling_policy=priority", NULL);
	assert_int_equal(r.reqs.v[0].priority, 3);
	assert_int_equal(r.reqs.v[1].priority, -1);
	assert_int_equal(r.reqs.v[2].priority, 0);
	assert_int_equal(r.all.completed, 3);
	run_result_free(&r);
	struct cmd_result c;
	run_cmd(&c, "'%s' run --set workload.trace=" TEST_DATA_DIR "/timing/bad_priority.jsonl", SERVESIM_BIN);
	assert_int_equal(c.status, 2);
	assert_contains(c.err, "bad_priority.jsonl:2: priority: expected an integer");
	cmd_result_free(&c);
}

/* --stream-interval 4: the first token alone, then chunks of 4 (the last
 * with what is left): 10 tokens arrive as 1 + 4 + 4 + 1, three gaps, as
 * vllm bench serve counts a chunk; TPOT and the token count do not move. */
static void stream_interval_bunches_tokens(void **state)
{
	(void)state;
	struct run_result one, four;
	simulate(&one, NULL, "workload.num_prompts=1", "workload.random_output_len=10", NULL);
	simulate(&four, NULL, "workload.num_prompts=1", "workload.random_output_len=10",
		 "engine.stream_interval=4", NULL);
	assert_int_equal(one.all.itl.n, 9);
	assert_int_equal(four.all.itl.n, 3);
	assert_int_equal(four.all.total_output, 10);
	assert_int_equal(four.reqs.v[0].first_token_ns, one.reqs.v[0].first_token_ns);
	assert_int_equal(four.reqs.v[0].finish_ns, one.reqs.v[0].finish_ns);
	/* Every token is counted once: the 10 arrive within the first
	 * second, so that second's count is all of them. */
	assert_true(four.reqs.v[0].finish_ns - four.reqs.v[0].send_ns < 1000000000);
	assert_int_equal(four.peak_second_tokens, 10);
	run_result_free(&one);
	run_result_free(&four);
}

/* EngineCore drains its whole input queue before it schedules: two
 * requests reaching an idle engine at the same instant share its first
 * step. servesim 1 (0.8) started a step at the first and left the second
 * for the next. (Two API servers, so that the two reach the engine at
 * once: one server does one request after the other.) */
static void same_instant_arrivals_share_the_first_step(void **state)
{
	(void)state;
	struct run_result now, old;
	simulate(&now, NULL, "workload.num_prompts=2", "workload.request_rate=inf",
		 "engine.api_server_count=2", NULL);
	simulate(&old, NULL, "workload.num_prompts=2", "workload.request_rate=inf",
		 "engine.vllm_version=0.8", NULL);
	assert_int_equal(now.reqs.v[0].enqueue_ns, now.reqs.v[1].enqueue_ns);
	assert_int_equal(now.reqs.v[1].first_launch_ns, now.reqs.v[0].first_launch_ns);
	assert_int_equal(now.reqs.v[1].first_launch_ns, now.reqs.v[1].enqueue_ns);
	assert_true(old.reqs.v[1].first_launch_ns > old.reqs.v[0].first_launch_ns);
	run_result_free(&now);
	run_result_free(&old);
}

/* engine.vllm_version picks the defaults; a bad one names the key. */
static void versions_pick_the_defaults(void **state)
{
	(void)state;
	assert_true(vllmver_find("0.15.1")->async_scheduling);
	assert_true(vllmver_find("v0.13.0")->async_scheduling);
	assert_false(vllmver_find("0.12")->async_scheduling);
	assert_true(vllmver_find("0.12")->timing);
	assert_false(vllmver_find("0.9.2")->timing);
	/* 0.10: V1's timing with piecewise graphs only, and the hybrid KV
	 * cache manager; servesim 1's row (0.8, 0.9) has neither. */
	assert_true(vllmver_find("0.10.2")->timing);
	assert_true(vllmver_find("0.10.2")->piecewise_only);
	assert_true(vllmver_find("0.10")->cache_at_alloc);
	assert_false(vllmver_find("0.11")->piecewise_only);
	assert_true(vllmver_find("0.10")->hybrid_kv);
	assert_false(vllmver_find("0.9")->hybrid_kv);
	/* Shared experts on a second stream from 0.12 (#26440, #28406). */
	assert_true(vllmver_find("0.12.0")->shared_expert_stream);
	assert_true(vllmver_find("0.15.1")->shared_expert_stream);
	assert_false(vllmver_find("0.11.2")->shared_expert_stream);
	assert_ptr_equal(vllmver_find(""), vllmver_newest());
	assert_ptr_equal(vllmver_find("0.99"), vllmver_newest());
	assert_null(vllmver_find("0.4"));
	assert_string_equal(vllmver_find("0.7.3")->overhead, "vllm-v0");
	assert_string_equal(vllmver_find("0.5")->overhead, "vllm-v0-sync");
	assert_null(vllmver_find("1.0"));
	assert_null(vllmver_find("0.x"));
	struct cmd_result c;
	run_cmd(&c, "'%s' run --set engine.vllm_version=0.4", SERVESIM_BIN);
	assert_int_equal(c.status, 2);
	assert_contains(c.err, "--set engine.vllm_version: [engine] vllm_version: expected a vLLM version");
	cmd_result_free(&c);
	/* Pipeline parallelism turns the default off; asking for it is an error. */
	struct bench b;
	const char *pp[] = { "engine.pipeline_parallel_size=2", NULL };
	bench_open(&b, pp);
	struct engine_stats st;
	b.cls->stats(b.eng, &st);
	assert_false(st.async_scheduling);
	bench_close(&b);
	run_cmd(&c, "'%s' run --set engine.pipeline_parallel_size=2 --set engine.async_scheduling=true",
		SERVESIM_BIN);
	assert_int_equal(c.status, 2);
	assert_contains(c.err, "--set engine.async_scheduling: [engine] async_scheduling: not modelled");
	cmd_result_free(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(async_admits_in_the_step_after_next),
		cmocka_unit_test(async_batch_queue_wait_at_tp4_is_one_step),
		cmocka_unit_test(async_frees_a_finished_slot_one_step_later),
		cmocka_unit_test(blocks_hit_in_the_step_that_allocates_them),
		cmocka_unit_test(partial_prefills_cap_chunks_at_4_percent),
		cmocka_unit_test(cpu_tier_hits_park_until_loaded),
		cmocka_unit_test(priority_preempts_the_lowest_priority),
		cmocka_unit_test(priority_queue_puts_block_holders_first),
		cmocka_unit_test(workloads_draw_priorities),
		cmocka_unit_test(priorities_reorder_a_synthetic_queue),
		cmocka_unit_test(traces_carry_priorities),
		cmocka_unit_test(stream_interval_bunches_tokens),
		cmocka_unit_test(same_instant_arrivals_share_the_first_step),
		cmocka_unit_test(versions_pick_the_defaults),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
