/*
 * html_doc: the report's sections for result documents: a sweep (latency
 * and throughput against the varied key, with 95% CIs), a plan (the
 * configuration that meets the SLO at the lowest cost, and each
 * candidate's search), a compare (the devices side by side), and the JSON
 * of `servesim run --format json` (its tables; plots need the scenario).
 *
 * Kinds are rows of `kinds` below, chosen by the document's "kind": a new
 * kind (advise) is a title function, a section function and one row.
 */
#include "html_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "resultdoc.h"
#include "run.h"
#include "scenario.h"
#include "xalloc.h"

#define num resultdoc_num
#define str resultdoc_str

/* The SLO limits of a plan or compare search, "ttft_p99_ms ≤ 2000, …". */
static void slo_words(char *out, size_t cap, json_t *doc)
{
	json_t *slo = json_object_get(json_object_get(doc, "search"), "slo");
	size_t n = 0;
	out[0] = '\0';
	const char *k;
	json_t *v;
	json_object_foreach(slo, k, v)
	{
		if (n < cap)
			n += (size_t)snprintf(out + n, cap - n, "%s%s ≤ %g", n ? ", " : "", k, json_number_value(v));
	}
	if (!out[0])
		snprintf(out, cap, "no SLO");
}

/* The hardware the document's scenario runs on (when its file is here):
 * the scenario loaded with the document's --set overrides. */
static bool scenario_hardware(json_t *doc, char *out, size_t cap)
{
	const char *path = str(doc, "scenario");
	struct inidoc ov = { 0 };
	struct err e;
	json_t *set = json_object_get(doc, "set"), *v;
	size_t i;
	json_array_foreach(set, i, v)
	{
		if (json_is_string(v) && inidoc_add_override(&ov, json_string_value(v), &e)) {
			inidoc_free(&ov);
			return false;
		}
	}
	struct scenario sc;
	bool builtin = !path || !strcmp(path, "built-in default");
	int rc = scenario_load(&sc, builtin ? NULL : path, &ov, &e);
	inidoc_free(&ov);
	if (rc)
		return false;
	snprintf(out, cap, "%s", sc.hardware);
	return true;
}

/* The header every document opens with: scenario, --set, the search. */
static void doc_configuration(FILE *f, json_t *doc)
{
	fputs("<h3>Configuration</h3>\n<p>", f);
	const char *sc = str(doc, "scenario");
	html_text(f, "Scenario: %s.", sc ? plot_basename(sc) : "not recorded");
	fputs("</p>\n", f);
	json_t *set = json_object_get(doc, "set");
	if (json_array_size(set)) {
		fputs("<p>Overrides (--set):</p>\n<pre>", f);
		size_t i;
		json_t *v;
		json_array_foreach(set, i, v)
		{
			svg_escape(f, json_string_value(v));
			fputc('\n', f);
		}
		fputs("</pre>\n", f);
	}
	json_t *search = json_object_get(doc, "search");
	if (search) {
		fputs("<p>Search:</p>\n<pre>", f);
		char *s = json_dumps(search, JSON_INDENT(1) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10));
		svg_escape(f, s);
		free(s);
		fputs("</pre>\n", f);
	}
}

/* What the numbers rest on, for each distinct device of the items. */
static void doc_basis(FILE *f, json_t *doc, json_t *items)
{
	fputs("<h3>What the numbers rest on</h3>\n", f);
	char seen[16][INI_VALUE_MAX];
	size_t n_seen = 0, i;
	json_t *it;
	json_array_foreach(items, i, it)
	{
		const char *hw = str(it, "hardware");
		json_t *values = json_object_get(it, "values");
		if (!hw && values)
			hw = str(values, "run.hardware");
		if (!hw)
			continue;
		bool dup = false;
		for (size_t k = 0; k < n_seen; k++)
			dup |= !strcmp(seen[k], hw);
		if (!dup && n_seen < 16)
			snprintf(seen[n_seen++], sizeof seen[0], "%s", hw);
	}
	if (n_seen == 0 && scenario_hardware(doc, seen[0], sizeof seen[0]))
		n_seen = 1;
	for (size_t k = 0; k < n_seen; k++)
		html_basis_hardware(f, seen[k]);
	if (n_seen == 0)
		fputs("<p class=\"note\">The document does not say which device it ran on.</p>\n", f);
}

static void cell_num(char *buf, size_t cap, double v, int dec)
{
	buf[0] = '\t';
	html_num(buf + 1, cap - 1, v, dec);
}

/* ---- sweep ---- */

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
static size_t sweep_groups(json_t *points, const char *xkey, size_t *group, char labels[][128], size_t max)
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
			len += (size_t)snprintf(label + len, sizeof label - len, "%s%s=%s", len ? " " : "", dot ? dot + 1 : k, t);
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
static void sweep_plot(FILE *f, json_t *doc, const char *title, const char *ylabel, const char *const *metrics,
		       const char *const *metric_names, size_t n_metrics, bool ylog)
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
		json_t *v = json_object_get(json_object_get(json_array_get(points, i), "values"), xkey);
		if (!json_is_number(v))
			cat = true;
	}
	size_t ns = ng * n_metrics;
	struct svg_series *series = xcalloc(ns, sizeof *series);
	double *buf = xcalloc(ns * np * 3, sizeof *buf);
	char (*names)[192] = xcalloc(ns, sizeof *names);
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
			snprintf(names[s], sizeof names[s], "%s%s%.120s", metric_names[m], labels[g][0] ? ", " : "", labels[g]);
			series[s] = (struct svg_series){ names[s], html_colors[s % HTML_N_COLORS], x, y, err, n, SVG_POINTS };
		}
	char xl[128];
	snprintf(xl, sizeof xl, "%s%s", xkey, num(doc, "replications") >= 2 ? " (bars: 95% CI over replications)" : "");
	struct svg_plot pl = { .title = title, .xlabel = xl, .ylabel = ylabel, .ylog = ylog, .y_from_zero = !ylog,
			       .xcats = cat ? cats : NULL, .n_xcats = n_cats, .series = series, .n_series = ns };
	svg_plot(f, &pl);
	free(names);
	free(buf);
	free(series);
	free(group);
}

static void sweep_title(char *out, size_t cap, json_t *doc)
{
	size_t n = (size_t)snprintf(out, cap, "Sweep of %s over ", plot_basename(str(doc, "scenario")));
	size_t i;
	json_t *v;
	json_array_foreach(json_object_get(doc, "vary"), i, v)
	{
		if (n < cap)
			n += (size_t)snprintf(out + n, cap - n, "%s%s", i ? " × " : "", str(v, "key"));
	}
}

static int sweep_section(FILE *f, json_t *doc, struct err *e)
{
	(void)e;
	char varied[256] = "", question[600];
	size_t kn = 0, ki;
	json_t *kv;
	json_array_foreach(json_object_get(doc, "vary"), ki, kv)
	{
		if (kn < sizeof varied)
			kn += (size_t)snprintf(varied + kn, sizeof varied - kn, "%s%s", ki ? " and " : "", str(kv, "key"));
	}
	snprintf(question, sizeof question, "How do latency and throughput change with %s (%s)?", varied,
		 plot_basename(str(doc, "scenario")));
	html_question(f, question);
	json_t *points = json_object_get(doc, "points");
	const char *xkey = sweep_x_key(doc);
	/* The answer: the point of highest output throughput (or goodput). */
	size_t best = 0, i;
	bool goodput = false;
	json_t *p;
	json_array_foreach(points, i, p)
		goodput |= isfinite(num(p, "request_goodput"));
	const char *by = goodput ? "request_goodput" : "output_throughput";
	json_array_foreach(points, i, p)
		if (num(p, by) > num(json_array_get(points, best), by))
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
			n += (size_t)snprintf(vals + n, sizeof vals - n, "%s%s = %s", n ? ", " : "", k, t);
	}
	if (goodput)
		snprintf(head, sizeof head, "Highest goodput: %.2f req/s within the scenario's SLO, at %s", num(bp, by), vals);
	else
		snprintf(head, sizeof head, "Highest output throughput: %.0f tokens/s, at %s", num(bp, by), vals);
	html_answer_begin(f, head);
	fputs("<p>", f);
	html_text(f, "There: TTFT p99 %.1f ms, ITL p99 %.2f ms, E2E p99 %.0f ms, peak KV usage %.0f%%, %g preemptions "
		     "(%g replications per point).",
		  num(bp, "ttft_p99_ms"), num(bp, "itl_p99_ms"), num(bp, "e2el_p99_ms"), 100 * num(bp, "peak_kv_usage"),
		  num(bp, "preemptions"), num(doc, "replications"));
	fputs("</p>\n", f);
	html_answer_end(f);

	fputs("<div class=\"plots\">\n", f);
	static const char *const ttft[] = { "ttft_p50_ms", "ttft_p99_ms" }, *const ttft_n[] = { "TTFT p50", "TTFT p99" };
	static const char *const itl[] = { "itl_p50_ms", "itl_p99_ms" }, *const itl_n[] = { "ITL p50", "ITL p99" };
	static const char *const e2e[] = { "e2el_p50_ms", "e2el_p99_ms" }, *const e2e_n[] = { "E2E p50", "E2E p99" };
	static const char *const thr[] = { "output_throughput" }, *const thr_n[] = { "output tokens/s" };
	static const char *const rps[] = { "request_throughput", "request_goodput" },
				 *const rps_n[] = { "requests/s", "goodput (req/s within SLO)" };
	sweep_plot(f, doc, "Time to first token against load", "TTFT (ms, log axis)", ttft, ttft_n, 2, true);
	sweep_plot(f, doc, "Inter-token latency against load", "ITL (ms, log axis)", itl, itl_n, 2, true);
	sweep_plot(f, doc, "End-to-end latency against load", "E2E latency (ms, log axis)", e2e, e2e_n, 2, true);
	sweep_plot(f, doc, "Output throughput", "output tokens/s", thr, thr_n, 1, false);
	sweep_plot(f, doc, "Requests served", "requests/s", rps, rps_n, goodput ? 2 : 1, false);
	fputs("</div>\n", f);

	static const char *const heads[] = { "point", "req/s", "out tok/s", "TTFT p50", "TTFT p99", "ITL p50",
					     "ITL p99", "E2E p99", "peak KV %", "preempt." };
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
			len += (size_t)snprintf(c[0] + len, sizeof c[0] - len, "%s%s=%s", len ? " " : "", dot ? dot + 1 : k, t);
			if (len >= sizeof c[0])
				break;
		}
		static const char *const keys[] = { "request_throughput", "output_throughput", "ttft_p50_ms", "ttft_p99_ms",
						     "itl_p50_ms", "itl_p99_ms", "e2el_p99_ms" };
		static const int dec[] = { 2, 0, 1, 1, 2, 2, 0 };
		for (size_t m = 0; m < 7; m++) {
			char ci[96];
			snprintf(ci, sizeof ci, "%s_ci95", keys[m]);
			double w = num(p, ci);
			char a[32], b[32];
			if (isfinite(w) && w > 0)
				snprintf(c[m + 1], sizeof c[m + 1], "\t%s ± %s", html_num(a, sizeof a, num(p, keys[m]), dec[m]),
					 html_num(b, sizeof b, w, dec[m]));
			else
				cell_num(c[m + 1], sizeof c[m + 1], num(p, keys[m]), dec[m]);
		}
		cell_num(c[8], sizeof c[8], 100 * num(p, "peak_kv_usage"), 1);
		cell_num(c[9], sizeof c[9], num(p, "preemptions"), 1);
		const char *cells[10];
		for (size_t m = 0; m < 10; m++)
			cells[m] = c[m];
		html_row(f, cells, 10);
	}
	html_table_end(f);
	(void)xkey;
	doc_configuration(f, doc);
	fputs("<pre>", f);
	char *vary = json_dumps(json_object_get(doc, "vary"), JSON_COMPACT | JSON_REAL_PRECISION(10));
	html_text(f, "vary: %s", vary ? vary : "[]");
	free(vary);
	fputs("</pre>\n", f);
	doc_basis(f, doc, points);
	return 0;
}

/* ---- plan ---- */

static void plan_title(char *out, size_t cap, json_t *doc)
{
	char slo[256];
	slo_words(slo, sizeof slo, doc);
	double target = num(doc, "target_rate");
	if (isfinite(target))
		snprintf(out, cap, "Which configuration serves %g req/s within %s at the lowest cost?", target, slo);
	else
		snprintf(out, cap, "How much load does each configuration take within %s?", slo);
}

static void candidate_name(char *out, size_t cap, json_t *c)
{
	snprintf(out, cap, "%s TP%g %s", str(c, "hardware") ? str(c, "hardware") : "?", num(c, "tensor_parallel_size"),
		 str(c, "weights") ? str(c, "weights") : "");
}

static int plan_section(FILE *f, json_t *doc, struct err *e)
{
	(void)e;
	char q[512];
	plan_title(q, sizeof q, doc);
	html_question(f, q);
	json_t *cands = json_object_get(doc, "candidates");
	json_t *win = json_object_get(doc, "winner");
	char head[512], name[160];
	if (json_is_integer(win)) {
		json_t *c = json_array_get(cands, (size_t)json_integer_value(win));
		candidate_name(name, sizeof name, c);
		double usd = num(c, "usd_per_hour");
		if (isfinite(usd))
			snprintf(head, sizeof head, "%g × %s: %g GPUs, %.2f USD/hour", num(c, "replicas"), name, num(c, "gpus"), usd);
		else
			snprintf(head, sizeof head, "%g × %s: %g GPUs", num(c, "replicas"), name, num(c, "gpus"));
		html_answer_begin(f, head);
		fputs("<p>", f);
		html_text(f, "Each replica holds %g req/s within the SLO (first failing load %g req/s); limited by %s. %s",
			  num(c, "max_rate"), num(c, "first_failing_load"), str(c, "limit") ? str(c, "limit") : "–",
			  str(c, "limit_detail") ? str(c, "limit_detail") : "");
		fputs("</p>\n", f);
		if (isfinite(num(c, "usd_per_1m_output_tokens"))) {
			fputs("<p>", f);
			html_text(f, "%.4f USD per million output tokens at the limit.", num(c, "usd_per_1m_output_tokens"));
			fputs("</p>\n", f);
		}
	} else {
		html_answer_begin(f, "No candidate meets the SLO at any load searched.");
	}
	html_answer_end(f);

	static const char *const heads[] = { "rank", "candidate", "status", "max req/s", "replicas", "GPUs",
					     "USD/hour", "USD/1M tok", "TTFT p99", "ITL p99", "limit" };
	html_table(f, "Candidates, ranked (latencies at the limit, ms)", heads, 11);
	json_t *ranking = json_object_get(doc, "ranking");
	size_t n_rank = json_array_size(ranking), r;
	for (r = 0; r < json_array_size(cands); r++) {
		size_t idx = r < n_rank ? (size_t)json_integer_value(json_array_get(ranking, r)) : r;
		json_t *c = json_array_get(cands, idx);
		json_t *at = json_object_get(c, "at_limit");
		char rank[32], c3[32], c4[32], c5[32], c6[32], c7[32], c8[32], c9[32];
		snprintf(rank, sizeof rank, "\t%zu", r + 1);
		candidate_name(name, sizeof name, c);
		cell_num(c3, sizeof c3, num(c, "max_rate"), 3);
		cell_num(c4, sizeof c4, num(c, "replicas"), 0);
		cell_num(c5, sizeof c5, num(c, "gpus"), 0);
		cell_num(c6, sizeof c6, num(c, "usd_per_hour"), 2);
		cell_num(c7, sizeof c7, num(c, "usd_per_1m_output_tokens"), 4);
		cell_num(c8, sizeof c8, num(at, "ttft_p99_ms"), 1);
		cell_num(c9, sizeof c9, num(at, "itl_p99_ms"), 2);
		const char *cells[] = { rank, name, str(c, "status"), c3, c4, c5, c6, c7, c8, c9, str(c, "limit") };
		html_row(f, cells, 11);
	}
	html_table_end(f);

	/* Each candidate's search: the worst SLO statistic over its limit at
	 * every load tried (1 is the limit). */
	size_t nc = json_array_size(cands), total = 0;
	for (size_t i = 0; i < nc; i++)
		total += json_array_size(json_object_get(json_array_get(cands, i), "tried"));
	struct svg_series *series = xcalloc(nc + 1, sizeof *series);
	double *buf = xcalloc(2 * (total + 2), sizeof *buf);
	char (*names)[160] = xcalloc(nc + 1, sizeof *names);
	const char **cats = xcalloc(nc ? nc : 1, sizeof *cats);
	double *idx = xcalloc(nc ? nc : 1, sizeof *idx), *rate = xcalloc(nc ? nc : 1, sizeof *rate);
	double *cost = xcalloc(nc ? nc : 1, sizeof *cost);
	size_t off = 0;
	double lo = INFINITY, hi = -INFINITY;
	for (size_t i = 0; i < nc; i++) {
		json_t *c = json_array_get(cands, i), *tried = json_object_get(c, "tried");
		size_t nt = json_array_size(tried);
		double *x = buf + off, *y = x + nt;
		/* by load, so the line reads left to right */
		for (size_t t = 0; t < nt; t++) {
			x[t] = json_number_value(json_array_get(json_array_get(tried, t), 0));
			y[t] = json_number_value(json_array_get(json_array_get(tried, t), 1));
		}
		for (size_t a = 1; a < nt; a++)
			for (size_t b = a; b > 0 && x[b] < x[b - 1]; b--) {
				double tx = x[b], ty = y[b];
				x[b] = x[b - 1], y[b] = y[b - 1];
				x[b - 1] = tx, y[b - 1] = ty;
			}
		for (size_t t = 0; t < nt; t++)
			lo = fmin(lo, x[t]), hi = fmax(hi, x[t]);
		candidate_name(names[i], sizeof names[i], c);
		series[i] = (struct svg_series){ names[i], html_colors[i % HTML_N_COLORS], x, y, NULL, nt, SVG_POINTS };
		off += 2 * nt;
		cats[i] = names[i];
		idx[i] = (double)i;
		rate[i] = num(c, "max_rate");
		cost[i] = num(c, "usd_per_hour");
	}
	double *lx = buf + off, *ly = lx + 2;
	lx[0] = isfinite(lo) ? lo : 0, lx[1] = isfinite(hi) ? hi : 1, ly[0] = ly[1] = 1;
	series[nc] = (struct svg_series){ "SLO limit (ratio 1)", "#7f7f7f", lx, ly, NULL, 2, SVG_LINE };
	fputs("<div class=\"plots\">\n", f);
	struct svg_plot ps = { .title = "The search: worst SLO ratio at each load",
			       .xlabel = str(json_object_get(doc, "search"), "by") &&
						 !strcmp(str(json_object_get(doc, "search"), "by"), "concurrency") ?
					 "max_concurrency" : "request rate (req/s, log axis)",
			       .ylabel = "worst ratio (≤ 1 passes)", .xlog = true, .y_from_zero = true,
			       .series = series, .n_series = nc + 1 };
	svg_plot(f, &ps);
	struct svg_series rs[] = { { "max req/s within the SLO, per replica", html_colors[0], idx, rate, NULL, nc, SVG_BARS } };
	struct svg_plot pr = { .title = "Load each configuration takes", .xlabel = "candidate", .ylabel = "req/s",
			       .xcats = cats, .n_xcats = nc, .series = rs, .n_series = 1 };
	svg_plot(f, &pr);
	if (json_is_true(json_object_get(doc, "cost"))) {
		struct svg_series cs[] = { { "USD/hour for the target rate", html_colors[3], idx, cost, NULL, nc, SVG_BARS } };
		struct svg_plot pc = { .title = "What it costs", .xlabel = "candidate", .ylabel = "USD/hour",
				       .xcats = cats, .n_xcats = nc, .series = cs, .n_series = 1 };
		svg_plot(f, &pc);
	}
	fputs("</div>\n", f);
	free(cost);
	free(rate);
	free(idx);
	free(cats);
	free(names);
	free(buf);
	free(series);
	doc_configuration(f, doc);
	doc_basis(f, doc, cands);
	return 0;
}

/* ---- compare ---- */

static void compare_title(char *out, size_t cap, json_t *doc)
{
	char slo[256];
	slo_words(slo, sizeof slo, doc);
	snprintf(out, cap, "Which GPU serves %s best (%s)?", str(doc, "model") ? str(doc, "model") : "the model", slo);
}

static int compare_section(FILE *f, json_t *doc, struct err *e)
{
	(void)e;
	char q[512];
	compare_title(q, sizeof q, doc);
	html_question(f, q);
	json_t *rows = json_object_get(doc, "rows");
	size_t nr = json_array_size(rows), best = 0;
	/* Best: cheapest per token within the SLO, else most load within it,
	 * else most throughput at the scenario's load. */
	const char *by = "usd_per_1m_output_tokens_at_slo";
	bool lowest = true;
	bool any = false;
	for (size_t i = 0; i < nr; i++)
		any |= isfinite(num(json_array_get(rows, i), by));
	if (!any) {
		by = "max_rate", lowest = false;
		for (size_t i = 0; i < nr; i++)
			any |= isfinite(num(json_array_get(rows, i), by));
	}
	for (size_t i = 1; i < nr; i++) {
		double a = num(json_array_get(rows, i), by), b = num(json_array_get(rows, best), by);
		if (isfinite(a) && (!isfinite(b) || (lowest ? a < b : a > b)))
			best = i;
	}
	json_t *br = json_array_get(rows, best);
	char head[512];
	if (!any)
		snprintf(head, sizeof head, "No device was searched against an SLO; see the table for each at the scenario's load.");
	else if (lowest)
		snprintf(head, sizeof head, "%s: %.4f USD per million output tokens within the SLO (%g req/s per GPU set)",
			 str(br, "hardware"), num(br, by), num(br, "max_rate"));
	else
		snprintf(head, sizeof head, "%s: the most load within the SLO, %g req/s", str(br, "hardware"), num(br, by));
	html_answer_begin(f, head);
	fputs("<p>", f);
	html_text(f, "%s (%s): decode ceiling %.0f tokens/s single-stream; at the scenario's load TTFT p99 %.1f ms, "
		     "ITL p99 %.2f ms. %s",
		  str(br, "device") ? str(br, "device") : "", str(br, "hardware"), num(br, "decode_ceiling_tok_s"),
		  num(json_object_get(br, "at_load"), "ttft_p99_ms"), num(json_object_get(br, "at_load"), "itl_p99_ms"),
		  str(br, "limit_detail") ? str(br, "limit_detail") : "");
	fputs("</p>\n", f);
	html_answer_end(f);

	static const char *const heads[] = { "device", "TP", "ceiling tok/s", "out tok/s at load", "TTFT p99",
					     "ITL p99", "max req/s in SLO", "status", "USD/hour", "USD/1M tok",
					     "USD/1M tok in SLO" };
	html_table(f, "Devices (latencies at the scenario's load, ms)", heads, 11);
	const char **cats = xcalloc(nr ? nr : 1, sizeof *cats);
	double *idx = xcalloc(nr ? nr : 1, sizeof *idx), *rate = xcalloc(nr ? nr : 1, sizeof *rate);
	double *usd = xcalloc(nr ? nr : 1, sizeof *usd), *thr = xcalloc(nr ? nr : 1, sizeof *thr);
	for (size_t i = 0; i < nr; i++) {
		json_t *r = json_array_get(rows, i), *at = json_object_get(r, "at_load");
		char c[11][48];
		cell_num(c[1], sizeof c[1], num(r, "tensor_parallel_size"), 0);
		cell_num(c[2], sizeof c[2], num(r, "decode_ceiling_tok_s"), 0);
		cell_num(c[3], sizeof c[3], num(at, "output_throughput"), 0);
		cell_num(c[4], sizeof c[4], num(at, "ttft_p99_ms"), 1);
		cell_num(c[5], sizeof c[5], num(at, "itl_p99_ms"), 2);
		cell_num(c[6], sizeof c[6], num(r, "max_rate"), 3);
		cell_num(c[8], sizeof c[8], num(r, "usd_per_hour"), 2);
		cell_num(c[9], sizeof c[9], num(r, "usd_per_1m_output_tokens"), 4);
		cell_num(c[10], sizeof c[10], num(r, "usd_per_1m_output_tokens_at_slo"), 4);
		const char *cells[11] = { str(r, "hardware"), c[1], c[2], c[3], c[4], c[5], c[6], str(r, "status"), c[8], c[9], c[10] };
		html_row(f, cells, 11);
		cats[i] = str(r, "hardware") ? str(r, "hardware") : "?";
		idx[i] = (double)i;
		rate[i] = num(r, "max_rate");
		usd[i] = num(r, "usd_per_1m_output_tokens_at_slo");
		thr[i] = num(at, "output_throughput");
	}
	html_table_end(f);
	fputs("<div class=\"plots\">\n", f);
	struct svg_series ts[] = { { "output tokens/s at the scenario's load", html_colors[0], idx, thr, NULL, nr, SVG_BARS } };
	struct svg_plot pt = { .title = "Throughput at the scenario's load", .xlabel = "device", .ylabel = "output tokens/s",
			       .xcats = cats, .n_xcats = nr, .series = ts, .n_series = 1 };
	svg_plot(f, &pt);
	struct svg_series rs[] = { { "max req/s within the SLO", html_colors[2], idx, rate, NULL, nr, SVG_BARS } };
	struct svg_plot pr = { .title = "Load within the SLO", .xlabel = "device", .ylabel = "req/s", .xcats = cats,
			       .n_xcats = nr, .series = rs, .n_series = 1 };
	svg_plot(f, &pr);
	if (json_is_true(json_object_get(doc, "cost"))) {
		struct svg_series us[] = { { "USD per 1M output tokens within the SLO", html_colors[3], idx, usd, NULL, nr,
					     SVG_BARS } };
		struct svg_plot pu = { .title = "Cost per token within the SLO", .xlabel = "device", .ylabel = "USD per 1M tokens",
				       .xcats = cats, .n_xcats = nr, .series = us, .n_series = 1 };
		svg_plot(f, &pu);
	}
	fputs("</div>\n", f);
	free(thr);
	free(usd);
	free(rate);
	free(idx);
	free(cats);
	doc_configuration(f, doc);
	doc_basis(f, doc, rows);
	return 0;
}

/* ---- the JSON of servesim run ---- */

static bool is_run_json(json_t *doc)
{
	return json_is_object(json_object_get(doc, "servesim")) && json_is_number(json_object_get(doc, "completed"));
}

static void run_json_title(char *out, size_t cap, json_t *doc)
{
	json_t *ss = json_object_get(doc, "servesim");
	snprintf(out, cap, "How does %s on %s serve %g prompts?", str(doc, "model_id") ? str(doc, "model_id") : "?",
		 str(ss, "hardware") ? str(ss, "hardware") : "?", num(doc, "num_prompts"));
}

static int run_json_section(FILE *f, json_t *doc, struct err *e)
{
	(void)e;
	char q[512], head[256];
	run_json_title(q, sizeof q, doc);
	html_question(f, q);
	snprintf(head, sizeof head, "%.2f req/s, %.0f output tokens/s", num(doc, "request_throughput"),
		 num(doc, "output_throughput"));
	html_answer_begin(f, head);
	fputs("<p>", f);
	html_text(f, "TTFT p50 %.1f ms, p99 %.1f ms · ITL p50 %.2f ms, p99 %.2f ms · %g completed, %g failed.",
		  num(doc, "median_ttft_ms"), num(doc, "p99_ttft_ms"), num(doc, "median_itl_ms"), num(doc, "p99_itl_ms"),
		  num(doc, "completed"), num(doc, "failed"));
	fputs("</p>\n<p class=\"note\">From the JSON of servesim run: the plots over time and the distributions "
	      "need the run itself (servesim report SCENARIO).</p>\n",
	      f);
	html_answer_end(f);
	static const char *const heads[] = { "metric (ms)", "mean", "median", "p99" };
	html_table(f, "Latency, as vllm bench serve reports it", heads, 4);
	static const char *const m[] = { "ttft", "tpot", "itl", "e2el" };
	for (size_t i = 0; i < 4; i++) {
		char k[3][48], c[3][48];
		snprintf(k[0], sizeof k[0], "mean_%s_ms", m[i]);
		snprintf(k[1], sizeof k[1], "median_%s_ms", m[i]);
		snprintf(k[2], sizeof k[2], "p99_%s_ms", m[i]);
		for (int s = 0; s < 3; s++)
			cell_num(c[s], sizeof c[s], num(doc, k[s]), 2);
		const char *cells[] = { m[i], c[0], c[1], c[2] };
		html_row(f, cells, 4);
	}
	html_table_end(f);
	json_t *ss = json_object_get(doc, "servesim");
	fputs("<h3>Configuration</h3>\n<p>", f);
	html_text(f, "Scenario: %s; seed %g; tensor parallel %g.", plot_basename(str(ss, "scenario")), num(ss, "seed"),
		  num(ss, "tensor_parallel_size"));
	fputs("</p>\n<h3>What the numbers rest on</h3>\n", f);
	if (str(ss, "hardware"))
		html_basis_hardware(f, str(ss, "hardware"));
	return 0;
}

/* The kinds of document a report can show. advise: add its row here. */
static const struct doc_kind {
	const char *name;
	void (*title)(char *out, size_t cap, json_t *doc);
	int (*section)(FILE *f, json_t *doc, struct err *e);
} kinds[] = {
	{ "sweep", sweep_title, sweep_section },
	{ "plan", plan_title, plan_section },
	{ "compare", compare_title, compare_section },
};

static const struct doc_kind run_json_kind = { "run", run_json_title, run_json_section };

static const struct doc_kind *kind_of(json_t *doc)
{
	const char *name = str(doc, "kind");
	for (size_t i = 0; name && i < sizeof kinds / sizeof *kinds; i++)
		if (!strcmp(kinds[i].name, name))
			return &kinds[i];
	return !name && is_run_json(doc) ? &run_json_kind : NULL;
}

int html_check_doc(json_t *doc, const char *label, struct err *e)
{
	if (kind_of(doc))
		return 0;
	return err_set(e, "%s: expected the JSON of servesim sweep, plan, compare or run, got %s", label,
		       str(doc, "kind") ? str(doc, "kind") : "a document without \"kind\"");
}

int html_doc_section(FILE *f, struct html_source *s, struct err *e)
{
	if (html_check_doc(s->doc, s->label, e))
		return -1;
	return kind_of(s->doc)->section(f, s->doc, e);
}

/* The page title: the first source's question. A run's is in html_run.c's
 * words; it comes here too so that one function names every page. */
void html_doc_title(char *out, size_t cap, const struct html_source *s)
{
	if (s->run) {
		const struct run_result *r = s->run;
		snprintf(out, cap, "%s on %s", r->model.id, r->hw.id);
		return;
	}
	const struct doc_kind *k = kind_of(s->doc);
	if (k)
		k->title(out, cap, s->doc);
	else
		snprintf(out, cap, "%s", plot_basename(s->label));
}
