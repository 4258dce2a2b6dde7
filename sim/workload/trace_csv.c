/*
 * trace_csv: the CSV traces (Azure, plain, BurstGPT) for trace.h.
 */
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
#include "xalloc.h"

/* ---- CSV (Azure and plain) ---- */

/* Splits rd->line into rd->fields (RFC 4180, csv.h); an unclosed quote
 * leaves the line as one field, which then fails as a value. */
void trace_split_commas(struct reader *rd)
{
	if (csv_split(rd->line, strlen(rd->line), &rd->row) < 0) {
		csv_split("", 0, &rd->row);
		rd->row.f[0] = rd->line;
	}
	rd->fields = rd->row.f;
	rd->n_fields = rd->row.n;
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

int trace_column_of(const struct reader *rd, const char *name)
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
		return trace_fail_at(rd, rd->lineno,
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
		return trace_fail_at(rd, rd->lineno, "%s: '%.*s' is centuries from the first row",
			       key, SHOWN_CHARS, text);
	*raw = (double)(ds * NS_PER_S + (ns - rd->t0_ns));
	return 0;
}

static int seconds_time(struct reader *rd, const char *key, const char *text, double *raw)
{
	if (num_parse_double(text, raw) || !isfinite(*raw) || *raw < 0)
		return trace_fail_at(rd, rd->lineno, "%s: expected seconds >= 0, got '%.*s'", key,
			       SHOWN_CHARS, text);
	return 0;
}

/* Which columns a CSV flavour reads and how its times parse. */
struct csv_layout {
	const char *col[3];     /* time, input tokens, output tokens */
	int (*parse_time)(struct reader *rd, const char *key, const char *text, double *raw);
	double time_divisor;
	bool zero_output_failed;   /* an output of 0 tokens is a failed request: left out */
};

static const struct csv_layout azure_layout = {
	{ "TIMESTAMP", "ContextTokens", "GeneratedTokens" }, azure_time, 1e9, false,
};

static const struct csv_layout plain_layout = {
	{ "timestamp_s", "input_tokens", "output_tokens" }, seconds_time, 1.0, false,
};

/* BurstGPT (HPMLL/BurstGPT data/BurstGPT_*.csv): Timestamp in seconds from
 * the trace's start; Response tokens 0 marks a failed request. */
static const struct csv_layout burstgpt_layout = {
	{ "Timestamp", "Request tokens", "Response tokens" }, seconds_time, 1.0, true,
};

static int load_csv(struct reader *rd, const struct csv_layout *lay)
{
	if (trace_next_nonblank(rd) < 0)
		return 0;
	trace_split_commas(rd);
	int col[3];
	for (int k = 0; k < 3; k++) {
		col[k] = trace_column_of(rd, lay->col[k]);
		if (col[k] < 0)
			return trace_fail_at(rd, rd->lineno,
				       "%s: missing column; expected a header naming %s, %s and %s",
				       lay->col[k], lay->col[0], lay->col[1], lay->col[2]);
	}
	rd->timed = true;
	rd->time_divisor = lay->time_divisor;
	while (trace_next_line(rd) >= 0) {
		if (trace_is_blank(rd->line))
			continue;
		trace_split_commas(rd);
		const char *text[3];
		for (int k = 0; k < 3; k++)
			text[k] = (size_t)col[k] < rd->n_fields ? rd->fields[col[k]] : "";
		if (lay->zero_output_failed && !strcmp(text[2], "0")) {
			rd->t->skipped_failed++;
			continue;
		}
		struct trace_row *r = trace_add_row(rd);
		if (lay->parse_time(rd, lay->col[0], text[0], &r->time_s) ||
		    trace_text_count(rd, lay->col[1], text[1], &r->input_len) ||
		    trace_text_count(rd, lay->col[2], text[2], &r->output_len))
			return -1;
	}
	return 0;
}

int trace_load_azure(struct reader *rd)
{
	return load_csv(rd, &azure_layout);
}

int trace_load_plain_csv(struct reader *rd)
{
	return load_csv(rd, &plain_layout);
}

int trace_load_burstgpt(struct reader *rd)
{
	return load_csv(rd, &burstgpt_layout);
}

