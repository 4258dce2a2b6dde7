/*
 * servesim merge: joins the --format json outputs of the shards of one
 * sweep, plan or compare (--shard K/N) into exactly what one run prints.
 */
#include <getopt.h>
#include <stdlib.h>

#include "cli.h"
#include "resultdoc.h"
#include "xalloc.h"

static void help(void)
{
	printf("usage: servesim merge FILE… [--format text|csv|json]\n\n"
	       "Joins the JSON outputs of `servesim sweep|plan|compare … --shard K/N --format json`,\n"
	       "one file per shard, all N of them, into the output of the whole run (byte for\n"
	       "byte what it prints without --shard, in the chosen format).\n\n"
	       "  --format F   text (default), csv or json\n\n"
	       "Example:\n"
	       "  for k in 1 2 3 4; do servesim sweep --vary request_rate=1:40:1 --shard $k/4 --format json > s$k.json; done\n"
	       "  servesim merge s1.json s2.json s3.json s4.json --format csv > sweep.csv\n");
}

int cmd_merge(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "format", required_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	enum out_format fmt = FMT_TEXT;
	struct err e;
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (c == 'h') {
			help();
			return EXIT_OK;
		}
		if (c != 'f')
			return cli_bad_option("merge", argv);
		if (cli_parse_format(optarg, 1u << FMT_TEXT | 1u << FMT_CSV | 1u << FMT_JSON, &fmt, &e))
			return cli_fail("merge", &e);
	}
	size_t n = (size_t)(argc - optind);
	if (n == 0)
		return cli_misuse("merge", "expected the shards' JSON files (servesim … --shard K/N --format json)");
	json_t **docs = xcalloc(n, sizeof *docs);
	int rc = EXIT_BAD_INPUT;
	for (size_t i = 0; i < n; i++)
		if (!(docs[i] = resultdoc_load(argv[optind + (int)i], &e)))
			goto out;
	json_t *whole = resultdoc_merge(docs, (const char *const *)(argv + optind), n, &e);
	if (!whole)
		goto out;
	rc = resultdoc_print(stdout, whole, fmt) ? EXIT_FAIL : EXIT_OK;
	json_decref(whole);
out:
	if (rc == EXIT_BAD_INPUT)
		cli_fail("merge", &e);
	for (size_t i = 0; i < n; i++)
		json_decref(docs[i]);
	free(docs);
	return rc;
}
