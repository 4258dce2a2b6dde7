#include "comparedoc.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pathname.h"
#include "plandoc.h"
#include "planreplicas.h"
#include "plot.h"
#include "ranknoise.h"
#include "xalloc.h"

/* The metrics at load, with their 95% half-widths when replicated. */
static const int load_metrics[] = {
	MEAS_REQUEST_THROUGHPUT, MEAS_OUTPUT_THROUGHPUT, MEAS_TTFT_P50, MEAS_TTFT_P99, MEAS_ITL_P50,
	MEAS_ITL_P99, MEAS_E2EL_P50, MEAS_E2EL_P99, MEAS_PEAK_KV_USAGE, MEAS_PREEMPTIONS,
};
enum { N_LOAD = sizeof load_metrics / sizeof *load_metrics };

json_t *comparedoc_build(const char *scenario, const struct inidoc *overrides, const struct plan_slo *slo,
			 const struct plan_opts *o, double target_rate, bool cost, size_t total, const struct shard *sh,
			 const struct compare_row *rows, size_t n, const struct tune_cand *tuned,
			 const struct tune_space *space)
{
	if (!slo->n)
		tuned = NULL;
	json_t *doc = resultdoc_new(&comparedoc_kind);
	resultdoc_header(doc, scenario, overrides);
	if (n)
		json_object_set_new(doc, "model", json_string(rows[0].cand.sc.model));
	json_t *search = slo->n ? plandoc_search_json(slo, o) : json_pack("{si}", "replications", o->replications);
	if (tuned) {
		json_object_set_new(search, "tune", tune_space_json(space));
		json_object_set_new(search, "confirm_blocks", json_integer(o->confirm_blocks));
	}
	json_object_set_new(doc, "search", search);
	if (!isnan(target_rate))
		resultdoc_put(doc, "target_rate", target_rate, 6);
	json_object_set_new(doc, "cost", json_boolean(cost));
	json_t *items = json_array();
	for (size_t i = 0; i < n; i++) {
		const struct compare_row *r = &rows[i];
		const struct scenario *sc = &r->cand.sc;
		json_t *it = json_object();
		json_object_set_new(it, "row", json_integer((json_int_t)r->cand.index));
		json_object_set_new(it, "hardware", json_string(sc->hardware));
		json_object_set_new(it, "device", json_string(r->name));
		json_object_set_new(it, "tensor_parallel_size", json_integer(sc->engine.tensor_parallel_size));
		json_object_set_new(it, "pipeline_parallel_size", json_integer(sc->engine.pipeline_parallel_size));
		resultdoc_put(it, "mem_bandwidth_gb_s", r->bandwidth_gb_s, 3);
		resultdoc_put(it, "decode_ceiling_tok_s", r->decode_ceiling_tok_s, 3);
		plandoc_put_tuning(it, tuned ? &tuned[i] : NULL, space, o);
		if (r->error) {
			json_object_set_new(it, "error", json_string(r->error));
			json_array_append_new(items, it);
			continue;
		}
		json_t *at = json_object();
		for (int k = 0; k < N_LOAD; k++) {
			const struct measure_desc *d = &measure_descs[load_metrics[k]];
			resultdoc_put(at, d->name, r->at_load.mean[load_metrics[k]], d->decimals);
			if (o->replications < 2)
				continue;
			char key[80];
			snprintf(key, sizeof key, "%s_ci95", d->name);
			resultdoc_put(at, key, measure_half_width(&r->at_load, load_metrics[k], 0.95), d->decimals);
		}
		json_object_set_new(it, "at_load", at);
		double tok_s = r->at_load.mean[MEAS_OUTPUT_THROUGHPUT];
		double usd_h = r->cand.price_usd_per_gpu_hour * (double)plan_unit_gpus(sc);
		if (slo->n) {
			json_t *sj = plandoc_cand_json(&r->cand, slo, o);
			json_object_update(it, sj);
			json_decref(sj);
		}
		resultdoc_put(it, "price_usd_per_gpu_hour", r->cand.price_usd_per_gpu_hour, 4);
		resultdoc_put(it, "usd_per_hour", usd_h, 4);
		resultdoc_put(it, "usd_per_1m_output_tokens", tok_s > 0 ? usd_h / (tok_s * 3600) * 1e6 : NAN, 4);
		double lim_tok_s = slo->n ? plan_tokens_per_s(&r->cand, o) : NAN;
		resultdoc_put(it, "usd_per_1m_output_tokens_at_slo", lim_tok_s > 0 ? usd_h / (lim_tok_s * 3600) * 1e6 : NAN, 4);
		double lim_rate = slo->n ? plan_sustained_rate(&r->cand, o) : NAN;   /* tuned: the confirmed rate */
		resultdoc_put(it, "usd_per_1k_requests_at_slo", lim_rate > 0 ? usd_h / (lim_rate * 3600) * 1e3 : NAN, 4);
		resultdoc_put(it, "output_tok_s_per_usd_hour", usd_h > 0 ? tok_s / usd_h : NAN, 4);
		if (slo->n && !isnan(target_rate)) {
			/* Capacity for the target: copies of the deployment (planreplicas.h). */
			double copies = plan_replicas_needed(&r->cand, o, target_rate);
			resultdoc_put(it, "replicas", copies, 0);
			if (r->cand.sim_replicas > 0)
				json_object_set_new(it, "replicas_simulated", json_true());
			resultdoc_put(it, "gpus", copies * (double)plan_unit_gpus(sc), 0);
			resultdoc_put(it, "usd_per_hour_at_target", copies * usd_h, 4);
		}
		json_array_append_new(items, it);
	}
	resultdoc_close(doc, &comparedoc_kind, total, sh, items);
	return doc;
}

static void text_label(json_t *it, char *out, size_t cap)
{
	snprintf(out, cap, "%s", resultdoc_str(it, "hardware"));
}

static void text(FILE *f, json_t *doc)
{
	json_t *search = json_object_get(doc, "search");
	json_t *rows = json_object_get(doc, "rows"), *it;
	bool slo = json_object_get(search, "slo") != NULL;
	bool cost = json_is_true(json_object_get(doc, "cost"));
	int reps = (int)resultdoc_num(search, "replications");
	double target = resultdoc_num(doc, "target_rate");
	bool tgt = slo && !isnan(target);
	size_t i;
	fprintf(f, "servesim compare: %s (%s)", resultdoc_str(doc, "scenario"),
		resultdoc_str(doc, "model") ? resultdoc_str(doc, "model") : "?");
	if (tgt)
		fprintf(f, "; target %g req/s", target);
	if (resultdoc_str(doc, "shard"))
		fprintf(f, "; shard %s", resultdoc_str(doc, "shard"));
	fprintf(f, "\nat the scenario's load: mean over %d replication%s%s; latencies in ms\n", reps,
		reps == 1 ? "" : "s", reps > 1 ? " (± lines: 95% confidence half-widths, Student t)" : "");
	if (slo)
		plandoc_search_text(f, search);
	plandoc_cost_text(f, doc);
	fprintf(f, "decode ceiling: tp × bandwidth ÷ weight bytes per token, batch 1, datasheet (SEED C8)\n\n");
	fprintf(f, "%-16s %7s %9s %8s %9s %8s %8s %8s %8s %8s", "hardware", "GB/s", "ceil tok/s", "req/s",
		"tok/s", "TTFT p50", "TTFT p99", "ITL p50", "ITL p99", "E2EL p99");
	if (slo)
		fprintf(f, " %9s %-20s", "SLO req/s", "limit");
	if (tgt)
		fprintf(f, " %8s %5s", "replicas", "GPUs");
	if (cost)
		fprintf(f, " %7s %9s%s %10s%s", "$/hour", "$/1M@load", slo ? "  $/1M@SLO" : "", "tok/s/$/h",
			tgt ? " $/h@target" : "");
	fputc('\n', f);
	static const struct {
		const char *key;
		int dec, w;
	} cols[] = { { "request_throughput", 2, 8 }, { "output_throughput", 1, 9 }, { "ttft_p50_ms", 1, 8 },
		     { "ttft_p99_ms", 1, 8 }, { "itl_p50_ms", 2, 8 }, { "itl_p99_ms", 2, 8 },
		     { "e2el_p99_ms", 1, 8 } };
	json_array_foreach(rows, i, it) {
		fprintf(f, "%-16s", resultdoc_str(it, "hardware"));
		resultdoc_cell(f, resultdoc_num(it, "mem_bandwidth_gb_s"), 0, 7);
		resultdoc_cell(f, resultdoc_num(it, "decode_ceiling_tok_s"), 1, 9);
		const char *err = resultdoc_str(it, "error");
		if (err) {
			fprintf(f, "  error: %s\n", err);
			continue;
		}
		json_t *at = json_object_get(it, "at_load");
		for (size_t c = 0; c < sizeof cols / sizeof *cols; c++)
			resultdoc_cell(f, resultdoc_num(at, cols[c].key), cols[c].dec, cols[c].w);
		if (slo) {
			resultdoc_cell(f, resultdoc_num(it, "max_rate"), 3, 9);
			fprintf(f, " %-20s", resultdoc_str(it, "limit"));
		}
		if (tgt) {
			char cell[32];
			double n = resultdoc_num(it, "replicas");
			if (isnan(n))
				snprintf(cell, sizeof cell, "-");
			else
				snprintf(cell, sizeof cell, "%.0f%s", n,
					 json_is_true(json_object_get(it, "replicas_simulated")) ? " sim" : "");
			fprintf(f, " %8s", cell);
			resultdoc_cell(f, resultdoc_num(it, "gpus"), 0, 5);
		}
		if (cost) {
			resultdoc_cell(f, resultdoc_num(it, "usd_per_hour"), 2, 7);
			resultdoc_cell(f, resultdoc_num(it, "usd_per_1m_output_tokens"), 3, 9);
			if (slo)
				resultdoc_cell(f, resultdoc_num(it, "usd_per_1m_output_tokens_at_slo"), 3, 9);
			resultdoc_cell(f, resultdoc_num(it, "output_tok_s_per_usd_hour"), 1, 10);
			if (tgt)
				resultdoc_cell(f, resultdoc_num(it, "usd_per_hour_at_target"), 2, 10);
		}
		fputc('\n', f);
		if (reps < 2)
			continue;
		fprintf(f, "%-16s %7s %9s", "", "", "");
		for (size_t c = 0; c < sizeof cols / sizeof *cols; c++) {
			char key[80], cell[48];
			snprintf(key, sizeof key, "%s_ci95", cols[c].key);
			double h = resultdoc_num(at, key);
			if (isnan(h))
				snprintf(cell, sizeof cell, "-");
			else
				snprintf(cell, sizeof cell, "±%.*f", cols[c].dec, h);
			fprintf(f, " %*s", cols[c].w + 1, cell);
		}
		fputc('\n', f);
	}
	if (!slo)
		return;
	fprintf(f, "\nlimits:\n");
	json_array_foreach(rows, i, it)
		if (resultdoc_str(it, "limit"))
			fprintf(f, "  %s: %s: %s\n", resultdoc_str(it, "hardware"), resultdoc_str(it, "limit"),
				resultdoc_str(it, "limit_detail"));
	plandoc_tuning_text(f, doc, "rows", text_label);
	/* The ranking, where the noise leaves it open. */
	json_t *ranking = json_object_get(doc, "ranking");
	if (json_array_size(json_object_get(doc, "within_noise"))) {
		fprintf(f, "\nranking (%s): ", cost ? "the lowest $ per 1M output tokens at the SLO first" :
						      "the highest rate per GPU within the SLO first");
		for (size_t k = 0; k < json_array_size(ranking); k++) {
			json_t *r = resultdoc_ranked(rows, ranking, "row", k);
			char near[64];
			ranknoise_of(doc, (long long)k + 1, near, sizeof near);
			fprintf(f, "%s%zu %s%s%s%s", k ? ", " : "", k + 1, resultdoc_str(r, "hardware"),
				near[0] ? " (within noise of " : "", near, near[0] ? ")" : "");
		}
		fputc('\n', f);
	}
	ranknoise_text(f, doc);
}

static void csv(FILE *f, json_t *doc)
{
	static const char *const top[] = { "mem_bandwidth_gb_s", "decode_ceiling_tok_s" };
	static const char *const tail[] = { "max_rate", "first_failing_load", "price_usd_per_gpu_hour",
					    "usd_per_hour", "usd_per_1m_output_tokens",
					    "usd_per_1m_output_tokens_at_slo", "output_tok_s_per_usd_hour",
					    "replicas", "gpus", "usd_per_hour_at_target" };
	bool ci = resultdoc_num(json_object_get(doc, "search"), "replications") >= 2;
	fprintf(f, "row,hardware,device,tensor_parallel_size");
	for (size_t c = 0; c < 2; c++)
		fprintf(f, ",%s", top[c]);
	for (int k = 0; k < N_LOAD; k++) {
		fprintf(f, ",%s", measure_descs[load_metrics[k]].name);
		if (ci)
			fprintf(f, ",%s_ci95", measure_descs[load_metrics[k]].name);
	}
	for (size_t c = 0; c < sizeof tail / sizeof *tail; c++)
		fprintf(f, ",%s", tail[c]);
	fprintf(f, ",limit,error\n");
	json_t *it;
	size_t i;
	json_array_foreach(json_object_get(doc, "rows"), i, it) {
		json_t *at = json_object_get(it, "at_load");
		fprintf(f, "%lld,", (long long)resultdoc_num(it, "row"));
		resultdoc_csv_str(f, resultdoc_str(it, "hardware"));
		fputc(',', f);
		resultdoc_csv_str(f, resultdoc_str(it, "device"));
		fprintf(f, ",%lld", (long long)resultdoc_num(it, "tensor_parallel_size"));
		for (size_t c = 0; c < 2; c++) {
			fputc(',', f);
			resultdoc_csv_num(f, resultdoc_num(it, top[c]), 3);
		}
		for (int k = 0; k < N_LOAD; k++) {
			const struct measure_desc *d = &measure_descs[load_metrics[k]];
			fputc(',', f);
			resultdoc_csv_num(f, resultdoc_num(at, d->name), d->decimals);
			if (!ci)
				continue;
			char key[80];
			snprintf(key, sizeof key, "%s_ci95", d->name);
			fputc(',', f);
			resultdoc_csv_num(f, resultdoc_num(at, key), d->decimals);
		}
		for (size_t c = 0; c < sizeof tail / sizeof *tail; c++) {
			fputc(',', f);
			resultdoc_csv_num(f, resultdoc_num(it, tail[c]), 4);
		}
		fputc(',', f);
		resultdoc_csv_str(f, resultdoc_str(it, "limit"));
		fputc(',', f);
		resultdoc_csv_str(f, resultdoc_str(it, "error"));
		fputc('\n', f);
	}
}

static int plot(json_t *doc, const char *dir, struct plot_opts *o, struct err *e)
{
	json_t *search = json_object_get(doc, "search");
	bool slo = json_object_get(search, "slo") != NULL;
	FILE *f = plot_data_open(dir, "compare.dat", e);
	if (!f)
		return -1;
	fprintf(f, "# hardware\tdecode_ceiling_tok_s\toutput_throughput\toutput_throughput_ci95\tmax_rate_slo\t%s\n",
		slo ? "usd_per_1m_output_tokens_at_slo" : "usd_per_1m_output_tokens");
	json_t *it;
	size_t i;
	json_array_foreach(json_object_get(doc, "rows"), i, it) {
		if (resultdoc_str(it, "error"))
			continue;
		json_t *at = json_object_get(it, "at_load");
		double v[5] = { resultdoc_num(it, "decode_ceiling_tok_s"), resultdoc_num(at, "output_throughput"),
				resultdoc_num(at, "output_throughput_ci95"), resultdoc_num(it, "max_rate"),
				resultdoc_num(it, slo ? "usd_per_1m_output_tokens_at_slo" : "usd_per_1m_output_tokens") };
		fprintf(f, "%s", resultdoc_str(it, "hardware"));
		for (int k = 0; k < 5; k++)
			fprintf(f, "\t%.10g", isnan(v[k]) ? 0 : v[k]);
		fputc('\n', f);
	}
	if (plot_data_close(f, dir, "compare.dat", o, e))
		return -1;
	char vars[8192] = "", path[4200], sub[600];
	snprintf(path, sizeof path, "%s/compare.dat", dir);
	char limits[400] = "";
	const char *key;
	json_t *v;
	json_object_foreach(json_object_get(search, "slo"), key, v) {
		size_t len = strlen(limits);
		snprintf(limits + len, sizeof limits - len, "%s%s <= %g", len ? ", " : "; SLO ", key,
			 json_number_value(v));
	}
	snprintf(sub, sizeof sub, "%s, %s%s%s", resultdoc_str(doc, "model") ? resultdoc_str(doc, "model") : "",
		 pathname_base(resultdoc_str(doc, "scenario")), limits,
		 json_object_get(search, "tune") ? "; each device at its tuned vLLM settings" : "");
	if (plot_var(vars, sizeof vars, "data", path) || plot_text(vars, sizeof vars, "subtitle", sub) ||
	    plot_var(vars, sizeof vars, "slo", slo ? "1" : "0") ||
	    plot_var(vars, sizeof vars, "cost", json_is_true(json_object_get(doc, "cost")) ? "1" : "0"))
		return err_set(e, "--plot %s: the plot's variables are too long", dir);
	if (plot_gnuplot("compare", dir, "compare", vars, o, e))
		return -1;
	if (json_is_true(json_object_get(doc, "cost")) && slo)
		return plandoc_plot_cost(doc, "rows", dir, o, e);
	return 0;
}

/* Ranking (a whole document with an SLO): devices that hold some load
 * within it first; then, priced, the lowest $ per 1M output tokens at the
 * SLO limit (the tuned setting's confirmed rate: the median block's
 * search, tune.h), else the highest rate per GPU; ties keep the row
 * order. Then the pairs of devices whose order the confirmation blocks
 * do not resolve (ranknoise.h). */
struct rank_key {
	size_t pos;
	bool usable;
	double k;
};

static int by_rank(const void *a, const void *b)
{
	const struct rank_key *x = a, *y = b;
	if (x->usable != y->usable)
		return x->usable ? -1 : 1;
	if (x->usable && x->k != y->k)
		return x->k < y->k ? -1 : 1;
	return (x->pos > y->pos) - (x->pos < y->pos);
}

static void finish(json_t *doc)
{
	if (!json_object_get(json_object_get(doc, "search"), "slo"))
		return;
	json_t *items = json_object_get(doc, "rows");
	bool cost = json_is_true(json_object_get(doc, "cost"));
	size_t n = json_array_size(items);
	struct rank_key *k = xcalloc(n + 1, sizeof *k);
	for (size_t i = 0; i < n; i++) {
		json_t *it = json_array_get(items, i);
		double rate = resultdoc_num(it, "max_rate");
		double gpus = resultdoc_num(it, "tensor_parallel_size") *
			      (isnan(resultdoc_num(it, "pipeline_parallel_size")) ? 1 :
			       resultdoc_num(it, "pipeline_parallel_size"));
		k[i].pos = i;
		k[i].k = cost ? resultdoc_num(it, "usd_per_1m_output_tokens_at_slo") : -rate / gpus;
		k[i].usable = rate > 0 && !resultdoc_str(it, "error") && !isnan(k[i].k);
	}
	qsort(k, n, sizeof *k, by_rank);
	json_t *ranking = json_array();
	for (size_t i = 0; i < n; i++)
		json_array_append_new(ranking, json_integer(resultdoc_num(json_array_get(items, k[i].pos), "row")));
	json_object_set_new(doc, "ranking", ranking);
	json_object_set_new(doc, "winner", n && k[0].usable ?
						   json_integer(resultdoc_num(json_array_get(items, k[0].pos), "row")) :
						   json_null());
	free(k);
	struct ranknoise_keys rk = { .index = "row",
				     .usd_per_hour = json_object_get(doc, "target_rate") ? "usd_per_hour_at_target" :
											  "usd_per_hour",
				     .cost = cost,
				     .tolerance = resultdoc_num(json_object_get(doc, "search"), "tolerance") };
	json_t *noise = ranknoise_pairs(items, ranking, &rk);
	if (noise)
		json_object_set_new(doc, "within_noise", noise);
}

/* What merge and plot read back (docschema.h). */
static const struct docschema_field search_schema[] = {
	{ .key = "replications", .type = DS_INT, .min = 1, .max = INT32_MAX },
	{ .key = "by", .type = DS_STR, .optional = true },
	{ .key = NULL },
};

static const struct docschema_field row_schema[] = {
	{ .key = "row", .type = DS_INT, .min = 0, .max = INT32_MAX },
	{ .key = "hardware", .type = DS_STR },
	{ .key = "device", .type = DS_STR, .optional = true },
	{ .key = "tensor_parallel_size", .type = DS_INT, .min = 1, .max = INT32_MAX },
	{ .key = "at_load", .type = DS_OBJ, .optional = true },
	{ .key = "limit", .type = DS_STR, .optional = true },
	{ .key = "limit_detail", .type = DS_STR, .optional = true },
	{ .key = "error", .type = DS_STR, .optional = true },
	{ .key = NULL },
};

static const struct docschema_field compare_schema[] = {
	{ .key = "scenario", .type = DS_STR },
	{ .key = "model", .type = DS_STR, .optional = true },
	{ .key = "search", .type = DS_OBJ, .sub = search_schema },
	{ .key = "target_rate", .type = DS_NUM, .optional = true },
	{ .key = "cost", .type = DS_BOOL, .optional = true },
	{ .key = "rows_total", .type = DS_INT, .min = 0, .max = INT32_MAX },
	{ .key = "rows", .type = DS_ARR, .sub = row_schema },
	{ .key = "within_noise", .type = DS_ARR, .optional = true, .sub = ranknoise_schema },
	{ .key = NULL },
};

const struct resultdoc_kind comparedoc_kind = {
	.name = "compare",
	.items = "rows",
	.index = "row",
	.total = "rows_total",
	.finish = finish,
	.text = text,
	.csv = csv,
	.plot = plot,
	.schema = compare_schema,
};
