#include "textfile.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xalloc.h"

char *textfile_read(const char *path, size_t max_bytes, struct err *e)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		err_set(e, "%s: cannot open: %s", path, strerror(errno));
		return NULL;
	}
	size_t cap = 1 << 16, n = 0, got;
	char *buf = xmalloc(cap);
	while ((got = fread(buf + n, 1, cap - n - 1, f)) > 0) {
		n += got;
		if (n > max_bytes) {
			fclose(f);
			free(buf);
			err_set(e, "%s: larger than %zu bytes", path, max_bytes);
			return NULL;
		}
		if (cap - n < 2)
			buf = xrealloc(buf, cap *= 2);
	}
	bool bad = ferror(f);
	fclose(f);
	if (bad) {
		free(buf);
		err_set(e, "%s: read error", path);
		return NULL;
	}
	/* A NUL byte would end the text there: what follows would be lost
	 * without a word (a row, a whole file behind a NUL at its start). */
	const char *nul = memchr(buf, '\0', n);
	if (nul) {
		size_t line = 1, col = 1;
		for (const char *c = buf; c < nul; c++, col++)
			if (*c == '\n')
				line++, col = 0;
		free(buf);
		err_set(e, "%s:%zu: a NUL byte at column %zu; expected text", path, line, col);
		return NULL;
	}
	buf[n] = '\0';
	return buf;
}

bool textfile_next_line(const char **cur, const char **line, size_t *len)
{
	const char *p = *cur;
	if (!p || !*p)
		return false;
	const char *nl = strchr(p, '\n');
	size_t n = nl ? (size_t)(nl - p) : strlen(p);
	*line = p;
	*len = n;
	*cur = p + n + (nl ? 1 : 0);
	return true;
}
