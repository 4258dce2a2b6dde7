#include "inidoc.h"

#include <ini.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "num.h"
#include "xalloc.h"

/* inih 55 (Debian) reads a line into INI_MAX_LINE = 200 bytes, newline and
 * terminating NUL included: 198 characters is the longest line it keeps
 * whole. */
#define LINE_MAX_CHARS 198

struct reader {
	FILE *f;
	int line;
	bool too_long;
	int too_long_line;
	int nul_line, nul_col;   /* the first NUL byte's place; 0: none */
};

struct loader {
	struct inidoc *doc;
	struct reader *rd;
	struct err *e;
	bool failed;
};

/* fgets, noting the first NUL byte (fgets would end the line there and
 * inih read what follows as gone). */
static char *read_line(char *buf, int size, void *stream)
{
	struct reader *rd = stream;
	int n = 0, c;
	while (n < size - 1 && (c = getc(rd->f)) != EOF) {
		if (c == '\0' && !rd->nul_line) {
			rd->nul_line = rd->line + 1;
			rd->nul_col = n + 1;
		}
		buf[n++] = (char)c;
		if (c == '\n')
			break;
	}
	if (n == 0)
		return NULL;
	buf[n] = '\0';
	rd->line++;
	if (buf[n - 1] != '\n' && !feof(rd->f) && !rd->too_long) {
		rd->too_long = true;
		rd->too_long_line = rd->line;
	}
	return buf;
}

static struct inidoc_entry *push(struct inidoc *doc, const char *section, const char *key,
				  const char *value, int line)
{
	xgrow(&doc->entries, &doc->cap, doc->len + 1, sizeof *doc->entries);
	struct inidoc_entry *en = &doc->entries[doc->len++];
	memset(en, 0, sizeof *en);
	snprintf(en->section, sizeof en->section, "%s", section);
	snprintf(en->key, sizeof en->key, "%s", key);
	snprintf(en->value, sizeof en->value, "%s", value);
	en->line = line;
	return en;
}

static int on_entry(void *user, const char *section, const char *name,
		    const char *value)
{
	struct loader *ld = user;
	if (strlen(section) >= INI_NAME_MAX || strlen(name) >= INI_NAME_MAX ||
	    strlen(value) >= INI_VALUE_MAX) {
		err_set(ld->e, "%s:%d: %s: name or value too long", ld->doc->path,
			ld->rd->line, name);
		ld->failed = true;
		return 0;
	}
	push(ld->doc, section, name, value, ld->rd->line);
	return 1;
}

int inidoc_load(struct inidoc *doc, const char *path, struct err *e)
{
	memset(doc, 0, sizeof *doc);
	doc->path = xstrdup(path);
	struct reader rd = { .f = fopen(path, "r") };
	if (!rd.f)
		return err_set(e, "%s: cannot open: %m", path);
	struct loader ld = { .doc = doc, .rd = &rd, .e = e };
	int rc = ini_parse_stream(read_line, &rd, on_entry, &ld);
	fclose(rd.f);
	if (rd.nul_line)
		return err_set(e, "%s:%d: a NUL byte at column %d; expected text", path, rd.nul_line, rd.nul_col);
	if (rd.too_long)
		return err_set(e, "%s:%d: line is longer than %d characters, the most an INI line may have",
			       path, rd.too_long_line, LINE_MAX_CHARS);
	if (ld.failed)
		return -1;
	if (rc > 0)
		return err_set(e, "%s:%d: expected '[section]', 'key = value' or a ';' comment",
			       path, rc);
	if (rc < 0)
		return err_set(e, "%s: cannot read", path);
	return 0;
}

int inidoc_add_override(struct inidoc *doc, const char *assignment, struct err *e)
{
	return inidoc_add_override_from(doc, assignment, NULL, e);
}

int inidoc_add_override_from(struct inidoc *doc, const char *assignment, const char *origin, struct err *e)
{
	const char *dot = strchr(assignment, '.');
	const char *eq = strchr(assignment, '=');
	if (!doc->path)
		doc->path = xstrdup("--set");
	if (!dot || !eq || dot > eq || dot == assignment || eq == dot + 1)
		return err_set(e, "--set: expected SECTION.KEY=VALUE, got '%s'", assignment);
	char section[INI_NAME_MAX], key[INI_NAME_MAX];
	size_t ns = (size_t)(dot - assignment), nk = (size_t)(eq - dot - 1);
	if (ns >= sizeof section || nk >= sizeof key || strlen(eq + 1) >= INI_VALUE_MAX)
		return err_set(e, "--set: '%s' is too long", assignment);
	memcpy(section, assignment, ns);
	section[ns] = '\0';
	memcpy(key, dot + 1, nk);
	key[nk] = '\0';
	struct inidoc_entry *en = push(doc, section, key, eq + 1, 0);
	snprintf(en->origin, sizeof en->origin, "%s", origin ? origin : "");
	return 0;
}

/* inidoc_add_override_from of a formatted assignment: the one place that
 * formats one and checks its length. */
static int add_override_vf(struct inidoc *doc, const char *origin, struct err *e, const char *fmt, va_list ap)
{
	char buf[2 * INI_NAME_MAX + INI_VALUE_MAX + 8];
	int n = vsnprintf(buf, sizeof buf, fmt, ap);
	if (n < 0 || (size_t)n >= sizeof buf)
		return err_set(e, "--set: '%.60s…' is too long", buf);
	return inidoc_add_override_from(doc, buf, origin, e);
}

static int add_override_f(struct inidoc *doc, const char *origin, struct err *e, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static int add_override_f(struct inidoc *doc, const char *origin, struct err *e, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int rc = add_override_vf(doc, origin, e, fmt, ap);
	va_end(ap);
	return rc;
}

int inidoc_add_overridef(struct inidoc *doc, struct err *e, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int rc = add_override_vf(doc, NULL, e, fmt, ap);
	va_end(ap);
	return rc;
}

int inidoc_add_option(struct inidoc *doc, const char *option, const char *key, const char *value, struct err *e)
{
	return add_override_f(doc, option, e, "%s=%s", key, value);
}

void inidoc_add_overrides(struct inidoc *doc, const struct inidoc *src)
{
	if (!doc->path)
		doc->path = xstrdup("--set");
	for (size_t i = 0; i < src->len; i++) {
		const struct inidoc_entry *from = &src->entries[i];
		memcpy(push(doc, from->section, from->key, from->value, 0)->origin, from->origin, sizeof from->origin);
	}
}

void inidoc_free(struct inidoc *doc)
{
	free(doc->path);
	free(doc->entries);
	memset(doc, 0, sizeof *doc);
}

const struct inidoc_entry *inidoc_find(const struct inidoc *doc, const char *section,
				 const char *key)
{
	for (size_t i = doc->len; i-- > 0;)
		if (!strcmp(doc->entries[i].section, section) &&
		    !strcmp(doc->entries[i].key, key))
			return &doc->entries[i];
	return NULL;
}

void inidoc_entry_at(const struct inidoc *doc, const struct inidoc_entry *en, char *buf, size_t cap)
{
	if (en->line > 0)
		snprintf(buf, cap, "%s:%d", doc->path, en->line);
	else if (en->origin[0])
		snprintf(buf, cap, "%s", en->origin);
	else
		snprintf(buf, cap, "--set %s.%s", en->section, en->key);
}

static int bad_value(const struct inidoc *doc, const struct inidoc_entry *en,
		     const struct inidoc_key *k, struct err *e)
{
	char at[INI_VALUE_MAX + 32];
	inidoc_entry_at(doc, en, at, sizeof at);
	return err_set(e, "%s: [%s] %s: expected %s, got '%s'", at, en->section,
		       en->key, k->expect, en->value);
}

bool inidoc_key_in_range(const struct inidoc_key *k, double v)
{
	if (k->flags & INI_MIN_EXCLUSIVE ? v <= k->min : v < k->min)
		return false;
	return v <= k->max || ((k->flags & INI_ALLOW_INF) && v == (double)INFINITY);
}

static int store(const struct inidoc *doc, const struct inidoc_entry *en,
		 const struct inidoc_key *k, void *obj, struct err *e)
{
	char *field = (char *)obj + k->offset;
	switch (k->type) {
	case INI_DOUBLE: {
		double v;
		if (num_parse_double(en->value, &v) || !inidoc_key_in_range(k, v))
			return bad_value(doc, en, k, e);
		*(double *)field = v;
		return 0;
	}
	case INI_INT: {
		int64_t v;
		if (num_parse_int64(en->value, &v) || !inidoc_key_in_range(k, (double)v))
			return bad_value(doc, en, k, e);
		*(int64_t *)field = v;
		return 0;
	}
	case INI_BOOL:
		if (num_parse_bool(en->value, (bool *)field))
			return bad_value(doc, en, k, e);
		return 0;
	case INI_STRING:
		if (!en->value[0])
			return bad_value(doc, en, k, e);
		snprintf(field, INI_VALUE_MAX, "%s", en->value);
		return 0;
	case INI_ENUM:
		for (int i = 0; k->choices[i]; i++) {
			if (!strcmp(k->choices[i], en->value)) {
				*(int *)field = i;
				return 0;
			}
		}
		return bad_value(doc, en, k, e);
	}
	return bad_value(doc, en, k, e);
}

/* "[run], [workload], …": the table's sections, in order, each once, into
 * buf (cap bytes, the caller's); returns buf. */
static const char *known_sections(const struct inidoc_key *keys, size_t n, char *buf, size_t cap)
{
	size_t used = 0;
	buf[0] = '\0';
	for (size_t i = 0; i < n && used + 1 < cap; i++) {
		bool seen = false;
		for (size_t j = 0; j < i; j++)
			seen |= !strcmp(keys[j].section, keys[i].section);
		if (!seen)
			used += (size_t)snprintf(buf + used, cap - used, "%s[%s]",
						 used ? ", " : "", keys[i].section);
	}
	return buf;
}

static bool table_has_section(const struct inidoc_key *keys, size_t n, const char *s)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(keys[i].section, s))
			return true;
	return false;
}

/* Lists the keys of a section, for "unknown key" messages. */
static void section_keys(const struct inidoc_key *keys, size_t n, const char *s,
			 char *buf, size_t cap)
{
	size_t used = 0;
	buf[0] = '\0';
	for (size_t i = 0; i < n && used + 1 < cap; i++)
		if (!strcmp(keys[i].section, s))
			used += (size_t)snprintf(buf + used, cap - used, "%s%s",
						 used ? ", " : "", keys[i].key);
}

/* inidoc_bind's work: seen[] and first_line[] (the line each key was
 * first given on) have nkeys zeroed slots. */
static int bind_entries(struct inidoc *doc, const struct inidoc_key *keys, size_t nkeys, void *obj,
			bool allow_other_sections, bool *seen, int *first_line, struct err *e)
{
	for (size_t j = 0; j < doc->len; j++) {
		struct inidoc_entry *en = &doc->entries[j];
		char at[INI_VALUE_MAX + 32];
		inidoc_entry_at(doc, en, at, sizeof at);
		if (!table_has_section(keys, nkeys, en->section)) {
			if (allow_other_sections)
				continue;
			char known[256];
			return err_set(e, "%s: [%s] %s: unknown section; expected one of %s", at, en->section,
				       en->key, known_sections(keys, nkeys, known, sizeof known));
		}
		size_t i = 0;
		while (i < nkeys && (strcmp(keys[i].section, en->section) ||
				     strcmp(keys[i].key, en->key)))
			i++;
		if (i == nkeys) {
			char known[600];
			section_keys(keys, nkeys, en->section, known, sizeof known);
			return err_set(e, "%s: [%s] %s: unknown key; expected one of: %s", at,
				       en->section, en->key, known);
		}
		if (first_line[i] > 0 && en->line > 0)
			return err_set(e, "%s: [%s] %s: duplicate key (first on line %d)", at,
				       en->section, en->key, first_line[i]);
		if (en->line > 0)
			first_line[i] = en->line;
		if (store(doc, en, &keys[i], obj, e))
			return -1;
		seen[i] = true;
		en->used = true;
	}
	for (size_t i = 0; i < nkeys; i++)
		if ((keys[i].flags & INI_REQUIRED) && !seen[i])
			return err_set(e, "%s: [%s] %s: missing; expected %s", doc->path,
				       keys[i].section, keys[i].key, keys[i].expect);
	return 0;
}

int inidoc_bind(struct inidoc *doc, const struct inidoc_key *keys, size_t nkeys,
	     void *obj, bool allow_other_sections, bool *seen, struct err *e)
{
	/* Sized by the table, so a table of any length binds (a fixed 128
	 * once bounded them by an assert). */
	size_t n = nkeys ? nkeys : 1;
	int *first_line = xcalloc(n, sizeof *first_line);
	bool *own_seen = NULL;
	if (seen)
		memset(seen, 0, nkeys * sizeof *seen);
	else
		seen = own_seen = xcalloc(n, sizeof *seen);
	int rc = bind_entries(doc, keys, nkeys, obj, allow_other_sections, seen, first_line, e);
	free(own_seen);
	free(first_line);
	return rc;
}
