/*
 * plandoc_text: a plan document as text (the ranked table, each
 * candidate's binding limit, tuned settings, layouts, notes and the
 * winner) and as CSV (one row per candidate, in rank order); also the
 * text pieces compare's document shares (the search method, the cost
 * basis, the tuned settings).
 *
 * Invariants: reads only the document (what plandoc_kind's schema holds
 * for merged or read-back documents); rows are in rank order when the
 * document is ranked, else in candidate order.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "planlayout.h"
#include "plandoc_int.h"
#include "ranknoise.h"

void plandoc_cost_text(FILE *f, json_t *doc)
{
	json_t *b = json_object_get(doc, "cost_basis");
	if (!json_is_true(json_object_get(doc, "cost")) || !b || strcmp(resultdoc_str(b, "kind"), "own"))
		return;
	fprintf(f, "cost: owned GPUs: purchase price over %g years at %g%% utilization, plus board and server power while serving at %g $/kWh ($/hour columns: per serving hour)\n",
		resultdoc_num(b, "years"), 100 * resultdoc_num(b, "utilization"), resultdoc_num(b, "power_usd_per_kwh"));
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

/* The items in rank order when ranked, else in index order. */
static json_t *in_order(json_t *doc, size_t i)
{
	return resultdoc_ranked(json_object_get(doc, "candidates"), json_object_get(doc, "ranking"), "candidate", i);
}

/* "ttft_p99_ms <= 2000, …" from a document's search object. */
void plandoc_slo_line(json_t *search, char *out, size_t cap)
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

void plandoc_text(FILE *f, json_t *doc)
{
	json_t *search = json_object_get(doc, "search");
	bool cost = json_is_true(json_object_get(doc, "cost"));
	double target = resultdoc_num(doc, "target_rate");
	bool conc = !strcmp(resultdoc_str(search, "by"), "concurrency");
	size_t n = json_array_size(json_object_get(doc, "candidates"));
	char slo[512];
	plandoc_slo_line(search, slo, sizeof slo);
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
		char rank[48], near[32];
		ranknoise_of(doc, (long long)i + 1, near, sizeof near);   /* "2~1": within noise of rank 1 */
		snprintf(rank, sizeof rank, "%zu%s%.*s", i + 1, near[0] ? "~" : "", (int)strcspn(near, ","), near);
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
	if (json_array_size(json_object_get(doc, "within_noise")))
		fprintf(f, "(rank N~M: within noise of rank M, see \"within noise:\" below)\n");
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
	ranknoise_text(f, doc);
}

void plandoc_csv(FILE *f, json_t *doc)
{
	static const char *const cols[] = { "max_rate", "max_concurrency", "first_failing_load",
					     "evaluations", "replicas", "gpus", "price_usd_per_gpu_hour",
					     "usd_per_hour", "usd_per_1m_output_tokens" };
	static const int cols_dec[] = { 4, 0, 4, 0, 0, 0, 4, 4, 4 };
	fprintf(f, "rank,candidate,hardware,tensor_parallel_size,weights,status");
	for (size_t c = 0; c < sizeof cols / sizeof *cols; c++)
		fprintf(f, ",%s", cols[c]);
	for (size_t k = 0; k < plandoc_n_limit_metrics; k++)
		fprintf(f, ",%s", measure_descs[plandoc_limit_metrics[k]].name);
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
		for (size_t k = 0; k < plandoc_n_limit_metrics; k++) {
			const struct measure_desc *d = &measure_descs[plandoc_limit_metrics[k]];
			fputc(',', f);
			resultdoc_csv_num(f, resultdoc_num(at, d->name), d->decimals);
		}
		fprintf(f, ",%s,", resultdoc_str(it, "limit"));
		resultdoc_csv_str(f, resultdoc_str(it, "limit_detail"));
		fputc('\n', f);
	}
}
