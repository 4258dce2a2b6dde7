#include "ollamaverbose.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "num.h"
#include "textfile.h"
#include "xalloc.h"

bool ollamaverbose_sniff(const char *text)
{
	return strstr(text, "eval duration:") && (strstr(text, "total duration:") || strstr(text, "eval count:"));
}

int ollamaverbose_duration(const char *s, double *ns)
{
	/* Go's units (time/format.go unitMap), longest match first. */
	static const struct {
		const char *unit;
		double ns;
	} units[] = { { "ns", 1 }, { "us", 1e3 }, { "\xc2\xb5s", 1e3 }, { "\xce\xbcs", 1e3 }, { "ms", 1e6 },
		      { "s", 1e9 }, { "m", 60e9 }, { "h", 3600e9 } };
	double total = 0;
	const char *p = s;
	if (!strcmp(s, "0"))
		return *ns = 0, 0;
	while (*p) {
		/* Each part is decimal digits and a unit, as Go's ParseDuration
		 * reads them: strtod alone would take "0x1p3s" (8 s) or "inf". */
		if (!(isdigit((unsigned char)*p) || *p == '.') || (p[0] == '0' && (p[1] == 'x' || p[1] == 'X')))
			return -1;
		char *end;
		double v = strtod(p, &end);
		if (end == p || !isfinite(v) || v < 0)
			return -1;
		p = end;
		size_t best = 0;
		double mult = 0;
		for (size_t i = 0; i < sizeof units / sizeof *units; i++) {
			size_t len = strlen(units[i].unit);
			if (len > best && !strncmp(p, units[i].unit, len)) {
				best = len;
				mult = units[i].ns;
			}
		}
		if (!best)
			return -1;
		total += v * mult;
		p += best;
	}
	*ns = total;
	return p == s ? -1 : 0;
}

/* The fields of one block (-1 = not printed). */
struct block {
	int line;
	double total_ns, load_ns, prompt_ns, eval_ns;
	long long prompt_n, eval_n;
};

static void emit(char **out, size_t *len, size_t *cap, int *out_line, const struct block *b)
{
	for (; *out_line < b->line; (*out_line)++)   /* keep the block's line number */
		xappendf(out, len, cap, "\n");
	/* Unbounded: a duration of 1e308 in the text is 309 digits (it
	 * overran a 512-byte buffer). */
	xappendf(out, len, cap,
		 "{\"model\": \"\", \"done\": true, \"total_duration\": %.0f, \"load_duration\": %.0f, "
		 "\"prompt_eval_count\": %lld, \"prompt_eval_duration\": %.0f, \"eval_count\": %lld, "
		 "\"eval_duration\": %.0f}",
		 fmax(b->total_ns, 0), fmax(b->load_ns, 0), b->prompt_n > 0 ? b->prompt_n : 0, fmax(b->prompt_ns, 0),
		 b->eval_n > 0 ? b->eval_n : 0, fmax(b->eval_ns, 0));
}

char *ollamaverbose_to_jsonl(const char *text, const char *path, struct err *e)
{
	static const char *const labels[] = { "total duration:", "load duration:", "prompt eval count:",
					      "prompt eval duration:", "eval count:", "eval duration:" };
	char *out = NULL;
	size_t len = 0, cap = 0;
	int line = 0, out_line = 1;
	struct block b = { 0 };
	bool open = false;
	xgrow(&out, &cap, 1, 1);
	out[0] = '\0';
	const char *cur = text, *p;
	size_t n;
	while (textfile_next_line(&cur, &p, &n)) {
		line++;
		char row[512];
		snprintf(row, sizeof row, "%.*s", (int)(n < sizeof row ? n : sizeof row - 1), p);
		row[strcspn(row, "\r")] = '\0';
		int k = -1;
		for (int i = 0; i < 6; i++)
			if (!strncmp(row, labels[i], strlen(labels[i])))
				k = i;
		if (k < 0)
			continue;
		/* A block starts at its first metric line; "total duration" (or a
		 * metric seen twice) starts the next one. */
		bool seen = (k == 0 && b.total_ns >= 0) || (k == 1 && b.load_ns >= 0) ||
			    (k == 2 && b.prompt_n >= 0) || (k == 3 && b.prompt_ns >= 0) ||
			    (k == 4 && b.eval_n >= 0) || (k == 5 && b.eval_ns >= 0);
		if (open && seen) {
			emit(&out, &len, &cap, &out_line, &b);
			open = false;
		}
		if (!open) {
			b = (struct block){ .line = line, .total_ns = -1, .load_ns = -1, .prompt_ns = -1, .eval_ns = -1,
					    .prompt_n = -1, .eval_n = -1 };
			open = true;
		}
		char *v = row + strlen(labels[k]);
		while (*v == ' ' || *v == '\t')
			v++;
		if (k == 2 || k == 4) {
			char *end;
			errno = 0;
			long long c = strtoll(v, &end, 10);
			/* Ollama's counts are ints; past 2^30 none is a real response. */
			if (end == v || c < 0 || c > (1LL << 30) || errno == ERANGE || (*end && strcmp(end, " token(s)") && strcmp(end, " tokens"))) {
				err_set(e, "%s:%d: %s expected a count like '26 token(s)', got '%s'", path, line, labels[k], v);
				free(out);
				return NULL;
			}
			*(k == 2 ? &b.prompt_n : &b.eval_n) = c;
		} else {
			double ns;
			if (ollamaverbose_duration(v, &ns)) {
				err_set(e, "%s:%d: %s expected a Go duration like 1.234s or 12.3ms, got '%s'", path, line,
					labels[k], v);
				free(out);
				return NULL;
			}
			double *slot[] = { &b.total_ns, &b.load_ns, NULL, &b.prompt_ns, NULL, &b.eval_ns };
			*slot[k] = ns;
		}
	}
	if (open)
		emit(&out, &len, &cap, &out_line, &b);
	if (len == 0) {
		free(out);
		err_set(e, "%s: no `ollama run --verbose` summary (eval count:, eval duration: …)", path);
		return NULL;
	}
	return out;
}
