/*
 * moe: which experts a batch reaches (the routing half of the step model's
 * MoE row; steptime.h declares the functions, struct perf holds the state).
 *
 * Expert popularity is a Zipf law of exponent router_skew over experts
 * 1..E (0: uniform). A token picks k distinct experts, expert i among them
 * with probability q_i = min(1, c · i^-skew), c set so that Σ q_i = k (the
 * chance an expert saturates at 1 goes to the others: a token always
 * routes to k experts, however skewed the router); a batch of T
 * tokens touches Σ (1 − (1 − q_i)^T) distinct experts. Under expert
 * parallelism the ep GPUs hold E/ep whole experts each in id order
 * (vLLM's default placement), and expert ids carry no popularity, so a
 * GPU's experts are E/ep drawn at random from the popularity law: the
 * busiest GPU is the one whose draw took the largest share, averaged over
 * EP_TRIALS seeded placements (a uniform router: every GPU alike). Both
 * sums are tabulated at T = 2^j once (perf_set_router_skew:
 * O(E · PERF_TOUCH_N · EP_TRIALS / ep)); a step looks them up in O(1).
 */
#include "steptime.h"

#include <assert.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "xalloc.h"

/* Placements averaged for the busiest expert-parallel GPU under a skewed
 * router: the mean of the largest share over 64 draws is within ~1% of
 * its expectation at E = 256, ep = 8-32 (their spread is ~10%). */
enum { EP_TRIALS = 64 };

/* Expert i's (1-based) chance to be among a token's k picks. */
static double pick_prob(const struct perf *p, double i)
{
	if (p->router_skew <= 0)
		return p->experts_per_token / p->n_experts;
	return fmin(1, p->router_scale * pow(i, -p->router_skew));
}

/* The c of min(1, c · i^-skew) whose sum over the E experts is k: the
 * most popular experts saturate first (weights fall with i), so with n
 * of them at 1 the rest share k - n, c = (k - n) / Σ_{i>n} i^-skew; n
 * grows until the next expert no longer exceeds 1. O(E). */
static double router_scale(double E, double k, double skew)
{
	double tail = 0;
	for (double i = 1; i <= E; i++)
		tail += pow(i, -skew);
	double n = 0, c = k / tail;
	while (n + 1 < k && c * pow(n + 1, -skew) > 1) {
		tail -= pow(n + 1, -skew);
		n++;
		c = (k - n) / tail;
	}
	return c;
}

/* A deterministic uniform draw in [0, 1) (64-bit LCG, Knuth's MMIX). */
static double draw(uint64_t *x)
{
	*x = *x * 6364136223846793005ULL + 1442695040888963407ULL;
	return (double)(*x >> 11) / 9007199254740992.0;
}

/* The busiest GPU of an expert-parallel group (ep_share, ep_touched_tab;
 * the whole group when ep = 1): a uniform router's GPUs are alike; a
 * skewed one's are EP_TRIALS seeded placements of E/ep experts a GPU,
 * each trial's largest-share GPU, averaged. */
static void ep_busiest(struct perf *p)
{
	int E = (int)p->n_experts;
	int local = p->ep > 1 ? E / p->ep : E;
	int trials = p->router_skew > 0 && p->ep > 1 ? EP_TRIALS : 1;
	p->ep_share = 0;
	memset(p->ep_touched_tab, 0, sizeof p->ep_touched_tab);
	if (local < 1)   /* fewer experts than GPUs: the first holds none */
		return;
	int *id = xmalloc((size_t)E * sizeof *id);
	for (int i = 0; i < E; i++)
		id[i] = i + 1;
	uint64_t x = 0x5EED;
	for (int t = 0; t < trials; t++) {
		if (trials > 1)
			for (int i = E - 1; i > 0; i--) {   /* Fisher-Yates */
				int j = (int)(draw(&x) * (i + 1)), o = id[i];
				id[i] = id[j];
				id[j] = o;
			}
		int best = 0;
		double most = -1;
		for (int r = 0; r + local <= E; r += local) {
			double share = 0;
			for (int i = r; i < r + local; i++)
				share += pick_prob(p, id[i]);
			if (share > most) {
				most = share;
				best = r;
			}
		}
		p->ep_share += most / trials;
		for (int j = 0; j < PERF_TOUCH_N; j++) {
			double T = ldexp(1, j), touched = 0;
			for (int i = best; i < best + local; i++)
				touched += 1 - pow(1 - pick_prob(p, id[i]), T);
			p->ep_touched_tab[j] += touched / trials;
		}
	}
	free(id);
}

void perf_set_router_skew(struct perf *p, double skew)
{
	assert(skew >= 0);
	p->router_skew = skew;
	if (p->n_experts <= 0)
		return;
	p->router_scale = skew > 0 ? router_scale(p->n_experts, p->experts_per_token, skew) : 0;
	ep_busiest(p);
	if (skew <= 0)
		return;
	/* Expert i's share of routing choices ∝ i^-skew; a token picks k
	 * distinct experts, expert i among them with probability
	 * q_i = min(1, k·share_i). Tabulated once at T = 2^j tokens: O(E) a
	 * point, none per step. */
	for (int j = 0; j < PERF_TOUCH_N; j++) {
		double T = ldexp(1, j), touched = 0;
		for (double i = 1; i <= p->n_experts; i++)
			touched += 1 - pow(1 - pick_prob(p, i), T);
		p->touched_tab[j] = touched;
	}
}

double perf_moe_pick(const struct perf *p, int i)
{
	assert(i >= 1);
	if (p->n_experts <= 0 || i > p->n_experts)
		return 0;
	return pick_prob(p, i);
}

void perf_expert_parallel(struct perf *p, int ep)
{
	assert(ep >= 1);
	if (ep == p->ep || p->n_experts <= 0)
		return;
	/* Whole experts instead of 1/tp slices of each. */
	double f = (double)ep / (double)(p->ep > 0 ? p->ep : 1);
	p->expert_bytes *= f;
	p->expert_flops_per_token *= f;
	p->expert_n *= f;
	if (p->moe_bw_curve) /* the kernel's rate by the now wider slices */
		p->moe_bw = p->moe_stream * perf_curve_at(p->moe_bw_curve, p->expert_n);
	p->ep = ep;
	perf_set_router_skew(p, p->router_skew);
}

/* Log-linear in T between tabulated powers of two; below one token the
 * first point scales down linearly. */
static double tab_at(const double *tab, double T)
{
	double j = log2(T);
	if (j <= 0)
		return tab[0] * T;
	if (j >= PERF_TOUCH_N - 1)
		return tab[PERF_TOUCH_N - 1];
	int i = (int)j;
	return tab[i] + (j - i) * (tab[i + 1] - tab[i]);
}

double perf_moe_touched(const struct perf *p, double T, double *busiest)
{
	double E = p->n_experts, k = p->experts_per_token;
	if (E <= 0 || T <= 0) {
		if (busiest)
			*busiest = 0;
		return 0;
	}
	double q0 = k / E, touched;
	if (p->router_skew <= 0) {
		touched = E * (1 - pow(1 - k / E, T));
	} else {
		q0 = pick_prob(p, 1);
		touched = tab_at(p->touched_tab, T);
	}
	if (busiest)
		*busiest = T * q0;
	return fmin(touched, fmin(E, T * k));
}

double perf_moe_first_gpu(const struct perf *p, double T, double *routed)
{
	double E = p->n_experts, k = p->experts_per_token;
	*routed = T * p->ep_share;
	if (p->router_skew > 0)
		return tab_at(p->ep_touched_tab, T);
	return floor(E / p->ep) * (1 - pow(1 - k / E, T));
}
