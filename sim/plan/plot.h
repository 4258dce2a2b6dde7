/*
 * plot: data files and gnuplot pictures of results.
 *
 * The pictures are drawn by the scripts in plots/ (catalog_dir
 * CATALOG_PLOTS), run by gnuplot as an external program: `gnuplot -e
 * "data='…'; out='…'; term='png'; …" plots/NAME.gp`. Each script takes its
 * data file(s), the output file and the terminal (pngcairo by default,
 * svg on request) from those variables; titles, axis labels and units are
 * in the script. The data files are tab-separated text with a commented
 * header, written whole (temporary file, then rename) before gnuplot
 * runs, so they are there even when gnuplot is not: then the pictures are
 * skipped, not failed, and plot_note tells how to install it.
 *
 * A picture folder (--plot DIR, servesim plot --out DIR) is written whole:
 * in a temporary sibling renamed into place once every file is there
 * (wholedir_stage), so a gnuplot that fails midway leaves no half folder.
 *
 * From a `servesim run --out DIR` folder: TTFT and TPOT CDFs from
 * requests.csv (the per-token ITLs are not in the CSV; each request's TPOT,
 * its mean inter-token gap, stands in for them and the title says so), and
 * KV usage with running and waiting requests over time from timeseries.csv.
 */
#ifndef SERVESIM_PLOT_H
#define SERVESIM_PLOT_H

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

#include "err.h"

struct run_result;

struct plot_opts {
	bool svg;                    /* SVG instead of PNG */
	/* Out: what happened, for plot_note. */
	bool gnuplot_missing;        /* gnuplot was not found: data only */
	int n_images;                /* pictures written */
	int n_data;                  /* data files written */
	char dir[4096];              /* where they went (plot_path) */
	/* On failure: the output could not be written (a folder that cannot
	 * be made, a data file, gnuplot), exit 1; else the input was bad,
	 * exit 2 (plot_path reads and writes). */
	bool write_failed;
};

/* Opens dir/name for writing through a temporary file; plot_data_close
 * renames it into place (returns 0, or -1 with e and no file left when
 * the write failed). plot_data_open returns the stream or NULL with e. */
FILE *plot_data_open(const char *dir, const char *name, struct err *e);
int plot_data_close(FILE *f, const char *dir, const char *name, struct plot_opts *o,
		    struct err *e);

/* Runs plots/<script>.gp with the variables `vars` (gnuplot statements,
 * e.g. "data='d.dat'; series='a b'"), out = dir/<base>.png (or .svg).
 * When gnuplot is not on PATH: sets o->gnuplot_missing and returns 0.
 * Returns -1 with e when the script is missing or gnuplot fails. */
int plot_gnuplot(const char *script, const char *dir, const char *base, const char *vars,
		 struct plot_opts *o, struct err *e);

/* Appends `name='value'; ` to buf (of cap bytes) with value quoted for
 * gnuplot. Returns -1 when it does not fit. */
int plot_var(char *buf, size_t cap, const char *name, const char *value);

/* The same for a text shown in a picture (title, legend, axis label):
 * gnuplot's enhanced-text characters (_ ^ { } @ & ~) are escaped so that
 * "ttft_p99_ms" does not print with subscripts. */
int plot_text(char *buf, size_t cap, const char *name, const char *value);

/* Writes dir/result.json and the document's data files and plots.
 * Returns 0 or -1 with e (a folder or file that cannot be written, a
 * gnuplot that fails). */
int plot_doc(json_t *doc, const char *dir, struct plot_opts *o, struct err *e);

/* Writes a run's CSVs into a folder (report_csv: the report layer, which
 * sits above this one, so the caller passes it in). */
typedef int plot_csv_writer(const char *dir, const struct run_result *res, struct err *e);

/* Writes dir/requests.csv and dir/timeseries.csv of a run with write_csv,
 * then plots them. Returns 0 or -1 with e. */
int plot_run(const struct run_result *res, plot_csv_writer *write_csv, const char *dir,
	     struct plot_opts *o, struct err *e);

/* servesim plot PATH: a result JSON of sweep, plan or compare, or a folder
 * holding one (result.json) or a run's requests.csv and timeseries.csv.
 * Output goes to out_dir (NULL: next to the input; o->dir says where).
 * Returns 0, or -1 with e naming the path that is missing, unreadable or
 * not a result. */
int plot_path(const char *path, const char *out_dir, struct plot_opts *o, struct err *e);

/* One line to stderr: how many pictures were written where, or that
 * gnuplot is missing and how to install it. Cannot fail. */
void plot_note(const char *verb, const char *dir, const struct plot_opts *o);

#endif
