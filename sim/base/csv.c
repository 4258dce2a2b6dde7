#include "csv.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "xalloc.h"

/* The record in s[0..len) (or up to the first unquoted line break when
 * stop_at_break), into row; the bytes consumed in *used. */
static int parse(const char *s, size_t len, bool stop_at_break, struct csv_row *row, size_t *used, int *lines)
{
	xgrow(&row->buf, &row->cap_buf, len + 1, 1);
	size_t o = 0, i = 0;
	int breaks = 0;
	row->n = 0;
	/* buf is sized to len + 1 above and the fields' text (with their NULs)
	 * is never longer than the source, so it does not move: offsets into
	 * it become the field pointers at the end. */
	size_t *off = NULL, cap_off = 0, n = 0;
	for (;;) {
		xgrow(&off, &cap_off, n + 1, sizeof *off);
		off[n++] = o;
		if (i < len && s[i] == '"') {
			i++;
			for (;;) {
				if (i >= len) {
					free(off);
					return -1;
				}
				if (s[i] == '"') {
					if (i + 1 < len && s[i + 1] == '"') {
						row->buf[o++] = '"';
						i += 2;
						continue;
					}
					i++;
					break;
				}
				breaks += s[i] == '\n';
				row->buf[o++] = s[i++];
			}
			/* Text after the closing quote up to the separator is kept
			 * (lenient, as Python's csv module). */
			while (i < len && s[i] != ',' && s[i] != '\n' && s[i] != '\r')
				row->buf[o++] = s[i++];
		} else {
			while (i < len && s[i] != ',' && s[i] != '\n' && !(s[i] == '\r' && (i + 1 == len || s[i + 1] == '\n')))
				row->buf[o++] = s[i++];
		}
		row->buf[o++] = '\0';
		if (i < len && s[i] == ',') {
			i++;
			continue;
		}
		if (i < len && s[i] == '\r')
			i++;
		if (i < len && s[i] == '\n' && stop_at_break) {
			i++;
			breaks++;
		}
		break;
	}
	xgrow(&row->f, &row->cap_f, n, sizeof *row->f);
	for (size_t k = 0; k < n; k++)
		row->f[k] = row->buf + off[k];
	row->n = n;
	free(off);
	*used = i;
	if (lines)
		*lines = breaks;
	return (int)n;
}

int csv_record(const char **cursor, struct csv_row *row, int *lines)
{
	if (lines)
		*lines = 0;
	if (!**cursor) {
		row->n = 0;
		return 0;
	}
	size_t used;
	int n = parse(*cursor, strlen(*cursor), true, row, &used, lines);
	if (n >= 0)
		*cursor += used;
	return n;
}

int csv_split(const char *s, size_t len, struct csv_row *row)
{
	size_t used;
	return parse(s, len, false, row, &used, NULL);
}

void csv_row_free(struct csv_row *row)
{
	free(row->f);
	free(row->buf);
	memset(row, 0, sizeof *row);
}
