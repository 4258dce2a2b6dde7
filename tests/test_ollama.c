/*
 * The Ollama and llama.cpp server engines (sim/engine/ollama.c): SEED C28 on
 * scenarios/c28-ollama-vs-vllm.ini (one Ollama slot queues eight users, vLLM
 * batches them, four slots sit between), then the engine's parts one by one:
 * slots, the pending queue and its 503s, the prompt cache, cold loads and
 * keep_alive, prompt truncation and context shift, partial offload, the
 * llama.cpp batch, Ollama's fields (C10), the reports, and bad input naming
 * the file, line and key. Every threshold states where it comes from.
 */
#include "simutil.h"

#include <sys/stat.h>

/* Writes body to dir/name and returns the path (static storage, two in
 * turn: copy it before the third call). */
static const char *write_file(const char *dir, const char *name, const char *body)
{
	static char path[2][160];
	static int which;
	char *p = path[which ^= 1];
	snprintf(p, sizeof path[0], "%s/%s", dir, name);
	test_write_text(p, body);
	return p;
}

/* The first round of c28: the eight users' first requests, all sent at 0. */
enum { USERS = 8 };

static double ttft_s(const struct request *q)
{
	return (double)(q->first_token_ns - q->send_ns) / 1e9;
}

static double mean_first_round_ttft(const struct run_result *r)
{
	double s = 0;
	for (int k = 0; k < USERS; k++)
		s += ttft_s(&r->reqs.v[k]);
	return s / USERS;
}

/* C28: one Ollama slot serves the eight first requests one after another:
 * each starts the very step its predecessor ends (same nanosecond), so the
 * k-th waits k whole answers; vLLM runs them in one batch. */
static void c28_one_slot_queues_vllm_batches(void **state)
{
	(void)state;
	struct run_result ol, vl;
	simulate(&ol, "c28-ollama-vs-vllm", NULL);
	/* vLLM refuses the model's 131072-token context on a 24 GB card
	 * (startup.h); 8192 is what a user of this workload would pass. */
	simulate(&vl, "c28-ollama-vs-vllm", "engine.kind=vllm", "engine.max_model_len=8192", NULL);
	assert_int_equal(ol.all.completed, 24);
	assert_int_equal(vl.all.completed, 24);
	for (int k = 0; k < USERS; k++)
		assert_int_equal(ol.reqs.v[k].send_ns, 0);
	for (int k = 1; k < USERS; k++) {
		assert_int_equal(ol.reqs.v[k].first_scheduled_ns, ol.reqs.v[k - 1].finish_ns);
		assert_true(ttft_s(&ol.reqs.v[k]) > ttft_s(&ol.reqs.v[k - 1]));
	}
	/* The 8th waited 7 answers of 255 decode steps each (5% for the
	 * prompts' own steps, which only add). */
	assert_true(ttft_s(&ol.reqs.v[USERS - 1]) > 0.95 * 7 * 255 * mean_tpot(&ol));
	/* vLLM: 8 prompts of 556 tokens are 4,448 prefill tokens, three chunked
	 * steps of 2,048 on an RTX 4090: every first TTFT under a second. */
	for (int k = 0; k < USERS; k++)
		assert_true(ttft_s(&vl.reqs.v[k]) < 1.0);
	/* Whole run: over 20× the mean TTFT (the queue holds up to 7 answers
	 * of ~5.6 s; vLLM's TTFT is a few prefill steps), and more than twice
	 * the output throughput (one weight read per step serves all eight,
	 * C19), at a TPOT within 10% (the same weights read per token). */
	assert_true(mean_ttft(&ol) > 20 * mean_ttft(&vl));
	assert_true(output_throughput(&vl) > 2 * output_throughput(&ol));
	assert_double_rel(mean_tpot(&ol), mean_tpot(&vl), 0.10);
	run_result_free(&ol);
	run_result_free(&vl);
}

/* C28 with OLLAMA_NUM_PARALLEL=4: four users start at once, the other
 * four wait for one of them to finish; the mean TTFT lands between. */
static void c28_four_slots(void **state)
{
	(void)state;
	struct run_result one, four, vl;
	simulate(&one, "c28-ollama-vs-vllm", NULL);
	simulate(&four, "c28-ollama-vs-vllm", "engine.num_parallel=4", NULL);
	/* vLLM refuses the model's 131072-token context on a 24 GB card
	 * (startup.h); 8192 is what a user of this workload would pass. */
	simulate(&vl, "c28-ollama-vs-vllm", "engine.kind=vllm", "engine.max_model_len=8192", NULL);
	/* The first arrival starts a step at once; the three that arrive in
	 * the same nanosecond join at its end (the run starts a step as soon
	 * as the engine is free). */
	int64_t first_free = INT64_MAX;
	for (int k = 0; k < 4; k++) {
		assert_true(four.reqs.v[k].first_scheduled_ns < four.reqs.v[0].first_token_ns);
		if (four.reqs.v[k].finish_ns < first_free)
			first_free = four.reqs.v[k].finish_ns;
	}
	for (int k = 4; k < USERS; k++)
		assert_true(four.reqs.v[k].first_scheduled_ns >= first_free);
	/* Four slots: under a quarter of one slot's first-round wait (at most
	 * one answer instead of up to seven), over three times vLLM's (half
	 * the users still wait a whole answer). */
	assert_true(mean_first_round_ttft(&four) < 0.25 * mean_first_round_ttft(&one));
	assert_true(mean_first_round_ttft(&four) > 3 * mean_first_round_ttft(&vl));
	run_result_free(&one);
	run_result_free(&four);
	run_result_free(&vl);
}

/* Two slots, four identical requests at t = 0: never more than two run;
 * the third and fourth take the slots in the step the first two end. */
static void slots_bound_concurrency(void **state)
{
	(void)state;
	struct run_result r;
	simulate(&r, "c28-ollama-vs-vllm", "workload.users=0", "workload.num_prompts=4",
		 "workload.turns=1", "workload.request_rate=inf", "engine.num_parallel=2",
		 "run.timeseries_interval_s=0.001", NULL);
	for (size_t i = 0; i < r.n_ts; i++)
		assert_true(r.ts[i].running <= 2);
	assert_int_equal(r.reqs.v[2].first_scheduled_ns, r.reqs.v[0].finish_ns);
	assert_int_equal(r.reqs.v[3].first_scheduled_ns, r.reqs.v[1].finish_ns);
	assert_int_equal(r.engine.num_parallel, 2);
	run_result_free(&r);
}

/* OLLAMA_MAX_QUEUE: while the model loads, the scheduler's pending channel
 * holds max_queue requests besides the one loading it; the rest get the
 * 503. Ten at once with max_queue 3: 1 + 3 served, 6 refused. Once loaded,
 * requests wait on the slots without bound (ollama/ollama#7758): 100 at
 * once on a warm model, none refused. */
static void pending_queue_overflow(void **state)
{
	(void)state;
	struct run_result cold, warm;
	simulate(&cold, "c28-ollama-vs-vllm", "workload.users=0", "workload.num_prompts=10",
		 "workload.turns=1", "workload.request_rate=inf", "engine.max_queue=3",
		 "engine.load_bandwidth_gb_s=2", NULL);
	assert_int_equal(cold.all.failed, 6);
	assert_int_equal(cold.all.completed, 4);
	assert_int_equal(cold.engine.rejected, 6);
	for (size_t i = 4; i < 10; i++) {
		assert_int_equal(cold.reqs.v[i].state, REQ_FAILED);
		assert_string_equal(cold.reqs.v[i].fail_reason,
				    "server busy, please try again.  maximum pending requests exceeded");
	}
	simulate(&warm, "c28-ollama-vs-vllm", "workload.users=0", "workload.num_prompts=100",
		 "workload.turns=1", "workload.request_rate=inf", "engine.max_queue=3",
		 "workload.random_output_len=8", NULL);
	assert_int_equal(warm.all.failed, 0);
	assert_int_equal(warm.peak_waiting, 99);
	run_result_free(&cold);
	run_result_free(&warm);
}

/* cache_prompt: a conversation's second turn finds the first turn's prompt
 * and answer in its slot, all but the last sampled token (never decoded):
 * prompt_0 + 50 - 1 tokens skipped, and a shorter TTFT. */
static void prompt_cache_reuses_the_slot(void **state)
{
	(void)state;
	struct run_result on, off;
	const char *sets[] = { "workload.users=1", "workload.turns=2", "workload.num_prompts=2",
			       "workload.think_time_s=1", "workload.random_output_len=50",
			       "workload.random_prefix_len=0", "workload.random_input_len=1000" };
	simulate(&on, "c28-ollama-vs-vllm", sets[0], sets[1], sets[2], sets[3], sets[4], sets[5],
		 sets[6], NULL);
	simulate(&off, "c28-ollama-vs-vllm", sets[0], sets[1], sets[2], sets[3], sets[4], sets[5],
		 sets[6], "engine.cache_prompt=false", NULL);
	const struct request *a = &on.reqs.v[0], *b = &on.reqs.v[1];
	assert_int_equal(b->conversation, a->conversation);
	assert_int_equal(a->cached_tokens, 0);
	assert_int_equal(b->cached_tokens, a->prompt_len + 50 - 1);
	assert_int_equal(b->prompt_eval_count, b->prompt_len);
	assert_int_equal(off.reqs.v[1].cached_tokens, 0);
	/* 1,049 of 2,050 prompt tokens skipped: at least 30% off the TTFT
	 * (prefill is near-linear here; the rest is the API path). */
	assert_true(ttft_s(b) < 0.7 * ttft_s(&off.reqs.v[1]));
	run_result_free(&on);
	run_result_free(&off);
}

/* Cold start: the first request loads the weights at load_bandwidth_gb_s
 * and shows it as load_duration and in TTFT; the model unloads after
 * keep_alive (300 s) idle, so a turn 400 s later loads it again, and one
 * 100 s later finds it warm. */
static void cold_load_and_keep_alive(void **state)
{
	(void)state;
	struct run_result late, soon;
	char dir[64], a[128], b[128];
	test_tmpdir(dir, sizeof dir, "ollama");
	snprintf(a, sizeof a, "workload.trace=%s", write_file(dir, "late.csv",
		 "timestamp_s,input_tokens,output_tokens\n0,500,100\n400,500,100\n"));
	snprintf(b, sizeof b, "workload.trace=%s", write_file(dir, "soon.csv",
		 "timestamp_s,input_tokens,output_tokens\n0,500,100\n100,500,100\n"));
	simulate(&late, "c28-ollama-vs-vllm", "workload.users=0", "workload.turns=1", a,
		 "workload.trace_format=csv", "engine.load_bandwidth_gb_s=2", NULL);
	simulate(&soon, "c28-ollama-vs-vllm", "workload.users=0", "workload.turns=1", b,
		 "workload.trace_format=csv", "engine.load_bandwidth_gb_s=2", NULL);
	test_rmdir(dir);
	double load = model_weight_bytes(&late.model, late.weights) / 2e9;
	assert_double_near((double)late.reqs.v[0].load_ns / 1e9, load, 1e-9);
	assert_true(ttft_s(&late.reqs.v[0]) > load);
	assert_int_equal(late.engine.model_loads, 2);
	assert_double_near((double)late.reqs.v[1].load_ns / 1e9, load, 1e-9);
	assert_int_equal(soon.engine.model_loads, 1);
	assert_int_equal(soon.reqs.v[1].load_ns, 0);
	/* 16 GB of f16 weights at 2 GB/s: about 8 s of a second cold TTFT. */
	assert_true(ttft_s(&late.reqs.v[1]) > ttft_s(&soon.reqs.v[1]) + 0.99 * load);
	run_result_free(&late);
	run_result_free(&soon);
}

/* Ollama truncates a prompt over num_ctx - 1 to num_keep (4 + BOS) plus the
 * end, leaving about half the context for the answer (llm/llama_server.go);
 * with truncate = false it refuses. llama-server refuses a prompt of
 * num_ctx tokens or more with HTTP 400. */
static void long_prompts(void **state)
{
	(void)state;
	struct run_result ol, strict, lc;
	const char *sets[] = { "workload.users=0", "workload.turns=1", "workload.num_prompts=3",
			       "workload.random_prefix_len=0", "workload.random_input_len=3000",
			       "workload.random_output_len=20", "engine.num_ctx=1024" };
	simulate(&ol, "c28-ollama-vs-vllm", sets[0], sets[1], sets[2], sets[3], sets[4], sets[5],
		 sets[6], NULL);
	simulate(&strict, "c28-ollama-vs-vllm", sets[0], sets[1], sets[2], sets[3], sets[4], sets[5],
		 sets[6], "engine.truncate=false", NULL);
	simulate(&lc, "c28-ollama-vs-vllm", sets[0], sets[1], sets[2], sets[3], sets[4], sets[5],
		 sets[6], "engine.kind=llamacpp", NULL);
	assert_int_equal(ol.all.completed, 3);
	assert_int_equal(ol.engine.truncated_prompts, 3);
	for (int i = 0; i < 3; i++)
		assert_int_equal(ol.reqs.v[i].prompt_eval_count, 1024 - (1024 - 5) / 2);
	assert_int_equal(strict.all.failed, 3);
	assert_contains(strict.reqs.v[0].fail_reason, "exceeds the context length");
	assert_int_equal(lc.all.failed, 3);
	assert_contains(lc.reqs.v[0].fail_reason, "exceeds the available context size");
	run_result_free(&ol);
	run_result_free(&strict);
	run_result_free(&lc);
}

/* An answer that outgrows the context: Ollama shifts it (drops half of what
 * follows num_keep) and finishes the 300 tokens; llama-server without
 * --context-shift stops at the context's end with a shorter answer. */
static void context_shift(void **state)
{
	(void)state;
	struct run_result ol, lc;
	const char *sets[] = { "workload.users=0", "workload.turns=1", "workload.num_prompts=1",
			       "workload.random_prefix_len=0", "workload.random_input_len=900",
			       "workload.random_output_len=300", "engine.num_ctx=1024" };
	simulate(&ol, "c28-ollama-vs-vllm", sets[0], sets[1], sets[2], sets[3], sets[4], sets[5],
		 sets[6], NULL);
	simulate(&lc, "c28-ollama-vs-vllm", sets[0], sets[1], sets[2], sets[3], sets[4], sets[5],
		 sets[6], "engine.kind=llamacpp", NULL);
	assert_int_equal(ol.reqs.v[0].generated, 300);
	assert_true(ol.engine.context_shifts >= 1);
	/* The KV holds at most 1,023 tokens: 900 + 123 - 1 sampled tokens. */
	assert_int_equal(lc.reqs.v[0].output_len, 1024 - 900);
	assert_int_equal(lc.engine.truncated_outputs, 1);
	run_result_free(&ol);
	run_result_free(&lc);
}

/* Partial offload on an RTX 4090 with Llama-3.1-8B Q4_K_M: num_gpu = 0
 * runs every layer on the CPU profile, what the CPU profile gives alone;
 * half the layers land in between, dominated by the CPU half (DDR5 streams
 * at 1/11 of GDDR6X). CPU decode is memory-bound: TPOT at least the bytes a
 * token reads (all but the input embedding) over the CPU's achievable
 * bandwidth, within 20% of it (KV reads, LM head FLOPs and the step
 * overhead add). */
static void partial_offload_cost(void **state)
{
	(void)state;
	struct run_result gpu, half, none, cpu;
	const char *sets[] = { "workload.users=0", "workload.turns=1", "workload.num_prompts=1",
			       "workload.random_output_len=64", "run.weights=q4_k_m" };
	simulate(&gpu, "c28-ollama-vs-vllm", sets[0], sets[1], sets[2], sets[3], sets[4], NULL);
	simulate(&half, "c28-ollama-vs-vllm", sets[0], sets[1], sets[2], sets[3], sets[4],
		 "engine.num_gpu=16", NULL);
	simulate(&none, "c28-ollama-vs-vllm", sets[0], sets[1], sets[2], sets[3], sets[4],
		 "engine.num_gpu=0", NULL);
	simulate(&cpu, "c28-ollama-vs-vllm", sets[0], sets[1], sets[2], sets[3], sets[4],
		 "run.hardware=cpu-ddr5-5600", NULL);
	assert_int_equal(gpu.engine.gpu_layers, 33);
	assert_int_equal(half.engine.gpu_layers, 16);
	assert_string_equal(half.engine.cpu_hardware, "cpu-ddr5-5600");
	assert_double_rel(mean_tpot(&none), mean_tpot(&cpu), 1e-6);
	assert_true(mean_tpot(&gpu) < mean_tpot(&half) && mean_tpot(&half) < mean_tpot(&none));
	assert_true(mean_tpot(&half) > 0.45 * mean_tpot(&none));
	double floor_s = model_active_weight_bytes(&cpu.model, cpu.weights) /
			 (cpu.hw.bandwidth_gb_s * 1e9 * cpu.hw.eff.bandwidth);
	assert_true(mean_tpot(&cpu) >= floor_s);
	assert_true(mean_tpot(&cpu) < 1.2 * floor_s);
	run_result_free(&gpu);
	run_result_free(&half);
	run_result_free(&none);
	run_result_free(&cpu);
}

/* llama-server's batch: a long prompt arriving while another slot decodes
 * is processed n_batch tokens per step (minus the decode), in the same
 * steps as that decode. The decoding request's worst gap is such a step;
 * Ollama's n_batch of 512 makes those steps 4× shorter (and more). */
static void batch_mixes_prompt_and_decodes(void **state)
{
	(void)state;
	char dir[64], set[200];
	test_tmpdir(dir, sizeof dir, "ollama");
	snprintf(set, sizeof set, "workload.trace=%s", write_file(dir, "two.csv",
		 "timestamp_s,input_tokens,output_tokens\n0,64,400\n1.0,6000,8\n"));
	struct run_result lc, ol;
	simulate(&lc, "c28-ollama-vs-vllm", "workload.users=0", "workload.turns=1",
		 "workload.random_prefix_len=0", set, "workload.trace_format=csv", "engine.kind=llamacpp",
		 "engine.num_parallel=2", "run.timeseries_interval_s=0.001", NULL);
	simulate(&ol, "c28-ollama-vs-vllm", "workload.users=0", "workload.turns=1",
		 "workload.random_prefix_len=0", set, "workload.trace_format=csv", "engine.num_parallel=2",
		 NULL);
	for (size_t i = 0; i < lc.n_ts; i++)
		assert_true(lc.ts[i].step_tokens <= 2048);
	assert_int_equal(lc.engine.n_batch, 2048);
	const struct request *dec = &lc.reqs.v[0];
	assert_true(dec->first_token_ns < lc.reqs.v[1].first_scheduled_ns);
	assert_true(dec->finish_ns > lc.reqs.v[1].first_token_ns);
	/* A step with 2,047 prompt tokens is over ten decode steps long. */
	assert_true((double)dec->max_itl_ns / 1e9 > 10 * itl_p(&lc, 50));
	assert_true(ol.reqs.v[0].max_itl_ns < dec->max_itl_ns / 3);
	run_result_free(&lc);
	run_result_free(&ol);
	test_rmdir(dir);
}

/* C10: Ollama's fields give prefill and decode rates; prefill is far
 * faster. On the RTX 4090 a 512-token prompt runs near compute peak and a
 * decode reads 4.9 GB for one token: over 20× apart. */
static void c10_rates(void **state)
{
	(void)state;
	struct run_result r;
	simulate(&r, "c28-ollama-vs-vllm", "workload.users=0", "workload.turns=1",
		 "workload.num_prompts=1", "workload.random_prefix_len=0", "workload.random_input_len=512",
		 "workload.random_output_len=128", "run.weights=q4_k_m", NULL);
	const struct request *q = &r.reqs.v[0];
	double prompt_ns = (double)(q->first_token_ns - q->first_scheduled_ns);
	double eval_ns = (double)(q->last_token_ns - q->first_token_ns);
	double prefill = q->prompt_eval_count / prompt_ns * 1e9, decode = q->output_len / eval_ns * 1e9;
	assert_int_equal(q->prompt_eval_count, 512);
	assert_true(prefill > 20 * decode);
	run_result_free(&r);
}

/* --format prom uses llama-server's names; --out's requests.csv carries
 * Ollama's fields and quotes a failure reason that holds a comma. */
static void reports(void **state)
{
	(void)state;
	struct run_result r;
	simulate(&r, "c28-ollama-vs-vllm", "workload.users=0", "workload.num_prompts=6",
		 "workload.turns=1", "workload.request_rate=inf", "engine.max_queue=2",
		 "engine.load_bandwidth_gb_s=2", NULL);
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	report_prom(m, &r);
	fclose(m);
	assert_contains(buf, "# TYPE llamacpp:prompt_tokens_total counter\n");
	assert_contains(buf, "llamacpp:n_decode_total ");
	assert_contains(buf, "llamacpp:predicted_tokens_seconds ");
	assert_null(strstr(buf, "vllm:"));
	free(buf);

	char dir[64], path[128], line[1024];
	test_tmpdir(dir, sizeof dir, "ollama");
	struct err e;
	assert_int_equal(report_csv(dir, &r, &e), 0);
	snprintf(path, sizeof path, "%s/requests.csv", dir);
	FILE *f = fopen(path, "r");
	assert_non_null(f);
	int columns = -1, rows = 0, failed = 0;
	while (fgets(line, sizeof line, f)) {
		int n = 1;
		bool quoted = false;
		for (char *c = line; *c; c++) {
			quoted ^= *c == '"';
			n += *c == ',' && !quoted;
		}
		if (columns < 0) {
			assert_contains(line, ",load_duration,prompt_eval_count,prompt_eval_duration,");
			columns = n;
		} else {
			assert_int_equal(n, columns);
			failed += strstr(line, ",failed,\"server busy, please try again.") != NULL;
			rows++;
		}
	}
	fclose(f);
	assert_int_equal(rows, 6);
	assert_int_equal(failed, 3);   /* 1 loading + 2 pending served */
	unlink(path);
	snprintf(path, sizeof path, "%s/timeseries.csv", dir);
	unlink(path);
	rmdir(dir);
	run_result_free(&r);
}

/* Bad input: a scenario file in a temporary folder; the error names the
 * file and line of the key and says what was expected. */
static void bad_input(const char *body, const char *key_line, const char *const *needles)
{
	char dir[64], path[128], at[160];
	test_tmpdir(dir, sizeof dir, "ollama");
	snprintf(path, sizeof path, "%s/bad.ini", dir);
	test_write_text(path, body);
	/* The line of key_line in body. */
	int line = 1;
	const char *hit = strstr(body, key_line);
	assert_non_null(hit);
	for (const char *c = body; c < hit; c++)
		line += *c == '\n';
	struct scenario sc;
	struct run_result r;
	struct err e = { { 0 } };
	memset(&r, 0, sizeof r);
	int rc = scenario_load(&sc, path, NULL, &e);
	if (rc == 0)
		rc = run_simulate(&sc, &r, &e);
	run_result_free(&r);
	assert_int_equal(rc, -1);
	snprintf(at, sizeof at, "%s:%d:", path, line);
	assert_contains(e.msg, at);
	for (; *needles; needles++)
		assert_contains(e.msg, *needles);
	unlink(path);
	rmdir(dir);
}

#define OLLAMA_HEAD "[run]\nmodel = llama-3.1-8b\nhardware = rtx-4090\n"

static void bad_inputs(void **state)
{
	(void)state;
	bad_input(OLLAMA_HEAD "[engine]\nkind = ollama\nnum_parallel = 0\n", "num_parallel",
		  (const char *const[]){ "[engine] num_parallel", "a slot count >= 1", "'0'", NULL });
	bad_input("[run]\nmodel = llama-2-7b\nhardware = m2-max\n[engine]\nkind = ollama\nnum_ctx = 8192\n",
		  "num_ctx", (const char *const[]){ "[engine] num_ctx", "max_position_embeddings (4096", "8192", NULL });
	bad_input(OLLAMA_HEAD "weights = q3_k\n[engine]\nkind = ollama\n", "weights",
		  (const char *const[]){ "[run] weights", "q4_k_m", "q4_0", "'q3_k'", NULL });
	bad_input(OLLAMA_HEAD "weights = fp8\n[engine]\nkind = llamacpp\n", "weights",
		  (const char *const[]){ "GGUF type", "f16, q8_0, q6_k, q5_k_m, q4_k_m, q4_0", "'fp8'", NULL });
	bad_input(OLLAMA_HEAD "[engine]\nkind = ollama\nnum_gpu = 40\n", "num_gpu",
		  (const char *const[]){ "[engine] num_gpu", "0 to 33", "40", NULL });
	bad_input(OLLAMA_HEAD "[engine]\nkind = ollama\nnum_gpu = 10\ncpu_hardware = h100-sxm\n",
		  "cpu_hardware", (const char *const[]){ "expected a CPU profile", "h100-sxm", NULL });
	/* The run reads cpu_hardware and passes it in: a profile that does not
	 * exist is refused even where every layer fits on the device. */
	bad_input(OLLAMA_HEAD "[engine]\nkind = ollama\ncpu_hardware = no-such-cpu\n", "cpu_hardware",
		  (const char *const[]){ "[engine] cpu_hardware", "no-such-cpu", NULL });
	/* Looked up whatever the kind (vLLM ignores Ollama's key, as every
	 * kind the others', but not a name that resolves to nothing or to a
	 * GPU), and at load: it was looked up only by a llama.cpp run. */
	bad_input(OLLAMA_HEAD "[engine]\nkind = vllm\ncpu_hardware = no-such-cpu\n", "cpu_hardware",
		  (const char *const[]){ "[engine] cpu_hardware", "unknown hardware 'no-such-cpu'", NULL });
	bad_input(OLLAMA_HEAD "[engine]\ncpu_hardware = h100-sxm\n", "cpu_hardware",
		  (const char *const[]){ "[engine] cpu_hardware: expected a CPU profile (class = cpu)", "'h100-sxm'", NULL });
	bad_input(OLLAMA_HEAD "[engine]\nkind = ollama\ncpu_hardware = h100-sxm\n", "cpu_hardware",
		  (const char *const[]){ "expected a CPU profile", NULL });
	struct scenario sc;
	struct err e;
	struct inidoc ov = { 0 };
	assert_int_equal(inidoc_add_override(&ov, "engine.cpu_hardware=cpu-ddr5-5600", &e), 0);
	assert_int_equal(scenario_load(&sc, NULL, &ov, &e), 0);   /* a CPU profile: taken, and ignored by vLLM */
	inidoc_free(&ov);
	bad_input(OLLAMA_HEAD "[engine]\nkind = ollama\nkeep_alive_s = soon\n", "keep_alive_s",
		  (const char *const[]){ "[engine] keep_alive_s", "inf", NULL });
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(c28_one_slot_queues_vllm_batches),
		cmocka_unit_test(c28_four_slots),
		cmocka_unit_test(slots_bound_concurrency),
		cmocka_unit_test(pending_queue_overflow),
		cmocka_unit_test(prompt_cache_reuses_the_slot),
		cmocka_unit_test(cold_load_and_keep_alive),
		cmocka_unit_test(long_prompts),
		cmocka_unit_test(context_shift),
		cmocka_unit_test(partial_offload_cost),
		cmocka_unit_test(batch_mixes_prompt_and_decodes),
		cmocka_unit_test(c10_rates),
		cmocka_unit_test(reports),
		cmocka_unit_test(bad_inputs),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
