/*
 * run_tokens: the engines' token hooks (engine.h's on_token, on_tokens,
 * on_tokens_steady): each output token into the per-second token count,
 * the peak second, the requests' first/last token times and the ITL
 * histograms (the whole run's, the stage's, the replica's, the time line's).
 *
 * Invariants: the three hooks make the same additions in the same order
 * (the same bits), whichever the engine calls; the token window holds the
 * last RUN_TOKEN_WINDOW seconds, a later token counts in its oldest.
 */
#include <stdint.h>

#include "num.h"
#include "run_int.h"
#include "timeline.h"

/* n tokens emitted at t_ns: this second's count and the peak second. */
static void count_tokens(struct run_result *res, int64_t t_ns, int64_t n_tokens)
{
	/* Tokens of one step share a time: skip the division for them. */
	if (t_ns != res->last_token_ns) {
		int64_t sec = (t_ns - res->token_origin_ns) / NS_PER_S;
		res->last_token_ns = t_ns;
		if (sec > res->newest_second) {
			int64_t from = sec - RUN_TOKEN_WINDOW + 1;
			for (int64_t s = from > res->newest_second + 1 ? from : res->newest_second + 1;
			     s <= sec; s++)
				res->second_tokens[s % RUN_TOKEN_WINDOW] = 0;
			res->newest_second = sec;
		} else if (sec <= res->newest_second - RUN_TOKEN_WINDOW) {
			/* Later than the window reaches (an output queue over a
			 * minute long): counted in its oldest second. */
			sec = res->newest_second - RUN_TOKEN_WINDOW + 1;
		}
		res->last_second = sec;
	}
	int64_t *n = &res->second_tokens[res->last_second % RUN_TOKEN_WINDOW];
	*n += n_tokens;
	if (*n > res->peak_second_tokens)
		res->peak_second_tokens = *n;
}

/* Once per output token: the simulator's hottest function after the
 * scheduler, so the stage group is looked at only when there are stages. */
void run_on_token(void *ctx, size_t idx, int64_t t)
{
	struct run *rn = ctx;
	struct run_result *res = rn->res;
	struct request *r = &res->reqs.v[idx];
	int32_t n = r->chunk;
	r->chunk = 0;
	if (n > 1)                           /* a chunk of a stream_interval > 1 */
		for (int32_t k = 1; k < n; k++)
			count_tokens(res, t, 1);
	if (r->first_token_ns >= 0) {
		int64_t gap = t - r->last_token_ns;
		double itl = (double)gap * 1e-9;
		if (gap > r->max_itl_ns)
			r->max_itl_ns = gap;
		loghist_add(&res->all.itl, itl);
		if (res->timeline)
			timeline_gap(res->timeline, t, itl);
		if (res->n_stages > 1 && r->stage >= 0 && r->stage < res->n_stages)
			loghist_add(&res->stages[r->stage].itl, itl);
		if (res->n_replicas) {
			loghist_add(&res->replicas[r->replica].itl, itl);
			if (res->replicas[r->replica].timeline)
				timeline_gap(res->replicas[r->replica].timeline, t, itl);
		}
	} else {
		r->first_token_ns = t;
	}
	r->last_token_ns = t;
	count_tokens(res, t, 1);
}

/* One step's tokens, all at t: on_token for each, in order, with the ITL
 * histogram's running sums and a run of equal gaps kept in registers
 * (the same additions in the same order: the same bits), the timeline's
 * gaps a run at a time. A run with stages or replicas takes the token by
 * token path. */
void run_on_tokens(void *ctx, const size_t *idx, size_t n, int64_t t)
{
	struct run *rn = ctx;
	struct run_result *res = rn->res;
	if (res->n_stages > 1 || res->n_replicas || n == 0) {
		for (size_t k = 0; k < n; k++)
			run_on_token(ctx, idx[k], t);
		return;
	}
	struct loghist *h = &res->all.itl;
	if (!h->counts)
		loghist_alloc(h);
	double sum = h->sum, sumsq = h->sumsq, mn = h->min, mx = h->max;
	int64_t hn = h->n, tokens = 0;
	/* A run of equal gaps (most of a decode batch last emitted at the same
	 * step): its value, square and bucket are worked out once. */
	int64_t run_gap = -1;
	double itl = 0, itl_sq = 0;
	size_t run_bucket = 0;
	uint32_t run_len = 0;
	for (size_t k = 0; k < n; k++) {
		struct request *r = &res->reqs.v[idx[k]];
		tokens += r->chunk > 1 ? r->chunk : 1;
		r->chunk = 0;
		if (r->first_token_ns < 0) {
			r->first_token_ns = t;
			r->last_token_ns = t;
			continue;
		}
		int64_t gap = t - r->last_token_ns;
		r->last_token_ns = t;
		if (gap > r->max_itl_ns)
			r->max_itl_ns = gap;
		if (gap != run_gap) {
			if (run_len) {
				h->counts[run_bucket] += run_len;
				if (res->timeline)
					timeline_gaps(res->timeline, t, itl, run_len);
			}
			run_gap = gap;
			run_len = 0;
			itl = (double)gap * 1e-9;
			itl_sq = itl * itl;
			run_bucket = loghist_bucket(itl);
			if (hn == 0 || itl < mn)
				mn = itl;
			if (hn == 0 || itl > mx)
				mx = itl;
		}
		run_len++;
		hn++;
		sum += itl;
		sumsq += itl_sq;
	}
	if (run_len) {
		h->counts[run_bucket] += run_len;
		if (res->timeline)
			timeline_gaps(res->timeline, t, itl, run_len);
	}
	h->sum = sum;
	h->sumsq = sumsq;
	h->min = mn;
	h->max = mx;
	h->n = hn;
	count_tokens(res, t, tokens);
}

/* n tokens at t of requests of one stage and replica, each gap_ns after
 * its request's last (a fast-forwarded run of decodes): on_token's
 * histograms, time lines and token count without the requests' own
 * fields (the engine keeps those). The same additions in the same order
 * as n calls of on_token: the same bits. */
void run_on_tokens_steady(void *ctx, size_t n, int64_t t, int64_t gap, int32_t stage, int32_t replica)
{
	struct run *rn = ctx;
	struct run_result *res = rn->res;
	double itl = (double)gap * 1e-9;
	loghist_add_n(&res->all.itl, itl, n);
	if (res->timeline)
		timeline_gaps(res->timeline, t, itl, n);
	if (res->n_stages > 1 && stage >= 0 && stage < res->n_stages)
		loghist_add_n(&res->stages[stage].itl, itl, n);
	if (res->n_replicas) {
		loghist_add_n(&res->replicas[replica].itl, itl, n);
		if (res->replicas[replica].timeline)
			timeline_gaps(res->replicas[replica].timeline, t, itl, n);
	}
	count_tokens(res, t, (int64_t)n);
}
