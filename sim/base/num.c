#include "num.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Copies s without surrounding blanks into buf; -1 if empty or too long. */
static int trimmed(const char *s, char *buf, size_t cap)
{
	while (isspace((unsigned char)*s))
		s++;
	size_t n = strlen(s);
	while (n && isspace((unsigned char)s[n - 1]))
		n--;
	if (n == 0 || n >= cap)
		return -1;
	memcpy(buf, s, n);
	buf[n] = '\0';
	return 0;
}

int num_parse_double(const char *s, double *out)
{
	char buf[128], *end;
	if (trimmed(s, buf, sizeof buf))
		return -1;
	if (!strcasecmp(buf, "inf") || !strcasecmp(buf, "+inf")) {
		*out = INFINITY;
		return 0;
	}
	/* Decimal only, as Python's float() reads vLLM's numbers: strtod
	 * would take C's hexadecimal floats ("0x1p3" as 8) too. */
	if (strpbrk(buf, "xX"))
		return -1;
	errno = 0;
	double v = strtod(buf, &end);
	if (*end || errno == ERANGE || isnan(v) || isinf(v))
		return -1;
	*out = v;
	return 0;
}

int num_parse_int64(const char *s, int64_t *out)
{
	char buf[64], *end;
	if (trimmed(s, buf, sizeof buf))
		return -1;
	errno = 0;
	long long v = strtoll(buf, &end, 10);
	if (*end || errno == ERANGE)
		return -1;
	*out = v;
	return 0;
}

int num_parse_bool(const char *s, bool *out)
{
	static const char *const yes[] = { "true", "yes", "on", "1" };
	static const char *const no[] = { "false", "no", "off", "0" };
	char buf[16];
	if (trimmed(s, buf, sizeof buf))
		return -1;
	for (size_t i = 0; i < 4; i++) {
		if (!strcasecmp(buf, yes[i])) {
			*out = true;
			return 0;
		}
		if (!strcasecmp(buf, no[i])) {
			*out = false;
			return 0;
		}
	}
	return -1;
}
