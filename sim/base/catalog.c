#include "catalog.h"

#include <dirent.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "inidoc.h"
#include "modelname.h"
#include "pathname.h"
#include "xalloc.h"

#ifndef SERVESIM_SOURCE_DIR
#define SERVESIM_SOURCE_DIR "."
#endif

static const struct {
	const char *folder, *ext;
} kinds[] = {
	[CATALOG_MODELS] = { "models", ".json" },
	[CATALOG_HARDWARE] = { "hardware_profiles", ".ini" },
	[CATALOG_SCENARIOS] = { "scenarios", ".ini" },
	[CATALOG_PLOTS] = { "plots", ".gp" },
};

bool catalog_is_dir(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

bool catalog_is_file(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

int catalog_find_exe(const char *name, char *out, size_t cap)
{
	const char *path = getenv("PATH");
	for (const char *p = path ? path : ""; *p;) {
		size_t len = strcspn(p, ":");
		int n = snprintf(out, cap, "%.*s/%s", (int)len, p, name);
		if (len && n >= 0 && (size_t)n < cap && catalog_is_file(out) && access(out, X_OK) == 0)
			return 0;
		p += len + (p[len] == ':');
	}
	return -1;
}

/* out = a + b; false when it does not fit (the caller treats the place as
 * absent rather than use a truncated path). */
static bool join(char *out, size_t cap, const char *a, const char *b)
{
	int n = snprintf(out, cap, "%s%s", a, b);
	return n >= 0 && (size_t)n < cap;
}

int catalog_exe_dir(char *out, size_t cap)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	if (n <= 0)
		return -1;
	exe[n] = '\0';
	char *slash = strrchr(exe, '/');
	if (!slash)
		return -1;
	*slash = '\0';
	return join(out, cap, exe, "") ? 0 : -1;
}

/* The data root: a folder holding models/ and hardware_profiles/. */
static int data_root(char *out, size_t cap)
{
	const char *env = getenv("SERVESIM_DATA_DIR");
	if (env && *env) {
		snprintf(out, cap, "%s", env);
		return 0;
	}
	char exe[PATH_MAX], probe[PATH_MAX];
	if (catalog_exe_dir(exe, sizeof exe) == 0 &&
	    join(probe, sizeof probe, exe, "/../share/servesim/models") && catalog_is_dir(probe) &&
	    join(out, cap, exe, "/../share/servesim"))
		return 0;
	if (!join(out, cap, SERVESIM_SOURCE_DIR, "") || !join(probe, sizeof probe, out, "/models"))
		return -1;
	return catalog_is_dir(probe) ? 0 : -1;
}

/* Found afresh at each call (nothing is cached: no global state, so
 * threads of a sweep resolve names at the same time). */
const char *catalog_dir(enum catalog_kind kind, char *buf, size_t cap)
{
	char root[PATH_MAX];
	if (data_root(root, sizeof root))
		return NULL;
	int n = snprintf(buf, cap, "%s/%s", root, kinds[kind].folder);
	if (n < 0 || (size_t)n >= cap || !catalog_is_dir(buf))
		return NULL;
	return buf;
}

void catalog_id_of(const char *path, char *out, size_t cap)
{
	snprintf(out, cap, "%s", pathname_base(path));
	char *dot = strrchr(out, '.');
	if (dot && (!strcmp(dot, ".json") || !strcmp(dot, ".ini") || !strcmp(dot, ".gp")))
		*dot = '\0';
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

size_t catalog_list(enum catalog_kind kind, char ***ids)
{
	*ids = NULL;
	char dirbuf[CATALOG_DIR_MAX];
	const char *dir = catalog_dir(kind, dirbuf, sizeof dirbuf);
	DIR *d = dir ? opendir(dir) : NULL;
	if (!d)
		return 0;
	size_t n = 0, cap = 0;
	size_t extlen = strlen(kinds[kind].ext);
	struct dirent *de;
	while ((de = readdir(d))) {
		size_t len = strlen(de->d_name);
		if (len <= extlen || strcmp(de->d_name + len - extlen, kinds[kind].ext))
			continue;
		xgrow(ids, &cap, n + 1, sizeof **ids);
		(*ids)[n] = xstrdup(de->d_name);
		(*ids)[n][len - extlen] = '\0';
		n++;
	}
	closedir(d);
	if (n > 1)
		qsort(*ids, n, sizeof **ids, cmp_str);
	return n;
}

static void free_list(char **ids, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(ids[i]);
	free(ids);
}

/* A Hugging Face id through models/aliases.ini; 0 and the file id in out. */
static int model_alias(const char *name, char *out, size_t cap)
{
	char dirbuf[CATALOG_DIR_MAX];
	const char *dir = catalog_dir(CATALOG_MODELS, dirbuf, sizeof dirbuf);
	if (!dir)
		return -1;
	char path[PATH_MAX];
	if (!join(path, sizeof path, dir, "/aliases.ini"))
		return -1;
	struct inidoc doc;
	int rc = -1;
	if (inidoc_load(&doc, path, NULL) == 0) {
		for (size_t i = 0; i < doc.len; i++) {
			if (!strcasecmp(doc.entries[i].key, name)) {
				snprintf(out, cap, "%s", doc.entries[i].value);
				rc = 0;
				break;
			}
		}
	}
	inidoc_free(&doc);
	return rc;
}

int catalog_resolve(enum catalog_kind kind, const char *name, char *out,
		    size_t cap, struct err *e)
{
	if (kind == CATALOG_MODELS) {
		struct modelname mn;
		if (modelname_resolve(name, &mn, e))
			return -1;
		snprintf(out, cap, "%s", mn.path);
		return 0;
	}
	return catalog_resolve_id(kind, name, out, cap, e);
}

int catalog_resolve_id(enum catalog_kind kind, const char *name, char *out,
		       size_t cap, struct err *e)
{
	if (catalog_is_file(name)) {
		snprintf(out, cap, "%s", name);
		return 0;
	}
	char dirbuf[CATALOG_DIR_MAX];
	const char *dir = catalog_dir(kind, dirbuf, sizeof dirbuf);
	if (!dir)
		return err_set(e, "%s: no data folder found (set SERVESIM_DATA_DIR to the folder holding %s/)",
			       name, kinds[kind].folder);
	char id[256];
	snprintf(id, sizeof id, "%s", name);
	if (kind == CATALOG_MODELS && strchr(name, '/'))
		model_alias(name, id, sizeof id);
	char **ids;
	size_t n = catalog_list(kind, &ids);
	for (size_t i = 0; i < n; i++) {
		if (!strcasecmp(ids[i], id)) {
			snprintf(out, cap, "%s/%s%s", dir, ids[i], kinds[kind].ext);
			free_list(ids, n);
			return 0;
		}
	}
	char known[ERR_MSG_MAX / 2];
	size_t used = 0;
	known[0] = '\0';
	for (size_t i = 0; i < n && used + 1 < sizeof known; i++)
		used += (size_t)snprintf(known + used, sizeof known - used, "%s%s",
					 i ? ", " : "", ids[i]);
	free_list(ids, n);
	static const char *const what[] = { "model", "hardware", "scenario", "plot" };
	return err_set(e, "unknown %s '%s'; known: %s (or give a path to a file)",
		       what[kind], name, known);
}
