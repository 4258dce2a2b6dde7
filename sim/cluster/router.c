/*
 * router: the routing policies and the table that names them. A router
 * added to the table is at once a valid [cluster] router value and in the
 * error that lists the choices.
 */
#include "router.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "list.h"
#include "num.h"
#include "rowtab.h"

/* The requests a replica holds, as vLLM's router's least-loaded policy
 * counts them: what it routed there and has not seen finish. */
static size_t pick_least(const struct router_view *v, const int64_t *load)
{
	size_t best = 0;
	for (size_t i = 1; i < v->n; i++)
		if (load[i] < load[best])
			best = i;
	return best;
}

static size_t pick_round_robin(const struct router_view *v)
{
	size_t i = *v->rr_next % v->n;
	*v->rr_next = i + 1;
	return i;
}

static size_t pick_random(const struct router_view *v)
{
	return (size_t)gsl_rng_uniform_int(v->rng, (unsigned long)v->n);
}

static size_t pick_least_requests(const struct router_view *v)
{
	return pick_least(v, v->outstanding);
}

static size_t pick_least_kv(const struct router_view *v)
{
	size_t best = 0;
	for (size_t i = 1; i < v->n; i++)
		if (v->kv_usage[i] < v->kv_usage[best] ||
		    (v->kv_usage[i] == v->kv_usage[best] && v->outstanding[i] < v->outstanding[best]))
			best = i;
	return best;
}

/* The longest cached prefix wins; without one anywhere (or on a tie), the
 * least loaded of those tied. */
static size_t pick_prefix_affinity(const struct router_view *v)
{
	size_t best = 0;
	for (size_t i = 1; i < v->n; i++)
		if (v->prefix_hit[i] > v->prefix_hit[best] ||
		    (v->prefix_hit[i] == v->prefix_hit[best] && v->outstanding[i] < v->outstanding[best]))
			best = i;
	return best;
}

/* Two replicas drawn at random, the less loaded taken (Mitzenmacher's
 * power of two choices). */
static size_t pick_power_of_two(const struct router_view *v)
{
	if (v->n == 1)
		return 0;
	size_t a = (size_t)gsl_rng_uniform_int(v->rng, (unsigned long)v->n);
	size_t b = (size_t)gsl_rng_uniform_int(v->rng, (unsigned long)(v->n - 1));
	if (b >= a)
		b++;
	if (v->outstanding[b] < v->outstanding[a] || (v->outstanding[b] == v->outstanding[a] && b < a))
		return b;
	return a;
}

/* llm-d's scorers, each in [0, 1]: the queue scorer and the KV-usage
 * scorer min-max normalised over the replicas (1 = the least), the prefix
 * scorer the fraction of the prompt already cached. */
static double norm_low(double x, double lo, double hi)
{
	return hi > lo ? (hi - x) / (hi - lo) : 1.0;
}

static size_t pick_weighted(const struct router_view *v)
{
	double qlo = INFINITY, qhi = -INFINITY, klo = INFINITY, khi = -INFINITY;
	for (size_t i = 0; i < v->n; i++) {
		double q = (double)v->waiting[i];
		qlo = fmin(qlo, q);
		qhi = fmax(qhi, q);
		klo = fmin(klo, v->kv_usage[i]);
		khi = fmax(khi, v->kv_usage[i]);
	}
	size_t best = 0;
	double best_score = -INFINITY;
	for (size_t i = 0; i < v->n; i++) {
		double s = v->weights[SCORER_QUEUE] * norm_low((double)v->waiting[i], qlo, qhi) +
			   v->weights[SCORER_KV] * norm_low(v->kv_usage[i], klo, khi) +
			   v->weights[SCORER_PREFIX] *
				   (v->prompt_len > 0 ? (double)v->prefix_hit[i] / (double)v->prompt_len : 0);
		if (s > best_score || (s == best_score && v->outstanding[i] < v->outstanding[best])) {
			best = i;
			best_score = s;
		}
	}
	return best;
}

const struct router_class router_classes[] = {
	{ "round_robin", "each replica in turn", pick_round_robin, false },
	{ "random", "a replica drawn uniformly (the \"router\" random stream)", pick_random, false },
	{ "least_requests", "the fewest requests routed there and not done", pick_least_requests, false },
	{ "least_kv", "the lowest KV-cache usage", pick_least_kv, false },
	{ "prefix_affinity", "the longest prompt prefix already cached there", pick_prefix_affinity, true },
	{ "power_of_two", "the less loaded of two drawn at random", pick_power_of_two, false },
	{ "weighted", "llm-d's weighted scorers ([cluster] scorers)", pick_weighted, true },
	{ NULL, NULL, NULL, false },
};

const char *const router_scorer_names[N_SCORERS] = { "queue", "kv", "prefix" };

int router_find(const char *name)
{
	return rowtab_index(router_classes, sizeof *router_classes, name);
}

void router_list(char *buf, size_t cap)
{
	rowtab_list(router_classes, sizeof *router_classes, buf, cap);
}

int router_weighted_index(void)
{
	return router_find("weighted");
}

int router_parse_scorers(const char *text, double *weights, const char **why)
{
	char tok[256];
	int n = 0, rc;
	*why = "NAME:WEIGHT, … with NAME one of queue, kv, prefix and WEIGHT a number >= 0";
	for (int s = 0; s < N_SCORERS; s++)
		weights[s] = 0;
	for (const char *cur = text; (rc = list_next(&cur, tok, sizeof tok)) != 0;) {
		if (rc < 0)
			return -1;
		char *colon = strchr(tok, ':');
		if (!colon)
			return -1;
		*colon = '\0';
		int s = 0;
		while (s < N_SCORERS && strcmp(router_scorer_names[s], tok))
			s++;
		double w;
		if (s == N_SCORERS || num_parse_double(colon + 1, &w) || !(w >= 0) || isinf(w))
			return -1;
		weights[s] = w;
		n++;
	}
	return n > 0 ? 0 : -1;
}
