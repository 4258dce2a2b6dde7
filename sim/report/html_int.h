/*
 * html_int: what the HTML report's writers share: escaped text, tables,
 * numbers, colours and the closing sections (configuration, what the
 * numbers rest on). html.c writes the page, html_run.c a simulated run,
 * html_doc.c the kinds of result document and what their sections share,
 * html_sweep.c a sweep, html_plan.c a plan and a compare.
 */
#ifndef SERVESIM_HTML_INT_H
#define SERVESIM_HTML_INT_H

#include <jansson.h>
#include <stdio.h>

#include "html.h"
#include "plot.h"
#include "svg.h"

#define HTML_N_COLORS 8
extern const char *const html_colors[HTML_N_COLORS];

/* printf-style text, escaped. Cannot fail. */
void html_text(FILE *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* A number with `dec` decimals into buf, "–" when not finite. */
const char *html_num(char *buf, size_t cap, double v, int dec);

/* A table: html_table(f, caption, heads, n) opens it; html_row adds n
 * escaped cells (a cell starting with '\t' is right-aligned as a number);
 * html_table_end closes it. */
void html_table(FILE *f, const char *caption, const char *const *heads, size_t n);
void html_row(FILE *f, const char *const *cells, size_t n);
void html_table_end(FILE *f);

/* The answer box: <div class="answer"> … </div>, its first line bold. */
void html_answer_begin(FILE *f, const char *headline);
void html_answer_end(FILE *f);

/* The question a section answers, as its heading. */
void html_question(FILE *f, const char *question);

/* What a hardware profile's numbers rest on (its sources) and how far
 * real runs check it (the accuracy figures), for the device id hw_id.
 * Loads the profile; says so when it cannot. Cannot fail. */
void html_basis_hardware(FILE *f, const char *hw_id);

/* How far real runs of the model check the predictions (the errors of
 * the H100 runs of that model), or that none does. Cannot fail. */
void html_basis_model(FILE *f, const char *model_id);

/* Section writers. Each returns 0 or -1 with e. */
int html_run_section(FILE *f, struct html_source *s, struct err *e);
int html_doc_section(FILE *f, struct html_source *s, struct err *e);

/* One line for the page title: what the source is about. */
void html_doc_title(char *out, size_t cap, const struct html_source *s);

/* What the document sections share (html_doc.c). None can fail.
 * html_slo_words: a search's SLO, "ttft_p99_ms ≤ 2000, …" or "no SLO".
 * html_doc_configuration: the scenario (file name), --set, the search.
 * html_doc_basis: the hardware profile of each device of items (or of
 *   the document's scenario), with its sources and accuracy.
 * html_cell_num: a right-aligned number cell for html_row.
 * html_bar_plot: one bar per category. */
void html_slo_words(char *out, size_t cap, json_t *doc);
void html_doc_configuration(FILE *f, json_t *doc);
void html_doc_basis(FILE *f, json_t *doc, json_t *items);
void html_cell_num(char *buf, size_t cap, double v, int dec);
void html_bar_plot(FILE *f, const char *title, const char *xlabel, const char *ylabel,
		   const char *name, const char *color, const char *const *cats, const double *idx,
		   const double *v, size_t n);

/* Each kind's title (the question) and section. Return 0 or -1 with e. */
void html_sweep_title(char *out, size_t cap, json_t *doc);
int html_sweep_section(FILE *f, json_t *doc, struct err *e);
void html_plan_title(char *out, size_t cap, json_t *doc);
int html_plan_section(FILE *f, json_t *doc, struct err *e);
void html_compare_title(char *out, size_t cap, json_t *doc);
int html_compare_section(FILE *f, json_t *doc, struct err *e);

#endif
