#include "promscrape.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "num.h"
#include "textfile.h"
#include "xalloc.h"

static bool name_char(int c, bool first)
{
	return isalpha(c) || c == '_' || c == ':' || (!first && isdigit(c));
}

bool promscrape_sniff(const char *text, const char *prefix)
{
	size_t plen = strlen(prefix);
	const char *cur = text, *p;
	size_t len;
	for (int lines = 0; lines < 64 && textfile_next_line(&cur, &p, &len); lines++) {
		while (*p == ' ' || *p == '\t')
			p++;
		if (!strncmp(p, "# HELP ", 7) || !strncmp(p, "# TYPE ", 7)) {
			if (!strncmp(p + 7, prefix, plen))
				return true;
		} else if (!strncmp(p, prefix, plen)) {
			return true;
		}
	}
	return false;
}

/* Reads `{k="v",…}` at *pp into a malloc'd copy of its inside, escapes
 * kept (so a quote inside a value stays `\"`). NULL when not closed. */
static char *read_labels(const char **pp)
{
	const char *start = *pp + 1, *p = start;
	bool in_value = false;
	for (; *p && *p != '\n'; p++) {
		if (in_value && *p == '\\' && p[1] && p[1] != '\n')
			p++;
		else if (*p == '"')
			in_value = !in_value;
		else if (!in_value && *p == '}')
			break;
	}
	if (*p != '}')
		return NULL;
	size_t n = (size_t)(p - start);
	char *out = xmalloc(n + 1);
	memcpy(out, start, n);
	out[n] = '\0';
	*pp = p + 1;
	return out;
}

static int parse_value(const char *s, double *v)
{
	if (!strcmp(s, "+Inf") || !strcmp(s, "Inf")) {
		*v = INFINITY;
		return 0;
	}
	if (!strcmp(s, "-Inf")) {
		*v = -INFINITY;
		return 0;
	}
	if (!strcmp(s, "NaN")) {
		*v = NAN;
		return 0;
	}
	return num_parse_double(s, v);
}

int promscrape_parse(struct promscrape *out, const char *text, const char *path, struct err *e)
{
	memset(out, 0, sizeof *out);
	int line = 0;
	const char *cur = text, *p;
	size_t len;
	while (textfile_next_line(&cur, &p, &len)) {
		line++;
		while (*p == ' ' || *p == '\t')
			p++;
		if (*p == '#' || *p == '\n' || *p == '\r' || !*p)
			continue;
		struct promscrape_sample s = { .line = line };
		size_t n = 0;
		if (!name_char((unsigned char)*p, true))
			return err_set(e, "%s:%d: expected a metric name, got '%.40s'", path, line, p);
		while (name_char((unsigned char)p[n], false))
			n++;
		if (n >= sizeof s.name)
			return err_set(e, "%s:%d: metric name longer than %zu characters", path, line,
				       sizeof s.name - 1);
		memcpy(s.name, p, n);
		s.name[n] = '\0';
		p += n;
		if (*p == '{') {
			s.labels = read_labels(&p);
			if (!s.labels)
				return err_set(e, "%s:%d: %s: the label set is not closed with '}'", path, line, s.name);
		} else {
			s.labels = xstrdup("");
		}
		while (*p == ' ' || *p == '\t')
			p++;
		char val[64];
		size_t vn = strcspn(p, " \t\r\n");
		if (vn == 0 || vn >= sizeof val || (memcpy(val, p, vn), val[vn] = '\0', parse_value(val, &s.value))) {
			free(s.labels);
			return err_set(e, "%s:%d: %s: expected a sample value, got '%.*s'", path, line, s.name,
				       (int)(vn < 40 ? vn : 40), p);
		}
		xgrow(&out->v, &out->cap, out->len + 1, sizeof *out->v);
		out->v[out->len++] = s;
	}
	return 0;
}

void promscrape_free(struct promscrape *s)
{
	for (size_t i = 0; i < s->len; i++)
		free(s->v[i].labels);
	free(s->v);
	memset(s, 0, sizeof *s);
}

double promscrape_sum(const struct promscrape *s, const char *name, bool *found)
{
	double sum = 0;
	*found = false;
	for (size_t i = 0; i < s->len; i++)
		if (!strcmp(s->v[i].name, name)) {
			sum += s->v[i].value;
			*found = true;
		}
	return sum;
}

bool promscrape_label(const struct promscrape *s, const char *name, const char *key, char *out,
		      size_t cap)
{
	size_t klen = strlen(key);
	for (size_t i = 0; i < s->len; i++) {
		if (strcmp(s->v[i].name, name))
			continue;
		for (const char *p = s->v[i].labels; *p;) {
			while (*p == ' ' || *p == ',')
				p++;
			const char *eq = strchr(p, '=');
			if (!eq || eq[1] != '"')
				return false;
			bool match = (size_t)(eq - p) == klen && !strncmp(p, key, klen);
			size_t n = 0;
			const char *q = eq + 2;
			for (; *q && *q != '"'; q++) {
				char c = *q;
				if (c == '\\' && q[1]) {
					q++;
					c = *q == 'n' ? '\n' : *q;
				}
				if (match && n + 1 < cap)
					out[n++] = c;
			}
			if (match) {
				out[n] = '\0';
				return true;
			}
			if (!*q)
				return false;
			p = q + 1;
		}
		return false;
	}
	return false;
}
