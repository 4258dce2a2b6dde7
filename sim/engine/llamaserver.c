/*
 * llamaserver: the llama.cpp server (llama-server) engine, and the engine
 * Ollama runs (ollama.c adds its part): a fixed number of slots, each with
 * a fixed context allocated up front, fed by one FIFO queue. Current Ollama
 * starts the upstream binary per model (ollama llm/llama_server.go: `-c
 * num_ctx × num_parallel -np num_parallel -b num_batch -ub num_batch`), so
 * one implementation serves both classes and the differences are data
 * (struct flavor, llamacpp_int.h): defaults, prompt truncation, context
 * shift, cold loads and the scheduler's pending queue.
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
 * llama-server loads its model at start-up, before it accepts requests:
 * the run starts warm. Start-up (options, defaults, where the layers go) is
 * llamaresolve.c.
 */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "evq.h"
#include "llamacpp_int.h"
#include "simassert.h"
#include "xalloc.h"

/* llama-server: common/common.h (n_batch 2048, n_ubatch 512), -np -1 =
 * auto = 4 slots on a unified KV cache, --context-shift off. */
const struct flavor llamacpp_flavor = { "llamacpp", false, false, false, 2048, 512, 4, true };

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
	return common_prefix(&s->cache_id, r, limit);
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
	/* What was taken goes once it is half the array: the queue holds the
	 * requests waiting, not every request the run made. */
	if (g->q_head && g->q_head * 2 >= g->q_len) {
		memmove(g->queue, g->queue + g->q_head, (g->q_len - g->q_head) * sizeof *g->queue);
		g->q_len -= g->q_head;
		g->q_head = 0;
	}
	xgrow(&g->queue, &g->q_cap, g->q_len + 1, sizeof *g->queue);
	g->queue[g->q_len++] = idx;
}

size_t llama_queue_waiting(const struct engine *g)
{
	return g->q_len - g->q_head;
}

/* Gives free slots to waiting requests, first come first served. */
static void assign_slots(struct engine *g, int64_t now)
{
	while (llama_queue_waiting(g) > 0) {
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

/* One micro-batch (a forward pass) on the device, the CPU or both
 * (stepmodel.h): its breakdown added to *acc, its seconds returned. */
static double ubatch_time(struct engine *g, const struct perf_step *ps, struct perf_breakdown *acc)
{
	struct perf_breakdown r;
	step_model_time(&g->sm, ps, &r);
	engine_time_add(acc, &r, 0, r.total);
	return r.total;
}

/* Adds n tokens of e to the micro-batch being filled. */
static void ubatch_add(struct engine *g, struct perf_step *ps, const struct entry *e, int64_t off,
		       int64_t n)
{
	perf_step_add(ps, &g->sm.dev, n, e->ctx + off, e->samples && off + n == e->n);
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

int64_t llama_busy_slots(const struct engine *g)
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

int64_t llama_start_step(struct engine *g, int64_t now)
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
	g->st.n_busy_slots_total += llama_busy_slots(g);
	return evq_duration_ns(s);   /* past the horizon: run_simulate stops */
}

/* Frees s, keeping its KV as the prompt cache of the request it served. */
static void release_slot(struct engine *g, struct slot *s, int64_t now)
{
	s->state = SLOT_IDLE;
	s->has_cache = true;
	const struct request *r = req(g, s->req);
	s->cache_id = (struct request){ .shared_key = r->shared_key, .own_key = r->own_key,
					.shared_len = r->shared_len, .n_block512 = r->n_block512,
					.block512 = r->block512 };
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

void llama_end_step(struct engine *g, int64_t now)
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
	if (llama_busy_slots(g) == 0 && llama_queue_waiting(g) == 0)
		g->idle_since_ns = now;
}

void llama_submit(struct engine *g, size_t idx, int64_t now)
{
	struct request *r = req(g, idx);
	r->enqueue_ns = now;
	r->load_ns = 0;
	int64_t n = r->prompt_len;
	if (g->fl->truncates && n > g->n_ctx - 1) {
		if (ollama_truncate(g, idx, now, &n))
			return;
	} else if (n >= g->n_ctx) {
		/* llama-server, HTTP 400 exceed_context_size_error. */
		engine_fail(&g->setup, idx, now, "the request exceeds the available context size, try increasing it");
		return;
	}
	r->prompt_eval_count = (int32_t)n;
	if (g->fl->cold_loads && ollama_schedule(g, idx, now))
		return;
	r->state = REQ_WAITING;
	queue_push(g, idx);
}

void llama_gauges(const struct engine *g, struct engine_gauges *out)
{
	int64_t used = 0;
	for (int64_t i = 0; i < g->n_parallel; i++)
		if (g->slots[i].state != SLOT_IDLE)
			used += g->slots[i].n_tokens;
	out->running = llama_busy_slots(g);
	out->waiting = (int64_t)llama_queue_waiting(g);
	out->kv_usage = g->st.kv_tokens > 0 ? (double)used / (double)g->st.kv_tokens : 0;
	out->step_tokens = g->step_tokens;
}

void llama_stats(const struct engine *g, struct engine_stats *st)
{
	*st = g->st;
}

struct engine *llama_create(const struct engine_setup *setup, const struct flavor *fl, struct err *e)
{
	struct engine *g = xcalloc(1, sizeof *g);
	g->setup = *setup;
	g->fl = fl;
	if (llama_resolve(g, e)) {
		free(g);
		return NULL;
	}
	g->slots = xcalloc((size_t)g->n_parallel, sizeof *g->slots);
	for (int64_t i = 0; i < g->n_parallel; i++)
		g->slots[i].last_used_ns = -1;
	g->model = g->load_ns > 0 ? MODEL_UNLOADED : MODEL_LOADED;
	return g;
}

int llama_step_model(const struct engine_setup *setup, const struct flavor *fl, struct step_model *sm, struct err *e)
{
	struct engine *g = xcalloc(1, sizeof *g);
	g->setup = *setup;
	g->fl = fl;
	int rc = llama_resolve(g, e);
	if (rc == 0)
		*sm = g->sm;   /* its profiles are the setup's: the copy stands alone */
	free(g);
	return rc;
}

static int llamacpp_step_model(const struct engine_setup *setup, struct step_model *sm, struct err *e)
{
	return llama_step_model(setup, &llamacpp_flavor, sm, e);
}

void llama_config_default(struct engine_config *c)
{
	llamacfg_default(&c->llama);
}

void llama_config_locate(struct engine_config *c,
			 void (*at)(const void *ctx, const char *key, char *out, size_t cap),
			 const void *ctx)
{
	llamacfg_locate(&c->llama, at, ctx);
}

/* The profile is looked up where the key is read, for every kind: a vLLM
 * run ignores Ollama's cpu_hardware, as every kind ignores the others'
 * keys (one file serves both), but a name that resolves to nothing, or to
 * a GPU, is refused there too, as every key's bad value is. */
int llama_config_check(struct engine_config *c, const struct engine_keys_view *k, struct err *e)
{
	char at[INI_VALUE_MAX + 32];
	if (!k->at(k->ctx, "cpu_hardware", at, sizeof at))
		return 0;
	struct hw_profile cpu;
	if (hw_load_named(&cpu, c->llama.cpu_hardware, e))
		return err_prefix(e, "%s: [%s] cpu_hardware", at, k->section);
	if (cpu.hw_class != HW_CPU)
		return err_set(e, "%s: [%s] cpu_hardware: expected a CPU profile (class = cpu), got '%s' (class %s)", at,
			       k->section, cpu.id, hw_class_names[cpu.hw_class]);
	return 0;
}

static struct engine *llamacpp_create(const struct engine_setup *setup, struct err *e)
{
	return llama_create(setup, &llamacpp_flavor, e);
}

void llama_destroy(struct engine *g)
{
	if (!g)
		return;
	free(g->slots);
	free(g->queue);
	free(g->batch);
	free(g->finished);
	free(g);
}

const struct engine_class llamacpp_engine_class = {
	.name = "llamacpp",
	.backend = "llama.cpp",
	.title = "llama.cpp server",
	.default_weights = "q4_k_m",   /* a GGUF file, as Ollama's tags */
	.create = llamacpp_create,
	.step_model = llamacpp_step_model,
	LLAMA_CLASS_COMMON,
};
