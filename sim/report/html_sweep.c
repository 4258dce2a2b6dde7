/*
 * html_sweep: the report's section for a sweep: latency and throughput
 * against the first varied key (one series per value of the others), each
 * point with its 95% CI over the replications, and a table of points.
 */
#include "html_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "pathname.h"
#include "resultdoc.h"
#include "xalloc.h"

#define num resultdoc_num
#define str resultdoc_str

/* A point's value of one varied key, as text. */
static void value_text(char *out, size_t cap, json_t *v)
{
	if (json_is_string(v))
		snprintf(out, cap, "%s", json_string_value(v));
	else if (json_is_number(v))
		snprintf(out, cap, "%g", json_number_value(v));
	else
		snprintf(out, cap, "–");
}

static const char *sweep_x_key(json_t *doc)
{
	return str(json_array_get(json_object_get(doc, "vary"), 0), "key");
}

/* The series of a sweep: points sharing the values of every varied key but
 * the first. Returns the number of series; group[i] is point i's. */
static size_t sweep_groups(json_t *points, const char *xkey, size_t *group, char labels[][128],
			   size_t max)
{
	size_t n = 0, i;
	json_t *p;
	json_array_foreach(points, i, p)
	{
		char label[128] = "";
		size_t len = 0;
		const char *k;
		json_t *v;
		json_object_foreach(json_object_get(p, "values"), k, v)
		{
			if (!strcmp(k, xkey) || len >= sizeof label)
				continue;
			char t[64];
			value_text(t, sizeof t, v);
			const char *dot = strrchr(k, '.');
			len += (size_t)snprintf(label + len, sizeof label - len, "%s%s=%s",
						len ? " " : "", dot ? dot + 1 : k, t);
		}
		size_t g = 0;
		while (g < n && strcmp(labels[g], label))
			g++;
		if (g == n && n < max)
			snprintf(labels[n++], 128, "%s", label);
		group[i] = g < max ? g : max - 1;
	}
	return n ? n : 1;
}

/* A plot of metrics (with their _ci95) against the first varied key. */
static void sweep_plot(FILE *f, json_t *doc, const char *title, const char *ylabel,
		       const char *const *metrics, const char *const *metric_names,
		       size_t n_metrics, bool ylog)
{
	json_t *points = json_object_get(doc, "points");
	size_t np = json_array_size(points);
	const char *xkey = sweep_x_key(doc);
	if (!np || !xkey)
		return;
	size_t *group = xcalloc(np, sizeof *group);
	char labels[8][128];
	size_t ng = sweep_groups(points, xkey, group, labels, 8);
	/* Categorical x when any value of the key is not a number. */
	bool cat = false;
	const char *cats[64];
	size_t n_cats = 0;
	for (size_t i = 0; i < np; i++) {
		json_t *v =
			json_object_get(json_object_get(json_array_get(points, i), "values"), xkey);
		if (!json_is_number(v))
			cat = true;
	}
	size_t ns = ng * n_metrics;
	struct svg_series *series = xcalloc(ns, sizeof *series);
	double *buf = xcalloc(ns * np * 3, sizeof *buf);
	char(*names)[192] = xcalloc(ns, sizeof *names);
	for (size_t g = 0; g < ng; g++)
		for (size_t m = 0; m < n_metrics; m++) {
			size_t s = g * n_metrics + m;
			double *x = buf + s * np * 3, *y = x + np, *err = y + np;
			size_t n = 0;
			for (size_t i = 0; i < np; i++) {
				if (group[i] != g)
					continue;
				json_t *p = json_array_get(points, i);
				json_t *v = json_object_get(json_object_get(p, "values"), xkey);
				if (cat) {
					const char *t = json_string_value(v);
					size_t c = 0;
					while (c < n_cats && t && strcmp(cats[c], t))
						c++;
					if (c == n_cats && n_cats < 64 && t)
						cats[n_cats++] = t;
					x[n] = (double)c;
				} else {
					x[n] = json_number_value(v);
				}
				char ci[96];
				snprintf(ci, sizeof ci, "%s_ci95", metrics[m]);
				y[n] = num(p, metrics[m]);
				err[n] = num(p, ci);
				n++;
			}
			snprintf(names[s], sizeof names[s], "%s%s%.120s", metric_names[m],
				 labels[g][0] ? ", " : "", labels[g]);
			series[s] = (struct svg_series){
				names[s], html_colors[s % HTML_N_COLORS], x, y, err, n, SVG_POINTS
			};
		}
	char xl[128];
	snprintf(xl, sizeof xl, "%s%s", xkey,
		 num(doc, "replications") >= 2 ? " (bars: 95% CI over replications)" : "");
	struct svg_plot pl = { .title = title,
			       .xlabel = xl,
			       .ylabel = ylabel,
			       .ylog = ylog,
			       .y_from_zero = !ylog,
			       .xcats = cat ? cats : NULL,
			       .n_xcats = n_cats,
			       .series = series,
			       .n_series = ns };
	svg_plot(f, &pl);
	free(names);
	free(buf);
	free(series);
	free(group);
}

void html_sweep_title(char *out, size_t cap, json_t *doc)
{
	size_t n = (size_t)snprintf(out, cap, "Sweep of %s over ",
				    pathname_base(str(doc, "scenario")));
	size_t i;
	json_t *v;
	json_array_foreach(json_object_get(doc, "vary"), i, v)
	{
		if (n < cap)
			n += (size_t)snprintf(out + n, cap - n, "%s%s", i ? " × " : "",
					      str(v, "key"));
	}
}

int html_sweep_section(FILE *f, json_t *doc, struct err *e)
{
	(void)e;
	char varied[256] = "", question[600];
	size_t kn = 0, ki;
	json_t *kv;
	json_array_foreach(json_object_get(doc, "vary"), ki, kv)
	{
		if (kn < sizeof varied)
			kn += (size_t)snprintf(varied + kn, sizeof varied - kn, "%s%s",
					       ki ? " and " : "", str(kv, "key"));
	}
	snprintf(question, sizeof question, "How do latency and throughput change with %s (%s)?",
		 varied, pathname_base(str(doc, "scenario")));
	html_question(f, question);
	json_t *points = json_object_get(doc, "points");
	const char *xkey = sweep_x_key(doc);
	/* The answer: the point of highest output throughput (or goodput). */
	size_t best = 0, i;
	bool goodput = false;
	json_t *p;
	json_array_foreach(points, i, p) goodput |= isfinite(num(p, "request_goodput"));
	const char *by = goodput ? "request_goodput" : "output_throughput";
	json_array_foreach(points, i, p) if (num(p, by) > num(json_array_get(points, best), by))
		best = i;
	json_t *bp = json_array_get(points, best);
	char head[512], vals[256] = "";
	size_t n = 0;
	const char *k;
	json_t *v;
	json_object_foreach(json_object_get(bp, "values"), k, v)
	{
		char t[64];
		value_text(t, sizeof t, v);
		if (n < sizeof vals)
			n += (size_t)snprintf(vals + n, sizeof vals - n, "%s%s = %s", n ? ", " : "",
					      k, t);
	}
	if (goodput)
		snprintf(head, sizeof head,
			 "Highest goodput: %.2f req/s within the scenario's SLO, at %s",
			 num(bp, by), vals);
	else
		snprintf(head, sizeof head, "Highest output throughput: %.0f tokens/s, at %s",
			 num(bp, by), vals);
	html_answer_begin(f, head);
	fputs("<p>", f);
	html_text(f,
		  "There: TTFT p99 %.1f ms, ITL p99 %.2f ms, E2E p99 %.0f ms, peak KV usage "
		  "%.0f%%, %g preemptions "
		  "(%g replication%s per point).",
		  num(bp, "ttft_p99_ms"), num(bp, "itl_p99_ms"), num(bp, "e2el_p99_ms"),
		  100 * num(bp, "peak_kv_usage"), num(bp, "preemptions"), num(doc, "replications"),
		  num(doc, "replications") == 1 ? "" : "s");
	fputs("</p>\n", f);
	html_answer_end(f);

	fputs("<div class=\"plots\">\n", f);
	static const char *const ttft[] = { "ttft_p50_ms", "ttft_p99_ms" }, *const ttft_n[] = {
		"TTFT p50", "TTFT p99"
	};
	static const char *const itl[] = { "itl_p50_ms", "itl_p99_ms" }, *const itl_n[] = {
		"ITL p50", "ITL p99"
	};
	static const char *const e2e[] = { "e2el_p50_ms", "e2el_p99_ms" }, *const e2e_n[] = {
		"E2E p50", "E2E p99"
	};
	static const char *const thr[] = { "output_throughput" }, *const thr_n[] = {
		"output tokens/s"
	};
	static const char *const rps[] = { "request_throughput", "request_goodput" },
				 *const rps_n[] = { "requests/s", "goodput (req/s within SLO)" };
	sweep_plot(f, doc, "Time to first token against load", "TTFT (ms, log axis)", ttft, ttft_n,
		   2, true);
	sweep_plot(f, doc, "Inter-token latency against load", "ITL (ms, log axis)", itl, itl_n, 2,
		   true);
	sweep_plot(f, doc, "End-to-end latency against load", "E2E latency (ms, log axis)", e2e,
		   e2e_n, 2, true);
	sweep_plot(f, doc, "Output throughput", "output tokens/s", thr, thr_n, 1, false);
	sweep_plot(f, doc, "Requests served", "requests/s", rps, rps_n, goodput ? 2 : 1, false);
	fputs("</div>\n", f);

	static const char *const heads[] = { "point",	  "req/s",   "out tok/s", "TTFT p50",
					     "TTFT p99",  "ITL p50", "ITL p99",	  "E2E p99",
					     "peak KV %", "preempt." };
	html_table(f, "Points (latencies in ms; ± is the 95% CI)", heads, 10);
	json_array_foreach(points, i, p)
	{
		char c[10][64], t[64];
		size_t len = 0;
		c[0][0] = '\0';
		json_object_foreach(json_object_get(p, "values"), k, v)
		{
			value_text(t, sizeof t, v);
			const char *dot = strrchr(k, '.');
			len += (size_t)snprintf(c[0] + len, sizeof c[0] - len, "%s%s=%s",
						len ? " " : "", dot ? dot + 1 : k, t);
			if (len >= sizeof c[0])
				break;
		}
		static const char *const keys[] = { "request_throughput", "output_throughput",
						    "ttft_p50_ms",	  "ttft_p99_ms",
						    "itl_p50_ms",	  "itl_p99_ms",
						    "e2el_p99_ms" };
		static const int dec[] = { 2, 0, 1, 1, 2, 2, 0 };
		for (size_t m = 0; m < 7; m++) {
			char ci[96];
			snprintf(ci, sizeof ci, "%s_ci95", keys[m]);
			double w = num(p, ci);
			char a[32], b[32];
			if (isfinite(w) && w > 0)
				snprintf(c[m + 1], sizeof c[m + 1], "\t%s ± %s",
					 html_num(a, sizeof a, num(p, keys[m]), dec[m]),
					 html_num(b, sizeof b, w, dec[m]));
			else
				html_cell_num(c[m + 1], sizeof c[m + 1], num(p, keys[m]), dec[m]);
		}
		html_cell_num(c[8], sizeof c[8], 100 * num(p, "peak_kv_usage"), 1);
		html_cell_num(c[9], sizeof c[9], num(p, "preemptions"), 1);
		const char *cells[10];
		for (size_t m = 0; m < 10; m++)
			cells[m] = c[m];
		html_row(f, cells, 10);
	}
	html_table_end(f);
	(void)xkey;
	html_doc_configuration(f, doc);
	fputs("<pre>", f);
	char *vary =
		json_dumps(json_object_get(doc, "vary"), JSON_COMPACT | JSON_REAL_PRECISION(10));
	html_text(f, "vary: %s", vary ? vary : "[]");
	free(vary);
	fputs("</pre>\n", f);
	html_doc_basis(f, doc, points);
	return 0;
}
