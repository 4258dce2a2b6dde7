/*
 * html_plan: the report's sections for a plan (the configuration that
 * meets the SLO at the lowest cost, the candidates ranked, each one's
 * search) and a compare (the devices side by side).
 */
#include "html_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ranknoise.h"
#include "resultdoc.h"
#include "xalloc.h"

#define num resultdoc_num
#define str resultdoc_str

void html_plan_title(char *out, size_t cap, json_t *doc)
{
	char slo[256];
	html_slo_words(slo, sizeof slo, doc);
	double target = num(doc, "target_rate");
	if (isfinite(target))
		snprintf(out, cap,
			 "Which configuration serves %g req/s within %s at the lowest cost?",
			 target, slo);
	else
		snprintf(out, cap, "How much load does each configuration take within %s?", slo);
}

/* The pairs of GPUs whose order the confirmation blocks do not resolve
 * (ranknoise.h), one paragraph each. */
static void noise_paragraphs(FILE *f, json_t *doc)
{
	json_t *pairs = json_object_get(doc, "within_noise"), *p;
	size_t i;
	json_array_foreach(pairs, i, p) {
		char line[1024];
		ranknoise_sentence(p, line, sizeof line);
		fputs("<p>", f);
		html_text(f, "Within noise: %s.", line);
		fputs("</p>\n", f);
	}
}

static void candidate_name(char *out, size_t cap, json_t *c)
{
	snprintf(out, cap, "%s TP%g %s", str(c, "hardware") ? str(c, "hardware") : "?",
		 num(c, "tensor_parallel_size"), str(c, "weights") ? str(c, "weights") : "");
}

int html_plan_section(FILE *f, json_t *doc, struct err *e)
{
	(void)e;
	char q[512];
	html_plan_title(q, sizeof q, doc);
	html_question(f, q);
	json_t *cands = json_object_get(doc, "candidates");
	json_t *win = json_object_get(doc, "winner");
	char head[512], name[160];
	if (json_is_integer(win)) {
		json_t *c = json_array_get(cands, (size_t)json_integer_value(win));
		candidate_name(name, sizeof name, c);
		double usd = num(c, "usd_per_hour");
		if (isfinite(usd))
			snprintf(head, sizeof head, "%g × %s: %g GPU%s, %.2f USD/hour",
				 num(c, "replicas"), name, num(c, "gpus"),
				 num(c, "gpus") == 1 ? "" : "s", usd);
		else
			snprintf(head, sizeof head, "%g × %s: %g GPU%s", num(c, "replicas"), name,
				 num(c, "gpus"), num(c, "gpus") == 1 ? "" : "s");
		html_answer_begin(f, head);
		fputs("<p>", f);
		html_text(f,
			  "Each replica holds %g req/s within the SLO (first failing load %g "
			  "req/s); limited by %s. %s",
			  num(c, "max_rate"), num(c, "first_failing_load"),
			  str(c, "limit") ? str(c, "limit") : "–",
			  str(c, "limit_detail") ? str(c, "limit_detail") : "");
		fputs("</p>\n", f);
		if (isfinite(num(c, "usd_per_1m_output_tokens"))) {
			fputs("<p>", f);
			html_text(f, "%.4f USD per million output tokens at the limit.",
				  num(c, "usd_per_1m_output_tokens"));
			fputs("</p>\n", f);
		}
		noise_paragraphs(f, doc);
	} else {
		html_answer_begin(f, "No candidate meets the SLO at any load searched.");
	}
	html_answer_end(f);

	static const char *const heads[] = { "rank",	 "candidate", "status",	  "max req/s",
					     "replicas", "GPUs",      "USD/hour", "USD/1M tok",
					     "TTFT p99", "ITL p99",   "limit" };
	html_table(f, "Candidates, ranked (latencies at the limit, ms)", heads, 11);
	json_t *ranking = json_object_get(doc, "ranking");
	size_t n_rank = json_array_size(ranking), r;
	for (r = 0; r < json_array_size(cands); r++) {
		size_t idx =
			r < n_rank ? (size_t)json_integer_value(json_array_get(ranking, r)) : r;
		json_t *c = json_array_get(cands, idx);
		json_t *at = json_object_get(c, "at_limit");
		char rank[32], c3[32], c4[32], c5[32], c6[32], c7[32], c8[32], c9[32];
		snprintf(rank, sizeof rank, "\t%zu", r + 1);
		candidate_name(name, sizeof name, c);
		html_cell_num(c3, sizeof c3, num(c, "max_rate"), 3);
		html_cell_num(c4, sizeof c4, num(c, "replicas"), 0);
		html_cell_num(c5, sizeof c5, num(c, "gpus"), 0);
		html_cell_num(c6, sizeof c6, num(c, "usd_per_hour"), 2);
		html_cell_num(c7, sizeof c7, num(c, "usd_per_1m_output_tokens"), 4);
		html_cell_num(c8, sizeof c8, num(at, "ttft_p99_ms"), 1);
		html_cell_num(c9, sizeof c9, num(at, "itl_p99_ms"), 2);
		const char *cells[] = { rank, name, str(c, "status"), c3, c4, c5, c6, c7,
					c8,   c9,   str(c, "limit") };
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
	char(*names)[160] = xcalloc(nc + 1, sizeof *names);
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
		series[i] = (struct svg_series){
			names[i], html_colors[i % HTML_N_COLORS], x, y, NULL, nt, SVG_POINTS
		};
		off += 2 * nt;
		cats[i] = names[i];
		idx[i] = (double)i;
		rate[i] = num(c, "max_rate");
		cost[i] = num(c, "usd_per_hour");
	}
	double *lx = buf + off, *ly = lx + 2;
	lx[0] = isfinite(lo) ? lo : 0, lx[1] = isfinite(hi) ? hi : 1, ly[0] = ly[1] = 1;
	series[nc] =
		(struct svg_series){ "SLO limit (ratio 1)", "#7f7f7f", lx, ly, NULL, 2, SVG_LINE };
	fputs("<div class=\"plots\">\n", f);
	struct svg_plot ps = { .title = "The search: worst SLO ratio at each load",
			       .xlabel = str(json_object_get(doc, "search"), "by") &&
							 !strcmp(str(json_object_get(doc, "search"),
								     "by"),
								 "concurrency")
						 ? "max_concurrency"
						 : "request rate (req/s, log axis)",
			       .ylabel = "worst ratio (≤ 1 passes)",
			       .xlog = true,
			       .y_from_zero = true,
			       .series = series,
			       .n_series = nc + 1 };
	svg_plot(f, &ps);
	html_bar_plot(f, "Load each configuration takes", "candidate", "req/s",
		      "max req/s within the SLO, per replica", html_colors[0], cats, idx, rate, nc);
	if (json_is_true(json_object_get(doc, "cost")))
		html_bar_plot(f, "What it costs", "candidate", "USD/hour",
			      "USD/hour for the target rate", html_colors[3], cats, idx, cost, nc);
	fputs("</div>\n", f);
	free(cost);
	free(rate);
	free(idx);
	free(cats);
	free(names);
	free(buf);
	free(series);
	html_doc_configuration(f, doc);
	html_doc_basis(f, doc, cands);
	return 0;
}

/* ---- compare ---- */

void html_compare_title(char *out, size_t cap, json_t *doc)
{
	char slo[256];
	html_slo_words(slo, sizeof slo, doc);
	snprintf(out, cap, "Which GPU serves %s best (%s)?",
		 str(doc, "model") ? str(doc, "model") : "the model", slo);
}

int html_compare_section(FILE *f, json_t *doc, struct err *e)
{
	(void)e;
	char q[512];
	html_compare_title(q, sizeof q, doc);
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
		double a = num(json_array_get(rows, i), by),
		       b = num(json_array_get(rows, best), by);
		if (isfinite(a) && (!isfinite(b) || (lowest ? a < b : a > b)))
			best = i;
	}
	/* A ranked document names its winner (comparedoc.c: the same rule,
	 * by rate per GPU when unpriced). */
	json_t *win = json_object_get(doc, "winner");
	for (size_t i = 0; any && json_is_integer(win) && i < nr; i++)
		if (num(json_array_get(rows, i), "row") == (double)json_integer_value(win))
			best = i;
	json_t *br = json_array_get(rows, best);
	char head[512];
	if (!any)
		snprintf(head, sizeof head,
			 "No device was searched against an SLO; see the table for each at the "
			 "scenario's load.");
	else if (lowest)
		snprintf(head, sizeof head,
			 "%s: %.4f USD per million output tokens within the SLO (%g req/s per GPU "
			 "set)",
			 str(br, "hardware"), num(br, by), num(br, "max_rate"));
	else
		snprintf(head, sizeof head, "%s: the most load within the SLO, %g req/s",
			 str(br, "hardware"), num(br, by));
	html_answer_begin(f, head);
	fputs("<p>", f);
	html_text(f,
		  "%s (%s): decode ceiling %.0f tokens/s single-stream; at the scenario's load "
		  "TTFT p99 %.1f ms, "
		  "ITL p99 %.2f ms. %s",
		  str(br, "device") ? str(br, "device") : "", str(br, "hardware"),
		  num(br, "decode_ceiling_tok_s"),
		  num(json_object_get(br, "at_load"), "ttft_p99_ms"),
		  num(json_object_get(br, "at_load"), "itl_p99_ms"),
		  str(br, "limit_detail") ? str(br, "limit_detail") : "");
	fputs("</p>\n", f);
	noise_paragraphs(f, doc);
	html_answer_end(f);

	static const char *const heads[] = {
		"device",   "TP",	  "ceiling tok/s",    "out tok/s at load",
		"TTFT p99", "ITL p99",	  "max req/s in SLO", "status",
		"USD/hour", "USD/1M tok", "USD/1M tok in SLO"
	};
	html_table(f, "Devices (latencies at the scenario's load, ms)", heads, 11);
	const char **cats = xcalloc(nr ? nr : 1, sizeof *cats);
	double *idx = xcalloc(nr ? nr : 1, sizeof *idx), *rate = xcalloc(nr ? nr : 1, sizeof *rate);
	double *usd = xcalloc(nr ? nr : 1, sizeof *usd), *thr = xcalloc(nr ? nr : 1, sizeof *thr);
	for (size_t i = 0; i < nr; i++) {
		json_t *r = json_array_get(rows, i), *at = json_object_get(r, "at_load");
		char c[11][48];
		html_cell_num(c[1], sizeof c[1], num(r, "tensor_parallel_size"), 0);
		html_cell_num(c[2], sizeof c[2], num(r, "decode_ceiling_tok_s"), 0);
		html_cell_num(c[3], sizeof c[3], num(at, "output_throughput"), 0);
		html_cell_num(c[4], sizeof c[4], num(at, "ttft_p99_ms"), 1);
		html_cell_num(c[5], sizeof c[5], num(at, "itl_p99_ms"), 2);
		html_cell_num(c[6], sizeof c[6], num(r, "max_rate"), 3);
		html_cell_num(c[8], sizeof c[8], num(r, "usd_per_hour"), 2);
		html_cell_num(c[9], sizeof c[9], num(r, "usd_per_1m_output_tokens"), 4);
		html_cell_num(c[10], sizeof c[10], num(r, "usd_per_1m_output_tokens_at_slo"), 4);
		const char *cells[11] = { str(r, "hardware"), c[1], c[2], c[3], c[4], c[5], c[6],
					  str(r, "status"),   c[8], c[9], c[10] };
		html_row(f, cells, 11);
		cats[i] = str(r, "hardware") ? str(r, "hardware") : "?";
		idx[i] = (double)i;
		rate[i] = num(r, "max_rate");
		usd[i] = num(r, "usd_per_1m_output_tokens_at_slo");
		thr[i] = num(at, "output_throughput");
	}
	html_table_end(f);
	fputs("<div class=\"plots\">\n", f);
	html_bar_plot(f, "Throughput at the scenario's load", "device", "output tokens/s",
		      "output tokens/s at the scenario's load", html_colors[0], cats, idx, thr, nr);
	html_bar_plot(f, "Load within the SLO", "device", "req/s", "max req/s within the SLO",
		      html_colors[2], cats, idx, rate, nr);
	if (json_is_true(json_object_get(doc, "cost")))
		html_bar_plot(f, "Cost per token within the SLO", "device", "USD per 1M tokens",
			      "USD per 1M output tokens within the SLO", html_colors[3], cats, idx,
			      usd, nr);
	fputs("</div>\n", f);
	free(thr);
	free(usd);
	free(rate);
	free(idx);
	free(cats);
	html_doc_configuration(f, doc);
	html_doc_basis(f, doc, rows);
	return 0;
}
