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
#include "kvpool.h"
#include "overhead.h"
#include "vllmver.h"
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

/* Removes x (present once). O(len): only a preempted request finished by
 * a step still in flight takes it. */
static void dq_remove(struct deque *q, size_t x)
{
	size_t i = 0;
	while (q->v[(q->head + i) % q->cap] != x)
		i++;
	for (; i + 1 < q->len; i++)
		q->v[(q->head + i) % q->cap] = q->v[(q->head + i + 1) % q->cap];
	q->len--;
}

/* One scheduled step: its requests, their tokens, whether each samples. */
struct batch {
	size_t *idx;
	int32_t *n;
	bool *samples;
	size_t len, cap;
	struct perf_step step;
	double extra_s;                  /* CPU-tier loads in this step */
};

struct engine {
	struct engine_setup setup;
	struct perf perf;
	struct kvpool *pool;
	int64_t block_size, mnbt, max_seqs, max_model_len, threshold;
	bool caching, chunked;
	/* vLLM's timing (vllmver.h, overhead.h). With async scheduling
	 * batch[cur] is on the GPU and batch[1 - cur], when queued, was
	 * scheduled while it ran and starts when it ends (EngineCore's batch
	 * queue of two); without, batch[0] is the only one. */
	bool async, timing, cache_at_alloc;
	bool priority;                   /* --scheduling-policy priority, else fcfs */
	struct overhead_model ovh;
	struct batch batch[2];
	int cur;
	bool queued;
	double cpu_block_transfer_s;     /* one block over the host link */
	size_t *running;                 /* admission order */
	size_t n_running, cap_running;
	struct deque waiting;
	struct deque parked;             /* loading CPU-tier blocks, by kv_ready_ns */
	int64_t link_free_ns;            /* the host link's loads end here */
	bool idle_wait;                  /* the "step" running waits on a load */
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

/* Its tokens, sampled ones still in flight included (vLLM's num_tokens
 * plus num_output_placeholders). */
static int64_t num_tokens(const struct request *r)
{
	return (int64_t)r->prompt_len + r->generated + r->pending;
}

static void push_block(struct request *r, int32_t b)
{
	if (r->n_blocks == r->cap_blocks) {
		r->cap_blocks = r->cap_blocks ? 2 * r->cap_blocks : 8;
		r->blocks = xrealloc(r->blocks, (size_t)r->cap_blocks * sizeof *r->blocks);
	}
	r->blocks[r->n_blocks++] = b;
}

/* Registers the hashes of r's blocks that the first tokens fill. Called
 * once per request per step: the common case (no block filled) costs a
 * compare. */
static void cache_full_blocks(struct engine *g, struct request *r, int64_t tokens)
{
	if (!g->caching || tokens < (int64_t)(r->n_hashed + 1) * g->block_size)
		return;
	int64_t full = tokens / g->block_size;
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

/* Whether request a comes after request b under --scheduling-policy
 * priority: vLLM orders by (priority, arrival_time), lower first. */
static bool comes_after(struct engine *g, size_t a, size_t b)
{
	const struct request *ra = req(g, a), *rb = req(g, b);
	if (ra->priority != rb->priority)
		return ra->priority > rb->priority;
	if (ra->enqueue_ns != rb->enqueue_ns)
		return ra->enqueue_ns > rb->enqueue_ns;
	return a > b;
}

/* Into the waiting queue: FCFS appends a new request and puts a preempted
 * or reloaded one first; priority keeps the queue in (priority, arrival)
 * order (O(queue) per insertion). */
static void enqueue_waiting(struct engine *g, size_t idx, bool front)
{
	struct deque *q = &g->waiting;
	if (!g->priority) {
		if (front)
			dq_push_front(q, idx);
		else
			dq_push_back(q, idx);
		return;
	}
	dq_push_back(q, idx);
	for (size_t k = q->len - 1; k > 0; k--) {
		size_t *prev = &q->v[(q->head + k - 1) % q->cap], *cur = &q->v[(q->head + k) % q->cap];
		if (!comes_after(g, *prev, *cur))
			break;
		size_t t = *prev;
		*prev = *cur;
		*cur = t;
	}
}

/* Where in running the request to preempt is: the last admitted (FCFS),
 * or the last by (priority, arrival) (priority). */
static size_t victim_at(struct engine *g)
{
	size_t v = g->n_running - 1;
	if (g->priority)
		for (size_t i = 0; i < g->n_running; i++)
			if (comes_after(g, g->running[i], g->running[v]))
				v = i;
	return v;
}

static void preempt_at(struct engine *g, size_t pos)
{
	size_t victim = g->running[pos];
	struct request *r = req(g, victim);
	memmove(&g->running[pos], &g->running[pos + 1], (g->n_running - pos - 1) * sizeof *g->running);
	g->n_running--;
	free_blocks(g, r);
	r->num_computed = 0;
	r->state = REQ_WAITING;
	r->preemptions++;
	g->st.preemptions++;
	enqueue_waiting(g, victim, true);
}

/* Takes request idx back out of step b (priority preemption of a request
 * scheduled earlier in the same pass), returning its tokens to the budget.
 * O(step): it rebuilds the step's sums. */
static void unschedule(struct engine *g, struct batch *b, size_t idx, int64_t *budget)
{
	size_t k = b->len;
	while (k-- > 0 && b->idx[k] != idx) {
	}
	assert(k < b->len);
	struct request *r = req(g, idx);
	*budget += b->n[k];
	r->pending -= b->samples[k];
	r->num_computed -= b->n[k];
	b->len--;
	memmove(&b->idx[k], &b->idx[k + 1], (b->len - k) * sizeof *b->idx);
	memmove(&b->n[k], &b->n[k + 1], (b->len - k) * sizeof *b->n);
	memmove(&b->samples[k], &b->samples[k + 1], (b->len - k) * sizeof *b->samples);
	perf_step_clear(&b->step);
	for (k = 0; k < b->len; k++) {
		const struct request *o = req(g, b->idx[k]);
		perf_step_add(&b->step, &g->perf, b->n[k], o->num_computed - b->n[k], b->samples[k]);
	}
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

/* Puts n tokens of request i into the step. Its tokens count as
 * computed from here on (vLLM's num_computed_tokens moves at scheduling),
 * and a sampled token is pending until the step ends. */
static void add_to_step(struct engine *g, struct batch *b, size_t i, int64_t n)
{
	struct request *r = req(g, i);
	bool samples = r->num_computed + n >= num_tokens(r);
	perf_step_add(&b->step, &g->perf, n, r->num_computed, samples);
	if (b->len == b->cap) {
		b->cap = b->cap ? 2 * b->cap : 64;
		b->idx = xrealloc(b->idx, b->cap * sizeof *b->idx);
		b->n = xrealloc(b->n, b->cap * sizeof *b->n);
		b->samples = xrealloc(b->samples, b->cap * sizeof *b->samples);
	}
	b->idx[b->len] = i;
	b->n[b->len] = (int32_t)n;
	b->samples[b->len++] = samples;
	r->num_computed += (int32_t)n;
	r->pending += samples;
	if (g->cache_at_alloc) {
		/* KVCacheManager.allocate_slots caches the blocks it allocates:
		 * a request admitted later in this step can hit them. */
		int64_t known = (int64_t)r->prompt_len + r->generated;
		cache_full_blocks(g, r, r->num_computed < known ? r->num_computed : known);
	}
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
static bool schedule_running(struct engine *g, struct batch *b, int64_t *budget)
{
	bool preempted = false;
	for (size_t i = 0; i < g->n_running && *budget > 0; i++) {
		size_t idx = g->running[i];
		struct request *r = req(g, idx);
		/* Async scheduling: a request whose step in flight samples its
		 * last token is not scheduled again (scheduler.py: "avoid
		 * scheduling an extra step"). */
		if (r->pending > 0 && r->num_computed + 1 >= (int64_t)r->prompt_len + r->output_len)
			continue;
		int64_t n = clip(g, num_tokens(r) - r->num_computed, *budget, r);
		if (n <= 0)
			continue;
		bool got = false;
		while (!(got = grow_to(g, r, r->num_computed + n))) {
			size_t pos = victim_at(g);
			bool self = pos == i;
			if (pos < i) {
				/* Priority: a request already in this step goes. */
				unschedule(g, b, g->running[pos], budget);
				i--;
			}
			preempt_at(g, pos);
			preempted = true;
			if (self)
				break;
		}
		if (!got)
			break;
		add_to_step(g, b, idx, n);
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

/* A CPU-tier hit with vLLM's offloading connector: the request gets GPU
 * blocks for the n_cpu blocks found in host memory and waits
 * (WAITING_FOR_REMOTE_KVS) while they cross the host link, one load after
 * another, instead of joining a step; it is back in the waiting queue, at
 * its front, once they are in (unpark). */
static void park(struct engine *g, size_t idx, int64_t n_cpu, int64_t now)
{
	struct request *r = req(g, idx);
	for (int64_t i = 0; i < n_cpu; i++)
		push_block(r, kvpool_alloc(g->pool));
	int64_t start = g->link_free_ns > now ? g->link_free_ns : now;
	r->kv_ready_ns = start + llround((double)n_cpu * g->cpu_block_transfer_s * 1e9);
	g->link_free_ns = r->kv_ready_ns;
	if (r->first_scheduled_ns < 0)
		g->st.prefix_cpu_hits += n_cpu * g->block_size;
	dq_push_back(&g->parked, idx);
}

/* Parked requests whose blocks are in by now: their blocks hashed (others
 * may hit them from here), back at the front of the waiting queue in the
 * order they were parked. */
static void unpark(struct engine *g, int64_t now)
{
	size_t n = 0;
	while (n < g->parked.len && req(g, g->parked.v[(g->parked.head + n) % g->parked.cap])->kv_ready_ns <= now)
		n++;
	for (size_t k = n; k-- > 0;) {
		size_t idx = g->parked.v[(g->parked.head + k) % g->parked.cap];
		struct request *r = req(g, idx);
		for (int32_t j = r->n_hashed; j < r->n_blocks; j++)
			kvpool_set_hash(g->pool, r->blocks[j], block_hash(r, j, g->block_size));
		r->n_hashed = r->n_blocks;
		r->num_computed = r->n_blocks * (int32_t)g->block_size;
		enqueue_waiting(g, idx, true);
	}
	for (size_t k = 0; k < n; k++)
		dq_pop_front(&g->parked);
}

static void schedule_waiting(struct engine *g, struct batch *b, int64_t *budget, int64_t now)
{
	while (g->waiting.len && *budget > 0 && (int64_t)g->n_running < g->max_seqs) {
		size_t idx = dq_front(&g->waiting);
		struct request *r = req(g, idx);
		int64_t total = num_tokens(r);
		int64_t n_gpu = 0, n_cpu = 0, cached;
		int32_t *hits = g->hits;
		bool held = r->n_blocks > 0;     /* back from a CPU-tier load */
		if (held) {
			cached = r->num_computed;
		} else {
			int64_t max_hit = (total - 1) / g->block_size;
			xgrow(&g->hits, &g->cap_hits, (size_t)max_hit, sizeof *g->hits);
			hits = g->hits;
			n_cpu = lookup_prefix(g, r, hits, &n_gpu, max_hit);
			cached = (n_gpu + n_cpu) * g->block_size;
		}
		int64_t n = total - cached;
		if (!g->chunked && n > *budget)
			break;
		n = clip(g, n, *budget, r);
		/* Blocks to allocate: everything not already on the GPU; free
		 * cached hits leave the free queue when touched. A request to
		 * park needs only the blocks it loads. */
		bool parks = g->timing && n_cpu > 0;
		int64_t need = parks ? n_cpu : cdiv(cached + n, g->block_size) - n_gpu - r->n_blocks;
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
		if (parks) {
			r->n_hashed = (int32_t)n_gpu;
			park(g, idx, n_cpu, now);
			continue;
		}
		for (int64_t i = 0; i < n_cpu; i++) {
			int32_t blk = kvpool_alloc(g->pool);
			push_block(r, blk);
			kvpool_set_hash(g->pool, blk, block_hash(r, n_gpu + i, g->block_size));
		}
		if (!held)
			r->n_hashed = (int32_t)(n_gpu + n_cpu);
		r->num_computed = (int32_t)cached;
		bool ok = grow_to(g, r, cached + n);
		assert(ok);
		(void)ok;
		b->extra_s += (double)n_cpu * g->cpu_block_transfer_s;
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
		add_to_step(g, b, idx, n);
		*budget -= n;
	}
}

/* Attributes a step of s seconds: to the decode tokens it produces (what
 * their steps are made of) and to the prefills in it (their own share by
 * tokens, and the rest; pad_s of it is CUDA-graph padding). */
static void account_step(struct engine *g, const struct batch *b, double s, double pad_s,
			 int64_t now)
{
	const struct perf_step *step = &b->step;
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
	double work = s - pad_s;
	for (size_t k = 0; k < b->len; k++) {
		struct request *r = req(g, b->idx[k]);
		if (r->first_token_ns >= 0)
			continue;
		if (r->first_launch_ns < 0)
			r->first_launch_ns = now;
		int64_t own = llround(work * 1e9 * (double)b->n[k] / (double)step->tokens);
		r->prefill_own_ns += own;
		r->prefill_shared_ns += llround(work * 1e9) - own;
		r->ttft_pad_ns += llround(pad_s * 1e9);
	}
}

/* One scheduler pass into b, at now: running requests first, then, if
 * nobody was preempted, waiting ones. */
static void schedule(struct engine *g, struct batch *b, int64_t now)
{
	perf_step_clear(&b->step);
	b->len = 0;
	b->extra_s = 0;
	int64_t budget = g->mnbt;
	if (schedule_running(g, b, &budget))
		schedule_waiting(g, b, &budget, now);
}

/* The CUDA-graph padding of a step (seconds), for the TTFT parts: the
 * step's operator rows again, only for steps that pad and hold a request
 * before its first token (never a plain decode step). */
static double graph_pad_s(struct engine *g, const struct batch *b)
{
	if (!g->timing || overhead_padded(&g->ovh, b->step.tokens) <= b->step.tokens)
		return 0;
	bool first = false;
	for (size_t k = 0; k < b->len && !first; k++)
		first = req(g, b->idx[k])->first_token_ns < 0;
	if (!first)
		return 0;
	struct perf_op ops[PERF_N_OPS];
	double total = perf_step_ops(&g->perf, &b->step, ops), parts[4];
	const struct perf_op *dense = &ops[PERF_DENSE];
	double tok = (double)b->step.tokens;
	overhead_step_s(&g->ovh, tok, (double)b->step.seqs, total - ops[PERF_OVERHEAD].time_s,
			dense->compute_bound ? dense->time_s / tok : 0, parts);
	return parts[2];
}

/* Starts b on the GPU at now; returns its duration in ns. */
static int64_t launch(struct engine *g, const struct batch *b, int64_t now)
{
	const struct perf_step *step = &b->step;
	g->step_tokens = step->tokens;
	struct perf_breakdown bd;
	double s = perf_step_time(&g->perf, step, &bd) + b->extra_s;
	g->st.steps++;
	g->st.busy_s += s;
	g->st.time.dense += bd.dense;
	g->st.time.experts += bd.experts;
	g->st.time.lm_head += bd.lm_head;
	g->st.time.attn_prefill += bd.attn_prefill;
	g->st.time.attn_decode += bd.attn_decode;
	g->st.time.allreduce += bd.allreduce;
	g->st.time.offload += bd.offload;
	g->st.time.overhead += bd.overhead + b->extra_s;
	g->st.time.pipeline += bd.pipeline;
	g->st.time.total += s;
	if (g->timing) {
		int64_t padded = overhead_padded(&g->ovh, step->tokens);
		g->st.graph_steps += padded > 0;
		g->st.eager_steps += padded == 0;
		g->st.padded_tokens += padded > 0 ? padded - step->tokens : 0;
	}
	account_step(g, b, s, graph_pad_s(g, b), now);
	double usage = kvpool_usage(g->pool);
	if (usage > g->st.peak_kv_usage)
		g->st.peak_kv_usage = usage;
	int64_t ns = (int64_t)llround(s * 1e9);
	return ns > 0 ? ns : 1;
}

/* Without async scheduling a step is scheduled and run at once. With it,
 * EngineCore keeps a batch queue of two: the step scheduled while the
 * last one ran starts now, and the next is scheduled at once, against
 * the state the running step will leave (its tokens count as computed,
 * its samples as pending). A request that arrives during a step is first
 * seen at its end, so it runs in the step after the next. */
static int64_t vllm_start_step(struct engine *g, int64_t now)
{
	struct batch *run = &g->batch[g->cur];
	unpark(g, now);
	if (!g->queued)
		schedule(g, run, now);
	g->queued = false;
	if (run->len == 0) {
		if (!g->parked.len)
			return -1;
		/* Nothing to run but a load in flight: the engine loop idles
		 * until it lands. */
		g->idle_wait = true;
		int64_t wait = req(g, dq_front(&g->parked))->kv_ready_ns - now;
		return wait > 0 ? wait : 1;
	}
	int64_t ns = launch(g, run, now);
	if (g->async) {
		struct batch *next = &g->batch[1 - g->cur];
		schedule(g, next, now);
		g->queued = next->len > 0;
	}
	return ns;
}

static void vllm_end_step(struct engine *g, int64_t now)
{
	struct batch *b = &g->batch[g->cur];
	if (g->idle_wait) {
		g->idle_wait = false;
		return;
	}
	bool any_done = false;
	/* The output path: the clients see this step's tokens that much later. */
	int64_t out_ns = g->timing ? overhead_output_ns(&g->ovh, b->step.sampled) : 0;
	int64_t seen = now + out_ns;
	for (size_t k = 0; k < b->len; k++) {
		size_t idx = b->idx[k];
		struct request *r = req(g, idx);
		bool running = r->state == REQ_RUNNING;
		if (!g->cache_at_alloc && running)
			cache_full_blocks(g, r, r->num_computed);
		if (!b->samples[k])
			continue;                     /* a prefill chunk, no token yet */
		/* A request preempted while this step ran keeps its token, as
		 * update_from_output keeps it. */
		r->pending--;
		r->generated++;
		if (r->first_token_ns < 0)
			r->first_output_ns = out_ns;
		g->setup.hooks.on_token(g->setup.hooks.ctx, idx, seen);
		if (r->generated >= r->output_len) {
			r->state = REQ_FINISHED;
			r->finish_ns = seen;
			if (running) {
				free_blocks(g, r);
				any_done = true;
			} else {
				dq_remove(&g->waiting, idx);
				g->setup.hooks.on_done(g->setup.hooks.ctx, idx, seen);
			}
		}
	}
	if (any_done) {
		size_t w = 0;
		for (size_t i = 0; i < g->n_running; i++) {
			size_t idx = g->running[i];
			if (req(g, idx)->state == REQ_FINISHED)
				g->setup.hooks.on_done(g->setup.hooks.ctx, idx, seen);
			else
				g->running[w++] = idx;
		}
		g->n_running = w;
	}
	b->len = 0;
	if (g->async)
		g->cur = 1 - g->cur;
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
	enqueue_waiting(g, idx, false);
}

/* The API server's path: servesim 1's one constant, or the overhead
 * model's fixed part plus tokenization. */
static int64_t vllm_request_path_ns(const struct engine *g, const struct request *r)
{
	if (!g->timing)
		return llround(g->setup.hw->eff.request_overhead_ms * 1e6);
	return overhead_request_ns(&g->ovh, r->prompt_len);
}

static void vllm_gauges(const struct engine *g, struct engine_gauges *out)
{
	out->running = (int64_t)g->n_running;
	out->waiting = (int64_t)(g->waiting.len + g->parked.len);
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

/* What the scenario's vLLM version (vllmver.h) and its own keys make of
 * the scheduler and the overheads: async scheduling (vLLM turns it off
 * with pipeline parallelism), CUDA graphs, where prefix hashes register,
 * and SchedulerConfig's rule that more than one partial prefill caps
 * chunks at 4% of max_model_len. */
static int resolve_timing(struct engine *g, struct err *e)
{
	const struct scenario *sc = g->setup.sc;
	const struct vllm_version *v = vllmver_find(sc->vllm_version);
	assert(v);                       /* scenario_load checked it */
	bool pp = sc->pipeline_parallel_size > 1;
	g->async = sc->async_scheduling_given ? sc->async_scheduling : v->async_scheduling && !pp;
	if (g->async && pp)
		return err_set(e, "%s: [engine] async_scheduling: not modelled with pipeline_parallel_size > 1 (servesim runs pipeline stages synchronously)",
			       sc->async_scheduling_at);
	g->timing = v->timing;
	g->priority = sc->scheduling_policy == SCHED_PRIORITY;
	g->cache_at_alloc = v->cache_at_alloc;
	if (sc->max_num_partial_prefills > 1 && g->threshold == 0)
		g->threshold = (int64_t)((double)g->max_model_len * 0.04);
	g->st.vllm_version = v->name;
	g->st.async_scheduling = g->async;
	g->st.timing = g->timing;
	if (!g->timing)
		return 0;
	const struct overhead_profile *prof = overhead_profile_find(v->overhead);
	assert(prof);
	double layers = g->perf.stage_layers;
	double moe = g->perf.n_moe_layers * layers / (double)g->setup.model->n_layers;
	overhead_model_init(&g->ovh, prof, g->setup.hw, g->async, sc->enforce_eager, g->max_seqs,
			    g->mnbt, layers, moe);
	g->perf.overhead = &g->ovh;
	g->st.max_capture_size = g->ovh.n_capture ? g->ovh.capture[g->ovh.n_capture - 1] : 0;
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
	if (size_pool(g, e) || resolve_timing(g, e)) {
		kvpool_destroy(g->pool);
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
	free(g->parked.v);
	for (int i = 0; i < 2; i++) {
		free(g->batch[i].idx);
		free(g->batch[i].n);
		free(g->batch[i].samples);
	}
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
	.request_path_ns = vllm_request_path_ns,
	.gauges = vllm_gauges,
	.stats = vllm_stats,
};
