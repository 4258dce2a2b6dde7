#include "plot.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "catalog.h"
#include "csv.h"
#include "num.h"
#include "outfmt.h"
#include "pathname.h"
#include "resultdoc.h"
#include "run.h"
#include "stats.h"
#include "wholefile.h"

extern char **environ;

/* Ends a stage (wholefile.h) the pictures and data were written in: into
 * place when rc is 0, else removed. Returns 0 or -1 (with e). */
static int stage_end(struct wholedir *d, int rc, struct err *e)
{
	if (rc) {
		wholedir_stage_abort(d);
		/* The message names the folder the user asked for, not the
		 * stage that is gone. */
		char *at;
		size_t n = strlen(d->stage);
		if (e && (at = strstr(e->msg, d->stage))) {
			char rest[ERR_MSG_MAX];
			snprintf(rest, sizeof rest, "%s", at + n);
			snprintf(at, sizeof e->msg - (size_t)(at - e->msg), "%s%s", d->dir, rest);
		}
		return -1;
	}
	return wholedir_stage_commit(d, e);
}

/* dir/name in out (cap PATH_MAX); false when it does not fit. */
static bool data_path(char *out, size_t cap, const char *dir, const char *name)
{
	int n = snprintf(out, cap, "%s/%s", dir, name);
	return n >= 0 && (size_t)n < cap;
}

FILE *plot_data_open(const char *dir, const char *name, struct err *e)
{
	char path[PATH_MAX];
	if (!data_path(path, sizeof path, dir, name)) {
		err_set(e, "%s: the path is too long", dir);
		return NULL;
	}
	return wholefile_open(path, e);
}

int plot_data_close(FILE *f, const char *dir, const char *name, struct plot_opts *o,
		    struct err *e)
{
	char path[PATH_MAX];
	if (!data_path(path, sizeof path, dir, name)) {   /* it fitted when opened */
		fclose(f);
		return err_set(e, "%s: the path is too long", dir);
	}
	if (wholefile_commit(f, path, e)) {
		o->write_failed = true;
		return -1;
	}
	o->n_data++;
	return 0;
}

int plot_var(char *buf, size_t cap, const char *name, const char *value)
{
	size_t len = strlen(buf);
	int n = snprintf(buf + len, cap - len, "%s='", name);
	if (n < 0 || (size_t)n >= cap - len)
		return -1;
	len += (size_t)n;
	for (const char *s = value; *s; s++) {
		if (len + 3 >= cap)
			return -1;
		if (*s == '\'')
			buf[len++] = '\'';   /* gnuplot: '' inside '…' is one quote */
		buf[len++] = *s;
	}
	n = snprintf(buf + len, cap - len, "'; ");
	return n < 0 || (size_t)n >= cap - len ? -1 : 0;
}

int plot_text(char *buf, size_t cap, const char *name, const char *value)
{
	char esc[2048];
	size_t n = 0;
	for (const char *s = value; *s && n + 3 < sizeof esc; s++) {
		if (strchr("_^{}@&~", *s))
			esc[n++] = '\\';
		esc[n++] = *s;
	}
	esc[n] = '\0';
	return plot_var(buf, cap, name, esc);
}

/* The last line of file, into out (gnuplot's error, for the message). */
static void last_line(const char *file, char *out, size_t cap)
{
	out[0] = '\0';
	FILE *f = fopen(file, "r");
	if (!f)
		return;
	char line[512];
	while (fgets(line, sizeof line, f))
		if (line[0] != '\n')
			snprintf(out, cap, "%s", line);
	fclose(f);
	size_t n = strlen(out);
	if (n && out[n - 1] == '\n')
		out[n - 1] = '\0';
}

int plot_gnuplot(const char *script, const char *dir, const char *base, const char *vars,
		 struct plot_opts *o, struct err *e)
{
	char plots_dir[CATALOG_DIR_MAX];
	const char *plots = catalog_dir(CATALOG_PLOTS, plots_dir, sizeof plots_dir);
	char gp[4200], exe[4200], out[4200], all[16384], errfile[4200];
	snprintf(gp, sizeof gp, "%s/%s.gp", plots ? plots : "plots", script);
	if (!plots || access(gp, R_OK) != 0)
		return err_set(e, "%s: the gnuplot script is missing (set SERVESIM_DATA_DIR to the folder holding plots/)",
			       gp);
	if (catalog_find_exe("gnuplot", exe, sizeof exe)) {
		o->gnuplot_missing = true;
		return 0;
	}
	snprintf(out, sizeof out, "%s/%s.%s", dir, base, o->svg ? "svg" : "png");
	snprintf(all, sizeof all, "%s", vars);
	if (plot_var(all, sizeof all, "out", out) || plot_var(all, sizeof all, "term", o->svg ? "svg" : "png"))
		return err_set(e, "%s: the plot's variables are too long", out);
	if (wholefile_temp(errfile, sizeof errfile, "gnuplot", "", e))
		return -1;
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 2, errfile, O_WRONLY | O_TRUNC, 0);
	char *argv[] = { exe, "-e", all, gp, NULL };
	pid_t pid;
	int rc = posix_spawn(&pid, exe, &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	int status = 0;
	if (rc == 0)
		while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
		}
	char why[512];
	last_line(errfile, why, sizeof why);
	unlink(errfile);
	o->write_failed = rc != 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0;
	if (rc != 0)
		return err_set(e, "%s: cannot run gnuplot: %s", exe, strerror(rc));
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		return err_set(e, "%s: gnuplot failed on %s: %s", out, gp, why[0] ? why : "(no message)");
	o->n_images++;
	return 0;
}

int plot_doc(json_t *doc, const char *dir, struct plot_opts *o, struct err *e)
{
	const struct resultdoc_kind *k = resultdoc_kind_of(doc, e);
	struct wholedir d;
	if (!k || wholedir_stage(&d, dir, e))
		return -1;
	FILE *f = plot_data_open(d.stage, "result.json", e);
	if (!f)
		return stage_end(&d, -1, e);
	resultdoc_print(f, doc, FMT_JSON);
	int rc = plot_data_close(f, d.stage, "result.json", o, e) || k->plot(doc, d.stage, o, e) ? -1 : 0;
	return stage_end(&d, rc, e);
}

/* ---- a run's folder: requests.csv and timeseries.csv ---- */

/* The record of line (its line break dropped) in row; -1 for an unclosed
 * quote. */
static int split_line(const char *line, struct csv_row *row)
{
	return csv_split(line, strcspn(line, "\r\n"), row);
}

/* Column index of name in a split header, or -1. */
static int column(const struct csv_row *header, const char *name)
{
	for (size_t i = 0; i < header->n; i++)
		if (!strcmp(header->f[i], name))
			return (int)i;
	return -1;
}

/* Field i of a split line as a number (strictly: the whole field). Returns
 * 0, or -1 when the line has no field i or it is not a number. */
static int field_num(const struct csv_row *row, int i, double *v)
{
	return (size_t)i < row->n ? num_parse_double(row->f[i], v) : -1;
}

/* The empirical CDF of x (seconds) in ms, at most 2001 points (every
 * 1/2000 of the fraction, plus the largest value): enough for a smooth
 * line, small for a million requests. p50 and p99 as the reports compute
 * them (stats.h). */
static int write_cdf(const char *dir, const char *name, struct samples *x, struct plot_opts *o,
		     double *p50, double *p99, struct err *e)
{
	samples_sort(x);
	FILE *f = plot_data_open(dir, name, e);
	if (!f)
		return -1;
	fprintf(f, "# value_ms\tfraction_of_requests_at_or_below\n");
	size_t step = x->n > 2000 ? x->n / 2000 : 1;
	for (size_t i = 0; i < x->n; i += step)
		fprintf(f, "%.6f\t%.6f\n", x->v[i] * 1e3, (double)(i + 1) / (double)x->n);
	if (x->n && (x->n - 1) % step)
		fprintf(f, "%.6f\t%.6f\n", x->v[x->n - 1] * 1e3, 1.0);
	*p50 = samples_percentile(x, 50) * 1e3;
	*p99 = samples_percentile(x, 99) * 1e3;
	return plot_data_close(f, dir, name, o, e);
}

static int read_requests(const char *path, struct samples *ttft, struct samples *tpot, struct err *e)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return err_set(e, "%s: cannot open: %s", path, strerror(errno));
	char *line = NULL;
	size_t cap = 0;
	struct csv_row row = { 0 };
	int rc = 0;
	if (getline(&line, &cap, f) < 0 || split_line(line, &row) < 0) {
		rc = err_set(e, "%s:1: expected the header of servesim run --out's requests.csv", path);
		goto out;
	}
	int ct = column(&row, "ttft_s"), cp = column(&row, "tpot_s"), cs = column(&row, "status");
	int co = column(&row, "output_tokens");
	if (ct < 0 || cp < 0 || cs < 0 || co < 0) {
		rc = err_set(e, "%s:1: expected columns ttft_s, tpot_s, output_tokens and status (servesim run --out)",
			     path);
		goto out;
	}
	int lineno = 1;
	while (getline(&line, &cap, f) > 0) {
		lineno++;
		if (split_line(line, &row) < 0) {
			rc = err_set(e, "%s:%d: expected a CSV record, got a quote that is not closed", path, lineno);
			goto out;
		}
		if ((size_t)cs >= row.n || strcmp(row.f[cs], "ok"))
			continue;
		double t, p, n;
		if (field_num(&row, ct, &t) || field_num(&row, co, &n) || (n > 1 && field_num(&row, cp, &p))) {
			rc = err_set(e, "%s:%d: expected numbers under ttft_s, tpot_s and output_tokens", path,
				     lineno);
			goto out;
		}
		samples_add(ttft, t);
		if (n > 1)
			samples_add(tpot, p);
	}
out:
	csv_row_free(&row);
	free(line);
	fclose(f);
	return rc;
}

/* itl_histogram.csv (value, tokens) → itl_cdf.dat (ms, fraction of
 * tokens at or below), with the p50 and p99 of the tokens. */
static int write_itl_cdf(const char *in_path, const char *dir, struct plot_opts *o, double *p50,
			 double *p99, struct err *e)
{
	FILE *in = fopen(in_path, "r");
	if (!in)
		return err_set(e, "%s: cannot open: %s", in_path, strerror(errno));
	struct samples val = { 0 }, cnt = { 0 };   /* in file order: the values ascend */
	struct csv_row row = { 0 };
	char *line = NULL;
	size_t cap = 0;
	int lineno = 0, rc = 0;
	double total = 0;
	while (getline(&line, &cap, in) > 0) {
		if (++lineno == 1)
			continue;   /* header */
		double v, c;
		if (split_line(line, &row) < 2 || field_num(&row, 0, &v) || field_num(&row, 1, &c)) {
			rc = err_set(e, "%s:%d: expected itl_s,tokens", in_path, lineno);
			break;
		}
		samples_add(&val, v);
		samples_add(&cnt, c);
		total += c;
	}
	csv_row_free(&row);
	free(line);
	fclose(in);
	FILE *f = rc ? NULL : plot_data_open(dir, "itl_cdf.dat", e);
	if (!rc && !f)
		rc = -1;
	if (!rc) {
		fprintf(f, "# value_ms\tfraction_of_tokens_at_or_below\n");
		double acc = 0;
		*p50 = *p99 = 0;
		for (size_t i = 0; i < val.n; i++) {
			acc += cnt.v[i];
			if (!*p50 && acc >= 0.50 * total)
				*p50 = val.v[i] * 1e3;
			if (!*p99 && acc >= 0.99 * total)
				*p99 = val.v[i] * 1e3;
			fprintf(f, "%.6f\t%.6f\n", val.v[i] * 1e3, total > 0 ? acc / total : 0);
		}
		rc = plot_data_close(f, dir, "itl_cdf.dat", o, e);
	}
	samples_free(&val);
	samples_free(&cnt);
	return rc;
}

/* A run folder's pictures. subtitle: what ran (NULL: the request count
 * alone; the folder's name would say nothing and its path too much). */
static int plot_run_dir(const char *in, const char *out, const char *subtitle, struct plot_opts *o,
			struct err *e)
{
	char path[4200], ts[4200];
	snprintf(path, sizeof path, "%s/requests.csv", in);
	snprintf(ts, sizeof ts, "%s/timeseries.csv", in);
	struct samples ttft = { 0 }, tpot = { 0 };
	double t50 = 0, t99 = 0, p50 = 0, p99 = 0;
	int rc = read_requests(path, &ttft, &tpot, e);
	if (!rc)
		rc = write_cdf(out, "ttft_cdf.dat", &ttft, o, &t50, &t99, e);
	if (!rc)
		rc = write_cdf(out, "tpot_cdf.dat", &tpot, o, &p50, &p99, e);
	char hist[4200];
	double i50 = 0, i99 = 0;
	snprintf(hist, sizeof hist, "%s/itl_histogram.csv", in);
	if (!rc)
		rc = write_itl_cdf(hist, out, o, &i50, &i99, e);
	char sub[600];
	snprintf(sub, sizeof sub, "%s%s%zu requests", subtitle ? subtitle : "", subtitle ? ", " : "", ttft.n);
	samples_free(&ttft);
	samples_free(&tpot);
	if (rc)
		return -1;
	char vars[16384] = "", num[128], d1[4200], d2[4200], d3[4200];
	snprintf(d1, sizeof d1, "%s/ttft_cdf.dat", out);
	snprintf(d2, sizeof d2, "%s/tpot_cdf.dat", out);
	snprintf(d3, sizeof d3, "%s/itl_cdf.dat", out);
	int bad = plot_var(vars, sizeof vars, "ttft", d1) || plot_var(vars, sizeof vars, "tpot", d2) ||
		  plot_var(vars, sizeof vars, "itl", d3) || plot_text(vars, sizeof vars, "subtitle", sub);
	snprintf(num, sizeof num, "%.1f %.1f %.2f %.2f %.2f %.2f", t50, t99, p50, p99, i50, i99);
	bad = bad || plot_var(vars, sizeof vars, "marks", num);
	if (bad)
		return err_set(e, "%s: the plot's variables are too long", out);
	if (plot_gnuplot("cdf", out, "latency_cdf", vars, o, e))
		return -1;
	if (access(ts, R_OK) != 0)
		return err_set(e, "%s: cannot read: %s", ts, strerror(errno));
	vars[0] = '\0';
	if (plot_var(vars, sizeof vars, "data", ts) || plot_text(vars, sizeof vars, "subtitle", sub))
		return err_set(e, "%s: the plot's variables are too long", out);
	return plot_gnuplot("timeseries", out, "timeseries", vars, o, e);
}

int plot_run(const struct run_result *res, plot_csv_writer *write_csv, const char *dir,
	     struct plot_opts *o, struct err *e)
{
	struct wholedir d;
	if (wholedir_stage(&d, dir, e))
		return -1;
	if (write_csv(d.stage, res, e))
		return stage_end(&d, -1, e);
	o->n_data += 3;
	char sub[512];
	snprintf(sub, sizeof sub, "%s on %s, %s", res->model.id, res->hw.id,
		 res->sc.path[0] ? pathname_base(res->sc.path) : "built-in default");
	return stage_end(&d, plot_run_dir(d.stage, d.stage, sub, o, e), e);
}

int plot_path(const char *path, const char *out_dir, struct plot_opts *o, struct err *e)
{
	struct stat st;
	if (stat(path, &st) != 0)
		return err_set(e, "%s: cannot open: %s", path, strerror(errno));
	char buf[4200];
	if (S_ISDIR(st.st_mode)) {
		snprintf(buf, sizeof buf, "%s/requests.csv", path);
		if (access(buf, R_OK) == 0) {
			snprintf(o->dir, sizeof o->dir, "%s", out_dir ? out_dir : path);
			struct wholedir d;
			if (wholedir_stage(&d, o->dir, e)) {
				o->write_failed = true;
				return -1;
			}
			int rc = plot_run_dir(path, d.stage, NULL, o, e);
			o->write_failed |= rc == 0;   /* then only the commit can fail */
			return stage_end(&d, rc, e);
		}
		snprintf(buf, sizeof buf, "%s/result.json", path);
		if (access(buf, R_OK) != 0)
			return err_set(e, "%s: expected a folder with requests.csv (servesim run --out) or result.json (--plot of sweep, plan or compare)",
				       path);
		path = buf;
	}
	json_t *doc = resultdoc_load(path, e);
	if (!doc)
		return -1;
	char *dir = o->dir;
	size_t cap = sizeof o->dir;
	if (out_dir) {
		snprintf(dir, cap, "%s", out_dir);
	} else {
		pathname_parent(path, dir, cap);
	}
	const struct resultdoc_kind *k = resultdoc_kind_of(doc, e);
	struct wholedir d;
	int rc = wholedir_stage(&d, dir, e);
	if (rc) {
		o->write_failed = true;
	} else {
		rc = k->plot(doc, d.stage, o, e);
		o->write_failed |= rc == 0;   /* then only the commit can fail */
		rc = stage_end(&d, rc, e);
	}
	json_decref(doc);
	return rc;
}

void plot_note(const char *verb, const char *dir, const struct plot_opts *o)
{
	if (o->gnuplot_missing)
		fprintf(stderr, "servesim %s: gnuplot not found on PATH: wrote %d data file%s to %s but no pictures.\n"
				"  Install it (Debian/Ubuntu: sudo apt-get install gnuplot-nox; Fedora: sudo dnf install gnuplot;\n"
				"  macOS: brew install gnuplot), then run: servesim plot %s\n",
			verb, o->n_data, o->n_data == 1 ? "" : "s", dir, dir);
	else
		fprintf(stderr, "servesim %s: wrote %d picture%s (%s) and %d data file%s to %s\n", verb,
			o->n_images, o->n_images == 1 ? "" : "s", o->svg ? "SVG" : "PNG", o->n_data,
			o->n_data == 1 ? "" : "s", dir);
}
