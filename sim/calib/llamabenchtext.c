#include "llamabenchtext.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "num.h"
#include "textfile.h"
#include "xalloc.h"

struct buf {
	char *s;
	size_t len, cap;
	int line;               /* lines written so far + 1 */
};

static void put(struct buf *b, const char *s, size_t n)
{
	xgrow(&b->s, &b->cap, b->len + n + 1, 1);
	memcpy(b->s + b->len, s, n);
	b->len += n;
	b->s[b->len] = '\0';
	for (size_t i = 0; i < n; i++)
		b->line += s[i] == '\n';
}

/* Pads with newlines so that what comes next is on line `line`. */
static void at_line(struct buf *b, int line)
{
	while (b->line < line)
		put(b, "\n", 1);
}

/* A CSV field, quoted (RFC 4180: "" for a quote). */
static void put_field(struct buf *b, const char *s, size_t n, bool first)
{
	if (!first)
		put(b, ",", 1);
	put(b, "\"", 1);
	for (size_t i = 0; i < n; i++)
		put(b, s[i] == '"' ? "\"\"" : s + i, s[i] == '"' ? 2 : 1);
	put(b, "\"", 1);
}

static void trim(const char **s, size_t *n)
{
	while (*n && isspace((unsigned char)**s))
		(*s)++, (*n)--;
	while (*n && isspace((unsigned char)(*s)[*n - 1]))
		(*n)--;
}

bool llamabenchtext_sniff_md(const char *text)
{
	/* The table's header line, anywhere: llama-bench's device lines
	 * (ggml_cuda_init: …) come first when stderr was captured too. */
	const char *cur = text, *p;
	size_t n;
	while (textfile_next_line(&cur, &p, &n)) {
		char line[1024];
		snprintf(line, sizeof line, "%.*s", (int)(n < sizeof line ? n : sizeof line - 1), p);
		if (line[0] == '|' && strstr(line, " model ") && strstr(line, " test ") && strstr(line, " t/s "))
			return true;
	}
	return false;
}

bool llamabenchtext_sniff_sql(const char *text)
{
	return strstr(text, "CREATE TABLE IF NOT EXISTS test") || strstr(text, "INSERT INTO test (");
}

/* The cells of a Markdown row, in cells[][256]; the count. */
static int md_cells(const char *row, size_t n, char cells[][256], int max)
{
	int k = 0;
	const char *p = row, *end = row + n;
	if (p < end && *p == '|')
		p++;
	while (p < end && k < max) {
		const char *bar = memchr(p, '|', (size_t)(end - p));
		const char *stop = bar ? bar : end;
		const char *c = p;
		size_t len = (size_t)(stop - p);
		trim(&c, &len);
		if (!bar && len == 0)
			break;
		snprintf(cells[k++], 256, "%.*s", (int)len, c);
		p = bar ? bar + 1 : end;
	}
	return k;
}

/* llama-bench's token counts are ints; past 2^30 a count cannot be a real
 * test, and the bound keeps pp + tg and every later product in range. */
#define LLAMA_BENCH_MAX_TOKENS (1LL << 30)

static int parse_count(const char *s, long long *out)
{
	int64_t v;
	if (!isdigit((unsigned char)*s) || num_parse_int64(s, &v) || v > LLAMA_BENCH_MAX_TOKENS)
		return -1;
	*out = v;
	return 0;
}

/* "pp512", "tg128", "pp512+tg128", "pp512 @ d4096" → counts. */
static int parse_test(const char *s, long long *pp, long long *tg, long long *depth)
{
	*pp = *tg = *depth = 0;
	char buf[256];
	snprintf(buf, sizeof buf, "%s", s);
	char *at = strstr(buf, " @ d");
	if (at) {
		*at = '\0';
		if (parse_count(at + 4, depth))
			return -1;
	}
	char *save = NULL;
	for (char *tok = strtok_r(buf, "+", &save); tok; tok = strtok_r(NULL, "+", &save)) {
		if (!strncmp(tok, "pp", 2)) {
			if (parse_count(tok + 2, pp))
				return -1;
		} else if (!strncmp(tok, "tg", 2)) {
			if (parse_count(tok + 2, tg))
				return -1;
		} else
			return -1;
	}
	return *pp + *tg > 0 ? 0 : -1;
}

char *llamabenchtext_md_to_csv(const char *text, const char *path, struct err *e)
{
	struct buf b = { .line = 1 };
	char(*cells)[256] = xmalloc(64 * sizeof *cells);
	int col_model = -1, col_test = -1, col_ts = -1, col_ub = -1, n_head = 0, line = 0, rows = 0;
	const char *cur = text, *row;
	size_t n;
	while (textfile_next_line(&cur, &row, &n)) {
		line++;
		trim(&row, &n);
		if (n == 0 || row[0] != '|')
			continue;
		int k = md_cells(row, n, cells, 64);
		if (!n_head) {
			n_head = k;
			for (int i = 0; i < k; i++) {
				if (!strcmp(cells[i], "model"))
					col_model = i;
				else if (!strcmp(cells[i], "test"))
					col_test = i;
				else if (!strcmp(cells[i], "t/s"))
					col_ts = i;
				else if (!strcmp(cells[i], "n_ubatch"))
					col_ub = i;
			}
			if (col_test < 0 || col_ts < 0) {
				free(cells);
				free(b.s);
				err_set(e, "%s:%d: expected llama-bench's Markdown header with 'test' and 't/s' columns", path, line);
				return NULL;
			}
			static const char head[] = "model_type,n_prompt,n_gen,n_depth,n_ubatch,avg_ns,avg_ts";
			put(&b, head, sizeof head - 1);
			continue;
		}
		if (cells[0][0] == '-' || cells[0][0] == ':')
			continue;   /* the | --- | ---: | line */
		if (k != n_head) {
			free(cells);
			free(b.s);
			err_set(e, "%s:%d: expected %d cells like the header, got %d", path, line, n_head, k);
			return NULL;
		}
		long long pp, tg, depth;
		double ts;
		char tsbuf[256];
		snprintf(tsbuf, sizeof tsbuf, "%s", cells[col_ts]);
		char *pm = strstr(tsbuf, "\xc2\xb1");   /* ± */
		if (pm)
			*pm = '\0';
		size_t tl = strlen(tsbuf);
		while (tl && tsbuf[tl - 1] == ' ')
			tsbuf[--tl] = '\0';
		if (parse_test(cells[col_test], &pp, &tg, &depth) || num_parse_double(tsbuf, &ts) || !(ts > 0)) {
			err_set(e, "%s:%d: expected a test like pp512, tg128, pp512+tg128 or 'pp512 @ d512' and t/s like '5761.37 ± 47.10', got '%s' and '%s'",
				path, line, cells[col_test], cells[col_ts]);
			free(cells);
			free(b.s);
			return NULL;
		}
		at_line(&b, line);
		char num[160];
		const char *model = col_model >= 0 ? cells[col_model] : "";
		put_field(&b, model, strlen(model), true);
		snprintf(num, sizeof num, ",%lld,%lld,%lld,%s,%.6f,%.17g", pp, tg, depth,
			 col_ub >= 0 ? cells[col_ub] : "512", 1e9 * (double)(pp + tg) / ts, ts);
		put(&b, num, strlen(num));
		rows++;
	}
	free(cells);
	if (!rows) {
		free(b.s);
		err_set(e, "%s: a llama-bench Markdown table without a test row", path);
		return NULL;
	}
	put(&b, "\n", 1);
	return b.s;
}

/* One SQL list "(a, 'b', 3)" from *pp into fields; the count, or -1. */
static int sql_list(const char **pp, char fields[][256], int max)
{
	const char *p = *pp;
	while (*p == ' ')
		p++;
	if (*p++ != '(')
		return -1;
	int k = 0;
	for (;;) {
		while (*p == ' ')
			p++;
		char *out = fields[k < max ? k : max - 1];
		size_t o = 0;
		if (*p == '\'') {
			p++;
			for (;;) {
				if (!*p || *p == '\n')
					return -1;
				if (*p == '\'' && p[1] == '\'') {
					if (o < 255)
						out[o++] = '\'';
					p += 2;
					continue;
				}
				if (*p == '\'') {
					p++;
					break;
				}
				if (o < 255)
					out[o++] = *p;
				p++;
			}
		} else {
			while (*p && *p != ',' && *p != ')' && *p != '\n') {
				if (o < 255 && *p != ' ')
					out[o++] = *p;
				p++;
			}
		}
		out[o] = '\0';
		k++;
		while (*p == ' ')
			p++;
		if (*p == ',') {
			p++;
			continue;
		}
		if (*p == ')') {
			*pp = p + 1;
			return k <= max ? k : -1;
		}
		return -1;
	}
}

char *llamabenchtext_sql_to_csv(const char *text, const char *path, struct err *e)
{
	struct buf b = { .line = 1 };
	char(*cols)[256] = xmalloc(128 * sizeof *cols), (*vals)[256] = xmalloc(128 * sizeof *vals);
	int n_cols = 0, line = 0, rows = 0;
	char *err_at = NULL;
	const char *cur = text, *row;
	size_t n;
	while (textfile_next_line(&cur, &row, &n)) {
		line++;
		static const char ins[] = "INSERT INTO test ";
		if (strncmp(row, ins, sizeof ins - 1))
			continue;
		const char *q = row + sizeof ins - 1;
		int kc = sql_list(&q, cols, 128);
		while (*q == ' ')
			q++;
		int kv = -1;
		if (kc > 0 && !strncmp(q, "VALUES", 6)) {
			q += 6;
			kv = sql_list(&q, vals, 128);
		}
		if (kc <= 0 || kv != kc) {
			err_at = "expected INSERT INTO test (col, …) VALUES (v, …); with as many values as columns";
			break;
		}
		if (!n_cols) {
			n_cols = kc;
			for (int i = 0; i < kc; i++)
				put_field(&b, cols[i], strlen(cols[i]), i == 0);
		} else if (kc != n_cols) {
			err_at = "expected the same columns as the first INSERT";
			break;
		}
		at_line(&b, line);
		for (int i = 0; i < kv; i++)
			put_field(&b, vals[i], strlen(vals[i]), i == 0);
		rows++;
	}
	free(cols);
	free(vals);
	if (err_at || !rows) {
		free(b.s);
		if (err_at)
			err_set(e, "%s:%d: %s", path, line, err_at);
		else
			err_set(e, "%s: llama-bench SQL without an INSERT INTO test row", path);
		return NULL;
	}
	put(&b, "\n", 1);
	return b.s;
}
