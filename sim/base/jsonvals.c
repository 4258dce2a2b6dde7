#include "jsonvals.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "xalloc.h"

char *jsonvals_sanitize(const char *text)
{
	size_t n = strlen(text), o = 0;
	char *out = xmalloc(n + n / 2 + 16);
	size_t cap = n + n / 2 + 16;
	bool in_str = false;
	for (size_t i = 0; i < n; i++) {
		char c = text[i];
		if (o + 8 > cap)
			out = xrealloc(out, cap *= 2);
		if (in_str) {
			out[o++] = c;
			if (c == '\\' && i + 1 < n)
				out[o++] = text[++i];
			else if (c == '"')
				in_str = false;
			continue;
		}
		static const struct {
			const char *py, *json;
		} words[] = { { "-Infinity", "\"-inf\"" }, { "Infinity", "\"inf\"" }, { "NaN", "null" } };
		size_t k = 3;
		/* Only these start a word: the common byte costs one compare. */
		if (c == '-' || c == 'I' || c == 'N')
			k = 0;
		for (; k < 3; k++) {
			size_t len = strlen(words[k].py);
			if (!strncmp(text + i, words[k].py, len)) {
				size_t jl = strlen(words[k].json);
				memcpy(out + o, words[k].json, jl);
				o += jl;
				i += len - 1;
				break;
			}
		}
		if (k < 3)
			continue;
		if (c == '"')
			in_str = true;
		out[o++] = c;
	}
	out[o] = '\0';
	return out;
}

/* Linear in the text: each value is parsed from where the last ended with
 * the length known (no strlen of the rest per value, which made a file of
 * many values quadratic), and lines are counted over what it consumed. */
int jsonvals_parse(struct jsonvals *out, const char *text, const char *path, struct err *e)
{
	memset(out, 0, sizeof *out);
	char *clean = jsonvals_sanitize(text);
	size_t n = strlen(clean);
	const char *p = clean, *end = clean + n;
	out->work = strlen(text) + n;
	int line = 1;
	int rc = 0;
	for (;;) {
		while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n') {
			line += *p == '\n';
			p++;
			out->work++;
		}
		if (!*p)
			break;
		json_error_t je;
		json_t *v = json_loadb(p, (size_t)(end - p), JSON_DISABLE_EOF_CHECK | JSON_REJECT_DUPLICATES, &je);
		if (!v) {
			rc = err_set(e, "%s:%d:%d: invalid JSON: %s", path, line + je.line - 1, je.column, je.text);
			break;
		}
		size_t cap = out->cap;
		xgrow(&out->v, &out->cap, out->len + 1, sizeof *out->v);
		if (out->cap != cap)
			out->line = xrealloc(out->line, out->cap * sizeof *out->line);   /* as long as v */
		out->v[out->len] = v;
		out->line[out->len++] = line;
		for (size_t k = 0; k < (size_t)je.position; k++)
			line += p[k] == '\n';
		p += je.position;
		out->work += 2 * (size_t)je.position;   /* parsed, then counted for lines */
	}
	free(clean);
	return rc;
}

void jsonvals_free(struct jsonvals *v)
{
	for (size_t i = 0; i < v->len; i++)
		json_decref(v->v[i]);
	free(v->v);
	free(v->line);
	memset(v, 0, sizeof *v);
}
