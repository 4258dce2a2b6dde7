/*
 * plandoc_plot: a plan document's pictures (gnuplot, plot.h): the search
 * trace (every load tried per candidate and its worst SLO ratio) and,
 * priced, goodput against cost, which compare's document shares.
 *
 * Invariants: a candidate without a load tried has no block in
 * search.dat, and none at all draws no search picture; cost.dat holds
 * only priced candidates that sustain some load.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "plandoc_int.h"
#include "plot.h"

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
		double per_replica = plandoc_replica_gpus(it);
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
	plandoc_slo_line(search, slo, sizeof slo);
	if (plot_var(vars, sizeof vars, "data", path) || plot_text(vars, sizeof vars, "subtitle", slo))
		return err_set(e, "--plot %s: the plot's variables are too long", dir);
	return plot_gnuplot("cost", dir, "goodput_vs_cost", vars, o, e);
}

int plandoc_plot(json_t *doc, const char *dir, struct plot_opts *o, struct err *e)
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
	plandoc_slo_line(search, slo, sizeof slo);
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
