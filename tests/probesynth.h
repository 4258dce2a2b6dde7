/*
 * probesynth.h: synthetic servesim-probe files for the probe tests
 * (test_probefit.c, test_probecli.c): what the probe would write on an
 * H100 for Llama-3.1-8B if the step-time model were exactly right with
 * known efficiencies (`truth`), each time multiplied by exp(N(0, 0.02)):
 * 2% noise, seeded. The truth's attention kernels are production-grade:
 * decode reaches ~0.9 of the stream bandwidth, prefill ~0.8 of the GEMM
 * rate (fitfamily.c's lines are 0.80 and 0.70); links reach 80% of the
 * profile's.
 */
#ifndef SERVESIM_TEST_PROBESYNTH_H
#define SERVESIM_TEST_PROBESYNTH_H

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
/* The elementwise kernels' fixed cost a call (their rows: + half the roofline). */
#define ELEM_FIXED_US 2.0

struct gen {
	FILE *f;
	struct probepred pp;
	gsl_rng *rng;
	const struct hw_efficiency *eff;
	int version;
};

static inline void h100(struct hw_profile *hw);

/* A fresh directory (dir[64]), dir/probe.csv in path[128], and h100-sxm. */
static inline void scratch(char *dir, char *path, struct hw_profile *hw)
{
	test_tmpdir(dir, 64, "probefit");
	snprintf(path, 128, "%s/probe.csv", dir);
	h100(hw);
}

static inline void h100(struct hw_profile *hw)
{
	struct err e;
	if (hw_load_named(hw, "h100-sxm", &e))
		fail_msg("%s", e.msg);
}

/* One row: the prediction under g->eff with noise (links: their share of
 * the datasheet; launches: 5 us). */
static inline void put_row(struct gen *g, struct probe_row *r, const char *kernel)
{
	double t;
	if (r->kind == PROBE_LAUNCH)
		t = 5.0;
	else if (r->kind == PROBE_ELEMENTWISE)   /* 2 us of fixed cost, then half the roofline */
		t = ELEM_FIXED_US + probepred_time_us(&g->pp, g->eff, r) / 0.5;
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

static inline double causal_pairs(double n, double c)
{
	return n * c + n * (n + 1) / 2;
}

/* The probe's grid of shapes for one family (fitfamily names). */
static inline void put_family(struct gen *g, const char *family)
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
	} else if (!strcmp(family, "elementwise")) {
		for (int64_t t = 1; t <= 16384; t *= 2) {
			struct probe_row r = { .kind = PROBE_ELEMENTWISE, .dtype = PROBE_DT_BF16, .tokens = t,
					       .bytes = 2.0 * t * 4096 * 2 + 2.0 * 4096 };
			snprintf(r.shape, sizeof r.shape, "rmsnorm_h4096");
			put_row(g, &r, "probe_rmsnorm_v1");
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
					    "elementwise", "h2d_copy", "allreduce", "launch", NULL };

/* Writes a probe CSV of the given families (NULL-terminated), each under
 * eff, or under standin for the families named in standin_fams. */
static inline void write_probe(const char *path, const struct hw_profile *hw, const char *const *families,
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

static inline void load(struct probe_data *d, const char *path)
{
	struct err e;
	if (probecsv_load(d, path, &e))
		fail_msg("%s", e.msg);
}

static inline void fit(struct fit_result *r, const struct probe_data *d, const struct hw_profile *hw)
{
	struct err e;
	if (fit_probe(r, d, hw, NULL, &e))
		fail_msg("%s", e.msg);
	assert_true(r->converged);
}

static inline const struct fit_family_result *family(const struct fit_result *r, const char *name)
{
	size_t n;
	const struct fitfam *tab = fitfamily_table(&n);
	for (size_t k = 0; k < r->n_fams; k++)
		if (!strcmp(tab[r->fams[k].family].name, name))
			return &r->fams[k];
	fail_msg("no family %s in the fit", name);
	return NULL;
}


#endif
