#include "ranknoise.h"

#include <gsl/gsl_cdf.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "resultdoc.h"
#include "tune.h"
#include "xalloc.h"

const struct docschema_field ranknoise_schema[] = {
	{ .key = "ranks", .type = DS_INT_ARR, .min = 1, .max = INT32_MAX },
	{ .key = "blocks", .type = DS_INT, .min = 2, .max = TUNE_MAX_CONFIRM },
	{ .key = "basis", .type = DS_STR },
	{ .key = "difference", .type = DS_NUM },
	{ .key = "margin", .type = DS_NUM },
	{ .key = NULL },
};

bool ranknoise_resolved(const double *rate_a, const double *rate_b, int n, double cost_a, double cost_b,
			double tolerance, double *diff, double *half)
{
	*diff = *half = NAN;
	if (n < 2 || !(cost_a > 0) || !(cost_b > 0) || !isfinite(cost_a) || !isfinite(cost_b))
		return false;   /* an infinite cost (a document's GPUs times its price) has no ratio */
	double d[TUNE_MAX_CONFIRM], mean = 0, ss = 0;
	bool all_zero = true;
	for (int b = 0; b < n; b++) {
		if (!(rate_a[b] > 0) || !(rate_b[b] > 0) || !isfinite(rate_a[b]) || !isfinite(rate_b[b])) {
			/* A block where one of them holds nothing: no ratio,
			 * and no claim either way. */
			return false;
		}
		d[b] = log(rate_a[b] / cost_a) - log(rate_b[b] / cost_b);
		mean += d[b] / n;
		all_zero &= d[b] == 0;
	}
	for (int b = 0; b < n; b++)
		ss += (d[b] - mean) * (d[b] - mean);
	*diff = mean;
	*half = gsl_cdf_tdist_Pinv(0.975, n - 1) * sqrt(ss / (n - 1)) / sqrt(n) +
		(tolerance > 0 && tolerance < 1 ? -log1p(-tolerance) : 0);
	if (all_zero)
		return false;
	return fabs(mean) > *half;
}

/* GPUs a replica of an item: gpus_per_replica, else tp × pp. */
static double replica_gpus(json_t *it)
{
	double g = resultdoc_num(it, "gpus_per_replica");
	if (!isnan(g))
		return g;
	double tp = resultdoc_num(it, "tensor_parallel_size"), pp = resultdoc_num(it, "pipeline_parallel_size");
	return (isnan(tp) ? 1 : tp) * (isnan(pp) ? 1 : pp);
}

/* An item's confirmation rates into r (at most TUNE_MAX_CONFIRM); their
 * count, 0 when it is not a usable confirmed item. */
static int block_rates(json_t *it, double *r)
{
	json_t *cf = json_object_get(json_object_get(it, "tuning"), "confirmation");
	json_t *rates = json_object_get(cf, "rates");
	if (!json_is_array(rates) || json_object_get(it, "error") || !(resultdoc_num(it, "max_rate") > 0))
		return 0;
	size_t n = json_array_size(rates);
	if (n > TUNE_MAX_CONFIRM)
		return 0;
	for (size_t b = 0; b < n; b++)
		r[b] = json_number_value(json_array_get(rates, b));
	return (int)n;
}

json_t *ranknoise_pairs(json_t *items, json_t *ranking, const struct ranknoise_keys *k)
{
	size_t n = ranking ? json_array_size(ranking) : json_array_size(items);
	json_t **order = xcalloc(n + 1, sizeof *order);
	bool any = false;
	for (size_t i = 0; i < n; i++) {
		order[i] = resultdoc_ranked(items, ranking, k->index, i);
		any |= json_object_get(json_object_get(order[i], "tuning"), "confirmation") != NULL;
	}
	if (!any) {
		free(order);
		return NULL;
	}
	json_t *pairs = json_array();
	double ra[TUNE_MAX_CONFIRM], rb[TUNE_MAX_CONFIRM];
	for (size_t i = 0; i < n; i++) {
		json_t *a = order[i];
		int na = a ? block_rates(a, ra) : 0;
		for (size_t j = i + 1; na && j < n; j++) {
			json_t *b = order[j];
			const char *ha = resultdoc_str(a, "hardware"), *hb = b ? resultdoc_str(b, "hardware") : NULL;
			if (!b || !ha || !hb || !strcmp(ha, hb) || block_rates(b, rb) != na)
				continue;
			double ga = replica_gpus(a), gb = replica_gpus(b);
			double pa = resultdoc_num(a, "price_usd_per_gpu_hour"), pb = resultdoc_num(b, "price_usd_per_gpu_hour");
			bool priced = k->cost && pa > 0 && pb > 0;
			/* First the rates (per GPU): are the two as fast? Then,
			 * priced, the rate per $/hour: do they cost the same a
			 * token? */
			double diff, half;
			bool by_rate = !ranknoise_resolved(ra, rb, na, ga, gb, k->tolerance, &diff, &half);
			if (!by_rate && (!priced || ranknoise_resolved(ra, rb, na, ga * pa, gb * pb, k->tolerance,
								      &diff, &half)))
				continue;
			if (isnan(diff))
				continue;   /* a block without a rate: no claim */
			json_t *p = json_object();
			json_object_set_new(p, "hardware", json_pack("[ss]", ha, hb));
			json_object_set_new(p, "ranks", json_pack("[II]", (json_int_t)(i + 1), (json_int_t)(j + 1)));
			json_object_set_new(p, k->index, json_pack("[II]", (json_int_t)resultdoc_num(a, k->index),
								   (json_int_t)resultdoc_num(b, k->index)));
			json_object_set_new(p, "blocks", json_integer(na));
			json_object_set_new(p, "basis", json_string(by_rate ? "rate per GPU" : "rate per $/hour"));
			resultdoc_put(p, "difference", expm1(diff), 4);
			resultdoc_put(p, "margin", expm1(half), 4);
			json_object_set_new(p, "max_rate", json_pack("[oo]", resultdoc_real(resultdoc_num(a, "max_rate"), 4),
								     resultdoc_real(resultdoc_num(b, "max_rate"), 4)));
			json_object_set_new(p, "gpus_per_replica", json_pack("[oo]", resultdoc_real(ga, 0),
									     resultdoc_real(gb, 0)));
			const char *pick = NULL;
			if (by_rate && priced) {
				/* As fast: the cheaper one per hour serves as well. */
				double ua = resultdoc_num(a, k->usd_per_hour), ub = resultdoc_num(b, k->usd_per_hour);
				json_object_set_new(p, "usd_per_hour", json_pack("[oo]", resultdoc_real(ua, 4),
										 resultdoc_real(ub, 4)));
				pick = ua < ub ? ha : ub < ua ? hb : NULL;
			} else if (by_rate) {
				pick = ga < gb ? ha : gb < ga ? hb : NULL;
			} else {
				/* As cheap a token: the faster one has the headroom. */
				double xa = resultdoc_num(a, "max_rate") / ga, xb = resultdoc_num(b, "max_rate") / gb;
				pick = xa > xb ? ha : xb > xa ? hb : NULL;
			}
			json_object_set_new(p, "pick", pick ? json_string(pick) : json_null());
			json_array_append_new(pairs, p);
		}
	}
	free(order);
	return pairs;
}

void ranknoise_sentence(json_t *pair, char *out, size_t cap)
{
	json_t *hw = json_object_get(pair, "hardware"), *rk = json_object_get(pair, "ranks");
	const char *a = json_string_value(json_array_get(hw, 0)), *b = json_string_value(json_array_get(hw, 1));
	const char *basis = resultdoc_str(pair, "basis"), *pick = resultdoc_str(pair, "pick");
	bool by_rate = basis && !strcmp(basis, "rate per GPU");
	a = a ? a : "?", b = b ? b : "?";
	int len = snprintf(out, cap,
			   "%s and %s (ranks %lld and %lld) are within noise at this SLO: their %s differs by "
			   "%+.1f%%, within the %.1f%% that %lld confirmation blocks resolve (95%% paired on common "
			   "seeds, plus the search's tolerance)",
			   a, b, (long long)json_integer_value(json_array_get(rk, 0)),
			   (long long)json_integer_value(json_array_get(rk, 1)),
			   by_rate ? "rate per GPU" : "rate per $/hour (cost per token)",
			   100 * resultdoc_num(pair, "difference"), 100 * resultdoc_num(pair, "margin"),
			   (long long)json_integer_value(json_object_get(pair, "blocks")));
	if (len < 0 || (size_t)len >= cap)
		return;
	out += len, cap -= (size_t)len;
	bool first = pick && !strcmp(pick, a);
	json_t *usd = json_object_get(pair, "usd_per_hour"), *g = json_object_get(pair, "gpus_per_replica");
	json_t *r = json_object_get(pair, "max_rate");
	double ua = json_number_value(json_array_get(usd, 0)), ub = json_number_value(json_array_get(usd, 1));
	double ga = json_number_value(json_array_get(g, 0)), gb = json_number_value(json_array_get(g, 1));
	double ra = json_number_value(json_array_get(r, 0)), rb = json_number_value(json_array_get(r, 1));
	if (by_rate && usd && pick)
		snprintf(out, cap, ": they are as fast, and the cheaper one is %s (%.2f against %.2f $/hour)", pick,
			 first ? ua : ub, first ? ub : ua);
	else if (by_rate && usd)
		snprintf(out, cap, ": they are as fast and both cost %.2f $/hour: either serves", ua);
	else if (by_rate && pick)
		snprintf(out, cap, ", so which ranks first is the seeds' choice; the one with fewer GPUs a replica is %s (%.0f against %.0f)",
			 pick, first ? ga : gb, first ? gb : ga);
	else if (by_rate)
		snprintf(out, cap, ", so which ranks first is the seeds' choice; both take %.0f GPU%s a replica: either serves",
			 ga, ga == 1 ? "" : "s");
	else if (pick)
		snprintf(out, cap, ", so which ranks first is the seeds' choice; a token costs about the same on both, and the faster one is %s (%.4g against %.4g req/s a replica)",
			 pick, first ? ra : rb, first ? rb : ra);
	else
		snprintf(out, cap, ", so which ranks first is the seeds' choice: either serves");
}

void ranknoise_text(FILE *f, json_t *doc)
{
	json_t *pairs = json_object_get(doc, "within_noise"), *p;
	size_t i;
	json_array_foreach(pairs, i, p) {
		char line[1024];
		ranknoise_sentence(p, line, sizeof line);
		fprintf(f, "within noise: %s\n", line);
	}
}

void ranknoise_of(json_t *doc, long long rank, char *out, size_t cap)
{
	json_t *pairs = json_object_get(doc, "within_noise"), *p;
	size_t i, len = 0;
	out[0] = '\0';
	json_array_foreach(pairs, i, p) {
		json_t *rk = json_object_get(p, "ranks");
		if (json_integer_value(json_array_get(rk, 1)) != rank || len >= cap)
			continue;
		int n = snprintf(out + len, cap - len, "%s%lld", len ? "," : "",
				 (long long)json_integer_value(json_array_get(rk, 0)));
		len = n < 0 ? cap : len + (size_t)n;
	}
}
