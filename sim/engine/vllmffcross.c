/*
 * vllmffcross: fast-forward's lazy runs across block boundaries (issue
 * 14). A lazy request (vllmff.c) whose next token starts a new block gets
 * that block at that pass without leaving its run: it is listed at the
 * pass of its next crossing (cross[pass % FF_RING]) and, when that pass
 * runs over the explicit set, given one block from the pool at its place
 * in running order, among the explicit requests' allocations and prefix
 * registrations (vllm_ff_cross_before from schedule_explicit), so the
 * pool pops and registers in the reference's order and hands out the
 * same block ids. Before, a lazy run stopped at its block's end and the
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
}
