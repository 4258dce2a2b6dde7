/*
 * svg: small plots drawn as inline SVG, for the HTML report: lines, steps
 * (CDFs), points with error bars (confidence intervals) and bars, on linear
 * or logarithmic axes, or a categorical x axis.
 *
 * Invariants of a picture: every label is escaped text (no markup gets
 * through); axis ticks are 1-2-5 steps (linear) or decades with 2 and 5
 * between them when the range is short (log), spaced so that their labels
 * never overlap; values a log axis cannot show (<= 0) and non-finite ones
 * are left out, never drawn at an edge. The output is one <svg> element
 * with class "plot" and one <g class="series"> per series, so a test can
 * find them. Plain C stdio, no allocation beyond the caller's arrays.
 */
#ifndef SERVESIM_SVG_H
#define SERVESIM_SVG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

enum svg_kind {
	SVG_LINE,   /* straight segments between points */
	SVG_STEP,   /* a staircase: right then up (an empirical CDF) */
	SVG_POINTS, /* markers joined by a thin line, with err as bars */
	SVG_BARS,   /* one bar per point from 0 (categorical x) */
};

struct svg_series {
	const char *name;    /* legend text */
	const char *color;   /* CSS colour, e.g. "#1f77b4" */
	const double *x, *y; /* n points; x is the category index for a categorical axis */
	const double *err;   /* ± half-width of an interval at each point, or NULL */
	size_t n;
	enum svg_kind kind;
};

struct svg_mark { /* a vertical reference line (a percentile, an SLO) */
	double x;
	const char *label;
	const char *color;
};

struct svg_plot {
	const char *title;
	const char *xlabel, *ylabel;
	bool xlog, ylog;
	bool y_from_zero; /* linear y: start at 0 whatever the data */
	bool y_fixed;	  /* use ymin..ymax as given */
	double ymin, ymax;
	const char *const *xcats; /* categorical x labels (n_xcats), or NULL */
	size_t n_xcats;
	const struct svg_series *series;
	size_t n_series;
	const struct svg_mark *marks;
	size_t n_marks;
	int width, height; /* pixels; 0: 516 × 330 (two side by side on the page) */
};

/* Writes the plot as one <svg> element. Cannot fail (stdio errors show
 * on the stream, for the caller's commit). */
void svg_plot(FILE *f, const struct svg_plot *p);

/* Writes s with &, <, >, " and ' escaped, for HTML and SVG text. */
void svg_escape(FILE *f, const char *s);

#endif
