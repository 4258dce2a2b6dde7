#include "plandoc.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "planlayout.h"
#include "planreplicas.h"
#include "plot.h"
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
static const int limit_metrics[] = {
	MEAS_REQUEST_THROUGHPUT, MEAS_OUTPUT_THROUGHPUT, MEAS_TTFT_P50, MEAS_TTFT_P99, MEAS_TPOT_P99,
	MEAS_ITL_P50, MEAS_ITL_P99, MEAS_E2EL_P99, MEAS_PEAK_KV_USAGE, MEAS_PREEMPTIONS,
};

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
		for (size_t k = 0; k < sizeof limit_metrics / sizeof *limit_metrics; k++) {
			const struct measure_desc *d = &measure_descs[limit_metrics[k]];
			resultdoc_put(at, d->name, c->at_lo.mean[limit_metrics[k]], d->decimals);
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

void plandoc_cost_text(FILE *f, json_t *doc)
{
	json_t *b = json_object_get(doc, "cost_basis");
	if (!json_is_true(json_object_get(doc, "cost")) || !b || strcmp(resultdoc_str(b, "kind"), "own"))
		return;
	fprintf(f, "cost: owned GPUs: purchase price over %g years at %g%% utilization, plus board and server power while serving at %g $/kWh ($/hour columns: per serving hour)\n",
		resultdoc_num(b, "years"), 100 * resultdoc_num(b, "utilization"), resultdoc_num(b, "power_usd_per_kwh"));
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

void plandoc_tuning_text(FILE *f, json_t *doc, const char *items_key,
			 void (*label)(json_t *it, char *out, size_t cap))
{
	json_t *items = json_object_get(doc, items_key), *it;
	size_t i;
	long long sims = 0, settings = 0, reused = 0, tuned = 0;
	json_array_foreach(items, i, it) {
		json_t *t = json_object_get(it, "tuning");
		if (!t)
			continue;
		if (!tuned++)
			fprintf(f, "\ntuned settings (the highest rate within the SLO; --fixed keeps the scenario's):\n");
		char lab[512];
		label(it, lab, sizeof lab);
		const char *set = resultdoc_str(it, "set");
		const char *status = resultdoc_str(it, "status");
		if (resultdoc_str(it, "error") || (status && !strcmp(status, "infeasible"))) {
			fprintf(f, "  %s: no setting tried starts (the reason is in its row)\n", lab);
		} else {
			fprintf(f, "  %s: %s\n", lab, set && set[0] ? set : "the scenario's own settings");
		}
		json_t *cf = json_object_get(t, "confirmation");
		if (cf)
			fprintf(f, "    %.4g req/s on %g fresh seed blocks (the median; mean %.4g ± %.2g), %.4g on the seeds that chose it\n",
				resultdoc_num(it, "max_rate"), resultdoc_num(cf, "blocks"), resultdoc_num(cf, "mean"),
				resultdoc_num(cf, "ci95"), resultdoc_num(t, "selection_rate"));
		json_t *ru = json_object_get(t, "runners_up"), *r;
		size_t k;
		/* Runners-up are the loads their searches found: concurrency
		 * --by concurrency. */
		const char *by = resultdoc_str(json_object_get(doc, "search"), "by");
		const char *unit = by && !strcmp(by, "concurrency") ? "concurrent requests" : "req/s";
		json_array_foreach(ru, k, r) {
			const char *rs = resultdoc_str(r, "set");
			fprintf(f, "    runner-up: %.4g %s with %s%s\n", resultdoc_num(r, "max_rate"), unit,
				rs && rs[0] ? rs : "the scenario's own settings",
				json_is_true(json_object_get(r, "indistinguishable")) ? " (within the noise of the winner's)" : "");
		}
		sims += (long long)resultdoc_num(t, "simulations");
		settings += (long long)resultdoc_num(t, "settings_tried");
		reused += (long long)resultdoc_num(t, "reused");
	}
	if (tuned)
		fprintf(f, "tuning took %lld simulations: %lld settings searched over %lld candidate%s, %lld searches reused\n",
			sims, settings, tuned, tuned == 1 ? "" : "s", reused);
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
static double replica_gpus(json_t *it)
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
		double per_replica = replica_gpus(it);
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
}

/* The items in rank order when ranked, else in index order. */
static json_t *in_order(json_t *doc, size_t i)
{
	json_t *items = json_object_get(doc, "candidates");
	json_t *ranking = json_object_get(doc, "ranking");
	if (!ranking)
		return json_array_get(items, i);
	json_int_t want = json_integer_value(json_array_get(ranking, i));
	size_t j;
	json_t *it;
	json_array_foreach(items, j, it)
		if (json_integer_value(json_object_get(it, "candidate")) == want)
			return it;
	return json_array_get(items, i);   /* a ranking that names no candidate */
}

/* "ttft_p99_ms <= 2000, …" from a document's search object. */
static void slo_line(json_t *search, char *out, size_t cap)
{
	const char *key;
	json_t *v;
	out[0] = '\0';
	json_object_foreach(json_object_get(search, "slo"), key, v) {
		size_t len = strlen(out);
		snprintf(out + len, cap - len, "%s%s <= %g", len ? ", " : "", key, json_number_value(v));
	}
}

void plandoc_search_text(FILE *f, json_t *search)
{
	int reps = (int)resultdoc_num(search, "replications");
	double conf = resultdoc_num(search, "confidence");
	const char *by = resultdoc_str(search, "by");   /* compare's search may lack it */
	bool conc = by && !strcmp(by, "concurrency");
	fprintf(f, "search: %s by doubling/halving then bisection", conc ? "max_concurrency" : "request rate");
	if (conc)
		fprintf(f, " to one request");
	else
		fprintf(f, " to %g%%", 100 * resultdoc_num(search, "tolerance"));
	fprintf(f, ", up to %g; %d replication%s per load (the same seeds at every load)\n",
		resultdoc_num(search, "max_load"), reps, reps == 1 ? "" : "s");
	if (reps > 1)
		fprintf(f, "a load passes when the one-sided %g%% upper confidence bound (Student t, %d dof) of the mean of every SLO statistic is within its limit\n",
			100 * conf, reps - 1);
	else
		fprintf(f, "a load passes when every SLO statistic of its one run is within its limit (no confidence: 1 replication)\n");
}

/* "h100-sxm tp 2 bf16", with " pp N" after the tp when there are pipeline
 * stages. */
static void text_label(json_t *it, char *out, size_t cap)
{
	double pp = resultdoc_num(it, "pipeline_parallel_size");
	char pps[32] = "";
	if (pp > 1)
		snprintf(pps, sizeof pps, " pp %lld", (long long)pp);
	const char *lay = resultdoc_str(it, "layout");   /* --gpu-budget */
	snprintf(out, cap, "%s tp %lld%s %s%s%s", resultdoc_str(it, "hardware"),
		 (long long)resultdoc_num(it, "tensor_parallel_size"), pps, resultdoc_str(it, "weights"),
		 lay ? " " : "", lay ? lay : "");
}

static void text(FILE *f, json_t *doc)
{
	json_t *search = json_object_get(doc, "search");
	bool cost = json_is_true(json_object_get(doc, "cost"));
	double target = resultdoc_num(doc, "target_rate");
	bool conc = !strcmp(resultdoc_str(search, "by"), "concurrency");
	size_t n = json_array_size(json_object_get(doc, "candidates"));
	char slo[512];
	slo_line(search, slo, sizeof slo);
	fprintf(f, "servesim plan: %s; SLO %s", resultdoc_str(doc, "scenario"), slo);
	if (!isnan(target))
		fprintf(f, "; target %g req/s", target);
	if (resultdoc_str(doc, "shard"))
		fprintf(f, "; shard %s (%zu of %lld candidates)", resultdoc_str(doc, "shard"), n,
			(long long)resultdoc_num(doc, "candidates_total"));
	fputc('\n', f);
	plandoc_cost_text(f, doc);
	plandoc_search_text(f, search);
	fprintf(f, "latencies in ms at the highest load that passes\n\n");
	bool lay = !isnan(resultdoc_num(doc, "gpu_budget"));
	fprintf(f, "%4s %-16s %3s %-7s%s %9s %s %8s %8s %8s %8s %-20s %8s %5s", "rank", "hardware", "tp",
		"weights", lay ? " layout  " : "", "max req/s", conc ? "max conc" : "", "tok/s", "TTFT p99", "ITL p99", "E2EL p99",
		"limit", "replicas", "GPUs");
	if (cost)
		fprintf(f, " %9s %9s", "$/hour", "$/1M tok");
	fputc('\n', f);
	json_t *ranking = json_object_get(doc, "ranking");
	for (size_t i = 0; i < n; i++) {
		json_t *it = in_order(doc, i), *at = json_object_get(it, "at_limit");
		char rank[24];
		snprintf(rank, sizeof rank, "%zu", i + 1);
		char tp[32];
		double pp = resultdoc_num(it, "pipeline_parallel_size");
		if (pp > 1)
			snprintf(tp, sizeof tp, "%lldx%lld", (long long)resultdoc_num(it, "tensor_parallel_size"),
				 (long long)pp);
		else
			snprintf(tp, sizeof tp, "%lld", (long long)resultdoc_num(it, "tensor_parallel_size"));
		fprintf(f, "%4s %-16s %3s %-7s", ranking ? rank : "-", resultdoc_str(it, "hardware"), tp,
			resultdoc_str(it, "weights"));
		if (lay)
			fprintf(f, " %-8s", resultdoc_str(it, "layout"));
		resultdoc_cell(f, resultdoc_num(it, "max_rate"), 3, 9);
		if (conc)
			resultdoc_cell(f, resultdoc_num(it, "max_concurrency"), 0, 8);
		resultdoc_cell(f, resultdoc_num(at, "output_throughput"), 1, 8);
		resultdoc_cell(f, resultdoc_num(at, "ttft_p99_ms"), 1, 8);
		resultdoc_cell(f, resultdoc_num(at, "itl_p99_ms"), 2, 8);
		resultdoc_cell(f, resultdoc_num(at, "e2el_p99_ms"), 1, 8);
		fprintf(f, " %-20s", resultdoc_str(it, "limit"));
		resultdoc_cell(f, resultdoc_num(it, "replicas"), 0, 8);
		resultdoc_cell(f, resultdoc_num(it, "gpus"), 0, 5);
		if (cost) {
			resultdoc_cell(f, resultdoc_num(it, "usd_per_hour"), 2, 9);
			resultdoc_cell(f, resultdoc_num(it, "usd_per_1m_output_tokens"), 3, 9);
		}
		fputc('\n', f);
	}
	fprintf(f, "\nlimits:\n");
	for (size_t i = 0; i < n; i++) {
		json_t *it = in_order(doc, i);
		char lab[512];
		text_label(it, lab, sizeof lab);
		fprintf(f, "  %s: %s: %s\n", lab, resultdoc_str(it, "limit"), resultdoc_str(it, "limit_detail"));
	}
	plandoc_tuning_text(f, doc, "candidates", text_label);
	planlayout_text(f, doc);
	for (size_t i = 0; i < n; i++) {
		json_t *it = in_order(doc, i);
		double win = resultdoc_num(it, "arrival_window_s");
		double e2el = resultdoc_num(json_object_get(it, "at_limit"), "e2el_p99_ms") / 1e3;
		char lab[512];
		text_label(it, lab, sizeof lab);
		if (win < 10 * e2el)
			fprintf(f, "note: %s: at its limit the requests arrive over only %.3g s, less than 10× its p99 E2EL (%.3g s): the run may end before a queue builds; a longer run (--duration, workload.num_prompts) may lower the limit\n",
				lab, win, e2el);
	}
	json_t *winner = json_object_get(doc, "winner");
	if (!ranking)
		return;
	if (!json_is_integer(winner)) {
		fprintf(f, "\nno candidate meets the SLO\n");
		return;
	}
	json_t *w = in_order(doc, 0);
	fprintf(f, "\nwinner: %s, tp %lld, weights %s", resultdoc_str(w, "hardware"),
		(long long)resultdoc_num(w, "tensor_parallel_size"), resultdoc_str(w, "weights"));
	if (resultdoc_str(w, "layout"))
		fprintf(f, ", layout %s", resultdoc_str(w, "layout"));
	fprintf(f, ": %g req/s per replica within the SLO", resultdoc_num(w, "max_rate"));
	if (!isnan(target))
		fprintf(f, "; %lld replica%s = %lld GPU%s for %g req/s", (long long)resultdoc_num(w, "replicas"),
			resultdoc_num(w, "replicas") == 1 ? "" : "s", (long long)resultdoc_num(w, "gpus"),
			resultdoc_num(w, "gpus") == 1 ? "" : "s", target);
	if (cost)
		fprintf(f, "; %.2f $/hour, %.3f $ per 1M output tokens", resultdoc_num(w, "usd_per_hour"),
			resultdoc_num(w, "usd_per_1m_output_tokens"));
	fprintf(f, "; bound by %s\n", resultdoc_str(w, "limit"));
	/* The replica count at the low end of the rate's spread over fresh
	 * seeds (tune.h, confirmation): whether noise could change it. */
	double half = resultdoc_num(json_object_get(json_object_get(w, "tuning"), "confirmation"), "ci95");
	double rate = resultdoc_num(w, "max_rate"), reps = resultdoc_num(w, "replicas");
	if (!isnan(target) && half > 0 && rate - half > 0 && !json_object_get(w, "replicas_simulated") &&
	    ceil(target / (rate - half)) > reps)
		fprintf(f, "note: the winner's rate is %.4g ± %.2g req/s over fresh seeds (95%%); at its low end %g req/s takes %.0f replicas, not %.0f\n",
			rate, half, target, ceil(target / (rate - half)), reps);
	const char *set = resultdoc_str(w, "set"), *lset = resultdoc_str(w, "layout_set");
	if ((set && set[0]) || lset)
		fprintf(f, "reproduce it with: %s%s%s\n", set ? set : "", set && set[0] && lset ? " " : "",
			lset ? lset : "");
}

static void csv(FILE *f, json_t *doc)
{
	static const char *const cols[] = { "max_rate", "max_concurrency", "first_failing_load",
					     "evaluations", "replicas", "gpus", "price_usd_per_gpu_hour",
					     "usd_per_hour", "usd_per_1m_output_tokens" };
	static const int cols_dec[] = { 4, 0, 4, 0, 0, 0, 4, 4, 4 };
	fprintf(f, "rank,candidate,hardware,tensor_parallel_size,weights,status");
	for (size_t c = 0; c < sizeof cols / sizeof *cols; c++)
		fprintf(f, ",%s", cols[c]);
	for (size_t k = 0; k < sizeof limit_metrics / sizeof *limit_metrics; k++)
		fprintf(f, ",%s", measure_descs[limit_metrics[k]].name);
	fprintf(f, ",limit,limit_detail\n");
	bool ranked = json_object_get(doc, "ranking") != NULL;
	size_t n = json_array_size(json_object_get(doc, "candidates"));
	for (size_t i = 0; i < n; i++) {
		json_t *it = in_order(doc, i), *at = json_object_get(it, "at_limit");
		if (ranked)
			fprintf(f, "%zu", i + 1);
		fprintf(f, ",%lld,", (long long)resultdoc_num(it, "candidate"));
		resultdoc_csv_str(f, resultdoc_str(it, "hardware"));
		fprintf(f, ",%lld,", (long long)resultdoc_num(it, "tensor_parallel_size"));
		resultdoc_csv_str(f, resultdoc_str(it, "weights"));
		fprintf(f, ",%s", resultdoc_str(it, "status"));
		for (size_t c = 0; c < sizeof cols / sizeof *cols; c++) {
			fputc(',', f);
			resultdoc_csv_num(f, resultdoc_num(it, cols[c]), cols_dec[c]);
		}
		for (size_t k = 0; k < sizeof limit_metrics / sizeof *limit_metrics; k++) {
			const struct measure_desc *d = &measure_descs[limit_metrics[k]];
			fputc(',', f);
			resultdoc_csv_num(f, resultdoc_num(at, d->name), d->decimals);
		}
		fprintf(f, ",%s,", resultdoc_str(it, "limit"));
		resultdoc_csv_str(f, resultdoc_str(it, "limit_detail"));
		fputc('\n', f);
	}
}

/* A candidate's name for legends: hardware/tpN/weights. */
static void cand_label(json_t *it, char *out, size_t cap)
{
	const char *w = resultdoc_str(it, "weights");
	snprintf(out, cap, "%s/tp%lld%s%s", resultdoc_str(it, "hardware"),
		 (long long)resultdoc_num(it, "tensor_parallel_size"), w ? "/" : "", w ? w : "");
	for (char *s = out; *s; s++)
		if (*s == ' ' || *s == '\'' || *s == '"')
			*s = '_';
}

int plandoc_plot_cost(json_t *doc, const char *items_key, const char *dir, struct plot_opts *o,
		   struct err *e)
{
	json_t *items = json_object_get(doc, items_key), *it;
	size_t i;
	FILE *f = plot_data_open(dir, "cost.dat", e);
	if (!f)
		return -1;
	fprintf(f, "# usd_per_hour_per_replica\tmax_rate_req_s\tusd_per_1m_output_tokens\tlabel\n");
	json_array_foreach(items, i, it) {
		double per_replica = replica_gpus(it);
		double price = resultdoc_num(it, "price_usd_per_gpu_hour"), rate = resultdoc_num(it, "max_rate");
		if (isnan(price) || !(rate > 0))
			continue;
		char lab[256];
		cand_label(it, lab, sizeof lab);
		double per1m = resultdoc_num(it, "usd_per_1m_output_tokens_at_slo");
		if (isnan(per1m))
			per1m = resultdoc_num(it, "usd_per_1m_output_tokens");
		fprintf(f, "%.10g\t%.10g\t%.10g\t%s\n", price * per_replica, rate, isnan(per1m) ? 0 : per1m, lab);
	}
	if (plot_data_close(f, dir, "cost.dat", o, e))
		return -1;
	char vars[8192] = "", path[4200], slo[512];
	snprintf(path, sizeof path, "%s/cost.dat", dir);
	json_t *search = json_object_get(doc, "search");
	slo_line(search, slo, sizeof slo);
	if (plot_var(vars, sizeof vars, "data", path) || plot_text(vars, sizeof vars, "subtitle", slo))
		return err_set(e, "--plot %s: the plot's variables are too long", dir);
	return plot_gnuplot("cost", dir, "goodput_vs_cost", vars, o, e);
}

static int plot(json_t *doc, const char *dir, struct plot_opts *o, struct err *e)
{
	json_t *items = json_object_get(doc, "candidates"), *it;
	size_t i;
	bool cost = json_is_true(json_object_get(doc, "cost"));
	if (cost && plandoc_plot_cost(doc, "candidates", dir, o, e))
		return -1;
	/* The search trace: every load tried, its worst SLO ratio. */
	FILE *f = plot_data_open(dir, "search.dat", e);
	if (!f)
		return -1;
	char series[4096] = "";
	fprintf(f, "# load\tworst_slo_ratio\tpass  (one block per candidate, in the order tried)\n");
	size_t nb = 0;
	json_array_foreach(items, i, it) {
		json_t *trace = json_object_get(it, "tried"), *ev;
		if (!json_array_size(trace))
			continue;
		char lab[256];
		cand_label(it, lab, sizeof lab);
		size_t len = strlen(series);
		snprintf(series + len, sizeof series - len, "%s%s", nb ? " " : "", lab);
		fprintf(f, "%s# %s\n", nb++ ? "\n\n" : "", lab);
		size_t k;
		json_array_foreach(trace, k, ev) {
			double w = json_number_value(json_array_get(ev, 1));
			fprintf(f, "%.10g\t%.10g\t%d\n", json_number_value(json_array_get(ev, 0)),
				isnan(w) || w > 1e6 ? 1e6 : w, json_is_true(json_array_get(ev, 2)));
		}
	}
	if (plot_data_close(f, dir, "search.dat", o, e))
		return -1;
	if (!nb)
		return 0;
	char vars[8192] = "", path[4200], slo[512];
	snprintf(path, sizeof path, "%s/search.dat", dir);
	json_t *search = json_object_get(doc, "search");
	slo_line(search, slo, sizeof slo);
	if (json_object_get(search, "tune")) {
		size_t len = strlen(slo);
		snprintf(slo + len, sizeof slo - len, "; each candidate at its tuned vLLM settings");
	}
	bool conc = !strcmp(resultdoc_str(search, "by"), "concurrency");
	if (plot_var(vars, sizeof vars, "data", path) || plot_text(vars, sizeof vars, "series", series) ||
	    plot_text(vars, sizeof vars, "subtitle", slo) ||
	    plot_text(vars, sizeof vars, "xlabel", conc ? "Max concurrency (requests)" : "Request rate (req/s)"))
		return err_set(e, "--plot %s: the plot's variables are too long", dir);
	return plot_gnuplot("plan_search", dir, "plan_search", vars, o, e);
}

/* What merge and plot read back (docschema.h): the keys the renderers
 * above use. */
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
	{ .key = NULL },
};

const struct resultdoc_kind plandoc_kind = {
	.name = "plan",
	.items = "candidates",
	.index = "candidate",
	.total = "candidates_total",
	.finish = finish,
	.text = text,
	.csv = csv,
	.plot = plot,
	.schema = plan_schema,
};
