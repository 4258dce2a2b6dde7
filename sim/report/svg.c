#include "svg.h"

#include <math.h>
#include <string.h>

#define FONT_PX	  12.0
#define CHAR_PX	  6.6 /* mean advance of a 12 px sans-serif digit or letter */
#define MAX_TICKS 24

void svg_escape(FILE *f, const char *s)
{
	for (; s && *s; s++) {
		switch (*s) {
		case '&':
			fputs("&amp;", f);
			break;
		case '<':
			fputs("&lt;", f);
			break;
		case '>':
			fputs("&gt;", f);
			break;
		case '"':
			fputs("&quot;", f);
			break;
		case '\'':
			fputs("&#39;", f);
			break;
		default:
			fputc(*s, f);
		}
	}
}

/* One axis: its range, scale and ticks (values with labels; a tick with an
 * empty label is a grid line only). */
struct axis {
	bool log, cat;
	double lo, hi; /* data units */
	double p0, p1; /* pixels lo, hi map to */
	size_t n_ticks;
	double tick[MAX_TICKS];
	char label[MAX_TICKS][24];
};

static double to_px(const struct axis *a, double v)
{
	double t = a->log ? (log10(v) - log10(a->lo)) / (log10(a->hi) - log10(a->lo))
			  : (v - a->lo) / (a->hi - a->lo);
	if (t < 0)
		t = 0;
	if (t > 1)
		t = 1;
	return a->p0 + t * (a->p1 - a->p0);
}

static bool showable(const struct axis *a, double v)
{
	return isfinite(v) && (!a->log || v > 0);
}

/* A tick label: %g-like, k and M for large values, no trailing zeros. */
static void tick_text(char *out, size_t cap, double v, double step)
{
	double av = fabs(v);
	const char *unit = "";
	if (av >= 1e6 && step >= 1e5) {
		v /= 1e6, step /= 1e6, unit = "M";
	} else if (av >= 1e4 && step >= 1e3) {
		v /= 1e3, step /= 1e3, unit = "k";
	}
	int dec = step > 0 && step < 1 ? (int)ceil(-log10(step) - 1e-9) : 0;
	if (step > 0 && fabs(step * pow(10, dec) - round(step * pow(10, dec))) > 1e-6)
		dec++; /* 2.5, 0.25 */
	if (dec > 9)
		dec = 9;
	snprintf(out, cap, "%.*f%s", dec, fabs(v) < step * 1e-6 ? 0.0 : v, unit);
}

static double nice_step(double raw)
{
	double p = pow(10, floor(log10(raw))), m = raw / p;
	m = m <= 1 ? 1 : m <= 2 ? 2 : m <= 2.5 ? 2.5 : m <= 5 ? 5 : 10;
	return m * p;
}

/* Widest label in pixels. */
static double labels_px(const struct axis *a)
{
	double w = 0;
	for (size_t i = 0; i < a->n_ticks; i++)
		if (strlen(a->label[i]) * CHAR_PX > w)
			w = (double)strlen(a->label[i]) * CHAR_PX;
	return w;
}

/* Linear ticks with at most `fit` labels along the axis. */
static void linear_ticks(struct axis *a, double lo, double hi, double room_px, bool horizontal,
			 bool fixed)
{
	if (!(hi > lo)) {
		double d = fabs(lo) > 0 ? fabs(lo) * 0.1 : 1;
		lo -= d;
		hi += d;
	}
	for (int target = 6; target >= 2; target--) {
		double step = nice_step((hi - lo) / target);
		double l = fixed ? lo : floor(lo / step + 1e-9) * step,
		       h = fixed ? hi : ceil(hi / step - 1e-9) * step;
		a->lo = l;
		a->hi = h;
		a->n_ticks = 0;
		for (double v = ceil(l / step - 1e-9) * step;
		     v <= h + step * 1e-9 && a->n_ticks < MAX_TICKS; v += step) {
			a->tick[a->n_ticks] = v;
			tick_text(a->label[a->n_ticks], sizeof a->label[0], v, step);
			a->n_ticks++;
		}
		double need = horizontal ? labels_px(a) + 10 : FONT_PX * 1.8;
		if (a->n_ticks < 2 || room_px / (double)(a->n_ticks - 1) >= need)
			return;
	}
}

/* Log ticks: decades, with 2 and 5 when there are few; labels dropped
 * (the grid line stays) where they would overlap. */
static void log_ticks(struct axis *a, double lo, double hi, bool horizontal)
{
	if (!(lo > 0))
		lo = hi > 0 ? hi / 10 : 1;
	if (!(hi > lo))
		hi = lo * 10;
	int d0 = (int)floor(log10(lo) + 1e-9), d1 = (int)ceil(log10(hi) - 1e-9);
	if (d1 <= d0)
		d1 = d0 + 1;
	int decades = d1 - d0, every = 1;
	while (decades / every > 10)
		every++;
	a->lo = pow(10, d0);
	a->hi = pow(10, d1);
	/* With few decades, start and end at a 1-2-5 value near the data. */
	if (decades <= 2) {
		static const double m[] = { 1, 2, 5 };
		for (int i = 2; i >= 0; i--)
			if (m[i] * a->lo <= lo) {
				a->lo *= m[i];
				break;
			}
		for (int i = 0; i < 3; i++)
			if (m[i] * pow(10, d1 - 1) >= hi) {
				a->hi = m[i] * pow(10, d1 - 1);
				break;
			}
	}
	a->n_ticks = 0;
	for (int d = d0; d <= d1 && a->n_ticks < MAX_TICKS; d++)
		for (int k = 0; k < 3 && a->n_ticks < MAX_TICKS; k++) {
			double mult = k == 0 ? 1 : k == 1 ? 2 : 5;
			double v = mult * pow(10, d);
			if (v < a->lo * (1 - 1e-9) || v > a->hi * (1 + 1e-9))
				continue;
			bool major = k == 0 && (d - d0) % every == 0;
			if (!major && decades > 2)
				continue;
			a->tick[a->n_ticks] = v;
			tick_text(a->label[a->n_ticks], sizeof a->label[0], v, v < 1 ? v : 1);
			a->n_ticks++;
		}
	/* Drop labels that would run into the previous shown one. */
	double last_px = -1e9, last_w = 0;
	for (size_t i = 0; i < a->n_ticks; i++) {
		double px = to_px(a, a->tick[i]);
		double w = horizontal ? (double)strlen(a->label[i]) * CHAR_PX : FONT_PX;
		if (fabs(px - last_px) < (w + last_w) / 2 + 8) {
			a->label[i][0] = '\0';
			continue;
		}
		last_px = px;
		last_w = w;
	}
}

static void data_range(const struct svg_plot *p, bool x, const struct axis *a, double *lo,
		       double *hi)
{
	*lo = INFINITY;
	*hi = -INFINITY;
	for (size_t s = 0; s < p->n_series; s++) {
		const struct svg_series *se = &p->series[s];
		for (size_t i = 0; i < se->n; i++) {
			double v = x ? se->x[i] : se->y[i];
			double e = !x && se->err && isfinite(se->err[i]) ? se->err[i] : 0;
			if (!showable(a, v))
				continue;
			if (v + e > *hi)
				*hi = v + e;
			double l = a->log || e >= v ? v : v - e;
			if (l < *lo)
				*lo = l;
			if (se->kind == SVG_BARS && !x && 0 < *lo)
				*lo = 0;
		}
	}
	if (x)
		for (size_t m = 0; m < p->n_marks; m++)
			if (showable(a, p->marks[m].x)) {
				*lo = fmin(*lo, p->marks[m].x);
				*hi = fmax(*hi, p->marks[m].x);
			}
	if (!isfinite(*lo)) {
		*lo = a->log ? 1 : 0;
		*hi = a->log ? 10 : 1;
	}
}

static void series_path(FILE *f, const struct svg_series *se, const struct axis *x,
			const struct axis *y)
{
	bool started = false;
	for (size_t i = 0; i < se->n; i++) {
		if (!showable(x, se->x[i]) || !showable(y, se->y[i]))
			continue;
		double px = to_px(x, se->x[i]), py = to_px(y, se->y[i]);
		if (!started)
			fprintf(f, "M%.1f %.1f", px, py);
		else if (se->kind == SVG_STEP)
			fprintf(f, "H%.1f V%.1f", px, py);
		else
			fprintf(f, "L%.1f %.1f", px, py);
		started = true;
	}
}

static void draw_series(FILE *f, const struct svg_plot *p, size_t s, size_t bar_i, size_t n_bars,
			const struct axis *x, const struct axis *y)
{
	const struct svg_series *se = &p->series[s];
	fputs("<g class=\"series\" data-name=\"", f);
	svg_escape(f, se->name);
	fputs("\">", f);
	if (se->kind == SVG_BARS) {
		double cat_px = (x->p1 - x->p0) / (x->hi - x->lo),
		       w = 0.8 * cat_px / (double)n_bars;
		double base = to_px(y, y->log ? y->lo : fmax(y->lo, 0));
		for (size_t i = 0; i < se->n; i++) {
			if (!showable(y, se->y[i]))
				continue;
			double cx = to_px(x, se->x[i]) - 0.4 * cat_px + w * (double)bar_i,
			       py = to_px(y, se->y[i]);
			fprintf(f,
				"<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
				"fill=\"%s\"/>",
				cx, fmin(py, base), w * 0.92, fabs(base - py), se->color);
		}
	} else {
		fputs("<path fill=\"none\" stroke=\"", f);
		fputs(se->color, f);
		fprintf(f, "\" stroke-width=\"%s\" d=\"", se->kind == SVG_POINTS ? "1.2" : "2");
		series_path(f, se, x, y);
		fputs("\"/>", f);
	}
	if (se->kind == SVG_POINTS)
		for (size_t i = 0; i < se->n; i++) {
			if (!showable(x, se->x[i]) || !showable(y, se->y[i]))
				continue;
			double px = to_px(x, se->x[i]), py = to_px(y, se->y[i]);
			if (se->err && isfinite(se->err[i]) && se->err[i] > 0) {
				double lo = se->y[i] - se->err[i], hi = se->y[i] + se->err[i];
				double plo = showable(y, lo) ? to_px(y, lo) : y->p0,
				       phi = to_px(y, hi);
				fprintf(f,
					"<path stroke=\"%s\" stroke-width=\"1.2\" d=\"M%.1f "
					"%.1fV%.1fM%.1f %.1fh8M%.1f %.1fh8\"/>",
					se->color, px, plo, phi, px - 4, plo, px - 4, phi);
			}
			fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3.2\" fill=\"%s\"/>", px,
				py, se->color);
		}
	fputs("</g>\n", f);
}

static void legend(FILE *f, const struct svg_plot *p, double left, double top, double right)
{
	double x = left, yy = top;
	for (size_t s = 0; s < p->n_series; s++) {
		const char *name = p->series[s].name ? p->series[s].name : "";
		double w = 18 + (double)strlen(name) * CHAR_PX + 14;
		if (x + w > right && x > left) {
			x = left;
			yy += 16;
		}
		fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"12\" height=\"4\" fill=\"%s\"/>", x,
			yy - 4, p->series[s].color);
		fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" class=\"lg\">", x + 16, yy);
		svg_escape(f, name);
		fputs("</text>", f);
		x += w;
	}
}

void svg_plot(FILE *f, const struct svg_plot *p)
{
	double W = p->width ? p->width : 516, H = p->height ? p->height : 330;
	size_t legend_rows = 1;
	{
		double x = 0;
		for (size_t s = 0; s < p->n_series; s++) {
			double w = 18 +
				   (double)strlen(p->series[s].name ? p->series[s].name : "") *
					   CHAR_PX +
				   14;
			if (x + w > W - 80 && x > 0) {
				legend_rows++;
				x = 0;
			}
			x += w;
		}
	}
	double top = 30 + 16.0 * (double)legend_rows, bottom = H - 44, left = 64, right = W - 18;
	if (p->xcats) {
		/* Room for the slanted category labels (20 degrees): their height. */
		size_t longest = 0;
		for (size_t i = 0; i < p->n_xcats; i++)
			if (p->xcats[i] && strlen(p->xcats[i]) > longest)
				longest = strlen(p->xcats[i]);
		bottom -= fmin(90, 8 + (double)longest * CHAR_PX * 0.342);
	}
	struct axis x = { .log = p->xlog && !p->xcats, .cat = p->xcats != NULL };
	struct axis y = { .log = p->ylog };
	double lo, hi;
	/* y first (its labels set the left margin), then x. */
	y.p0 = bottom;
	y.p1 = top;
	data_range(p, false, &y, &lo, &hi);
	if (p->y_fixed)
		lo = p->ymin, hi = p->ymax;
	else if (p->y_from_zero && !y.log && lo > 0)
		lo = 0;
	if (y.log)
		log_ticks(&y, lo, hi, false);
	else
		linear_ticks(&y, lo, hi, bottom - top, false, p->y_fixed);
	left = fmax(left, labels_px(&y) + 30);
	x.p0 = left;
	x.p1 = right;
	if (x.cat) {
		x.lo = -0.5;
		x.hi = (double)p->n_xcats - 0.5;
		x.n_ticks = 0;
		for (size_t i = 0; i < p->n_xcats && i < MAX_TICKS; i++) {
			x.tick[i] = (double)i;
			snprintf(x.label[i], sizeof x.label[0], "%s", p->xcats[i]);
			x.n_ticks++;
		}
	} else {
		data_range(p, true, &x, &lo, &hi);
		if (x.log)
			log_ticks(&x, lo, hi, true);
		else
			linear_ticks(&x, lo, hi, right - left, true, false);
	}

	fprintf(f,
		"<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"plot\" viewBox=\"0 0 %.0f "
		"%.0f\" width=\"%.0f\" height=\"%.0f\" role=\"img\">\n",
		W, H, W, H);
	fputs("<title>", f);
	svg_escape(f, p->title);
	fputs("</title>\n<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n", f);
	fprintf(f, "<text x=\"%.1f\" y=\"18\" class=\"tt\">", left);
	svg_escape(f, p->title);
	fputs("</text>\n", f);
	legend(f, p, left, 36, right);
	/* Grid and tick labels. */
	fputs("<g class=\"grid\">", f);
	for (size_t i = 0; i < y.n_ticks; i++) {
		double py = to_px(&y, y.tick[i]);
		fprintf(f, "<path d=\"M%.1f %.1fH%.1f\"/>", left, py, right);
		if (y.label[i][0])
			fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%s</text>",
				left - 6, py + 4, y.label[i]);
	}
	for (size_t i = 0; i < x.n_ticks; i++) {
		double px = to_px(&x, x.tick[i]);
		if (!x.cat)
			fprintf(f, "<path d=\"M%.1f %.1fV%.1f\"/>", px, top, bottom);
		if (!x.label[i][0])
			continue;
		if (x.cat) {
			fprintf(f,
				"<text transform=\"translate(%.1f %.1f) rotate(-20)\" "
				"text-anchor=\"end\">",
				px + 4, bottom + 16);
			svg_escape(f, x.label[i]);
			fputs("</text>", f);
		} else {
			fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>",
				px, bottom + 16, x.label[i]);
		}
	}
	fputs("</g>\n", f);
	fprintf(f, "<path class=\"frame\" d=\"M%.1f %.1fV%.1fH%.1f\"/>\n", left, top, bottom,
		right);
	/* Series, then the marks over them. */
	size_t n_bars = 0, bar_i = 0;
	for (size_t s = 0; s < p->n_series; s++)
		n_bars += p->series[s].kind == SVG_BARS;
	for (size_t s = 0; s < p->n_series; s++) {
		draw_series(f, p, s, bar_i, n_bars ? n_bars : 1, &x, &y);
		bar_i += p->series[s].kind == SVG_BARS;
	}
	for (size_t m = 0; m < p->n_marks; m++) {
		if (!showable(&x, p->marks[m].x))
			continue;
		double px = to_px(&x, p->marks[m].x);
		fprintf(f, "<path stroke=\"%s\" stroke-dasharray=\"5 4\" d=\"M%.1f %.1fV%.1f\"/>",
			p->marks[m].color, px, top, bottom);
		fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" class=\"mk\" fill=\"%s\">", px + 3,
			top + 12 + 13.0 * (double)m, p->marks[m].color);
		svg_escape(f, p->marks[m].label);
		fputs("</text>\n", f);
	}
	/* Axis titles. */
	fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" class=\"ax\">",
		(left + right) / 2, H - 8);
	svg_escape(f, p->xlabel);
	fprintf(f,
		"</text>\n<text transform=\"translate(14 %.1f) rotate(-90)\" "
		"text-anchor=\"middle\" class=\"ax\">",
		(top + bottom) / 2);
	svg_escape(f, p->ylabel);
	fputs("</text>\n</svg>\n", f);
}
