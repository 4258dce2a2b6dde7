#include "cli.h"
#include "report.h"

#include <getopt.h>
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
	fprintf(stderr, "servesim %s: %s (servesim %s --help)\n", verb, msg, verb);
	return EXIT_BAD_INPUT;
}

int cli_bad_option(const char *verb, char **argv)
{
	/* getopt_long, quiet (main sets opterr = 0), leaves optind past the
	 * word it refused and optopt at the option's value, 0 for a long
	 * option it does not know. servesim has no short options. */
	const char *word = optind > 0 ? argv[optind - 1] : "";
	if (strncmp(word, "--", 2))
		return cli_misuse(verb, "unknown option '-%c'", optopt > ' ' && optopt < 127 ? optopt : '?');
	if (!optopt)
		return cli_misuse(verb, "unknown option '%.*s'", (int)strcspn(word, "="), word);
	if (strchr(word, '='))
		return cli_misuse(verb, "option '%.*s' takes no value, got '%s'", (int)strcspn(word, "="), word, word);
	return cli_misuse(verb, "option '%s' expects a value", word);
}

int cli_parse_format(const char *s, unsigned allowed, enum out_format *out, struct err *e)
{
	const char *const *names = out_format_names;
	char list[64] = "";
	for (int i = 0; i < N_OUT_FORMATS; i++) {
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

int cli_print_json_run(json_t *j, const struct run_result *res)
{
	/* Every JSON result says which servesim wrote it (servesim.version). */
	json_t *ss = json_object_get(j, "servesim");
	if (json_is_object(ss) && !json_object_get(ss, "version"))
		json_object_set_new(ss, "version", json_string(SERVESIM_VERSION));
	else if (json_is_object(j) && !ss)
		json_object_set_new(j, "servesim", json_pack("{s:s}", "version", SERVESIM_VERSION));
	struct err e;
	int rc = report_json_dumpf(j, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(12), res, &e);
	json_decref(j);
	if (rc)
		fprintf(stderr, "servesim: %s\n", e.msg);
	if (rc || fputc('\n', stdout) == EOF || fflush(stdout))
		return EXIT_FAIL;
	return EXIT_OK;
}

int cli_print_json(json_t *j)
{
	return cli_print_json_run(j, NULL);
}

