#include "html_int.h"

#include <math.h>
#include <stdarg.h>
#include <string.h>

#include "hwprofile.h"
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

/* How far real runs check a device's predictions. One row a device with
 * runs behind it; the figures are docs/accuracy.md's (whole-run MAPE of
 * the 15 vLLM v0.15.1 runs of ../shared/calibration with the shipped
 * defaults), measured as of the version they name; tests/test_accuracy.c
 * fails when the MAPE goes past the goals (15%, 8%, 8%). */
static const struct {
	const char *hw_id;
	const char *text;
} accuracy[] = {
	{ "h100-sxm", "Checked against 15 real vLLM v0.15.1 runs on H100 SXM (6 model families, TP "
		      "1-4): whole-run "
		      "mean TTFT within 9.7%, mean ITL 5.0%, mean E2E latency 5.0% (MAPE with the "
		      "shipped defaults; "
		      "leaving each model family out of the fit: 10.0%, 5.8%, 5.8%). Tails (p90, "
		      "p99) are looser, "
		      "since simulated steps are deterministic (docs/accuracy.md)." },
};

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
	const char *accuracy_text = NULL;
	for (size_t i = 0; i < sizeof accuracy / sizeof *accuracy; i++)
		if (!strcmp(accuracy[i].hw_id, hw.id))
			accuracy_text = accuracy[i].text;
	fputs("<p>", f);
	if (accuracy_text)
		svg_escape(f, accuracy_text);
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

/* Each model the 15 real H100 runs cover, with its errors there (whole
 * run, mean TTFT, mean ITL, mean E2E, simulated against measured, as of
 * servesim 0.1.0; docs/accuracy.md has the table they come from). */
static const struct {
	const char *model_id;
	const char *text;
} model_accuracy[] = {
	{ "llama-2-7b",
	  "4 runs at TP 1: mean TTFT −5% to +19%, mean ITL −6% to +3%, mean E2E −5% to +3%." },
	{ "llama-3.1-70b",
	  "2 runs at TP 4: mean TTFT +9% to +10%, mean ITL −7% to +5%, mean E2E −7% to +5%." },
	{ "mistral-nemo-12b", "2 runs at TP 1 and 2: mean TTFT −5% to +9%, mean ITL +3% to +13%, "
			      "mean E2E +3% to +13%." },
	{ "qwen2.5-7b-instruct",
	  "2 runs at TP 1: mean TTFT −9% to +2%, mean ITL −5% to −1%, mean E2E −5% to −1%." },
	{ "yi-34b", "1 run at TP 2: mean TTFT +9%, mean ITL +2%, mean E2E +2%." },
	{ "llama-4-scout-17b-16e", "4 runs at TP 2: mean TTFT −45% to 0% (too low on the run with "
				   "the longest prompts), mean ITL −15% "
				   "to +5%, mean E2E −15% to +5%." },
};

void html_basis_model(FILE *f, const char *model_id)
{
	fputs("<p>", f);
	for (size_t i = 0; i < sizeof model_accuracy / sizeof *model_accuracy; i++)
		if (!strcmp(model_accuracy[i].model_id, model_id)) {
			html_text(
				f,
				"Real vLLM runs of %s on H100 SXM, simulated against measured: %s",
				model_id, model_accuracy[i].text);
			fputs("</p>\n", f);
			return;
		}
	html_text(f,
		  "No real run of %s checks servesim: the real runs it is checked against (H100 "
		  "SXM) are of "
		  "llama-2-7b, llama-3.1-70b, mistral-nemo-12b, qwen2.5-7b-instruct, yi-34b and "
		  "llama-4-scout-17b-16e. The step model derives %s's costs from its config.json.",
		  model_id, model_id);
	fputs("</p>\n", f);
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
		svg_escape(f, plot_basename(sources[i].label));
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
