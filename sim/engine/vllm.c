/*
 * The vLLM V1 engine: Scheduler.schedule() (vllm/v1/core/sched/scheduler.py),
 * the KV cache manager and block pool (kvpool.c), sized as gpu_worker.py
 * sizes it. ../shared/reference/formats.md §3 has the condensed source.
 *
 * One step: spend max_num_batched_tokens on the running requests in order
 * (decodes and unfinished prefill chunks), preempting the last-admitted
 * running request when a block cannot be had; then, if nobody was
 * preempted, admit waiting requests first come first served while
 * max_num_seqs and free blocks allow, after a prefix-cache lookup.
 * A request samples a token in the step that computes its last known
 * token; a preempted request is recomputed from scratch (its own cached
 * blocks may still hit).
 */
#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "evq.h"
#include "kvpool.h"
#include "xalloc.h"

struct deque {            /* ring buffer of request indices */
	size_t *v;
	size_t cap, head, len;
};

static void dq_grow(struct deque *q)
{
	if (q->len < q->cap)
		return;
	size_t ncap = q->cap ? 2 * q->cap : 64;
	size_t *nv = xmalloc(ncap * sizeof *nv);
	for (size_t i = 0; i < q->len; i++)
		nv[i] = q->v[(q->head + i) % q->cap];
	free(q->v);
	q->v = nv;
	q->cap = ncap;
	q->head = 0;
}

static void dq_push_back(struct deque *q, size_t x)
{
	dq_grow(q);
	q->v[(q->head + q->len++) % q->cap] = x;
}

static void dq_push_front(struct deque *q, size_t x)
{
	dq_grow(q);
	q->head = (q->head + q->cap - 1) % q->cap;
	q->v[q->head] = x;
	q->len++;
}

static size_t dq_front(const struct deque *q)
{
	return q->v[q->head];
}

static void dq_pop_front(struct deque *q)
{
	q->head = (q->head + 1) % q->cap;
	q->len--;
}

struct engine {
	struct engine_setup setup;
	struct perf perf;
	struct kvpool *pool;
	int64_t block_size, mnbt, max_seqs, max_model_len, threshold;
	bool caching, chunked;
	double cpu_block_transfer_s;     /* one block over the host link */
	size_t *running;                 /* admission order */
	size_t n_running, cap_running;
	struct deque waiting;
	size_t *scheduled;               /* this step's requests */
	size_t n_scheduled, cap_scheduled;
	double step_extra_s;             /* CPU-tier loads in this step */
	int64_t step_tokens;             /* tokens in the current step */
	int32_t *hits;                   /* prefix-lookup scratch, kept across steps */
	size_t cap_hits;
	struct engine_stats st;
};

static struct request *req(struct engine *g, size_t i)
{
	return &g->setup.reqs->v[i];
}

/* splitmix64's finalizer: a bijection on 64-bit words. */
static uint64_t scramble(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	x ^= x >> 31;
	return x;
}

/* Combines a key and a value; 0 is kept free for "no hash". */
static uint64_t mix(uint64_t a, uint64_t b)
{
	uint64_t x = scramble(a ^ scramble(b + 0x9e3779b97f4a7c15ULL));
	return x ? x : 1;
}

/* The content hash of block j of r. Identity is positional within a key,
 * so equal keys up to a block mean equal chained hashes, as vLLM's
 * hash(parent, tokens) chain gives. */
static uint64_t block_hash(const struct request *r, int64_t j, int64_t bs)
{
	int64_t start = j * bs, end = start + bs;
	if (r->n_block512 > 0 && end <= (int64_t)r->n_block512 * 512) {
		uint64_t a = r->block512[start / 512], b = r->block512[(end - 1) / 512];
		return mix(mix(a, b), (uint64_t)start);
	}
	if (end <= r->shared_len)
		return mix(r->shared_key, (uint64_t)j);
	return mix(r->own_key, (uint64_t)j);
}

static int64_t cdiv(int64_t a, int64_t b)
{
	return (a + b - 1) / b;
}

static int64_t num_tokens(const struct request *r)
{
	return (int64_t)r->prompt_len + r->generated;
}

static void push_block(struct request *r, int32_t b)
{
	if (r->n_blocks == r->cap_blocks) {
		r->cap_blocks = r->cap_blocks ? 2 * r->cap_blocks : 8;
		r->blocks = xrealloc(r->blocks, (size_t)r->cap_blocks * sizeof *r->blocks);
	}
	r->blocks[r->n_blocks++] = b;
}

/* Registers the hashes of r's blocks that became full. Called once per
 * request per step: the common case (no block filled) costs a compare. */
static void cache_full_blocks(struct engine *g, struct request *r)
{
	if (!g->caching || r->num_computed < (int64_t)(r->n_hashed + 1) * g->block_size)
		return;
	int64_t full = r->num_computed / g->block_size;
	for (int64_t j = r->n_hashed; j < full && j < r->n_blocks; j++)
		kvpool_set_hash(g->pool, r->blocks[j], block_hash(r, j, g->block_size));
	if (full > r->n_hashed)
		r->n_hashed = (int32_t)(full < r->n_blocks ? full : r->n_blocks);
}

static void free_blocks(struct engine *g, struct request *r)
{
	for (int32_t j = r->n_blocks; j-- > 0;)
		kvpool_release(g->pool, r->blocks[j]);
	r->n_blocks = 0;
	r->n_hashed = 0;
}

static void preempt_last(struct engine *g)
{
	size_t victim = g->running[g->n_running - 1];
	struct request *r = req(g, victim);
	g->n_running--;
	free_blocks(g, r);
	r->num_computed = 0;
	r->state = REQ_WAITING;
	r->preemptions++;
	g->st.preemptions++;
	dq_push_front(&g->waiting, victim);
}

/* Allocates blocks so r holds cdiv(tokens, B); false when the pool is
 * short. The common decode step needs none: that test is inline. */
static bool grow_slow(struct engine *g, struct request *r, int64_t tokens);

static inline bool grow_to(struct engine *g, struct request *r, int64_t tokens)
{
	return tokens <= (int64_t)r->n_blocks * g->block_size || grow_slow(g, r, tokens);
}

static bool grow_slow(struct engine *g, struct request *r, int64_t tokens)
{
	int64_t need = cdiv(tokens, g->block_size) - r->n_blocks;
	if (need > kvpool_num_free(g->pool))
		return false;
	for (int64_t i = 0; i < need; i++)
		push_block(r, kvpool_alloc(g->pool));
	return true;
}

static void add_to_step(struct engine *g, struct perf_step *step, size_t i, int64_t n)
{
	struct request *r = req(g, i);
	r->scheduled = (int32_t)n;
	bool samples = r->num_computed + n >= num_tokens(r);
	perf_step_add(step, &g->perf, n, r->num_computed, samples);
	if (g->n_scheduled == g->cap_scheduled) {
		g->cap_scheduled = g->cap_scheduled ? 2 * g->cap_scheduled : 64;
		g->scheduled = xrealloc(g->scheduled, g->cap_scheduled * sizeof *g->scheduled);
	}
	g->scheduled[g->n_scheduled++] = i;
}

static int64_t clip(const struct engine *g, int64_t n, int64_t budget, const struct request *r)
{
	if (g->threshold > 0 && n > g->threshold)
		n = g->threshold;
	if (n > budget)
		n = budget;
	int64_t room = g->max_model_len - 1 - r->num_computed;
	/* The last token of a request at max_model_len is never fed back. */
	if (n > room && room > 0)
		n = room;
	return n;
}

/* Schedules the running requests; returns false when one was preempted. */
static bool schedule_running(struct engine *g, struct perf_step *step, int64_t *budget)
{
	bool preempted = false;
	for (size_t i = 0; i < g->n_running && *budget > 0; i++) {
		size_t idx = g->running[i];
		struct request *r = req(g, idx);
		int64_t n = clip(g, num_tokens(r) - r->num_computed, *budget, r);
		if (n <= 0)
			continue;
		bool got = false;
		while (!(got = grow_to(g, r, r->num_computed + n))) {
			bool self = g->running[g->n_running - 1] == idx;
			preempt_last(g);
			preempted = true;
			if (self)
				break;
		}
		if (!got)
			break;
		add_to_step(g, step, idx, n);
		*budget -= n;
	}
	return !preempted;
}

/* Leading prefix-cache hits of r: GPU blocks into gpu[], then the count
 * of further blocks found in the CPU tier. */
static int64_t lookup_prefix(struct engine *g, const struct request *r, int32_t *gpu,
			     int64_t *n_gpu, int64_t max_blocks)
{
	int64_t j = 0;
	*n_gpu = 0;
	if (!g->caching)
		return 0;
	for (; j < max_blocks; j++) {
		int32_t b = kvpool_lookup(g->pool, block_hash(r, j, g->block_size));
		if (b < 0)
			break;
		gpu[(*n_gpu)++] = b;
	}
	int64_t cpu = 0;
	while (j + cpu < max_blocks &&
	       kvpool_lookup_cpu(g->pool, block_hash(r, j + cpu, g->block_size)))
		cpu++;
	return cpu;
}

static void schedule_waiting(struct engine *g, struct perf_step *step, int64_t *budget, int64_t now)
{
	while (g->waiting.len && *budget > 0 && (int64_t)g->n_running < g->max_seqs) {
		size_t idx = dq_front(&g->waiting);
		struct request *r = req(g, idx);
		int64_t total = num_tokens(r);
		int64_t max_hit = (total - 1) / g->block_size;
		xgrow(&g->hits, &g->cap_hits, (size_t)max_hit, sizeof *g->hits);
		int32_t *hits = g->hits;
		int64_t n_gpu;
		int64_t n_cpu = lookup_prefix(g, r, hits, &n_gpu, max_hit);
		int64_t cached = (n_gpu + n_cpu) * g->block_size;
		int64_t n = total - cached;
		if (!g->chunked && n > *budget)
			break;
		n = clip(g, n, *budget, r);
		/* Blocks to allocate: everything not already on the GPU; free
		 * cached hits leave the free queue when touched. */
		int64_t need = cdiv(cached + n, g->block_size) - n_gpu;
		int64_t free_after_touch = kvpool_num_free(g->pool);
		for (int64_t i = 0; i < n_gpu; i++)
			free_after_touch -= kvpool_is_free(g->pool, hits[i]);
		if (need > free_after_touch)
			break;
		dq_pop_front(&g->waiting);
		for (int64_t i = 0; i < n_gpu; i++) {
			kvpool_touch(g->pool, hits[i]);
			push_block(r, hits[i]);
		}
		for (int64_t i = 0; i < n_cpu; i++) {
			int32_t b = kvpool_alloc(g->pool);
			push_block(r, b);
			kvpool_set_hash(g->pool, b, block_hash(r, n_gpu + i, g->block_size));
		}
		r->n_hashed = (int32_t)(n_gpu + n_cpu);
		r->num_computed = (int32_t)cached;
		bool ok = grow_to(g, r, cached + n);
		assert(ok);
		(void)ok;
		g->step_extra_s += (double)n_cpu * g->cpu_block_transfer_s;
		if (r->first_scheduled_ns < 0) {
			r->first_scheduled_ns = now;
			r->cached_tokens = (int32_t)cached;
			g->st.prefix_queries += total;
			g->st.prefix_hits += cached;
			g->st.prefix_cpu_hits += n_cpu * g->block_size;
		}
		r->state = REQ_RUNNING;
		if (g->n_running == g->cap_running) {
			g->cap_running = g->cap_running ? 2 * g->cap_running : 64;
			g->running = xrealloc(g->running, g->cap_running * sizeof *g->running);
		}
		g->running[g->n_running++] = idx;
		add_to_step(g, step, idx, n);
		*budget -= n;
	}
}

/* Attributes a step of s seconds: to the decode tokens it produces (what
 * their steps are made of) and to the prefills in it (their own share by
 * tokens, and the rest). */
static void account_step(struct engine *g, const struct perf_step *step, double s)
{
	if (step->dec_seqs > 0) {
		struct perf_step dec;
		struct perf_breakdown d;
		perf_step_decodes_only(step, &dec);
		double alone = perf_step_time(&g->perf, &dec, &d);
		double n = (double)step->dec_seqs;
		g->st.itl_weights_s += n * (d.dense + d.experts + d.lm_head + d.allreduce + d.offload);
		g->st.itl_kv_s += n * d.attn_decode;
		g->st.itl_overhead_s += n * d.overhead;
		g->st.itl_pipeline_s += n * d.pipeline;
		g->st.itl_prefill_s += n * (s - alone);
		g->st.itl_tokens += step->dec_seqs;
	}
	for (size_t k = 0; k < g->n_scheduled; k++) {
		struct request *r = req(g, g->scheduled[k]);
		if (r->first_token_ns >= 0)
			continue;
		int64_t own = llround(s * 1e9 * (double)r->scheduled / (double)step->tokens);
		r->prefill_own_ns += own;
		r->prefill_shared_ns += llround(s * 1e9) - own;
	}
}

static int64_t vllm_start_step(struct engine *g, int64_t now)
{
	struct perf_step step;
	perf_step_clear(&step);
	g->n_scheduled = 0;
	g->step_extra_s = 0;
	int64_t budget = g->mnbt;
	if (schedule_running(g, &step, &budget))
		schedule_waiting(g, &step, &budget, now);
	if (g->n_scheduled == 0)
		return -1;
	g->step_tokens = step.tokens;
	struct perf_breakdown b;
	double s = perf_step_time(&g->perf, &step, &b) + g->step_extra_s;
	g->st.steps++;
	g->st.busy_s += s;
	g->st.time.dense += b.dense;
	g->st.time.experts += b.experts;
	g->st.time.lm_head += b.lm_head;
	g->st.time.attn_prefill += b.attn_prefill;
	g->st.time.attn_decode += b.attn_decode;
	g->st.time.allreduce += b.allreduce;
	g->st.time.offload += b.offload;
	g->st.time.overhead += b.overhead + g->step_extra_s;
	g->st.time.pipeline += b.pipeline;
	g->st.time.total += s;
	account_step(g, &step, s);
	double usage = kvpool_usage(g->pool);
	if (usage > g->st.peak_kv_usage)
		g->st.peak_kv_usage = usage;
	return evq_duration_ns(s);   /* past the horizon: run_simulate stops */
}

static void vllm_end_step(struct engine *g, int64_t now)
{
	bool any_done = false;
	for (size_t k = 0; k < g->n_scheduled; k++) {
		size_t idx = g->scheduled[k];
		struct request *r = req(g, idx);
		if (r->state != REQ_RUNNING)
			continue;
		r->num_computed += r->scheduled;
		r->scheduled = 0;
		cache_full_blocks(g, r);
		if (r->num_computed < num_tokens(r))
			continue;                     /* a prefill chunk, no token yet */
		r->generated++;
		g->setup.hooks.on_token(g->setup.hooks.ctx, idx, now);
		if (r->generated >= r->output_len) {
			r->state = REQ_FINISHED;
			r->finish_ns = now;
			free_blocks(g, r);
			any_done = true;
		}
	}
	if (any_done) {
		size_t w = 0;
		for (size_t i = 0; i < g->n_running; i++) {
			size_t idx = g->running[i];
			if (req(g, idx)->state == REQ_FINISHED)
				g->setup.hooks.on_done(g->setup.hooks.ctx, idx, now);
			else
				g->running[w++] = idx;
		}
		g->n_running = w;
	}
	g->n_scheduled = 0;
}

static void fail(struct engine *g, size_t idx, int64_t now, const char *why)
{
	struct request *r = req(g, idx);
	r->state = REQ_FAILED;
	r->fail_reason = why;
	r->finish_ns = now;
	g->setup.hooks.on_done(g->setup.hooks.ctx, idx, now);
}

static void vllm_submit(struct engine *g, size_t idx, int64_t now)
{
	struct request *r = req(g, idx);
	int64_t total = (int64_t)r->prompt_len + r->output_len;
	r->enqueue_ns = now;
	if (total > g->max_model_len) {
		/* vLLM answers 400: "This model's maximum context length is …". */
		fail(g, idx, now, "prompt + max_tokens exceeds max_model_len");
		return;
	}
	if (cdiv(total, g->block_size) > kvpool_num_usable(g->pool)) {
		fail(g, idx, now, "needs more KV blocks than the whole pool holds");
		return;
	}
	r->state = REQ_WAITING;
	dq_push_back(&g->waiting, idx);
}

static void vllm_gauges(const struct engine *g, struct engine_gauges *out)
{
	out->running = (int64_t)g->n_running;
	out->waiting = (int64_t)g->waiting.len;
	out->kv_usage = kvpool_usage(g->pool);
	out->step_tokens = g->step_tokens;
}

static void vllm_stats(const struct engine *g, struct engine_stats *st)
{
	*st = g->st;
}

/* vLLM's defaults for the OpenAI server (arg_utils.py, about v0.11). */
static void resolve_defaults(struct engine *g, const struct scenario *sc,
			     const struct hw_profile *hw, const struct model *m)
{
	bool big = hw_memory_bytes(hw) >= 70.0 * 1073741824.0 && !strstr(hw->id, "a100") &&
		   hw->hw_class != HW_CPU;
	g->mnbt = sc->max_num_batched_tokens > 0 ? sc->max_num_batched_tokens : big ? 8192 : 2048;
	g->max_seqs = sc->max_num_seqs > 0 ? sc->max_num_seqs : big ? 1024 : 256;
	g->max_model_len = sc->max_model_len > 0 ? sc->max_model_len :
			   m->max_position_embeddings > 0 ? m->max_position_embeddings : 4096;
	if (!sc->enable_chunked_prefill && sc->max_num_batched_tokens <= 0)
		g->mnbt = g->max_model_len;  /* without chunking a whole prompt must fit */
	if (sc->max_num_seqs <= 0 && g->max_seqs > g->mnbt)
		g->max_seqs = g->mnbt;
}

/* Sizes the pool as gpu_worker.py does: utilization × memory minus the
 * weights (a vision tower's included), the rotary cache, the activation
 * peak of a max_num_batched_tokens dummy step and non-torch memory,
 * divided by the bytes of a block (per GPU; with pipeline stages, the
 * GPU with the least room, as vLLM takes the minimum over workers). */
static int size_pool(struct engine *g, struct err *e)
{
	const struct scenario *sc = g->setup.sc;
	const struct model *m = g->setup.model;
	const struct hw_profile *hw = g->setup.hw;
	double tp = (double)sc->tensor_parallel_size;
	double kv_elem = sc->kv_cache_dtype == 1 ? 1 : 2;
	/* With pipeline stages the binding GPU is the last stage's: the
	 * fullest stage's layers (their weights and KV), the LM head and the
	 * sampler (model_weight_bytes_per_gpu). */
	double stage = g->perf.stage_layers / (double)m->n_layers;
	double kv_token_gpu = model_kv_bytes_per_token_per_rank(m, kv_elem, (int)tp) * stage;
	double block_bytes = kv_token_gpu * (double)g->block_size;
	double weights = model_weight_bytes_per_gpu(m, g->setup.weights, (int)tp, g->perf.pp);
	/* --cpu-offload-gb: that much of each GPU's weights lives in host
	 * memory and streams over the host link every step. */
	weights -= perf_offload(&g->perf, sc->cpu_offload_gb, weights);
	/* What vLLM's start-up profiling leaves out of the pool besides the
	 * weights, per GPU: the activations of a max_num_batched_tokens dummy
	 * step (FFN intermediates and hidden states, 16-bit), the sampler's
	 * working set on fp32 logits, and non-torch
	 * memory (CUDA context, cuBLAS workspace, NCCL). The three
	 * coefficients are a least-squares fit to the 11 dense runs of
	 * ../shared/calibration/ (residual <= 0.3 GiB; README "KV pool"). */
	double ffn = (double)(m->n_moe_layers ? m->expert_ffn_width * m->experts_per_token :
						 m->dense_ffn_width);
	double act = 0.417 * (double)g->mnbt * (3 * ffn / tp + 4 * (double)m->hidden) * 2;
	/* The sampler term was fitted on runs that all had max_num_seqs 128;
	 * how it grows with max_num_seqs is unknown, so it is held at its
	 * fitted size (12.2 fp32 copies of 128 rows of logits) rather than
	 * extrapolated. */
	double sampler = 12.2 * 128 * (double)m->vocab * 4;
	double non_torch = 0.411 * 1073741824.0;
	act += sampler;
	double rope = model_rope_cache_bytes(m);
	double available = ceil(hw_memory_bytes(hw) * sc->gpu_memory_utilization) - weights - act -
			   non_torch - rope;
	g->st.weight_bytes_per_gpu = weights;
	g->st.activation_bytes = act;
	g->st.non_torch_bytes = non_torch;
	g->st.kv_bytes_per_block = block_bytes;
	int64_t blocks = sc->num_gpu_blocks_override > 0 ? sc->num_gpu_blocks_override :
			 (int64_t)floor(available / block_bytes);
	if (blocks < 2)
		return err_set(e, "%s: the model's weights (%.1f GB per GPU) and activations leave no room for a KV cache in %.1f GB × gpu_memory_utilization %.2f; use more tensor parallelism, a smaller precision or a larger device",
			       sc->path, weights / 1e9, hw_memory_bytes(hw) / 1e9, sc->gpu_memory_utilization);
	g->st.num_gpu_blocks = blocks;
	int64_t cpu_blocks = (int64_t)floor(sc->kv_offload_gib * 1073741824.0 / block_bytes);
	g->st.num_cpu_blocks = cpu_blocks;
	g->cpu_block_transfer_s = block_bytes / (hw->host_bandwidth_gb_s * 1e9);
	g->pool = kvpool_create(blocks, cpu_blocks);
	return 0;
}

static struct engine *vllm_create(const struct engine_setup *setup, struct err *e)
{
	struct engine *g = xcalloc(1, sizeof *g);
	const struct scenario *sc = setup->sc;
	g->setup = *setup;
	g->block_size = sc->block_size;
	g->caching = sc->enable_prefix_caching;
	g->chunked = sc->enable_chunked_prefill;
	g->threshold = sc->long_prefill_token_threshold;
	resolve_defaults(g, sc, setup->hw, setup->model);
	perf_init(&g->perf, setup->model, setup->hw, setup->weights, (int)sc->tensor_parallel_size,
		  sc->kv_cache_dtype == 1 ? 1 : 2);
	if (sc->pipeline_parallel_size > setup->model->n_layers) {
		err_set(e, "%s: [engine] pipeline_parallel_size: expected at most the model's %lld layers, got %lld",
			sc->pipeline_parallel_at, (long long)setup->model->n_layers,
			(long long)sc->pipeline_parallel_size);
		free(g);
		return NULL;
	}
	perf_pipeline(&g->perf, (int)sc->pipeline_parallel_size);
	if (size_pool(g, e)) {
		free(g);
		return NULL;
	}
	g->st.max_num_batched_tokens = g->mnbt;
	g->st.max_num_seqs = g->max_seqs;
	g->st.max_model_len = g->max_model_len;
	g->st.block_size = g->block_size;
	return g;
}

static void vllm_destroy(struct engine *g)
{
	if (!g)
		return;
	kvpool_destroy(g->pool);
	free(g->running);
	free(g->waiting.v);
	free(g->scheduled);
	free(g->hits);
	free(g);
}

const struct engine_class vllm_engine_class = {
	.name = "vllm",
	.create = vllm_create,
	.destroy = vllm_destroy,
	.submit = vllm_submit,
	.start_step = vllm_start_step,
	.end_step = vllm_end_step,
	.gauges = vllm_gauges,
	.stats = vllm_stats,
};
