/*
 * servesim sweep: a grid over scenario keys, one row per point with
 * throughput, goodput, latency percentiles, peak KV usage and preemptions,
 * each as a mean with its 95% confidence interval over replications.
 */
#include <math.h>
#include <stdlib.h>

#include "cliplan.h"
#include "sweepdoc.h"
#include "xalloc.h"

static void help(void)
{
	printf("usage: servesim sweep [SCENARIO] --vary KEY=VALUES [--vary …] [--duration S] [--set S.K=V]…\n"
	       "                      [--replications N] [--jobs N] [--shard K/N]\n"
	       "                      [--format text|csv|json] [--plot DIR] [--svg]\n\n"
	       "Runs the scenario at every point of a grid. Without SCENARIO: the built-in\n"
	       "default (Llama-3.1-8B on H100 SXM, 200 prompts at 4 req/s).\n\n"
	       "  --vary KEY=VALUES   an axis of the grid (repeatable; the first varies slowest).\n"
	       "                      KEY: SECTION.KEY of a scenario, or one of %s.\n"
	       "                      VALUES: comma-separated values or ranges START:STOP:STEP,\n"
	       "                      e.g. request_rate=1:20:1  hardware=h100-sxm,a100-80gb-sxm\n"
	       "  --duration S        every point with a request rate sends at least rate × S\n"
	       "                      requests (as plan's --duration; default: num_prompts)\n"
	       CLIPLAN_HELP
	       "\nPer point: request and output throughput, goodput under the scenario's [slo],\n"
	       "TTFT, TPOT, ITL and E2EL mean/p50/p90/p99 (ms), peak KV usage, preemptions.\n"
	       "Examples:\n"
	       "  servesim sweep c13-bench-serve --vary request_rate=2:30:2 --replications 5\n"
	       "  servesim sweep --vary hardware=h100-sxm,l40s --vary max_concurrency=1,4,16,64 --format csv\n",
	       sweep_short_names());
}

int cmd_sweep(int argc, char **argv)
{
	static const struct option opts[] = {
		CLIPLAN_OPTIONS,
		{ "duration", required_argument, NULL, 'd' },
		{ "help", no_argument, NULL, 'h' },
		{ "vary", required_argument, NULL, 'v' },
		{ 0 },
	};
	struct cliplan cp;
	struct sweep_axis *axes = NULL;
	size_t n_axes = 0, cap = 0;
	struct sweep_point *pts = NULL;
	size_t n_pts = 0;
	struct err e;
	int c, rc = EXIT_BAD_INPUT;
	double duration = 0;
	cliplan_init(&cp, "sweep", 1);
	if (cliplan_args(&cp, opts, &argc, &argv, &e))
		goto fail;
	while ((c = cliplan_next(&cp, argc, argv, opts, &e)) != -1) {
		if (c == CLIPLAN_BAD)
			goto fail;
		if (c == 'h') {
			help();
			rc = EXIT_OK;
			goto out;
		}
		if (c == 'd') {
			if (cliplan_double("--duration", optarg, 0, 1e7, "seconds >= 0", &duration, &e))
				goto fail;
			continue;
		}
		if (c != 'v') {
			rc = cli_bad_option("sweep", argv);
			goto out;
		}
		xgrow(&axes, &cap, n_axes + 1, sizeof *axes);
		if (sweep_axis_parse(&axes[n_axes++], optarg, &e))
			goto fail;
	}
	if (n_axes == 0) {
		rc = cli_misuse("sweep", "--vary: expected at least one KEY=VALUES (e.g. --vary request_rate=1:10:1)");
		goto out;
	}
	struct scenario sc;
	struct sweep sw;
	if (cliplan_scenario(&cp, argc, argv, optind, &sc, &e) ||
	    sweep_init(&sw, cp.scenario, &cp.ov, axes, n_axes, &e))
		goto fail;
	sw.duration_s = duration;
	if (sweep_run(&sw, &cp.shard, cp.replications, cp.jobs, cp.progress, &pts, &n_pts, &e))
		goto fail;
	/* Each point that falls short is named up to SHORT_NAMED of them,
	 * then one line counts them all: a 1000-point sweep past saturation
	 * printed 1000 lines. */
	enum { SHORT_NAMED = 3 };
	size_t failed = 0, short_of = 0;
	for (size_t i = 0; i < n_pts; i++) {
		failed += pts[i].error != NULL;
		/* An engine that cannot keep up finishes the run late: its
		 * achieved rate falls short of the offered one (the run's
		 * ramp and drain cost a few percent at most; 10% is not that). */
		struct scenario ps;
		double got = pts[i].s.mean[MEAS_REQUEST_THROUGHPUT];
		if (pts[i].error || sweep_point_scenario(&sw, pts[i].index, &ps, &e) ||
		    !isfinite(ps.request_rate) || ps.trace[0] || ps.n_stages || ps.users > 0 || ps.max_concurrency > 0)
			continue;
		if (got < 0.9 * ps.request_rate && ++short_of <= SHORT_NAMED)
			fprintf(stderr, "servesim sweep: warning: point %zu achieved %.4g req/s of the %.4g offered: the engine cannot keep up and a queue grows for the whole run (latencies there depend on the run's length)\n",
				pts[i].index, got, ps.request_rate);
	}
	if (short_of > SHORT_NAMED)
		fprintf(stderr, "servesim sweep: warning: %zu of %zu points achieved under 90%% of their offered rate (the first %d named above)\n",
			short_of, n_pts, (int)SHORT_NAMED);
	json_t *doc = sweepdoc_build(&sw, &cp.shard, cp.replications, pts, n_pts);
	if (duration > 0)
		json_object_set_new(doc, "duration_s", resultdoc_real(duration, 3));
	rc = cliplan_emit(&cp, doc);
	if (failed)
		fprintf(stderr, "servesim sweep: %zu of %zu points could not run; their rows hold the reason\n",
			failed, n_pts);
	goto out;
fail:
	rc = cli_fail("sweep", &e);
out:
	for (size_t i = 0; i < n_pts; i++)
		free(pts[i].error);
	free(pts);
	for (size_t i = 0; i < n_axes; i++)
		sweep_axis_free(&axes[i]);
	free(axes);
	cliplan_free(&cp);
	return rc;
}
