/*
 * servesim calibrate: fit a hardware profile's [efficiency] section to
 * measurements, and write the result as a new profile.
 *   fit PROBE.csv   servesim-probe's GPU measurements (fit.h)     } cmd_calibrate_probe.c
 *   gpu             run servesim-probe here, then fit (proberun.h) }
 *   runs FILE…      real serving runs: vllm bench serve results, Ollama
 *                   responses, llama-bench, vLLM /metrics scrapes, the
 *                   calibration CSVs (runobs.h, runfit.h)
 * Exit: 0 written; 2 bad input, too few measurements or a fit that did not
 * converge (nothing written; its table, a diagnostic, on stderr after a
 * warning, stdout empty); 1 a failure of the machine (cannot write, the
 * probe failed, or a build without CUDA support for `gpu`).
 */
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "catalog.h"
#include "calibrate_int.h"
#include "cli.h"
#include "effparam.h"
#include "list.h"
#include "num.h"
#include "pathname.h"
#include "profwrite.h"
#include "progress.h"
#include "runfit.h"
#include "runobs.h"
#include "wholefile.h"
#include "xalloc.h"

#define DEFAULT_MAX_REQUESTS 5000

void calib_help(FILE *f)
{
	fprintf(f,
		"usage: servesim calibrate fit PROBE.csv [RERUN.csv…] --out PROFILE.ini [--hardware H] [--model M]\n"
		"                          [--weights bf16|fp8] [--max-iter N]\n"
		"       servesim calibrate fit --list\n"
		"       servesim calibrate gpu --model M --out PROFILE.ini [--tp N] [--hardware H]\n"
		"                          [--probe PATH] [--probe-csv FILE] [--budget-s S]\n"
		"       servesim calibrate runs FILE… --hardware H --out PROFILE.ini [--model M]\n"
		"                          [--weights W] [--set S.K=V]… [--holdout ID,…]\n"
		"                          [--max-evals N] [--max-requests N] [--tol X] [--jobs N]\n"
		"                          [--progress|--no-progress]\n\n"
		"Fits the [efficiency] section of a hardware profile and writes a new profile:\n"
		"the base profile's keys plus the fitted section, usable as `servesim run --hardware\n"
		"PROFILE.ini`. Prints the prediction error of every measurement before and after.\n\n"
		"fit   GPU measurements from servesim-probe (a CUDA program built with servesim\n"
		"      where nvcc exists; it runs on a bare GPU box). GSL nonlinear least squares\n"
		"      on ln(predicted/measured) through the step-time model's rooflines: bandwidth,\n"
		"      attention_bandwidth, attention_half_seqs, compute_max, compute_half_tokens,\n"
		"      attention_compute, low_precision_compute (fp8 rows), moe_efficiency (moe_gemm\n"
		"      rows). Attention measured by a kernel below production grade only bounds\n"
		"      its efficiency from below. The overheads are written only when the base\n"
		"      profile sets them.\n"
		"      --list prints the probe families the fit reads and what each sets.\n"
		"      --hardware defaults to the profile of the probe's device; --model checks the\n"
		"      probe's dims; --weights picks the GEMM dtype whose rows are fitted.\n"
		"gpu   runs servesim-probe on this machine's GPU for the model (at --tp), then fit.\n"
		"      The measurements are kept (--probe-csv, default PROFILE.ini.probe.csv)\n"
		"      whatever the fit does. A build without CUDA exits 1 ('built without CUDA\n"
		"      support'); scripts/probe-on-gpu measures a GPU box without servesim.\n"
		"runs  real runs: vllm bench serve result JSON (any version), Ollama /api/generate\n"
		"      responses (JSON lines), llama-bench CSV/JSON/JSONL, a vLLM /metrics scrape, or\n"
		"      the calibration CSVs (*_experiments.csv / *_measured.csv). Nelder-Mead on the\n"
		"      mean TTFT, ITL and E2E: bandwidth, attention_bandwidth, attention_half_seqs,\n"
		"      compute_max, moe_efficiency, step_overhead_us, request_overhead_ms, each\n"
		"      evaluation simulating every run.\n"
		"      --holdout ID,…   runs left out of the fit and predicted (ids as printed)\n"
		"      --max-requests N simulate at most N requests a run (default %d)\n"
		"      --max-evals N    simulations of the training runs (default 200)\n"
		"      --tol X          stop when the simplex is smaller (default 0.02)\n"
		"      --set S.K=V      scenario override for every run (e.g. engine settings)\n"
		"Exit: 0 written; 2 bad input, too few measurements or no convergence (nothing\n"
		"written; without convergence a warning and the table go to stderr, stdout stays\n"
		"empty); 1 cannot write, the probe failed, or no CUDA support (gpu).\n",
		DEFAULT_MAX_REQUESTS);
}

int calib_parse_int(const char *name, const char *s, long long lo, long long hi, long long *out,
			 struct err *e)
{
	int64_t v;
	if (num_parse_int64(s, &v) || v < lo || v > hi)
		return err_set(e, "--%s: expected an integer in [%lld, %lld], got '%s'", name, lo, hi, s);
	*out = v;
	return 0;
}

/* bounded: parameters a stand-in kernel bounded from below (NULL: none). */
void calib_print_eff_change(FILE *f, const struct hw_efficiency *before, const struct hw_efficiency *after,
			     const bool *fitted, const double *stderr_after, const bool *bounded)
{
	fprintf(f, "%-26s %12s %12s\n", "parameter", "before", "after");
	for (int id = 0; id < EFF_N_PARAMS; id++) {
		const struct effparam *p = effparam_get(id);
		fprintf(f, "%-26s %12.4g %12.4g", p->key, effparam_value(before, id), effparam_value(after, id));
		if (bounded && bounded[id] && !fitted[id])
			fprintf(f, "   (%s: lower bound from a stand-in kernel)",
				effparam_value(after, id) > effparam_value(before, id) ? "raised" : "kept");
		else if (!fitted[id])
			fprintf(f, "   (kept)");
		else if (stderr_after && stderr_after[id] > 0)
			fprintf(f, "   ± %.2g", stderr_after[id]);
		fprintf(f, "%s%s\n", p->unit[0] ? " " : "", p->unit);
	}
}

double calib_pct(double pred, double meas)
{
	return meas > 0 && isfinite(pred) ? 100 * (pred - meas) / meas : NAN;
}

void calib_put_pct(FILE *f, double v)
{
	if (isnan(v))
		fprintf(f, " %8s", "-");
	else
		fprintf(f, " %+7.1f%%", v);
}

/* Loads the base profile named by name (an id or a path). */
int calib_load_base(const char *name, char *path, size_t cap, struct hw_profile *hw, struct err *e)
{
	if (catalog_resolve(CATALOG_HARDWARE, name, path, cap, e))
		return -1;
	return hw_load(hw, path, e);
}

/* ---- runs ------------------------------------------------------------------------ */

struct mape {
	double sum[OBS_N_METRICS];
	int n[OBS_N_METRICS];
};

static void mape_add(struct mape *m, int metric, double err_pct)
{
	if (isnan(err_pct))
		return;
	m->sum[metric] += fabs(err_pct);
	m->n[metric]++;
}

static void print_mape_row(FILE *f, const char *label, const struct mape *before, const struct mape *after)
{
	fprintf(f, "%-26s", label);
	for (int k = 0; k < OBS_N_METRICS; k++) {
		if (!before->n[k]) {
			fprintf(f, " %17s", "-");
			continue;
		}
		fprintf(f, "   %6.1f%% → %5.1f%%", before->sum[k] / before->n[k], after->sum[k] / after->n[k]);
	}
	fprintf(f, "\n");
}

static void print_runs_table(FILE *f, const struct runobs_set *set, const struct runfit_result *r)
{
	size_t w = 10;
	for (size_t i = 0; i < set->len; i++)
		if (strlen(set->v[i].id) > w)
			w = strlen(set->v[i].id);
	if (w > 60)
		w = 60;
	fprintf(f, "%-*s %5s %-6s %10s %10s %9s %10s %9s\n", (int)w, "run", "stage", "metric", "measured",
	        "before", "error", "after", "error");
	struct mape tb = { 0 }, ta = { 0 }, hb = { 0 }, ha = { 0 };
	for (size_t k = 0; k < r->n_vals; k++) {
		const struct runfit_value *v = &r->vals[k];
		const struct runobs *ob = &set->v[v->obs];
		double eb = calib_pct(v->before_ms, v->measured_ms), ea = calib_pct(v->after_ms, v->measured_ms);
		fprintf(f, "%-*.*s %5d %-6s %10.2f %10.2f", (int)w, (int)w, ob->id, ob->pts[v->point].stage,
		        runobs_metric_names[v->metric], v->measured_ms, v->before_ms);
		calib_put_pct(f, eb);
		fprintf(f, " %10.2f", v->after_ms);
		calib_put_pct(f, ea);
		fprintf(f, "%s\n", v->holdout ? "  held out" : "");
		mape_add(v->holdout ? &hb : &tb, v->metric, eb);
		mape_add(v->holdout ? &ha : &ta, v->metric, ea);
	}
	fprintf(f, "\nmean |error| before → after  %19s %19s %19s\n", "TTFT", "ITL", "E2E");
	print_mape_row(f, "fitted runs", &tb, &ta);
	if (r->n_holdout)
		print_mape_row(f, "held-out runs", &hb, &ha);
}

static int parse_holdout(const char *list, const struct runobs_set *set, bool *holdout, struct err *e)
{
	char tok[256];
	int rc;
	for (const char *cur = list; (rc = list_next(&cur, tok, sizeof tok)) != 0;) {
		if (rc < 0)
			return err_set(e, "--holdout: expected run ids separated by commas, got '%s'", list);
		size_t i = 0;
		while (i < set->len && strcmp(set->v[i].id, tok))
			i++;
		if (i == set->len) {
			char ids[600] = "";
			for (size_t k = 0; k < set->len && strlen(ids) < 480; k++)
				snprintf(ids + strlen(ids), sizeof ids - strlen(ids), "%s%s", k ? ", " : "", set->v[k].id);
			return err_set(e, "--holdout: '%s' is not one of the runs: %s%s", tok, ids,
				       strlen(ids) >= 480 ? ", …" : "");
		}
		holdout[i] = true;
	}
	return 0;
}

static int calibrate_runs(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "hardware", required_argument, NULL, 'H' },
		{ "help", no_argument, NULL, 'h' },
		{ "holdout", required_argument, NULL, 'x' },
		{ "jobs", required_argument, NULL, 'j' },
		{ "max-evals", required_argument, NULL, 'n' },
		{ "max-requests", required_argument, NULL, 'r' },
		{ "model", required_argument, NULL, 'm' },
		{ "no-progress", no_argument, NULL, 'Q' },
		{ "out", required_argument, NULL, 'o' },
		{ "progress", no_argument, NULL, 'q' },
		{ "set", required_argument, NULL, 'S' },
		{ "tol", required_argument, NULL, 't' },
		{ "weights", required_argument, NULL, 'w' },
		{ 0 },
	};
	struct runobs_opts ro = { .max_requests = DEFAULT_MAX_REQUESTS };
	struct runfit_opts fo = { 0 };
	enum progress_mode progress = PROGRESS_AUTO;
	const char *out = NULL, *holdout_list = NULL;
	struct inidoc ov = { 0 };
	struct err e;
	long long v = 0;
	int c, rc = EXIT_BAD_INPUT;
	optind = 1;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		int bad = 0;
		switch (c) {
		case 'H': ro.hardware = optarg; break;
		case 'h': calib_help(stdout); inidoc_free(&ov); return EXIT_OK;
		case 'x': holdout_list = optarg; break;
		case 'j': bad = calib_parse_int("jobs", optarg, 1, 1024, &v, &e), fo.jobs = (int)v; break;
		case 'n': bad = calib_parse_int("max-evals", optarg, 10, 100000, &v, &e), fo.max_evals = (int)v; break;
		case 'r': bad = calib_parse_int("max-requests", optarg, 0, 1000000000, &v, &e), ro.max_requests = v; break;
		case 'm': ro.model = optarg; break;
		case 'o': out = optarg; break;
		case 'S': bad = inidoc_add_override(&ov, optarg, &e); break;
		case 't':
			if (num_parse_double(optarg, &fo.tol) || !(fo.tol > 0) || fo.tol > 10)
				bad = err_set(&e, "--tol: expected a simplex size in (0, 10], got '%s'", optarg);
			break;
		case 'w': ro.weights = optarg; break;
		case 'q': progress = PROGRESS_ON; break;
		case 'Q': progress = PROGRESS_OFF; break;
		default: inidoc_free(&ov); return cli_bad_option("calibrate runs", argv);
		}
		if (bad) {
			inidoc_free(&ov);
			return cli_fail("calibrate runs", &e);
		}
	}
	if (optind >= argc || !ro.hardware || !out) {
		inidoc_free(&ov);
		return cli_misuse("calibrate runs", "expected FILE… --hardware H --out PROFILE.ini");
	}
	/* The profile's folder before a fit of minutes: one that cannot be
	 * written fails now, not after it. */
	if (wholefile_check(out, &e)) {
		fprintf(stderr, "servesim calibrate runs: --out: %s\n", e.msg);
		inidoc_free(&ov);
		return EXIT_FAIL;
	}
	ro.overrides = &ov;
	char base_path[4096];
	struct hw_profile hw;
	struct runobs_set set = { 0 };
	bool *holdout = NULL;
	struct runfit_result r = { 0 };
	if (calib_load_base(ro.hardware, base_path, sizeof base_path, &hw, &e)) {
		cli_fail("calibrate runs", &e);
		goto out;
	}
	for (int i = optind; i < argc; i++)
		if (runobs_load(&set, argv[i], &ro, &e)) {
			cli_fail("calibrate runs", &e);
			goto out;
		}
	for (size_t i = 0; i < set.n_notes; i++)
		fprintf(stderr, "servesim calibrate runs: note: %s\n", set.notes[i]);
	holdout = xcalloc(set.len ? set.len : 1, sizeof *holdout);
	if (holdout_list && parse_holdout(holdout_list, &set, holdout, &e)) {
		cli_fail("calibrate runs", &e);
		goto out;
	}
	fo.base_path = base_path;
	fo.holdout = holdout;
	fprintf(stderr, "servesim calibrate runs: %zu runs; fitting on %s\n", set.len, hw.id);
	fo.progress = progress_create("calibrate", progress);
	int failed = runfit_fit(&r, &set, &hw, &fo, &e);
	progress_destroy(fo.progress);
	if (failed) {
		cli_fail("calibrate runs", &e);
		goto out;
	}
	/* The profile first, the table after it: a profile that cannot be
	 * written fails the verb before anything reaches stdout (outputs whole
	 * or absent). */
	if (r.converged) {
		char date[16], source[512], c0[300], c1[300], c2[300];
		profwrite_date(date, sizeof date);
		if (argc - optind > 1)
			snprintf(source, sizeof source,
				 "fitted by servesim calibrate from %s and %d more files on %s",
				 pathname_base(argv[optind]), argc - optind - 1, date);
		else
			snprintf(source, sizeof source,
				 "fitted by servesim calibrate from %s on %s",
				 pathname_base(argv[optind]), date);
		snprintf(c0, sizeof c0,
			 "Calibrated copy of %s: [efficiency] fitted by `servesim calibrate runs` "
			 "to %zu real runs (%zu values, %zu held out)",
			 hw.id, set.len, r.n_vals, r.n_holdout);
		snprintf(c1, sizeof c1,
			 "mean |ln(sim/measured)| on fitted runs %.4f before, %.4f after; held out "
			 "%.4f before, %.4f after",
			 r.cost_before, r.cost_after, r.holdout_before, r.holdout_after);
		snprintf(c2, sizeof c2, "%s", r.status);
		const char *comments[] = { c0, c1, c2 };
		if (profwrite_save(out, base_path, &r.after, source, comments, 3, &e)) {
			fprintf(stderr, "servesim calibrate runs: %s\n", e.msg);
			rc = EXIT_FAIL;
			goto out;
		}
	}
	/* A fit that did not converge is no result: its table is a
	 * diagnostic, on stderr after a warning, and stdout stays empty. */
	FILE *tab = r.converged ? stdout : stderr;
	if (!r.converged)
		fprintf(stderr, "servesim calibrate runs: warning: the fit %s; its table follows:\n", r.status);
	print_runs_table(tab, &set, &r);
	fprintf(tab, "\nmean |ln(simulated/measured)|: fitted runs %.4f → %.4f", r.cost_before, r.cost_after);
	if (r.n_holdout)
		fprintf(tab, ", held-out runs %.4f → %.4f", r.holdout_before, r.holdout_after);
	fprintf(tab, "\n%s\n\n", r.status);
	calib_print_eff_change(tab, &r.before, &r.after, r.fitted, NULL, NULL);
	fflush(tab);
	if (!r.converged) {
		fprintf(stderr, "servesim calibrate runs: the fit %s; nothing written\n", r.status);
		goto out;
	}
	printf("\nwrote %s (servesim run --hardware %s)\n", out, out);
	rc = EXIT_OK;
out:
	runfit_result_free(&r);
	free(holdout);
	runobs_set_free(&set);
	inidoc_free(&ov);
	return rc;
}

int cmd_calibrate(int argc, char **argv)
{
	if (argc < 2)
		return cli_misuse("calibrate", "expected fit, gpu or runs");
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		calib_help(stdout);
		return EXIT_OK;
	}
	if (!strcmp(argv[1], "fit"))
		return calibrate_fit(argc - 1, argv + 1);
	if (!strcmp(argv[1], "gpu"))
		return calibrate_gpu(argc - 1, argv + 1);
	if (!strcmp(argv[1], "runs"))
		return calibrate_runs(argc - 1, argv + 1);
	return cli_misuse("calibrate", "expected fit, gpu or runs, got '%s'", argv[1]);
}
