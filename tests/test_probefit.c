/*
 * The GPU probe's half of calibration (issues 7 and 19): servesim-probe's
 * CSV read back (both header versions, cut-short files, failed families),
 * the GSL fit of the [efficiency] section recovering known parameters
 * from synthetic measurements, family by family and all together, stand-in
 * kernels that only bound an efficiency from below, the profile it
 * writes, `calibrate gpu` without a GPU, and the family lists of the probe
 * and the fit agreeing.
 *
 * The synthetic probe file is what servesim-probe would write on an H100
 * for Llama-3.1-8B if the step-time model were exactly right with known
 * efficiencies (`truth`), each time multiplied by exp(N(0, 0.02)): 2%
 * noise, seeded. The fit starts from the h100-sxm defaults, which differ
 * from the truth by 10-150%. The truth's attention kernels are
 * production-grade: decode reaches ~0.9 of the stream bandwidth, prefill
 * ~0.8 of the GEMM rate (fitfamily.c's lines are 0.80 and 0.70).
 */
#include "testutil.h"

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <sys/stat.h>

#include "effparam.h"
#include "fit.h"
#include "fitfamily.h"
#include "hwprofile.h"
#include "probecsv.h"
#include "probepred.h"
#include "proberun.h"
#include "steptime.h"

#define CAL TEST_DATA_DIR "/calib/"

/* The parameters the synthetic GPU has. */
static const struct hw_efficiency truth = {
	.bandwidth = 0.86, .attention_bandwidth = 0.80, .attention_half_seqs = 6,
	.compute_max = 0.62, .compute_half_tokens = 90, .attention_compute = 0.50,
	.low_precision_compute = 0.85, .moe_efficiency = 0.70,
	.step_overhead_us = 1400, .step_overhead_per_seq_us = 4, .request_overhead_ms = 10,
};

/* Llama-3.1-8B (models/llama-3.1-8b.json). */
static const struct probe_dims llama8b = { 4096, 14336, 32, 8, 128, 128256, 1, 0, 0, 0 };

/* The measured links (host, all-reduce ring) reach 80% of the profile's. */
#define HOST_LINK_FRACTION 0.8

struct gen {
	FILE *f;
	struct probepred pp;
	gsl_rng *rng;
	const struct hw_efficiency *eff;
	int version;
};

static void tmp_dir(char *dir, size_t cap)
{
	snprintf(dir, cap, "/tmp/servesim-probefit-XXXXXX");
	assert_non_null(mkdtemp(dir));
}

static void rm_dir(const char *dir)
{
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
}

static bool exists(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0;
}

static void h100(struct hw_profile *hw)
{
	struct err e;
	if (hw_load_named(hw, "h100-sxm", &e))
		fail_msg("%s", e.msg);
}

/* One row: the prediction under g->eff with noise (links: their share of
 * the datasheet; launches: 5 us). */
static void put_row(struct gen *g, struct probe_row *r, const char *kernel)
{
	double t;
	if (r->kind == PROBE_LAUNCH)
		t = 5.0;
	else if (r->kind == PROBE_H2D_COPY || r->kind == PROBE_D2H_COPY || r->kind == PROBE_ALLREDUCE)
		t = probepred_time_us(&g->pp, g->eff, r) / HOST_LINK_FRACTION;
	else
		t = probepred_time_us(&g->pp, g->eff, r);
	t *= exp(gsl_ran_gaussian(g->rng, 0.02));
	fprintf(g->f, "%s,%s,%lld,%lld,%s,%.3f,%.0f,%.0f", probe_kind_names[r->kind], r->shape,
		(long long)r->tokens, (long long)r->context, probe_dtype_names[r->dtype], t, r->bytes, r->flops);
	if (g->version == 2)
		fprintf(g->f, ",%s,%d,%d,%.3f,%.3f,0,0", kernel, t < 20, 150, t * 0.98, t * 1.03);
	fprintf(g->f, "\n");
}

static double causal_pairs(double n, double c)
{
	return n * c + n * (n + 1) / 2;
}

/* The probe's grid of shapes for one family (fitfamily names). */
static void put_family(struct gen *g, const char *family)
{
	const double hd = 128, hq = 32 * hd, hk = 8 * hd;
	if (!strcmp(family, "stream_read") || !strcmp(family, "d2d_copy")) {
		static const double mib[] = { 400, 1600, 6400 };
		int k = !strcmp(family, "d2d_copy") ? PROBE_D2D_COPY : PROBE_STREAM_READ;
		for (int i = 0; i < 3; i++) {
			struct probe_row r = { .kind = k, .dtype = PROBE_DT_NONE };
			snprintf(r.shape, sizeof r.shape, "buf_%.0fMiB", mib[i]);
			r.bytes = mib[i] * 1048576.0 * (k == PROBE_D2D_COPY ? 2 : 1);
			put_row(g, &r, "probe_stream_read_v1");
		}
	} else if (!strncmp(family, "gemm_", 5) || !strcmp(family, "gemv_int4")) {
		static const struct {
			const char *name;
			int64_t n, k;
		} w[] = { { "qkv", 6144, 4096 }, { "o", 4096, 4096 }, { "gate_up", 28672, 4096 },
			  { "down", 4096, 14336 }, { "lm_head", 128256, 4096 } };
		int dt = !strcmp(family, "gemm_fp8") ? PROBE_DT_FP8
			 : !strcmp(family, "gemv_int4") ? PROBE_DT_INT4 : PROBE_DT_BF16;
		int64_t m_max = dt == PROBE_DT_INT4 ? 8 : 16384;
		for (size_t i = 0; i < 5; i++)
			for (int64_t m = 1; m <= m_max; m = dt == PROBE_DT_INT4 ? m + 1 : 2 * m) {
				struct probe_row r = { .kind = PROBE_GEMM, .dtype = dt, .tokens = m,
						       .gemm_n = w[i].n, .gemm_k = w[i].k };
				snprintf(r.shape, sizeof r.shape, "%s_n%lld_k%lld", w[i].name, (long long)w[i].n,
					 (long long)w[i].k);
				double nk = (double)w[i].n * (double)w[i].k;
				r.bytes = nk * (dt == PROBE_DT_FP8 ? 1 : dt == PROBE_DT_INT4 ? 0.5 : 2);
				r.flops = 2.0 * (double)m * nk;
				put_row(g, &r, "cublas");
			}
	} else if (!strcmp(family, "attn_prefill")) {
		/* Whole prompts, then 2048-token chunks after a cached prefix. */
		for (int64_t c = 128; c <= 32768 * 8; c *= 2) {
			bool chunk = c > 32768;
			int64_t ctx = c / 8;
			if (chunk && ctx < 4096)
				continue;
			struct probe_row r = { .kind = PROBE_ATTN_PREFILL, .dtype = PROBE_DT_BF16,
					       .tokens = chunk ? 2048 : c, .context = chunk ? ctx - 2048 : 0 };
			snprintf(r.shape, sizeof r.shape, chunk ? "chunk" : "prompt");
			r.flops = 4 * hd * 32 * causal_pairs((double)r.tokens, (double)r.context);
			r.bytes = 2.0 * r.tokens * hq * 2 + 2.0 * (r.context + r.tokens) * hk * 2;
			put_row(g, &r, "probe_fa2_prefill_v1");
		}
	} else if (!strcmp(family, "attn_prefill_swa")) {
		/* A 4096-token window: prompts it cuts, and chunks after it. */
		static const int64_t tok[] = { 8192, 16384, 32768, 2048, 2048 }, ctx[] = { 0, 0, 0, 8192, 16384 };
		for (int i = 0; i < 5; i++) {
			struct probe_row r = { .kind = PROBE_ATTN_PREFILL, .dtype = PROBE_DT_BF16, .window = 4096,
					       .tokens = tok[i], .context = ctx[i] };
			snprintf(r.shape, sizeof r.shape, ctx[i] ? "chunk_w4096" : "prompt_w4096");
			r.flops = 4 * hd * 32 * perf_causal_pairs((double)r.tokens, (double)r.context, 4096);
			r.bytes = 2.0 * r.tokens * hq * 2 + 2.0 * 4096 * hk * 2;
			put_row(g, &r, "probe_fa2_prefill_v1");
		}
	} else if (!strcmp(family, "attn_decode")) {
		static const int64_t batches[] = { 1, 4, 8, 16, 32, 64, 128 };
		for (int b = 0; b < 7; b++)
			for (int64_t c = 128; c <= 32768; c *= 2) {
				struct probe_row r = { .kind = PROBE_ATTN_DECODE, .dtype = PROBE_DT_BF16,
						       .tokens = batches[b], .context = c };
				snprintf(r.shape, sizeof r.shape, "paged_b%lld", (long long)batches[b]);
				r.bytes = 2.0 * batches[b] * c * hk * 2 + 2.0 * batches[b] * hq * 2;
				r.flops = 4 * hd * 32 * (double)batches[b] * c;
				put_row(g, &r, "probe_flashdec_v2");
			}
	} else if (!strcmp(family, "layer")) {
		static const int64_t dec[] = { 1, 16, 64, 256 }, pre[] = { 512, 2048, 8192 };
		for (int i = 0; i < 7; i++) {
			struct probe_row r = { .kind = PROBE_LAYER, .dtype = PROBE_DT_BF16,
					       .tokens = i < 4 ? dec[i] : pre[i - 4], .context = i < 4 ? 1024 : 0,
					       .decode = i < 4 };
			snprintf(r.shape, sizeof r.shape, i < 4 ? "decode" : "prefill");
			put_row(g, &r, "cublas+probe_kernels");
		}
	} else if (!strcmp(family, "moe_gemm")) {
		/* Mixtral-8x7B's experts: 8, two a token, 4096 x 14336. */
		for (int64_t m = 1; m <= 8192; m *= 2) {
			struct probe_row r = { .kind = PROBE_MOE_GEMM, .dtype = PROBE_DT_BF16, .tokens = m,
					       .moe_experts = 8, .moe_top_k = 2, .gemm_n = 4096, .gemm_k = 14336 };
			snprintf(r.shape, sizeof r.shape, "moe_e8_k2_h4096_i14336");
			r.bytes = 2.0 * 8 * 3 * 4096.0 * 14336;
			r.flops = 2.0 * 8 * m * 3 * 4096.0 * 14336;
			put_row(g, &r, "cublasGemmStridedBatchedEx_bf16");
		}
	} else if (!strcmp(family, "h2d_copy")) {
		for (int i = 0; i < 3; i++) {
			struct probe_row r = { .kind = PROBE_H2D_COPY, .dtype = PROBE_DT_NONE,
					       .bytes = (16 << (2 * i)) * 1048576.0 };
			snprintf(r.shape, sizeof r.shape, "pinned_%dMiB", 16 << (2 * i));
			put_row(g, &r, "cudaMemcpyAsync");
		}
	} else if (!strcmp(family, "allreduce")) {
		for (int i = 0; i < 3; i++) {
			struct probe_row r = { .kind = PROBE_ALLREDUCE, .dtype = PROBE_DT_BF16, .tokens = 8,
					       .bytes = (1 << (4 * i)) * 1048576.0 };
			snprintf(r.shape, sizeof r.shape, "ring_g8_%dMiB", 1 << (4 * i));
			put_row(g, &r, "probe_ring_peer_v1");
		}
	} else if (!strcmp(family, "launch")) {
		struct probe_row r = { .kind = PROBE_LAUNCH, .dtype = PROBE_DT_NONE, .tokens = 1 };
		snprintf(r.shape, sizeof r.shape, "eager");
		put_row(g, &r, "k_empty");
	} else {
		fail_msg("no generator for family %s", family);
	}
}

static const char *const all_families[] = { "stream_read", "d2d_copy", "gemm_bf16", "gemm_fp8",
					    "moe_gemm", "attn_prefill", "attn_prefill_swa", "attn_decode", "layer",
					    "h2d_copy", "allreduce", "launch", NULL };

/* Writes a probe CSV of the given families (NULL-terminated), each under
 * eff, or under standin for the families named in standin_fams. */
static void write_probe(const char *path, const struct hw_profile *hw, const char *const *families,
			const struct hw_efficiency *eff, int version)
{
	struct gen g = { .eff = eff, .version = version };
	probepred_init(&g.pp, hw, &llama8b);
	g.rng = gsl_rng_alloc(gsl_rng_mt19937);
	gsl_rng_set(g.rng, 20261130);
	g.f = fopen(path, "w");
	assert_non_null(g.f);
	fprintf(g.f, "# servesim-probe: %d\n# device: NVIDIA H100 80GB HBM3\n# sm: 90\n", version);
	fprintf(g.f, "# dims: hidden=4096 intermediate=14336 heads=32 kv_heads=8 head_dim=128 vocab=128256 tp=1\n");
	fprintf(g.f, "kind,shape,tokens,context,dtype,time_us,bytes,flops%s\n",
		version == 2 ? ",kernel,graph,reps,p10_us,p90_us,frac_bw,frac_peak" : "");
	for (size_t i = 0; families[i]; i++) {
		put_family(&g, families[i]);
		bool hot = !strcmp(families[i], "attn_decode");   /* one family ran power-capped */
		fprintf(g.f, "# clocks: family=%s sm_mhz=%d mem_mhz=2619 power_w=600 temp_c=60 throttle=%s\n",
			families[i], hot ? 1500 : 1980, hot ? "sw_power_cap" : "none");
	}
	assert_int_equal(fclose(g.f), 0);
	gsl_rng_free(g.rng);
}

static void load(struct probe_data *d, const char *path)
{
	struct err e;
	if (probecsv_load(d, path, &e))
		fail_msg("%s", e.msg);
}

static void fit(struct fit_result *r, const struct probe_data *d, const struct hw_profile *hw)
{
	struct err e;
	if (fit_probe(r, d, hw, NULL, &e))
		fail_msg("%s", e.msg);
	assert_true(r->converged);
}

static const struct fit_family_result *family(const struct fit_result *r, const char *name)
{
	size_t n;
	const struct fitfam *tab = fitfamily_table(&n);
	for (size_t k = 0; k < r->n_fams; k++)
		if (!strcmp(tab[r->fams[k].family].name, name))
			return &r->fams[k];
	fail_msg("no family %s in the fit", name);
	return NULL;
}

/* ---- probe CSV ----------------------------------------------------------- */

static void probecsv_reads_both_versions(void **state)
{
	(void)state;
	char dir[64], path[128];
	tmp_dir(dir, sizeof dir);
	snprintf(path, sizeof path, "%s/probe.csv", dir);
	struct hw_profile hw;
	h100(&hw);
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
		 * windowed prefill + 63 decode + 7 layer + 3 h2d + 3 allreduce + 1 launch */
		assert_int_equal(d.len, 264);
		assert_int_equal(d.rows[6].kind, PROBE_GEMM);
		assert_int_equal(d.rows[6].gemm_n, 6144);
		assert_int_equal(d.rows[6].gemm_k, 4096);
		assert_false(d.truncated);
		assert_int_equal(d.n_clocks, 12);
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
	rm_dir(dir);
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
}

/* A run killed mid-row: the cut-short last line is dropped, the rows
 * before it are read and fitted, and `# failed:` lines are collected. */
static void truncated_csv_fits_what_it_holds(void **state)
{
	(void)state;
	char dir[64], path[128];
	tmp_dir(dir, sizeof dir);
	snprintf(path, sizeof path, "%s/probe.csv", dir);
	struct hw_profile hw;
	h100(&hw);
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

	/* A bad row that is not the last is still an error. */
	f = fopen(path, "a");
	assert_non_null(f);
	fprintf(f, "\nstream_read,buf,0,0,none,fast,1,0,k,0,1,1,1,0,0\n");
	assert_int_equal(fclose(f), 0);
	struct err e;
	assert_int_equal(probecsv_load(&d, path, &e), -1);
	assert_contains(e.msg, "expected 15 comma-separated fields");
	probecsv_free(&d);

	/* Failed families are named. */
	assert_int_equal(probecsv_load(&d, CAL "probe_v2_failed.csv", &e), 0);
	assert_int_equal(d.n_failed, 1);
	assert_string_equal(d.failed[0], "gemm_fp8");
	probecsv_free(&d);
	rm_dir(dir);
}

/* ---- the probe fit ------------------------------------------------------- */

static void fit_recovers_known_parameters(void **state)
{
	(void)state;
	char dir[64], path[128];
	tmp_dir(dir, sizeof dir);
	snprintf(path, sizeof path, "%s/probe.csv", dir);
	struct hw_profile hw;
	h100(&hw);
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
	fit_result_free(&r);
	probecsv_free(&d);
	rm_dir(dir);
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
	tmp_dir(dir, sizeof dir);
	snprintf(path, sizeof path, "%s/probe.csv", dir);
	struct hw_profile hw;
	h100(&hw);
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
	rm_dir(dir);
}

/* The probe's attention kernels run at a stand-in's 0.20 / 0.10 of peak
 * (a quarter of the stream bandwidth, a sixth of the GEMM rate): the fit
 * must not lower the base's 0.92 / 0.49 from them, and must raise a base
 * that is below what even the stand-in reached. */
static void standin_kernels_only_bound_from_below(void **state)
{
	(void)state;
	char dir[64], path[128];
	tmp_dir(dir, sizeof dir);
	snprintf(path, sizeof path, "%s/probe.csv", dir);
	struct hw_profile hw;
	h100(&hw);
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
	rm_dir(dir);
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

static void fit_cli_writes_a_profile_run_can_use(void **state)
{
	(void)state;
	char dir[64], csv[128], out[128];
	tmp_dir(dir, sizeof dir);
	snprintf(csv, sizeof csv, "%s/probe.csv", dir);
	snprintf(out, sizeof out, "%s/h100-mine.ini", dir);
	struct hw_profile hw;
	h100(&hw);
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
	assert_contains(c.out, "none: reached 0.8");
	assert_contains(c.out, "family attn_decode ran throttled (sw_power_cap, SM 1500 MHz)");
	assert_contains(c.out, "SM clock 1500-1980 MHz over 12 families");   /* of the host link: 0.8, 2% noise */
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
	char *ini = NULL;
	FILE *f = fopen(out, "r");
	assert_non_null(f);
	ini = test_slurp(f);
	fclose(f);
	assert_contains(ini, "lower bounds from stand-in kernels: attention_bandwidth >= 0.");
	free(ini);
	rm_dir(dir);
}

static void fit_cli_writes_nothing_when_it_cannot_fit(void **state)
{
	(void)state;
	char dir[64], csv[128], out[128];
	tmp_dir(dir, sizeof dir);
	snprintf(csv, sizeof csv, "%s/probe.csv", dir);
	snprintf(out, sizeof out, "%s/out.ini", dir);
	struct hw_profile hw;
	h100(&hw);
	write_probe(csv, &hw, all_families, &truth, 2);
	struct cmd_result c;
	/* One iteration cannot converge. */
	run_cmd(&c, "'%s' calibrate fit '%s' --max-iter 1 --out '%s'", SERVESIM_BIN, csv, out);
	assert_int_equal(c.status, 2);
	assert_contains(c.err, "did not converge");
	assert_contains(c.err, "nothing written");
	assert_false(exists(out));
	cmd_result_free(&c);
	run_cmd(&c, "'%s' calibrate fit '%s' --out '%s'", SERVESIM_BIN, CAL "probe_too_few.csv", out);
	assert_int_equal(c.status, 2);
	assert_contains(c.err, "too few measurements");
	assert_false(exists(out));
	cmd_result_free(&c);
	/* Dims that are not the model's. */
	run_cmd(&c, "'%s' calibrate fit '%s' --model llama-3.1-70b --out '%s'", SERVESIM_BIN, csv, out);
	assert_int_equal(c.status, 2);
	assert_contains(c.err, "the probe measured hidden=4096");
	assert_false(exists(out));
	cmd_result_free(&c);
	rm_dir(dir);
}

/* ---- the families the probe runs and the fit reads ----------------------- */

static void fit_families_are_probe_families(void **state)
{
	(void)state;
	struct cmd_result c;
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
	tmp_dir(dir, sizeof dir);
	snprintf(out, sizeof out, "%s/gpu.ini", dir);
	struct cmd_result c;
	if (!proberun_available()) {
		run_cmd(&c, "'%s' calibrate gpu --model llama-3.1-8b --out '%s'", SERVESIM_BIN, out);
		assert_int_equal(c.status, 1);
		assert_contains(c.err, "built without CUDA support");
		assert_false(exists(out));
		cmd_result_free(&c);
		rm_dir(dir);
		return;
	}
	/* A CUDA build: the probe's self-check needs a GPU. */
	char probe[4096];
	snprintf(probe, sizeof probe, "%s", SERVESIM_BIN);
	*strrchr(probe, '/') = '\0';
	strcat(probe, "/servesim-probe");
	if (!exists(probe)) {
		rm_dir(dir);
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
		assert_false(exists(out));
		cmd_result_free(&c);
		rm_dir(dir);
		skip();
	}
	if (c.status != 0)
		fail_msg("servesim-probe --check: exit %d\n%s%s", c.status, c.out, c.err);
	assert_contains(c.out, "check: all ok");
	cmd_result_free(&c);
	rm_dir(dir);
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
	tmp_dir(dir, sizeof dir);
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
	assert_true(exists(out));
	assert_true(exists(kept));
	assert_contains(c.err, "measurements kept in");
	cmd_result_free(&c);
	remove(out);
	remove(kept);

	fake_probe(probe, src, 3);
	run_cmd(&c, "'%s' calibrate gpu --model llama-3.1-8b --probe '%s' --out '%s'", SERVESIM_BIN, probe, out);
	assert_int_equal(c.status, 0);
	assert_contains(c.err, "some families failed on the GPU");
	assert_contains(c.err, "fitting what was measured");
	assert_true(exists(out));
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
	assert_false(exists(out));
	assert_true(exists(kept));
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
	assert_false(exists(out));
	assert_true(exists(kept));
	cmd_result_free(&c);
	rm_dir(dir);
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
	run_cmd(&c, "'%s' --dry-run --model nosuch", script);
	assert_int_equal(c.status, 2);
	assert_contains(c.err, "--model nosuch: no models/nosuch.json");
	cmd_result_free(&c);
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
		cmocka_unit_test(fit_cli_writes_a_profile_run_can_use),
		cmocka_unit_test(fit_cli_writes_nothing_when_it_cannot_fit),
		cmocka_unit_test(fit_families_are_probe_families),
		cmocka_unit_test(gpu_without_cuda_or_without_a_device),
		cmocka_unit_test(gpu_keeps_the_measurements),
		cmocka_unit_test(probe_on_gpu_plans_the_round_trip),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
