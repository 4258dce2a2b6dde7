/*
 * vllmff: fast-forward decode for the vLLM engine (issue 14). Most steps
 * change nothing about most running requests but their context: each
 * decodes one token, fills no block others may hit and does not finish.
 * Such a request is made lazy for the passes until its next event (a
 * block to hash, its last tokens, a sliding window; at most FF_RING - 8):
 * the scheduler counts it in the step's aggregates (tokens, sequences,
 * the KV it reads, a sum kept across passes) instead of visiting it, a
 * new block is given to it at its pass without a visit (vllmffcross.c,
 * which says what keeps that identical), the step's
 * end hands its token to the run in one call (on_tokens_steady), and its
 * record is brought up to date (vllm_ff_catch_up) only when it is due or
 * the engine needs it. A pass visits the explicit set alone (the requests
 * that are not lazy, in running order) and the waiting queue.
 *
 * Results are byte-identical to visiting every request (hooks without
 * on_tokens_steady: --no-fast-forward). What keeps them so:
 * - the step's sums over decodes are sums of integers (exact in any order);
 * - a pass runs over the explicit set only when every running request's
 *   tokens fit max_num_batched_tokens (so no budget clips anybody, and the
 *   position of the lazy ones in the order does not matter), and no
 *   explicit running request's token has a gap other than the step's (ITL
 *   sums are then sums of one value, in any order); else every request
 *   becomes explicit again and the pass is the reference one;
 * - when their new blocks do not fit the free pool, under FCFS, the pass
 *   still runs over the explicit set: the reference preempts from the
 *   tail of running while the request in turn (an explicit one: a lazy
 *   one that needs a block at such a pass ends its run there and is
 *   explicit) cannot have its blocks, so a victim is one the
 *   reference has not scheduled yet; a lazy victim is caught up as a
 *   sync would and its decode taken out of the step's sums (integers,
 *   exact), an explicit one leaves the explicit set (vllm_ff_unrun), and
 *   the pass admits nobody, as the reference's. Under the priority policy
 *   a victim may be one scheduled earlier in the pass: every request
 *   becomes explicit again;
 * - the lazy tokens go to the run before the step's other tokens, and
 *   admitted requests' tokens come last, as in the reference order;
 * - requests touch the pool and the hooks in running order.
 *
 * The lazy are counted by load stage (each stage's ITL histogram gets
 * its own), all of one replica (the engine's). With a sliding window a
 * decode reads min(context + 1, window) of the windowed layers' KV: a lazy
 * run stays on one side of the window (cut where it would cross), so the
 * lazy split into those below it (a sum kept across passes, as the full
 * layers' read) and those past it (window each).
 *
 * Off when the run gives no on_tokens_steady (--no-fast-forward) and in
 * three cases (issue 14 looked at each; none is byte-identical without
 * visiting what it would skip):
 * - speculative decoding: acceptance is drawn per request and step, in
 *   running order, from the engine's one RNG stream: every drafting
 *   decode must be visited in that order to draw the same numbers
 *   (per-request streams would change the reference's outputs);
 * - stream_interval > 1: a request's token reaches the run only at its
 *   chunk's end, with the gap of the whole chunk, and a finishing
 *   request sends its partial chunk with a shorter gap. The ITL sums are
 *   sums of doubles in running order, so in most steps (any with a
 *   partial chunk, about (stream_interval - 1) / stream_interval of the
 *   finishes) the lazy chunks' gaps would have to be added at their
 *   places among the others, not as one count: that needs each lazy
 *   request's position (a visit, or an ordered index of them), and runs
 *   cut at chunk ends would be at most stream_interval - 1 passes long;
 * - several API servers: each server's clients see a step's tokens at
 *   that server's own time (its output work), so one step's gaps take
 *   one value per server, interleaved in running order (requests go to
 *   servers in turn), and on_token adds them one by one in that order:
 *   the same doubles in another order are other bits. It would need the
 *   run to take a step's gaps as a sequence of server classes (a new
 *   hook in sim/run) and a per-server seen/gap ring here.
 *
 * Invariants: a running request is lazy (ff_sched < ff_p1, in due[ff_p1 %
 * FF_RING]) or in expl, never both; n_lazy and lazy_kv sum over the lazy
 * ones, n_win and lazy_kv_win over the lazy runs below the window (all of
 * them without one); a request's fields are exact but for its lazy passes
 * and the step ends of them still in flight (owing).
 */
#include <string.h>

#include "simassert.h"
#include "vllm_int.h"
#include "vllmffgap.h"
#include "xalloc.h"

static void vec_push(struct idxvec *v, size_t x)
{
	xgrow(&v->v, &v->cap, v->len + 1, sizeof *v->v);
	v->v[v->len++] = x;
}

/* Takes d, a subsequence of x (the same order), out of x: one merge by
 * index, no record read. */
static void remove_subseq(struct idxvec *x, const struct idxvec *d)
{
	if (!d->len)
		return;
	size_t w = 0, j = 0;
	for (size_t i = 0; i < x->len; i++) {
		if (j < d->len && x->v[i] == d->v[j])
			j++;
		else
			x->v[w++] = x->v[i];
	}
	SIM_ASSERT(j == d->len, SIM_NO_TIME, j);
	x->len = w;
}

void vllm_ff_init(struct engine *g)
{
	struct vllm_ff *f = &g->ff;
	f->passes = 1;
	f->ends = 1;
	f->replica = -1;
	f->on = g->setup.hooks.on_tokens_steady && !g->spec.method && g->stream_interval <= 1 &&
		g->api.n <= 1;
}

void vllm_ff_free(struct engine *g)
{
	struct vllm_ff *f = &g->ff;
	for (int i = 0; i < FF_RING; i++)
		free(f->due[i].v);
	free(f->expl.v);
	free(f->owing.v);
	free(f->tmp.v);
	vllm_ff_cross_free(g);
	free(f->done.v);
	free(f->demand);
}

static int64_t min64(int64_t a, int64_t b)
{
	return a < b ? a : b;
}

/* The sliding window in tokens (INT64_MAX: none), a whole number. */
static int64_t window_of(const struct engine *g)
{
	return g->perf.window > 0 ? (int64_t)g->perf.window : INT64_MAX;
}

/* Whether r is lazy now: passes of its run not yet applied (leave_lazy
 * ends the run at the pass it is in and applies them all). */
static bool is_lazy(const struct request *r)
{
	return r->ff_sched < r->ff_p1;
}

void vllm_ff_catch_up(struct engine *g, struct request *r)
{
	struct vllm_ff *f = &g->ff;
	if (r->ff_owes && f->ends > r->ff_end - 2) {
		/* The last end of its run before this one (lazy_passes). */
		int64_t e = r->ff_end - 2;
		int64_t gap = f->gap[(uint64_t)e & (FF_RING - 1)];
		r->max_itl_ns = gap > r->max_itl_ns ? gap : r->max_itl_ns;
		r->last_token_ns = f->seen[(uint64_t)e & (FF_RING - 1)];
		r->generated++;
		r->pending--;
		r->ff_owes = 0;
	}
	int64_t ps = min64(f->passes, r->ff_p1);
	if (ps > r->ff_sched) {
		int32_t d = (int32_t)(ps - r->ff_sched);
		r->num_computed += d;
		r->pending += d;
		r->ff_sched = ps;
	}
	int64_t es = min64(f->ends, r->ff_p1);
	if (es > r->ff_end) {
		r->max_itl_ns = ffgap_max(f, r->ff_end, es, r->max_itl_ns);
		r->last_token_ns = f->seen[(es - 1) % FF_RING];
		r->generated += (int32_t)(es - r->ff_end);
		r->pending -= (int32_t)(es - r->ff_end);
		r->ff_end = es;
	}
}

/* r stops being lazy now (its due pass, or everybody's sync): caught up,
 * out of the sums; it owes the ends of its passes still in flight. */
static void leave_lazy(struct engine *g, size_t idx)
{
	struct vllm_ff *f = &g->ff;
	struct request *r = req(g, idx);
	/* Its KV read at pass p is base + p over the whole run (catching up
	 * moves num_computed and ff_sched together); a run below the window
	 * ends at or under it, one past it starts at or over it (and is two
	 * passes long at least), so its last pass tells which it was. */
	int64_t base = r->num_computed - r->ff_sched + 1;
	bool below = base + r->ff_p1 - 1 <= window_of(g);
	r->ff_p1 = f->passes;
	vllm_ff_catch_up(g, r);
	f->n_lazy--;
	f->by_stage[r->stage]--;
	f->lazy_kv -= base;
	if (below) {
		f->n_win--;
		f->lazy_kv_win -= base;
	}
	r->ff_sample = r->ff_p1 - 1;          /* it sampled in every lazy pass */
	/* Hashing at allocation: the private blocks its run filled
	 * (lazy_passes), hashed as the reference had them at this pass's
	 * start: the last pass's allocation hashed the blocks its known
	 * tokens filled (one fewer than now: one step end between two
	 * passes). Nothing read them meanwhile. */
	if (g->caching && g->cache_at_alloc) {
		int64_t known = (int64_t)r->prompt_len + r->generated - 1;
		vllm_cache_full_blocks(g, r, r->num_computed < known ? r->num_computed : known);
	}
	if (r->ff_end < r->ff_p1)
		vec_push(&f->owing, idx);
}

/* Every running request explicit again, in running order. */
static void sync_all(struct engine *g)
{
	struct vllm_ff *f = &g->ff;
	g->st.ff_syncs++;
	g->st.ff_sync_cut += (int64_t)f->n_lazy;
	for (size_t i = 0; i < g->n_running && f->n_lazy; i++) {
		struct request *r = req(g, g->running[i]);
		if (is_lazy(r)) {
			g->st.ff_sync_lost += r->ff_p1 - f->passes;
			leave_lazy(g, g->running[i]);
		}
	}
	SIM_ASSERT(f->n_lazy == 0 && f->lazy_kv == 0 && f->n_win == 0 && f->lazy_kv_win == 0, SIM_NO_TIME,
		   f->passes);
	for (int i = 0; i < FF_RING; i++)
		f->due[i].len = 0;
	vllm_ff_cross_clear(g);
	f->expl.len = 0;
	for (size_t i = 0; i < g->n_running; i++)
		vec_push(&f->expl, g->running[i]);
}

/* The requests due at this pass join the explicit set in run_seq order. */
static void take_due(struct engine *g)
{
	struct vllm_ff *f = &g->ff;
	struct idxvec *d = &f->due[f->passes % FF_RING];
	if (!d->len)
		return;
	for (size_t k = 0; k < d->len; k++) {
		if (k + PREFETCH_AHEAD < d->len)
			__builtin_prefetch(req(g, d->v[k + PREFETCH_AHEAD]));
		leave_lazy(g, d->v[k]);
	}
	/* Insertion sort of the few due (pushed by different step ends). */
	for (size_t k = 1; k < d->len; k++) {
		size_t x = d->v[k];
		int64_t s = req(g, x)->run_seq;
		size_t j = k;
		for (; j > 0 && req(g, d->v[j - 1])->run_seq > s; j--)
			d->v[j] = d->v[j - 1];
		d->v[j] = x;
	}
	struct idxvec *t = &f->tmp, *x = &f->expl;
	t->len = 0;
	xgrow(&t->v, &t->cap, x->len + d->len, sizeof *t->v);
	size_t i = 0, j = 0;
	while (i < x->len || j < d->len) {
		bool from_x = j == d->len ||
			      (i < x->len && req(g, x->v[i])->run_seq < req(g, d->v[j])->run_seq);
		t->v[t->len++] = from_x ? x->v[i++] : d->v[j++];
	}
	struct idxvec was = *x;
	*x = *t;
	*t = was;
	d->len = 0;
}

static void add_lazy_sums(struct engine *g, struct batch *b, int64_t *budget);

/* The explicit set's demands into f->demand (for schedule_explicit: each
 * from its request's own fields alone); false when the explicit set alone
 * cannot stand for the running part (a token after one that was not in
 * the step before, or a budget that would clip somebody). *blocks: the
 * new blocks the explicit requests need. */
static bool explicit_demands(struct engine *g, const struct batch *b, int64_t *blocks)
{
	struct vllm_ff *f = &g->ff;
	int64_t tokens = (int64_t)f->n_lazy;
	bool odd = false;
	*blocks = 0;
	xgrow(&f->demand, &f->cap_demand, f->expl.len, sizeof *f->demand);
	for (size_t i = 0; i < f->expl.len && !odd; i++) {
		const struct request *r = req(g, f->expl.v[i]);
		bool samples;
		int64_t n = vllm_demand(g, r, &samples);
		f->demand[i] = n;
		tokens += n;
		int64_t need = cdiv(r->num_computed + n, g->block_size) - r->n_blocks;
		*blocks += need > 0 ? need : 0;
		/* A token after one that was not in the step before. */
		odd = samples && (r->first_token_ns >= 0 || r->generated > 0 || r->pending > 0) &&
		      r->ff_sample != b->pass - 1;
	}
	return !odd && tokens <= g->mnbt;
}

bool vllm_ff_begin_pass(struct engine *g, struct batch *b, int64_t *budget)
{
	struct vllm_ff *f = &g->ff;
	take_due(g);
	int64_t blocks;   /* the explicit requests' new blocks */
	for (;;) {
		if (!f->n_lazy)
			return false;
		if (!explicit_demands(g, b, &blocks)) {
			sync_all(g);
			return false;
		}
		int64_t cross = (int64_t)vllm_ff_cross_count(g);
		if (blocks + cross <= kvpool_num_free(g->pool))
			break;
		/* Short of blocks: under priority a victim may be one
		 * scheduled earlier in the pass (sync); under FCFS the pass
		 * runs over the explicit set, the crossing requests in it. */
		if (g->priority) {
			sync_all(g);
			return false;
		}
		if (!cross)
			break;
		vllm_ff_cross_end_runs(g);
		take_due(g);
	}
	if (vllm_ff_cross_count(g) && !vllm_ff_cross_take_all(g, false, blocks))
		vllm_ff_cross_sort(g);
	add_lazy_sums(g, b, budget);
	return true;
}

bool vllm_ff_quiet_pass(struct engine *g, struct batch *b, int64_t *budget)
{
	struct vllm_ff *f = &g->ff;
	/* begin_pass would take nobody due, check no explicit request (the
	 * lazy tokens alone against the budget) and add the lazy sums; the
	 * running part and the waiting queue schedule nobody; end_pass
	 * would make nobody lazy and add nobody to the explicit set. */
	if (f->expl.len || !f->n_lazy || f->due[f->passes % FF_RING].len || g->waiting.len ||
	    (int64_t)f->n_lazy > *budget || (int64_t)vllm_ff_cross_count(g) > kvpool_num_free(g->pool))
		return false;
	/* Its crossings: nothing else allocates or registers in it. */
	if (vllm_ff_cross_count(g))
		vllm_ff_cross_take_all(g, true, 0);
	add_lazy_sums(g, b, budget);
	f->passes++;
	return true;
}

/* The lazy requests into pass b: their decodes' sums, their count by
 * stage, their tokens off *budget. */
static void add_lazy_sums(struct engine *g, struct batch *b, int64_t *budget)
{
	struct vllm_ff *f = &g->ff;
	int64_t n = (int64_t)f->n_lazy, nw = (int64_t)f->n_win;
	/* Σ (context + 1) and Σ min(context + 1, window): integers, so the
	 * same doubles as the reference's sums one by one (below 2^53). */
	double kv = (double)(f->lazy_kv + n * b->pass);
	double kv_win = nw == n ? kv : (double)(f->lazy_kv_win + nw * b->pass + (n - nw) * window_of(g));
	struct perf_step *s = &b->step;
	s->tokens += n;
	s->seqs += n;
	s->sampled += n;
	s->dec_seqs += n;
	s->dec_ctx_full += kv;
	s->dec_ctx_win += kv_win;
	b->n_lazy = f->n_lazy;
	while (f->n_stages > 1 && f->by_stage[f->n_stages - 1] == 0)
		f->n_stages--;
	b->n_stages = f->n_stages;
	if (f->n_stages == 1)   /* (most runs: a store, not a memcpy call) */
		b->lazy_stage[0] = f->by_stage[0];
	else
		memcpy(b->lazy_stage, f->by_stage, (size_t)f->n_stages * sizeof *f->by_stage);
	*budget -= n;
}

void vllm_ff_cut_run(struct engine *g, size_t idx)
{
	struct vllm_ff *f = &g->ff;
	const struct request *r = req(g, idx);
	struct idxvec *d = &f->due[(uint64_t)r->ff_p1 & (FF_RING - 1)];
	size_t k = d->len;
	while (k-- > 0 && d->v[k] != idx) {
	}
	SIM_ASSERT(k < d->len, SIM_NO_TIME, idx);
	d->v[k] = d->v[--d->len];   /* (take_due sorts its bucket) */
	g->st.ff_sync_cut++;
	g->st.ff_sync_lost += r->ff_p1 - f->passes;
}

void vllm_ff_unrun(struct engine *g, struct batch *b, int64_t *budget, size_t idx)
{
	struct vllm_ff *f = &g->ff;
	struct request *r = req(g, idx);
	if (!is_lazy(r)) {
		struct idxvec *x = &f->expl;
		size_t i = x->len;
		while (i-- > 0 && x->v[i] != idx) {
		}
		SIM_ASSERT(i < x->len, SIM_NO_TIME, idx);
		memmove(&x->v[i], &x->v[i + 1], (x->len - i - 1) * sizeof *x->v);
		memmove(&f->demand[i], &f->demand[i + 1], (x->len - i - 1) * sizeof *f->demand);
		x->len--;
		return;
	}
	/* Its decode in b: KV read base + pass (leave_lazy's terms), the
	 * window's share all of it below the window, else the window. */
	int64_t base = r->num_computed - r->ff_sched + 1;
	bool below = base + r->ff_p1 - 1 <= window_of(g);
	double kv = (double)(base + b->pass);
	vllm_ff_cut_run(g, idx);
	vllm_ff_cross_forget(g, idx);
	leave_lazy(g, idx);
	struct perf_step *s = &b->step;
	s->tokens--;
	s->seqs--;
	s->sampled--;
	s->dec_seqs--;
	s->dec_ctx_full -= kv;
	s->dec_ctx_win -= below ? kv : (double)window_of(g);
	b->n_lazy--;
	b->lazy_stage[r->stage]--;
	++*budget;
}

void vllm_ff_end_step(struct engine *g, const struct batch *b, int64_t seen)
{
	struct vllm_ff *f = &g->ff;
	int64_t gap = seen - f->last_seen;
	f->seen[b->pass % FF_RING] = seen;
	f->gap[b->pass % FF_RING] = gap;
	ffgap_end(f, b->pass, gap);
	f->last_seen = seen;
	f->ends = b->pass + 1;
	size_t w = 0;
	for (size_t k = 0; k < f->owing.len; k++) {
		struct request *r = req(g, f->owing.v[k]);
		vllm_ff_catch_up(g, r);
		if (r->ff_owes || (!is_lazy(r) && r->ff_end < r->ff_p1))
			f->owing.v[w++] = f->owing.v[k];
	}
	f->owing.len = w;
	if (b->n_lazy) {
		const struct engine_hooks *h = &g->setup.hooks;
		for (int32_t s = 0; s < b->n_stages; s++)
			if (b->lazy_stage[s])
				h->on_tokens_steady(h->ctx, (size_t)b->lazy_stage[s], seen, gap, s, f->replica);
		g->st.ff_tokens += (int64_t)b->n_lazy;
	}
}

/* The passes from P on that r can spend lazy (0: none): it decodes one
 * token each (its last known token, sampled in the pass before; a new
 * block at its pass, vllmffcross.c), fills no block to hash and samples
 * neither its last token
 * nor the one before (the async skip). Fields exact, passes before P
 * scheduled. The last end of its last lazy run may still be in flight
 * (async scheduling: the pass it became explicit in was scheduled while
 * the run's last step ran): the new run starts with it owed (ff_owes),
 * applied at that step's end, before the new run's first; with more than
 * one end in flight, none starts. With hashing at allocation (the rows of
 * vLLM 0.11 on), a block the run fills is hashed when the run ends (leave_lazy) if
 * it is private (only its request, which is lazy, could hit it, and the
 * pool reads its hash only once it is released, published or evicted,
 * which a lazy request's blocks are not): the run goes on across its
 * blocks (one visit per run, where a run stopping at each block's end
 * made two per block before 2026-12-03, and one after). Else,
 * and with hashing at a step's end, the run stops before the block is
 * full (deferring there did not stay identical under async scheduling:
 * 3 of 40 preemption-heavy runs differed, vLLM 0.6 with async on). */
/* k, or x with *cut = why when x is shorter. */
static int64_t cut_at(int64_t k, int64_t x, enum ff_cut why, enum ff_cut *cut)
{
	if (x < k) {
		*cut = why;
		return x;
	}
	return k;
}

static int64_t lazy_passes(const struct engine *g, const struct request *r, int64_t P, enum ff_cut *cut)
{
	int64_t nc = r->num_computed;
	if (r->state != REQ_RUNNING || r->ff_sample != P - 1 || r->ff_owes || r->ff_end + 1 < r->ff_p1 ||
	    (int64_t)r->prompt_len + r->generated + r->pending - nc != 1 || r->stage < 0 ||
	    r->stage >= FF_STAGES || (g->ff.replica >= 0 && r->replica != g->ff.replica))
		return 0;
	int64_t k = FF_RING - 8;
	*cut = FF_CUT_RING;
	k = cut_at(k, (int64_t)r->prompt_len + r->output_len - nc - 1, FF_CUT_LAST, cut);
	k = cut_at(k, (int64_t)r->output_len - 1 - r->generated - (P - g->ff.ends), FF_CUT_LAST, cut);
	/* (-2: with hashing at a step's end, it sees the pass after's
	 * tokens under async scheduling.) */
	if (g->caching && (!g->cache_at_alloc || r->first_private > r->n_hashed))
		k = cut_at(k, (int64_t)(r->n_hashed + 1) * g->block_size - nc - (g->cache_at_alloc ? 1 : 2),
			   FF_CUT_HASH, cut);
	/* Below the window (its KV read nc + 1 at P, one more a pass): up to
	 * the pass that reads the window exactly, so it never crosses. */
	int64_t w = window_of(g);
	if (nc + 1 < w)
		k = cut_at(k, w - nc, FF_CUT_WINDOW, cut);
	return k;
}

/* Counts a lazy run of n passes that cut ended (engine_stats.ff_runs). */
static void count_run(struct engine *g, int64_t n, enum ff_cut cut)
{
	g->st.ff_runs[cut]++;
	g->st.ff_run_passes[cut] += n;
	int b = 63 - __builtin_clzll((uint64_t)n);
	g->st.ff_len_hist[b < FF_LEN_BUCKETS ? b : FF_LEN_BUCKETS - 1]++;
}

/* The explicit set after pass b: what it had (all of running after a
 * pass over all of it) and the admitted, less those b's entries can
 * leave lazy from the next pass on. */
void vllm_ff_end_pass(struct engine *g, struct batch *b, size_t n_running_before)
{
	struct vllm_ff *f = &g->ff;
	int64_t P = f->passes + 1;
	struct idxvec *lz = &f->tmp;       /* the newly lazy, in b's order */
	SIM_ASSERT(vllm_ff_cross_count(g) == 0, SIM_NO_TIME, f->passes);   /* every crossing taken */
	lz->len = 0;
	for (size_t k = 0; k < b->len; k++) {
		size_t idx = b->idx[k];
		struct request *r = req(g, idx);
		if (k + PREFETCH_AHEAD < b->len)
			__builtin_prefetch(req(g, b->idx[k + PREFETCH_AHEAD]));
		enum ff_cut cut;
		int64_t n = lazy_passes(g, r, P, &cut);
		if (n < 2)
			continue;
		count_run(g, n, cut);
		/* One end of its last run in flight (lazy_passes): pass P - 2. */
		SIM_ASSERT(r->ff_end >= r->ff_p1 || r->ff_end == P - 2, SIM_NO_TIME, r->ff_end);
		r->ff_owes = r->ff_end < r->ff_p1;
		r->ff_sched = r->ff_end = P;
		r->ff_p1 = P + n;
		f->n_lazy++;
		f->by_stage[r->stage]++;
		if (r->stage >= f->n_stages)
			f->n_stages = r->stage + 1;
		f->replica = r->replica;
		f->lazy_kv += r->num_computed - P + 1;
		if (r->num_computed + 1 < window_of(g)) {
			f->n_win++;
			f->lazy_kv_win += r->num_computed - P + 1;
		}
		vec_push(&f->due[r->ff_p1 % FF_RING], idx);
		vec_push(lz, idx);
		vllm_ff_cross_plan(g, idx);
	}
	struct idxvec *x = &f->expl;
	if (!b->n_lazy)
		x->len = 0;
	for (size_t i = b->n_lazy ? n_running_before : 0; i < g->n_running; i++)
		vec_push(x, g->running[i]);
	/* b's entries are in the explicit set's order (the running part,
	 * then the admitted). */
	remove_subseq(x, lz);
	f->passes++;
}

void vllm_ff_drop_done(struct engine *g)
{
	remove_subseq(&g->ff.expl, &g->ff.done);
}
