/*
 * rowtab: find by name, list the names.
 */
#include "rowtab.h"

#include <stdio.h>
#include <string.h>

static const char *name_at(const void *rows, size_t stride, size_t i)
{
	const char *row = (const char *)rows + i * stride;
	const char *name;
	memcpy(&name, row, sizeof name);
	return name;
}

int rowtab_index(const void *rows, size_t stride, const char *name)
{
	for (size_t i = 0; name_at(rows, stride, i); i++)
		if (!strcmp(name_at(rows, stride, i), name))
			return (int)i;
	return -1;
}

const void *rowtab_find(const void *rows, size_t stride, const char *name)
{
	int i = rowtab_index(rows, stride, name);
	return i < 0 ? NULL : (const char *)rows + (size_t)i * stride;
}

void rowtab_list(const void *rows, size_t stride, char *buf, size_t cap)
{
	size_t used = 0;
	buf[0] = '\0';
	for (size_t i = 0; name_at(rows, stride, i) && used + 1 < cap; i++)
		used += (size_t)snprintf(buf + used, cap - used, "%s%s", i ? ", " : "", name_at(rows, stride, i));
}
