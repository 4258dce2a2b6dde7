#include "list.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "num.h"

int list_next(const char **cursor, char *item, size_t cap)
{
	const char *p = *cursor;
	if (!p)
		return 0;
	const char *comma = strchr(p, ',');
	const char *end = comma ? comma : p + strlen(p);
	*cursor = comma ? comma + 1 : NULL;
	while (p < end && isspace((unsigned char)*p))
		p++;
	while (end > p && isspace((unsigned char)end[-1]))
		end--;
	size_t n = (size_t)(end - p);
	snprintf(item, cap, "%.*s", (int)n, p);
	return n == 0 || n >= cap ? -1 : 1;
}

int list_doubles(const char *s, double *out, int max, char *bad, size_t cap_bad)
{
	char item[128];
	int n = 0, rc;
	for (const char *cur = s; (rc = list_next(&cur, item, sizeof item)) != 0;) {
		if (rc < 0 || n == max || num_parse_double(item, &out[n])) {
			if (bad)
				snprintf(bad, cap_bad, "%s", item);
			return -1;
		}
		n++;
	}
	return n;
}
