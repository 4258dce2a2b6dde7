/*
 * test_moe: the vLLM CUDA MoE rows for low-precision experts against the
 * component tables they were set from: per-channel / per-tensor FP8 (the
 * CUTLASS grouped GEMM vLLM runs them through on Hopper; which checkpoints
 * take it) and the Triton w8a8 row's call cost (sim/perf/backend.c,
 * docs/step-model.md "MoE routing"), and the routers' family skews
 * against the expert-load counts they were set from (sim/model/routerskew.c).
 */
#include "perfutil.h"

#include <math.h>
#include <stdint.h>

#include "routerskew.h"

/* Mixtral's router (E = 8, top-2, hidden 4096) with experts of width
 * 28672, the shape vLLM's benchmark_grouped_gemm_cutlass.py and sglang's
 * copy of it time ("MKN = (M, 4096, 28672 / tp)": w1 is 2 × that wide),
 * its FP8 weights scaled per tensor (a CUTLASS-path checkpoint). */
static void bench_shape(struct model *m)
{
	*m = mixtral;
	m->expert_ffn_width = 28672;
	m->quant_fp8_scaled = true;
}

static void load(struct hw_profile *hw, const char *id)
{
	struct err e = { { 0 } };
	if (hw_load_named(hw, id, &e))
		fail_msg("%s", e.msg);
}

static void load_model(struct model *m, const char *id)
{
	struct err e = { { 0 } };
	if (model_load_named(m, id, &e))
		fail_msg("%s", e.msg);
}

/* One MoE layer's experts at T tokens, microseconds. */
static double layer_us(const struct perf *p, int64_t T)
{
	struct perf_breakdown b;
	step(p, 1, T, 0, &b);
	return b.experts / p->n_moe_layers * 1e6;
}

/* The row against the table it was set from: sglang PR #5680, H200,
 * cutlass_moe_cuda_graphs (25 calls a figure), "MKN = (M, 4096, 7168)"
 * (the shape above at TP4): 2.8 / 5.0 / 6.0 / 5.8 ms at M = 1 / 4 / 8 /
 * 16, i.e. 112 / 200 / 240 / 232 us a call. The row's line (71 us + bytes
 * at 1.0 of the 4.32 TB/s stream) goes through M = 1 and 16; M = 4 and 8
 * sit 9% above it (random top-k in the benchmark, expected touched
 * experts here): 10%. */
static void cutlass_fp8_moe_meets_the_h200_table(void **state)
{
	(void)state;
	struct model m;
	bench_shape(&m);
	struct hw_profile h200;
	load(&h200, "h200-sxm");
	struct perf p;
	perf_init(&p, &m, &h200, precision_find("fp8"), 4, 2);
	assert_true(p.moe_fp8_scaled);
	assert_non_null(strstr(p.k_moe->kernel, "CUTLASS grouped GEMM FP8"));
	static const int64_t M[] = { 1, 4, 8, 16 };
	static const double us[] = { 112, 200, 240, 232 };
	for (int i = 0; i < 4; i++) {
		double t = layer_us(&p, M[i]);
		print_message("cutlass_moe_fp8 H200 TP4 M=%-3lld %.1f us (sglang #5680: %.0f)\n",
			      (long long)M[i], t, us[i]);
		assert_double_rel(t, us[i], 0.10);
	}
}

/* Check, not fitted: vLLM PR #20762's cutlass_moe_fp8 timings ("new
 * grouped_gemm_moe", eager, 25 calls a figure, MKN = (M, 4096, 28672)):
 * 8143.1 / 25849 / 26027 us at M = 1 / 16 / 32. Its slope, 2.98 TB/s, is an
 * H100 SXM's stream to within 4% (3.1 TB/s measured by copy and triad,
 * h100-sxm.ini); eager launches add to its batch-1 point. The row on the
 * H100 profile comes out 6-8% under each (3-6% while that stream was taken
 * as 3.0, until 2026-12-03): 10%. */
static void cutlass_fp8_moe_checks_the_vllm_table(void **state)
{
	(void)state;
	struct model m;
	bench_shape(&m);
	struct perf p;
	init(&p, &m, "fp8", 1, false);
	static const int64_t M[] = { 1, 16, 32 };
	static const double us[] = { 8143.1 / 25, 25848.8 / 25, 26026.9 / 25 };
	for (int i = 0; i < 3; i++) {
		double t = layer_us(&p, M[i]);
		print_message("cutlass_moe_fp8 H100 TP1 M=%-3lld %.1f us (vLLM #20762: %.1f)\n",
			      (long long)M[i], t, us[i]);
		assert_double_rel(t, us[i], 0.10);
		assert_true(t < us[i]);
	}
}

/* The compute side: at prefill sizes the row is compute-bound at
 * DeepGEMM's FP8 grouped-GEMM rates (H100 / H800, N 4096, K 7168): 645
 * TFLOP/s at 160 tokens an expert, 1233 at 1024, 1288 at 4096 (the
 * curve's points; 2%: the padding to 64 rows is undone at 160 tokens, and
 * a multiple of 64 at the others). Tokens an expert = 2T / 8 at uniform
 * routing once all 8 experts are touched. */
static void cutlass_fp8_moe_compute_meets_deepgemm(void **state)
{
	(void)state;
	struct model m;
	bench_shape(&m);
	struct perf p;
	init(&p, &m, "fp8", 1, false);
	static const int64_t T[] = { 640, 4096, 16384 };
	static const double tflops[] = { 645, 1233, 1288 };
	for (int i = 0; i < 3; i++) {
		struct perf_step s;
		perf_step_clear(&s);
		perf_step_add(&s, &p, T[i], 0, true);
		struct perf_op ops[PERF_N_OPS];
		perf_step_ops(&p, &s, ops);
		const struct perf_op *x = &ops[PERF_EXPERTS];
		assert_true(x->compute_bound);
		double rate = x->flops / (x->time_s - p.n_moe_layers * p.moe_fixed_s) / 1e12;
		print_message("FP8 grouped GEMM H100 %lld tokens an expert: %.0f TFLOP/s "
			      "(DeepGEMM: %.0f)\n",
			      (long long)(T[i] / 4), rate, tflops[i]);
		assert_double_rel(rate, tflops[i], 0.02);
	}
}

/* Which checkpoints take the CUTLASS row: Scout's compressed-tensors
 * config (float 8-bit, strategy "channel") on Hopper does; the same model
 * quantized by `--weights fp8` alone (no checkpoint scheme: the w8a8 row),
 * BF16 experts and a non-Hopper device do not. */
static void cutlass_row_only_for_scaled_fp8_on_hopper(void **state)
{
	(void)state;
	struct model scout;
	struct err e = { { 0 } };
	if (model_load_named(&scout, "llama-4-scout-17b-16e", &e))
		fail_msg("%s", e.msg);
	assert_true(scout.quant_fp8_scaled);
	assert_false(mixtral.quant_fp8_scaled);
	struct perf p;
	perf_init(&p, &scout, &h100, precision_find("fp8"), 2, 2);
	assert_non_null(strstr(p.k_moe->kernel, "cutlass_moe_fp8"));
	struct perf q;
	perf_init(&q, &mixtral, &h100, precision_find("fp8"), 2, 2);
	assert_null(strstr(q.k_moe->kernel, "cutlass_moe_fp8"));
	perf_init(&q, &scout, &h100, precision_find("bf16"), 2, 2);
	assert_null(strstr(q.k_moe->kernel, "cutlass_moe_fp8"));
	struct hw_profile l40s;
	load(&l40s, "l40s");
	perf_init(&q, &scout, &l40s, precision_find("fp8"), 2, 2);
	assert_null(strstr(q.k_moe->kernel, "cutlass_moe_fp8"));
}

/* A MoE layer's time per routed token never rises with the batch on the
 * CUTLASS row either (Scout at TP2, 1 to 16384 tokens), and its grouped
 * GEMM's rate never falls with tokens an expert. */
static void cutlass_fp8_moe_per_token_falls(void **state)
{
	(void)state;
	struct model scout;
	struct err e = { { 0 } };
	if (model_load_named(&scout, "llama-4-scout-17b-16e", &e))
		fail_msg("%s", e.msg);
	struct perf p;
	perf_init(&p, &scout, &h100, precision_find("fp8"), 2, 2);
	double prev = 0;
	for (double tpe = 8; tpe <= 8192; tpe *= 1.5) {
		assert_true(perf_curve_at(p.moe_curve, tpe) >= prev);
		prev = perf_curve_at(p.moe_curve, tpe);
	}
	double prev_per = INFINITY;
	for (int64_t T = 1; T <= 16384; T *= 2) {
		double per = layer_us(&p, T) / (double)T;
		assert_true(per <= prev_per * (1 + 1e-9));
		prev_per = per;
	}
}

/* The w8a8 row (Triton fused_moe: block FP8, INT8, FP4, FP8 by --weights
 * alone) against the whole-call times of the H100 fp8_w8a8 table it takes
 * its call cost, its 768-wide streaming point and its compute curve from:
 * vLLM PR #24700, benchmark_moe.py, Qwen3-30B-A3B TP1 (E = 128, top-8),
 * "Main". Batch 1-128 (streaming: 32.3 us a call + bytes at 0.821 of
 * stream, the table's least squares): 6%. Batch 256-4096 (16-256 tokens
 * an expert, the compute curve's points, set through them): 3%, the
 * tokens an expert here being expected counts (T·k / touched), the
 * table's random. Batch 1536 and 3072 lie between the curve's points
 * (log-linear steps), not fitted: 2%. */
static void w8a8_moe_meets_the_h100_fp8_table(void **state)
{
	(void)state;
	struct model q3;
	load_model(&q3, "qwen3-30b-a3b");
	struct perf p;
	init(&p, &q3, "fp8", 1, false);
	assert_false(p.moe_fp8_scaled);
	assert_non_null(strstr(p.k_moe->kernel, "Triton fused_moe (w8a8)"));
	static const int64_t T[] = { 1, 8, 32, 128, 256, 512, 1024, 1536, 2048, 3072, 4096 };
	static const double us[] = { 44.54,  129.77, 238.37, 273.72,  355.49, 391.86,
				     536.33, 727.31, 911.64, 1279.17, 1647.57 };
	for (int i = 0; i < 11; i++) {
		double t = layer_us(&p, T[i]);
		print_message("fused_moe w8a8 Qwen3-30B H100 T=%-4lld %.1f us (PR #24700: %.1f)\n",
			      (long long)T[i], t, us[i]);
		assert_double_rel(t, us[i],
				  T[i] <= 128			 ? 0.06
				  : T[i] == 1536 || T[i] == 3072 ? 0.02
								 : 0.03);
	}
}

/* Out of sample for that rate: sglang's benchmark of vLLM's fused_moe at
 * DeepSeek-V3's TP8 shape (block FP8 128x128, E = 256, top-8, K 7168,
 * N 256) on H200, 1.01 ms a call at batch 506-512 (sglang
 * benchmark_vllm_vs_sglang_fused_moe_triton.py, its README's DeepSeek-V3
 * table; 16 tokens an expert, compute-bound). The row gives 0.79 ms (-22%):
 * Qwen3's narrower K (2048) sets the curve, so 25%; and it must be the
 * compute side that binds, not the 1.41 GB of experts. */
static void w8a8_moe_checks_deepseek_on_h200(void **state)
{
	(void)state;
	struct model ds;
	load_model(&ds, "deepseek-v3");
	struct hw_profile h200;
	load(&h200, "h200-sxm");
	struct perf p;
	perf_init(&p, &ds, &h200, precision_find("fp8"), 8, 2);
	assert_false(p.moe_fp8_scaled);
	assert_non_null(strstr(p.k_moe->kernel, "Triton fused_moe (w8a8)"));
	double t = layer_us(&p, 512);
	print_message("fused_moe w8a8 DeepSeek-V3 TP8 H200 T=512 %.1f us (sglang README: 1010)\n",
		      t);
	assert_double_rel(t, 1010, 0.25);
	double bytes_us = p.n_moe_layers > 0 ? 256 * p.expert_bytes / p.moe_bw * 1e6 : 0;
	assert_true(t > 1.5 * bytes_us);
}

/* One table of whole calls at TP2 on H200: the row's fraction of stream
 * at the model's slice width, each call within 9 us (the call costs'
 * difference) plus 5%, and the bytes' part (the last batch less batch 1)
 * within 8%. */
static void meets_h200_table(const struct model *m, const struct hw_profile *h200, const char *what,
			     double frac, const int64_t *T, const double *us, int n)
{
	struct perf p;
	perf_init(&p, m, h200, precision_find("fp8"), 2, 2);
	assert_non_null(strstr(p.k_moe->kernel, "Triton fused_moe (w8a8)"));
	assert_double_rel(p.moe_bw / hw_stream_bandwidth(h200), frac, 1e-9);
	for (int i = 0; i < n; i++) {
		double t = layer_us(&p, T[i]);
		print_message("fused_moe w8a8 %s TP2 H200 T=%-3lld %.1f us (table: %.1f)\n", what,
			      (long long)T[i], t, us[i]);
		assert_true(fabs(t - us[i]) <= 9 + 0.05 * us[i]);
	}
	assert_double_rel(layer_us(&p, T[n - 1]) - layer_us(&p, T[0]), us[n - 1] - us[0], 0.08);
}

/* The row's streaming rate by expert slice width (fused_moe_w8a8_bw)
 * against the two H200 block-FP8 tables it was set from, whole calls at
 * batch 1-16 (benchmark_moe.py's default TP2 shapes): vLLM PR #36559
 * "Main", Qwen3-Next-80B-A3B-FP8 (E 512, top-10, hidden 2048, experts 512
 * wide: 256 a GPU), and PR #36554 "Main", DeepSeek-R1-0528 (DeepSeek-V3's
 * shapes: 1024 a GPU). The row's call cost is PR #24700's 32.3 us, not
 * these tables' own (23.6 / 27.1 us): meets_h200_table's tolerances. */
static void w8a8_moe_streams_by_slice_width_on_h200(void **state)
{
	(void)state;
	struct hw_profile h200;
	load(&h200, "h200-sxm");
	struct model next, ds;
	load_model(&next, "qwen3-30b-a3b");
	load_model(&ds, "deepseek-v3");
	next.n_experts = 512;
	next.experts_per_token = 10;
	next.expert_ffn_width = 512;
	static const int64_t T[] = { 1, 2, 4, 8, 16 };
	static const double next_us[] = { 29.97, 33.00, 46.43, 62.29, 99.91 };
	static const double ds_us[] = { 77.42, 112.23, 190.77, 350.54 };
	meets_h200_table(&next, &h200, "Qwen3-Next (PR #36559)", 0.667, T, next_us, 5);
	meets_h200_table(&ds, &h200, "DeepSeek-R1 (PR #36554)", 0.914, T, ds_us, 4);
}

/* Properties of the slice-width rate: it never falls as the slices widen
 * (TP8 -> TP1 of DeepSeek-V3), and expert parallelism, which keeps experts
 * whole, reads it at the whole width (the same rate as TP1). */
static void w8a8_moe_rate_rises_with_slice_width(void **state)
{
	(void)state;
	struct hw_profile h200;
	load(&h200, "h200-sxm");
	struct err e = { { 0 } };
	struct model ds;
	if (model_load_named(&ds, "deepseek-v3", &e))
		fail_msg("%s", e.msg);
	double prev = 0, tp1 = 0;
	for (int tp = 8; tp >= 1; tp /= 2) {
		struct perf p;
		perf_init(&p, &ds, &h200, precision_find("fp8"), tp, 2);
		assert_true(p.moe_bw >= prev);
		prev = tp1 = p.moe_bw;
	}
	struct perf q;
	perf_init(&q, &ds, &h200, precision_find("fp8"), 8, 2);
	perf_expert_parallel(&q, 8);
	assert_double_rel(q.moe_bw, tp1, 1e-12);
	assert_double_rel(q.expert_n, (double)ds.expert_ffn_width, 1e-12);
}

/* Wide FP8 experts through the w8a8 row (Mixtral-8x7B by --weights fp8,
 * TP1: 14336-wide slices) take the width estimate (fused_moe_w8a8_width,
 * x 2.3 past 7168): bandwidth-bound at a 64-sequence decode (16 tokens an
 * expert), as Mixtral's BF16 table is there, so faster than the BF16 row
 * by their halved bytes; at a 4096-token prefill within 15% of the BF16
 * row (about its FLOP/s, the estimate's premise). Without the estimate
 * the narrow-expert curve made them compute-bound at that decode. */
static void w8a8_moe_wide_experts_keep_bf16_rates(void **state)
{
	(void)state;
	struct perf f8, b16;
	init(&f8, &mixtral, "fp8", 1, false);
	init(&b16, &mixtral, "bf16", 1, false);
	assert_non_null(strstr(f8.k_moe->kernel, "Triton fused_moe (w8a8)"));
	struct perf_step s;
	perf_step_clear(&s);
	perf_step_add(&s, &f8, 64, 0, false);
	struct perf_op ops[PERF_N_OPS];
	perf_step_ops(&f8, &s, ops);
	assert_false(ops[PERF_EXPERTS].compute_bound);
	assert_true(layer_us(&f8, 64) < layer_us(&b16, 64));
	double r = layer_us(&f8, 4096) / layer_us(&b16, 4096);
	print_message("Mixtral TP1 H100 4096-token prefill: w8a8 / BF16 experts %.2f\n", r);
	assert_true(r < 1.15);
}

/* A deterministic uniform draw in [0, 1) (64-bit LCG, Knuth's MMIX). */
static double draw(uint64_t *x)
{
	*x = *x * 6364136223846793005ULL + 1442695040888963407ULL;
	return (double)(*x >> 11) / 9007199254740992.0;
}

/* DeepSeek-R1's router against the rank loads TensorRT-LLM published
 * (examples/ep_load_balancer/README.md): EP32, 8 experts a rank in id
 * order, 1024 routed tokens a rank an iteration, per-layer std 491.65
 * and (max - mean) / mean 1.564, averaged over layers and iterations.
 * Expert ids carry no popularity, so a rank's 8 experts are 8 drawn at
 * random from the family's Zipf shares; each expert's count also varies
 * by the draw of 4096 tokens (binomial). The CV follows in closed form
 * (sampling 8 of 256 without replacement), the imbalance by 400 seeded
 * placements. Tolerance 8% on both: the exponent (0.65) sits between
 * the two figures' own best fits (0.66 and 0.635), which a single Zipf
 * law meets within 3%; 8% also covers the Monte Carlo's spread (~1%). */
static void deepseek_router_meets_trtllm_rank_loads(void **state)
{
	(void)state;
	struct model ds;
	load_model(&ds, "deepseek-v3");
	const char *src = NULL;
	double skew = model_router_skew(&ds, ROUTER_SKEW_FAMILY, &src);
	assert_double_rel(skew, 0.65, 1e-12);
	assert_non_null(strstr(src, "TensorRT-LLM"));
	struct perf p;
	perf_init(&p, &ds, &h100, precision_find("fp8"), 8, 1);
	perf_set_router_skew(&p, skew);
	enum { E = 256, RANKS = 32, PER = E / RANKS, TRIALS = 400 };
	const double tokens = 4096, k = 8;
	double q[E], sum = 0, sq = 0;
	for (int i = 0; i < E; i++) {
		q[i] = perf_moe_pick(&p, i + 1);
		sum += q[i];
	}
	assert_double_rel(sum, k, 1e-9);   /* k distinct picks a token */
	double mean_rank = tokens * k / RANKS;   /* 1024, as the README's */
	for (int i = 0; i < E; i++)
		sq += (q[i] / sum * E - 1) * (q[i] / sum * E - 1);
	double cv_expert = sqrt(sq / E);
	double cv = sqrt(cv_expert * cv_expert * (E - PER) / (E - 1.0) / PER + 1 / mean_rank);
	assert_double_rel(cv, 491.65 / 1024, 0.08);

	uint64_t x = 42;
	double imb = 0;
	int order[E];
	for (int t = 0; t < TRIALS; t++) {
		for (int i = 0; i < E; i++)
			order[i] = i;
		for (int i = E - 1; i > 0; i--) {   /* Fisher-Yates */
			int j = (int)(draw(&x) * (i + 1));
			int o = order[i];
			order[i] = order[j];
			order[j] = o;
		}
		double most = 0, all = 0;
		for (int r = 0; r < RANKS; r++) {
			double load = 0;
			for (int j = 0; j < PER; j++) {
				double qi = q[order[r * PER + j]];
				/* binomial(4096, q) by its normal approximation */
				double u1 = draw(&x), u2 = draw(&x);
				double z = sqrt(-2 * log(1 - u1)) * cos(2 * M_PI * u2);
				load += fmax(0, tokens * qi + z * sqrt(tokens * qi * (1 - qi)));
			}
			most = fmax(most, load);
			all += load;
		}
		imb += most / (all / RANKS) - 1;
	}
	assert_double_rel(imb / TRIALS, 1.564, 0.08);

	/* The step model's own busiest GPU under expert parallelism at that
	 * shape (EP32, whole experts in id order): its routed tokens over
	 * the mean GPU's, at 4096 tokens. It averages 64 seeded placements
	 * and has no per-step binomial spread (that adds ~0.05 here), so 10%.
	 * Experts in popularity order on the first GPU would give 5.8. */
	struct perf ep;
	perf_init(&ep, &ds, &h100, precision_find("fp8"), RANKS, 1);
	perf_set_router_skew(&ep, skew);
	perf_expert_parallel(&ep, RANKS);
	double routed;
	perf_moe_first_gpu(&ep, tokens, &routed);
	assert_double_rel(routed / (tokens * k / RANKS) - 1, 1.564, 0.10);
}

/* The family table: a row only where a measurement stands behind it;
 * the scenario's own value (0 included) always wins; a dense model and a
 * family without a row route uniformly. */
static void router_skew_by_family(void **state)
{
	(void)state;
	struct model ds, q3, scout;
	load_model(&ds, "deepseek-v3");
	load_model(&q3, "qwen3-30b-a3b");
	load_model(&scout, "llama-4-scout-17b-16e");
	const char *src = NULL;
	assert_double_rel(model_router_skew(&ds, 0, &src), 0, 0);
	assert_string_equal(src, "[engine] moe_router_skew");
	assert_double_rel(model_router_skew(&ds, 1.2, NULL), 1.2, 0);
	assert_double_rel(model_router_skew(&q3, ROUTER_SKEW_FAMILY, NULL), 0, 0);
	assert_double_rel(model_router_skew(&scout, ROUTER_SKEW_FAMILY, &src), 0, 0);
	assert_non_null(strstr(src, "uniform"));
	assert_double_rel(model_router_skew(&llama, ROUTER_SKEW_FAMILY, NULL), 0, 0);
	struct model v2lite = ds;   /* GGUF's deepseek2 names V2's shapes too: not the one measured */
	v2lite.n_experts = 64;
	assert_double_rel(model_router_skew(&v2lite, ROUTER_SKEW_FAMILY, NULL), 0, 0);
	/* The family's skew reaches the step: DeepSeek at 16 decodes reads
	 * fewer experts than a uniform router's 102.4 (256 (1 - (31/32)^16)). */
	struct perf u, z;
	perf_init(&u, &ds, &h100, precision_find("fp8"), 8, 1);
	z = u;
	perf_set_router_skew(&z, model_router_skew(&ds, ROUTER_SKEW_FAMILY, NULL));
	assert_double_rel(perf_moe_touched(&u, 16, NULL), 256 * (1 - pow(31.0 / 32, 16)), 1e-9);
	assert_true(perf_moe_touched(&z, 16, NULL) < 0.9 * perf_moe_touched(&u, 16, NULL));
}

/* gpt-oss's MXFP4 experts take vLLM's Hopper default, triton_kernels'
 * matmul_ogs, only on Hopper and only with --weights mxfp4; Ampere and
 * Blackwell (FlashInfer's native MXFP4 there) keep the BF16 row. */
static void mxfp4_row_only_on_hopper(void **state)
{
	(void)state;
	struct model oss;
	load_model(&oss, "gpt-oss-120b");
	struct hw_profile a100, b200;
	load(&a100, "a100-80gb-sxm");
	load(&b200, "b200");
	struct perf p;
	perf_init(&p, &oss, &h100, precision_find("mxfp4"), 1, 2);
	assert_non_null(strstr(p.k_moe->kernel, "matmul_ogs"));
	perf_init(&p, &oss, &h100, precision_find("bf16"), 1, 2);
	assert_string_equal(p.k_moe->kernel, "Triton fused_moe (grouped GEMM, BF16)");
	perf_init(&p, &oss, &a100, precision_find("mxfp4"), 1, 2);
	assert_string_equal(p.k_moe->kernel, "Triton fused_moe (grouped GEMM, BF16)");
	perf_init(&p, &oss, &b200, precision_find("mxfp4"), 1, 2);
	assert_null(strstr(p.k_moe->kernel, "matmul_ogs"));
}

/* The row against the figure it was set from: triton PR #9248, the
 * bf16 x mxfp4 MoE at 2290 GB/s on H200 (bench_mlp, E 128, top-4,
 * memory-bound batches). gpt-oss-120b on H200 at 1-32 decodes is
 * memory-bound in this row; its experts' bytes over their time less the
 * call cost (the BF16 row's, an estimate) must be that rate, within 1% (the 0.53 is
 * 2290 / 4320 rounded). */
static void mxfp4_moe_streams_at_triton_kernels_rate(void **state)
{
	(void)state;
	struct model oss;
	load_model(&oss, "gpt-oss-120b");
	struct hw_profile h200;
	load(&h200, "h200-sxm");
	struct perf p;
	perf_init(&p, &oss, &h200, precision_find("mxfp4"), 1, 2);
	for (int T = 1; T <= 32; T *= 2) {
		struct perf_op ops[PERF_N_OPS];
		struct perf_step s;
		perf_step_clear(&s);
		for (int j = 0; j < T; j++)
			perf_step_add(&s, &p, 1, 300, true);
		perf_step_ops(&p, &s, ops);
		const struct perf_op *x = &ops[PERF_EXPERTS];
		assert_false(x->compute_bound);
		double stream_s = x->time_s - p.n_moe_layers * p.moe_fixed_s;
		assert_double_rel(x->bytes / stream_s, 2290e9, 0.01);
	}
}

/* vLLM's SharedFusedMoE runs a layer's shared experts on a second stream
 * beside the routed ones for steps of at most 256 tokens (vllm-project/
 * vllm#26440, #28406; perf/moeshared.c): the routed calls' fixed part
 * (the CUTLASS row's 71 us a layer) hides the shared experts' reads.
 * Llama-4-Scout FP8 at TP2 on the H100 profile: 48 shared experts of
 * 3 x 5120 x 8192 / 2 bytes (62.9 MB) a GPU, two kernels each, on the
 * profile's mat-vec curve (3.25 us a kernel + bytes at 3136 GB/s):
 * 96 x 3.25 + 3.02e9 / 3136e3 = 1275.0 us a step, under the 48 x 71 us
 * the calls' fixed part allows; nothing at 257 tokens, nothing for a
 * model without shared experts (Qwen3-30B-A3B). */
static void shared_experts_hide_under_the_routed_calls(void **state)
{
	(void)state;
	struct model m;
	load_model(&m, "llama-4-scout-17b-16e");
	struct perf p;
	init(&p, &m, "fp8", 2, false);
	double shared = 48.0 * 3 * 5120 * 8192 / 2;
	assert_double_rel(p.shared_bytes, shared, 1e-9);
	double want = 96 * 3.25e-6 + shared / 3136e9;
	assert_true(want < 48 * p.moe_fixed_s);
	static const int64_t T[] = { 1, 32, 256, 257 };
	for (int i = 0; i < 4; i++) {
		struct perf_breakdown one, two;
		p.shared_stream = false;
		step(&p, 1, T[i], 0, &one);
		p.shared_stream = true;
		step(&p, 1, T[i], 0, &two);
		double hidden = one.experts - two.experts;
		print_message("Scout TP2 T=%-3lld shared experts hidden %.1f us (%.1f expected)\n",
			      (long long)T[i], hidden * 1e6, T[i] <= 256 ? want * 1e6 : 0.0);
		if (T[i] <= 256)
			assert_double_rel(hidden, want, 1e-6);
		else
			assert_double_near(hidden, 0, 1e-12);
		assert_double_near(one.dense, two.dense, 1e-12);   /* the shared experts' row keeps its time */
	}
	struct model q;
	load_model(&q, "qwen3-30b-a3b");
	init(&p, &q, "bf16", 1, false);
	assert_double_near(p.shared_bytes, 0, 0);
	struct perf_breakdown a, b;
	step(&p, 1, 32, 0, &a);
	p.shared_stream = true;
	step(&p, 1, 32, 0, &b);
	assert_double_near(a.experts, b.experts, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(cutlass_fp8_moe_meets_the_h200_table),
		cmocka_unit_test(cutlass_fp8_moe_checks_the_vllm_table),
		cmocka_unit_test(cutlass_fp8_moe_compute_meets_deepgemm),
		cmocka_unit_test(cutlass_row_only_for_scaled_fp8_on_hopper),
		cmocka_unit_test(cutlass_fp8_moe_per_token_falls),
		cmocka_unit_test(w8a8_moe_meets_the_h100_fp8_table),
		cmocka_unit_test(w8a8_moe_checks_deepseek_on_h200),
		cmocka_unit_test(w8a8_moe_streams_by_slice_width_on_h200),
		cmocka_unit_test(w8a8_moe_rate_rises_with_slice_width),
		cmocka_unit_test(w8a8_moe_wide_experts_keep_bf16_rates),
		cmocka_unit_test(deepseek_router_meets_trtllm_rank_loads),
		cmocka_unit_test(router_skew_by_family),
		cmocka_unit_test(mxfp4_row_only_on_hopper),
		cmocka_unit_test(mxfp4_moe_streams_at_triton_kernels_rate),
		cmocka_unit_test(shared_experts_hide_under_the_routed_calls),
	};
	return cmocka_run_group_tests(tests, setup, NULL);
}
