#include "wholefile.h"
#include "pathname.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ".NAME.PID.tmp" beside path; false when it does not fit. */
static bool tmp_of(const char *path, char *out, size_t cap)
{
	const char *slash = strrchr(path, '/');
	int dir_len = slash ? (int)(slash - path + 1) : 0;
	/* Room for the name, its dot and ".PID.tmp" (a pid has at most 20
	 * digits), checked first so the result is never truncated. */
	if (strlen(path) + 32 > cap)
		return false;
	snprintf(out, cap, "%.*s.%s.%ld.tmp", dir_len, path, path + dir_len, (long)getpid());
	return true;
}

/* path is there and is no regular file or folder: a device, a FIFO
 * (/dev/stdout, /dev/null, a pipe). Written in place: a temporary renamed
 * onto it would replace the device with a file. */
static bool written_in_place(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode);
}

/* The file path names: a symbolic link's target when it has one, so that
 * the link stays a link and the file it points at is replaced (renamed
 * onto, the link itself would become the file); else path. real holds
 * PATH_MAX bytes. */
static const char *target_of(const char *path, char *real)
{
	struct stat st;
	if (lstat(path, &st) == 0 && S_ISLNK(st.st_mode) && realpath(path, real))
		return real;
	return path;
}

FILE *wholefile_open(const char *path, struct err *e)
{
	char real[PATH_MAX];
	path = target_of(path, real);
	if (written_in_place(path)) {
		FILE *f = fopen(path, "w");
		if (!f)
			err_set(e, "%s: cannot write: %s", path, strerror(errno));
		return f;
	}
	char tmp[PATH_MAX];
	if (!tmp_of(path, tmp, sizeof tmp)) {
		err_set(e, "%s: the path is too long", path);
		return NULL;
	}
	FILE *f = fopen(tmp, "w");
	if (!f)
		err_set(e, "%s: cannot write: %s", tmp, strerror(errno));
	return f;
}

int wholefile_commit(FILE *f, const char *path, struct err *e)
{
	char real[PATH_MAX];
	path = target_of(path, real);
	if (written_in_place(path)) {
		bool ok = !ferror(f);
		ok &= fclose(f) == 0;
		return ok ? 0 : err_set(e, "%s: cannot write: %s", path, strerror(errno));
	}
	char tmp[PATH_MAX];
	tmp_of(path, tmp, sizeof tmp);   /* fitted when opened */
	bool ok = !ferror(f);
	ok &= fclose(f) == 0;
	if (!ok || rename(tmp, path)) {
		int saved = errno;
		unlink(tmp);
		return err_set(e, "%s: cannot write: %s", path, strerror(saved));
	}
	return 0;
}

void wholefile_abort(FILE *f, const char *path)
{
	char tmp[PATH_MAX], real[PATH_MAX];
	path = target_of(path, real);
	fclose(f);
	if (!written_in_place(path) && tmp_of(path, tmp, sizeof tmp))
		unlink(tmp);
}

int wholefile_temp(char *out, size_t cap, const char *stem, const char *suffix, struct err *e)
{
	const char *dir = getenv("TMPDIR");
	if (!dir || !*dir)
		dir = "/tmp";
	int n = snprintf(out, cap, "%s/servesim-%s-XXXXXX%s", dir, stem, suffix);
	if (n < 0 || (size_t)n >= cap)
		return err_set(e, "%s: $TMPDIR: the path is too long", dir);
	int fd = mkstemps(out, (int)strlen(suffix));
	if (fd < 0)
		return err_set(e, "%s: cannot create a temporary file: %s", out, strerror(errno));
	close(fd);
	return 0;
}

int wholefile_mkdirs(const char *dir, struct err *e)
{
	char buf[PATH_MAX];
	if (snprintf(buf, sizeof buf, "%s", dir) >= (int)sizeof buf)
		return err_set(e, "%s: the path is too long", dir);
	/* Each ancestor in turn. */
	for (char *p = buf + 1;; p++) {
		if (*p != '/' && *p != '\0')
			continue;
		char c = *p;
		*p = '\0';
		struct stat st;
		if (stat(buf, &st) != 0 && mkdir(buf, 0777) != 0 && errno != EEXIST)
			return err_set(e, "%s: cannot create the folder: %s", buf, strerror(errno));
		if (stat(buf, &st) == 0 && !S_ISDIR(st.st_mode))
			return err_set(e, "%s: cannot create the folder: a file of that name exists", buf);
		*p = c;
		if (!c)
			break;
	}
	return 0;
}


int wholefile_check(const char *path, struct err *e)
{
	char real[PATH_MAX], dir[PATH_MAX];
	const char *given = path;
	path = target_of(path, real);
	if (written_in_place(path))
		return access(path, W_OK) == 0 ? 0 : err_set(e, "%s: cannot write: %s", given, strerror(errno));
	struct stat st;
	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
		return err_set(e, "%s: cannot write: a folder of that name exists", given);
	pathname_parent(path, dir, sizeof dir);
	if (stat(dir, &st) != 0)
		return err_set(e, "%s: cannot write: its folder %s: %s", given, dir, strerror(errno));
	if (!S_ISDIR(st.st_mode))
		return err_set(e, "%s: cannot write: %s is not a folder", given, dir);
	if (access(dir, W_OK | X_OK) != 0)
		return err_set(e, "%s: cannot write into %s: %s", given, dir, strerror(errno));
	return 0;
}

/* d->dir = dir (without trailing slashes), its parents created, d->fresh
 * set when it does not exist yet. Returns 0, or -1 with e. */
static int prepare(struct wholedir *d, const char *dir, struct err *e)
{
	memset(d, 0, sizeof *d);
	size_t len = strlen(dir);
	while (len > 1 && dir[len - 1] == '/')
		len--;   /* "out/" names the folder "out" */
	if (len == 0 || len >= sizeof d->dir)
		return err_set(e, "%s: expected a folder name that fits in %d bytes", dir, PATH_MAX - 1);
	memcpy(d->dir, dir, len);
	d->dir[len] = '\0';
	char parent[PATH_MAX];
	pathname_parent(d->dir, parent, sizeof parent);
	if (wholefile_mkdirs(parent, e))
		return -1;
	struct stat st;
	if (stat(d->dir, &st) == 0 && !S_ISDIR(st.st_mode))
		return err_set(e, "%s: not a folder", d->dir);
	d->fresh = stat(d->dir, &st) != 0;
	return 0;
}

/* Makes the temporary sibling of d->dir, its path in d->stage. */
static int make_stage(struct wholedir *d, struct err *e)
{
	if (!tmp_of(d->dir, d->stage, sizeof d->stage))
		return err_set(e, "%s: the path is too long", d->dir);
	if (mkdir(d->stage, 0777) != 0)
		return err_set(e, "%s: cannot create the folder: %s", d->stage, strerror(errno));
	return 0;
}

int wholedir_open(struct wholedir *d, const char *dir, struct err *e)
{
	if (prepare(d, dir, e))
		return -1;
	if (!d->fresh) {
		snprintf(d->stage, sizeof d->stage, "%s", d->dir);
		return 0;
	}
	return make_stage(d, e);
}

/* Where file i of the folder is written now. */
static bool staged_path(const struct wholedir *d, int i, char *out, size_t cap)
{
	char path[PATH_MAX];
	int n = snprintf(path, sizeof path, "%s/%s", d->stage, d->names[i]);
	if (n < 0 || (size_t)n >= sizeof path)
		return false;
	if (d->fresh) {
		snprintf(out, cap, "%s", path);
		return true;
	}
	return tmp_of(path, out, cap);
}

FILE *wholedir_file(struct wholedir *d, const char *name, struct err *e)
{
	char path[PATH_MAX];
	if (d->n == WHOLEDIR_MAX_FILES || strchr(name, '/') ||
	    (size_t)snprintf(d->names[d->n], sizeof d->names[d->n], "%s", name) >= sizeof d->names[d->n])
		return err_set(e, "%s/%s: not a file name servesim writes", d->dir, name), NULL;
	if (!staged_path(d, d->n, path, sizeof path))
		return err_set(e, "%s/%s: the path is too long", d->dir, name), NULL;
	FILE *f = fopen(path, "w");
	if (!f)
		return err_set(e, "%s: cannot write: %s", path, strerror(errno)), NULL;
	d->n++;
	return f;
}

int wholedir_close(struct wholedir *d, FILE *f, struct err *e)
{
	bool ok = !ferror(f);
	int saved = errno;
	if (fclose(f) != 0) {
		ok = false;
		saved = errno;
	}
	if (!ok)
		return err_set(e, "%s/%s: cannot write: %s", d->dir, d->names[d->n - 1], strerror(saved));
	return 0;
}

/* A fresh folder goes in place whole, by one rename of its staging
 * folder; on failure abort cleans up. Returns 0, or -1 with e set. */
static int commit_fresh(struct wholedir *d, void (*abort)(struct wholedir *d), struct err *e)
{
	if (rename(d->stage, d->dir) == 0)
		return 0;
	int saved = errno;
	abort(d);
	return err_set(e, "%s: cannot put the folder in place: %s", d->dir, strerror(saved));
}

int wholedir_commit(struct wholedir *d, struct err *e)
{
	if (d->fresh)
		return commit_fresh(d, wholedir_abort, e);
	/* Renames do not run out of space: once every file is staged they all
	 * go in place. */
	for (int i = 0; i < d->n; i++) {
		char tmp[PATH_MAX], path[PATH_MAX + sizeof d->names[0] + 1];
		staged_path(d, i, tmp, sizeof tmp);
		snprintf(path, sizeof path, "%s/%s", d->dir, d->names[i]);
		if (rename(tmp, path) != 0) {
			int saved = errno;
			wholedir_abort(d);
			return err_set(e, "%s: cannot put it in place: %s", path, strerror(saved));
		}
	}
	d->n = 0;
	return 0;
}

void wholedir_abort(struct wholedir *d)
{
	for (int i = 0; i < d->n; i++) {
		char path[PATH_MAX];
		if (staged_path(d, i, path, sizeof path))
			unlink(path);
	}
	d->n = 0;
	if (d->fresh)
		rmdir(d->stage);
}

int wholedir_stage(struct wholedir *d, const char *dir, struct err *e)
{
	return prepare(d, dir, e) || make_stage(d, e) ? -1 : 0;
}

/* Each file of the stage in turn: renamed into d->dir (into_place) or
 * removed. Returns 0, or -1 with e at the first rename that fails. */
static int each_staged(struct wholedir *d, bool into_place, struct err *e)
{
	DIR *dp = opendir(d->stage);
	if (!dp)
		return err_set(e, "%s: cannot read the folder: %s", d->stage, strerror(errno));
	int rc = 0;
	for (struct dirent *de; rc == 0 && (de = readdir(dp));) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		char from[PATH_MAX], to[PATH_MAX];
		int n = snprintf(from, sizeof from, "%s/%s", d->stage, de->d_name);
		int m = snprintf(to, sizeof to, "%s/%s", d->dir, de->d_name);
		if (n < 0 || (size_t)n >= sizeof from || m < 0 || (size_t)m >= sizeof to)
			rc = err_set(e, "%s/%s: the path is too long", d->dir, de->d_name);
		else if (!into_place)
			unlink(from);
		else if (rename(from, to) != 0)
			rc = err_set(e, "%s: cannot put it in place: %s", to, strerror(errno));
	}
	closedir(dp);
	return rc;
}

int wholedir_stage_commit(struct wholedir *d, struct err *e)
{
	if (d->fresh)
		return commit_fresh(d, wholedir_stage_abort, e);
	if (each_staged(d, true, e)) {
		wholedir_stage_abort(d);
		return -1;
	}
	rmdir(d->stage);
	return 0;
}

void wholedir_stage_abort(struct wholedir *d)
{
	struct err ignored;
	each_staged(d, false, &ignored);
	rmdir(d->stage);
}
