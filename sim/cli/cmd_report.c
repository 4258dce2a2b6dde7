/*
 * servesim report: one self-contained HTML page (html.h) of a run, a
 * sweep, a plan or a compare, to send to the people a decision is made
 * with.
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "catalog.h"
#include "cli.h"
#include "html.h"
#include "resultdoc.h"
#include "run.h"
#include "scenario.h"
#include "xalloc.h"

static void help(void)
{
	printf("usage: servesim report [SCENARIO|RESULT.json]… [--out FILE] [--model M] "
	       "[--hardware H]\n"
	       "                       [--set SECTION.KEY=VALUE]… [--seed N]\n\n"
	       "Writes one HTML page, self-contained (inline SVG plots and CSS, no script, "
	       "nothing\n"
	       "fetched from the network), that reads the same mailed, offline or printed. Each\n"
	       "input gets a section: the question, the answer first (which GPU, how many, at "
	       "what\n"
	       "cost, under which SLO), tables and plots, the configuration and what the numbers\n"
	       "rest on (hardware profile sources, the accuracy figures).\n\n"
	       "  SCENARIO      a scenario id (servesim list) or INI path: simulated for the "
	       "report\n"
	       "                (running/waiting/KV usage and throughput over time, TTFT and ITL\n"
	       "                CDFs on log axes). Without any input: the built-in default.\n"
	       "  RESULT.json   the --format json output of servesim sweep (latency and "
	       "throughput\n"
	       "                against the varied key, 95%% CIs), plan (the cheapest "
	       "configuration\n"
	       "                within the SLO, each candidate's search), compare (the devices "
	       "side\n"
	       "                by side) or run (its tables)\n\n"
	       "  --out FILE    where the page goes, written whole or not at all (default: "
	       "stdout)\n"
	       "  --model M, --hardware H, --set S.K=V, --seed N\n"
	       "                as servesim run, for every SCENARIO input\n\n"
	       "Example:\n"
	       "  servesim plan c13-bench-serve --slo ttft_p99_ms=2000 --hardware h100-sxm,l40s "
	       "\\\n"
	       "      --target-rate 20 --format json > plan.json\n"
	       "  servesim report plan.json c13-bench-serve --out report.html\n");
}

/* A JSON input: an existing file named *.json, or whose first non-blank
 * byte is '{'. */
static bool is_json_file(const char *path)
{
	struct stat st;
	if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
		return false;
	size_t n = strlen(path);
	if (n > 5 && !strcmp(path + n - 5, ".json"))
		return true;
	FILE *f = fopen(path, "r");
	if (!f)
		return false;
	int c;
	while ((c = fgetc(f)) == ' ' || c == '\n' || c == '\t' || c == '\r') {
	}
	fclose(f);
	return c == '{';
}

int cmd_report(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "hardware", required_argument, NULL, 'H' },
		{ "help", no_argument, NULL, 'h' },
		{ "model", required_argument, NULL, 'm' },
		{ "out", required_argument, NULL, 'o' },
		{ "seed", required_argument, NULL, 's' },
		{ "set", required_argument, NULL, 'S' },
		{ 0 },
	};
	const char *out = "-";
	struct inidoc ov = { 0 };
	struct err e;
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		int bad = 0;
		switch (c) {
		case 'H':
			bad = inidoc_add_option(&ov, "--hardware", "run.hardware", optarg, &e);
			break;
		case 'h':
			help();
			inidoc_free(&ov);
			return EXIT_OK;
		case 'm':
			bad = inidoc_add_option(&ov, "--model", "run.model", optarg, &e);
			break;
		case 'o':
			out = optarg;
			break;
		case 's':
			bad = inidoc_add_option(&ov, "--seed", "run.seed", optarg, &e);
			break;
		case 'S':
			bad = inidoc_add_override(&ov, optarg, &e);
			break;
		default:
			inidoc_free(&ov);
			return cli_bad_option("report", argv);
		}
		if (bad) {
			inidoc_free(&ov);
			return cli_fail("report", &e);
		}
	}
	size_t n = optind < argc ? (size_t)(argc - optind) : 1;
	struct html_source *src = xcalloc(n, sizeof *src);
	struct run_result *runs = xcalloc(n, sizeof *runs);
	char(*paths)[4096] = xcalloc(n, sizeof *paths);
	int rc = EXIT_BAD_INPUT;
	for (size_t i = 0; i < n; i++) {
		const char *arg = optind < argc ? argv[optind + (int)i] : NULL;
		src[i].label = arg ? arg : "the built-in default scenario";
		if (arg && is_json_file(arg)) {
			src[i].doc = resultdoc_read_json(arg, &e);
			if (!src[i].doc || html_check_doc(src[i].doc, arg, &e)) {
				cli_fail("report", &e);
				goto out;
			}
			continue;
		}
		if (arg && catalog_resolve(CATALOG_SCENARIOS, arg, paths[i], sizeof paths[i], &e)) {
			cli_fail("report", &e);
			goto out;
		}
		struct scenario sc;
		if (scenario_load(&sc, arg ? paths[i] : NULL, &ov, &e) ||
		    run_simulate_timeline(&sc, &runs[i], &e)) {
			cli_fail("report", &e);
			goto out;
		}
		src[i].run = &runs[i];
		src[i].scenario_path = arg ? paths[i] : NULL;
		src[i].overrides = &ov;
	}
	if (html_report(out, src, n, &e)) {
		fprintf(stderr, "servesim report: %s\n", e.msg);
		rc = EXIT_FAIL;
		goto out;
	}
	if (strcmp(out, "-"))
		fprintf(stderr, "servesim report: wrote %s\n", out);
	rc = EXIT_OK;
out:
	for (size_t i = 0; i < n; i++) {
		run_result_free(&runs[i]);
		json_decref(src[i].doc);
	}
	free(paths);
	free(runs);
	free(src);
	inidoc_free(&ov);
	return rc;
}
