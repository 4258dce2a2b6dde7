#include "wholefile.h"

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <string.h>
#include <unistd.h>

/* ".NAME.PID.tmp" beside path; false when it does not fit. */
static bool tmp_of(const char *path, char *out, size_t cap)
{
	const char *slash = strrchr(path, '/');
	int dir_len = slash ? (int)(slash - path + 1) : 0;
	int n = snprintf(out, cap, "%.*s.%s.%ld.tmp", dir_len, path, path + dir_len, (long)getpid());
	return n >= 0 && (size_t)n < cap;
}

FILE *wholefile_open(const char *path, struct err *e)
{
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
	char tmp[PATH_MAX];
	fclose(f);
	if (tmp_of(path, tmp, sizeof tmp))
		unlink(tmp);
}
