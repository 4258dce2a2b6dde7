/*
 * The GPU probe's commands (issue 19): `calibrate fit` on synthetic probe
 * files (probesynth.h) and the profile it writes, the family lists of the
 * fit and of servesim-probe agreeing, servesim-probe's refusals,
 * `calibrate gpu` without a GPU and with a stand-in probe, and
 * scripts/probe-on-gpu's plan.
 */
#include "calibwarn.h"
#include "probesynth.h"

static void fit_cli_writes_a_profile_run_can_use(void **state)
{
	(void)state;
	char dir[64], csv[128], out[128];
	struct hw_profile hw;
	scratch(dir, csv, &hw);
	snprintf(out, sizeof out, "%s/h100-mine.ini", dir);
	write_probe(csv, &hw, all_families, &truth, 1);
	struct cmd_result c;
	run_cmd(&c, "SOURCE_DATE_EPOCH=1800000000 '%s' calibrate fit '%s' --model llama-3.1-8b --out '%s'",
		SERVESIM_BIN, csv, out);
	if (c.status != 0)
		fail_msg("exit %d: %s", c.status, c.err);
	/* Every row with its error before and after, then every family. */
	assert_contains(c.out, "measured_us");
	assert_contains(c.out, "before_us");
	assert_contains(c.out, "after_us");
	assert_contains(c.out, "gemm          lm_head_n128256_k4096");
	assert_contains(c.out, "not fitted: reported");
	assert_contains(c.out, "family        rows  used");
	assert_contains(c.out, "gemm_fp8");
	assert_contains(c.out, "low_precision_compute 0.8");
	assert_contains(c.out, "none: reached 0.8");   /* of the host link: 0.8, 2% noise */
	assert_contains(c.out, "(median); 2.0 us at 1 token");
	assert_contains(c.out, "family attn_decode ran throttled (sw_power_cap, SM 1500 MHz)");
	assert_contains(c.out, "SM clock 1500-1980 MHz over 13 families");
	assert_contains(c.err, "base profile h100-sxm");
	cmd_result_free(&c);

	struct hw_profile mine;
	struct err e;
	if (hw_load(&mine, out, &e))
		fail_msg("%s", e.msg);
	assert_true(mine.calibrated);
	assert_double_near(mine.bandwidth_gb_s, 3350, 0);          /* the base's keys */
	assert_double_near(mine.bf16_tflops, 989.4, 1e-9);
	assert_double_rel(mine.eff.compute_max, truth.compute_max, 0.03);
	assert_contains(mine.source_efficiency, "fitted by servesim calibrate from probe.csv on 2027-01-15");
	/* The overheads the probe cannot see are not written: the engine's own
	 * (sim/perf/overhead.c) still apply to the calibrated profile. */
	assert_int_equal(mine.overheads_given, 0);

	/* The written profile runs. */
	run_cmd(&c, "'%s' run --hardware '%s' --set workload.num_prompts=20 --format json", SERVESIM_BIN, out);
	assert_int_equal(c.status, 0);
	cmd_result_free(&c);

	/* A stand-in's bound is said on the terminal and in the profile. */
	struct hw_efficiency slow = truth;
	slow.attention_bandwidth = 0.20;
	write_probe(csv, &hw, all_families, &slow, 2);
	run_cmd(&c, "'%s' calibrate fit '%s' --out '%s'", SERVESIM_BIN, csv, out);
	if (c.status != 0)
		fail_msg("exit %d: %s", c.status, c.err);
	assert_contains(c.out, "attention_bandwidth >= 0.");
	assert_contains(c.out, "lower bound; kept 0.92");
	assert_contains(c.out, "its rows bound the efficiency from below");
	assert_contains(c.out, "(kept: lower bound from a stand-in kernel)");
	assert_contains(c.out, "layer            7     0 -                      -         none: reported");
	cmd_result_free(&c);
	char *ini = test_slurp_path(out);
	assert_contains(ini, "lower bounds from stand-in kernels: attention_bandwidth >= 0.");
	/* The kept attention_bandwidth is not written: the step model's own
	 * derivation for the engine's decode kernel still applies. */
	if (hw_load(&mine, out, &e))
		fail_msg("%s", e.msg);
	assert_int_equal(mine.eff_given & HW_EFF_BIT(attention_bandwidth), 0);
	assert_true(mine.eff_given & HW_EFF_BIT(compute_max));
	free(ini);
	test_rmdir(dir);
}

/* A rerun of one family (servesim-probe --only) replaces that family's
 * rows of the run; files of another device do not mix. */
static void fit_cli_reads_reruns(void **state)
{
	(void)state;
	char dir[64], csv[128], rerun[128], other[128], out[128], cmd[400];
	struct hw_profile hw;
	scratch(dir, csv, &hw);
	snprintf(rerun, sizeof rerun, "%s/rerun.csv", dir);
	snprintf(other, sizeof other, "%s/other.csv", dir);
	snprintf(out, sizeof out, "%s/p.ini", dir);
	/* The first run's decode ran slow (throttled, say); the rerun did not. */
	static const char *const first[] = { "stream_read", "gemm_bf16", "attn_prefill", "attn_decode", NULL };
	static const char *const again[] = { "attn_decode", NULL };
	struct hw_efficiency slow = truth;
	slow.attention_bandwidth = 0.4;
	write_probe(csv, &hw, first, &slow, 2);
	write_probe(rerun, &hw, again, &truth, 2);
	struct cmd_result c;
	run_cmd(&c, "SOURCE_DATE_EPOCH=1800000000 '%s' calibrate fit '%s' '%s' --out '%s'", SERVESIM_BIN, csv,
		rerun, out);
	if (c.status != 0)
		fail_msg("exit %d: %s", c.status, c.err);
	/* The rerun's decode rows alone (63, not 126), graded against the first
	 * file's stream. */
	assert_contains(c.out, "attn_decode     63    45 0.9");
	cmd_result_free(&c);
	struct hw_profile mine;
	struct err e;
	if (hw_load(&mine, out, &e))
		fail_msg("%s", e.msg);
	assert_contains(mine.source_efficiency, "from probe.csv and 1 more file on 2027-01-15");
	assert_double_rel(mine.eff.attention_bandwidth, truth.attention_bandwidth, 0.03);
	snprintf(cmd, sizeof cmd, "sed 's/H100 80GB HBM3/A100-SXM4-80GB/' '%s' > '%s'", rerun, other);
	assert_int_equal(system(cmd), 0);
	run_cmd(&c, "'%s' calibrate fit '%s' '%s' --out '%s'", SERVESIM_BIN, csv, other, out);
	assert_int_equal(c.status, 2);
	assert_contains(c.err, "other.csv: device 'NVIDIA A100-SXM4-80GB', but");
	cmd_result_free(&c);
	test_rmdir(dir);
}

static void fit_cli_writes_nothing_when_it_cannot_fit(void **state)
{
	(void)state;
	char dir[64], csv[128], out[128];
	struct hw_profile hw;
	scratch(dir, csv, &hw);
	snprintf(out, sizeof out, "%s/out.ini", dir);
	write_probe(csv, &hw, all_families, &truth, 2);
	struct cmd_result c;
	/* --weights fp8: the fp8 rows set the GEMM curve, the bf16 ones are reported. */
	run_cmd(&c, "'%s' calibrate fit '%s' --weights fp8 --out '%s'", SERVESIM_BIN, csv, out);
	assert_int_equal(c.status, 0);
	assert_contains(c.out, "none: reported (a GEMM of another dtype than --weights)");
	assert_contains(c.out, "not fitted: other dtype");
	cmd_result_free(&c);
	remove(out);
	/* A profile that cannot be written (its folder is a file): exit 1
	 * before the table reaches stdout, so the output is whole or absent. */
	run_cmd(&c, "'%s' calibrate fit '%s' --out '%s/x.ini'", SERVESIM_BIN, csv, csv);
	assert_int_equal(c.status, 1);
	assert_contains(c.err, "x.ini");
	assert_string_equal(c.out, "");
	cmd_result_free(&c);
	/* One iteration cannot converge: a warning, the tables on stderr
	 * (with the rows' before and after), nothing on stdout or disk. */
	run_cmd(&c, "'%s' calibrate fit '%s' --max-iter 1 --out '%s'", SERVESIM_BIN, csv, out);
	assert_fit_did_not_converge(&c, out, "kind ");
	assert_contains(c.err, "measured_us");
	assert_contains(c.err, "parameter ");
	cmd_result_free(&c);
	run_cmd(&c, "'%s' calibrate fit '%s' --out '%s'", SERVESIM_BIN, CAL "probe_too_few.csv", out);
	assert_int_equal(c.status, 2);
	assert_contains(c.err, "too few measurements");
	assert_false(test_path_exists(out));
	cmd_result_free(&c);
	/* Dims that are not the model's. */
	run_cmd(&c, "'%s' calibrate fit '%s' --model llama-3.1-70b --out '%s'", SERVESIM_BIN, csv, out);
	assert_int_equal(c.status, 2);
	assert_contains(c.err, "the probe measured hidden=4096");
	assert_false(test_path_exists(out));
	cmd_result_free(&c);
	test_rmdir(dir);
}

/* ---- the families the probe runs and the fit reads ----------------------- */

static void fit_families_are_probe_families(void **state)
{
	(void)state;
	struct cmd_result c;
	/* --list honours no other option or file: an error, not ignored. */
	run_cmd(&c, "'%s' calibrate fit --list --out x.ini", SERVESIM_BIN);
	assert_int_equal(c.status, 2);
	assert_contains(c.err,
			"--list prints the probe families and takes nothing else, got '--out'");
	assert_string_equal(c.out, "");
	cmd_result_free(&c);
	run_cmd(&c, "'%s' calibrate fit probe.csv --list", SERVESIM_BIN);
	assert_int_equal(c.status, 2);
	assert_contains(c.err, "got 'probe.csv'");
	cmd_result_free(&c);
	run_cmd(&c, "'%s' calibrate fit --list", SERVESIM_BIN);
	assert_int_equal(c.status, 0);
	size_t n;
	const struct fitfam *tab = fitfamily_table(&n);
	assert_true(n >= 12);
	for (size_t f = 0; f < n; f++) {
		char want[64];
		snprintf(want, sizeof want, "%s\t", tab[f].name);
		assert_contains(c.out, want);
	}
	/* Every kind the reader accepts belongs to a family (the fit asserts it). */
	for (int k = 0; k < PROBE_N_KINDS; k++)
		for (int dt = PROBE_DT_NONE; dt <= PROBE_DT_INT4; dt++) {
			struct probe_row r = { .kind = k, .dtype = dt };
			if (k == PROBE_GEMM && dt == PROBE_DT_NONE)
				continue;   /* refused by probecsv */
			if (fitfamily_of(&r) < 0)
				fail_msg("kind %s dtype %s has no fit family", probe_kind_names[k], probe_dtype_names[dt]);
		}
	assert_contains(c.out, "gemm_fp8\tlow_precision_compute\n");
	assert_contains(c.out, "attn_decode\tattention_bandwidth,attention_half_seqs\n");
	cmd_result_free(&c);
	if (!proberun_available())
		return;   /* no probe built here to compare with */
	char probe[4096];
	snprintf(probe, sizeof probe, "%s", SERVESIM_BIN);
	*strrchr(probe, '/') = '\0';
	strcat(probe, "/servesim-probe");
	/* --list needs no GPU. */
	run_cmd(&c, "'%s' --list", probe);
	assert_int_equal(c.status, 0);
	for (size_t f = 0; f < n; f++) {
		char want[64];
		snprintf(want, sizeof want, "\n%s\t", tab[f].name);
		if (!strstr(c.out, want) && strncmp(c.out, want + 1, strlen(want + 1)))
			fail_msg("the fit reads family %s, which servesim-probe --list does not name:\n%s",
				 tab[f].name, c.out);
	}
	cmd_result_free(&c);

	/* Bad arguments are refused before any device is opened: exit 2. */
	static const struct {
		const char *args, *msg;
	} bad[] = {
		{ "--hidden x", "--hidden: expected an integer in [16, 1048576], got 'x'" },
		{ "--only gemm_bf16,nosuch", "--only: 'nosuch' is not a family" },
		{ "--hidden 4096", "--hidden, --intermediate, --heads, --kv-heads, --head-dim and --vocab are required" },
		{ "--hidden 4096 --intermediate 14336 --heads 32 --kv-heads 5 --head-dim 128 --vocab 1000",
		  "heads must be a multiple of kv-heads" },
		{ "--check extra", "unexpected argument 'extra'" },
	};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		run_cmd(&c, "'%s' %s", probe, bad[i].args);
		assert_int_equal(c.status, 2);
		assert_contains(c.err, bad[i].msg);
		cmd_result_free(&c);
	}
}

/* ---- calibrate gpu ------------------------------------------------------- */

static void gpu_without_cuda_or_without_a_device(void **state)
{
	(void)state;
	char dir[64], out[128];
	test_tmpdir(dir, sizeof dir, "probefit");
	snprintf(out, sizeof out, "%s/gpu.ini", dir);
	struct cmd_result c;
	if (!proberun_available()) {
		run_cmd(&c, "'%s' calibrate gpu --model llama-3.1-8b --out '%s'", SERVESIM_BIN, out);
		assert_int_equal(c.status, 1);
		assert_contains(c.err, "built without CUDA support");
		assert_false(test_path_exists(out));
		cmd_result_free(&c);
		test_rmdir(dir);
		return;
	}
	/* A CUDA build: the probe's self-check needs a GPU. */
	char probe[4096];
	snprintf(probe, sizeof probe, "%s", SERVESIM_BIN);
	*strrchr(probe, '/') = '\0';
	strcat(probe, "/servesim-probe");
	if (!test_path_exists(probe)) {
		test_rmdir(dir);
		fail_msg("a CUDA build without %s", probe);
	}
	run_cmd(&c, "'%s' --check", probe);
	if (c.status == 1 && strstr(c.err, "no usable CUDA device")) {
		/* No GPU here: the probe says which call failed and why;
		 * calibrate gpu passes it on, writes no profile, exits 1. */
		assert_contains(c.err, "cudaGetDeviceCount: ");
		assert_contains(c.err, "driver supports CUDA ");
		cmd_result_free(&c);
		run_cmd(&c, "'%s' calibrate gpu --model llama-3.1-8b --out '%s'", SERVESIM_BIN, out);
		assert_int_equal(c.status, 1);
		assert_contains(c.err, "no usable CUDA device");
		assert_false(test_path_exists(out));
		cmd_result_free(&c);
		test_rmdir(dir);
		skip();
	}
	if (c.status != 0)
		fail_msg("servesim-probe --check: exit %d\n%s%s", c.status, c.out, c.err);
	assert_contains(c.out, "check: all ok");
	cmd_result_free(&c);
	test_rmdir(dir);
}

/* A stand-in servesim-probe: copies src to its --out and exits with code. */
static void fake_probe(const char *path, const char *src, int code)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f, "#!/bin/sh\nout=\nwhile [ $# -gt 0 ]; do [ \"$1\" = --out ] && out=$2; shift; done\n"
		   "cp '%s' \"$out\"\nexit %d\n", src, code);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(chmod(path, 0755), 0);
}

/* calibrate gpu keeps the measurements whatever happens after them: a
 * full run, one with failed families (exit 3), a crash mid-row, a file
 * the fit refuses. */
static void gpu_keeps_the_measurements(void **state)
{
	(void)state;
	if (!proberun_available())
		skip();   /* calibrate gpu runs no probe in a build without CUDA */
	char dir[64], src[128], cut[128], few[128], probe[128], out[128], kept[160];
	test_tmpdir(dir, sizeof dir, "probefit");
	snprintf(src, sizeof src, "%s/src.csv", dir);
	snprintf(cut, sizeof cut, "%s/cut.csv", dir);
	snprintf(few, sizeof few, "%s/few.csv", dir);
	snprintf(probe, sizeof probe, "%s/servesim-probe", dir);
	snprintf(out, sizeof out, "%s/gpu.ini", dir);
	snprintf(kept, sizeof kept, "%s.probe.csv", out);
	struct hw_profile hw;
	h100(&hw);
	write_probe(src, &hw, all_families, &truth, 2);
	struct cmd_result c;

	fake_probe(probe, src, 0);
	run_cmd(&c, "'%s' calibrate gpu --model llama-3.1-8b --probe '%s' --out '%s'", SERVESIM_BIN, probe, out);
	if (c.status != 0)
		fail_msg("exit %d: %s", c.status, c.err);
	assert_true(test_path_exists(out));
	assert_true(test_path_exists(kept));
	assert_contains(c.err, "measurements kept in");
	cmd_result_free(&c);
	remove(out);
	remove(kept);

	fake_probe(probe, src, 3);
	run_cmd(&c, "'%s' calibrate gpu --model llama-3.1-8b --probe '%s' --out '%s'", SERVESIM_BIN, probe, out);
	assert_int_equal(c.status, 0);
	assert_contains(c.err, "some families failed on the GPU");
	assert_contains(c.err, "fitting what was measured");
	assert_true(test_path_exists(out));
	cmd_result_free(&c);
	remove(out);
	remove(kept);

	/* Killed mid-row: no profile, the rows kept and the way to fit them said. */
	char cmd[400];
	snprintf(cmd, sizeof cmd, "head -c 20000 '%s' > '%s'", src, cut);
	assert_int_equal(system(cmd), 0);
	fake_probe(probe, cut, 1);
	run_cmd(&c, "'%s' calibrate gpu --model llama-3.1-8b --probe '%s' --out '%s'", SERVESIM_BIN, probe, out);
	assert_int_equal(c.status, 1);
	assert_contains(c.err, "exited with status 1");
	assert_contains(c.err, "what was measured is kept in");
	assert_false(test_path_exists(out));
	assert_true(test_path_exists(kept));
	cmd_result_free(&c);
	/* ... and calibrate fit reads the cut file. */
	run_cmd(&c, "'%s' calibrate fit '%s' --out '%s'", SERVESIM_BIN, kept, out);
	assert_int_equal(c.status, 0);
	assert_contains(c.out, "the last line was cut short");
	cmd_result_free(&c);
	remove(out);
	remove(kept);

	/* A file the fit refuses: exit 2, no profile, the CSV kept. */
	snprintf(cmd, sizeof cmd, "cp '%s' '%s'", CAL "probe_too_few.csv", few);
	assert_int_equal(system(cmd), 0);
	fake_probe(probe, few, 0);
	run_cmd(&c, "'%s' calibrate gpu --model llama-3.1-8b --probe '%s' --out '%s'", SERVESIM_BIN, probe, out);
	assert_int_equal(c.status, 2);
	assert_false(test_path_exists(out));
	assert_true(test_path_exists(kept));
	cmd_result_free(&c);
	test_rmdir(dir);
}

/* scripts/probe-on-gpu --dry-run: the build and run commands it would
 * use (building takes a minute of nvcc, too long for the suite; the
 * build itself was run by hand, see docs/calibration.md). */
static void probe_on_gpu_plans_the_round_trip(void **state)
{
	(void)state;
	const char *script = TEST_DATA_DIR "/../../scripts/probe-on-gpu";
	struct cmd_result c;
	run_cmd(&c, "'%s' --dry-run --out /tmp/pog-dry --budget-s 480", script);
	if (c.status == 2 && strstr(c.err, "nvcc not found")) {
		cmd_result_free(&c);
		skip();
	}
	if (c.status != 0)
		fail_msg("exit %d: %s", c.status, c.err);
	assert_contains(c.out, "-cudart static");
	assert_contains(c.out, "probe_*.cu");
	assert_contains(c.out, "servesim-probe --check");
	/* models/llama-3.1-8b.json's dims, the budget less the check and a margin */
	assert_contains(c.out, "--hidden 4096 --intermediate 14336 --heads 32 --kv-heads 8 --head-dim 128 --vocab 128256 --tp 1 --budget-s 360 --out /tmp/pog-dry/probe.csv");
	assert_contains(c.out, "servesim calibrate fit /tmp/pog-dry/probe.csv --model llama-3.1-8b");
	cmd_result_free(&c);
	run_cmd(&c, "'%s' --dry-run --dims hidden=2048,intermediate=8192,heads=16,kv_heads=4,head_dim=128,vocab=32000 --tp 2",
		script);
	assert_int_equal(c.status, 0);
	assert_contains(c.out, "--hidden 2048 --intermediate 8192 --heads 16 --kv-heads 4 --head-dim 128 --vocab 32000 --tp 2");
	cmd_result_free(&c);
	run_cmd(&c, "'%s' --dry-run --budget-s 60", script);
	assert_int_equal(c.status, 2);
	assert_contains(c.err, "--budget-s: at least 120 s");
	cmd_result_free(&c);
	/* An MoE model brings its experts, a windowed one its window, MLA is refused. */
	run_cmd(&c, "'%s' --dry-run --model gpt-oss-20b", script);
	assert_int_equal(c.status, 0);
	assert_contains(c.out, "--experts 32 --experts-per-token 4 --window 128");
	cmd_result_free(&c);
	run_cmd(&c, "'%s' --dry-run --model deepseek-v3", script);
	assert_int_equal(c.status, 2);
	assert_contains(c.err, "MLA attention");
	cmd_result_free(&c);
	run_cmd(&c, "'%s' --dry-run --model nosuch", script);
	assert_int_equal(c.status, 2);
	assert_contains(c.err, "--model nosuch: no models/nosuch.json");
	cmd_result_free(&c);
}


int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(fit_cli_writes_a_profile_run_can_use),
		cmocka_unit_test(fit_cli_reads_reruns),
		cmocka_unit_test(fit_cli_writes_nothing_when_it_cannot_fit),
		cmocka_unit_test(fit_families_are_probe_families),
		cmocka_unit_test(gpu_without_cuda_or_without_a_device),
		cmocka_unit_test(gpu_keeps_the_measurements),
		cmocka_unit_test(probe_on_gpu_plans_the_round_trip),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
