/* servesim list: the ids of everything in the data folders. */
#include <getopt.h>
#include <stdlib.h>

#include "catalog.h"
#include "cli.h"
#include "router.h"

int cmd_list(int argc, char **argv)
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
			printf("usage: servesim list [--format text|json]\n\n"
			       "The model, hardware and scenario ids servesim finds, and where,\n"
			       "and the [cluster] routers.\n");
			return EXIT_OK;
		}
		if (c != 'f')
			return cli_bad_option("list", argv);
		if (cli_parse_format(optarg, 1u << FMT_TEXT | 1u << FMT_JSON, &fmt, &e))
			return cli_fail("list", &e);
	}
	if (optind < argc)   /* not a filter: everything is listed */
		return cli_misuse("list", "expected no argument, got '%s'", argv[optind]);
	static const struct {
		enum catalog_kind kind;
		const char *name;
	} kinds[] = { { CATALOG_MODELS, "models" }, { CATALOG_HARDWARE, "hardware" },
		      { CATALOG_SCENARIOS, "scenarios" } };
	json_t *root = json_object();
	for (size_t k = 0; k < 3; k++) {
		char **ids;
		size_t n = catalog_list(kinds[k].kind, &ids);
		char dirbuf[CATALOG_DIR_MAX];
		const char *dir = catalog_dir(kinds[k].kind, dirbuf, sizeof dirbuf);
		json_t *arr = json_array();
		if (fmt == FMT_TEXT)
			printf("%s (%s):\n", kinds[k].name, dir ? dir : "not found");
		for (size_t i = 0; i < n; i++) {
			if (fmt == FMT_TEXT)
				printf("  %s\n", ids[i]);
			json_array_append_new(arr, json_string(ids[i]));
			free(ids[i]);
		}
		free(ids);
		json_object_set_new(root, kinds[k].name, arr);
	}
	/* The [cluster] routers, from their table (sim/cluster/router.c). */
	json_t *routers = json_array();
	if (fmt == FMT_TEXT)
		printf("routers ([cluster] router):\n");
	for (const struct router_class *rc = router_classes; rc->name; rc++) {
		if (fmt == FMT_TEXT)
			printf("  %-16s %s\n", rc->name, rc->help);
		json_array_append_new(routers, json_pack("{s:s,s:s}", "name", rc->name, "help", rc->help));
	}
	json_object_set_new(root, "routers", routers);
	if (fmt == FMT_JSON)
		return cli_print_json(root);
	json_decref(root);
	return EXIT_OK;
}
