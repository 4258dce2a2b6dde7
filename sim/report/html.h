/*
 * html: one self-contained HTML page of results, for mailing to the people
 * a GPU decision is made with.
 *
 * The page holds only inline CSS and inline SVG drawn here (svg.h): no
 * script, no font or image from the network, so it reads the same offline,
 * in a mail client's viewer and printed. Each source gets a section in the
 * same order: the question it answers, the answer first (which GPU, how
 * many, at what cost, under which SLO), the tables and plots, the
 * configuration, and what the numbers rest on (profile sources, the
 * model's accuracy figures), with the servesim version.
 *
 * Sources: a run simulated for the report (a scenario), or a result
 * document (JSON) of sweep, plan or compare, or the JSON of `run --format
 * json`. The result kinds are a table (html_doc.c) so that a new kind
 * (advise) is one row.
 */
#ifndef SERVESIM_HTML_H
#define SERVESIM_HTML_H

#include <jansson.h>

#include "err.h"
#include "inidoc.h"

struct run_result;

struct html_source {
	const char *label;		/* what the user named: a scenario or a file */
	struct run_result *run;		/* a simulated run, or NULL */
	const char *scenario_path;	/* its INI (NULL: the built-in default) */
	const struct inidoc *overrides; /* its --set overrides, or NULL */
	json_t *doc;			/* a result document, or NULL (borrowed) */
};

/* Whether doc is a document the report shows (sweep, plan, compare, or
 * run --format json). Returns 0, or -1 with e naming label and the kind. */
int html_check_doc(json_t *doc, const char *label, struct err *e);

/* Writes the page for sources[0..n) to path (whole or not at all; "-" is
 * stdout). Returns 0, or -1 with e: a document of no known kind, a file
 * that cannot be written. */
int html_report(const char *path, struct html_source *sources, size_t n, struct err *e);

#endif
