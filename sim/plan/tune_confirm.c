/*
 * tune_confirm: the tuner's step 3 (tune.h, winner's curse): every
 * bracketed winner searched again on fresh seed blocks (block b on seeds
 * offset by o->replications * (b + 1)), all blocks of all candidates in
 * one plan_search; the median block's search becomes the candidate's
 * answer and the blocks' rates its confirmation.
 *
 * Invariants: at most TUNE_MAX_CONFIRM blocks; a candidate without a
 * bracketed winner keeps its fine search and n_confirmed 0; the answer's
 * scenario is the winner's, without the search's starting load.
 */
#include <math.h>
#include <stddef.h>

#include "tune_int.h"
#include "xalloc.h"

/* A searched candidate's sustained rate; 0 when it cannot run. */
static double cand_rate(const struct plan_cand *c, const struct plan_opts *o)
{
	return c->status == PLAN_INFEASIBLE ? 0 : plan_sustained_rate(c, o);
}

/* Step 3 (tune.h): every bracketed winner searched again on fresh seed
 * blocks, all blocks of all candidates in one plan_search; the median
 * block's search becomes the candidate's answer. */
void tune_confirm(struct tune_cand *t, size_t n, const struct plan_slo *slo, const struct plan_opts *o)
{
	int B = o->confirm_blocks < TUNE_MAX_CONFIRM ? o->confirm_blocks : TUNE_MAX_CONFIRM;
	for (size_t i = 0; i < n; i++) {
		t[i].selection_rate = t[i].winner >= 0 ? cand_rate(t[i].cand, o) : NAN;
		t[i].n_confirmed = 0;
		t[i].confirm_seed_offset = o->replications;
	}
	if (B <= 0)
		return;
	struct plan_cand *pc = xcalloc(n * (size_t)B + 1, sizeof *pc);
	size_t m = 0;
	for (size_t i = 0; i < n; i++) {
		const struct plan_cand *w = t[i].cand;
		if (t[i].winner < 0 || w->status != PLAN_OK || !(t[i].selection_rate > 0))
			continue;
		for (int b = 0; b < B; b++) {
			struct plan_cand c = *w;
			c.evals = NULL;
			c.n_evals = c.cap_evals = 0;
			c.error = NULL;
			c.seed_offset = (int64_t)o->replications * (b + 1);
			if (o->by == PLAN_BY_CONCURRENCY)
				c.sc.max_concurrency = (int64_t)w->lo;
			else
				c.sc.request_rate = w->lo;
			pc[m++] = c;
		}
	}
	struct plan_opts co = *o;
	co.step = 1 + 4 * o->tolerance;
	plan_search(pc, m, slo, &co);
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		const struct plan_cand *w = t[i].cand;
		if (t[i].winner < 0 || w->status != PLAN_OK || !(t[i].selection_rate > 0))
			continue;
		/* The blocks by rate (insertion sort, stable); the median is
		 * the middle one, the lower middle for an even count. */
		int order[TUNE_MAX_CONFIRM];
		for (int b = 0; b < B; b++) {
			t[i].confirmed[b] = cand_rate(&pc[k + (size_t)b], o);
			t[i].confirmed_load[b] = isnan(pc[k + (size_t)b].lo) ? 0 : pc[k + (size_t)b].lo;
			t[i].simulations += (int64_t)(pc[k + (size_t)b].n_evals ? pc[k + (size_t)b].n_evals : 1) *
					    o->replications;
			int y = b;
			for (; y > 0 && t[i].confirmed[order[y - 1]] > t[i].confirmed[b]; y--)
				order[y] = order[y - 1];
			order[y] = b;
		}
		t[i].n_confirmed = B;
		int med = order[(B - 1) / 2];
		struct scenario own = w->sc;
		plan_cand_free(t[i].cand);
		*t[i].cand = pc[k + (size_t)med];
		t[i].cand->sc = own;   /* without the search's starting load */
		t[i].cand->seed_offset = 0;
		for (int b = 0; b < B; b++)
			if (b != med)
				plan_cand_free(&pc[k + (size_t)b]);
		k += (size_t)B;
	}
	free(pc);
}
