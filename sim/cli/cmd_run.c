/*
 * servesim run: simulate one scenario and report it as vllm bench serve
 * would (SEED C13), plus what only a simulator can see.
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "catalog.h"
#include "cli.h"
#include "leanout.h"
#include "list.h"
#include "num.h"
#include "plot.h"
#include "progress.h"
#include "report.h"
#include "run.h"
#include "vllmflags.h"

static void help(void)
{
	printf("usage: servesim run [SCENARIO|MODEL] [--model M] [--hardware H] [--set SECTION.KEY=VALUE]…\n"
	       "                    [--seed N] [--format text|json|prom] [--out DIR] [--epoch S]\n"
	       "                    [--metric-percentiles 50,90,99]\n\n"
	       "Simulates serving a workload. Without SCENARIO: Llama-3.1-8B on H100 SXM, 200\n"
	       "prompts at 4 req/s (vllm bench serve --num-prompts 200 --request-rate 4).\n"
	       "SCENARIO is a scenario id (servesim list) or an INI path; a model name there\n"
	       "instead (as in `vllm serve MODEL`) runs the default workload on that model.\n\n"
	       "  --model M           run.model: an id, a Hugging Face id (aliases, the local HF\n"
	       "                      cache), a config.json or folder, an Ollama tag, a .gguf\n"
	       "  --hardware H        run.hardware (id or INI path)\n"
	       "  --set S.K=V         override any scenario key, e.g. --set workload.request_rate=8\n"
	       "  --seed N            run.seed\n"
	       "  --format F          text (vllm bench serve summary + servesim sections),\n"
	       "                      json (vllm --save-result keys + stages + servesim),\n"
	       "                      prom (vLLM's Prometheus metrics)\n"
	       "  --out DIR           also write DIR/requests.csv, DIR/timeseries.csv,\n"
	       "                      DIR/itl_histogram.csv and DIR/openmetrics.txt (vLLM's metrics\n"
	       "                      scraped every simulated second, timestamped, for promtool\n"
	       "                      tsdb create-blocks-from openmetrics and Grafana)\n"
	       "  --epoch S           openmetrics.txt: the Unix time simulated time 0 maps to\n"
	       "                      (default 0; e.g. --epoch $(date +%%s))\n"
	       "  --plot DIR          also write those CSVs to DIR with gnuplot pictures of them\n"
	       "                      (TTFT, TPOT and ITL CDFs, KV usage and the queue over time)\n"
	       "  --svg               --plot: SVG pictures instead of PNG\n"
	       "  --metric-percentiles P,…  percentiles to report (default 99)\n"
	       "  --exact-percentiles keep every TTFT, TPOT, E2EL and queue time: past 65,536\n"
	       "                      requests they are otherwise sketched (percentiles within\n"
	       "                      0.025%% relative; means and counts exact), so memory\n"
	       "                      follows the requests in flight (docs/speed.md)\n"
	       "  --no-fast-forward   step every decode one by one (the reference the\n"
	       "                      fast-forward's outputs equal byte for byte; slower)\n"
	       "  --progress, --no-progress  the progress line on stderr (default: when it is\n"
	       "                      a terminal)\n"
	       "  --save-detailed     json: add the per-request arrays of vllm bench serve\n"
	       "                      (input_lens, output_lens, ttfts, latencies, start_times,\n"
	       "                      errors; no itls) and Ollama's fields per request\n"
	       "  --save-result       also write the JSON result file as vllm bench serve does\n"
	       "                      (--result-dir, --result-filename, --append-result, --label,\n"
	       "                      --metadata K=V…); --percentile-metrics ttft,tpot,itl,e2el\n"
	       "                      chooses the metrics reported (default: all four)\n"
	       VLLMFLAGS_HELP);
}

static int parse_percentiles(const char *s, double *out, size_t *n, struct err *e)
{
	char tok[64];
	int rc;
	*n = 0;
	for (const char *cur = s; (rc = list_next(&cur, tok, sizeof tok)) != 0;) {
		double p;
		if (rc < 0 || *n == 16 || num_parse_double(tok, &p) || p <= 0 || p >= 100)
			return err_set(e, "--metric-percentiles: expected up to 16 numbers in (0, 100) like 50,90,99, got '%s'",
				       tok);
		out[(*n)++] = p;
	}
	return 0;
}

int cmd_run(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "epoch", required_argument, NULL, 'E' },
		{ "format", required_argument, NULL, 'f' },
		{ "hardware", required_argument, NULL, 'H' },
		{ "help", no_argument, NULL, 'h' },
		{ "metric-percentiles", required_argument, NULL, 'p' },
		{ "model", required_argument, NULL, 'm' },
		{ "out", required_argument, NULL, 'o' },
		{ "save-detailed", no_argument, NULL, 'd' },
		{ "exact-percentiles", no_argument, NULL, 'x' },
		{ "no-fast-forward", no_argument, NULL, 'F' },
		{ "no-progress", no_argument, NULL, 'Q' },
		{ "plot", required_argument, NULL, 'P' },
		{ "progress", no_argument, NULL, 'q' },
		{ "seed", required_argument, NULL, 's' },
		{ "set", required_argument, NULL, 'S' },
		{ "svg", no_argument, NULL, 'g' },
		{ 0 },
	};
	enum out_format fmt = FMT_TEXT;
	const char *out_dir = NULL;
	const char *plot_dir = NULL;
	double pct[16] = { 99 };
	size_t n_pct = 1;
	bool detailed = false, svg = false, exact = false, no_ff = false;
	enum progress_mode progress = PROGRESS_AUTO;
	double epoch_s = 0;
	struct inidoc ov = { 0 };
	struct err e;
	int c, rc = EXIT_BAD_INPUT;
	struct vllm_args va;
	if (vllmflags_rewrite("run", opts, argc, argv, &va, &e)) {
		vllmflags_free(&va);
		return cli_fail("run", &e);
	}
	argc = va.argc;
	argv = va.argv;
	optind = 1;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		int bad = 0;
		switch (c) {
		case 'f':
			bad = cli_parse_format(optarg, 1u << FMT_TEXT | 1u << FMT_JSON | 1u << FMT_PROM, &fmt, &e);
			break;
		case 'H': bad = inidoc_add_option(&ov, "--hardware", "run.hardware", optarg, &e); break;
		case 'h': help(); inidoc_free(&ov); vllmflags_free(&va); return EXIT_OK;
		case 'm': bad = inidoc_add_option(&ov, "--model", "run.model", optarg, &e); break;
		case 'o': out_dir = optarg; break;
		case 'P': plot_dir = optarg; break;
		case 'p': bad = parse_percentiles(optarg, pct, &n_pct, &e); break;
		case 'd': detailed = true; break;
		case 'x': exact = true; break;
		case 'F': no_ff = true; break;
		case 'q': progress = PROGRESS_ON; break;
		case 'Q': progress = PROGRESS_OFF; break;
		case 'g': svg = true; break;
		case 'E':
			if (num_parse_double(optarg, &epoch_s) || !(epoch_s >= 0) || epoch_s > 1e11)
				bad = err_set(&e, "--epoch: expected Unix seconds (0 or more), got '%s'", optarg);
			break;
		case 's': bad = inidoc_add_option(&ov, "--seed", "run.seed", optarg, &e); break;
		case 'S': bad = inidoc_add_override_from(&ov, optarg, vllmflags_origin(&va, optarg), &e); break;
		default: /* argv is va's: named before it is freed */
			rc = cli_bad_option("run", argv);
			inidoc_free(&ov);
			vllmflags_free(&va);
			return rc;
		}
		if (bad) {
			inidoc_free(&ov);
			vllmflags_free(&va);
			return cli_fail("run", &e);
		}
	}
	if (optind < argc - 1) {
		inidoc_free(&ov);
		rc = cli_misuse("run", "expected at most one scenario, got '%s' too", argv[optind + 1]);
		vllmflags_free(&va);
		return rc;
	}
	char path[4096];
	const char *scenario_path = NULL;
	if (optind == argc - 1) {
		/* A scenario, or a model as `vllm serve MODEL` names it. */
		int r = vllmflags_scenario_or_model(argv[optind], path, sizeof path, &ov, &e);
		if (r < 0) {
			inidoc_free(&ov);
			vllmflags_free(&va);
			return cli_fail("run", &e);
		}
		scenario_path = r ? path : NULL;
	}
	struct scenario sc;
	struct run_result res;
	memset(&res, 0, sizeof res);
	/* The timeline (token gaps and steps by second) only feeds the
	 * Prometheus metrics: recorded for --format prom and --out alone. */
	bool timeline = fmt == FMT_PROM || out_dir;
	bool want_detail = detailed || va.out.save_detailed;
	struct run_opts ro_run = { .exact_percentiles = exact, .timeline = timeline, .no_fast_forward = no_ff };
	struct leanout lo = { 0 };
	struct plot_opts po = { 0 };
	if (scenario_load(&sc, scenario_path, &ov, &e)) {
		cli_fail("run", &e);
		goto out;
	}
	/* What reads the requests one by one keeps them; else a lean run,
	 * whose memory follows the requests in flight. --plot's and --out's
	 * files, --save-detailed's arrays and the Prometheus scrapes of one
	 * vLLM engine (at the end, and over time for --out) are streamed as
	 * requests finish (leanout.h), and llama-server's metrics are sums
	 * made as requests finish anyway (ollamafields.h); a vLLM cluster's
	 * end-of-run scrape too, but its scrapes over time (--out) read the
	 * records. */
	bool vllm = sc.engine.cls->family == ENGINE_FAMILY_VLLM;
	bool one_vllm = vllm && sc.cluster.replicas <= 1 && !clustercfg_disaggregated(&sc.cluster);
	bool llama = sc.engine.cls->family == ENGINE_FAMILY_LLAMACPP;
	bool prom_lean = timeline && (one_vllm || llama || (vllm && !out_dir));
	ro_run.lean = !timeline || prom_lean;
	struct leanout_want want = { .csv = (plot_dir || out_dir) && ro_run.lean,
				     .detail = want_detail && ro_run.lean,
				     .prom = prom_lean,
				     .openmetrics = out_dir && prom_lean && one_vllm,
				     .replicas = prom_lean && vllm && !one_vllm };
	if (leanout_open(&lo, &want, &ro_run, &e)) {
		fprintf(stderr, "servesim run: %s%s\n", plot_dir && !out_dir ? "--plot: " : "", e.msg);
		rc = EXIT_FAIL;
		goto out;
	}
	ro_run.progress = progress_create("run", progress);
	int failed = run_simulate_opts(&sc, &res, &ro_run, &e);
	progress_destroy(ro_run.progress);
	if (failed) {
		cli_fail("run", &e);
		goto out;
	}
	if (leanout_finish(&lo, &res, &e)) {
		fprintf(stderr, "servesim run: %s\n", e.msg);
		rc = EXIT_FAIL;
		goto out;
	}
	struct report_opts ro = { pct, n_pct, detailed || va.out.save_detailed, va.out.percentile_metrics };
	if (va.out.save_result) {
		json_t *j = report_json(&res, &ro);
		int bad = vllmflags_save_result(&va.out, j, &sc, sc.model, &res, &e);
		json_decref(j);
		if (bad) {
			fprintf(stderr, "servesim run: %s\n", e.msg);
			rc = EXIT_FAIL;
			goto out;
		}
	}
	if (out_dir && report_out(out_dir, &res, epoch_s, &e)) {
		fprintf(stderr, "servesim run: %s\n", e.msg);
		rc = EXIT_FAIL;
		goto out;
	}
	/* The plots before the report, as --out: a folder that cannot be
	 * written fails the run before anything reaches stdout. */
	po.svg = svg;
	if (plot_dir && plot_run(&res, report_csv, plot_dir, &po, &e)) {
		fprintf(stderr, "servesim run: %s\n", e.msg);
		rc = EXIT_FAIL;
		goto out;
	}
	if (fmt == FMT_JSON)
		rc = cli_print_json_run(report_json(&res, &ro), &res);
	else if (fmt == FMT_PROM)
		report_prom(stdout, &res), rc = EXIT_OK;
	else
		report_text(stdout, &res, &ro), rc = EXIT_OK;
	if (fflush(stdout))
		rc = EXIT_FAIL;
	if (plot_dir)
		plot_note("run", plot_dir, &po);
out:
	run_result_free(&res);
	leanout_close(&lo);
	inidoc_free(&ov);
	vllmflags_free(&va);
	return rc;
}
