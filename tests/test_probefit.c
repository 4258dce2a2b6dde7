/*
 * The GPU probe's CSV and its fit (issues 7 and 19): servesim-probe's
 * CSV read back (both header versions, cut-short files, failed families,
 * clocks), the GSL fit of the [efficiency] section recovering known
 * parameters from synthetic measurements (probesynth.h), family by family
 * and all together, stand-in kernels that only bound an efficiency from
 * below, windowed prefill. The commands are test_probecli.c.
 */
#include "probesynth.h"

/* ---- probe CSV ----------------------------------------------------------- */

static void probecsv_reads_both_versions(void **state)
{
	(void)state;
	char dir[64], path[128];
	struct hw_profile hw;
	scratch(dir, path, &hw);
	for (int v = 1; v <= 2; v++) {
		write_probe(path, &hw, all_families, &truth, v);
		struct probe_data d;
		load(&d, path);
		assert_int_equal(d.version, v);
		assert_string_equal(d.device, "NVIDIA H100 80GB HBM3");
		assert_true(d.has_dims);
		assert_int_equal(d.dims.hidden, 4096);
		assert_int_equal(d.dims.vocab, 128256);
		/* 6 bandwidth + 150 gemm + 14 moe + 12 prefill (9 prompts, 3 chunks) + 5
		 * windowed prefill + 63 decode + 7 layer + 15 elementwise + 3 h2d + 3 allreduce
		 * + 1 launch */
		assert_int_equal(d.len, 279);
		assert_int_equal(d.rows[6].kind, PROBE_GEMM);
		assert_int_equal(d.rows[6].gemm_n, 6144);
		assert_int_equal(d.rows[6].gemm_k, 4096);
		assert_false(d.truncated);
		assert_int_equal(d.n_clocks, 13);
		assert_string_equal(d.clocks[0].family, "stream_read");
		assert_double_near(d.clocks[0].sm_mhz, 1980, 0);
		assert_false(probecsv_throttled(&d.clocks[0]));
		assert_true(probecsv_throttled(&d.clocks[7]));   /* attn_decode */
		if (v == 2) {
			assert_string_equal(d.rows[0].kernel, "probe_stream_read_v1");
			assert_int_equal(d.rows[0].reps, 150);
			assert_true(d.rows[0].p90_us > d.rows[0].p10_us);
		/* Windowed prefill rows carry their window, the others none. */
		size_t windowed = 0;
		for (size_t i = 0; i < d.len; i++)
			windowed += d.rows[i].kind == PROBE_ATTN_PREFILL && d.rows[i].window == 4096;
		assert_int_equal(windowed, 5);
		}
		assert_string_equal(probecsv_hardware_id(d.device), "h100-sxm");
		probecsv_free(&d);
	}
	test_rmdir(dir);
}

static void probecsv_errors_name_file_and_line(void **state)
{
	(void)state;
	struct probe_data d;
	struct err e;
	assert_int_equal(probecsv_load(&d, CAL "probe_bad_number.csv", &e), -1);
	assert_contains(e.msg, "probe_bad_number.csv:7: time_us: expected a time in microseconds > 0, got 'fast'");
	probecsv_free(&d);
	assert_int_equal(probecsv_load(&d, CAL "probe_no_header.csv", &e), -1);
	assert_contains(e.msg, "probe_no_header.csv:2: expected the header");
	probecsv_free(&d);
	/* A version-2 row with a bad spread column. */
	assert_int_equal(probecsv_load(&d, CAL "probe_v2_bad_graph.csv", &e), -1);
	assert_contains(e.msg, "probe_v2_bad_graph.csv:5: graph: expected 0 or 1, got 'yes'");
	probecsv_free(&d);
	assert_null(probecsv_hardware_id("Some Future GPU"));
	assert_string_equal(probecsv_hardware_id("NVIDIA L40S"), "l40s");
	assert_string_equal(probecsv_hardware_id("NVIDIA L4"), "l4");
	/* Names as cudaGetDeviceProperties gives them: a Grace Hopper GH200
	 * and the H200 NVL card hold "H200" but are not the H200 SXM, whose
	 * profile they must not borrow (each has its own); a GH200 whose
	 * memory version the name does not say stays unknown; one name inside
	 * another is not a match (GB200 is not a B200). */
	assert_null(probecsv_hardware_id("GH200"));
	assert_string_equal(probecsv_hardware_id("NVIDIA GH200 480GB"), "gh200");
	assert_string_equal(probecsv_hardware_id("NVIDIA GH200 144G HBM3e"), "gh200-144gb");
	assert_string_equal(probecsv_hardware_id("NVIDIA H200 NVL"), "h200-nvl");
	assert_string_equal(probecsv_hardware_id("NVIDIA H200"), "h200-sxm");
	assert_string_equal(probecsv_hardware_id("NVIDIA GB200"), "gb200");
	assert_string_equal(probecsv_hardware_id("NVIDIA B200"), "b200");
	assert_string_equal(probecsv_hardware_id("NVIDIA H100 80GB HBM3"), "h100-sxm");
	assert_string_equal(probecsv_hardware_id("NVIDIA H100 NVL"), "h100-nvl");
}

/* A run killed mid-row: the cut-short last line is dropped, the rows
 * before it are read and fitted, and `# failed:` lines are collected. */
static void truncated_csv_fits_what_it_holds(void **state)
{
	(void)state;
	char dir[64], path[128];
	struct hw_profile hw;
	scratch(dir, path, &hw);
	static const char *const fams[] = { "stream_read", "gemm_bf16", "attn_decode", NULL };
	write_probe(path, &hw, fams, &truth, 2);
	/* Cut the file in the middle of the 40th decode row. */
	FILE *f = fopen(path, "r+");
	assert_non_null(f);
	char line[512];
	long cut = 0;
	int decode_rows = 0;
	while (fgets(line, sizeof line, f))
		if (!strncmp(line, "attn_decode,", 12) && ++decode_rows == 40) {
			cut = ftell(f) - (long)strlen(line) + 20;
			break;
		}
	assert_true(cut > 0);
	assert_int_equal(ftruncate(fileno(f), cut), 0);
	assert_int_equal(fclose(f), 0);
	struct probe_data d;
	load(&d, path);
	assert_true(d.truncated);
	assert_int_equal(d.len, 3 + 75 + 39);   /* the cut row is gone */
	struct fit_result r;
	fit(&r, &d, &hw);
	/* The decode curve is seen up to batch 32 (39 rows): the same
	 * tolerances as the whole file. */
	assert_double_rel(r.after.bandwidth, truth.bandwidth, 0.03);
	assert_double_rel(r.after.compute_max, truth.compute_max, 0.03);
	assert_double_rel(r.after.attention_bandwidth, truth.attention_bandwidth, 0.03);
	fit_result_free(&r);
	probecsv_free(&d);

	/* A last row that parses but lost its newline is dropped too. */
	f = fopen(path, "r+");
	assert_non_null(f);
	long last_nl = -1, pos = 0;
	int ch;
	while ((ch = fgetc(f)) != EOF) {
		if (ch == '\n' && pos < cut - 30)
			last_nl = pos;
		pos++;
	}
	assert_true(last_nl > 0);
	/* Row 38 whole but for its newline: it might have been cut in its last
	 * number, so it goes too. */
	assert_int_equal(ftruncate(fileno(f), last_nl), 0);
	assert_int_equal(fclose(f), 0);
	load(&d, path);
	assert_true(d.truncated);
	assert_int_equal(d.len, 3 + 75 + 37);
	probecsv_free(&d);

	/* A bad row that is not the last is still an error. */
	f = fopen(path, "a");
	assert_non_null(f);
	fprintf(f, "\nstream_read,buf,0,0,none,fast,1,0,k,0,1,1,1,0,0\n");
	assert_int_equal(fclose(f), 0);
	struct err e;
	assert_int_equal(probecsv_load(&d, path, &e), -1);
	assert_contains(e.msg, "time_us: expected a time in microseconds > 0, got 'fast'");
	probecsv_free(&d);

	/* Failed families are named. */
	assert_int_equal(probecsv_load(&d, CAL "probe_v2_failed.csv", &e), 0);
	assert_int_equal(d.n_failed, 1);
	assert_string_equal(d.failed[0], "gemm_fp8");
	probecsv_free(&d);
	test_rmdir(dir);
}

/* ---- the probe fit ------------------------------------------------------- */

static void fit_recovers_known_parameters(void **state)
{
	(void)state;
	char dir[64], path[128];
	struct hw_profile hw;
	scratch(dir, path, &hw);
	write_probe(path, &hw, all_families, &truth, 2);
	struct probe_data d;
	load(&d, path);
	struct fit_result r;
	fit(&r, &d, &hw);
	/* Fractions to 3% of their value and the GEMM half-efficiency point to
	 * 20%: 2% noise on ~200 rows pins the fractions to well under 1%;
	 * the half point is seen only by the few GEMMs near the
	 * compute/memory crossover, hence the wider band. */
	assert_double_rel(r.after.bandwidth, truth.bandwidth, 0.03);
	assert_double_rel(r.after.attention_bandwidth, truth.attention_bandwidth, 0.03);
	assert_double_rel(r.after.compute_max, truth.compute_max, 0.03);
	assert_double_rel(r.after.attention_compute, truth.attention_compute, 0.03);
	assert_double_rel(r.after.low_precision_compute, truth.low_precision_compute, 0.03);
	assert_double_rel(r.after.moe_efficiency, truth.moe_efficiency, 0.03);
	assert_double_rel(r.after.compute_half_tokens, truth.compute_half_tokens, 0.20);
	/* The decode-batch half point to 15%: only the decode rows at batches
	 * 8..64 see it (below it the floor holds, above it the curve is
	 * flat). */
	assert_double_rel(r.after.attention_half_seqs, truth.attention_half_seqs, 0.15);
	/* Not seen by kernels: untouched. */
	assert_double_near(r.after.step_overhead_us, hw.eff.step_overhead_us, 0);
	assert_double_near(r.after.request_overhead_ms, hw.eff.request_overhead_ms, 0);
	/* The residual is the noise: RMS of ln-ratios near 0.02. */
	assert_true(r.rms_after < 0.03);
	assert_true(r.rms_before > 0.1);
	/* Production-grade attention: nothing is a mere bound. */
	for (int id = 0; id < EFF_N_PARAMS; id++)
		assert_false(r.bounded[id]);
	/* Per family: the residual is the noise where rows were fitted; the
	 * host link is reported at its measured 80% of the datasheet. */
	assert_true(family(&r, "gemm_fp8")->n_used >= 50);   /* 56: the rest are under 20 us */
	assert_true(family(&r, "attn_decode")->rms_after < 0.03);
	assert_true(family(&r, "attn_decode")->grade > 0.80);
	assert_true(family(&r, "attn_prefill")->grade > 0.70);
	assert_int_equal(family(&r, "h2d_copy")->n_used, 0);
	assert_double_rel(family(&r, "h2d_copy")->median_ratio, 1 / HOST_LINK_FRACTION, 0.05);
	assert_double_rel(family(&r, "allreduce")->median_ratio, 1 / HOST_LINK_FRACTION, 0.05);
	assert_int_equal(family(&r, "launch")->n_used, 0);
	/* Elementwise kernels: reported, with their cost at one token (2 us
	 * fixed plus a roofline of 8 ns; 2% noise). */
	assert_int_equal(family(&r, "elementwise")->n_used, 0);
	assert_int_equal(family(&r, "elementwise")->first_tokens, 1);
	assert_double_rel(family(&r, "elementwise")->first_us, ELEM_FIXED_US, 0.06);
	fit_result_free(&r);
	probecsv_free(&d);
	test_rmdir(dir);
}

/* Each family alone (with the reference rows its grade needs) recovers
 * the parameters it sets, the others being the base profile's. */
static void fit_each_family_alone(void **state)
{
	(void)state;
	static const struct {
		const char *fams[3];
		int params[3];
		double tol[3];
	} cases[] = {
		{ { "stream_read", NULL }, { EFF_BANDWIDTH, -1 }, { 0.03 } },
		{ { "d2d_copy", NULL }, { EFF_BANDWIDTH, -1 }, { 0.03 } },
		{ { "gemm_bf16", NULL },
		  { EFF_COMPUTE_MAX, EFF_COMPUTE_HALF_TOKENS, EFF_BANDWIDTH },
		  { 0.03, 0.20, 0.03 } },
		{ { "gemm_fp8", NULL }, { EFF_LOW_PRECISION_COMPUTE, -1 }, { 0.03 } },
		{ { "moe_gemm", NULL }, { EFF_MOE_EFFICIENCY, -1 }, { 0.03 } },
		{ { "stream_read", "attn_decode", NULL },
		  { EFF_ATTENTION_BANDWIDTH, EFF_ATTENTION_HALF_SEQS, -1 },
		  { 0.03, 0.15 } },
		{ { "gemm_bf16", "attn_prefill", NULL }, { EFF_ATTENTION_COMPUTE, -1 }, { 0.03 } },
	};
	char dir[64], path[128];
	struct hw_profile hw;
	scratch(dir, path, &hw);
	for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
		/* The truth for this family's parameters (and its reference's),
		 * the base profile elsewhere. */
		struct hw_efficiency eff = hw.eff;
		for (int i = 0; i < 3 && cases[c].params[i] >= 0; i++)
			effparam_set(&eff, cases[c].params[i], effparam_value(&truth, cases[c].params[i]));
		if (!strcmp(cases[c].fams[0], "gemm_bf16"))
			eff.bandwidth = truth.bandwidth, eff.compute_max = truth.compute_max,
			eff.compute_half_tokens = truth.compute_half_tokens;
		if (!strcmp(cases[c].fams[0], "stream_read"))
			eff.bandwidth = truth.bandwidth;
		write_probe(path, &hw, cases[c].fams, &eff, 2);
		struct probe_data d;
		load(&d, path);
		struct fit_result r;
		fit(&r, &d, &hw);
		for (int i = 0; i < 3 && cases[c].params[i] >= 0; i++) {
			int id = cases[c].params[i];
			double got = effparam_value(&r.after, id), want = effparam_value(&truth, id);
			if (fabs(got - want) > cases[c].tol[i] * fabs(want))
				fail_msg("%s alone: %s = %g, truth %g (tolerance %g%%)", cases[c].fams[1] ? cases[c].fams[1] : cases[c].fams[0],
					 effparam_get(id)->key, got, want, 100 * cases[c].tol[i]);
			assert_true(r.fitted[id]);
		}
		fit_result_free(&r);
		probecsv_free(&d);
	}
	test_rmdir(dir);
}

/* The probe's attention kernels run at a stand-in's 0.20 / 0.10 of peak
 * (a quarter of the stream bandwidth, a sixth of the GEMM rate): the fit
 * must not lower the base's 0.92 / 0.49 from them, and must raise a base
 * that is below what even the stand-in reached. */
static void standin_kernels_only_bound_from_below(void **state)
{
	(void)state;
	char dir[64], path[128];
	struct hw_profile hw;
	scratch(dir, path, &hw);
	struct hw_efficiency slow = truth;
	slow.attention_bandwidth = 0.20;
	slow.attention_compute = 0.10;
	write_probe(path, &hw, all_families, &slow, 2);
	struct probe_data d;
	load(&d, path);
	struct fit_result r;
	fit(&r, &d, &hw);
	assert_true(r.bounded[EFF_ATTENTION_BANDWIDTH]);
	assert_true(r.bounded[EFF_ATTENTION_COMPUTE]);
	/* The bounds are what the stand-in reached, to the 3% of a fit. */
	assert_double_rel(r.bound[EFF_ATTENTION_BANDWIDTH], 0.20, 0.03);
	assert_double_rel(r.bound[EFF_ATTENTION_COMPUTE], 0.10, 0.03);
	/* ... and not lowered. */
	assert_double_near(r.after.attention_bandwidth, hw.eff.attention_bandwidth, 0);
	assert_double_near(r.after.attention_compute, hw.eff.attention_compute, 0);
	assert_double_near(r.after.attention_half_seqs, hw.eff.attention_half_seqs, 0);
	assert_true(family(&r, "attn_decode")->bound);
	assert_true(family(&r, "attn_decode")->grade < 0.5);
	assert_true(family(&r, "attn_prefill")->bound);
	/* Layers run the same kernels: reported, not fitted. */
	assert_int_equal(family(&r, "layer")->n_used, 0);
	/* The GEMM and bandwidth fit is untouched by the stand-ins. */
	assert_double_rel(r.after.bandwidth, truth.bandwidth, 0.03);
	assert_double_rel(r.after.compute_max, truth.compute_max, 0.03);
	fit_result_free(&r);

	/* A base below the stand-in's bound is raised to it. */
	struct hw_profile low = hw;
	low.eff.attention_bandwidth = 0.05;
	low.eff.attention_compute = 0.02;
	fit(&r, &d, &low);
	assert_double_rel(r.after.attention_bandwidth, r.bound[EFF_ATTENTION_BANDWIDTH], 1e-9);
	assert_double_rel(r.after.attention_compute, r.bound[EFF_ATTENTION_COMPUTE], 1e-9);
	assert_true(r.after.attention_bandwidth > 0.15);
	fit_result_free(&r);
	probecsv_free(&d);

	/* Without a stream_read row the decode kernel cannot be graded: a bound. */
	static const char *const no_ref[] = { "gemm_bf16", "attn_decode", NULL };
	write_probe(path, &hw, no_ref, &truth, 2);
	load(&d, path);
	fit(&r, &d, &hw);
	assert_true(family(&r, "attn_decode")->bound);
	assert_true(family(&r, "attn_decode")->grade < 0);
	assert_double_near(r.after.attention_bandwidth, hw.eff.attention_bandwidth, 0);
	fit_result_free(&r);
	probecsv_free(&d);
	test_rmdir(dir);
}

/* A windowed prompt is predicted through a sliding-window layer: its time
 * is the pairs' ratio, 125831168 / 536887296 = 0.2344, for a prompt of
 * 32768 tokens and a window of 4096 (prefill attention is compute-bound
 * there; 3% for the KV reads). */
static void windowed_prefill_counts_window_pairs(void **state)
{
	(void)state;
	struct hw_profile hw;
	h100(&hw);
	struct probepred pp;
	probepred_init(&pp, &hw, &llama8b);
	struct probe_row full = { .kind = PROBE_ATTN_PREFILL, .dtype = PROBE_DT_BF16, .tokens = 32768 };
	struct probe_row win = full;
	win.window = 4096;
	double tf = probepred_time_us(&pp, &hw.eff, &full), tw = probepred_time_us(&pp, &hw.eff, &win);
	assert_double_rel(tw / tf, 125831168.0 / 536887296.0, 0.03);
}

static void fit_refuses_too_few_points(void **state)
{
	(void)state;
	struct hw_profile hw;
	h100(&hw);
	struct probe_data d;
	load(&d, CAL "probe_too_few.csv");
	struct fit_result r;
	struct err e;
	assert_int_equal(fit_probe(&r, &d, &hw, NULL, &e), -1);
	assert_contains(e.msg, "too few measurements to fit: 2 usable rows");
	probecsv_free(&d);
}


int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(probecsv_reads_both_versions),
		cmocka_unit_test(probecsv_errors_name_file_and_line),
		cmocka_unit_test(truncated_csv_fits_what_it_holds),
		cmocka_unit_test(fit_recovers_known_parameters),
		cmocka_unit_test(fit_each_family_alone),
		cmocka_unit_test(standin_kernels_only_bound_from_below),
		cmocka_unit_test(windowed_prefill_counts_window_pairs),
		cmocka_unit_test(fit_refuses_too_few_points),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
