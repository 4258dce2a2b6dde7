/*
 * servesim calibrate: fit a hardware profile's [efficiency] section to
 * measurements, and write the result as a new profile.
 *   fit PROBE.csv   servesim-probe's GPU measurements (fit.h)
 *   gpu             run servesim-probe here, then fit (proberun.h)
 *   runs FILE…      real serving runs: vllm bench serve results, Ollama
 *                   responses, llama-bench, vLLM /metrics scrapes, the
 *                   calibration CSVs (runobs.h, runfit.h)
 * Exit: 0 written; 2 bad input, too few measurements or a fit that did not
 * converge (nothing written); 1 a failure of the machine (cannot write, the
 * probe failed, or a build without CUDA support for `gpu`).
 */
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "catalog.h"
#include "cli.h"
#include "effparam.h"
#include "fit.h"
#include "fitfamily.h"
#include "num.h"
#include "probecsv.h"
#include "proberun.h"
#include "profwrite.h"
#include "runfit.h"
#include "runobs.h"

#define DEFAULT_MAX_REQUESTS 5000
#define DEFAULT_BUDGET_S 240

static void help(FILE *f)
{
	fprintf(f,
		"usage: servesim calibrate fit PROBE.csv --out PROFILE.ini [--hardware H] [--model M]\n"
		"                          [--weights bf16|fp8] [--max-iter N]\n"
		"       servesim calibrate fit --list\n"
		"       servesim calibrate gpu --model M --out PROFILE.ini [--tp N] [--hardware H]\n"
		"                          [--probe PATH] [--probe-csv FILE] [--budget-s S]\n"
		"       servesim calibrate runs FILE… --hardware H --out PROFILE.ini [--model M]\n"
		"                          [--weights W] [--set S.K=V]… [--holdout ID,…]\n"
		"                          [--max-evals N] [--max-requests N] [--tol X] [--jobs N]\n\n"
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
		"written); 1 cannot write, the probe failed, or no CUDA support (gpu).\n",
		DEFAULT_MAX_REQUESTS);
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');
	return s ? s + 1 : path;
}

static int parse_int_opt(const char *name, const char *s, long long lo, long long hi, long long *out,
			 struct err *e)
{
	int64_t v;
	if (num_parse_int64(s, &v) || v < lo || v > hi)
		return err_set(e, "--%s: expected an integer in [%lld, %lld], got '%s'", name, lo, hi, s);
	*out = v;
	return 0;
}

/* bounded: parameters a stand-in kernel bounded from below (NULL: none). */
static void print_eff_change(FILE *f, const struct hw_efficiency *before, const struct hw_efficiency *after,
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

static double pct(double pred, double meas)
{
	return meas > 0 && isfinite(pred) ? 100 * (pred - meas) / meas : NAN;
}

static void put_pct(FILE *f, double v)
{
	if (isnan(v))
		fprintf(f, " %8s", "-");
	else
		fprintf(f, " %+7.1f%%", v);
}

/* Loads the base profile named by name (an id or a path). */
static int load_base(const char *name, char *path, size_t cap, struct hw_profile *hw, struct err *e)
{
	if (catalog_resolve(CATALOG_HARDWARE, name, path, cap, e))
		return -1;
	return hw_load(hw, path, e);
}

/* ---- fit ------------------------------------------------------------------- */

static void put_us(double us)
{
	if (isfinite(us))
		printf(" %12.2f", us);
	else
		printf(" %12s", "-");
}

static void print_probe_table(const struct probe_data *d, const struct fit_result *r)
{
	printf("%-13s %-22s %7s %7s %-5s %12s %12s %9s %12s %9s\n", "kind", "shape", "tokens", "context",
	       "dtype", "measured_us", "before_us", "error", "after_us", "error");
	for (size_t i = 0; i < d->len; i++) {
		const struct probe_row *row = &d->rows[i];
		printf("%-13s %-22s %7lld %7lld %-5s %12.2f", probe_kind_names[row->kind], row->shape,
		       (long long)row->tokens, (long long)row->context, probe_dtype_names[row->dtype], row->time_us);
		put_us(r->before_us[i]);
		put_pct(stdout, pct(r->before_us[i], row->time_us));
		put_us(r->after_us[i]);
		put_pct(stdout, pct(r->after_us[i], row->time_us));
		printf("%s%s\n", r->use[i] ? "  not fitted: " : "", fit_row_use_names[r->use[i]]);
	}
}

/* Per family: rows, grade, what it set (value ± s.e.) and its residual. */
static void print_family_table(const struct fit_result *r, int dtype)
{
	size_t n_tab;
	const struct fitfam *tab = fitfamily_table(&n_tab);
	printf("%-12s %5s %5s %-22s %-9s %s\n", "family", "rows", "used", "kernel grade", "RMS ln", "sets");
	for (size_t k = 0; k < r->n_fams; k++) {
		const struct fit_family_result *fr = &r->fams[k];
		const struct fitfam *f = &tab[fr->family];
		char grade[40] = "-";
		if (f->ref != FITFAM_REF_NONE && fr->grade >= 0)
			snprintf(grade, sizeof grade, "%.2f of %s%s", fr->grade,
				 f->ref == FITFAM_REF_STREAM ? "stream" : "GEMM", fr->bound ? " (low)" : "");
		else if (f->ref != FITFAM_REF_NONE)
			snprintf(grade, sizeof grade, "unknown (no reference)");
		printf("%-12s %5zu %5zu %-22s ", f->name, fr->n_rows, fr->n_used + fr->n_bound, grade);
		if (fr->n_used + fr->n_bound)
			printf("%-9.3f", fr->rms_after);
		else
			printf("%-9s", "-");
		int ps[FITFAM_MAX_PARAMS], np = fitfamily_params(fr->family, dtype, ps);
		if (np == 0 || fr->n_used + fr->n_bound == 0) {
			if (np && f->kind == PROBE_GEMM)
				printf(" none: reported (another dtype than --weights)\n");
			else if (np)
				printf(" none: reported (launch-bound rows, or stand-in attention kernels inside)\n");
			else if (fr->median_ratio > 0)
				printf(" none: reached %.2f of %s\n", 1 / fr->median_ratio, f->report);
			else
				printf(" none: %s\n", f->report);
			continue;
		}
		const char *sep = " ";
		for (int i = 0; i < np; i++) {
			double v = effparam_value(&r->after, ps[i]);
			if (fr->bound && r->bounded[ps[i]])
				printf("%s%s >= %.4g (lower bound; %s %.4g)", sep, effparam_get(ps[i])->key, r->bound[ps[i]],
				       r->bound[ps[i]] > effparam_value(&r->before, ps[i]) ? "raised to" : "kept",
				       v);
			else if (fr->bound)
				continue;
			else if (r->fitted[ps[i]])
				printf("%s%s %.4g ± %.2g", sep, effparam_get(ps[i])->key, v, r->stderr_after[ps[i]]);
			else
				printf("%s%s kept %.4g", sep, effparam_get(ps[i])->key, v);
			sep = ", ";
		}
		printf("\n");
		if (fr->bound)
			printf("%12s   %s; this kernel reached %s: its rows bound the efficiency from below\n", "",
			       f->production, fr->grade >= 0 ? "less" : "an unknown fraction");
	}
}

/* The SM clock range over the families, and the families that ran
 * throttled (their rows may read slow). */
static void print_clocks(const struct probe_data *d)
{
	double lo = 0, hi = 0;
	for (int i = 0; i < d->n_clocks; i++) {
		const struct probe_clocks *c = &d->clocks[i];
		if (c->sm_mhz > 0) {
			lo = lo > 0 ? fmin(lo, c->sm_mhz) : c->sm_mhz;
			hi = fmax(hi, c->sm_mhz);
		}
		if (probecsv_throttled(c))
			printf("%s: family %s ran throttled (%s, SM %.0f MHz): its rows may read slow\n", d->path,
			       c->family, c->throttle, c->sm_mhz);
	}
	if (hi > 0)
		printf("%s: SM clock %.0f-%.0f MHz over %d families\n", d->path, lo, hi, d->n_clocks);
}

static int print_fit_families(void)
{
	size_t n_tab;
	const struct fitfam *tab = fitfamily_table(&n_tab);
	for (size_t f = 0; f < n_tab; f++) {
		int ps[FITFAM_MAX_PARAMS], np = fitfamily_params((int)f, PROBE_DT_BF16, ps);
		printf("%s\t", tab[f].name);
		for (int i = 0; i < np; i++)
			printf("%s%s", i ? "," : "", effparam_get(ps[i])->key);
		printf("%s\n", np ? "" : "(reported, not fitted)");
	}
	return EXIT_OK;
}

/* Fits probe_path on hardware (NULL: from the probe's device) and writes
 * out. model: optional check of the dims. */
static int fit_and_write(const char *probe_path, const char *hardware, const char *model_name,
			 int dtype, int max_iter, const char *out)
{
	struct err e;
	struct probe_data d;
	int rc = EXIT_BAD_INPUT;
	if (probecsv_load(&d, probe_path, &e)) {
		cli_fail("calibrate fit", &e);
		probecsv_free(&d);
		return rc;
	}
	if (model_name) {
		struct model m;
		struct probe_dims md;
		if (model_load_named(&m, model_name, &e) ||
		    proberun_dims(&md, &m, d.has_dims ? (int)d.dims.tp : 1, &e)) {
			cli_fail("calibrate fit", &e);
			goto out;
		}
		if (!d.has_dims) {
			d.dims = md;
			d.has_dims = true;
		} else if (md.hidden != d.dims.hidden || md.intermediate != d.dims.intermediate ||
			   md.heads != d.dims.heads || md.kv_heads != d.dims.kv_heads ||
			   md.head_dim != d.dims.head_dim || md.vocab != d.dims.vocab ||
			   (d.dims.experts && d.dims.experts != md.experts) ||
			   (d.dims.window && d.dims.window != md.window)) {
			fprintf(stderr, "servesim calibrate fit: %s: the probe measured hidden=%lld intermediate=%lld heads=%lld kv_heads=%lld head_dim=%lld vocab=%lld, but %s has hidden=%lld intermediate=%lld heads=%lld kv_heads=%lld head_dim=%lld vocab=%lld\n",
				probe_path, (long long)d.dims.hidden, (long long)d.dims.intermediate,
				(long long)d.dims.heads, (long long)d.dims.kv_heads, (long long)d.dims.head_dim,
				(long long)d.dims.vocab, model_name, (long long)md.hidden, (long long)md.intermediate,
				(long long)md.heads, (long long)md.kv_heads, (long long)md.head_dim, (long long)md.vocab);
			goto out;
		}
	}
	if (!hardware) {
		hardware = probecsv_hardware_id(d.device);
		if (!hardware) {
			fprintf(stderr, "servesim calibrate fit: %s: device '%s' has no known profile: pass --hardware\n",
				probe_path, d.device[0] ? d.device : "(none recorded)");
			goto out;
		}
		fprintf(stderr, "servesim calibrate fit: device '%s': base profile %s\n", d.device, hardware);
	}
	char base_path[4096];
	struct hw_profile hw;
	if (load_base(hardware, base_path, sizeof base_path, &hw, &e)) {
		cli_fail("calibrate fit", &e);
		goto out;
	}
	struct fit_opts fo = { dtype, max_iter };
	struct fit_result r;
	if (fit_probe(&r, &d, &hw, &fo, &e)) {
		cli_fail("calibrate fit", &e);
		goto out;
	}
	print_probe_table(&d, &r);
	printf("\n");
	print_family_table(&r, dtype);
	if (d.truncated)
		printf("\n%s: the last line was cut short (the probe stopped mid-row) and was dropped\n", probe_path);
	for (int i = 0; i < d.n_failed; i++)
		printf("%s: family %s failed on the GPU (its rows are missing)\n", probe_path, d.failed[i]);
	print_clocks(&d);
	printf("\n%zu rows, %zu fitted; RMS of ln(predicted/measured) over them: %.3f before, %.3f after\n",
	       d.len, r.n_used, r.rms_before, r.rms_after);
	printf("base profile %s (%s); %s\n\n", hw.id, hw.calibrated ? "its own [efficiency]" : "class defaults",
	       r.status);
	print_eff_change(stdout, &r.before, &r.after, r.fitted, r.stderr_after, r.bounded);
	fflush(stdout);
	if (!r.converged) {
		fprintf(stderr, "servesim calibrate fit: %s: the fit %s; nothing written\n", probe_path, r.status);
		fit_result_free(&r);
		goto out;
	}
	char date[16], source[512], c0[640], c1[256], c2[256], c3[256] = "lower bounds from stand-in kernels:";
	profwrite_date(date, sizeof date);
	snprintf(source, sizeof source, "fitted by servesim calibrate from %s on %s", base_name(probe_path), date);
	int n_bounded = 0;
	for (int id = 0; id < EFF_N_PARAMS; id++)
		if (r.bounded[id] && strlen(c3) < 180) {
			snprintf(c3 + strlen(c3), sizeof c3 - strlen(c3), " %s >= %.3g (%s)", effparam_get(id)->key,
				 r.bound[id], r.bound[id] > effparam_value(&r.before, id) ? "raised" : "base kept");
			n_bounded++;
		}
	snprintf(c0, sizeof c0, "Calibrated copy of %s: [efficiency] fitted by `servesim calibrate fit` to servesim-probe measurements of %s",
		 hw.id, d.device[0] ? d.device : "an unnamed device");
	snprintf(c1, sizeof c1, "probe dims: hidden=%lld intermediate=%lld heads=%lld kv_heads=%lld head_dim=%lld vocab=%lld tp=%lld",
		 (long long)d.dims.hidden, (long long)d.dims.intermediate, (long long)d.dims.heads,
		 (long long)d.dims.kv_heads, (long long)d.dims.head_dim, (long long)d.dims.vocab, (long long)d.dims.tp);
	snprintf(c2, sizeof c2, "fit: %zu of %zu rows; RMS ln(predicted/measured) %.3f before, %.3f after; %s", r.n_used,
		 d.len, r.rms_before, r.rms_after, r.status);
	/* The overheads are not kernel properties and the probe does not fit
	 * them: written only when the base profile set them itself, so an
	 * engine's own fitted overheads (sim/perf/overhead.c) still apply. */
	bool write[EFF_N_PARAMS];
	for (int id = 0; id < EFF_N_PARAMS; id++)
		write[id] = true;
	write[EFF_STEP_OVERHEAD_US] = hw.overheads_given & HW_GIVEN_STEP_OVERHEAD;
	write[EFF_STEP_OVERHEAD_PER_SEQ_US] = hw.overheads_given & HW_GIVEN_STEP_PER_SEQ;
	write[EFF_REQUEST_OVERHEAD_MS] = hw.overheads_given & HW_GIVEN_REQUEST_OVERHEAD;
	const char *comments[] = { c0, c1, c2, c3 };
	int wrc = profwrite_save_keys(out, base_path, &r.after, write, source, comments, n_bounded ? 4 : 3, &e);
	fit_result_free(&r);
	if (wrc) {
		fprintf(stderr, "servesim calibrate fit: %s\n", e.msg);
		rc = EXIT_FAIL;
		goto out;
	}
	printf("\nwrote %s (servesim run --hardware %s)\n", out, out);
	rc = EXIT_OK;
out:
	probecsv_free(&d);
	return rc;
}

static int calibrate_fit(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "hardware", required_argument, NULL, 'H' },
		{ "help", no_argument, NULL, 'h' },
		{ "list", no_argument, NULL, 'l' },
		{ "max-iter", required_argument, NULL, 'i' },
		{ "model", required_argument, NULL, 'm' },
		{ "out", required_argument, NULL, 'o' },
		{ "weights", required_argument, NULL, 'w' },
		{ 0 },
	};
	const char *hardware = NULL, *model = NULL, *out = NULL;
	int dtype = PROBE_DT_BF16, c;
	long long max_iter = 0;
	struct err e;
	optind = 1;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'H': hardware = optarg; break;
		case 'h': help(stdout); return EXIT_OK;
		case 'l': return print_fit_families();
		case 'i':
			if (parse_int_opt("max-iter", optarg, 1, 100000, &max_iter, &e))
				return cli_fail("calibrate fit", &e);
			break;
		case 'm': model = optarg; break;
		case 'o': out = optarg; break;
		case 'w':
			if (!strcmp(optarg, "bf16") || !strcmp(optarg, "fp16"))
				dtype = PROBE_DT_BF16;
			else if (!strcmp(optarg, "fp8"))
				dtype = PROBE_DT_FP8;
			else
				return cli_misuse("calibrate fit", "--weights: expected bf16, fp16 or fp8, got '%s'", optarg);
			break;
		default: return cli_misuse("calibrate fit", "unknown option");
		}
	}
	if (optind != argc - 1)
		return cli_misuse("calibrate fit", "expected one probe CSV, got %d arguments", argc - optind);
	if (!out)
		return cli_misuse("calibrate fit", "--out PROFILE.ini is required");
	return fit_and_write(argv[optind], hardware, model, dtype, (int)max_iter, out);
}

/* ---- gpu --------------------------------------------------------------------- */

static int calibrate_gpu(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "budget-s", required_argument, NULL, 'b' },
		{ "hardware", required_argument, NULL, 'H' },
		{ "help", no_argument, NULL, 'h' },
		{ "model", required_argument, NULL, 'm' },
		{ "out", required_argument, NULL, 'o' },
		{ "probe", required_argument, NULL, 'p' },
		{ "probe-csv", required_argument, NULL, 'c' },
		{ "tp", required_argument, NULL, 't' },
		{ 0 },
	};
	const char *hardware = NULL, *model_name = NULL, *out = NULL, *probe_path = NULL, *keep = NULL;
	long long tp = 1, budget = DEFAULT_BUDGET_S;
	struct err e;
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		int bad = 0;
		switch (c) {
		case 'b': bad = parse_int_opt("budget-s", optarg, 10, 3600, &budget, &e); break;
		case 'H': hardware = optarg; break;
		case 'h': help(stdout); return EXIT_OK;
		case 'm': model_name = optarg; break;
		case 'o': out = optarg; break;
		case 'p': probe_path = optarg; break;
		case 'c': keep = optarg; break;
		case 't': bad = parse_int_opt("tp", optarg, 1, 64, &tp, &e); break;
		default: return cli_misuse("calibrate gpu", "unknown option");
		}
		if (bad)
			return cli_fail("calibrate gpu", &e);
	}
	if (optind != argc)
		return cli_misuse("calibrate gpu", "unexpected argument '%s'", argv[optind]);
	if (!model_name || !out)
		return cli_misuse("calibrate gpu", "--model M and --out PROFILE.ini are required");
	if (!proberun_available()) {
		proberun_find(NULL, 0, NULL, &e);
		fprintf(stderr, "servesim calibrate gpu: %s\n", e.msg);
		return EXIT_FAIL;
	}
	struct model m;
	struct probe_dims dims;
	if (model_load_named(&m, model_name, &e) || proberun_dims(&dims, &m, (int)tp, &e))
		return cli_fail("calibrate gpu", &e);
	char probe[4096];
	if (proberun_find(probe, sizeof probe, probe_path, &e))
		return cli_fail("calibrate gpu", &e);
	/* The measurements outlive the fit: a GPU's time is worth more than a
	 * file, and `calibrate fit` can try again with other options. */
	char csv[4096];
	if (snprintf(csv, sizeof csv, "%s", keep ? keep : out) >= (int)sizeof csv - 16)
		return cli_misuse("calibrate gpu", "--out: path too long");
	if (!keep)
		strcat(csv, ".probe.csv");
	fprintf(stderr, "servesim calibrate gpu: running %s for %s (tp %lld), at most %lld s; measurements go to %s\n",
		probe, m.id, tp, budget, csv);
	int prc = proberun_exec(probe, &dims, (int)budget, csv, &e);
	if (prc < 0) {
		fprintf(stderr, "servesim calibrate gpu: %s\n", e.msg);
		if (access(csv, F_OK) == 0)
			fprintf(stderr, "servesim calibrate gpu: what was measured is kept in %s (servesim calibrate fit %s --out …)\n",
				csv, csv);
		return EXIT_FAIL;
	}
	if (prc > 0)
		fprintf(stderr, "servesim calibrate gpu: %s; fitting what was measured\n", e.msg);
	int rc = fit_and_write(csv, hardware, model_name, PROBE_DT_BF16, 0, out);
	fprintf(stderr, "servesim calibrate gpu: measurements kept in %s\n", csv);
	return rc;
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

static void print_mape_row(const char *label, const struct mape *before, const struct mape *after)
{
	printf("%-26s", label);
	for (int k = 0; k < OBS_N_METRICS; k++) {
		if (!before->n[k]) {
			printf(" %17s", "-");
			continue;
		}
		printf("   %6.1f%% → %5.1f%%", before->sum[k] / before->n[k], after->sum[k] / after->n[k]);
	}
	printf("\n");
}

static void print_runs_table(const struct runobs_set *set, const struct runfit_result *r)
{
	size_t w = 10;
	for (size_t i = 0; i < set->len; i++)
		if (strlen(set->v[i].id) > w)
			w = strlen(set->v[i].id);
	if (w > 60)
		w = 60;
	printf("%-*s %5s %-6s %10s %10s %9s %10s %9s\n", (int)w, "run", "stage", "metric", "measured",
	       "before", "error", "after", "error");
	struct mape tb = { 0 }, ta = { 0 }, hb = { 0 }, ha = { 0 };
	for (size_t k = 0; k < r->n_vals; k++) {
		const struct runfit_value *v = &r->vals[k];
		const struct runobs *ob = &set->v[v->obs];
		double eb = pct(v->before_ms, v->measured_ms), ea = pct(v->after_ms, v->measured_ms);
		printf("%-*.*s %5d %-6s %10.2f %10.2f", (int)w, (int)w, ob->id, ob->pts[v->point].stage,
		       runobs_metric_names[v->metric], v->measured_ms, v->before_ms);
		put_pct(stdout, eb);
		printf(" %10.2f", v->after_ms);
		put_pct(stdout, ea);
		printf("%s\n", v->holdout ? "  held out" : "");
		mape_add(v->holdout ? &hb : &tb, v->metric, eb);
		mape_add(v->holdout ? &ha : &ta, v->metric, ea);
	}
	printf("\nmean |error| before → after  %19s %19s %19s\n", "TTFT", "ITL", "E2E");
	print_mape_row("fitted runs", &tb, &ta);
	if (r->n_holdout)
		print_mape_row("held-out runs", &hb, &ha);
}

static int parse_holdout(const char *list, const struct runobs_set *set, bool *holdout, struct err *e)
{
	char buf[4096], *save = NULL;
	snprintf(buf, sizeof buf, "%s", list);
	for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		while (*tok == ' ')
			tok++;
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
		{ "out", required_argument, NULL, 'o' },
		{ "set", required_argument, NULL, 'S' },
		{ "tol", required_argument, NULL, 't' },
		{ "weights", required_argument, NULL, 'w' },
		{ 0 },
	};
	struct runobs_opts ro = { .max_requests = DEFAULT_MAX_REQUESTS };
	struct runfit_opts fo = { 0 };
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
		case 'h': help(stdout); inidoc_free(&ov); return EXIT_OK;
		case 'x': holdout_list = optarg; break;
		case 'j': bad = parse_int_opt("jobs", optarg, 1, 1024, &v, &e), fo.jobs = (int)v; break;
		case 'n': bad = parse_int_opt("max-evals", optarg, 10, 100000, &v, &e), fo.max_evals = (int)v; break;
		case 'r': bad = parse_int_opt("max-requests", optarg, 0, 1000000000, &v, &e), ro.max_requests = v; break;
		case 'm': ro.model = optarg; break;
		case 'o': out = optarg; break;
		case 'S': bad = inidoc_add_override(&ov, optarg, &e); break;
		case 't':
			if (num_parse_double(optarg, &fo.tol) || !(fo.tol > 0) || fo.tol > 10)
				bad = err_set(&e, "--tol: expected a simplex size in (0, 10], got '%s'", optarg);
			break;
		case 'w': ro.weights = optarg; break;
		default: inidoc_free(&ov); return cli_misuse("calibrate runs", "unknown option");
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
	ro.overrides = &ov;
	char base_path[4096];
	struct hw_profile hw;
	struct runobs_set set = { 0 };
	bool *holdout = NULL;
	struct runfit_result r = { 0 };
	if (load_base(ro.hardware, base_path, sizeof base_path, &hw, &e)) {
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
	holdout = calloc(set.len ? set.len : 1, sizeof *holdout);
	if (!holdout)
		abort();
	if (holdout_list && parse_holdout(holdout_list, &set, holdout, &e)) {
		cli_fail("calibrate runs", &e);
		goto out;
	}
	fo.base_path = base_path;
	fo.holdout = holdout;
	fprintf(stderr, "servesim calibrate runs: %zu runs; fitting on %s\n", set.len, hw.id);
	if (runfit_fit(&r, &set, &hw, &fo, &e)) {
		cli_fail("calibrate runs", &e);
		goto out;
	}
	print_runs_table(&set, &r);
	printf("\nmean |ln(simulated/measured)|: fitted runs %.4f → %.4f", r.cost_before, r.cost_after);
	if (r.n_holdout)
		printf(", held-out runs %.4f → %.4f", r.holdout_before, r.holdout_after);
	printf("\n%s\n\n", r.status);
	print_eff_change(stdout, &r.before, &r.after, r.fitted, NULL, NULL);
	fflush(stdout);
	if (!r.converged) {
		fprintf(stderr, "servesim calibrate runs: the fit %s; nothing written\n", r.status);
		goto out;
	}
	char date[16], source[512], c0[300], c1[300], c2[300];
	profwrite_date(date, sizeof date);
	if (argc - optind > 1)
		snprintf(source, sizeof source, "fitted by servesim calibrate from %s and %d more files on %s",
			 base_name(argv[optind]), argc - optind - 1, date);
	else
		snprintf(source, sizeof source, "fitted by servesim calibrate from %s on %s", base_name(argv[optind]),
			 date);
	snprintf(c0, sizeof c0, "Calibrated copy of %s: [efficiency] fitted by `servesim calibrate runs` to %zu real runs (%zu values, %zu held out)",
		 hw.id, set.len, r.n_vals, r.n_holdout);
	snprintf(c1, sizeof c1, "mean |ln(sim/measured)| on fitted runs %.4f before, %.4f after; held out %.4f before, %.4f after",
		 r.cost_before, r.cost_after, r.holdout_before, r.holdout_after);
	snprintf(c2, sizeof c2, "%s", r.status);
	const char *comments[] = { c0, c1, c2 };
	if (profwrite_save(out, base_path, &r.after, source, comments, 3, &e)) {
		fprintf(stderr, "servesim calibrate runs: %s\n", e.msg);
		rc = EXIT_FAIL;
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
	if (argc < 2) {
		help(stderr);
		return EXIT_BAD_INPUT;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		help(stdout);
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
