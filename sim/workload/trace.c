#include "trace_int.h"

#include <ctype.h>
#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "csv.h"
#include "num.h"
#include "rowtab.h"
#include "xalloc.h"

int trace_fail_at(const struct reader *rd, long line, const char *fmt, ...)
{
	char msg[ERR_MSG_MAX];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	if (line > 0)
		return err_set(rd->e, "%s:%ld: %s", rd->path, line, msg);
	return err_set(rd->e, "%s: %s", rd->path, msg);
}

/* Reads the next line into rd->line without "\n" or "\r\n" (and without a
 * UTF-8 byte order mark on line 1). Returns its length, or -1 at the end of
 * the file, on a read error (ferror tells which) or at a line holding a NUL
 * byte (rd->nul_line tells). */
long trace_next_line(struct reader *rd)
{
	ssize_t n = getline(&rd->line, &rd->line_cap, rd->f);
	if (n < 0)
		return -1;
	rd->lineno++;
	const char *nul = memchr(rd->line, '\0', (size_t)n);
	if (nul) {
		/* Text ends there for every string function: a line read past
		 * it would be silently cut (or dropped as blank). Stop here;
		 * trace_load reports it. */
		if (!rd->nul_line) {
			rd->nul_line = rd->lineno;
			rd->nul_column = (long)(nul - rd->line) + 1;
		}
		return -1;
	}
	if (n > 0 && rd->line[n - 1] == '\n')
		rd->line[--n] = '\0';
	if (n > 0 && rd->line[n - 1] == '\r')
		rd->line[--n] = '\0';
	if (rd->lineno == 1 && n >= 3 && !memcmp(rd->line, "\xef\xbb\xbf", 3)) {
		memmove(rd->line, rd->line + 3, (size_t)n - 2);
		n -= 3;
	}
	return (long)n;
}

bool trace_is_blank(const char *s)
{
	while (isspace((unsigned char)*s))
		s++;
	return *s == '\0';
}

/* Like next_line, but skips lines holding only blanks. */
long trace_next_nonblank(struct reader *rd)
{
	long n;
	while ((n = trace_next_line(rd)) >= 0 && trace_is_blank(rd->line)) {
	}
	return n;
}

int trace_read_error(const struct reader *rd)
{
	return trace_fail_at(rd, 0, "cannot read: %s", strerror(errno));
}

int trace_no_requests(const struct reader *rd)
{
	return trace_fail_at(rd, 0, "no requests; an empty trace cannot be replayed");
}

struct trace_row *trace_add_row(struct reader *rd)
{
	struct trace *t = rd->t;
	xgrow(&t->rows, &rd->cap, t->len + 1, sizeof *t->rows);
	struct trace_row *r = &t->rows[t->len++];
	memset(r, 0, sizeof *r);
	return r;
}

/* A token count in a text field: an integer in [1, INT32_MAX]. */
int trace_text_count(const struct reader *rd, const char *key, const char *text,
		      int32_t *out)
{
	int64_t v;
	if (num_parse_int64(text, &v) || v < 1 || v > INT32_MAX)
		return trace_fail_at(rd, rd->lineno, "%s: expected a positive integer, got '%.*s'",
			       key, SHOWN_CHARS, text);
	*out = (int32_t)v;
	return 0;
}

static const struct trace_format formats[] = {
	{ "vllm", trace_load_vllm },
	{ "azure", trace_load_azure },
	{ "mooncake", trace_load_mooncake },
	{ "csv", trace_load_plain_csv },
	{ "burstgpt", trace_load_burstgpt },
	{ NULL, NULL },
};

static const struct trace_format *format_named(const char *name)
{
	return rowtab_find(formats, sizeof *formats, name);
}

bool trace_format_known(const char *format)
{
	return !strcmp(format, "auto") || format_named(format);
}

void trace_format_list(char *buf, size_t cap)
{
	int n = snprintf(buf, cap, "auto, ");
	if (n >= 0 && (size_t)n < cap)
		rowtab_list(formats, sizeof *formats, buf + n, cap - (size_t)n);
}

/* Picks a format from the first non-blank line: '{' that parses alone as an
 * object → JSON lines (mooncake) unless it holds a vLLM result's keys; any
 * other '{' or '[' → one JSON document (vllm); a TIMESTAMP column → azure;
 * else csv. Leaves the file rewound; NULL name when the file is empty. */
static int detect(struct reader *rd, const char **name)
{
	static const char *const vllm_keys[] = { "input_lens", "output_lens", "duration",
						  "completed" };
	*name = NULL;
	if (trace_next_nonblank(rd) < 0) {
		if (ferror(rd->f))
			return trace_read_error(rd);
	} else {
		const char *s = rd->line;
		while (isspace((unsigned char)*s))
			s++;
		if (*s == '{') {
			json_t *o = json_loads(s, 0, NULL);
			*name = json_is_object(o) ? "mooncake" : "vllm";
			for (size_t i = 0; o && i < sizeof vllm_keys / sizeof vllm_keys[0]; i++)
				if (json_object_get(o, vllm_keys[i]))
					*name = "vllm";
			json_decref(o);
		} else if (*s == '[') {
			*name = "vllm";
		} else {
			trace_split_commas(rd);
			*name = trace_column_of(rd, "TIMESTAMP") >= 0			   ? "azure" :
				trace_column_of(rd, "Request tokens") >= 0 ? "burstgpt" :
									 "csv";
		}
	}
	rewind(rd->f);
	rd->lineno = 0;
	return 0;
}

struct time_key {
	double t;
	size_t i;
};

static int cmp_time_key(const void *pa, const void *pb)
{
	const struct time_key *a = pa, *b = pb;
	if (a->t != b->t)
		return a->t < b->t ? -1 : 1;
	return a->i < b->i ? -1 : a->i > b->i;
}

/* Raw times → seconds after the earliest row, then a stable sort by time
 * (qsort with the file position as tie-break). O(n log n), skipped when the
 * rows already come in order. */
static void finish_times(struct trace *t, double divisor)
{
	double t_min = INFINITY;
	for (size_t i = 0; i < t->len; i++)
		t_min = fmin(t_min, t->rows[i].time_s);
	bool sorted = true;
	for (size_t i = 0; i < t->len; i++) {
		t->rows[i].time_s = (t->rows[i].time_s - t_min) / divisor;
		if (i > 0 && t->rows[i].time_s < t->rows[i - 1].time_s)
			sorted = false;
	}
	if (sorted)
		return;
	struct time_key *keys = xmalloc(t->len * sizeof *keys);
	for (size_t i = 0; i < t->len; i++)
		keys[i] = (struct time_key){ t->rows[i].time_s, i };
	qsort(keys, t->len, sizeof *keys, cmp_time_key);
	struct trace_row *rows = xmalloc(t->len * sizeof *rows);
	for (size_t i = 0; i < t->len; i++)
		rows[i] = t->rows[keys[i].i];
	free(keys);
	free(t->rows);
	t->rows = rows;
}

int trace_load(struct trace *t, const char *path, const char *format, struct err *e)
{
	return trace_load_result(t, path, format, 0, e);
}

int trace_load_result(struct trace *t, const char *path, const char *format, int result, struct err *e)
{
	memset(t, 0, sizeof *t);
	const struct trace_format *fmt = NULL;
	if (strcmp(format, "auto") && !(fmt = format_named(format))) {
		char names[128];
		trace_format_list(names, sizeof names);
		return err_set(e, "%s: format: expected one of %s, got '%s'", path, names, format);
	}
	struct reader rd = { .path = path, .e = e, .t = t, .result = result, .f = fopen(path, "r") };
	if (!rd.f)
		return err_set(e, "%s: cannot open: %s", path, strerror(errno));
	int rc = 0;
	if (!fmt) {
		const char *name;
		rc = detect(&rd, &name);
		if (!rc && !name)
			rc = trace_no_requests(&rd);
		fmt = name ? format_named(name) : NULL;
	}
	if (!rc && result > 0 && strcmp(fmt->name, "vllm"))
		rc = err_set(e, "%s: [workload] trace_result = %d: expected 0 for a %s trace (only a file of benchmark results holds several)",
			     path, result, fmt->name);
	if (!rc)
		rc = fmt->load(&rd);
	if (rd.nul_line)   /* the first cause: reading stopped there */
		rc = trace_fail_at(&rd, rd.nul_line, "a NUL byte at column %ld; expected text", rd.nul_column);
	if (!rc && ferror(rd.f))
		rc = trace_read_error(&rd);
	if (!rc && t->len == 0)
		rc = trace_no_requests(&rd);
	if (!rc && rd.timed)
		finish_times(t, rd.time_divisor);
	if (!rc)
		snprintf(t->format, sizeof t->format, "%s", fmt->name);
	fclose(rd.f);
	free(rd.line);
	csv_row_free(&rd.row);
	if (rc)
		trace_free(t);
	return rc;
}

void trace_free(struct trace *t)
{
	for (size_t i = 0; i < t->len; i++)
		free(t->rows[i].hash_ids);
	free(t->rows);
	memset(t, 0, sizeof *t);
}

