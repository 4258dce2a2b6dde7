/*
 * trace_csv: the CSV traces for trace.h: the reading every CSV flavour
 * shares (fields, header columns, rows by a layout) and the two flavours
 * timed in seconds, plain CSV and BurstGPT. Azure's wall-clock flavour is
 * trace_azure.c.
 */
#include "trace_int.h"

#include <ctype.h>
#include <math.h>
#include <stdbool.h>
#include <string.h>

#include "csv.h"
#include "num.h"

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

static int seconds_time(struct reader *rd, const char *key, const char *text, double *raw)
{
	if (num_parse_double(text, raw) || !isfinite(*raw) || *raw < 0)
		return trace_fail_at(rd, rd->lineno, "%s: expected seconds >= 0, got '%.*s'", key,
			       SHOWN_CHARS, text);
	return 0;
}

static const struct csv_layout plain_layout = {
	{ "timestamp_s", "input_tokens", "output_tokens" }, seconds_time, 1.0, false,
};

/* BurstGPT (HPMLL/BurstGPT data/BurstGPT_*.csv): Timestamp in seconds from
 * the trace's start; Response tokens 0 marks a failed request. */
static const struct csv_layout burstgpt_layout = {
	{ "Timestamp", "Request tokens", "Response tokens" }, seconds_time, 1.0, true,
};

int trace_load_csv_layout(struct reader *rd, const struct csv_layout *lay)
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

int trace_load_plain_csv(struct reader *rd)
{
	return trace_load_csv_layout(rd, &plain_layout);
}

int trace_load_burstgpt(struct reader *rd)
{
	return trace_load_csv_layout(rd, &burstgpt_layout);
}

