/*
 * vllmsched: one pass of vLLM V1's Scheduler.schedule()
 * (vllm/v1/core/sched/scheduler.py) over the engine of vllm_int.h; the
 * blocks' hashes and prefix lookups are vllmblocks.c's, the parking of a
 * request whose KV is loading vllmpark.c's.
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
 *
 * Invariants: a pass spends at most max_num_batched_tokens and admits
 * while fewer than max_num_seqs run; a scheduled request's tokens count as
 * computed at once, its sampled token as pending until the step ends.
 */
#include <string.h>

#include "vllm_int.h"
#include "simassert.h"
#include "xalloc.h"

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
	vllm_publish_blocks(g, r);
	vllm_free_blocks(g, r);
	r->num_computed = 0;
	r->state = REQ_WAITING;
	r->preemptions++;
	vllm_note_private(r, g->block_size);
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
	if (need > 0)
		vllm_alloc_blocks(g, r, need);
	return true;
}

/* Puts n tokens of request i into the step. Its tokens count as
 * computed from here on (vLLM's num_computed_tokens moves at scheduling),
 * and a sampled token is pending until the step ends. */
static void add_to_step(struct engine *g, struct batch *b, size_t i, int64_t n, int32_t drafts)
{
	struct request *r = req(g, i);
	bool samples = r->num_computed + n >= vllm_num_tokens(r);
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
	int64_t n = clip(g, vllm_num_tokens(r) - r->num_computed, INT64_MAX, r);
	if (n <= 0)
		return 0;
	*samples = r->num_computed + n >= vllm_num_tokens(r);
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
		int64_t n = clip(g, vllm_num_tokens(r) - r->num_computed, *budget, r);
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

/* A fast-forward pass's running part: the explicit set alone, in order;
 * false when one was preempted. vllm_ff_begin_pass saw that every
 * request's tokens fit the budget, so nothing is clipped: the same as
 * schedule_running with the lazy requests in their places (those that
 * start a new block get it at their place: vllmffcross.c). Short of blocks (FCFS only: begin_pass syncs under priority),
 * the victims are schedule_running's, from the tail of running, after
 * the request in turn: not scheduled yet there either (vllm_ff_unrun
 * takes a lazy one out of the step's sums). Each request's demand is the
 * check's (it reads the request alone, and scheduling one changes no
 * other). */
static bool schedule_explicit(struct engine *g, struct batch *b, int64_t *budget)
{
	const struct idxvec *x = &g->ff.expl;
	bool preempted = false;
	for (size_t i = 0; i < x->len; i++) {
		size_t idx = x->v[i];
		struct request *r = req(g, idx);
		int64_t n = g->ff.demand[i];   /* vllm_demand's, taken by vllm_ff_begin_pass */
		if (n <= 0)
			continue;
		vllm_ff_cross_before(g, r->run_seq);   /* the lazy new blocks before it */
		SIM_ASSERT(n <= *budget, SIM_NO_TIME, idx);
		bool got;
		while (!(got = grow_to(g, r, r->num_computed + n))) {
			SIM_ASSERT(!g->priority, SIM_NO_TIME, idx);
			size_t pos = g->n_running - 1;   /* victim_at under FCFS */
			bool self = g->running[pos] == idx;
			vllm_ff_unrun(g, b, budget, g->running[pos]);
			preempt_at(g, pos);
			preempted = true;
			if (self)
				break;
		}
		if (!got)
			break;
		add_to_step(g, b, idx, n, 0);
		*budget -= n;
	}
	vllm_ff_cross_before(g, INT64_MAX);   /* (none when somebody was preempted) */
	return !preempted;
}

static void schedule_waiting(struct engine *g, struct batch *b, int64_t *budget, int64_t now)
{
	while (g->waiting.len && *budget > 0 && (int64_t)g->n_running < g->max_seqs) {
		size_t idx = reqq_front(&g->waiting);
		struct request *r = req(g, idx);
		int64_t total = vllm_num_tokens(r);
		int64_t n_gpu = 0, n_cpu = 0, cached;
		int32_t *hits = g->hits;
		if (r->remote_kv) {
			if (!vllm_admit_remote(g, idx, now))
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
			n_cpu = vllm_lookup_prefix(g, r, hits, &n_gpu, max_hit);
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
			vllm_push_block(g, r, hits[i]);
		}
		if (parks) {
			r->n_hashed = (int32_t)n_gpu;
			vllm_park(g, idx, n_cpu, now);
			continue;
		}
		for (int64_t i = 0; i < n_cpu; i++) {
			int32_t blk = kvpool_alloc(g->pool);
			vllm_push_block(g, r, blk);
			kvpool_set_hash(g->pool, blk, vllm_block_hash(r, n_gpu + i, g->block_size));
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
	if (g->ff.on && vllm_ff_quiet_pass(g, b, &budget))
		return;
	size_t had = g->n_running;
	if (g->ff.on && vllm_ff_begin_pass(g, b, &budget)) {
		bool whole = schedule_explicit(g, b, &budget);
		had = g->n_running;
		if (whole)   /* nobody preempted: admissions, as schedule_running's caller */
			schedule_waiting(g, b, &budget, now);
	} else if (schedule_running(g, b, &budget)) {
		schedule_waiting(g, b, &budget, now);
	}
	if (g->ff.on)
		vllm_ff_end_pass(g, b, had);
}
