/*
 * plandoc: building a plan's result document (plandoc.h): the search
 * object, each candidate's findings, capacity and cost for the target,
 * its tuning, the ranking and winner of a whole document, and the schema
 * merge and plot read back. The forms are plandoc_text.c (text, CSV) and
 * plandoc_plot.c (pictures), sharing plandoc_int.h.
 *
 * Invariants: a ranking names every candidate once, usable ones first;
 * the winner is the first of the ranking when it sustains some load, else
 * null.
 */
#include "plandoc.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "plandoc_int.h"
#include "planreplicas.h"
#include "ranknoise.h"
#include "xalloc.h"

json_t *plandoc_search_json(const struct plan_slo *slo, const struct plan_opts *o)
{
	json_t *j = json_object(), *limits = json_object();
	for (int i = 0; i < slo->n; i++)
		resultdoc_put(limits, measure_descs[slo->metric[i]].name, slo->limit[i], 6);
	json_object_set_new(j, "slo", limits);
	json_object_set_new(j, "by", json_string(o->by == PLAN_BY_CONCURRENCY ? "concurrency" : "rate"));
	json_object_set_new(j, "replications", json_integer(o->replications));
	resultdoc_put(j, "confidence", o->confidence, 6);
	resultdoc_put(j, "tolerance", o->tolerance, 6);
	resultdoc_put(j, "max_load", o->max_rate, 6);
	resultdoc_put(j, "duration_s", o->duration_s, 3);
	json_object_set_new(j, "max_evaluations", json_integer(o->max_evals));
	return j;
}

/* The metrics kept for a candidate at its limit. */
const int plandoc_limit_metrics[] = {
	MEAS_REQUEST_THROUGHPUT, MEAS_OUTPUT_THROUGHPUT, MEAS_TTFT_P50, MEAS_TTFT_P99, MEAS_TPOT_P99,
	MEAS_ITL_P50, MEAS_ITL_P99, MEAS_E2EL_P99, MEAS_PEAK_KV_USAGE, MEAS_PREEMPTIONS,
};
const size_t plandoc_n_limit_metrics = sizeof plandoc_limit_metrics / sizeof *plandoc_limit_metrics;

json_t *plandoc_cand_json(const struct plan_cand *c, const struct plan_slo *slo, const struct plan_opts *o)
{
	json_t *j = json_object();
	json_object_set_new(j, "status", json_string(plan_status_names[c->status]));
	resultdoc_put(j, "max_rate", plan_sustained_rate(c, o), 4);
	if (o->by == PLAN_BY_CONCURRENCY)
		resultdoc_put(j, "max_concurrency", isnan(c->lo) ? 0 : c->lo, 0);
	resultdoc_put(j, "first_failing_load", c->hi, 4);
	if (o->by == PLAN_BY_RATE && c->lo > 0) {
		/* How long the run at the limit sends requests: a run much
		 * shorter than its latencies never reaches a steady state. */
		resultdoc_put(j, "arrival_window_s", (double)plan_requests_at(c, o, c->lo) / c->lo, 3);
	}
	json_object_set_new(j, "evaluations", json_integer((json_int_t)c->n_evals));
	json_t *at = json_object();
	if (!isnan(c->lo)) {
		for (size_t k = 0; k < plandoc_n_limit_metrics; k++) {
			const struct measure_desc *d = &measure_descs[plandoc_limit_metrics[k]];
			resultdoc_put(at, d->name, c->at_lo.mean[plandoc_limit_metrics[k]], d->decimals);
		}
		for (int i = 0; i < slo->n; i++) {
			const struct measure_desc *d = &measure_descs[slo->metric[i]];
			resultdoc_put(at, d->name, c->at_lo.mean[slo->metric[i]], d->decimals);
		}
	}
	json_object_set_new(j, "at_limit", at);
	char detail[ERR_MSG_MAX + 256];
	const char *lim = plan_limit(c, slo, o, detail, sizeof detail);
	json_object_set_new(j, "limit", json_string(lim));
	json_object_set_new(j, "limit_detail", json_string(detail));
	json_t *trace = json_array();
	for (size_t i = 0; i < c->n_evals; i++)
		json_array_append_new(trace, json_pack("[ooo]", resultdoc_real(c->evals[i].load, 4),
						       resultdoc_real(c->evals[i].worst, 4),
						       json_boolean(c->evals[i].pass)));
	json_object_set_new(j, "tried", trace);
	return j;
}

json_t *plandoc_build(const char *scenario, const struct inidoc *overrides, const struct plan_slo *slo,
		      const struct plan_opts *o, double target_rate, bool cost, size_t total,
		      const struct shard *sh, const struct plan_cand *c, size_t n,
		      const struct tune_cand *tuned, const struct tune_space *space)
{
	json_t *doc = resultdoc_new(&plandoc_kind);
	resultdoc_header(doc, scenario, overrides);
	json_t *search = plandoc_search_json(slo, o);
	if (tuned) {
		json_object_set_new(search, "tune", tune_space_json(space));
		json_object_set_new(search, "confirm_blocks", json_integer(o->confirm_blocks));
	}
	json_object_set_new(doc, "search", search);
	resultdoc_put(doc, "target_rate", target_rate, 6);
	json_object_set_new(doc, "cost", json_boolean(cost));
	json_t *items = json_array();
	for (size_t i = 0; i < n; i++) {
		json_t *it = json_object();
		const struct scenario *sc = &c[i].sc;
		json_object_set_new(it, "candidate", json_integer((json_int_t)c[i].index));
		json_object_set_new(it, "hardware", json_string(sc->hardware));
		json_object_set_new(it, "tensor_parallel_size", json_integer(sc->engine.tensor_parallel_size));
		json_object_set_new(it, "pipeline_parallel_size", json_integer(sc->engine.pipeline_parallel_size));
		json_object_set_new(it, "gpus_per_replica", json_integer(plan_unit_gpus(sc)));
		json_object_set_new(it, "weights", json_string(c[i].weights));
		json_t *sj = plandoc_cand_json(&c[i], slo, o);
		json_object_update(it, sj);
		json_decref(sj);
		/* Capacity and cost: replicas for the target (one without it). */
		double rate = plan_sustained_rate(&c[i], o);
		double replicas = plan_replicas_needed(&c[i], o, target_rate);   /* planreplicas.h */
		double gpus = replicas * (double)plan_unit_gpus(sc);
		double tok_s = plan_tokens_per_s(&c[i], o) * (isnan(target_rate) ? 1 : target_rate / rate);
		double usd_h = gpus * c[i].price_usd_per_gpu_hour;
		resultdoc_put(it, "replicas", replicas, 0);
		if (c[i].sim_replicas > 0)
			json_object_set_new(it, "replicas_simulated", json_true());
		resultdoc_put(it, "gpus", gpus, 0);
		resultdoc_put(it, "price_usd_per_gpu_hour", c[i].price_usd_per_gpu_hour, 4);
		resultdoc_put(it, "usd_per_hour", rate > 0 ? usd_h : NAN, 4);
		resultdoc_put(it, "usd_per_1m_output_tokens", tok_s > 0 ? usd_h / (tok_s * 3600) * 1e6 : NAN, 4);
		if (c[i].error)
			json_object_set_new(it, "error", json_string(c[i].error));
		plandoc_put_tuning(it, tuned ? &tuned[i] : NULL, space, o);
		json_array_append_new(items, it);
	}
	resultdoc_close(doc, &plandoc_kind, total, sh, items);
	return doc;
}

void plandoc_put_tuning(json_t *it, const struct tune_cand *t, const struct tune_space *space,
			const struct plan_opts *o)
{
	if (!t)
		return;
	json_t *tj = tune_item_json(t, space, o);
	json_object_set(it, "config", json_object_get(tj, "config"));
	json_object_set(it, "set", json_object_get(tj, "set"));
	json_object_del(tj, "config");
	json_object_del(tj, "set");
	json_object_set_new(it, "tuning", tj);
}

/* Ranking: candidates that sustain some load first; then, with cost, the
 * cheapest per hour for the target (without a target: per 1M output
 * tokens at the limit); without cost, the fewest GPUs for the target
 * (without a target: the highest rate per GPU). Ties: the lower index. */
struct rank_key {
	size_t pos;
	int usable;
	double k1, k2;
};

/* GPUs of one replica of a result item: gpus_per_replica, or the tensor
 * parallel size of documents written before pipelines (1 when neither). */
double plandoc_replica_gpus(json_t *it)
{
	double g = resultdoc_num(it, "gpus_per_replica");
	if (isnan(g))
		g = resultdoc_num(it, "tensor_parallel_size");
	return isnan(g) ? 1 : g;
}

static int by_rank(const void *a, const void *b)
{
	const struct rank_key *x = a, *y = b;
	if (x->usable != y->usable)
		return y->usable - x->usable;
	if (x->usable) {
		if (x->k1 != y->k1)
			return x->k1 < y->k1 ? -1 : 1;
		if (x->k2 != y->k2)
			return x->k2 < y->k2 ? -1 : 1;
	}
	return (x->pos > y->pos) - (x->pos < y->pos);
}

static void finish(json_t *doc)
{
	json_t *items = json_object_get(doc, "candidates");
	bool cost = json_is_true(json_object_get(doc, "cost"));
	bool target = !isnan(resultdoc_num(doc, "target_rate"));
	size_t n = json_array_size(items);
	struct rank_key *k = xcalloc(n ? n : 1, sizeof *k);
	for (size_t i = 0; i < n; i++) {
		json_t *it = json_array_get(items, i);
		double rate = resultdoc_num(it, "max_rate"), gpus = resultdoc_num(it, "gpus");
		double per_replica = plandoc_replica_gpus(it);
		k[i].pos = i;
		k[i].usable = rate > 0;
		if (cost) {
			k[i].k1 = target ? resultdoc_num(it, "usd_per_hour") :
					   resultdoc_num(it, "usd_per_1m_output_tokens");
			k[i].k2 = target ? resultdoc_num(it, "usd_per_1m_output_tokens") : -rate;
		} else {
			k[i].k1 = target ? gpus : -rate / per_replica;
			k[i].k2 = -rate;
		}
		if (isnan(k[i].k1) || isnan(k[i].k2))
			k[i].usable = 0;
	}
	qsort(k, n, sizeof *k, by_rank);
	json_t *ranking = json_array();
	for (size_t i = 0; i < n; i++)
		json_array_append_new(ranking, json_integer(resultdoc_num(json_array_get(items, k[i].pos),
									  "candidate")));
	json_object_set_new(doc, "ranking", ranking);
	json_object_set_new(doc, "winner", n && k[0].usable ?
						   json_integer(resultdoc_num(json_array_get(items, k[0].pos),
									      "candidate")) :
						   json_null());
	free(k);
	/* Pairs of GPUs whose order the confirmation blocks do not resolve. */
	struct ranknoise_keys rk = { .index = "candidate", .usd_per_hour = "usd_per_hour", .cost = cost,
				     .tolerance = resultdoc_num(json_object_get(doc, "search"), "tolerance") };
	json_t *noise = ranknoise_pairs(items, ranking, &rk);
	if (noise)
		json_object_set_new(doc, "within_noise", noise);
}

/* What merge and plot read back (docschema.h): the keys the renderers
 * (plandoc_text.c, plandoc_plot.c) use. */
static const struct docschema_field search_schema[] = {
	{ .key = "slo", .type = DS_OBJ, .optional = true },
	{ .key = "by", .type = DS_STR },
	{ .key = "replications", .type = DS_INT, .min = 1, .max = INT32_MAX },
	{ .key = "confidence", .type = DS_NUM },
	{ .key = "tolerance", .type = DS_NUM },
	{ .key = "max_load", .type = DS_NUM },
	{ .key = NULL },
};

static const struct docschema_field cand_schema[] = {
	{ .key = "candidate", .type = DS_INT, .min = 0, .max = INT32_MAX },
	{ .key = "hardware", .type = DS_STR },
	{ .key = "tensor_parallel_size", .type = DS_INT, .min = 1, .max = INT32_MAX },
	{ .key = "weights", .type = DS_STR },
	{ .key = "status", .type = DS_STR },
	{ .key = "max_rate", .type = DS_NUM },
	{ .key = "at_limit", .type = DS_OBJ },
	{ .key = "limit", .type = DS_STR },
	{ .key = "limit_detail", .type = DS_STR },
	{ .key = "tried", .type = DS_ARR },
	{ .key = "replicas", .type = DS_NUM },
	{ .key = "gpus", .type = DS_NUM },
	{ .key = NULL },
};

static const struct docschema_field plan_schema[] = {
	{ .key = "scenario", .type = DS_STR },
	{ .key = "search", .type = DS_OBJ, .sub = search_schema },
	{ .key = "cost", .type = DS_BOOL },
	{ .key = "target_rate", .type = DS_NUM },
	{ .key = "candidates_total", .type = DS_INT, .min = 0, .max = INT32_MAX },
	{ .key = "candidates", .type = DS_ARR, .sub = cand_schema },
	{ .key = "ranking", .type = DS_INT_ARR, .optional = true, .min = 0, .max = INT32_MAX },
	{ .key = "within_noise", .type = DS_ARR, .optional = true, .sub = ranknoise_schema },
	{ .key = NULL },
};

const struct resultdoc_kind plandoc_kind = {
	.name = "plan",
	.items = "candidates",
	.index = "candidate",
	.total = "candidates_total",
	.finish = finish,
	.text = plandoc_text,
	.csv = plandoc_csv,
	.plot = plandoc_plot,
	.schema = plan_schema,
};
