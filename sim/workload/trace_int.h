/*
 * trace_int: what the trace reader's files share: trace.c (the reader's
 * helpers, detection, trace_load), one file a format (trace_azure.c,
 * trace_csv.c for plain CSV and BurstGPT, trace_mooncake.c, trace_vllm.c),
 * and the helpers each family shares (CSV layouts in trace_csv.c, JSON
 * values in trace_json.c). Other modules use trace.h.
 */
#ifndef SERVESIM_TRACE_INT_H
#define SERVESIM_TRACE_INT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

#include "csv.h"
#include "err.h"
#include "num.h"
#include "trace.h"

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
	char **fields;          /* the current CSV line's fields (csv.h) */
	size_t n_fields;
	struct csv_row row;     /* their storage */
	bool timed;             /* the rows carry send times */
	double time_divisor;    /* raw time units per second */
	bool have_t0;
	int64_t t0_s, t0_ns;    /* Azure: the first row's wall clock */
	int result;             /* vllm: which result of several (1-based); 0: one */
};

struct trace_format {
	const char *name;
	int (*load)(struct reader *rd);
};

/* "path:line: …", or "path: …" when line is 0. Returns -1. */
int trace_fail_at(const struct reader *rd, long line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* The next line into rd->line (without its ending); its number, or -1 at
 * the end of the file (or a read error: ferror). */
long trace_next_line(struct reader *rd);
bool trace_is_blank(const char *s);
long trace_next_nonblank(struct reader *rd);
int trace_read_error(const struct reader *rd);      /* returns -1 */
int trace_no_requests(const struct reader *rd);     /* returns -1 */
struct trace_row *trace_add_row(struct reader *rd); /* a zeroed row */
/* A token count in a text field: an integer in [1, INT32_MAX]. */
int trace_text_count(const struct reader *rd, const char *key, const char *text, int32_t *out);
/* rd->line into rd->fields (RFC 4180). */
void trace_split_commas(struct reader *rd);
/* The index of header column name among rd->fields, or -1. */
int trace_column_of(const struct reader *rd, const char *name);

/* Which columns a CSV flavour reads and how its times parse. */
struct csv_layout {
	const char *col[3];     /* time, input tokens, output tokens */
	int (*parse_time)(struct reader *rd, const char *key, const char *text, double *raw);
	double time_divisor;
	bool zero_output_failed;   /* an output of 0 tokens is a failed request: left out */
};

/* Reads a CSV trace whose header names lay's columns (trace_csv.c). */
int trace_load_csv_layout(struct reader *rd, const struct csv_layout *lay);

/* A JSON integer in [min, max] into out; false for anything else, NULL
 * (absent) included (trace_json.c). */
bool trace_json_int_in(const json_t *v, json_int_t min, json_int_t max, json_int_t *out);
/* "KEY: expected EXPECT, got V" at line (0: none); returns -1. */
int trace_json_bad(const struct reader *rd, long line, const char *key, const char *expect,
		   const json_t *v);

int trace_load_azure(struct reader *rd);
int trace_load_plain_csv(struct reader *rd);
int trace_load_burstgpt(struct reader *rd);
int trace_load_mooncake(struct reader *rd);
int trace_load_vllm(struct reader *rd);

#endif
