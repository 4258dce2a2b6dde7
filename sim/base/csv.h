/*
 * csv: one CSV reader for every CSV servesim reads (traces, llama-bench,
 * calibration tables), RFC 4180: fields separated by commas, a field in
 * double quotes may hold commas, line breaks and "" for a quote; a record
 * ends at CRLF or LF outside quotes. Blank records are the caller's to skip
 * (csv_record returns them with one empty field).
 *
 * A row owns its storage and is reused record after record: fields point
 * into it and stay valid until the next call or csv_row_free.
 */
#ifndef SERVESIM_CSV_H
#define SERVESIM_CSV_H

#include <stddef.h>

struct csv_row {
	char **f;              /* n fields, NUL-terminated */
	size_t n;
	size_t cap_f;
	char *buf;             /* the fields' text */
	size_t cap_buf;
};

/* Reads one record from text at *cursor (advanced past it and its line
 * break) into row. Returns the field count, 0 at the end of the text, or -1
 * for a quote that is never closed (then *cursor is unchanged). *lines
 * (when not NULL) is set to the line breaks consumed, so a caller can count
 * lines across quoted breaks. */
int csv_record(const char **cursor, struct csv_row *row, int *lines);

/* Splits s[0..len) (one line, no line break) into row. Returns the field
 * count, or -1 for an unclosed quote. */
int csv_split(const char *s, size_t len, struct csv_row *row);

void csv_row_free(struct csv_row *row);   /* safe on a zeroed row */

#endif
