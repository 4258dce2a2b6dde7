#include "err.h"

#include <stdio.h>
#include <string.h>

size_t err_escape(char *dst, size_t cap, const char *src)
{
	size_t n = 0;
	if (cap == 0)
		return 0;
	for (const unsigned char *s = (const unsigned char *)src; *s; s++) {
		char esc[8];
		size_t len;
		if (*s == '\n' || *s == '\r' || *s == '\t') {
			esc[0] = '\\';
			esc[1] = *s == '\n' ? 'n' : *s == '\r' ? 'r' : 't';
			len = 2;
		} else if (*s < 0x20 || *s == 0x7f) {
			len = (size_t)snprintf(esc, sizeof esc, "\\x%02x", *s);
		} else {
			esc[0] = (char)*s;
			len = 1;
		}
		if (n + len >= cap)
			break;
		memcpy(dst + n, esc, len);
		n += len;
	}
	dst[n] = '\0';
	return n;
}

int err_set(struct err *e, const char *fmt, ...)
{
	if (e) {
		char raw[ERR_MSG_MAX];
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(raw, sizeof raw, fmt, ap);
		va_end(ap);
		err_escape(e->msg, sizeof e->msg, raw);
	}
	return -1;
}

int err_prefix(struct err *e, const char *fmt, ...)
{
	if (e) {
		char prefix[ERR_MSG_MAX], joined[2 * ERR_MSG_MAX + 2];
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(prefix, sizeof prefix, fmt, ap);
		va_end(ap);
		size_t n = err_escape(joined, ERR_MSG_MAX, prefix);
		memcpy(joined + n, ": ", 2);
		memcpy(joined + n + 2, e->msg, ERR_MSG_MAX);   /* already escaped */
		memcpy(e->msg, joined, ERR_MSG_MAX - 1);
		e->msg[ERR_MSG_MAX - 1] = '\0';
	}
	return -1;
}
