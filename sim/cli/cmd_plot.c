/*
 * servesim plot: pictures of a result, drawn by gnuplot with the scripts
 * in plots/: a sweep/plan/compare JSON (or a --plot folder), or a run's
 * --out folder (requests.csv, timeseries.csv).
 */
#include <getopt.h>

#include "cli.h"
#include "plot.h"

static void help(void)
{
	printf("usage: servesim plot RESULT.json|DIR [--out DIR] [--svg]\n\n"
	       "RESULT.json: the --format json output of servesim sweep, plan or compare:\n"
	       "  sweep    latency percentiles against the varied rate (the knee) and throughput\n"
	       "  plan     the search (worst SLO ratio against load) and goodput against cost\n"
	       "  compare  the devices side by side, and goodput against cost\n"
	       "DIR: a folder of `servesim run --out DIR` (TTFT and TPOT CDFs, KV usage and\n"
	       "running/waiting requests over time) or of --plot DIR (its result.json).\n\n"
	       "  --out DIR   where the data files and pictures go (default: next to the input)\n"
	       "  --svg       SVG instead of PNG\n\n"
	       "gnuplot draws the pictures (Debian/Ubuntu: apt-get install gnuplot-nox); without\n"
	       "it the data files are still written.\n");
}

int cmd_plot(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "out", required_argument, NULL, 'o' },
		{ "svg", no_argument, NULL, 's' },
		{ 0 },
	};
	struct plot_opts po = { 0 };
	const char *out = NULL;
	struct err e;
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (c == 'h') {
			help();
			return EXIT_OK;
		} else if (c == 'o') {
			out = optarg;
		} else if (c == 's') {
			po.svg = true;
		} else {
			return cli_bad_option("plot", argv);
		}
	}
	if (optind != argc - 1)
		return cli_misuse("plot", "expected one RESULT.json or folder");
	if (plot_path(argv[optind], out, &po, &e)) {
		int rc = cli_fail("plot", &e);
		return po.write_failed ? EXIT_FAIL : rc;   /* 1: the output, 2: the input */
	}
	plot_note("plot", po.dir, &po);
	return EXIT_OK;
}
