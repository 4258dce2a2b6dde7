/*
 * vllmffcross: fast-forward's lazy runs across block boundaries (issue
 * 14). A lazy request (vllmff.c) whose next token starts a new block gets
 * that block at that pass without leaving its run: it is listed at the
 * pass of its next crossing (cross[pass % FF_RING]) and, when that pass
 * runs over the explicit set, given one block from the pool at its place
 * in running order, among the explicit requests' allocations and prefix
 * registrations (vllm_ff_cross_before from schedule_explicit), so the
 * pool pops and registers in the reference's order and hands out the
 * same block ids; or all at once where that order cannot show (below).
 * Before, a lazy run stopped at its block's end and the
 * request was visited there: one visit every block_size tokens.
 *
 * What keeps it byte-identical to the reference:
 * - a pass takes its crossings lazily only when the explicit requests'
 *   blocks and one for each crossing fit the free pool
 *   (vllm_ff_begin_pass): then no allocation of the running part fails,
 *   so nobody is preempted in it, and the waiting queue, scheduled after
 *   the running part in both, sees the same free pool;
 * - short of blocks, the crossing requests end their runs at that pass
 *   (vllm_ff_cross_end_runs) and are visited as before: under FCFS the
 *   pass still runs over the explicit set (its victims come from the
 *   tail of running, after the request in turn), under priority it
 *   syncs;
 * - a pass's crossings take their blocks all at once, before the running
 *   part, when the order in which blocks go to requests cannot show
 *   (vllm_ff_cross_take_all): in a quiet pass nothing else allocates or
 *   registers, so the pool pops the same blocks in the same order, only
 *   to other requests; otherwise the first blocks the whole running part
 *   takes (the explicit demands and the crossings) must hold no hash, so
 *   no pop evicts one that a registration in the pass could have read.
 *   Either way the reference's blocks and these differ by a renaming of
 *   ids, which nothing reads as numbers. Otherwise the list is sorted and
 *   each crossing takes its block at its place in running order (from
 *   schedule_explicit, vllm_ff_cross_before). On the ShareGPT benchmark
 *   (1M) that took 1.09 -> 1.00 s (tests/bench/ab.sh 7, same bytes);
 * - the block a run fills is hashed when the run ends (leave_lazy), as
 *   for the one block a run filled before: private blocks only (a run
 *   stops before a block others may hit fills, lazy_passes), whose hash
 *   nothing reads while their request holds them.
 *
 * Invariants: a lazy request whose run reaches its next crossing
 * (vllm_ff_next_cross < ff_p1) is listed once, at that pass; nobody else
 * is listed; cross_taken counts the current pass's list entries given
 * their block, in run_seq order, after vllm_ff_cross_sort.
 */
#include "simassert.h"
#include "vllm_int.h"
#include "xalloc.h"

static struct crossvec *at(struct engine *g, int64_t pass)
{
	return &g->ff.cross[(uint64_t)pass & (FF_RING - 1)];
}

/* e's request is listed at pass c (a run is at most FF_RING - 8 passes: c
 * is inside the ring, and the list is not the current pass's). */
static void list_at(struct engine *g, int64_t c, struct ffcross e)
{
	struct crossvec *v = at(g, c);
	xgrow(&v->v, &v->cap, v->len + 1, sizeof *v->v);
	v->v[v->len++] = e;
}

void vllm_ff_cross_plan(struct engine *g, size_t idx)
{
	const struct request *r = req(g, idx);
	int64_t c = vllm_ff_next_cross(g, r);
	SIM_ASSERT(c >= g->ff.passes, SIM_NO_TIME, c);
	if (c < r->ff_p1)
		list_at(g, c, (struct ffcross){ r->run_seq, idx });
}

void vllm_ff_cross_forget(struct engine *g, size_t idx)
{
	const struct request *r = req(g, idx);
	int64_t c = vllm_ff_next_cross(g, r);
	if (c >= r->ff_p1)
		return;
	/* Not this pass's: a pass with crossings preempts nobody. */
	SIM_ASSERT(c > g->ff.passes, SIM_NO_TIME, c);
	struct crossvec *v = at(g, c);
	size_t k = v->len;
	while (k-- > 0 && v->v[k].idx != idx) {
	}
	SIM_ASSERT(k < v->len, SIM_NO_TIME, idx);
	v->v[k] = v->v[--v->len];   /* (sorted when its pass comes) */
}

void vllm_ff_cross_sort(struct engine *g)
{
	struct crossvec *v = at(g, g->ff.passes);
	SIM_ASSERT(g->ff.cross_taken == 0, SIM_NO_TIME, g->ff.cross_taken);
	/* Insertion sort: runs listed by one pass's end come in running
	 * order, and most of a list is a few such runs. */
	for (size_t k = 1; k < v->len; k++) {
		struct ffcross x = v->v[k];
		size_t j = k;
		for (; j > 0 && v->v[j - 1].seq > x.seq; j--)
			v->v[j] = v->v[j - 1];
		v->v[j] = x;
	}
	for (size_t k = 0; k < v->len && k < PREFETCH_AHEAD; k++)
		__builtin_prefetch(req(g, v->v[k].idx));
}

void vllm_ff_cross_before_slow(struct engine *g, int64_t seq)
{
	struct vllm_ff *f = &g->ff;
	struct crossvec *v = at(g, f->passes);
	for (; f->cross_taken < v->len && v->v[f->cross_taken].seq < seq; f->cross_taken++) {
		size_t idx = v->v[f->cross_taken].idx;
		/* Their records were last read a block ago: fetch ahead. */
		if (f->cross_taken + PREFETCH_AHEAD < v->len)
			__builtin_prefetch(req(g, v->v[f->cross_taken + PREFETCH_AHEAD].idx));
		struct request *r = req(g, idx);
		SIM_ASSERT(r->run_seq == v->v[f->cross_taken].seq && vllm_ff_next_cross(g, r) == f->passes &&
				   f->passes < r->ff_p1,
			   SIM_NO_TIME, idx);
		int32_t blk = kvpool_alloc(g->pool);   /* begin_pass saw one for each */
		SIM_ASSERT(blk > 0, SIM_NO_TIME, idx);
		vllm_push_block(g, r, blk);
		/* Its next crossing a block later, if its run reaches it. */
		if (f->passes + g->block_size < r->ff_p1)
			list_at(g, f->passes + g->block_size, v->v[f->cross_taken]);
	}
	if (f->cross_taken == v->len)   /* all taken: the slot is a later pass's */
		v->len = f->cross_taken = 0;
}

bool vllm_ff_cross_take_all(struct engine *g, bool alone, int64_t others)
{
	struct vllm_ff *f = &g->ff;
	struct crossvec *v = at(g, f->passes);
	size_t n = v->len;
	SIM_ASSERT(f->cross_taken == 0 && n > 0, SIM_NO_TIME, f->cross_taken);
	if (!alone && !kvpool_head_anonymous(g->pool, others + (int64_t)n))
		return false;
	xgrow(&f->cross_blocks, &f->cap_cross_blocks, n, sizeof *f->cross_blocks);
	kvpool_alloc_n(g->pool, f->cross_blocks, (int64_t)n);   /* begin_pass saw them free */
	const int64_t pass = f->passes, next = pass + g->block_size;
	/* Their next crossings a block later, listed there (room made once:
	 * another pass's list, as a run is shorter than the ring; in locals,
	 * which a store to a request's list could otherwise alias). */
	struct crossvec *to = at(g, next);
	const bool relist = next < pass + FF_RING - 8;
	if (relist)
		xgrow(&to->v, &to->cap, to->len + n, sizeof *to->v);
	const struct ffcross *src = v->v;
	const int32_t *blk = f->cross_blocks;
	struct ffcross *dst = to->v;
	size_t w = to->len;
	for (size_t k = 0; k < n && k < PREFETCH_AHEAD; k++)
		__builtin_prefetch(req(g, src[k].idx));
	for (size_t k = 0; k < n; k++) {
		struct ffcross e = src[k];
		if (k + PREFETCH_AHEAD < n)
			__builtin_prefetch(req(g, src[k + PREFETCH_AHEAD].idx));
		struct request *r = req(g, e.idx);
		SIM_ASSERT(r->run_seq == e.seq && vllm_ff_next_cross(g, r) == pass && pass < r->ff_p1,
			   SIM_NO_TIME, e.idx);
		vllm_push_block(g, r, blk[k]);
		if (next < r->ff_p1) {
			SIM_ASSERT(relist, SIM_NO_TIME, e.idx);
			dst[w++] = e;
		}
	}
	if (relist)
		to->len = w;
	v->len = 0;
	return true;
}

void vllm_ff_cross_end_runs(struct engine *g)
{
	struct vllm_ff *f = &g->ff;
	struct crossvec *v = at(g, f->passes);
	struct idxvec *now = &f->due[(uint64_t)f->passes & (FF_RING - 1)];
	for (size_t k = 0; k < v->len; k++) {
		size_t idx = v->v[k].idx;
		vllm_ff_cut_run(g, idx);
		xgrow(&now->v, &now->cap, now->len + 1, sizeof *now->v);
		now->v[now->len++] = idx;
	}
	v->len = 0;
}

void vllm_ff_cross_clear(struct engine *g)
{
	for (int i = 0; i < FF_RING; i++)
		g->ff.cross[i].len = 0;
	g->ff.cross_taken = 0;
}

void vllm_ff_cross_free(struct engine *g)
{
	for (int i = 0; i < FF_RING; i++)
		free(g->ff.cross[i].v);
	free(g->ff.cross_blocks);
}
