/*
 * html_doc: result documents in the report: what their sections share
 * (the SLO in words, the configuration, what the numbers rest on), the
 * JSON of `servesim run --format json` (its tables; plots need the
 * scenario), and the table of kinds: sweep (html_sweep.c), plan and
 * compare (html_plan.c).
 *
 * Kinds are rows of `kinds` below, chosen by the document's "kind": a new
 * kind (advise) is a title function, a section function and one row.
 */
#include "html_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "latmetric.h"
#include "pathname.h"
#include "resultdoc.h"
#include "run.h"
#include "model.h"
#include "scenario.h"
#include "xalloc.h"

#define num resultdoc_num
#define str resultdoc_str

/* The SLO limits of a plan or compare search, "ttft_p99_ms ≤ 2000, …". */
void html_slo_words(char *out, size_t cap, json_t *doc)
{
	json_t *slo = json_object_get(json_object_get(doc, "search"), "slo");
	size_t n = 0;
	out[0] = '\0';
	const char *k;
	json_t *v;
	json_object_foreach(slo, k, v)
	{
		if (n < cap)
			n += (size_t)snprintf(out + n, cap - n, "%s%s ≤ %g", n ? ", " : "", k,
					      json_number_value(v));
	}
	if (!out[0])
		snprintf(out, cap, "no SLO");
}

/* The hardware and the model (its file id) the document's scenario runs
 * (when its file is here): the scenario loaded with the document's --set
 * overrides. False when it cannot be loaded. */
static bool scenario_names(json_t *doc, char *hw, size_t hw_cap, char *model, size_t model_cap)
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
	snprintf(hw, hw_cap, "%s", sc.hardware);
	struct model m;
	snprintf(model, model_cap, "%s", model_load_named(&m, sc.model, &e) ? sc.model : m.id);
	return true;
}

/* The header every document opens with: scenario, --set, the search. */
void html_doc_configuration(FILE *f, json_t *doc)
{
	fputs("<h3>Configuration</h3>\n<p>", f);
	const char *sc = str(doc, "scenario");
	html_text(f, "Scenario: %s.", sc ? pathname_base(sc) : "not recorded");
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
		char *s = json_dumps(search, JSON_INDENT(1) | JSON_PRESERVE_ORDER |
						     JSON_REAL_PRECISION(10));
		svg_escape(f, s);
		free(s);
		fputs("</pre>\n", f);
	}
}

/* What the numbers rest on, for each distinct device of the items. */
void html_doc_basis(FILE *f, json_t *doc, json_t *items)
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
	char hw[INI_VALUE_MAX], model[INI_VALUE_MAX] = "";
	if (scenario_names(doc, hw, sizeof hw, model, sizeof model) && n_seen == 0)
		snprintf(seen[n_seen++], sizeof seen[0], "%s", hw);
	if (str(doc, "model"))
		snprintf(model, sizeof model, "%s", str(doc, "model"));
	if (model[0])
		html_basis_model(f, model);
	for (size_t k = 0; k < n_seen; k++)
		html_basis_hardware(f, seen[k]);
	if (n_seen == 0)
		fputs("<p class=\"note\">The document does not say which device it ran on.</p>\n",
		      f);
}

void html_cell_num(char *buf, size_t cap, double v, int dec)
{
	buf[0] = '\t';
	html_num(buf + 1, cap - 1, v, dec);
}

void html_bar_plot(FILE *f, const char *title, const char *xlabel, const char *ylabel,
		   const char *name, const char *color, const char *const *cats, const double *idx,
		   const double *v, size_t n)
{
	struct svg_series s = { name, color, idx, v, NULL, n, SVG_BARS };
	struct svg_plot p = { .title = title,
			      .xlabel = xlabel,
			      .ylabel = ylabel,
			      .xcats = cats,
			      .n_xcats = n,
			      .series = &s,
			      .n_series = 1 };
	svg_plot(f, &p);
}

/* ---- the JSON of servesim run ---- */

static bool is_run_json(json_t *doc)
{
	return json_is_object(json_object_get(doc, "servesim")) &&
	       json_is_number(json_object_get(doc, "completed"));
}

static void run_json_title(char *out, size_t cap, json_t *doc)
{
	json_t *ss = json_object_get(doc, "servesim");
	snprintf(out, cap, "How does %s on %s serve %g prompts?",
		 str(doc, "model_id") ? str(doc, "model_id") : "?",
		 str(ss, "hardware") ? str(ss, "hardware") : "?", num(doc, "num_prompts"));
}

static int run_json_section(FILE *f, json_t *doc, struct err *e)
{
	(void)e;
	char q[512], head[256];
	run_json_title(q, sizeof q, doc);
	html_question(f, q);
	snprintf(head, sizeof head, "%.2f req/s, %.0f output tokens/s",
		 num(doc, "request_throughput"), num(doc, "output_throughput"));
	html_answer_begin(f, head);
	fputs("<p>", f);
	html_text(f,
		  "TTFT p50 %.1f ms, p99 %.1f ms · ITL p50 %.2f ms, p99 %.2f ms · %g completed, %g "
		  "failed.",
		  num(doc, "median_ttft_ms"), num(doc, "p99_ttft_ms"), num(doc, "median_itl_ms"),
		  num(doc, "p99_itl_ms"), num(doc, "completed"), num(doc, "failed"));
	fputs("</p>\n<p class=\"note\">From the JSON of servesim run: the plots over time and the "
	      "distributions "
	      "need the run itself (servesim report SCENARIO).</p>\n",
	      f);
	html_answer_end(f);
	static const char *const heads[] = { "metric (ms)", "mean", "median", "p99" };
	html_table(f, "Latency, as vllm bench serve reports it", heads, 4);
	for (size_t i = 0; i < N_LAT_METRICS; i++) {
		const char *key = lat_metrics[i].key;
		char k[3][48], c[3][48];
		snprintf(k[0], sizeof k[0], "mean_%s_ms", key);
		snprintf(k[1], sizeof k[1], "median_%s_ms", key);
		snprintf(k[2], sizeof k[2], "p99_%s_ms", key);
		for (int s = 0; s < 3; s++)
			html_cell_num(c[s], sizeof c[s], num(doc, k[s]), 2);
		const char *cells[] = { key, c[0], c[1], c[2] };
		html_row(f, cells, 4);
	}
	html_table_end(f);
	json_t *ss = json_object_get(doc, "servesim");
	fputs("<h3>Configuration</h3>\n<p>", f);
	html_text(f, "Scenario: %s; seed %g; tensor parallel %g.",
		  pathname_base(str(ss, "scenario")), num(ss, "seed"),
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
	{ "sweep", html_sweep_title, html_sweep_section },
	{ "plan", html_plan_title, html_plan_section },
	{ "compare", html_compare_title, html_compare_section },
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
	return err_set(e, "%s: expected the JSON of servesim sweep, plan, compare or run, got %s",
		       label, str(doc, "kind") ? str(doc, "kind") : "a document without \"kind\"");
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
		snprintf(out, cap, "%s", pathname_base(s->label));
}
