#include "html_int.h"

#include <math.h>
#include <stdarg.h>
#include <string.h>

#include "accdata.h"
#include "hwprofile.h"
#include "pathname.h"
#include "run.h"
#include "wholefile.h"

#ifndef SERVESIM_VERSION
#define SERVESIM_VERSION "unknown"
#endif

const char *const html_colors[HTML_N_COLORS] = {
	"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#17becf", "#7f7f7f",
};

/* Print-friendly, no web fonts: the reader's own sans-serif. */
static const char css[] =
	"body{font:15px/1.45 system-ui,-apple-system,'Segoe UI',Roboto,Helvetica,Arial,sans-serif;"
	"color:#222;max-width:1080px;margin:24px auto;padding:0 16px}\n"
	"h1{font-size:22px;margin:0 0 4px}h2{font-size:19px;margin:36px 0 8px;border-bottom:2px "
	"solid #ddd}"
	"h3{font-size:16px;margin:22px 0 6px}\n"
	".meta{color:#666;font-size:13px}\n"
	".answer{background:#f3f7fc;border-left:5px solid #1f77b4;padding:10px 16px;margin:12px "
	"0}\n"
	".answer p{margin:4px 0}.answer .big{font-size:18px;font-weight:600}\n"
	"table{border-collapse:collapse;margin:8px 0 16px;font-size:13.5px}\n"
	".tables{display:flex;flex-wrap:wrap;gap:0 28px;align-items:flex-start}\n"
	"caption{text-align:left;font-weight:600;padding:4px 0}\n"
	"th,td{border-bottom:1px solid #e3e3e3;padding:3px "
	"10px;text-align:left;vertical-align:top}\n"
	"th{background:#fafafa}td.n{text-align:right;font-variant-numeric:tabular-nums}\n"
	"pre{background:#f7f7f7;padding:8px 12px;overflow-x:auto;font-size:12.5px}\n"
	".plots{display:flex;flex-wrap:wrap;gap:12px}\n"
	"svg.plot{max-width:100%;height:auto;border:1px solid #eee}\n"
	"svg.plot text{font:12px system-ui,Helvetica,Arial,sans-serif;fill:#333}\n"
	"svg.plot .tt{font-weight:600;font-size:13.5px}svg.plot .ax{fill:#555}\n"
	"svg.plot .grid path{stroke:#e6e6e6}svg.plot .frame{stroke:#999;fill:none}\n"
	"svg.plot .mk{font-size:11px}svg.plot .lg{font-size:11.5px}\n"
	".note{color:#555;font-size:13px}\n"
	"@media print{body{margin:0}h2{break-before:auto}svg.plot{break-inside:avoid}}\n";

void html_text(FILE *f, const char *fmt, ...)
{
	char buf[4096];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	svg_escape(f, buf);
}

const char *html_num(char *buf, size_t cap, double v, int dec)
{
	if (!isfinite(v))
		snprintf(buf, cap, "–");
	else
		snprintf(buf, cap, "%.*f", dec, v);
	return buf;
}

void html_table(FILE *f, const char *caption, const char *const *heads, size_t n)
{
	fputs("<table>", f);
	if (caption) {
		fputs("<caption>", f);
		svg_escape(f, caption);
		fputs("</caption>", f);
	}
	fputs("<tr>", f);
	for (size_t i = 0; i < n; i++) {
		fputs("<th>", f);
		svg_escape(f, heads[i]);
		fputs("</th>", f);
	}
	fputs("</tr>\n", f);
}

void html_row(FILE *f, const char *const *cells, size_t n)
{
	fputs("<tr>", f);
	for (size_t i = 0; i < n; i++) {
		const char *c = cells[i] ? cells[i] : "";
		bool num = c[0] == '\t';
		fputs(num ? "<td class=\"n\">" : "<td>", f);
		svg_escape(f, num ? c + 1 : c);
		fputs("</td>", f);
	}
	fputs("</tr>\n", f);
}

void html_table_end(FILE *f)
{
	fputs("</table>\n", f);
}

void html_answer_begin(FILE *f, const char *headline)
{
	fputs("<div class=\"answer\"><p class=\"big\">", f);
	svg_escape(f, headline);
	fputs("</p>\n", f);
}

void html_answer_end(FILE *f)
{
	fputs("</div>\n", f);
}

void html_question(FILE *f, const char *question)
{
	fputs("<h2>", f);
	svg_escape(f, question);
	fputs("</h2>\n", f);
}

/* How far real runs check a device's predictions: the figures of
 * scenarios/calibration/accuracy.data (accdata.h), written by
 * scripts/accuracy-data from tests/accuracy/vllm_h100.py, for the device
 * the runs were on. Returns false (and writes nothing) for another device
 * or when the file cannot be read. */
static bool accuracy_hardware(FILE *f, const struct accdata *a, const char *hw_id,
			      const char *hw_name)
{
	if (strcmp(a->hardware, hw_id))
		return false;
	html_text(f,
		  "Checked against %lld real vLLM v%s runs on %s (%lld models, TP %lld-%lld): "
		  "whole-run MAPE with the shipped defaults of mean TTFT %.1f%%, mean ITL %.1f%%, "
		  "mean E2E latency %.1f%% (leaving each model family out of the fit: %.1f%%, "
		  "%.1f%%, %.1f%%). Tails (p90, p99) are looser, since simulated steps are "
		  "deterministic (docs/accuracy.md).",
		  (long long)a->runs, a->vllm_version, hw_name, (long long)a->models,
		  (long long)a->tp_min, (long long)a->tp_max, a->mape_pct[ACC_TTFT],
		  a->mape_pct[ACC_ITL], a->mape_pct[ACC_E2E], a->cv_pct[ACC_TTFT],
		  a->cv_pct[ACC_ITL], a->cv_pct[ACC_E2E]);
	return true;
}

void html_basis_hardware(FILE *f, const char *hw_id)
{
	struct hw_profile hw;
	struct err e;
	fputs("<h3>", f);
	html_text(f, "Hardware profile %s", hw_id);
	fputs("</h3>\n", f);
	if (hw_load_named(&hw, hw_id, &e)) {
		fputs("<p class=\"note\">", f);
		html_text(f, "The profile could not be read here (%s).", e.msg);
		fputs("</p>\n", f);
		return;
	}
	struct accdata acc;
	struct err ae;
	bool have_acc = accdata_load_default(&acc, &ae) == 0;
	fputs("<p>", f);
	if (have_acc && accuracy_hardware(f, &acc, hw.id, hw.name))
		;
	else if (hw.calibrated)
		html_text(f,
			  "%s carries its own fitted [efficiency] section (%s); no run shipped "
			  "with servesim checks it.",
			  hw.name,
			  hw.source_efficiency[0] ? hw.source_efficiency : "no source given");
	else
		html_text(f,
			  "No real run on %s checks these predictions: its achievable fractions "
			  "are the defaults of "
			  "its device class, fitted on H100 runs. Calibrate with your own runs "
			  "(servesim calibrate runs) "
			  "before relying on absolute numbers.",
			  hw.name);
	fputs("</p>\n", f);
	if (!have_acc) {
		fputs("<p class=\"note\">", f);
		html_text(f, "The accuracy figures could not be read here (%s).", ae.msg);
		fputs("</p>\n", f);
	}
	accdata_free(&acc);
	static const char *const heads[] = { "figure", "value", "source" };
	html_table(f, NULL, heads, 3);
	char v[128];
	const char *rows[][3] = {
		{ "device", hw.name, hw.source_device },
		{ "memory bandwidth (GB/s)", html_num(v, sizeof v, hw.bandwidth_gb_s, 0),
		  hw.source_memory },
	};
	for (size_t i = 0; i < sizeof rows / sizeof *rows; i++)
		html_row(f, rows[i], 3);
	char c[64];
	const char *row_c[3] = { "dense BF16 (TFLOP/s)", html_num(c, sizeof c, hw.bf16_tflops, 0),
				 hw.source_compute };
	html_row(f, row_c, 3);
	char l[64];
	const char *row_l[3] = { "interconnect (GB/s per direction)",
				 html_num(l, sizeof l, hw.ic_bandwidth_gb_s, 0),
				 hw.source_interconnect };
	html_row(f, row_l, 3);
	if (hw.has_price) {
		char p[64];
		const char *row_p[3] = { "price (USD per GPU-hour)",
					 html_num(p, sizeof p, hw.price_per_hour_usd, 2),
					 hw.source_price };
		html_row(f, row_p, 3);
	}
	html_table_end(f);
}

/* A signed whole percent as the page prints it: "+9%", "\u22125%", "0%". */
static void pct(char *buf, size_t cap, double v)
{
	long r = lround(v);
	snprintf(buf, cap, r < 0 ? "\u2212%ld%%" : r > 0 ? "+%ld%%" : "%ld%%", r < 0 ? -r : r);
}

/* "−5% to +19%", or one figure when both ends round alike. */
static void pct_range(char *buf, size_t cap, double lo, double hi)
{
	char a[32], b[32];
	pct(a, sizeof a, lo);
	pct(b, sizeof b, hi);
	if (!strcmp(a, b))
		snprintf(buf, cap, "%s", a);
	else
		snprintf(buf, cap, "%s to %s", a, b);
}

/* Each model the real runs cover, with its errors there (whole run, mean
 * TTFT, ITL and E2E, simulated against measured), from accuracy.data. */
void html_basis_model(FILE *f, const char *model_id)
{
	struct accdata acc;
	struct err e;
	fputs("<p>", f);
	if (accdata_load_default(&acc, &e)) {
		html_text(f, "The accuracy figures could not be read here (%s).", e.msg);
		fputs("</p>\n", f);
		accdata_free(&acc);
		return;
	}
	const struct accdata_model *m = accdata_find(&acc, model_id);
	if (m) {
		char r[ACC_N_METRICS][80];
		for (int k = 0; k < ACC_N_METRICS; k++)
			pct_range(r[k], sizeof r[k], m->min_pct[k], m->max_pct[k]);
		html_text(f,
			  "Real vLLM runs of %s on %s, simulated against measured: %lld run%s at "
			  "TP %s: mean TTFT %s, mean ITL %s, mean E2E %s.",
			  model_id, acc.hardware, (long long)m->runs, m->runs == 1 ? "" : "s",
			  m->tp, r[ACC_TTFT], r[ACC_ITL], r[ACC_E2E]);
	} else {
		char names[1024] = "";
		for (size_t i = 0; i < acc.n_models; i++)
			snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s",
				 i == 0			 ? ""
				 : i + 1 == acc.n_models ? " and "
							 : ", ",
				 acc.model[i].id);
		html_text(f,
			  "No real run of %s checks servesim: the real runs it is checked against "
			  "(%s) "
			  "are of %s. The step model derives %s's costs from its config.json.",
			  model_id, acc.hardware, names, model_id);
	}
	fputs("</p>\n", f);
	accdata_free(&acc);
}

/* The kinds of section, by what the source holds. */
static int section(FILE *f, struct html_source *s, struct err *e)
{
	return s->run ? html_run_section(f, s, e) : html_doc_section(f, s, e);
}

static int write_page(FILE *f, struct html_source *sources, size_t n, struct err *e)
{
	char title[512];
	html_doc_title(title, sizeof title, &sources[0]);
	if (n > 1)
		snprintf(title + strlen(title), sizeof title - strlen(title), " (and %zu more)",
			 n - 1);
	fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
	      "<meta name=\"viewport\" content=\"width=device-width, "
	      "initial-scale=1\">\n<title>servesim: ",
	      f);
	svg_escape(f, title);
	fprintf(f, "</title>\n<style>\n%s</style>\n</head>\n<body>\n<header><h1>", css);
	svg_escape(f, title);
	fputs("</h1>\n<p class=\"meta\">", f);
	html_text(f, "servesim %s · simulated, not measured · from ", SERVESIM_VERSION);
	for (size_t i = 0; i < n; i++) {
		if (i)
			fputs(", ", f);
		svg_escape(f, pathname_base(sources[i].label));
	}
	fputs("</p></header>\n", f);
	for (size_t i = 0; i < n; i++) {
		fputs("<section>\n", f);
		if (section(f, &sources[i], e))
			return -1;
		fputs("</section>\n", f);
	}
	fputs("<footer><p class=\"meta\">", f);
	html_text(
		f,
		"Made by servesim %s, a discrete-event simulator of LLM serving (vLLM V1, Ollama, "
		"llama.cpp server). Every number on this page is a prediction; the sections \"What "
		"the numbers "
		"rest on\" say how far real runs check it.",
		SERVESIM_VERSION);
	fputs("</p></footer>\n</body>\n</html>\n", f);
	return 0;
}

int html_report(const char *path, struct html_source *sources, size_t n, struct err *e)
{
	if (n == 0)
		return err_set(e, "report: nothing to report");
	if (!strcmp(path, "-")) {
		if (write_page(stdout, sources, n, e))
			return -1;
		return fflush(stdout) ? err_set(e, "stdout: cannot write") : 0;
	}
	FILE *f = wholefile_open(path, e);
	if (!f)
		return -1;
	if (write_page(f, sources, n, e)) {
		wholefile_abort(f, path);
		return -1;
	}
	return wholefile_commit(f, path, e);
}
