/*
 * vllmsched: one pass of vLLM V1's Scheduler.schedule()
 * (vllm/v1/core/sched/scheduler.py) and the KV blocks it hands out
 * (kvpool.c), over the engine of vllm_int.h.
 *
 * Spend max_num_batched_tokens on the running requests in order (decodes
 * and unfinished prefill chunks), preempting when a block cannot be had
 * (the last admitted, or under the priority policy the last by (priority,
 * arrival)); then, if nobody was preempted, admit waiting requests in
 * order while max_num_seqs and free blocks allow, after a prefix-cache
 * lookup. A CPU-tier hit parks its request until its blocks are loaded
 * (vLLM 0.11 on; servesim 1's timing adds the load to the step instead).
 * With async scheduling a request whose step in flight samples its last
 * token is skipped.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "vllm_int.h"
#include "simassert.h"
#include "xalloc.h"

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

/* The first block of r that only r itself could ever hit (block_hash
 * of own_key, which a request outside a conversation has alone), or
 * INT64_MAX when every block may be shared. A preempted request's blocks
 * are all findable: it may come back for them. */
static int64_t first_private_block(const struct request *r, int64_t bs)
{
	if (r->conversation >= 0 || r->preemptions > 0)
		return INT64_MAX;
	int64_t shared = r->shared_len;
	if ((int64_t)r->n_block512 * 512 > shared)
		shared = (int64_t)r->n_block512 * 512;
	return shared / bs;   /* the first block that ends past the shared part */
}

/* Registers the hashes of r's blocks that the first tokens fill. Called
 * once per request per step: the common case (no block filled) costs a
 * compare. Private blocks (first_private_block) stay out of the prefix
 * table until a preemption publishes them (vllm_publish_blocks). */
void vllm_cache_full_blocks(struct engine *g, struct request *r, int64_t tokens)
{
	if (!g->caching || tokens < (int64_t)(r->n_hashed + 1) * g->block_size)
		return;
	int64_t full = tokens / g->block_size;
	int64_t priv = first_private_block(r, g->block_size);
	for (int64_t j = r->n_hashed; j < full && j < r->n_blocks; j++) {
		uint64_t h = block_hash(r, j, g->block_size);
		if (j >= priv)
			kvpool_set_private_hash(g->pool, r->blocks[j], h);
		else
			kvpool_set_hash(g->pool, r->blocks[j], h);
	}
	if (full > r->n_hashed)
		r->n_hashed = (int32_t)(full < r->n_blocks ? full : r->n_blocks);
}

void vllm_free_blocks(struct engine *g, struct request *r)
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
	return ra->id > rb->id;
}

/* Whether waiting request a goes behind b under --scheduling-policy
 * priority: vLLM's (priority, arrival) order, except that a request that
 * holds its blocks (back from a CPU-tier load or a remote pull) goes ahead
 * of those that need blocks, as it does under FCFS. vLLM's heap keeps the
 * plain order, so a preempted request of a better priority, which holds
 * none, can stop admission at the head while the ones behind it hold the
 * blocks it waits for; with nothing running, vLLM would wait forever. */
static bool waits_behind(struct engine *g, size_t a, size_t b)
{
	bool holds_a = req(g, a)->n_blocks > 0, holds_b = req(g, b)->n_blocks > 0;
	if (holds_a != holds_b)
		return holds_b;
	return comes_after(g, a, b);
}

/* Into the waiting queue: FCFS appends a new request and puts a preempted
 * or reloaded one first; priority keeps the queue in waits_behind's order
 * (O(queue) per insertion). */
void vllm_enqueue_waiting(struct engine *g, size_t idx, bool front)
{
	struct reqq *q = &g->waiting;
	if (!g->priority) {
		if (!front) {
			reqq_push_back(q, idx);
			return;
		}
		reqq_push_front(q, idx);
		/* A request that needs blocks goes behind the ones at the front
		 * that already hold theirs (back from a CPU-tier load or a
		 * remote pull): else it could wait for blocks they hold while
		 * they wait behind it, and the engine would stall. */
		if (req(g, idx)->n_blocks > 0)
			return;
		for (size_t k = 0; k + 1 < q->len && req(g, *reqq_at(q, k + 1))->n_blocks > 0; k++) {
			size_t *a = reqq_at(q, k), *b = reqq_at(q, k + 1), t = *a;
			*a = *b;
			*b = t;
		}
		return;
	}
	reqq_push_back(q, idx);
	for (size_t k = q->len - 1; k > 0; k--) {
		size_t *prev = reqq_at(q, k - 1), *cur = reqq_at(q, k);
		if (!waits_behind(g, *prev, *cur))
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
	/* Its private blocks become findable: it may hit them when it is
	 * scheduled again. */
	for (int32_t j = 0; j < r->n_hashed; j++)
		kvpool_publish(g->pool, r->blocks[j]);
	vllm_free_blocks(g, r);
	r->num_computed = 0;
	r->state = REQ_WAITING;
	r->preemptions++;
	r->ff_sample = -1;               /* its next token's gap spans the wait */
	g->st.preemptions++;
	vllm_enqueue_waiting(g, victim, true);
}

/* Takes request idx back out of step b (priority preemption of a request
 * scheduled earlier in the same pass), returning its tokens to the budget.
 * O(step): it rebuilds the step's sums. */
static void unschedule(struct engine *g, struct batch *b, size_t idx, int64_t *budget)
{
	size_t k = b->len;
	while (k-- > 0 && b->idx[k] != idx) {
	}
	SIM_ASSERT(k < b->len, SIM_NO_TIME, idx);
	struct request *r = req(g, idx);
	*budget += b->n[k];
	r->pending -= b->samples[k];
	r->num_computed -= b->n[k];
	b->len--;
	if (g->spec.method && b->drafts[k]) {
		b->draft.seqs--;             /* the drafter's batch: one sequence less (its
					      * KV-read sum is left: a rare, small overcount) */
		b->draft.tokens--;
		b->draft.dec_seqs--;
		b->draft.sampled--;
	}
	if (g->spec.method)
		memmove(&b->drafts[k], &b->drafts[k + 1], (b->len - k) * sizeof *b->drafts);
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
static void add_to_step(struct engine *g, struct batch *b, size_t i, int64_t n, int32_t drafts)
{
	struct request *r = req(g, i);
	bool samples = r->num_computed + n >= num_tokens(r);
	perf_step_add(&b->step, &g->perf, n, r->num_computed, samples);
	if (b->len == b->cap) {
		b->cap = b->cap ? 2 * b->cap : 64;
		b->idx = xrealloc(b->idx, b->cap * sizeof *b->idx);
		b->n = xrealloc(b->n, b->cap * sizeof *b->n);
		b->samples = xrealloc(b->samples, b->cap * sizeof *b->samples);
		b->drafts = xrealloc(b->drafts, b->cap * sizeof *b->drafts);
	}
	if (g->spec.method) {   /* the drafter's batch (its own model for draft and EAGLE) */
		if (drafts)
			perf_step_add(&b->draft, g->spec.method->cost == SPEC_COST_MODEL ? &g->spec.draft : &g->perf,
				      1, r->num_computed + n, true);
		b->drafts[b->len] = drafts;
	}
	b->idx[b->len] = i;
	b->n[b->len] = (int32_t)n;
	b->samples[b->len++] = samples;
	if (samples)
		r->ff_sample = b->pass;
	r->num_computed += (int32_t)n;
	r->pending += samples;
	if (g->cache_at_alloc) {
		/* KVCacheManager.allocate_slots caches the blocks it allocates:
		 * a request admitted later in this step can hit them. */
		int64_t known = (int64_t)r->prompt_len + r->generated;
		vllm_cache_full_blocks(g, r, r->num_computed < known ? r->num_computed : known);
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

int64_t vllm_demand(const struct engine *g, const struct request *r, bool *samples)
{
	*samples = false;
	if (r->pending > 0 && r->num_computed + 1 >= (int64_t)r->prompt_len + r->output_len)
		return 0;   /* schedule_running's async skip */
	int64_t n = clip(g, num_tokens(r) - r->num_computed, INT64_MAX, r);
	if (n <= 0)
		return 0;
	*samples = r->num_computed + n >= num_tokens(r);
	return n;
}

/* A decode with speculative decoding on: the k proposed tokens it
 * verifies, no more than its output has left, the budget and
 * max_model_len allow. Out of line: the loop without it stays as fast. */
static __attribute__((noinline)) int32_t spec_drafts(const struct engine *g, const struct request *r,
						     int64_t budget)
{
	int64_t d = g->spec.k, left = (int64_t)r->output_len - r->generated - r->pending - 1;
	int64_t room = g->max_model_len - 1 - r->num_computed - 1;
	d = d < left ? d : left;
	d = d < budget - 1 ? d : budget - 1;
	d = d < room ? d : room;
	return d > 0 ? (int32_t)d : 0;
}

/* Schedules the running requests; returns false when one was preempted. */
static bool schedule_running(struct engine *g, struct batch *b, int64_t *budget)
{
	bool preempted = false;
	const bool spec = g->spec.method != NULL;
	for (size_t i = 0; i < g->n_running && *budget > 0; i++) {
		size_t idx = g->running[i];
		struct request *r = req(g, idx);
		/* The loop waits on each request's record: fetch ahead. */
		if (i + PREFETCH_AHEAD < g->n_running)
			__builtin_prefetch(&req(g, g->running[i + PREFETCH_AHEAD])->num_computed);
		/* Async scheduling: a request whose step in flight samples its
		 * last token is not scheduled again (scheduler.py: "avoid
		 * scheduling an extra step"). */
		if (r->pending > 0 && r->num_computed + 1 >= (int64_t)r->prompt_len + r->output_len)
			continue;
		int64_t n = clip(g, num_tokens(r) - r->num_computed, *budget, r);
		if (n <= 0)
			continue;
		int32_t drafts = 0;
		if (__builtin_expect(spec, 0) && n == 1 && r->generated > 0) {
			drafts = spec_drafts(g, r, *budget);
			n += drafts;
		}
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
		add_to_step(g, b, idx, n, drafts);
		*budget -= n;
	}
	return !preempted;
}

/* A fast-forward pass's running part: the explicit set alone, in order.
 * vllm_ff_begin_pass saw that every request's tokens fit the budget and
 * their blocks the pool, so nothing is clipped and nobody is preempted:
 * the same as schedule_running with the lazy requests in their places. */
static void schedule_explicit(struct engine *g, struct batch *b, int64_t *budget)
{
	const struct idxvec *x = &g->ff.expl;
	for (size_t i = 0; i < x->len; i++) {
		size_t idx = x->v[i];
		struct request *r = req(g, idx);
		bool samples;
		int64_t n = vllm_demand(g, r, &samples);
		if (n <= 0)
			continue;
		bool ok = grow_to(g, r, r->num_computed + n);
		SIM_ASSERT(ok && n <= *budget, SIM_NO_TIME, idx);
		(void)ok;
		add_to_step(g, b, idx, n, 0);
		*budget -= n;
	}
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

int64_t vllm_prefix_hit_tokens(const struct engine *g, const struct request *r)
{
	if (!g->caching)
		return 0;
	int64_t max_blocks = ((int64_t)r->prompt_len - 1) / g->block_size, j = 0;
	while (j < max_blocks && kvpool_lookup(g->pool, block_hash(r, j, g->block_size)) >= 0)
		j++;
	return j * g->block_size;
}

/* Into parked, kept in kv_ready_ns order (host-link loads land in order;
 * remote pulls over several links need not). O(parked) when out of order. */
static void park_sorted(struct engine *g, size_t idx)
{
	struct reqq *q = &g->parked;
	reqq_push_back(q, idx);
	for (size_t k = q->len - 1; k > 0; k--) {
		size_t *prev = reqq_at(q, k - 1), *cur = reqq_at(q, k);
		if (req(g, *prev)->kv_ready_ns <= req(g, *cur)->kv_ready_ns)
			break;
		size_t t = *prev;
		*prev = *cur;
		*cur = t;
	}
}

/* A request whose prompt was prefilled on another replica (P/D
 * disaggregation, vLLM's NixlConnector): it takes blocks for its prompt
 * and first token here, waits (WAITING_FOR_REMOTE_KVS) while the cluster
 * pulls the KV over its link, and is parked until it lands. False when
 * the pool is short: it waits at the head of the queue for blocks. */
static bool admit_remote(struct engine *g, size_t idx, int64_t now)
{
	struct request *r = req(g, idx);
	int64_t need = cdiv(num_tokens(r), g->block_size);
	if (need > kvpool_num_free(g->pool))
		return false;
	reqq_pop_front(&g->waiting);
	for (int64_t i = 0; i < need; i++)
		push_block(r, kvpool_alloc(g->pool));
	r->n_hashed = 0;
	if (r->first_scheduled_ns < 0)
		r->first_scheduled_ns = now;
	r->kv_ready_ns = g->setup.hooks.kv_pull(g->setup.hooks.kv_ctx, idx, now);
	SIM_ASSERT(r->kv_ready_ns >= now, now, idx);
	park_sorted(g, idx);
	return true;
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
	park_sorted(g, idx);
}

/* Parked requests whose blocks are in by now: their blocks hashed (others
 * may hit them from here), back at the front of the waiting queue in the
 * order they were parked. */
void vllm_unpark(struct engine *g, int64_t now)
{
	size_t n = 0;
	while (n < g->parked.len && req(g, *reqq_at(&g->parked, n))->kv_ready_ns <= now)
		n++;
	for (size_t k = n; k-- > 0;) {
		size_t idx = *reqq_at(&g->parked, k);
		struct request *r = req(g, idx);
		if (r->remote_kv) {
			/* The pulled prompt: computed, its full blocks cached, and
			 * the first token (sampled on the prefill side) streams now. */
			r->remote_kv = 0;
			r->num_computed = r->prompt_len;
			vllm_cache_full_blocks(g, r, r->prompt_len);
			r->chunk = 1;
			g->setup.hooks.on_token(g->setup.hooks.ctx, idx, now);
			vllm_enqueue_waiting(g, idx, true);
			continue;
		}
		for (int32_t j = r->n_hashed; j < r->n_blocks; j++)
			kvpool_set_hash(g->pool, r->blocks[j], block_hash(r, j, g->block_size));
		r->n_hashed = r->n_blocks;
		r->num_computed = r->n_blocks * (int32_t)g->block_size;
		vllm_enqueue_waiting(g, idx, true);
	}
	for (size_t k = 0; k < n; k++)
		reqq_pop_front(&g->parked);
}

static void schedule_waiting(struct engine *g, struct batch *b, int64_t *budget, int64_t now)
{
	while (g->waiting.len && *budget > 0 && (int64_t)g->n_running < g->max_seqs) {
		size_t idx = reqq_front(&g->waiting);
		struct request *r = req(g, idx);
		int64_t total = num_tokens(r);
		int64_t n_gpu = 0, n_cpu = 0, cached;
		int32_t *hits = g->hits;
		if (r->remote_kv) {
			if (!admit_remote(g, idx, now))
				break;
			continue;
		}
		bool held = r->n_blocks > 0;     /* back from a CPU-tier load or a pull */
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
		reqq_pop_front(&g->waiting);
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
		SIM_ASSERT(ok, now, idx);
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
		r->run_seq = g->ff.next_seq++;
		if (g->n_running == g->cap_running) {
			g->cap_running = g->cap_running ? 2 * g->cap_running : 64;
			g->running = xrealloc(g->running, g->cap_running * sizeof *g->running);
		}
		g->running[g->n_running++] = idx;
		add_to_step(g, b, idx, n, 0);
		*budget -= n;
	}
}

/* One scheduler pass into b, at now: running requests first, then, if
 * nobody was preempted, waiting ones. */
void vllm_schedule(struct engine *g, struct batch *b, int64_t now)
{
	perf_step_clear(&b->step);
	perf_step_clear(&b->draft);
	b->len = 0;
	b->extra_s = 0;
	b->n_lazy = 0;
	b->pass = g->ff.passes;
	int64_t budget = g->mnbt;
	size_t had = g->n_running;
	if (g->ff.on && vllm_ff_begin_pass(g, b, &budget)) {
		schedule_explicit(g, b, &budget);
		had = g->n_running;
		schedule_waiting(g, b, &budget, now);
	} else if (schedule_running(g, b, &budget)) {
		schedule_waiting(g, b, &budget, now);
	}
	if (g->ff.on)
		vllm_ff_end_pass(g, b, had);
}

