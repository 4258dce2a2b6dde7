#include "profwrite.h"

#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "effparam.h"
#include "num.h"
#include "wholefile.h"
#include "xalloc.h"

#define LINE_MAX_CHARS 190   /* the INI reader keeps lines of up to 198 */

void profwrite_date(char *out, size_t cap)
{
	time_t now = time(NULL);
	const char *epoch = getenv("SOURCE_DATE_EPOCH");
	int64_t v;
	if (epoch && !num_parse_int64(epoch, &v) && v >= 0)
		now = (time_t)v;
	struct tm tm;
	gmtime_r(&now, &tm);
	strftime(out, cap, "%Y-%m-%d", &tm);
}

/* The section name of a "[name]" line, or NULL. */
static const char *section_of(const char *line, char *buf, size_t cap)
{
	while (isspace((unsigned char)*line))
		line++;
	if (*line != '[')
		return NULL;
	const char *end = strchr(line, ']');
	if (!end)
		return NULL;
	size_t n = (size_t)(end - line - 1);
	if (n >= cap)
		n = cap - 1;
	memcpy(buf, line + 1, n);
	buf[n] = '\0';
	return buf;
}

/* The key of a "key = value" line, or NULL for comments and blanks. */
static const char *key_of(const char *line, char *buf, size_t cap)
{
	while (isspace((unsigned char)*line))
		line++;
	if (!*line || *line == ';' || *line == '#')
		return NULL;
	size_t n = strcspn(line, "=:");
	while (n > 0 && isspace((unsigned char)line[n - 1]))
		n--;
	if (n >= cap)
		n = cap - 1;
	memcpy(buf, line, n);
	buf[n] = '\0';
	return buf;
}

static bool known_key(const char *key)
{
	if (!strcmp(key, "source"))
		return true;
	for (int id = 0; id < EFF_N_PARAMS; id++)
		if (!strcmp(effparam_get(id)->key, key))
			return true;
	return false;
}

/* A comment or source value cut to fit one INI line with its prefix. */
static void put_cut(FILE *f, const char *prefix, const char *text)
{
	int room = LINE_MAX_CHARS - (int)strlen(prefix);
	fprintf(f, "%s%.*s\n", prefix, room > 0 ? room : 0, text);
}

static int write_body(FILE *out, FILE *base, const struct hw_efficiency *eff, const bool *write,
		      const char *source, const char *const *comments, size_t n_comments)
{
	char *line = NULL, sec[64] = "", name[64];
	size_t cap = 0;
	bool in_eff = false;
	char **kept = NULL;              /* unknown keys of the base's [efficiency] */
	size_t n_kept = 0, cap_kept = 0;
	while (getline(&line, &cap, base) != -1) {
		if (section_of(line, sec, sizeof sec)) {
			in_eff = !strcmp(sec, "efficiency");
			if (in_eff)
				continue;
		}
		if (in_eff) {
			if (key_of(line, name, sizeof name) && !known_key(name)) {
				xgrow(&kept, &cap_kept, n_kept + 1, sizeof *kept);
				kept[n_kept++] = xstrdup(line);
			}
			continue;
		}
		fputs(line, out);
		if (line[0] && line[strlen(line) - 1] != '\n')
			fputc('\n', out);
	}
	free(line);
	fputc('\n', out);
	for (size_t i = 0; i < n_comments; i++)
		put_cut(out, "; ", comments[i]);
	fprintf(out, "[efficiency]\n");
	for (int id = 0; id < EFF_N_PARAMS; id++)
		if (!write || write[id])
			fprintf(out, "%s = %.6g\n", effparam_get(id)->key, effparam_value(eff, id));
	for (size_t i = 0; i < n_kept; i++) {
		fputs(kept[i], out);
		if (kept[i][strlen(kept[i]) - 1] != '\n')
			fputc('\n', out);
		free(kept[i]);
	}
	free(kept);
	put_cut(out, "source = ", source);
	return ferror(base) ? -1 : 0;
}

int profwrite_save(const char *out_path, const char *base_path, const struct hw_efficiency *eff,
		   const char *source, const char *const *comments, size_t n_comments, struct err *e)
{
	return profwrite_save_keys(out_path, base_path, eff, NULL, source, comments, n_comments, e);
}

int profwrite_save_keys(const char *out_path, const char *base_path, const struct hw_efficiency *eff,
			const bool *write, const char *source, const char *const *comments,
			size_t n_comments, struct err *e)
{
	FILE *base = fopen(base_path, "r");
	if (!base)
		return err_set(e, "%s: cannot open: %s", base_path, strerror(errno));
	FILE *out = wholefile_open(out_path, e);
	if (!out) {
		fclose(base);
		return -1;
	}
	int rc = write_body(out, base, eff, write, source, comments, n_comments);
	fclose(base);
	if (rc) {
		wholefile_abort(out, out_path);
		return err_set(e, "%s: read error", base_path);
	}
	if (wholefile_commit(out, out_path, e))
		return -1;
	struct hw_profile check;
	if (hw_load(&check, out_path, e)) {
		unlink(out_path);
		return err_prefix(e, "the written profile does not load back (a bug; nothing written)");
	}
	return 0;
}
