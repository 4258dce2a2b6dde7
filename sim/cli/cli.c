#include "cli.h"

#include <math.h>
#include <stdarg.h>
#include <string.h>

int cli_fail(const char *verb, const struct err *e)
{
	fprintf(stderr, "servesim %s: %s\n", verb, e->msg);
	return EXIT_BAD_INPUT;
}

int cli_misuse(const char *verb, const char *fmt, ...)
{
	char raw[ERR_MSG_MAX], msg[ERR_MSG_MAX];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(raw, sizeof raw, fmt, ap);
	va_end(ap);
	err_escape(msg, sizeof msg, raw);   /* an argument quoted stays on the line */
	fprintf(stderr, "servesim %s: %s\nTry 'servesim %s --help'.\n", verb, msg, verb);
	return EXIT_BAD_INPUT;
}

int cli_parse_format(const char *s, unsigned allowed, enum out_format *out, struct err *e)
{
	static const char *const names[] = { "text", "json", "csv", "prom" };
	char list[64] = "";
	for (int i = 0; i < 4; i++) {
		if (!(allowed & (1u << i)))
			continue;
		if (!strcmp(s, names[i])) {
			*out = (enum out_format)i;
			return 0;
		}
		strcat(list, list[0] ? "|" : "");
		strcat(list, names[i]);
	}
	return err_set(e, "--format: expected %s, got '%s'", list, s);
}

int cli_print_json(json_t *j)
{
	int rc = json_dumpf(j, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(12));
	json_decref(j);
	if (rc || fputc('\n', stdout) == EOF || fflush(stdout))
		return EXIT_FAIL;
	return EXIT_OK;
}

json_t *cli_num(double v)
{
	if (isfinite(v) && v == floor(v) && fabs(v) < 9e15)
		return json_integer((json_int_t)v);
	return json_real(v);
}

json_t *cli_real(double v, int digits)
{
	if (!isfinite(v))
		return json_null();
	double scale = pow(10, digits);
	return cli_num(round(v * scale) / scale);
}
