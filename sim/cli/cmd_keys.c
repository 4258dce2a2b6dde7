/* servesim keys: the key reference (sim/report/keydoc.c), docs/keys.md. */
#include <getopt.h>
#include <string.h>

#include "cli.h"
#include "keydoc.h"

int cmd_keys(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "format", required_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (c == 'h') {
			printf("usage: servesim keys [--format md]\n\n"
			       "Every key a scenario file ([run], [workload], [engine], [slo], "
			       "[cluster])\n"
			       "or a hardware profile may hold: its type, the values it accepts "
			       "and its\n"
			       "default, printed as Markdown from the key tables the parsers bind\n"
			       "(docs/keys.md is this output).\n");
			return EXIT_OK;
		}
		if (c != 'f')
			return cli_bad_option("keys", argv);
		if (strcmp(optarg, "md"))
			return cli_misuse("keys", "--format: expected md");
	}
	if (optind < argc)
		return cli_misuse("keys", "takes no arguments");
	struct err e;
	if (keydoc_write_md(stdout, &e))
		return cli_fail("keys", &e);
	return EXIT_OK;
}
