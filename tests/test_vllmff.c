/*
 * The vLLM engine's fast-forward decode (engine/vllmff.c) against the
 * reference that visits every request every step (run_opts
 * no_fast_forward, --no-fast-forward): the same report, byte for byte,
 * and the same record for every request, over the engine's paths (async
 * and synchronous scheduling, hashing at allocation or at a step's end,
 * preemption under FCFS and priority, prefix sharing, chunked prefill, a
 * CPU tier, conversations, closed-loop users, a binding token budget,
 * clusters, P/D, load stages, time lines, sliding windows). The fast path must engage where it can (tokens fast-forwarded
 * > 0), and its runs keep the properties of any run: every token
 * delivered once, each request's clock forward.
 */
#include "simutil.h"

/* Runs scenario with the overrides (NULL-terminated) in full, with or
 * without fast-forward, with a time line when asked (as --out and
 * --format prom run). */
static void run_ff(struct run_result *res, bool ff, const char *const *sets, bool timeline)
{
	struct inidoc ov = { 0 };
	struct err e;
	for (size_t i = 1; sets[i]; i++)
		if (inidoc_add_override(&ov, sets[i], &e))
			fail_msg("%s", e.msg);
	char path[4096];
	if (catalog_resolve(CATALOG_SCENARIOS, sets[0], path, sizeof path, &e))
		fail_msg("%s", e.msg);
	struct scenario sc;
	struct run_opts o = { .no_fast_forward = !ff, .timeline = timeline };
	if (scenario_load(&sc, path, &ov, &e) || run_simulate_opts(&sc, res, &o, &e))
		fail_msg("%s", e.msg);
	inidoc_free(&ov);
}

static char *ff_report(struct run_result *r)
{
	const double pcts[] = { 25, 50, 90, 99 };
	struct report_opts ro = { pcts, 4, true, 0 };
	json_t *j = report_json(r, &ro);
	json_object_del(json_object_get(j, "servesim"), "version");
	char *text = json_dumps(j, JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(17));
	json_decref(j);
	if (!r->timeline)
		return text;
	/* The Prometheus text and OpenMetrics of the time line(s) too. */
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_non_null(f);
	fputs(text, f);
	report_prom(f, r);
	report_openmetrics(f, r, 0);
	fclose(f);
	free(text);
	return buf;
}

/* What a request's record says once it is done, fast-forward's own
 * bookkeeping (ff_*, run_seq) aside. */
static void assert_same_request(const struct request *a, const struct request *b, size_t i)
{
#define SAME(f)                                                                                  \
	do {                                                                                     \
		if (a->f != b->f)                                                                \
			fail_msg("request %zu: " #f " %lld with fast-forward, %lld without", i, \
				 (long long)a->f, (long long)b->f);                              \
	} while (0)
	SAME(state);
	SAME(num_computed);
	SAME(generated);
	SAME(pending);
	SAME(n_hashed);
	SAME(cached_tokens);
	SAME(preemptions);
	SAME(send_ns);
	SAME(enqueue_ns);
	SAME(first_scheduled_ns);
	SAME(first_token_ns);
	SAME(last_token_ns);
	SAME(finish_ns);
	SAME(max_itl_ns);
	SAME(prefill_own_ns);
	SAME(prefill_shared_ns);
	SAME(first_launch_ns);
	SAME(ttft_pad_ns);
	SAME(first_output_ns);
#undef SAME
}

/* Each case: must it fast-forward (tokens > 0), with a time line, the
 * scenario and its overrides. */
struct ff_case {
	bool must_ff, timeline;
	const char *sets[6];
};

static const struct ff_case cases[] = {
	{ true, false, { "c13-bench-serve", "workload.num_prompts=300", NULL } },
	{ true, false, { "c13-bench-serve", "workload.num_prompts=300", "engine.vllm_version=0.8", NULL } },
	{ true, false, { "c13-bench-serve", "workload.num_prompts=300", "engine.vllm_version=0.11", NULL } },
	{ true, false, { "c13-bench-serve", "workload.num_prompts=300", "engine.vllm_version=0.6",
			 "engine.async_scheduling=true", NULL } },
	{ true, false, { "c13-bench-serve", "workload.num_prompts=300", "engine.max_num_batched_tokens=300",
			 "engine.max_num_seqs=64", NULL } },
	{ true, false, { "c13-bench-serve", "workload.num_prompts=300", "engine.enable_prefix_caching=false", NULL } },
	{ false, false, { "c17-kv-pressure", "engine.num_gpu_blocks_override=300", "workload.num_prompts=150", NULL } },
	{ false, false, { "c17-kv-pressure", "engine.num_gpu_blocks_override=300", "engine.scheduling_policy=priority",
			  "workload.num_prompts=150", NULL } },
	{ false, false, { "c17-kv-pressure", "engine.num_gpu_blocks_override=300", "engine.kv_offload_gib=4",
			  "workload.num_prompts=150", NULL } },
	{ false, false, { "c14-system-prompt", "workload.num_prompts=150", "engine.num_gpu_blocks_override=400", NULL } },
	{ false, false, { "c21-chunked-prefill", "workload.num_prompts=100", NULL } },
	{ false, false, { "c13-bench-serve", "workload.turns=3", "workload.max_concurrency=8", NULL } },
	{ false, false, { "c13-bench-serve", "workload.users=10", "workload.num_prompts=120", NULL } },
	{ false, false, { "c13-bench-serve", "workload.num_prompts=150", "engine.stream_interval=4", NULL } },
	/* Runs that read each token's metrics by stage, replica or time:
	 * fast-forwarded since the steady hook takes a stage and a replica. */
	{ true, false, { "c13-bench-serve", "cluster.replicas=2", "workload.num_prompts=150", NULL } },
	{ true, true, { "c13-bench-serve", "cluster.replicas=3", "workload.num_prompts=200", NULL } },
	{ true, true, { "c13-bench-serve", "workload.stages=20:4,40:4,10:4", NULL } },
	{ true, false, { "c13-bench-serve", "workload.stages=30:3,60:3", "cluster.replicas=2", NULL } },
	/* P/D: the decode replicas fast-forward (the cluster's stats sum
	 * every replica's; the first is a prefill one, with no decodes). */
	{ true, true, { "c25-disagg-small", "workload.num_prompts=100", NULL } },
	{ true, true, { "c13-bench-serve", "workload.num_prompts=200", NULL } },
	/* Sliding windows (gpt-oss: 128 tokens on half the layers, so most
	 * requests cross it; Gemma 3: 512 on five layers of six; Phi-3 mini:
	 * 2047, not a whole number of blocks, so a lazy run would cross it
	 * inside a block): lazy runs on both sides of the window, cut where
	 * they would cross it. */
	{ true, false, { "c13-bench-serve", "run.model=gpt-oss-20b", "workload.num_prompts=300",
			 "workload.random_input_len=64", NULL } },
	{ true, false, { "c13-bench-serve", "run.model=gemma-3-1b", "workload.num_prompts=300",
			 "workload.random_input_len=400", NULL } },
	{ true, false, { "c13-bench-serve", "run.model=phi-3-mini-4k-instruct", "workload.num_prompts=200",
			 "workload.random_input_len=1980", NULL } },
};
enum { N_CASES = sizeof cases / sizeof cases[0] };

static void ff_equals_reference(void **state)
{
	(void)state;
	for (size_t c = 0; c < N_CASES; c++) {
		const struct ff_case *k = &cases[c];
		struct run_result ff, ref;
		run_ff(&ff, true, k->sets, k->timeline);
		run_ff(&ref, false, k->sets, k->timeline);
		char *a = ff_report(&ff), *b = ff_report(&ref);
		if (strcmp(a, b))
			fail_msg("case %zu (%s %s): the reports differ", c, k->sets[0], k->sets[1]);
		assert_int_equal(ff.reqs.len, ref.reqs.len);
		for (size_t i = 0; i < ff.reqs.len; i++)
			assert_same_request(&ff.reqs.v[i], &ref.reqs.v[i], i);
		/* The reference never fast-forwards; the plain vLLM cases,
		 * the stages, replicas and time lines must. */
		assert_int_equal(ref.engine.ff_tokens, 0);
		if (k->must_ff && ff.engine.ff_tokens <= 0)
			fail_msg("case %zu: no token was fast-forwarded", c);
		/* Each lazy run's planned passes are its tokens fast-forwarded
		 * but those a sync (preemption, a clipping budget) took back. */
		int64_t passes = 0;
		for (int x = 0; x < FF_CUTS; x++)
			passes += ff.engine.ff_run_passes[x];
		if (ff.engine.ff_tokens != passes - ff.engine.ff_sync_lost)
			fail_msg("case %zu: %lld tokens fast-forwarded, %lld passes planned, %lld lost", c,
				 (long long)ff.engine.ff_tokens, (long long)passes, (long long)ff.engine.ff_sync_lost);
		free(a);
		free(b);
		run_result_free(&ff);
		run_result_free(&ref);
	}
}

/* A fast-forwarded run delivers each output token once (the ITL
 * histogram holds one gap per token after the first), most of them
 * without a visit here, and each request's clock runs forward. */
static void ff_conserves_tokens_and_clocks(void **state)
{
	(void)state;
	struct run_result r;
	const char *const sets[] = { "c13-bench-serve", "workload.num_prompts=400", NULL };
	run_ff(&r, true, sets, false);
	int64_t gaps = 0, out = 0;
	for (size_t i = 0; i < r.reqs.len; i++) {
		const struct request *q = &r.reqs.v[i];
		assert_int_equal(q->state, REQ_FINISHED);
		assert_int_equal(q->generated, q->output_len);
		assert_int_equal(q->pending, 0);
		assert_true(q->send_ns <= q->enqueue_ns && q->enqueue_ns <= q->first_scheduled_ns);
		assert_true(q->first_scheduled_ns <= q->first_token_ns);
		assert_true(q->first_token_ns <= q->last_token_ns && q->last_token_ns <= q->finish_ns);
		/* The longest gap fits between the first token and the last. */
		assert_true(q->max_itl_ns >= 0 && q->max_itl_ns <= q->last_token_ns - q->first_token_ns);
		if (q->output_len > 1)
			assert_true(q->max_itl_ns > 0);
		gaps += q->output_len - 1;
		out += q->output_len;
	}
	assert_int_equal(r.all.itl.n, gaps);
	assert_int_equal(r.all.total_output, out);
	/* Most decode tokens skip the per-request visit (a request is
	 * visited where a block others may hit fills, at its last tokens
	 * and once in FF_RING - 8 passes; its new blocks come without a
	 * visit, vllmffcross.c); at least half must. */
	assert_true(r.engine.ff_tokens * 2 > out);
	/* The lazy runs' counts (tests/bench/ff_windows.sh): every run
	 * counted once by its cut and once by its length, and each planned
	 * pass a token fast-forwarded but those a sync took back. */
	int64_t runs = 0, passes = 0, by_len = 0;
	for (int k = 0; k < FF_CUTS; k++) {
		runs += r.engine.ff_runs[k];
		passes += r.engine.ff_run_passes[k];
	}
	for (int k = 0; k < FF_LEN_BUCKETS; k++)
		by_len += r.engine.ff_len_hist[k];
	assert_true(runs > 0);
	assert_int_equal(by_len, runs);
	assert_true(r.engine.ff_sync_cut <= runs);
	assert_int_equal(r.engine.ff_tokens, passes - r.engine.ff_sync_lost);
	run_result_free(&r);
}

/* Short of blocks under FCFS, a pass stays over the explicit set: the
 * victims (the tail of running) leave it one by one and every other lazy
 * request stays lazy (vllmff.c), where a sync visited all of them again.
 * A pool short enough to preempt hundreds of times: the same report and
 * records as the reference, far fewer syncs than preemptions, the
 * victims' lost passes counted (tokens = planned - lost). Under the
 * priority policy a victim may be one scheduled earlier in the pass: the
 * pass syncs (at least a sync for most preemptions). Fails if a
 * preemption syncs again (the first count) or if a lazy victim's decode
 * stays in the step (the reports differ). */
static void preemption_keeps_the_lazy(void **state)
{
	(void)state;
	for (int priority = 0; priority <= 1; priority++) {
		const char *const sets[] = { "c13-bench-serve", "workload.num_prompts=600",
					     "engine.num_gpu_blocks_override=400", "workload.request_rate=inf",
					     priority ? "engine.scheduling_policy=priority" : NULL, NULL };
		struct run_result ff, ref;
		run_ff(&ff, true, sets, false);
		run_ff(&ref, false, sets, false);
		char *a = ff_report(&ff), *b = ff_report(&ref);
		if (strcmp(a, b))
			fail_msg("priority %d: the reports differ", priority);
		for (size_t i = 0; i < ff.reqs.len; i++)
			assert_same_request(&ff.reqs.v[i], &ref.reqs.v[i], i);
		const struct engine_stats *st = &ff.engine;
		int64_t passes = 0;
		for (int x = 0; x < FF_CUTS; x++)
			passes += st->ff_run_passes[x];
		assert_int_equal(st->ff_tokens, passes - st->ff_sync_lost);
		if (st->preemptions < 100)
			fail_msg("priority %d: %lld preemptions, the case needs more", priority,
				 (long long)st->preemptions);
		if (!priority && st->ff_syncs * 10 > st->preemptions)
			fail_msg("FCFS: %lld syncs for %lld preemptions", (long long)st->ff_syncs,
				 (long long)st->preemptions);
		if (!priority)
			assert_true(st->ff_sync_cut > 0 && st->ff_tokens * 2 > ff.all.total_output);
		if (priority && st->ff_syncs * 2 < st->preemptions / 4)
			fail_msg("priority: %lld syncs for %lld preemptions", (long long)st->ff_syncs,
				 (long long)st->preemptions);
		free(a);
		free(b);
		run_result_free(&ff);
		run_result_free(&ref);
	}
}

/* A lazy run goes on across its request's new blocks (vllmffcross.c):
 * c13's requests decode 128 tokens, 8 blocks of 16, in private blocks
 * (random prompts), so a run that stopped at each block's end (before
 * 2026-12-03) made at least 8 runs a request and these make one or two
 * (the last tokens end a run; FF_RING - 8 passes reach past 128). Fails
 * if a run stops at its block again: more than a quarter of a run a
 * block. The same report and records as the reference meanwhile. */
static void new_blocks_need_no_visit(void **state)
{
	(void)state;
	const char *const sets[] = { "c13-bench-serve", "workload.num_prompts=400", NULL };
	struct run_result ff, ref;
	run_ff(&ff, true, sets, false);
	run_ff(&ref, false, sets, false);
	char *a = ff_report(&ff), *b = ff_report(&ref);
	assert_string_equal(a, b);
	for (size_t i = 0; i < ff.reqs.len; i++)
		assert_same_request(&ff.reqs.v[i], &ref.reqs.v[i], i);
	int64_t runs = 0;
	for (int k = 0; k < FF_CUTS; k++)
		runs += ff.engine.ff_runs[k];
	int64_t blocks = ff.all.total_output / ff.engine.block_size;
	if (runs * 4 > blocks)
		fail_msg("%lld lazy runs for %lld decode blocks", (long long)runs, (long long)blocks);
	assert_true(runs <= 2 * (int64_t)ff.reqs.len);
	free(a);
	free(b);
	run_result_free(&ff);
	run_result_free(&ref);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(ff_equals_reference),
		cmocka_unit_test(ff_conserves_tokens_and_clocks),
		cmocka_unit_test(preemption_keeps_the_lazy),
		cmocka_unit_test(new_blocks_need_no_visit),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
