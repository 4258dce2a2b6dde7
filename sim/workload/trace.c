#include "trace.h"

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

#include "num.h"
#include "xalloc.h"

#define NS_PER_S 1000000000LL
#define SHOWN_CHARS 64  /* how much of a bad value a message quotes */

/* One trace file being read. Rows go straight into t; raw times go into
 * time_s and are made relative (and scaled to seconds) once all are read. */
struct reader {
	const char *path;
	FILE *f;
	struct err *e;
	struct trace *t;
	size_t cap;             /* capacity of t->rows */
	char *line;             /* the current line, without its line ending */
	size_t line_cap;
	long lineno;            /* 1-based; 0 before the first line */
	long nul_line;          /* the first line holding a NUL byte; 0: none */
	long nul_column;
	char **fields;          /* the current CSV line split at commas */
	size_t n_fields, fields_cap;
	bool timed;             /* the rows carry send times */
	double time_divisor;    /* raw time units per second */
	bool have_t0;
	int64_t t0_s, t0_ns;    /* Azure: the first row's wall clock */
};

struct trace_format {
	const char *name;
	int (*load)(struct reader *rd);
};

/* "path:line: …", or "path: …" when line is 0. Returns -1. */
static int fail_at(const struct reader *rd, long line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int fail_at(const struct reader *rd, long line, const char *fmt, ...)
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
static long next_line(struct reader *rd)
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

static bool is_blank(const char *s)
{
	while (isspace((unsigned char)*s))
		s++;
	return *s == '\0';
}

/* Like next_line, but skips lines holding only blanks. */
static long next_nonblank(struct reader *rd)
{
	long n;
	while ((n = next_line(rd)) >= 0 && is_blank(rd->line)) {
	}
	return n;
}

static int read_error(const struct reader *rd)
{
	return fail_at(rd, 0, "cannot read: %s", strerror(errno));
}

static int no_requests(const struct reader *rd)
{
	return fail_at(rd, 0, "no requests; an empty trace cannot be replayed");
}

static struct trace_row *add_row(struct reader *rd)
{
	struct trace *t = rd->t;
	xgrow(&t->rows, &rd->cap, t->len + 1, sizeof *t->rows);
	struct trace_row *r = &t->rows[t->len++];
	memset(r, 0, sizeof *r);
	return r;
}

/* A token count in a text field: an integer in [1, INT32_MAX]. */
static int text_count(const struct reader *rd, const char *key, const char *text,
		      int32_t *out)
{
	int64_t v;
	if (num_parse_int64(text, &v) || v < 1 || v > INT32_MAX)
		return fail_at(rd, rd->lineno, "%s: expected a positive integer, got '%.*s'",
			       key, SHOWN_CHARS, text);
	*out = (int32_t)v;
	return 0;
}

/* ---- CSV (Azure and plain) ---- */

/* Splits rd->line in place at commas into rd->fields. Quoting is not
 * understood: both formats hold only numbers and timestamps. */
static void split_commas(struct reader *rd)
{
	char *s = rd->line;
	rd->n_fields = 0;
	for (;;) {
		xgrow(&rd->fields, &rd->fields_cap, rd->n_fields + 1, sizeof *rd->fields);
		rd->fields[rd->n_fields++] = s;
		char *comma = strchr(s, ',');
		if (!comma)
			break;
		*comma = '\0';
		s = comma + 1;
	}
}

/* A header name without surrounding blanks or double quotes (in place). */
static char *header_name(char *s)
{
	while (isspace((unsigned char)*s))
		s++;
	size_t n = strlen(s);
	while (n && isspace((unsigned char)s[n - 1]))
		s[--n] = '\0';
	if (n >= 2 && s[0] == '"' && s[n - 1] == '"') {
		s[n - 1] = '\0';
		s++;
	}
	return s;
}

static int column_of(const struct reader *rd, const char *name)
{
	for (size_t i = 0; i < rd->n_fields; i++)
		if (!strcmp(header_name(rd->fields[i]), name))
			return (int)i;
	return -1;
}

/* Parses a 0-padded decimal of exactly n digits. */
static bool fixed_digits(const char **s, int n, int *out)
{
	int v = 0;
	for (int i = 0; i < n; i++) {
		if (!isdigit((unsigned char)(*s)[i]))
			return false;
		v = v * 10 + ((*s)[i] - '0');
	}
	*s += n;
	*out = v;
	return true;
}

/* Days from 1970-01-01 to y-m-d in the proleptic Gregorian calendar (Howard
 * Hinnant's days_from_civil), so that no time zone or mktime is involved. */
static int64_t days_from_civil(int64_t y, int m, int d)
{
	y -= m <= 2;
	int64_t era = (y >= 0 ? y : y - 399) / 400;
	int64_t yoe = y - era * 400;
	int64_t doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
	int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

static int days_in_month(int y, int m)
{
	static const int days[] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
	bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
	return m == 2 && leap ? 29 : days[m - 1];
}

/* "YYYY-MM-DD HH:MM:SS[.f…]" with up to 9 fractional digits, a 'T' allowed
 * for the blank, and an optional "Z" or "±HH:MM" offset (the 2024 Azure
 * traces write "+00:00"). Gives UTC seconds since 1970 and nanoseconds. */
static bool parse_wall_clock(const char *s, int64_t *sec, int64_t *nsec)
{
	int y, mo, d, h, mi, se, frac = 0;
	while (isspace((unsigned char)*s))
		s++;
	if (!fixed_digits(&s, 4, &y) || *s++ != '-' || !fixed_digits(&s, 2, &mo) ||
	    *s++ != '-' || !fixed_digits(&s, 2, &d))
		return false;
	if (*s != ' ' && *s != 'T')
		return false;
	s++;
	if (!fixed_digits(&s, 2, &h) || *s++ != ':' || !fixed_digits(&s, 2, &mi) ||
	    *s++ != ':' || !fixed_digits(&s, 2, &se))
		return false;
	if (mo < 1 || mo > 12 || d < 1 || d > days_in_month(y, mo) || h > 23 || mi > 59 ||
	    se > 59)
		return false;
	if (*s == '.') {
		int n = 0;
		for (s++; isdigit((unsigned char)*s); s++, n++)
			if (n < 9)
				frac = frac * 10 + (*s - '0');
		if (n == 0 || n > 9)
			return false;
		for (; n < 9; n++)
			frac *= 10;
	}
	int offset_s = 0;
	if (*s == 'Z') {
		s++;
	} else if (*s == '+' || *s == '-') {
		int sign = *s++ == '-' ? -1 : 1, oh, om;
		if (!fixed_digits(&s, 2, &oh) || *s++ != ':' || !fixed_digits(&s, 2, &om) ||
		    oh > 23 || om > 59)
			return false;
		offset_s = sign * (oh * 3600 + om * 60);
	}
	while (isspace((unsigned char)*s))
		s++;
	if (*s)
		return false;
	*sec = days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + se - offset_s;
	*nsec = frac;
	return true;
}

/* Azure: nanoseconds after the first row, kept integral until the end so
 * that 7-digit fractions survive (seconds since 1970 as a double would keep
 * only about 0.2 µs). */
static int azure_time(struct reader *rd, const char *key, const char *text, double *raw)
{
	int64_t s, ns;
	if (!parse_wall_clock(text, &s, &ns))
		return fail_at(rd, rd->lineno,
			       "%s: expected a time 'YYYY-MM-DD HH:MM:SS[.fraction]', got '%.*s'",
			       key, SHOWN_CHARS, text);
	if (!rd->have_t0) {
		rd->have_t0 = true;
		rd->t0_s = s;
		rd->t0_ns = ns;
	}
	int64_t ds = s - rd->t0_s;
	/* 9e9 s is about 285 years: beyond that the nanoseconds overflow. */
	if (ds > 9000000000LL || ds < -9000000000LL)
		return fail_at(rd, rd->lineno, "%s: '%.*s' is centuries from the first row",
			       key, SHOWN_CHARS, text);
	*raw = (double)(ds * NS_PER_S + (ns - rd->t0_ns));
	return 0;
}

static int seconds_time(struct reader *rd, const char *key, const char *text, double *raw)
{
	if (num_parse_double(text, raw) || !isfinite(*raw) || *raw < 0)
		return fail_at(rd, rd->lineno, "%s: expected seconds >= 0, got '%.*s'", key,
			       SHOWN_CHARS, text);
	return 0;
}

/* Which columns a CSV flavour reads and how its times parse. */
struct csv_layout {
	const char *col[3];     /* time, input tokens, output tokens */
	int (*parse_time)(struct reader *rd, const char *key, const char *text, double *raw);
	double time_divisor;
};

static const struct csv_layout azure_layout = {
	{ "TIMESTAMP", "ContextTokens", "GeneratedTokens" }, azure_time, 1e9,
};

static const struct csv_layout plain_layout = {
	{ "timestamp_s", "input_tokens", "output_tokens" }, seconds_time, 1.0,
};

static int load_csv(struct reader *rd, const struct csv_layout *lay)
{
	if (next_nonblank(rd) < 0)
		return 0;
	split_commas(rd);
	int col[3];
	for (int k = 0; k < 3; k++) {
		col[k] = column_of(rd, lay->col[k]);
		if (col[k] < 0)
			return fail_at(rd, rd->lineno,
				       "%s: missing column; expected a header naming %s, %s and %s",
				       lay->col[k], lay->col[0], lay->col[1], lay->col[2]);
	}
	rd->timed = true;
	rd->time_divisor = lay->time_divisor;
	while (next_line(rd) >= 0) {
		if (is_blank(rd->line))
			continue;
		split_commas(rd);
		const char *text[3];
		for (int k = 0; k < 3; k++)
			text[k] = (size_t)col[k] < rd->n_fields ? rd->fields[col[k]] : "";
		struct trace_row *r = add_row(rd);
		if (lay->parse_time(rd, lay->col[0], text[0], &r->time_s) ||
		    text_count(rd, lay->col[1], text[1], &r->input_len) ||
		    text_count(rd, lay->col[2], text[2], &r->output_len))
			return -1;
	}
	return 0;
}

static int load_azure(struct reader *rd)
{
	return load_csv(rd, &azure_layout);
}

static int load_plain_csv(struct reader *rd)
{
	return load_csv(rd, &plain_layout);
}

/* ---- JSON (Mooncake lines and vLLM results) ---- */

/* v as compact JSON for a message, cut to SHOWN_CHARS. */
static void json_shown(const json_t *v, char *buf, size_t cap)
{
	char *s = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
	snprintf(buf, cap, "%.*s", SHOWN_CHARS, s ? s : "?");
	free(s);
}

/* A JSON integer in [min, max]; NULL v (absent) fails too. */
static bool json_int_in(const json_t *v, json_int_t min, json_int_t max, json_int_t *out)
{
	if (!json_is_integer(v) || json_integer_value(v) < min || json_integer_value(v) > max)
		return false;
	*out = json_integer_value(v);
	return true;
}

static int json_bad(const struct reader *rd, long line, const char *key, const char *expect,
		    const json_t *v)
{
	char shown[SHOWN_CHARS + 1];
	json_shown(v, shown, sizeof shown);
	return fail_at(rd, line, "%s: expected %s, got %s", key, expect, shown);
}

/* A Mooncake field the row cannot do without. */
static const json_t *mooncake_need(const struct reader *rd, const json_t *o, const char *key,
				   const char *expect)
{
	const json_t *v = json_object_get(o, key);
	if (v && !json_is_null(v))
		return v;
	fail_at(rd, rd->lineno, "%s: missing; expected %s", key, expect);
	return NULL;
}

static int mooncake_row(struct reader *rd, const json_t *o)
{
	static const char ms[] = "milliseconds >= 0";
	static const char count[] = "a positive integer";
	static const char ids[] = "an array of non-negative integers (512-token block ids)";
	const json_t *ts, *in, *out, *hs;
	json_int_t v;
	if (!(ts = mooncake_need(rd, o, "timestamp", ms)) ||
	    !(in = mooncake_need(rd, o, "input_length", count)) ||
	    !(out = mooncake_need(rd, o, "output_length", count)) ||
	    !(hs = mooncake_need(rd, o, "hash_ids", ids)))
		return -1;
	if (!json_is_number(ts) || json_number_value(ts) < 0)
		return json_bad(rd, rd->lineno, "timestamp", ms, ts);
	struct trace_row *r = add_row(rd);
	r->time_s = json_number_value(ts);
	if (!json_int_in(in, 1, INT32_MAX, &v))
		return json_bad(rd, rd->lineno, "input_length", count, in);
	r->input_len = (int32_t)v;
	if (!json_int_in(out, 1, INT32_MAX, &v))
		return json_bad(rd, rd->lineno, "output_length", count, out);
	r->output_len = (int32_t)v;
	/* Optional: the request's vLLM priority (lower is served first under
	 * --scheduling-policy priority). */
	const json_t *pr = json_object_get(o, "priority");
	if (pr && !json_is_null(pr)) {
		if (!json_int_in(pr, INT32_MIN, INT32_MAX, &v))
			return json_bad(rd, rd->lineno, "priority", "an integer", pr);
		r->priority = (int32_t)v;
	}
	if (!json_is_array(hs) || json_array_size(hs) > INT32_MAX)
		return json_bad(rd, rd->lineno, "hash_ids", ids, hs);
	size_t n = json_array_size(hs);
	if (n == 0)
		return 0;
	r->hash_ids = xmalloc(n * sizeof *r->hash_ids);
	r->n_hash_ids = (int32_t)n;
	for (size_t i = 0; i < n; i++) {
		const json_t *h = json_array_get(hs, i);
		if (!json_int_in(h, 0, LLONG_MAX, &v)) {
			char key[48];
			snprintf(key, sizeof key, "hash_ids[%zu]", i);
			return json_bad(rd, rd->lineno, key, "a non-negative integer", h);
		}
		r->hash_ids[i] = (uint64_t)v;
	}
	return 0;
}

/* One object a line, each parsed on its own so that errors carry the
 * file's line. Blank lines are skipped. */
static int load_mooncake(struct reader *rd)
{
	rd->timed = true;
	rd->time_divisor = 1000.0;
	while (next_line(rd) >= 0) {
		if (is_blank(rd->line))
			continue;
		json_error_t je;
		json_t *o = json_loads(rd->line, JSON_REJECT_DUPLICATES, &je);
		if (!o)
			return err_set(rd->e, "%s:%ld:%d: invalid JSON: %s", rd->path, rd->lineno,
				       je.column, je.text);
		int rc = json_is_object(o) ? mooncake_row(rd, o)
					   : fail_at(rd, rd->lineno, "expected a JSON object");
		json_decref(o);
		if (rc)
			return -1;
	}
	return 0;
}

/* An array key of a vLLM result, NULL when absent or null. */
static const json_t *vllm_array(const json_t *top, const char *key)
{
	const json_t *v = json_object_get(top, key);
	return json_is_null(v) ? NULL : v;
}

static int vllm_rows(struct reader *rd, const json_t *top)
{
	const json_t *in = vllm_array(top, "input_lens");
	const json_t *out = vllm_array(top, "output_lens");
	const json_t *st = vllm_array(top, "start_times");
	const json_t *errs = vllm_array(top, "errors");
	if (!in || !out)
		return fail_at(rd, 0,
			       "%s%s%s: missing; expected the per-request arrays that results saved with --save-detailed carry",
			       in ? "" : "input_lens", !in && !out ? ", " : "",
			       out ? "" : "output_lens");
	if (!json_is_array(in))
		return json_bad(rd, 0, "input_lens", "an array of token counts", in);
	if (!json_is_array(out))
		return json_bad(rd, 0, "output_lens", "an array of token counts", out);
	size_t n = json_array_size(in);
	if (json_array_size(out) != n)
		return fail_at(rd, 0, "output_lens: %zu entries, but input_lens has %zu",
			       json_array_size(out), n);
	if (st && !json_is_array(st))
		return json_bad(rd, 0, "start_times", "an array of seconds", st);
	if (st && json_array_size(st) != n)
		return fail_at(rd, 0, "start_times: %zu entries, but input_lens has %zu",
			       json_array_size(st), n);
	rd->timed = st != NULL;
	rd->time_divisor = 1.0;
	for (size_t i = 0; i < n; i++) {
		struct trace_row *r = add_row(rd);
		const json_t *a = json_array_get(in, i), *b = json_array_get(out, i);
		char key[48];
		json_int_t v;
		if (!json_int_in(a, 1, INT32_MAX, &v)) {
			snprintf(key, sizeof key, "input_lens[%zu]", i);
			return json_bad(rd, 0, key, "a positive integer", a);
		}
		r->input_len = (int32_t)v;
		if (!json_int_in(b, 1, INT32_MAX, &v)) {
			/* vLLM writes 0 for a request that failed (its error in
			 * errors[i]): the measured statistics leave it out, so
			 * the replay does too. */
			const char *why = json_string_value(json_array_get(errs, i));
			if (json_is_integer(b) && json_integer_value(b) == 0 && why && *why) {
				rd->t->len--;
				rd->t->skipped_failed++;
				continue;
			}
			snprintf(key, sizeof key, "output_lens[%zu]", i);
			return json_bad(rd, 0, key, "a positive integer", b);
		}
		r->output_len = (int32_t)v;
		r->time_s = NAN;
		if (st) {
			const json_t *s = json_array_get(st, i);
			if (!json_is_number(s)) {
				snprintf(key, sizeof key, "start_times[%zu]", i);
				return json_bad(rd, 0, key, "seconds", s);
			}
			r->time_s = json_number_value(s);
		}
	}
	return 0;
}

/* The whole file is one result object (`vllm bench serve --save-result`);
 * keys other than the per-request arrays are ignored, so every version
 * reads. */
static int load_vllm(struct reader *rd)
{
	json_error_t je;
	json_t *top = json_loadf(rd->f, JSON_REJECT_DUPLICATES, &je);
	if (!top) {
		if (je.line <= 0)
			return fail_at(rd, 0, "%s", je.text);
		/* --append-result writes further results on new lines. */
		bool appended = strstr(je.text, "end of file expected") != NULL;
		return err_set(rd->e, "%s:%d:%d: invalid JSON: %s%s", rd->path, je.line, je.column,
			       je.text,
			       appended ? " (several results appended with --append-result? keep one result per file)"
					: "");
	}
	int rc = json_is_object(top)
			 ? vllm_rows(rd, top)
			 : fail_at(rd, 0, "expected a JSON object (a vllm bench serve result)");
	json_decref(top);
	return rc;
}

static const struct trace_format formats[] = {
	{ "vllm", load_vllm },
	{ "azure", load_azure },
	{ "mooncake", load_mooncake },
	{ "csv", load_plain_csv },
};

static const struct trace_format *format_named(const char *name)
{
	for (size_t i = 0; i < sizeof formats / sizeof formats[0]; i++)
		if (!strcmp(formats[i].name, name))
			return &formats[i];
	return NULL;
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
	if (next_nonblank(rd) < 0) {
		if (ferror(rd->f))
			return read_error(rd);
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
			split_commas(rd);
			*name = column_of(rd, "TIMESTAMP") >= 0 ? "azure" : "csv";
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
	memset(t, 0, sizeof *t);
	const struct trace_format *fmt = NULL;
	if (strcmp(format, "auto") && !(fmt = format_named(format)))
		return err_set(e, "%s: format: expected auto, vllm, azure, mooncake or csv, got '%s'",
			       path, format);
	struct reader rd = { .path = path, .e = e, .t = t, .f = fopen(path, "r") };
	if (!rd.f)
		return err_set(e, "%s: cannot open: %s", path, strerror(errno));
	int rc = 0;
	if (!fmt) {
		const char *name;
		rc = detect(&rd, &name);
		if (!rc && !name)
			rc = no_requests(&rd);
		fmt = name ? format_named(name) : NULL;
	}
	if (!rc)
		rc = fmt->load(&rd);
	if (rd.nul_line)   /* the first cause: reading stopped there */
		rc = fail_at(&rd, rd.nul_line, "a NUL byte at column %ld; expected text", rd.nul_column);
	if (!rc && ferror(rd.f))
		rc = read_error(&rd);
	if (!rc && t->len == 0)
		rc = no_requests(&rd);
	if (!rc && rd.timed)
		finish_times(t, rd.time_divisor);
	if (!rc)
		snprintf(t->format, sizeof t->format, "%s", fmt->name);
	fclose(rd.f);
	free(rd.line);
	free(rd.fields);
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
