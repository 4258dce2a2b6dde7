#include "pathname.h"

#include <stdio.h>
#include <string.h>

const char *pathname_base(const char *path)
{
	const char *slash = path ? strrchr(path, '/') : NULL;
	return slash ? slash + 1 : path ? path : "";
}

void pathname_parent(const char *path, char *out, size_t cap)
{
	const char *slash = strrchr(path, '/');
	if (!slash)
		snprintf(out, cap, ".");
	else if (slash == path)
		snprintf(out, cap, "/");
	else
		snprintf(out, cap, "%.*s", (int)(slash - path), path);
}
