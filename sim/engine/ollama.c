/*
 * The Ollama and llama.cpp server (llama-server) engines: a fixed number of
 * slots, each with a fixed context allocated up front, fed by one FIFO
 * queue. Both are llama-server underneath: current Ollama starts the
 * upstream binary per model (ollama llm/llama_server.go: `-c num_ctx ×
 * num_parallel -np num_parallel -b num_batch -ub num_batch`), so one
 * implementation serves both classes and the differences are data (struct
 * flavor below): defaults, prompt truncation, context shift, cold loads and
 * the scheduler's pending queue.
 *
 * One step is one pass of llama-server's update_slots()
 * (tools/server/server-context.cpp):
 *   1. every generating slot adds its last sampled token (a decode);
 *   2. with continuous batching (the default), slots still processing a
 *      prompt add prompt tokens, in slot order, while the batch holds fewer
 *      than n_batch tokens. So llama.cpp does mix one slot's prompt chunk
 *      with the other slots' decodes, up to n_batch tokens: there is no
 *      separate prefill phase, but no token budget shared out as vLLM's
 *      either: a long prompt takes whatever the decodes leave;
 *   3. llama_decode() runs the batch as physical micro-batches of at most
 *      n_ubatch tokens, each a forward pass that reads the weights again.
 *      With one KV stream per slot (explicit -np, Ollama's case) the split
 *      is split_equal(): the decodes go together and each prompt chunk goes
 *      alone; with the unified cache of llama-server's automatic -np it is
 *      split_simple(): consecutive n_ubatch-token pieces of the batch.
 * Tokens are sampled after the whole batch, so every token of a step lands
 * at its end. A slot that finishes its prompt samples its first token in
 * that step.
 *
 * Prompt cache (cache_prompt, on by default in both): a slot keeps the KV of
 * its last request; a new request reuses the longest common prefix and
 * computes the rest, at least one token (llama-server [TAG_PROMPT_LOGITS]).
 * A free slot is chosen as get_available_slot() chooses it: the one whose
 * cache covers more than 10% of the prompt (--slot-prompt-similarity 0.10)
 * with the longest match, else the least recently used.
 *
 * Cold loads (Ollama): the model is loaded by the first request and again
 * after it sat idle keep_alive seconds (server/sched.go; OLLAMA_KEEP_ALIVE
 * 5m), at load_bandwidth_gb_s; the waiting requests see it as
 * load_duration and in TTFT. llama-server loads its model at start-up,
 * before it accepts requests: the run starts warm.
 *
 * Ollama's bounded queue: GetRunner() puts a request into the scheduler's
 * pendingReqCh, buffered to OLLAMA_MAX_QUEUE (512), and answers HTTP 503
 * "server busy, please try again.  maximum pending requests exceeded" when it
 * is full. A loaded model takes requests out at once: they then wait on the
 * runner's num_parallel semaphore, which has no bound (ollama/ollama#7758,
 * maintainer's comment of 2024-11-21, reproduced on main in 2026). The
 * channel therefore fills only while the scheduler waits on a load; here up
 * to max_queue requests wait for a load besides the one that started it,
 * and the next ones fail with the 503.
 *
 * Partial offload: num_gpu layers on the device, the rest on a CPU profile,
 * both costed every micro-batch: llama.cpp puts the last num_gpu repeating
 * layers on the GPU and the output layer there too once num_gpu exceeds the
 * layer count; the activations cross the host link once per micro-batch.
 * Every per-layer term of the step-time model (weights, FLOPs, attention)
 * is proportional to the layers, so each device's part is its own
 * struct perf's time scaled by its share of the layers.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "engine_int.h"
#include "evq.h"
#include "num.h"
#include "simassert.h"
#include "xalloc.h"

enum slot_state { SLOT_IDLE, SLOT_PROMPT, SLOT_GENERATING };
enum model_state { MODEL_UNLOADED, MODEL_LOADING, MODEL_LOADED };

/* What tells Ollama from llama-server. */
struct flavor {
	const char *name;
	bool cold_loads;          /* loads on demand, unloads after keep_alive */
	bool truncates;           /* Ollama truncates a long prompt (truncate = true) */
	bool context_shift;       /* Ollama starts llama-server with --context-shift */
	int64_t n_batch, n_ubatch;
	int64_t num_parallel;     /* the default */
	bool unified_by_default;  /* llama-server -np auto: one KV buffer for all slots */
};

/* Ollama: api/types.go DefaultOptions (NumBatch 512, NumKeep 4), passed as
 * -b and -ub; OLLAMA_NUM_PARALLEL 1 since v0.10.0 (#11330). llama-server:
 * common/common.h (n_batch 2048, n_ubatch 512), -np -1 = auto = 4 slots
 * on a unified KV cache, --context-shift off. */
static const struct flavor ollama_flavor = { "ollama", true, true, true, 512, 512, 1, false };
static const struct flavor llamacpp_flavor = { "llamacpp", false, false, false, 2048, 512, 4, true };

/* Ollama's num_keep (4) plus the BOS token the tokenizer adds. */
#define OLLAMA_NUM_KEEP 5
/* llama-server --slot-prompt-similarity. */
#define SLOT_PROMPT_SIMILARITY 0.10
/* GPU memory llama.cpp's compute buffers and the driver take (Ollama's
 * estimate reserves a graph buffer of this order for 512-token batches). */
#define GPU_RESERVE_BYTES (0.5 * GIB)
/* macOS lets the GPU wire about 75% of unified memory by default (Metal's
 * recommendedMaxWorkingSetSize), which Ollama reports as VRAM. */
#define APPLE_GPU_SHARE 0.75

struct slot {
	int state;                /* enum slot_state */
	size_t req;               /* the request being served */
	int64_t n_tokens;         /* tokens whose KV the slot holds */
	int64_t n_prompt;         /* prompt tokens to process (after truncation) */
	bool altered;             /* truncated or shifted: only the first num_keep tokens stay in place */
	/* Prompt cache: the first cache_len tokens of request cache_req's
	 * sequence are in the KV (valid when has_cache). */
	bool has_cache;
	size_t cache_req;
	int64_t cache_len;
	int64_t last_used_ns;     /* for least-recently-used choice; -1 = never */
};

/* One sequence's part of a step's batch. */
struct entry {
	int slot;
	int64_t n, ctx;           /* tokens, and tokens already in its KV */
	bool decode;
	bool samples;             /* its last token produces a sampled token */
};

struct engine {
	struct engine_setup setup;
	const struct flavor *fl;
	struct perf gpu, cpu;             /* the device, and the CPU part of an offload */
	struct hw_profile cpu_hw;
	bool on_cpu_only;                 /* the device is a CPU: one perf, all layers */
	double gpu_frac;                  /* share of the repeating layers on the device */
	bool output_on_gpu;
	double xfer_s_per_token;          /* activations over the host link */
	int64_t n_parallel, n_ctx, n_batch, n_ubatch, max_queue, n_keep;
	bool unified, cache_prompt, truncate, context_shift;
	int64_t keep_alive_ns;            /* INT64_MAX = never unload */
	int64_t load_ns;
	int model;                        /* enum model_state */
	int64_t load_end_ns, idle_since_ns;
	int64_t n_pending;                /* waiting for the load besides the one that started it */
	struct slot *slots;
	size_t *queue;                    /* FIFO of request indices: [q_head, q_len) */
	size_t q_head, q_len, q_cap;
	struct entry *batch;
	size_t n_batch_entries, cap_batch;
	bool step_is_load;
	int64_t step_tokens;
	size_t *finished;
	size_t n_finished, cap_finished;
	struct engine_stats st;
};

static struct request *req(struct engine *g, size_t i)
{
	return engine_req(&g->setup, i);
}

static int64_t min64(int64_t a, int64_t b)
{
	return a < b ? a : b;
}

static int64_t max64(int64_t a, int64_t b)
{
	return a > b ? a : b;
}

/* ---- the prompt cache ---------------------------------------------- */

/* How many leading tokens of a's and b's sequences are equal, up to limit.
 * Identity is the workload's, as vLLM's block hashes see it: position p is
 * (shared_key, p) below shared_len and (own_key, p) after it, so a
 * conversation's next turn matches the previous prompt and its output;
 * Mooncake requests compare their 512-token block ids. */
static int64_t common_prefix(const struct request *a, const struct request *b, int64_t limit)
{
	if (limit <= 0)
		return 0;
	if (a->n_block512 > 0 || b->n_block512 > 0) {
		int64_t j = 0;
		while (j < limit / 512 && j < a->n_block512 && j < b->n_block512 &&
		       a->block512[j] == b->block512[j])
			j++;
		return j * 512;
	}
	int64_t sa = a->shared_len, sb = b->shared_len;
	if (sa > 0 || sb > 0) {
		if (sa == 0 || sb == 0 || a->shared_key != b->shared_key)
			return 0;
		if (sa != sb)
			return min64(min64(sa, sb), limit);
		if (sa >= limit)
			return limit;
	}
	return a->own_key == b->own_key ? limit : max64(sa, 0);
}

/* The prompt tokens of r a slot's cache can give. */
static int64_t cached_prefix(struct engine *g, const struct slot *s, size_t r_idx)
{
	if (!g->cache_prompt || !s->has_cache)
		return 0;
	const struct request *r = req(g, r_idx);
	int64_t limit = min64(s->cache_len, r->prompt_eval_count);
	if (r->prompt_eval_count < r->prompt_len)     /* truncated: the tail moved */
		limit = min64(limit, g->n_keep);
	return common_prefix(req(g, s->cache_req), r, limit);
}

/* get_available_slot(): the free slot whose cache covers the largest part
 * of the prompt above the similarity threshold, else the least recently
 * used (never-used first, then the lowest id). */
static int pick_slot(struct engine *g, size_t r_idx)
{
	int best = -1;
	int64_t best_lcp = 0;
	double prompt = (double)req(g, r_idx)->prompt_eval_count;
	for (int i = 0; i < (int)g->n_parallel; i++) {
		const struct slot *s = &g->slots[i];
		if (s->state != SLOT_IDLE)
			continue;
		int64_t lcp = cached_prefix(g, s, r_idx);
		if (lcp > best_lcp && (double)lcp > SLOT_PROMPT_SIMILARITY * prompt) {
			best = i;
			best_lcp = lcp;
		}
	}
	if (best >= 0)
		return best;
	for (int i = 0; i < (int)g->n_parallel; i++) {
		const struct slot *s = &g->slots[i];
		if (s->state == SLOT_IDLE && (best < 0 || s->last_used_ns < g->slots[best].last_used_ns))
			best = i;
	}
	return best;
}

/* ---- the queue ----------------------------------------------------- */

static void queue_push(struct engine *g, size_t idx)
{
	xgrow(&g->queue, &g->q_cap, g->q_len + 1, sizeof *g->queue);
	g->queue[g->q_len++] = idx;
}

static size_t queue_waiting(const struct engine *g)
{
	return g->q_len - g->q_head;
}

/* Gives free slots to waiting requests, first come first served. */
static void assign_slots(struct engine *g, int64_t now)
{
	while (queue_waiting(g) > 0) {
		size_t idx = g->queue[g->q_head];
		int i = pick_slot(g, idx);
		if (i < 0)
			return;
		g->q_head++;
		struct slot *s = &g->slots[i];
		struct request *r = req(g, idx);
		int64_t n_past = cached_prefix(g, s, idx);
		if (n_past >= r->prompt_eval_count)
			n_past = r->prompt_eval_count - 1;   /* at least one token gives the logits */
		s->state = SLOT_PROMPT;
		s->req = idx;
		s->n_prompt = r->prompt_eval_count;
		s->n_tokens = n_past;
		s->altered = r->prompt_eval_count < r->prompt_len;
		s->has_cache = false;
		s->last_used_ns = now;
		r->state = REQ_RUNNING;
		r->first_scheduled_ns = now;
		r->cached_tokens = (int32_t)n_past;
		g->st.prefix_queries += r->prompt_eval_count;
		g->st.prefix_hits += n_past;
	}
}

/* ---- step cost ----------------------------------------------------- */

static double layer_part(const struct perf_breakdown *b)
{
	return b->dense + b->experts + b->attn_prefill + b->attn_decode;
}

/* One micro-batch (a forward pass) on the device, the CPU or both: its
 * breakdown added to *acc, its seconds returned. */
static double ubatch_time(struct engine *g, const struct perf_step *ps, struct perf_breakdown *acc)
{
	struct perf_breakdown bg = { 0 }, bc = { 0 }, r = { 0 };
	double f = g->gpu_frac;
	bool gpu_part = g->on_cpu_only || f > 0 || g->output_on_gpu;
	bool cpu_part = !g->on_cpu_only && (f < 1 || !g->output_on_gpu);
	if (gpu_part)
		perf_step_time(&g->gpu, ps, &bg);
	if (cpu_part)
		perf_step_time(&g->cpu, ps, &bc);
	if (!cpu_part) {
		r = bg;
	} else if (!gpu_part) {
		r = bc;
	} else {
		r.dense = f * bg.dense + (1 - f) * bc.dense;
		r.experts = f * bg.experts + (1 - f) * bc.experts;
		r.attn_prefill = f * bg.attn_prefill + (1 - f) * bc.attn_prefill;
		r.attn_decode = f * bg.attn_decode + (1 - f) * bc.attn_decode;
		r.lm_head = g->output_on_gpu ? bg.lm_head : bc.lm_head;
		r.overhead = bg.overhead + bc.overhead + g->xfer_s_per_token * (double)ps->tokens;
	}
	r.total = layer_part(&r) + r.lm_head + r.allreduce + r.overhead;
	engine_time_add(acc, &r, 0, r.total);
	return r.total;
}

/* Adds n tokens of e to the micro-batch being filled. */
static void ubatch_add(struct engine *g, struct perf_step *ps, const struct entry *e, int64_t off,
		       int64_t n)
{
	perf_step_add(ps, &g->gpu, n, e->ctx + off, e->samples && off + n == e->n);
}

/* The batch as llama_decode() runs it (see the header): seconds, the
 * breakdown added to *acc. decodes_only: what the step's decodes alone
 * would take (for the ITL breakdown). */
static double batch_time(struct engine *g, bool decodes_only, struct perf_breakdown *acc)
{
	struct perf_step ps;
	double t = 0;
	int64_t in_ub = 0;
	perf_step_clear(&ps);
	if (g->unified && !decodes_only) {
		/* split_simple: consecutive pieces of n_ubatch tokens. */
		for (size_t k = 0; k < g->n_batch_entries; k++) {
			const struct entry *e = &g->batch[k];
			for (int64_t off = 0; off < e->n;) {
				int64_t take = min64(e->n - off, g->n_ubatch - in_ub);
				ubatch_add(g, &ps, e, off, take);
				off += take;
				in_ub += take;
				if (in_ub == g->n_ubatch) {
					t += ubatch_time(g, &ps, acc);
					perf_step_clear(&ps);
					in_ub = 0;
				}
			}
		}
		return in_ub > 0 ? t + ubatch_time(g, &ps, acc) : t;
	}
	/* split_equal: the one-token decodes together, each prompt chunk alone. */
	for (size_t k = 0; k < g->n_batch_entries; k++) {
		const struct entry *e = &g->batch[k];
		if (!e->decode)
			continue;
		ubatch_add(g, &ps, e, 0, 1);
		if (++in_ub == g->n_ubatch) {
			t += ubatch_time(g, &ps, acc);
			perf_step_clear(&ps);
			in_ub = 0;
		}
	}
	if (in_ub > 0) {
		t += ubatch_time(g, &ps, acc);
		perf_step_clear(&ps);
	}
	for (size_t k = 0; k < g->n_batch_entries && !decodes_only; k++) {
		const struct entry *e = &g->batch[k];
		for (int64_t off = 0; !e->decode && off < e->n;) {
			int64_t take = min64(e->n - off, g->n_ubatch);
			ubatch_add(g, &ps, e, off, take);
			off += take;
			t += ubatch_time(g, &ps, acc);
			perf_step_clear(&ps);
		}
	}
	return t;
}

/* Attributes a step of s seconds (as vllm.c does): to its decode tokens
 * (what a step of those decodes alone is made of, and the rest, the prompt
 * chunks sharing it) and to each prompt in it (its share by tokens, and
 * the rest). */
static void account_step(struct engine *g, double s)
{
	int64_t decodes = 0;
	for (size_t k = 0; k < g->n_batch_entries; k++)
		decodes += g->batch[k].decode;
	if (decodes > 0) {
		struct perf_breakdown d = { 0 };
		double alone = batch_time(g, true, &d);
		g->st.itl_weights_s += (double)decodes * (d.dense + d.experts + d.lm_head + d.allreduce);
		g->st.itl_kv_s += (double)decodes * d.attn_decode;
		g->st.itl_overhead_s += (double)decodes * d.overhead;
		g->st.itl_prefill_s += (double)decodes * (s - alone);
		g->st.itl_tokens += decodes;
	}
	for (size_t k = 0; k < g->n_batch_entries; k++) {
		const struct entry *e = &g->batch[k];
		if (e->decode)
			continue;
		struct request *r = req(g, g->slots[e->slot].req);
		int64_t own = llround(s * 1e9 * (double)e->n / (double)g->step_tokens);
		r->prefill_own_ns += own;
		r->prefill_shared_ns += llround(s * 1e9) - own;
	}
}

/* ---- the engine class ---------------------------------------------- */

static void batch_push(struct engine *g, struct entry e)
{
	xgrow(&g->batch, &g->cap_batch, g->n_batch_entries + 1, sizeof *g->batch);
	g->batch[g->n_batch_entries++] = e;
}

static int64_t busy_slots(const struct engine *g)
{
	int64_t n = 0;
	for (int64_t i = 0; i < g->n_parallel; i++)
		n += g->slots[i].state != SLOT_IDLE;
	return n;
}

/* Context shift (llama-server update_slots, Ollama's --context-shift):
 * a slot about to outgrow its context drops half of what follows num_keep. */
static void shift_contexts(struct engine *g)
{
	for (int64_t i = 0; i < g->n_parallel; i++) {
		struct slot *s = &g->slots[i];
		if (s->state != SLOT_GENERATING || s->n_tokens + 1 < g->n_ctx || !g->context_shift)
			continue;
		int64_t keep = min64(g->n_ctx - 4, g->n_keep);
		s->n_tokens -= (s->n_tokens - keep) / 2;
		s->altered = true;
		g->st.context_shifts++;
	}
}

static int64_t ol_start_step(struct engine *g, int64_t now)
{
	g->n_batch_entries = 0;
	g->step_is_load = false;
	if (g->model == MODEL_LOADING) {
		g->step_is_load = true;
		g->step_tokens = 0;
		return max64(g->load_end_ns - now, 1);
	}
	if (g->model != MODEL_LOADED)
		return -1;
	assign_slots(g, now);
	shift_contexts(g);
	int64_t tokens = 0;
	for (int i = 0; i < (int)g->n_parallel; i++) {
		struct slot *s = &g->slots[i];
		if (s->state == SLOT_GENERATING) {
			batch_push(g, (struct entry){ i, 1, s->n_tokens, true, true });
			tokens++;
		}
	}
	for (int i = 0; i < (int)g->n_parallel && tokens < g->n_batch; i++) {
		struct slot *s = &g->slots[i];
		if (s->state != SLOT_PROMPT)
			continue;
		int64_t n = min64(s->n_prompt - s->n_tokens, g->n_batch - tokens);
		batch_push(g, (struct entry){ i, n, s->n_tokens, false, s->n_tokens + n == s->n_prompt });
		tokens += n;
	}
	if (tokens == 0)
		return -1;
	g->step_tokens = tokens;
	double s = batch_time(g, false, &g->st.time);
	account_step(g, s);
	g->st.steps++;
	g->st.busy_s += s;
	g->st.n_decode_total++;
	g->st.n_busy_slots_total += busy_slots(g);
	return evq_duration_ns(s);   /* past the horizon: run_simulate stops */
}

/* Frees s, keeping its KV as the prompt cache of the request it served. */
static void release_slot(struct engine *g, struct slot *s, int64_t now)
{
	s->state = SLOT_IDLE;
	s->has_cache = true;
	s->cache_req = s->req;
	s->cache_len = s->altered ? min64(s->n_tokens, g->n_keep) : s->n_tokens;
	s->last_used_ns = now;
	if (s->n_tokens > g->st.n_tokens_max)
		g->st.n_tokens_max = s->n_tokens;
}

/* The slot produced a token for its request at now. */
static void emit(struct engine *g, struct slot *s, int64_t now)
{
	struct request *r = req(g, s->req);
	r->generated++;
	g->setup.hooks.on_token(g->setup.hooks.ctx, s->req, now);
	bool done = r->generated >= r->output_len;
	if (!done && !g->context_shift && s->n_tokens + 1 >= g->n_ctx) {
		/* llama-server without context shift stops at the context's end
		 * (finish_reason "length"): the answer is shorter than asked. */
		r->output_len = r->generated;
		g->st.truncated_outputs++;
		done = true;
	}
	if (!done)
		return;
	r->state = REQ_FINISHED;
	r->finish_ns = now;
	release_slot(g, s, now);
	xgrow(&g->finished, &g->cap_finished, g->n_finished + 1, sizeof *g->finished);
	g->finished[g->n_finished++] = s->req;
}

static void ol_end_step(struct engine *g, int64_t now)
{
	if (g->step_is_load) {
		g->step_is_load = false;
		g->model = MODEL_LOADED;
		g->n_pending = 0;
		return;
	}
	g->n_finished = 0;
	for (size_t k = 0; k < g->n_batch_entries; k++) {
		const struct entry *e = &g->batch[k];
		struct slot *s = &g->slots[e->slot];
		s->n_tokens += e->n;
		SIM_ASSERT(s->n_tokens < g->n_ctx && (e->decode || s->n_tokens <= s->n_prompt), now, s->req);
		if (e->decode) {
			emit(g, s, now);
		} else if (s->n_tokens == s->n_prompt) {
			s->state = SLOT_GENERATING;
			emit(g, s, now);
		}
	}
	g->n_batch_entries = 0;
	/* on_done may grow the request table: indices only from here. */
	for (size_t k = 0; k < g->n_finished; k++)
		g->setup.hooks.on_done(g->setup.hooks.ctx, g->finished[k], now);
	if (busy_slots(g) == 0 && queue_waiting(g) == 0)
		g->idle_since_ns = now;
}

static void ol_submit(struct engine *g, size_t idx, int64_t now)
{
	struct request *r = req(g, idx);
	r->enqueue_ns = now;
	r->load_ns = 0;
	int64_t n = r->prompt_len;
	if (g->fl->truncates && n > g->n_ctx - 1) {
		/* ollama llm/llama_server.go completionPromptForRequest: keep
		 * num_keep tokens and the end, leaving about half the context
		 * for the answer; with truncate = false the prompt goes as is
		 * and llama-server refuses it. The older Go runners
		 * (runner/ollamarunner NewSequence) cut to exactly num_ctx. */
		if (!g->truncate) {
			engine_fail(&g->setup, idx, now, "the input length exceeds the context length (truncate = false)");
			return;
		}
		n = g->n_ctx - max64((g->n_ctx - g->n_keep) / 2, 1);
		g->st.truncated_prompts++;
	} else if (n >= g->n_ctx) {
		/* llama-server, HTTP 400 exceed_context_size_error. */
		engine_fail(&g->setup, idx, now, "the request exceeds the available context size, try increasing it");
		return;
	}
	r->prompt_eval_count = (int32_t)n;
	if (g->model == MODEL_LOADED && busy_slots(g) == 0 && queue_waiting(g) == 0 &&
	    now - g->idle_since_ns >= g->keep_alive_ns) {
		g->model = MODEL_UNLOADED;          /* keep_alive expired while idle */
		for (int64_t i = 0; i < g->n_parallel; i++)
			g->slots[i].has_cache = false;
	}
	if (g->model == MODEL_UNLOADED) {
		g->model = MODEL_LOADING;
		g->load_end_ns = now + g->load_ns;
		g->st.model_loads++;
	} else if (g->model == MODEL_LOADING) {
		if (g->n_pending >= g->max_queue) {
			g->st.rejected++;
			engine_fail(&g->setup, idx, now, "server busy, please try again.  maximum pending requests exceeded");
			return;
		}
		g->n_pending++;
	}
	if (g->model == MODEL_LOADING)
		r->load_ns = g->load_end_ns - now;
	r->state = REQ_WAITING;
	queue_push(g, idx);
}

static void ol_gauges(const struct engine *g, struct engine_gauges *out)
{
	int64_t used = 0;
	for (int64_t i = 0; i < g->n_parallel; i++)
		if (g->slots[i].state != SLOT_IDLE)
			used += g->slots[i].n_tokens;
	out->running = busy_slots(g);
	out->waiting = (int64_t)queue_waiting(g);
	out->kv_usage = g->st.kv_tokens > 0 ? (double)used / (double)g->st.kv_tokens : 0;
	out->step_tokens = g->step_tokens;
}

static void ol_stats(const struct engine *g, struct engine_stats *st)
{
	*st = g->st;
}

/* ---- start-up: defaults, checks, memory ---------------------------- */

/* "f16, q8_0, …": the GGUF types of the precision table (the ones that
 * quantize every tensor, embeddings included). */
static void gguf_names(char *out, size_t cap)
{
	size_t n, used = 0;
	const struct precision *p = precision_all(&n);
	out[0] = '\0';
	for (size_t i = 0; i < n && used + 1 < cap; i++)
		if (p[i].quantizes_embeddings)
			used += (size_t)snprintf(out + used, cap - used, "%s%s", used ? ", " : "", p[i].name);
}

/* Ollama's default num_ctx: 2048 up to v0.5, OLLAMA_CONTEXT_LENGTH 4096
 * from v0.6 to v0.15.x, and since v0.15.5 by VRAM (>= 47 GiB: 262144,
 * >= 23 GiB: 32768, else 4096); always capped at the training context. */
static int64_t ollama_default_ctx(const struct hw_profile *hw, double gpu_bytes, int64_t train)
{
	double gib = gpu_bytes / GIB;
	int64_t c = hw->hw_class == HW_CPU ? 4096 : gib >= 47 ? 262144 : gib >= 23 ? 32768 : 4096;
	return train > 0 ? min64(c, train) : c;
}

static int resolve(struct engine *g, struct err *e)
{
	const struct engine_config *cfg = g->setup.cfg;
	const struct model *m = g->setup.model;
	const struct hw_profile *hw = g->setup.hw;
	const struct precision *w = g->setup.weights;
	const char *kind = g->fl->name;
	if (!w->quantizes_embeddings) {
		char names[256];
		gguf_names(names, sizeof names);
		return err_set(e, "%s: [run] weights: expected a GGUF type for [engine] kind = %s (%s), got '%s'",
			       g->setup.weights_at, kind, names, w->name);
	}
	if (cfg->tensor_parallel_size != 1)
		return err_set(e, "%s: [engine] tensor_parallel_size: expected 1 for kind = %s (llama.cpp splits layers across GPUs, not tensors), got %lld",
			       cfg->tensor_parallel_at, kind, (long long)cfg->tensor_parallel_size);
	if (cfg->pipeline_parallel_size != 1)
		return err_set(e, "%s: [engine] pipeline_parallel_size: expected 1 for kind = %s (a llama.cpp server runs one batch at a time; its layer split is num_gpu), got %lld",
			       cfg->pipeline_parallel_at, kind, (long long)cfg->pipeline_parallel_size);
	g->on_cpu_only = hw->hw_class == HW_CPU;
	double gpu_bytes = hw_memory_bytes(hw) * (hw->hw_class == HW_APPLE ? APPLE_GPU_SHARE : 1);
	int64_t train = m->max_position_embeddings;
	g->n_parallel = cfg->num_parallel > 0 ? cfg->num_parallel : g->fl->num_parallel;
	g->unified = cfg->num_parallel <= 0 && g->fl->unified_by_default;
	if (cfg->num_ctx > 0)
		g->n_ctx = cfg->num_ctx;
	else if (g->fl->cold_loads)
		g->n_ctx = ollama_default_ctx(hw, gpu_bytes, train);
	else
		g->n_ctx = train > 0 ? train : 4096;          /* llama-server -c 0 */
	if (train > 0 && g->n_ctx > train)
		return err_set(e, "%s: [engine] num_ctx: expected at most the model's max_position_embeddings (%lld for %s), got %lld",
			       cfg->num_ctx_at, (long long)train, m->id, (long long)g->n_ctx);
	if (g->n_ctx < 2)
		return err_set(e, "%s: [engine] num_ctx: expected at least 2 tokens, got %lld", cfg->num_ctx_at,
			       (long long)g->n_ctx);
	g->n_batch = cfg->n_batch > 0 ? cfg->n_batch : g->fl->n_batch;
	g->n_ubatch = cfg->n_ubatch > 0 ? cfg->n_ubatch : g->fl->n_ubatch;
	g->n_ubatch = min64(g->n_ubatch, g->n_batch);   /* llama.cpp clamps n_ubatch to n_batch */
	g->n_batch = max64(g->n_batch, g->n_parallel);  /* the batch always holds every decode */
	g->max_queue = cfg->max_queue;
	g->n_keep = min64(OLLAMA_NUM_KEEP, g->n_ctx - 1);
	g->cache_prompt = cfg->cache_prompt;
	g->truncate = cfg->truncate;
	g->context_shift = g->fl->context_shift;
	double keep = cfg->keep_alive_s;
	g->keep_alive_ns = !g->fl->cold_loads || isinf(keep) ? INT64_MAX : (int64_t)llround(keep * 1e9);

	/* Memory: layers, output, KV allocated up front for every slot. */
	struct model_params mp;
	model_params(m, &mp);
	double L = (double)m->n_layers, bpw = w->bits_per_weight / 8;
	double total = model_weight_bytes(m, w);
	double out_b = (mp.lm_head > 0 ? mp.lm_head : mp.embed) * bpw;
	double layer_b = (total - (mp.embed + mp.lm_head) * bpw) / L;
	int64_t kv_tokens = g->n_ctx * (g->unified ? 1 : g->n_parallel);
	double kv_layer = (double)kv_tokens * model_kv_bytes_per_token(m, 2) / L;
	int64_t all = m->n_layers + 1;      /* Ollama's count: repeating layers + output */
	int64_t ngl;
	if (g->on_cpu_only) {
		ngl = all;
	} else if (cfg->num_gpu >= 0) {
		ngl = cfg->num_gpu;
		if (ngl > all)
			return err_set(e, "%s: [engine] num_gpu: expected 0 to %lld (%s has %lld layers plus the output layer; -1 = as many as fit), got %lld",
				       cfg->num_gpu_at, (long long)all, m->id, (long long)m->n_layers, (long long)ngl);
	} else {
		double room = gpu_bytes - GPU_RESERVE_BYTES;
		if (L * (layer_b + kv_layer) + out_b <= room)
			ngl = all;
		else
			ngl = room > 0 ? min64((int64_t)floor(room / (layer_b + kv_layer)), m->n_layers) : 0;
	}
	int64_t rep = min64(ngl, m->n_layers);
	g->gpu_frac = (double)rep / L;
	g->output_on_gpu = ngl == all;
	double on_gpu = (double)rep * (layer_b + kv_layer) + (g->output_on_gpu ? out_b : 0);
	double on_cpu = (L - (double)rep) * (layer_b + kv_layer) + (g->output_on_gpu ? 0 : out_b);
	if (g->on_cpu_only) {
		if (on_gpu > hw_memory_bytes(hw))
			return err_set(e, "%s: %s at %s with its KV cache (%.1f GB for %lld tokens) needs %.1f GB; %s has %.1f GB",
				       g->setup.path, m->id, w->name, kv_layer * L / 1e9, (long long)kv_tokens,
				       on_gpu / 1e9, hw->id, hw_memory_bytes(hw) / 1e9);
	} else {
		if (on_gpu > gpu_bytes - GPU_RESERVE_BYTES)
			return err_set(e, "%s: [engine] num_gpu: %lld layers of %s at %s with their KV cache need %.1f GB; %s has %.1f GB for them",
				       cfg->num_gpu_at, (long long)ngl, m->id, w->name, on_gpu / 1e9, hw->id,
				       (gpu_bytes - GPU_RESERVE_BYTES) / 1e9);
		if (rep < m->n_layers || !g->output_on_gpu) {
			if (hw_load_named(&g->cpu_hw, cfg->cpu_hardware, e))
				return err_prefix(e, "%s: [engine] cpu_hardware", cfg->cpu_hardware_at);
			if (g->cpu_hw.hw_class != HW_CPU)
				return err_set(e, "%s: [engine] cpu_hardware: expected a CPU profile (class = cpu) for the layers num_gpu leaves off the GPU, got '%s' (class %s)",
					       cfg->cpu_hardware_at, g->cpu_hw.id, hw_class_names[g->cpu_hw.hw_class]);
			if (on_cpu > hw_memory_bytes(&g->cpu_hw))
				return err_set(e, "%s: [engine] num_gpu: the %lld layers left on %s need %.1f GB; it has %.1f GB",
					       cfg->num_gpu_at, (long long)(m->n_layers - rep), g->cpu_hw.id,
					       on_cpu / 1e9, hw_memory_bytes(&g->cpu_hw) / 1e9);
			perf_init(&g->cpu, m, &g->cpu_hw, w, 1, 2);
			perf_use_engine(&g->cpu, "llama.cpp");
			perf_set_router_skew(&g->cpu, cfg->moe_router_skew);
			/* f32 activations cross once per micro-batch. */
			g->xfer_s_per_token = (double)m->hidden * 4 / (hw->host_bandwidth_gb_s * 1e9);
		}
	}
	perf_init(&g->gpu, m, hw, w, 1, 2);   /* KV in f16: llama.cpp's and Ollama's default */
	perf_use_engine(&g->gpu, "llama.cpp");   /* its kernels: MMQ/MMVQ, cuBLAS FP16 compute */
	perf_set_router_skew(&g->gpu, cfg->moe_router_skew);
	g->load_ns = g->fl->cold_loads ? (int64_t)llround(total / (cfg->load_bandwidth_gb_s * 1e9) * 1e9) : 0;
	if (g->load_ns == 0)
		g->keep_alive_ns = INT64_MAX;   /* loaded before the run (inf bandwidth): never cold */

	g->st.max_num_batched_tokens = g->n_batch;
	g->st.max_num_seqs = g->n_parallel;
	/* No whole-scenario length check in the run: a long request is
	 * truncated or refused on its own, as these servers do. */
	g->st.max_model_len = INT32_MAX;
	g->st.num_parallel = g->n_parallel;
	g->st.num_ctx = g->n_ctx;
	g->st.n_batch = g->n_batch;
	g->st.n_ubatch = g->n_ubatch;
	g->st.kv_unified = g->unified;
	g->st.gpu_layers = g->on_cpu_only ? 0 : ngl;
	g->st.layers = all;
	g->st.kv_tokens = kv_tokens;
	g->st.kv_bytes = kv_layer * L;
	g->st.weight_bytes_per_gpu = g->on_cpu_only ? 0 : on_gpu - (double)rep * kv_layer;
	g->st.load_s = (double)g->load_ns / 1e9;
	snprintf(g->st.cpu_hardware, sizeof g->st.cpu_hardware, "%s",
		 g->on_cpu_only ? hw->id : g->cpu_hw.id[0] ? g->cpu_hw.id : "");
	return 0;
}

static struct engine *create(const struct engine_setup *setup, const struct flavor *fl, struct err *e)
{
	struct engine *g = xcalloc(1, sizeof *g);
	g->setup = *setup;
	g->fl = fl;
	if (resolve(g, e)) {
		free(g);
		return NULL;
	}
	g->slots = xcalloc((size_t)g->n_parallel, sizeof *g->slots);
	for (int64_t i = 0; i < g->n_parallel; i++)
		g->slots[i].last_used_ns = -1;
	g->model = g->load_ns > 0 ? MODEL_UNLOADED : MODEL_LOADED;
	return g;
}

static struct engine *ollama_create(const struct engine_setup *setup, struct err *e)
{
	return create(setup, &ollama_flavor, e);
}

static struct engine *llamacpp_create(const struct engine_setup *setup, struct err *e)
{
	return create(setup, &llamacpp_flavor, e);
}

static void ol_destroy(struct engine *g)
{
	if (!g)
		return;
	free(g->slots);
	free(g->queue);
	free(g->batch);
	free(g->finished);
	free(g);
}

const struct engine_class ollama_engine_class = {
	.name = "ollama",
	.backend = "ollama",
	.title = "Ollama",
	.family = ENGINE_FAMILY_LLAMACPP,
	.perf_engine = "llama.cpp",
	.create = ollama_create,
	.destroy = ol_destroy,
	.submit = ol_submit,
	.start_step = ol_start_step,
	.end_step = ol_end_step,
	.gauges = ol_gauges,
	.stats = ol_stats,
};

const struct engine_class llamacpp_engine_class = {
	.name = "llamacpp",
	.backend = "llama.cpp",
	.title = "llama.cpp server",
	.family = ENGINE_FAMILY_LLAMACPP,
	.perf_engine = "llama.cpp",
	.create = llamacpp_create,
	.destroy = ol_destroy,
	.submit = ol_submit,
	.start_step = ol_start_step,
	.end_step = ol_end_step,
	.gauges = ol_gauges,
	.stats = ol_stats,
};
