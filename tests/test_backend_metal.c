/*
 * backend_metal: llama.cpp on Apple Silicon (sim/perf/backend_metal.c,
 * issue 11). Every M-series profile runs the Metal kernel rows (not the
 * class scalars) under llama.cpp and Ollama and names them in explain's
 * rows; the rows reproduce the component measurements they were set from
 * (test-backend-ops perf tables on Metal, a GPU copy; sources in each
 * test, tolerances with their reasons); more GPU cores or more bandwidth
 * never slow a step.
 */
#include "hwutil.h"

#include <math.h>
#include <string.h>

#include "backend.h"
#include "hwprofile.h"
#include "model.h"
#include "precision.h"
#include "steptime.h"

static const char *const apple[] = { "m1-max", "m1-ultra", "m2-max", "m2-ultra",
				     "m3-max", "m3-ultra", "m4-pro", "m4-max" };

static void metal_perf(struct perf *p, const struct model *m, const struct hw_profile *hw,
		       const char *w)
{
	perf_init(p, m, hw, precision_find(w), 1, 2);
	perf_use_engine(p, "llama.cpp");
}

/* One step: a prefill chunk of `pre` tokens (0: none) and `dec` decodes
 * each reading ctx tokens of KV. */
static double one_step(const struct perf *p, int64_t pre, int dec, int64_t ctx, struct perf_op *ops)
{
	struct perf_step s;
	perf_step_clear(&s);
	if (pre > 0)
		perf_step_add(&s, p, pre, 0, true);
	for (int i = 0; i < dec; i++)
		perf_step_add(&s, p, 1, ctx, true);
	struct perf_op local[PERF_N_OPS];
	return perf_step_ops(p, &s, ops ? ops : local);
}

/* Every Apple chip, under llama.cpp and Ollama, gets the Metal backend's
 * own rows; explain's operator rows name a Metal kernel and its source. */
static void apple_chips_run_the_metal_kernels(void **state)
{
	(void)state;
	struct model m;
	load_model(&m, "llama-2-7b");
	for (size_t i = 0; i < sizeof apple / sizeof *apple; i++)
		for (int eng = 0; eng < 2; eng++) {
			struct hw_profile hw;
			load_hw(&hw, apple[i]);
			const struct perf_backend *b =
				perf_backend_for(eng ? "ollama" : "llama.cpp", &hw);
			assert_string_equal(b->name, "llama.cpp-metal");
			for (int w = 0; w < 2; w++) {
				struct perf p;
				metal_perf(&p, &m, &hw, w ? "q4_0" : "f16");
				assert_false(p.k_gemm->fallback);
				assert_false(p.k_prefill->fallback);
				assert_false(p.k_decode->fallback);
				struct perf_op ops[PERF_N_OPS];
				one_step(&p, 512, 4, 1000, ops);
				const int named[] = { PERF_DENSE, PERF_LM_HEAD, PERF_ATTN_PREFILL,
						      PERF_ATTN_DECODE };
				for (size_t k = 0; k < sizeof named / sizeof *named; k++) {
					const struct perf_op *o = &ops[named[k]];
					if (!o->kernel || !strstr(o->kernel, "kernel_") ||
					    !o->source || strlen(o->source) < 20)
						fail_msg("%s %s: row %s names no Metal kernel and "
							 "source",
							 apple[i], w ? "q4_0" : "f16", o->name);
				}
			}
		}
}

/* An Apple GPU of 150 GB/s (an M3 Pro: no profile of its own, so the M4
 * Pro's facts at that bandwidth and LPDDR5) reading q4_K / q6_K weight
 * matrices one token at a time: test-backend-ops perf MUL_MAT, ub=1
 * (llama.cpp PR #27776): 17,324 KiB in 140.72 us, 49,048 KiB in 405.06
 * us, 71,488 KiB in 597.29 us. The row reads at the copy's 0.795 of the
 * datasheet where this table's own slope is 0.81, and adds its 5.0 us
 * floor: within 10% (the smallest of the three is 9% slow). */
static void mat_vec_meets_test_backend_ops_m3_pro(void **state)
{
	(void)state;
	struct hw_profile hw;
	load_hw(&hw, "m4-pro");
	hw.bandwidth_gb_s = 150;
	hw.arch.memory_type = HW_MEM_LPDDR5;
	const struct perf_backend *b = perf_backend_for("llama.cpp", &hw);
	const struct perf_kernel *k = perf_kernel_find(b, KOP_GEMM, KDT_LOW, HW_TC_APPLE, 0, 0);
	assert_false(k->fallback);
	static const double kib[] = { 17324, 49048, 71488 }, us[] = { 140.72, 405.06, 597.29 };
	for (int i = 0; i < 3; i++) {
		double t = kib[i] * 1024 / (k->bw_frac * hw_stream_bandwidth(&hw)) * 1e6 +
			   b->kernel_us;
		assert_double_rel(t, us[i], 0.10);
	}
	/* The stream itself is the GPU copy's: 0.795 of the datasheet (M2
	 * Ultra, 636 of 800 GB/s, chsasank/device-benchmarks). */
	struct hw_profile m2u;
	load_hw(&m2u, "m2-ultra");
	assert_double_rel(hw_stream_bandwidth(&m2u), 636e9, 0.001);
}

/* The per-node floor against the smallest ops of two test-backend-ops
 * tables: a 155 KiB q4_K mat-vec on an M3 Pro, 5.15 us/run (PR #27776),
 * and an iq3_xxs 4096 x 512 mat-vec on an M4 Max, 7.49 us/run (PR
 * #28086): bytes at the stream plus 5.0 us, within 25% of each (the floor
 * sits between the two chips' 4.1 and 5.7 us). */
static void node_floor_meets_the_smallest_ops(void **state)
{
	(void)state;
	struct hw_profile m3p, m4m;
	load_hw(&m3p, "m4-pro");
	m3p.bandwidth_gb_s = 150;
	load_hw(&m4m, "m4-max");
	const struct perf_backend *b = perf_backend_for("llama.cpp", &m4m);
	double small = 155 * 1024 / hw_stream_bandwidth(&m3p) * 1e6 + b->kernel_us;
	assert_double_rel(small, 5.15, 0.25);
	double iq3 = 4096.0 * 512 * 3.0625 / 8 / hw_stream_bandwidth(&m4m) * 1e6 + b->kernel_us;
	assert_double_rel(iq3, 7.49, 0.25);
}

/* Decode attention on an M4 Max: test-backend-ops FLASH_ATTN_EXT, kv =
 * 16384, head dim 128, f16, 34.41 MiB read in 263.78 us (llama.cpp PR
 * #23114): the row's KV rate gives that time within 3% (its fraction is
 * rounded to 0.31 of the stream). */
static void decode_attention_meets_pr_23114(void **state)
{
	(void)state;
	struct hw_profile hw;
	load_hw(&hw, "m4-max");
	const struct perf_backend *b = perf_backend_for("llama.cpp", &hw);
	const struct perf_kernel *k =
		perf_kernel_find(b, KOP_ATTN_DECODE, KDT_ANY, HW_TC_APPLE, 128, 8);
	assert_false(k->fallback);
	double t = 34.41 * 1048576 / (k->bw_frac * hw_stream_bandwidth(&hw)) * 1e6 + k->fixed_us;
	assert_double_rel(t, 263.78, 0.03);
}

/* Properties: doubling the GPU cores (and with them the FLOP peaks) or
 * raising the memory bandwidth never lengthens a step, for decode batches
 * and prefill chunks, F16 and Q4_0, dense and MoE. */
static void more_cores_or_bandwidth_never_slow_a_step(void **state)
{
	(void)state;
	static const char *const models[] = { "llama-2-7b", "qwen3-30b-a3b" };
	static const struct {
		int64_t pre;
		int dec;
		int64_t ctx;
	} steps[] = {
		{ 0, 1, 100 }, { 0, 8, 2000 }, { 0, 64, 4000 }, { 512, 0, 0 }, { 2048, 4, 1000 },
	};
	for (size_t mi = 0; mi < 2; mi++) {
		struct model m;
		load_model(&m, models[mi]);
		for (size_t i = 0; i < sizeof apple / sizeof *apple; i++) {
			struct hw_profile base, cores, bw;
			load_hw(&base, apple[i]);
			cores = bw = base;
			cores.arch.sm_count *= 2;
			cores.fp32_tflops *= 2;
			cores.bf16_tflops *= 2;
			cores.fp16_tflops *= 2;
			bw.bandwidth_gb_s *= 1.5;
			for (int w = 0; w < 2; w++)
				for (size_t s = 0; s < sizeof steps / sizeof *steps; s++) {
					struct perf p0, pc, pb;
					const char *wt = w ? "q4_0" : "f16";
					metal_perf(&p0, &m, &base, wt);
					metal_perf(&pc, &m, &cores, wt);
					metal_perf(&pb, &m, &bw, wt);
					double t0 = one_step(&p0, steps[s].pre, steps[s].dec,
							     steps[s].ctx, NULL);
					double tc = one_step(&pc, steps[s].pre, steps[s].dec,
							     steps[s].ctx, NULL);
					double tb = one_step(&pb, steps[s].pre, steps[s].dec,
							     steps[s].ctx, NULL);
					if (tc > t0 * (1 + 1e-12) || tb > t0 * (1 + 1e-12))
						fail_msg("%s %s %s step %zu: %g s base, %g with 2x "
							 "cores, %g with 1.5x bandwidth",
							 models[mi], apple[i], wt, s, t0, tc, tb);
				}
			/* Prefill is compute-bound: twice the cores, nearly twice as fast. */
			struct perf p0, pc;
			metal_perf(&p0, &m, &base, "f16");
			metal_perf(&pc, &m, &cores, "f16");
			assert_true(one_step(&pc, 2048, 0, 0, NULL) <
				    0.6 * one_step(&p0, 2048, 0, 0, NULL));
		}
	}
}

/* Batch-1 decode never beats the weights' bytes at the datasheet
 * bandwidth (SEED's ceiling), for every chip and weight type, and stays
 * within 2.5x of it (the per-node floors weigh most on small quantized
 * weights: llama-bench tg128 of Llama-2-7B Q4_0 on an M2 Ultra, 94.27
 * t/s, is 2.2x the 3.8 GB at 800 GB/s; discussion #4167). */
static void batch1_decode_under_the_bandwidth_ceiling(void **state)
{
	(void)state;
	struct model m;
	load_model(&m, "llama-2-7b");
	for (size_t i = 0; i < sizeof apple / sizeof *apple; i++) {
		struct hw_profile hw;
		load_hw(&hw, apple[i]);
		static const char *const wts[] = { "f16", "q8_0", "q4_0" };
		for (int w = 0; w < 3; w++) {
			struct perf p;
			metal_perf(&p, &m, &hw, wts[w]);
			struct perf_op ops[PERF_N_OPS];
			double t = one_step(&p, 0, 1, 128, ops);
			double floor = (ops[PERF_DENSE].bytes + ops[PERF_LM_HEAD].bytes) /
				       (hw.bandwidth_gb_s * 1e9);
			assert_true(t > floor);
			assert_true(t < 2.5 * floor);
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(apple_chips_run_the_metal_kernels),
		cmocka_unit_test(mat_vec_meets_test_backend_ops_m3_pro),
		cmocka_unit_test(node_floor_meets_the_smallest_ops),
		cmocka_unit_test(decode_attention_meets_pr_23114),
		cmocka_unit_test(more_cores_or_bandwidth_never_slow_a_step),
		cmocka_unit_test(batch1_decode_under_the_bandwidth_ceiling),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
