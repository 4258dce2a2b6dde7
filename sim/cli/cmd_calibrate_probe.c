/*
 * servesim calibrate fit / gpu: the GPU probe's half of `calibrate`.
 *   fit PROBE.csv   servesim-probe's measurements (probecsv.h) fitted
 *                   through the family table (fitfamily.h, fit.h); every
 *                   row and every family printed, a profile written
 *   gpu             runs servesim-probe here (proberun.h), keeps its CSV
 *                   whatever happens, then fits it
 * Exit codes as cmd_calibrate.c says.
 */
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "calibrate_int.h"
#include "cli.h"
#include "effparam.h"
#include "fit.h"
#include "fitfamily.h"
#include "num.h"
#include "pathname.h"
#include "probecsv.h"
#include "proberun.h"
#include "profwrite.h"
#include "wholefile.h"

#define DEFAULT_BUDGET_S 240   /* calibrate gpu --budget-s: seconds of measuring */

/* ---- fit ------------------------------------------------------------------- */

static void put_us(FILE *f, double us)
{
	if (isfinite(us))
		fprintf(f, " %12.2f", us);
	else
		fprintf(f, " %12s", "-");
}

static void print_probe_table(FILE *f, const struct probe_data *d, const struct fit_result *r)
{
	fprintf(f, "%-13s %-22s %7s %7s %-5s %12s %12s %9s %12s %9s\n", "kind", "shape", "tokens", "context",
	        "dtype", "measured_us", "before_us", "error", "after_us", "error");
	for (size_t i = 0; i < d->len; i++) {
		const struct probe_row *row = &d->rows[i];
		fprintf(f, "%-13s %-22s %7lld %7lld %-5s %12.2f", probe_kind_names[row->kind], row->shape,
		        (long long)row->tokens, (long long)row->context, probe_dtype_names[row->dtype], row->time_us);
		put_us(f, r->before_us[i]);
		calib_put_pct(f, calib_pct(r->before_us[i], row->time_us));
		put_us(f, r->after_us[i]);
		calib_put_pct(f, calib_pct(r->after_us[i], row->time_us));
		fprintf(f, "%s%s\n", r->use[i] ? "  not fitted: " : "", fit_row_use_names[r->use[i]]);
	}
}

/* Per family: rows, grade, what it set (value ± s.e.) and its residual. */
static void print_family_table(FILE *out, const struct fit_result *r, int dtype)
{
	size_t n_tab;
	const struct fitfam *tab = fitfamily_table(&n_tab);
	fprintf(out, "%-12s %5s %5s %-22s %-9s %s\n", "family", "rows", "used", "kernel grade", "RMS ln", "sets");
	for (size_t k = 0; k < r->n_fams; k++) {
		const struct fit_family_result *fr = &r->fams[k];
		const struct fitfam *f = &tab[fr->family];
		char grade[40] = "-";
		if (f->ref != FITFAM_REF_NONE && fr->grade >= 0)
			snprintf(grade, sizeof grade, "%.2f of %s%s", fr->grade,
				 f->ref == FITFAM_REF_STREAM ? "stream" : "GEMM", fr->bound ? " (low)" : "");
		else if (f->ref != FITFAM_REF_NONE)
			snprintf(grade, sizeof grade, "unknown (no reference)");
		fprintf(out, "%-12s %5zu %5zu %-22s ", f->name, fr->n_rows, fr->n_used + fr->n_bound, grade);
		if (fr->n_used + fr->n_bound)
			fprintf(out, "%-9.3f", fr->rms_after);
		else
			fprintf(out, "%-9s", "-");
		int ps[FITFAM_MAX_PARAMS], np = fitfamily_params(fr->family, dtype, ps);
		if (np == 0 || fr->n_used + fr->n_bound == 0) {
			if (!f->report)   /* a family with parameters, none of them set here */
				fprintf(out, " none: reported (%s)\n", f->kind == PROBE_GEMM
					? "a GEMM of another dtype than --weights"
					: "launch-bound rows, or stand-in attention kernels inside");
			else if (fr->median_ratio > 0 && f->kind == PROBE_ELEMENTWISE)
				fprintf(out, " none: reached %.2f of %s (median); %.1f us at %lld token%s\n",
				        1 / fr->median_ratio, f->report, fr->first_us, (long long)fr->first_tokens,
				        fr->first_tokens == 1 ? "" : "s");
			else if (fr->median_ratio > 0)
				fprintf(out, " none: reached %.2f of %s\n", 1 / fr->median_ratio, f->report);
			else
				fprintf(out, " none: %s\n", f->report);
			continue;
		}
		const char *sep = " ";
		for (int i = 0; i < np; i++) {
			double v = effparam_value(&r->after, ps[i]);
			if (fr->bound && r->bounded[ps[i]])
				fprintf(out, "%s%s >= %.4g (lower bound; %s %.4g)", sep, effparam_get(ps[i])->key, r->bound[ps[i]],
				        r->bound[ps[i]] > effparam_value(&r->before, ps[i]) ? "raised to" : "kept",
				        v);
			else if (fr->bound)
				continue;
			else if (r->fitted[ps[i]])
				fprintf(out, "%s%s %.4g ± %.2g", sep, effparam_get(ps[i])->key, v, r->stderr_after[ps[i]]);
			else
				fprintf(out, "%s%s kept %.4g", sep, effparam_get(ps[i])->key, v);
			sep = ", ";
		}
		fprintf(out, "\n");
		if (fr->bound)
			fprintf(out, "%12s   %s; this kernel reached %s: its rows bound the efficiency from below\n", "",
			        f->production, fr->grade >= 0 ? "less" : "an unknown fraction");
	}
}

/* The SM clock range over the families, and the families that ran
 * throttled (their rows may read slow). */
static void print_clocks(FILE *f, const struct probe_data *d)
{
	double lo = 0, hi = 0;
	for (int i = 0; i < d->n_clocks; i++) {
		const struct probe_clocks *c = &d->clocks[i];
		if (c->sm_mhz > 0) {
			lo = lo > 0 ? fmin(lo, c->sm_mhz) : c->sm_mhz;
			hi = fmax(hi, c->sm_mhz);
		}
		if (probecsv_throttled(c))
			fprintf(f, "%s: family %s ran throttled (%s, SM %.0f MHz): its rows may read slow\n", d->path,
			        c->family, c->throttle, c->sm_mhz);
	}
	if (hi > 0)
		fprintf(f, "%s: SM clock %.0f-%.0f MHz over %d families\n", d->path, lo, hi, d->n_clocks);
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

/* Fits the rows of paths[0..n) (one run, or a run and reruns of some of
 * its families) on hardware (NULL: from the probe's device) and writes
 * out. model: optional check of the dims. */
static int fit_and_write(const char *const *paths, int n, const char *hardware, const char *model_name,
			 int dtype, int max_iter, const char *out)
{
	struct err e;
	struct probe_data d;
	int rc = EXIT_BAD_INPUT;
	const char *probe_path = paths[0];
	int bad = probecsv_load(&d, probe_path, &e);
	for (int i = 1; i < n && !bad; i++)
		bad = probecsv_append(&d, paths[i], &e);
	if (bad) {
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
	if (calib_load_base(hardware, base_path, sizeof base_path, &hw, &e)) {
		cli_fail("calibrate fit", &e);
		goto out;
	}
	struct fit_opts fo = { dtype, max_iter };
	struct fit_result r;
	if (fit_probe(&r, &d, &hw, &fo, &e)) {
		cli_fail("calibrate fit", &e);
		goto out;
	}
	/* The profile first, the table after it: a profile that cannot be
	 * written fails the verb before anything reaches stdout (outputs whole
	 * or absent). */
	if (r.converged) {
		char date[16], source[512], c0[640], c1[256], c2[256],
			c3[256] = "lower bounds from stand-in kernels:";
		profwrite_date(date, sizeof date);
		char more[32] = "";
		if (n > 1)
			snprintf(more, sizeof more, " and %d more file%s", n - 1, n > 2 ? "s" : "");
		snprintf(source, sizeof source, "fitted by servesim calibrate from %s%s on %s",
			 pathname_base(probe_path), more, date);
		int n_bounded = 0;
		for (int id = 0; id < EFF_N_PARAMS; id++)
			if (r.bounded[id] && strlen(c3) < 180) {
				snprintf(c3 + strlen(c3), sizeof c3 - strlen(c3),
					 " %s >= %.3g (%s)", effparam_get(id)->key, r.bound[id],
					 r.bound[id] > effparam_value(&r.before, id) ? "raised"
										     : "base kept");
				n_bounded++;
			}
		snprintf(c0, sizeof c0,
			 "Calibrated copy of %s: [efficiency] fitted by `servesim calibrate fit` "
			 "to servesim-probe measurements of %s",
			 hw.id, d.device[0] ? d.device : "an unnamed device");
		snprintf(c1, sizeof c1,
			 "probe dims: hidden=%lld intermediate=%lld heads=%lld kv_heads=%lld "
			 "head_dim=%lld vocab=%lld tp=%lld",
			 (long long)d.dims.hidden, (long long)d.dims.intermediate,
			 (long long)d.dims.heads, (long long)d.dims.kv_heads,
			 (long long)d.dims.head_dim, (long long)d.dims.vocab, (long long)d.dims.tp);
		snprintf(c2, sizeof c2,
			 "fit: %zu of %zu rows; RMS ln(predicted/measured) %.3f before, %.3f "
			 "after; %s",
			 r.n_used, d.len, r.rms_before, r.rms_after, r.status);
		/* Written: what was fitted, what a stand-in's bound raised, and what
		 * the base profile gave itself. A key left out keeps meaning what the
		 * step model derives for the engine's kernels (sim/perf/backend.c) and
		 * the engine's own overheads (sim/perf/overhead.c); writing a kept
		 * class default would override them. */
		bool write[EFF_N_PARAMS];
		for (int id = 0; id < EFF_N_PARAMS; id++) {
			unsigned bit = 1u << (effparam_get(id)->offset / sizeof(double));
			write[id] = r.fitted[id] || (hw.eff_given & bit) ||
				    (r.bounded[id] &&
				     effparam_value(&r.after, id) > effparam_value(&r.before, id));
		}
		const char *comments[] = { c0, c1, c2, c3 };
		if (profwrite_save_keys(out, base_path, &r.after, write, source, comments,
					n_bounded ? 4 : 3, &e)) {
			fprintf(stderr, "servesim calibrate fit: %s\n", e.msg);
			fit_result_free(&r);
			rc = EXIT_FAIL;
			goto out;
		}
	}
	/* A fit that did not converge is no result: its tables are a
	 * diagnostic, on stderr after a warning, and stdout stays empty. */
	FILE *tab = r.converged ? stdout : stderr;
	if (!r.converged)
		fprintf(stderr, "servesim calibrate fit: %s: warning: the fit %s; its tables follow:\n", probe_path,
			r.status);
	print_probe_table(tab, &d, &r);
	fprintf(tab, "\n");
	print_family_table(tab, &r, dtype);
	if (d.truncated)
		fprintf(tab, "\n%s: the last line was cut short (the probe stopped mid-row) and was dropped\n",
			probe_path);
	for (int i = 0; i < d.n_failed; i++)
		fprintf(tab, "%s: family %s failed on the GPU (its rows are missing)\n", probe_path, d.failed[i]);
	print_clocks(tab, &d);
	fprintf(tab, "\n%zu rows, %zu fitted; RMS of ln(predicted/measured) over them: %.3f before, %.3f after\n",
		d.len, r.n_used, r.rms_before, r.rms_after);
	fprintf(tab, "base profile %s (%s); %s\n\n", hw.id,
		hw.calibrated ? "its own [efficiency]" : "class defaults", r.status);
	calib_print_eff_change(tab, &r.before, &r.after, r.fitted, r.stderr_after, r.bounded);
	fflush(tab);
	if (!r.converged) {
		fprintf(stderr, "servesim calibrate fit: %s: the fit %s; nothing written\n", probe_path, r.status);
		fit_result_free(&r);
		goto out;
	}
	fit_result_free(&r);
	printf("\nwrote %s (servesim run --hardware %s)\n", out, out);
	rc = EXIT_OK;
out:
	probecsv_free(&d);
	return rc;
}

int calibrate_fit(int argc, char **argv)
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
	bool list = false;
	const char *other = NULL; /* the first option --list cannot honour */
	struct err e;
	optind = 1;
	int li = -1;
	while ((c = getopt_long(argc, argv, "", opts, &li)) != -1) {
		if (c != 'l' && c != 'h' && li >= 0 && !other)
			other = opts[li].name;
		switch (c) {
		case 'H': hardware = optarg; break;
		case 'h': calib_help(stdout); return EXIT_OK;
		case 'l':
			list = true;
			break;
		case 'i':
			if (calib_parse_int("max-iter", optarg, 1, 100000, &max_iter, &e))
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
		default: return cli_bad_option("calibrate fit", argv);
		}
	}
	if (list && (other || optind < argc))
		return cli_misuse(
			"calibrate fit",
			"--list prints the probe families and takes nothing else, got '%s%s'",
			other ? "--" : "", other ? other : argv[optind]);
	if (list)
		return print_fit_families();
	if (optind >= argc)
		return cli_misuse("calibrate fit", "expected a probe CSV (and reruns of some of its families)");
	if (!out)
		return cli_misuse("calibrate fit", "--out PROFILE.ini is required");
	if (wholefile_check(out, &e)) {   /* before the fit, not after it */
		fprintf(stderr, "servesim calibrate fit: --out: %s\n", e.msg);
		return EXIT_FAIL;
	}
	return fit_and_write((const char *const *)argv + optind, argc - optind, hardware, model, dtype,
			     (int)max_iter, out);
}

/* ---- gpu --------------------------------------------------------------------- */

int calibrate_gpu(int argc, char **argv)
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
		case 'b': bad = calib_parse_int("budget-s", optarg, 10, 3600, &budget, &e); break;
		case 'H': hardware = optarg; break;
		case 'h': calib_help(stdout); return EXIT_OK;
		case 'm': model_name = optarg; break;
		case 'o': out = optarg; break;
		case 'p': probe_path = optarg; break;
		case 'c': keep = optarg; break;
		case 't': bad = calib_parse_int("tp", optarg, 1, 64, &tp, &e); break;
		default: return cli_bad_option("calibrate gpu", argv);
		}
		if (bad)
			return cli_fail("calibrate gpu", &e);
	}
	if (optind != argc)
		return cli_misuse("calibrate gpu", "unexpected argument '%s'", argv[optind]);
	if (!model_name || !out)
		return cli_misuse("calibrate gpu", "--model M and --out PROFILE.ini are required");
	if (wholefile_check(out, &e)) {   /* before the GPU's minutes, not after them */
		fprintf(stderr, "servesim calibrate gpu: --out: %s\n", e.msg);
		return EXIT_FAIL;
	}
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
	const char *paths[] = { csv };
	int rc = fit_and_write(paths, 1, hardware, model_name, PROBE_DT_BF16, 0, out);
	fprintf(stderr, "servesim calibrate gpu: measurements kept in %s\n", csv);
	return rc;
}
