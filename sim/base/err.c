#include "err.h"

#include <stdio.h>
#include <string.h>

int err_set(struct err *e, const char *fmt, ...)
{
	if (e) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(e->msg, sizeof e->msg, fmt, ap);
		va_end(ap);
	}
	return -1;
}

int err_prefix(struct err *e, const char *fmt, ...)
{
	if (e) {
		char joined[2 * ERR_MSG_MAX + 2];
		va_list ap;
		va_start(ap, fmt);
		int n = vsnprintf(joined, ERR_MSG_MAX, fmt, ap);
		va_end(ap);
		if (n < 0)
			n = 0;
		if (n >= ERR_MSG_MAX)
			n = ERR_MSG_MAX - 1;
		memcpy(joined + n, ": ", 2);
		memcpy(joined + n + 2, e->msg, ERR_MSG_MAX);
		memcpy(e->msg, joined, ERR_MSG_MAX - 1);
		e->msg[ERR_MSG_MAX - 1] = '\0';
	}
	return -1;
}
