#include "sweepdoc.h"

#include <ctype.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "num.h"
#include "outfmt.h"
#include "pathname.h"
#include "plot.h"
#include "xalloc.h"

/* The metrics a sweep reports, in their JSON and CSV order. */
static const int doc_metrics[] = {
	MEAS_REQUEST_THROUGHPUT, MEAS_OUTPUT_THROUGHPUT, MEAS_GOODPUT,
	MEAS_TTFT_MEAN, MEAS_TTFT_P50, MEAS_TTFT_P90, MEAS_TTFT_P99,
	MEAS_TPOT_MEAN, MEAS_TPOT_P50, MEAS_TPOT_P90, MEAS_TPOT_P99,
	MEAS_ITL_MEAN, MEAS_ITL_P50, MEAS_ITL_P90, MEAS_ITL_P99,
	MEAS_E2EL_MEAN, MEAS_E2EL_P50, MEAS_E2EL_P90, MEAS_E2EL_P99,
	MEAS_PEAK_KV_USAGE, MEAS_PREEMPTIONS, MEAS_COMPLETED, MEAS_FAILED,
};
enum { N_DOC_METRICS = sizeof doc_metrics / sizeof *doc_metrics };

static json_t *axis_value(const struct sweep_axis *ax, size_t i)
{
	double d;
	if (ax->numeric && num_parse_double(ax->values[i], &d) == 0)
		return outfmt_num(d);     /* 8, not 8.0; 0.5 stays 0.5 */
	return json_string(ax->values[i]);
}

json_t *sweepdoc_build(const struct sweep *sw, const struct shard *sh, int replications,
		       const struct sweep_point *pts, size_t n)
{
	json_t *doc = resultdoc_new(&sweepdoc_kind);
	resultdoc_header(doc, sw->scenario_path, sw->overrides);
	json_t *vary = json_array();
	for (size_t a = 0; a < sw->n_axes; a++) {
		json_t *vals = json_array();
		for (size_t i = 0; i < sw->axes[a].n; i++)
			json_array_append_new(vals, axis_value(&sw->axes[a], i));
		json_array_append_new(vary, json_pack("{s:s,s:o}", "key", sw->axes[a].key, "values", vals));
	}
	json_object_set_new(doc, "vary", vary);
	json_object_set_new(doc, "replications", json_integer(replications));
	resultdoc_put(doc, "confidence", 0.95, 2);
	json_t *items = json_array();
	for (size_t p = 0; p < n; p++) {
		json_t *it = json_object();
		json_object_set_new(it, "point", json_integer((json_int_t)pts[p].index));
		json_t *vals = json_object();
		for (size_t a = 0; a < sw->n_axes; a++)
			json_object_set_new(vals, sw->axes[a].key,
					    axis_value(&sw->axes[a], sweep_coord(sw, pts[p].index, a)));
		json_object_set_new(it, "values", vals);
		if (pts[p].error) {
			json_object_set_new(it, "error", json_string(pts[p].error));
		} else {
			for (size_t k = 0; k < N_DOC_METRICS; k++) {
				int id = doc_metrics[k];
				const struct measure_desc *d = &measure_descs[id];
				resultdoc_put(it, d->name, pts[p].s.mean[id], d->decimals);
				if (replications < 2)
					continue;
				char key[80];
				snprintf(key, sizeof key, "%s_ci95", d->name);
				resultdoc_put(it, key, measure_half_width(&pts[p].s, id, 0.95), d->decimals);
			}
		}
		json_array_append_new(items, it);
	}
	resultdoc_close(doc, &sweepdoc_kind, sw->n_points, sh, items);
	return doc;
}

/* ---- rendering (from the document alone) ---- */

/* An axis value as text: the number with up to 10 significant digits, or
 * the string. */
static void value_text(const json_t *v, char *out, size_t cap)
{
	if (json_is_number(v))
		snprintf(out, cap, "%.10g", json_number_value(v));
	else
		snprintf(out, cap, "%s", json_is_string(v) ? json_string_value(v) : "?");
}

/* The short name of a section.key, for column titles. */
static const char *key_tail(const char *key)
{
	const char *dot = strrchr(key, '.');
	return dot ? dot + 1 : key;
}

static const struct column {
	int id;
	const char *title;
	int width, decimals;
	double scale;
} text_cols[] = {
	{ MEAS_REQUEST_THROUGHPUT, "req/s", 8, 2, 1 },
	{ MEAS_OUTPUT_THROUGHPUT, "tok/s", 9, 1, 1 },
	{ MEAS_GOODPUT, "goodput", 8, 2, 1 },
	{ MEAS_TTFT_P50, "TTFT p50", 9, 1, 1 },
	{ MEAS_TTFT_P90, "p90", 9, 1, 1 },
	{ MEAS_TTFT_P99, "p99", 9, 1, 1 },
	{ MEAS_ITL_P50, "ITL p50", 8, 2, 1 },
	{ MEAS_ITL_P90, "p90", 8, 2, 1 },
	{ MEAS_ITL_P99, "p99", 8, 2, 1 },
	{ MEAS_E2EL_P50, "E2EL p50", 9, 1, 1 },
	{ MEAS_E2EL_P90, "p90", 9, 1, 1 },
	{ MEAS_E2EL_P99, "p99", 9, 1, 1 },
	{ MEAS_PEAK_KV_USAGE, "KV peak%", 8, 1, 100 },
	{ MEAS_PREEMPTIONS, "preempt", 7, 1, 1 },
};
enum { N_TEXT_COLS = sizeof text_cols / sizeof *text_cols };

static void text(FILE *f, json_t *doc)
{
	json_t *vary = json_object_get(doc, "vary"), *ax;
	json_t *points = json_object_get(doc, "points"), *pt;
	int reps = (int)resultdoc_num(doc, "replications");
	size_t a, p;
	const char *shard = resultdoc_str(doc, "shard");
	long long total = (long long)resultdoc_num(doc, "points_total");
	fprintf(f, "servesim sweep: %s; %lld point%s × %d replication%s", resultdoc_str(doc, "scenario"),
		total, total == 1 ? "" : "s", reps, reps == 1 ? "" : "s");
	if (shard)
		fprintf(f, "; shard %s (%zu of them)", shard, json_array_size(points));
	fprintf(f, "\nlatencies in ms (TTFT, ITL, E2EL percentiles over requests, tokens, requests)%s\n\n",
		reps > 1 ? "; each row's ± line: 95% confidence half-widths of the mean over replications (Student t)" : "");
	int aw[16];
	size_t na = json_array_size(vary) < 16 ? json_array_size(vary) : 16;
	json_array_foreach(vary, a, ax) {
		if (a >= na)
			break;
		aw[a] = (int)strlen(key_tail(resultdoc_str(ax, "key")));
		json_t *v;
		size_t i;
		json_array_foreach(json_object_get(ax, "values"), i, v) {
			char s[128];
			value_text(v, s, sizeof s);
			if ((int)strlen(s) > aw[a])
				aw[a] = (int)strlen(s);
		}
		fprintf(f, "%s%-*s", a ? " " : "", aw[a], key_tail(resultdoc_str(ax, "key")));
	}
	for (int c = 0; c < N_TEXT_COLS; c++)
		fprintf(f, " %*s", text_cols[c].width, text_cols[c].title);
	fputc('\n', f);
	json_array_foreach(points, p, pt) {
		json_t *vals = json_object_get(pt, "values");
		json_array_foreach(vary, a, ax) {
			if (a >= na)
				break;
			char s[128];
			value_text(json_object_get(vals, resultdoc_str(ax, "key")), s, sizeof s);
			fprintf(f, "%s%-*s", a ? " " : "", aw[a], s);
		}
		const char *err = resultdoc_str(pt, "error");
		if (err) {
			fprintf(f, "  error: %s\n", err);
			continue;
		}
		for (int c = 0; c < N_TEXT_COLS; c++)
			resultdoc_cell(f, resultdoc_num(pt, measure_descs[text_cols[c].id].name) *
					   text_cols[c].scale, text_cols[c].decimals, text_cols[c].width);
		fputc('\n', f);
		if (reps < 2)
			continue;
		int w = -1;
		for (size_t b = 0; b < na; b++)
			w += aw[b] + 1;
		fprintf(f, "%*s", w > 0 ? w : 0, "");
		for (int c = 0; c < N_TEXT_COLS; c++) {
			char key[80], cell[48];
			snprintf(key, sizeof key, "%s_ci95", measure_descs[text_cols[c].id].name);
			double h = resultdoc_num(pt, key) * text_cols[c].scale;
			if (isnan(h))
				snprintf(cell, sizeof cell, "-");
			else
				snprintf(cell, sizeof cell, "±%.*f", text_cols[c].decimals, h);
			/* "±" is two bytes and one column. */
			fprintf(f, " %*s", text_cols[c].width + 1, cell);
		}
		fputc('\n', f);
	}
}

static void csv(FILE *f, json_t *doc)
{
	json_t *vary = json_object_get(doc, "vary"), *ax;
	json_t *points = json_object_get(doc, "points"), *pt;
	bool ci = resultdoc_num(doc, "replications") >= 2;
	size_t a, p;
	fprintf(f, "point");
	json_array_foreach(vary, a, ax) {
		fputc(',', f);
		resultdoc_csv_str(f, resultdoc_str(ax, "key"));
	}
	for (size_t k = 0; k < N_DOC_METRICS; k++) {
		fprintf(f, ",%s", measure_descs[doc_metrics[k]].name);
		if (ci)
			fprintf(f, ",%s_ci95", measure_descs[doc_metrics[k]].name);
	}
	fprintf(f, ",error\n");
	json_array_foreach(points, p, pt) {
		fprintf(f, "%lld", (long long)resultdoc_num(pt, "point"));
		json_t *vals = json_object_get(pt, "values");
		json_array_foreach(vary, a, ax) {
			char s[128];
			value_text(json_object_get(vals, resultdoc_str(ax, "key")), s, sizeof s);
			fputc(',', f);
			resultdoc_csv_str(f, s);
		}
		for (size_t k = 0; k < N_DOC_METRICS; k++) {
			const struct measure_desc *d = &measure_descs[doc_metrics[k]];
			fputc(',', f);
			resultdoc_csv_num(f, resultdoc_num(pt, d->name), d->decimals);
			if (!ci)
				continue;
			char key[80];
			snprintf(key, sizeof key, "%s_ci95", d->name);
			fputc(',', f);
			resultdoc_csv_num(f, resultdoc_num(pt, key), d->decimals);
		}
		fputc(',', f);
		resultdoc_csv_str(f, resultdoc_str(pt, "error"));
		fputc('\n', f);
	}
}

/* ---- plots ---- */

/* The columns of sweep.dat after x and the label: mean and CI of each. */
static const int plot_metrics[] = {
	MEAS_TTFT_P50, MEAS_TTFT_P90, MEAS_TTFT_P99, MEAS_ITL_P50, MEAS_ITL_P90, MEAS_ITL_P99,
	MEAS_E2EL_P50, MEAS_E2EL_P90, MEAS_E2EL_P99, MEAS_OUTPUT_THROUGHPUT, MEAS_REQUEST_THROUGHPUT,
	MEAS_GOODPUT,
};
enum { N_PLOT_METRICS = sizeof plot_metrics / sizeof *plot_metrics };

static const char *axis_label(const char *key)
{
	static const struct {
		const char *key, *label;
	} labels[] = {
		{ "workload.request_rate", "Request rate (req/s)" },
		{ "workload.max_concurrency", "Max concurrency (requests)" },
		{ "workload.num_prompts", "Requests per run" },
		{ "workload.random_input_len", "Input length (tokens)" },
		{ "workload.random_output_len", "Output length (tokens)" },
		{ "engine.tensor_parallel_size", "Tensor parallel size (GPUs)" },
		{ "engine.max_num_batched_tokens", "max_num_batched_tokens (tokens)" },
		{ "engine.max_num_seqs", "max_num_seqs (sequences)" },
	};
	for (size_t i = 0; i < sizeof labels / sizeof *labels; i++)
		if (!strcmp(labels[i].key, key))
			return labels[i].label;
	return key;
}

/* A label without blanks or quotes (gnuplot's word() splits on blanks). */
static void label_clean(char *s)
{
	for (; *s; s++)
		if (isspace((unsigned char)*s) || *s == '\'' || *s == '"')
			*s = '_';
}

/* Point pt's series (the values of every axis but xa, "k=v,…") and its
 * x label (the value on xa; every value when there is no x axis). */
static void point_names(json_t *vary, size_t xa, json_t *pt, char *series, size_t scap, char *lab,
			size_t lcap)
{
	json_t *vals = json_object_get(pt, "values"), *ax;
	size_t a;
	series[0] = lab[0] = '\0';
	json_array_foreach(vary, a, ax) {
		const char *key = resultdoc_str(ax, "key");
		char v[128];
		value_text(json_object_get(vals, key), v, sizeof v);
		bool on_x = a == xa || xa == json_array_size(vary);
		char *out = on_x ? lab : series;
		size_t cap = on_x ? lcap : scap, len = strlen(out);
		if (on_x)
			snprintf(out + len, cap - len, "%s%s", len ? "," : "", v);
		else
			snprintf(out + len, cap - len, "%s%s=%s", len ? "," : "", key_tail(key), v);
	}
	if (!series[0])
		snprintf(series, scap, "sweep");
	label_clean(series);
	label_clean(lab);
}

static int plot(json_t *doc, const char *dir, struct plot_opts *o, struct err *e)
{
	json_t *vary = json_object_get(doc, "vary"), *points = json_object_get(doc, "points");
	size_t na = json_array_size(vary), np = json_array_size(points);
	/* x: the first numeric axis (request_rate first when varied); the
	 * other axes make the series. No numeric axis: points side by side. */
	size_t xa = na;
	for (size_t a = 0; a < na; a++) {
		json_t *v0 = json_array_get(json_object_get(json_array_get(vary, a), "values"), 0);
		const char *key = resultdoc_str(json_array_get(vary, a), "key");
		if (json_is_number(v0) && (xa == na || !strcmp(key, "workload.request_rate")))
			xa = a;
	}
	const char *xkey = xa < na ? resultdoc_str(json_array_get(vary, xa), "key") : NULL;
	/* Each point's series, and the series in order of first appearance. */
	char (*names)[256] = xcalloc(np + 1, sizeof *names);
	char (*labs)[256] = xcalloc(np + 1, sizeof *labs);
	size_t *order = xcalloc(np + 1, sizeof *order), ns = 0;
	char series[4096] = "";
	for (size_t p = 0; p < np; p++) {
		point_names(vary, xa, json_array_get(points, p), names[p], sizeof names[p], labs[p],
			    sizeof labs[p]);
		size_t q = 0;
		while (q < ns && strcmp(names[order[q]], names[p]))
			q++;
		if (q == ns) {
			order[ns++] = p;
			size_t len = strlen(series);
			snprintf(series + len, sizeof series - len, "%s%s", len ? " " : "", names[p]);
		}
	}
	FILE *f = plot_data_open(dir, "sweep.dat", e);
	if (!f)
		goto fail;
	fprintf(f, "# servesim sweep: %s\n# x\tlabel", resultdoc_str(doc, "scenario"));
	for (size_t k = 0; k < N_PLOT_METRICS; k++)
		fprintf(f, "\t%s\t%s_ci95", measure_descs[plot_metrics[k]].name,
			measure_descs[plot_metrics[k]].name);
	fputc('\n', f);
	/* One block per series (gnuplot's `index`), points in grid order,
	 * which is x order within a series. */
	for (size_t q = 0; q < ns; q++) {
		fprintf(f, "%s# series %s\n", q ? "\n\n" : "", names[order[q]]);
		for (size_t p = 0; p < np; p++) {
			json_t *pt = json_array_get(points, p);
			if (strcmp(names[p], names[order[q]]) || resultdoc_str(pt, "error"))
				continue;
			double x = xkey ? json_number_value(json_object_get(json_object_get(pt, "values"), xkey)) :
					  resultdoc_num(pt, "point");
			fprintf(f, "%.10g\t%s", x, labs[p][0] ? labs[p] : "-");
			for (size_t k = 0; k < N_PLOT_METRICS; k++) {
				char key[80];
				const char *nm = measure_descs[plot_metrics[k]].name;
				snprintf(key, sizeof key, "%s_ci95", nm);
				double m = resultdoc_num(pt, nm), h = resultdoc_num(pt, key);
				/* NaN (no [slo]: no goodput) is a gap for gnuplot. */
				fprintf(f, "\t%.10g\t%.10g", m, isnan(h) ? 0 : h);
			}
			fputc('\n', f);
		}
	}
	free(names);
	free(labs);
	free(order);
	names = labs = NULL;
	order = NULL;
	if (plot_data_close(f, dir, "sweep.dat", o, e))
		return -1;
	char vars[8192] = "", title[600], path[4200];
	int reps = (int)resultdoc_num(doc, "replications");
	bool goodput = false;
	for (size_t p = 0; p < np; p++)
		goodput |= !isnan(resultdoc_num(json_array_get(points, p), "request_goodput"));
	snprintf(title, sizeof title, "%s%s", pathname_base(resultdoc_str(doc, "scenario")),
		 reps > 1 ? " (error bars: 95% CI over replications)" : "");
	snprintf(path, sizeof path, "%s/sweep.dat", dir);
	if (plot_var(vars, sizeof vars, "data", path) || plot_text(vars, sizeof vars, "series", series) ||
	    plot_text(vars, sizeof vars, "xlabel", xkey ? axis_label(xkey) : "Sweep point") ||
	    plot_text(vars, sizeof vars, "subtitle", title) ||
	    plot_var(vars, sizeof vars, "categorical", xkey ? "0" : "1") ||
	    plot_var(vars, sizeof vars, "errorbars", reps > 1 ? "1" : "0") ||
	    plot_var(vars, sizeof vars, "goodput", goodput ? "1" : "0") ||
	    plot_var(vars, sizeof vars, "offered",
		     xkey && !strcmp(xkey, "workload.request_rate") ? "1" : "0"))
		return err_set(e, "--plot %s: the plot's variables are too long", dir);
	if (plot_gnuplot("latency_vs_rate", dir, "latency_vs_rate", vars, o, e) ||
	    plot_gnuplot("throughput_vs_rate", dir, "throughput_vs_rate", vars, o, e))
		return -1;
	return 0;
fail:
	free(names);
	free(labs);
	free(order);
	return -1;
}

/* What merge and plot read back (docschema.h). */
static const struct docschema_field axis_schema[] = {
	{ .key = "key", .type = DS_STR },
	{ .key = "values", .type = DS_ARR },
	{ .key = NULL },
};

static const struct docschema_field point_schema[] = {
	{ .key = "point", .type = DS_INT, .min = 0, .max = INT32_MAX },
	{ .key = "values", .type = DS_OBJ },
	{ .key = "error", .type = DS_STR, .optional = true },
	{ .key = NULL },
};

static const struct docschema_field sweep_schema[] = {
	{ .key = "scenario", .type = DS_STR },
	{ .key = "vary", .type = DS_ARR, .sub = axis_schema },
	{ .key = "replications", .type = DS_INT, .min = 1, .max = INT32_MAX },
	{ .key = "points_total", .type = DS_INT, .min = 0, .max = INT32_MAX },
	{ .key = "points", .type = DS_ARR, .sub = point_schema },
	{ .key = NULL },
};

const struct resultdoc_kind sweepdoc_kind = {
	.name = "sweep",
	.items = "points",
	.index = "point",
	.total = "points_total",
	.finish = NULL,
	.text = text,
	.csv = csv,
	.plot = plot,
	.schema = sweep_schema,
};
