#include "calibcsv.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "csv.h"
#include "num.h"
#include "xalloc.h"

#define MAX_COLS 64
#define SUFFIX_EXP "_experiments.csv"
#define SUFFIX_MEAS "_measured.csv"

enum calibcsv_kind calibcsv_sniff(const char *line)
{
	if (!strncmp(line, "experiment,stage,metric,value_ms", 32))
		return CALIBCSV_MEASURED;
	if (!strncmp(line, "experiment,", 11) && strstr(line, ",model,") && strstr(line, ",workload"))
		return CALIBCSV_EXPERIMENTS;
	return CALIBCSV_NONE;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);
	return n >= m && !strcmp(s + n - m, suffix);
}

bool calibcsv_sibling(const char *path, char *out, size_t cap)
{
	bool exp = ends_with(path, SUFFIX_EXP);
	if (!exp && !ends_with(path, SUFFIX_MEAS))
		return false;
	const char *from = exp ? SUFFIX_EXP : SUFFIX_MEAS, *to = exp ? SUFFIX_MEAS : SUFFIX_EXP;
	int n = snprintf(out, cap, "%.*s%s", (int)(strlen(path) - strlen(from)), path, to);
	return n > 0 && (size_t)n < cap;
}

typedef int (*row_fn)(struct calibcsv *c, char **f, const int *col, const char *path, int line,
		      struct err *e);

/* Reads path: a header with the first n_required names of cols, the rest
 * optional (their indexes in col, -1 when absent), then rows passed to fn. */
static int read_table(struct calibcsv *c, const char *path, const char *const *cols, int n_cols,
		      int n_required, row_fn fn, struct err *e)
{
	FILE *fp = fopen(path, "r");
	if (!fp)
		return err_set(e, "%s: cannot open: %s", path, strerror(errno));
	char *buf = NULL, **f;
	struct csv_row row = { 0 };
	size_t cap = 0;
	int line = 0, n_head = 0, col[MAX_COLS], rc = 0;
	while (!rc && getline(&buf, &cap, fp) != -1) {
		line++;
		buf[strcspn(buf, "\r\n")] = '\0';
		if (!buf[0])
			continue;
		int n = csv_split(buf, strlen(buf), &row);   /* RFC 4180 (csv.h) */
		f = row.f;
		if (n < 0 || n > MAX_COLS) {
			rc = n < 0 ? err_set(e, "%s:%d: a quoted field is not closed", path, line)
				   : err_set(e, "%s:%d: more than %d fields", path, line, MAX_COLS);
			break;
		}
		if (!n_head) {
			n_head = n;
			for (int k = 0; k < n_cols; k++) {
				col[k] = -1;
				for (int i = 0; i < n; i++)
					if (!strcmp(f[i], cols[k]))
						col[k] = i;
				if (col[k] < 0 && k < n_required)
					rc = err_set(e, "%s:1: %s: missing column", path, cols[k]);
			}
			continue;
		}
		if (n != n_head)
			rc = err_set(e, "%s:%d: expected %d fields as in the header, got %d", path, line, n_head, n);
		else
			rc = fn(c, f, col, path, line, e);
	}
	free(buf);
	csv_row_free(&row);
	fclose(fp);
	if (!rc && n_head == 0)
		rc = err_set(e, "%s: empty (expected a header and rows)", path);
	return rc;
}

static int copy_field(char *out, size_t cap, const char *v, const char *name, const char *path,
		      int line, struct err *e)
{
	if (!*v || strlen(v) >= cap)
		return err_set(e, "%s:%d: %s: expected 1 to %zu characters, got '%.60s'", path, line, name,
			       cap - 1, v);
	memcpy(out, v, strlen(v) + 1);
	return 0;
}

static int experiment_row(struct calibcsv *c, char **f, const int *col, const char *path, int line,
			  struct err *e)
{
	struct calibcsv_experiment x = { .line = line };
	int64_t tp;
	if (copy_field(x.id, sizeof x.id, f[col[0]], "experiment", path, line, e) ||
	    copy_field(x.model, sizeof x.model, f[col[1]], "model", path, line, e) ||
	    copy_field(x.hardware, sizeof x.hardware, f[col[2]], "hardware", path, line, e))
		return -1;
	if (num_parse_int64(f[col[3]], &tp) || tp < 1 || tp > 1024)
		return err_set(e, "%s:%d: tp: expected an integer >= 1, got '%s'", path, line, f[col[3]]);
	x.tp = (int)tp;
	const char *blocks = col[4] >= 0 ? f[col[4]] : "";
	if (*blocks && (num_parse_int64(blocks, &x.gpu_kv_blocks) || x.gpu_kv_blocks < 1))
		return err_set(e, "%s:%d: gpu_kv_blocks: expected a block count >= 1 or nothing, got '%s'", path,
			       line, blocks);
	for (size_t i = 0; i < c->n_exps; i++)
		if (!strcmp(c->exps[i].id, x.id))
			return err_set(e, "%s:%d: experiment: '%s' already on line %d", path, line, x.id,
				       c->exps[i].line);
	xgrow(&c->exps, &c->cap_exps, c->n_exps + 1, sizeof *c->exps);
	c->exps[c->n_exps++] = x;
	return 0;
}

static int measured_row(struct calibcsv *c, char **f, const int *col, const char *path, int line,
			struct err *e)
{
	struct calibcsv_value v = { .line = line };
	int64_t stage;
	if (copy_field(v.id, sizeof v.id, f[col[0]], "experiment", path, line, e) ||
	    copy_field(v.metric, sizeof v.metric, f[col[2]], "metric", path, line, e))
		return -1;
	if (num_parse_int64(f[col[1]], &stage) || stage < -1 || stage > 1000)
		return err_set(e, "%s:%d: stage: expected -1 (whole run) or a stage index, got '%s'", path,
			       line, f[col[1]]);
	v.stage = (int)stage;
	if (num_parse_double(f[col[3]], &v.ms) || !(v.ms > 0))
		return err_set(e, "%s:%d: value_ms: expected milliseconds > 0, got '%s'", path, line, f[col[3]]);
	xgrow(&c->vals, &c->cap_vals, c->n_vals + 1, sizeof *c->vals);
	c->vals[c->n_vals++] = v;
	return 0;
}

int calibcsv_load(struct calibcsv *c, const char *experiments_path, const char *measured_path,
		  struct err *e)
{
	static const char *const exp_cols[] = { "experiment", "model", "hardware", "tp", "gpu_kv_blocks" };
	static const char *const meas_cols[] = { "experiment", "stage", "metric", "value_ms" };
	memset(c, 0, sizeof *c);
	if (read_table(c, experiments_path, exp_cols, 5, 4, experiment_row, e) ||
	    read_table(c, measured_path, meas_cols, 4, 4, measured_row, e))
		return -1;
	for (size_t i = 0; i < c->n_vals; i++) {
		size_t k = 0;
		while (k < c->n_exps && strcmp(c->exps[k].id, c->vals[i].id))
			k++;
		if (k == c->n_exps)
			return err_set(e, "%s:%d: experiment: '%s' is not in %s", measured_path, c->vals[i].line,
				       c->vals[i].id, experiments_path);
	}
	return 0;
}

void calibcsv_free(struct calibcsv *c)
{
	free(c->exps);
	free(c->vals);
	memset(c, 0, sizeof *c);
}

double calibcsv_value(const struct calibcsv *c, const char *id, int stage, const char *metric)
{
	for (size_t i = 0; i < c->n_vals; i++)
		if (c->vals[i].stage == stage && !strcmp(c->vals[i].id, id) &&
		    !strcmp(c->vals[i].metric, metric))
			return c->vals[i].ms;
	return NAN;
}
