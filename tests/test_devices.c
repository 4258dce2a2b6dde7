/*
 * devices: the backends and device facts beyond vLLM on Hopper (issue 11):
 * which backend a device and an engine get, that every kernel and
 * collective row names its source, that the ROCm rows and the CDNA3 /
 * Blackwell facts reproduce the component measurements they were set
 * from (the sources are in the comments, tolerances with their reasons),
 * and the properties that make them transfer: FP4 beats FP8 beats BF16
 * at large M on Blackwell, a higher sustained clock never slows a step,
 * all-reduce rises with the message, the GH200 and H200 NVL profiles are
 * their own devices and not the H200 SXM's.
 */
#include "hwutil.h"

#include <math.h>
#include <string.h>

#include "backend.h"
#include "catalog.h"
#include "hwprofile.h"
#include "model.h"
#include "precision.h"
#include "steptime.h"
#include "num.h"

/* The dense-matmul time of one step prefilling n tokens of one sequence. */
static double prefill_dense_s(const struct perf *p, int64_t n)
{
	struct perf_step s;
	struct perf_breakdown b;
	perf_step_clear(&s);
	perf_step_add(&s, p, n, 0, true);
	perf_step_time(p, &s, &b);
	return b.dense;
}

static const char *const backend_names[] = { "vllm-cuda",	"vllm-rocm",	 "llama.cpp-cuda",
					     "llama.cpp-metal", "llama.cpp-cpu", "roofline" };

/* Devices pick their backend by vendor and class, engines by family. */
static void devices_pick_their_backend(void **state)
{
	(void)state;
	static const struct {
		const char *hw, *engine, *backend;
	} want[] = {
		{ "mi300x", "vllm", "vllm-rocm" },
		{ "mi325x", "vllm", "vllm-rocm" },
		{ "mi250x", "vllm", "vllm-rocm" },
		{ "b200", "vllm", "vllm-cuda" },
		{ "gb200", "vllm", "vllm-cuda" },
		{ "gh200", "vllm", "vllm-cuda" },
		{ "gh200-144gb", "vllm", "vllm-cuda" },
		{ "h200-nvl", "vllm", "vllm-cuda" },
		{ "gh200", "ollama", "llama.cpp-cuda" },
		{ "m2-ultra", "llama.cpp", "llama.cpp-metal" },
		{ "cpu-ddr5-5600", "ollama", "llama.cpp-cpu" },
		{ "cpu-ddr5-5600", "vllm", "roofline" },
		/* llama.cpp's ROCm backend has no table: the named roofline. */
		{ "mi300x", "ollama", "roofline" },
	};
	for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
		struct hw_profile hw;
		load_hw(&hw, want[i].hw);
		const struct perf_backend *b = perf_backend_for(want[i].engine, &hw);
		if (strcmp(b->name, want[i].backend))
			fail_msg("%s under %s: backend %s, expected %s", want[i].hw, want[i].engine,
				 b->name, want[i].backend);
	}
	/* The ROCm table holds a row per CDNA generation, none the fallback. */
	const struct perf_backend *r = perf_backend_find("vllm-rocm");
	assert_non_null(r);
	const struct perf_kernel *g3 = perf_kernel_find(r, KOP_GEMM, KDT_16, HW_TC_CDNA3, 0, 0);
	const struct perf_kernel *g2 = perf_kernel_find(r, KOP_GEMM, KDT_16, HW_TC_CDNA2, 0, 0);
	assert_false(g3->fallback);
	assert_false(g2->fallback);
	assert_ptr_not_equal(g3, g2);
	assert_ptr_not_equal(perf_kernel_find(r, KOP_GEMM, KDT_LOW, HW_TC_CDNA3, 0, 0), g3);
	assert_null(perf_backend_find("no-such-backend"));
}

/* Every row of every table says where its numbers come from; every table
 * ends with the fallback row and has a ring all-reduce that can always
 * run (no size, group or link limit), which perf_allreduce_s needs. */
static void every_row_has_a_source(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof backend_names / sizeof *backend_names; i++) {
		const struct perf_backend *b = perf_backend_find(backend_names[i]);
		assert_non_null(b);
		assert_true(b->n_rows >= 1 && b->n_coll >= 1);
		assert_true(b->launch_source && b->launch_source[0]);
		for (int k = 0; k < b->n_rows; k++) {
			const struct perf_kernel *row = &b->rows[k];
			if (!row->source || strlen(row->source) < 12 || !row->kernel ||
			    !row->kernel[0])
				fail_msg("%s row %d (%s): no source", b->name, k,
					 row->kernel ? row->kernel : "?");
			assert_int_equal(row->fallback, k == b->n_rows - 1);
			/* Fractions are fractions; curves rise with keys per query. */
			assert_true(row->bw_frac >= 0 && row->bw_frac <= 1);
			assert_true(row->compute_frac >= 0 && row->compute_frac <= 1);
			if (row->curve)
				for (int j = 1; j < row->curve->n; j++)
					assert_true(row->curve->y[j] >= row->curve->y[j - 1] &&
						    row->curve->x[j] > row->curve->x[j - 1]);
		}
		bool catch_all = false;
		for (int c = 0; c < b->n_coll; c++) {
			const struct perf_collective *a = &b->coll[c];
			if (!a->source || strlen(a->source) < 12)
				fail_msg("%s collective %s: no source", b->name, a->name);
			assert_true(a->link_frac > 0 && a->link_frac <= 1);
			catch_all |= a->traffic == TRAFFIC_RING && !a->nvlink_only &&
				     !a->max_bytes && !a->tp_max && !a->scale_out;
		}
		assert_true(catch_all);
	}
}

/* The GH200s and the H200 NVL are devices of their own: loaded by their
 * ids, with the datasheet figures that set them apart from the H200 SXM
 * (memory, peak, host link, power), and no measured GEMM above a
 * datacenter part's datasheet peak (only GeForce boost clocks beat it). */
static void new_profiles_are_their_own_devices(void **state)
{
	(void)state;
	struct hw_profile sxm, gh, gh3e, nvl;
	load_hw(&sxm, "h200-sxm");
	load_hw(&gh, "gh200");
	load_hw(&gh3e, "gh200-144gb");
	load_hw(&nvl, "h200-nvl");
	/* GH200 96 GB HBM3 at 4.0 TB/s, 144 GB HBM3e at 4.9 (datasheet);
	 * H200 NVL 835.5 dense BF16 at 600 W (datasheet, 1671 sparse). Exact
	 * decimal inputs: tolerance 0. */
	assert_double_near(gh.capacity_gb, 96, 0);
	assert_double_near(gh.bandwidth_gb_s, 4000, 0);
	assert_int_equal(gh.arch.memory_type, HW_MEM_HBM3);
	assert_double_near(gh3e.bandwidth_gb_s, 4900, 0);
	assert_int_equal(gh3e.arch.memory_type, HW_MEM_HBM3E);
	assert_string_equal(hw_link_names[gh.host_link], "nvlink-c2c");
	assert_true(gh.bandwidth_gb_s != sxm.bandwidth_gb_s && gh3e.capacity_gb != sxm.capacity_gb);
	assert_double_near(nvl.bf16_tflops, 835.5, 0);
	assert_true(nvl.bf16_tflops < sxm.bf16_tflops && nvl.board_power_w < sxm.board_power_w);
	assert_int_equal(nvl.arch.tensor_gen, HW_TC_HOPPER);
	/* The GH200's measured GEMM (ml-engineering MAMF, 828.6) sets its
	 * ceiling above the H200 SXM's clock-scaled row. */
	struct model m;
	load_model(&m, "llama-3.1-8b");
	const struct precision *bf16 = precision_find("bf16");
	struct perf pg, ps;
	perf_init(&pg, &m, &gh, bf16, 1, 2);
	perf_init(&ps, &m, &sxm, bf16, 1, 2);
	assert_double_rel(pg.gemm_cmax, 0.95 * 828.6 / 989.4, 1e-9);
	assert_true(pg.gemm_cmax > ps.gemm_cmax);

	char **ids;
	size_t n = catalog_list(CATALOG_HARDWARE, &ids);
	for (size_t i = 0; i < n; i++) {
		struct hw_profile hw;
		load_hw(&hw, ids[i]);
		if (hw.hw_class == HW_DATACENTER_GPU) {
			const struct hw_arch *a = &hw.arch;
			if (a->matmul_bf16_tflops > hw.bf16_tflops ||
			    (hw.fp8_tflops > 0 && a->matmul_fp8_tflops > hw.fp8_tflops) ||
			    (hw.fp4_tflops > 0 && a->matmul_fp4_tflops > hw.fp4_tflops))
				fail_msg("%s: a measured GEMM above the datasheet peak", ids[i]);
		}
		free(ids[i]);
	}
	free(ids);
}

/* The CDNA3 rows against AMD's hipBLASLt measurements (AMD "Measuring
 * Max-Achievable FLOPs - Part 2"): without a measured GEMM in the
 * profile, the row's ceiling, 0.89 of the peak at the sustained clock,
 * meets the MAF BF16 708 TFLOP/s (MI300X, 1207 MHz) and 843 (MI325X,
 * 1447 MHz) times the 0.95 serving factor within 3% (the row is 0.94 x
 * 0.95 rounded, and AMD's two efficiencies differ by ~2%); with the
 * profile's torch-level MAMF (668.4 / 784.9, ml-engineering) it is 0.95
 * of that exactly. The MI325X's higher power limit holds a higher clock,
 * so its prefill is never slower at the same peaks. */
static void cdna3_rows_meet_amd_maf(void **state)
{
	(void)state;
	struct model m;
	load_model(&m, "llama-3.1-8b");
	const struct precision *bf16 = precision_find("bf16");
	static const struct {
		const char *id;
		double maf, mamf;
	} dev[] = { { "mi300x", 708, 668.4 }, { "mi325x", 843, 784.9 } };
	double dense[2];
	for (int i = 0; i < 2; i++) {
		struct hw_profile hw;
		load_hw(&hw, dev[i].id);
		struct perf p;
		perf_init(&p, &m, &hw, bf16, 1, 2);
		assert_string_equal(p.backend->name, "vllm-rocm");
		assert_double_rel(p.gemm_cmax, 0.95 * dev[i].mamf / 1307.4, 1e-9);
		dense[i] = prefill_dense_s(&p, 8192);
		hw.arch.matmul_bf16_tflops = hw.arch.matmul_fp8_tflops = 0;
		perf_init(&p, &m, &hw, bf16, 1, 2);
		assert_double_rel(p.gemm_cmax, 0.95 * dev[i].maf / 1307.4, 0.03);
	}
	assert_true(dense[1] < dense[0]);
}

/* CDNA3 streams at its measured rate: rocprofiler-compute's roofline HBM
 * bandwidth (ROCm/rocm-systems PR #2934: MI300X 3910.62, MI325X 4287.31
 * GB/s), not the HBM3 default 0.90 of the datasheet. A batch-1 decode's
 * weights go at the hipBLASLt row's 0.95 of it (exact); the MI325X decodes
 * faster than the MI300X; and more stream or more CUs never slow a decode
 * or prefill step. */
static void cdna3_streams_at_its_measured_rate(void **state)
{
	(void)state;
	struct model m;
	load_model(&m, "llama-3.1-8b");
	const struct precision *bf16 = precision_find("bf16");
	static const struct {
		const char *id;
		double gb_s;
	} dev[] = { { "mi300x", 3910.62 }, { "mi325x", 4287.31 } };
	double dec[2];
	for (int i = 0; i < 2; i++) {
		struct hw_profile hw;
		load_hw(&hw, dev[i].id);
		assert_double_rel(hw_stream_bandwidth(&hw), dev[i].gb_s * 1e9, 1e-12);
		struct perf p;
		perf_init(&p, &m, &hw, bf16, 1, 2);
		struct perf_step s;
		perf_step_clear(&s);
		perf_step_add(&s, &p, 1, 1000, true);
		struct perf_op ops[PERF_N_OPS];
		dec[i] = perf_step_ops(&p, &s, ops);
		assert_false(ops[PERF_DENSE].compute_bound);
		assert_double_rel(ops[PERF_DENSE].time_s,
				  ops[PERF_DENSE].bytes / (0.95 * dev[i].gb_s * 1e9), 1e-9);
		struct hw_profile more = hw;
		more.arch.stream_bandwidth_gb_s *= 1.2;
		more.bandwidth_gb_s *= 1.2;
		more.arch.sm_count *= 2;
		for (int64_t n = 1; n <= 8192; n *= 8) {
			struct perf a, b;
			perf_init(&a, &m, &hw, bf16, 1, 2);
			perf_init(&b, &m, &more, bf16, 1, 2);
			struct perf_step sa;
			perf_step_clear(&sa);
			perf_step_add(&sa, &a, n, n == 1 ? 1000 : 0, true);
			assert_true(perf_step_time(&b, &sa, NULL) <=
				    perf_step_time(&a, &sa, NULL) * (1 + 1e-12));
		}
	}
	assert_true(dec[1] < dec[0]);
}

/* Streams without a measurement of their own take their memory type's
 * fraction, each from a component measurement: GDDR6 boards read at 0.97
 * of the datasheet (te42kyfo/gpu-benches gpu-stream read kernel: L40 844
 * of 864 GB/s, A40 679 of 696; the L40S shares the L40's memory), within
 * 1% of the L40's figure. The H200 has no saturating measurement: the
 * same benchmark's triad (3534 GB/s) and stores (3898) on it, still
 * rising at full occupancy, bound its stream from below, and the HBM
 * default 0.90 of 4.8 TB/s sits between them and the datasheet. */
static void streams_meet_the_gpu_stream_tables(void **state)
{
	(void)state;
	struct hw_profile hw;
	load_hw(&hw, "l40s");
	assert_double_rel(hw_stream_bandwidth(&hw), 844e9, 0.01);
	load_hw(&hw, "a10g");
	assert_double_rel(hw_stream_bandwidth(&hw) / (hw.bandwidth_gb_s * 1e9), 679.0 / 696, 0.01);
	/* Where the benchmark ran on the part itself its triad is the
	 * profile's stream: H100 PCIe 1832 GB/s, A100 40GB 1375 (both
	 * variants, 1555 GB/s each). */
	static const struct {
		const char *id;
		double gb_s;
	} own[] = { { "h100-pcie", 1832 }, { "a100-40gb-sxm", 1375 }, { "a100-40gb-pcie", 1375 } };
	for (size_t i = 0; i < sizeof own / sizeof *own; i++) {
		load_hw(&hw, own[i].id);
		assert_double_rel(hw_stream_bandwidth(&hw), own[i].gb_s * 1e9, 1e-12);
	}
	load_hw(&hw, "h200-sxm");
	assert_true(hw.arch.stream_bandwidth_gb_s == 0);
	assert_true(hw_stream_bandwidth(&hw) >= 3898e9 && hw_stream_bandwidth(&hw) < hw.bandwidth_gb_s * 1e9);
}

/* Blackwell, large M (one 8,192-token prefill of Llama-3.1-70B at TP1, a
 * compute-bound step): FP4 beats FP8 beats BF16 on B200, GB200, RTX 5090
 * and RTX PRO 6000 (gpu-flops-bench: 457.61 / 905.32 / 1608.21). The
 * dense time ratios follow the measured GEMMs of the profiles: BF16 / FP8
 * = 3432.5 / 1745 = 1.97 (ml-engineering MAMF) and FP8 / FP4 = 3904.3 /
 * 3432.5 = 1.14 (vLLM PR #20646 over MAMF) on B200, within 10% (the
 * step's dense time also carries the lm_head, rated at its own dtype,
 * and fixed launch costs). */
static void blackwell_fp4_beats_fp8_beats_bf16(void **state)
{
	(void)state;
	struct model m;
	load_model(&m, "llama-3.1-70b");
	static const char *const ids[] = { "b200", "gb200", "rtx-5090", "rtx-pro-6000" };
	for (int d = 0; d < 4; d++) {
		struct hw_profile hw;
		load_hw(&hw, ids[d]);
		static const char *const prec[] = { "bf16", "fp8", "nvfp4" };
		double t[3];
		for (int i = 0; i < 3; i++) {
			struct perf p;
			perf_init(&p, &m, &hw, precision_find(prec[i]), 1, 2);
			t[i] = prefill_dense_s(&p, 8192);
		}
		assert_true(t[0] > t[1] && t[1] > t[2]);
		if (d == 0) {
			assert_double_rel(t[0] / t[1], 3432.5 / 1745, 0.10);
			assert_double_rel(t[1] / t[2], 3904.3 / 3432.5, 0.10);
		}
		if (d == 3)
			assert_double_rel(t[0] / t[1], 905.32 / 457.61, 0.10);
	}
}

/* Out-of-sample component check: the B200 BF16 and NVFP4 GEMM ceilings
 * against vLLM PR #20646's bench_nvfp4_gemm table at a Llama-3.1-8B shape
 * (N = 6144, K = 4096) and M = 16384 tokens, where a kernel is at its
 * plateau: torch-bf16 1360.1, nvfp4 (with activation quantization) 3038.8
 * TFLOP/s. The model's ceilings come from best-shape searches, so they
 * sit above a fixed serving shape: within 25% (B200 BF16 MAMF 1745 is 28%
 * above this shape's 1360, 0.95 of it 22%), never below it. */
static void b200_gemm_against_vllm_pr_20646(void **state)
{
	(void)state;
	struct model m;
	load_model(&m, "llama-3.1-8b");
	struct hw_profile hw;
	load_hw(&hw, "b200");
	struct perf p;
	perf_init(&p, &m, &hw, precision_find("bf16"), 1, 2);
	double bf16 = p.gemm_cmax * hw_peak_flops(&hw, MATMUL_BF16) / 1e12;
	perf_init(&p, &m, &hw, precision_find("nvfp4"), 1, 2);
	double fp4 = p.gemm_lp * p.gemm_cmax * hw_peak_flops(&hw, MATMUL_FP4) / 1e12;
	assert_true(bf16 >= 1360.1 && bf16 <= 1.25 * 1360.1);
	assert_true(fp4 >= 3038.8 && fp4 <= 1.25 * 3038.8);
}

/* The ROCm custom all-reduce against the MI300X TP4 table it was fitted
 * to (vLLM PR #19744, "baseline"): one-shot points within 20% (the
 * least-squares line's largest residual is 18%, at 256 KB), two-shot
 * within 5% (residuals <= 2%); the time rises with the message, and at
 * 16 MiB RCCL and the custom two-shot meet (the crossover vLLM's ROCm
 * buffer size encodes), within 2%. Out of sample, TP2 (ROCm/aiter PR
 * #801, vLLM cr column): within 25% at 4 KB-16 MB (the mesh rows give
 * 0.975 of a link where the table shows 0.75: 14-22% fast above 1 MB).
 * Infinity Fabric is a mesh, so a larger group has more links: at 8 MiB
 * TP8 is faster than TP4, TP4 than TP2. */
static void rocm_allreduce_meets_the_mi300x_tables(void **state)
{
	(void)state;
	struct hw_profile hw;
	load_hw(&hw, "mi300x");
	const struct perf_backend *b = perf_backend_find("vllm-rocm");
	static const struct {
		double kb, us, tol;
	} tp4[] = {
		{ 2, 7.18, 0.20 },     { 32, 7.58, 0.20 },    { 256, 14.39, 0.20 },  { 512, 14.65, 0.20 },
		{ 1024, 22.91, 0.05 }, { 2048, 36.64, 0.05 }, { 4096, 63.86, 0.05 }, { 8192, 118.31, 0.05 },
		{ 16384, 230.48, 0.05 },
	}, tp2[] = {
		{ 4, 7.07, 0.25 },      { 64, 7.66, 0.25 },     { 256, 11.45, 0.25 }, { 1024, 28.15, 0.25 },
		{ 4096, 93.79, 0.25 }, { 16384, 355.91, 0.25 },
	};
	for (size_t i = 0; i < sizeof tp4 / sizeof *tp4; i++)
		assert_double_rel(perf_allreduce_s(b, &hw, 4, tp4[i].kb * 1024, NULL) * 1e6,
				  tp4[i].us, tp4[i].tol);
	for (size_t i = 0; i < sizeof tp2 / sizeof *tp2; i++)
		assert_double_rel(perf_allreduce_s(b, &hw, 2, tp2[i].kb * 1024, NULL) * 1e6,
				  tp2[i].us, tp2[i].tol);
	double prev = 0;
	for (double bytes = 1024; bytes <= 256 * MIB; bytes *= 1.7) {
		double t = perf_allreduce_s(b, &hw, 4, bytes, NULL);
		assert_true(t >= prev);
		prev = t;
	}
	const struct perf_collective *alg;
	double at = perf_allreduce_s(b, &hw, 4, 16 * MIB, &alg);
	assert_non_null(alg);
	double ring = 48e-6 + 1.5 * 16 * MIB / (448e9 * 0.723 * 3 / 7);
	assert_double_rel(at, ring, 0.02);
	assert_true(perf_allreduce_s(b, &hw, 8, 8 * MIB, NULL) <
		    perf_allreduce_s(b, &hw, 4, 8 * MIB, NULL));
	assert_true(perf_allreduce_s(b, &hw, 4, 8 * MIB, NULL) <
		    perf_allreduce_s(b, &hw, 2, 8 * MIB, NULL));
	assert_double_near(perf_allreduce_s(b, &hw, 1, 1e6, NULL), 0, 0);
	/* NVLink is no mesh: NVSwitch gives every GPU its full link, so the
	 * same bytes cost a TP4 group on an H100 node what the link alone sets,
	 * whatever the group (at 80 MiB, past custom all-reduce and symmetric
	 * memory, the CUDA NCCL ring row: 6 hops x 3 us + 1.5 x bytes at 0.69
	 * of 450 GB/s, vLLM PR #24532). */
	struct hw_profile h100;
	load_hw(&h100, "h100-sxm");
	double us = perf_allreduce_s(perf_backend_find("vllm-cuda"), &h100, 4, 80 * MIB, &alg) * 1e6;
	assert_int_equal(alg->traffic, TRAFFIC_RING);
	assert_double_rel(us, 18 + 1.5 * 80 * MIB / (450e9 * 0.69) * 1e6, 1e-9);
}

/* The ROCm BF16 MoE row against the Triton grouped-GEMM table it was
 * fitted to (ROCm/triton PR #685, moe-gemm, E = 8, top-2, K = 4096;
 * device not named: uncertain whether MI300X): one GEMM call is half the
 * row's per-layer floor plus the larger of its FLOPs at the row's curve
 * and its weights at the row's stream. Memory-bound points (16-32 tokens
 * an expert) within 17% (the least-squares line's largest residual is
 * 16%, the 29 MB shape), compute-bound ones (64-1024) within 2% (each
 * sets a curve point). Check, not fitted: PR #710's fused GEMM + SiLU,
 * M = 4096, N = 14336 (2.363 ms), within 8% (the row gives 2.51 ms).
 * A Mixtral-8x7B BF16 step on MI300X runs this row; its FP8 experts the
 * w8a8 estimate; more CUs, clock or stream never slow its steps. */
static void rocm_moe_meets_the_triton_table(void **state)
{
	(void)state;
	struct hw_profile hw;
	load_hw(&hw, "mi300x");
	const struct perf_backend *b = perf_backend_find("vllm-rocm");
	const struct perf_kernel *k = perf_kernel_find(b, KOP_MOE, KDT_16, HW_TC_CDNA3, 0, 0);
	assert_false(k->fallback);
	assert_non_null(k->curve);
	double peak = hw_peak_flops(&hw, MATMUL_BF16) * hw_clock_ratio(&hw);
	double bw = hw_stream_bandwidth(&hw) * k->bw_frac;
	static const struct {
		double m, n, k, us, tol;
	} pts[] = {
		{ 64, 1792, 1024, 88.724, 0.17 },   { 64, 7168, 4096, 270.237, 0.17 },
		{ 128, 7168, 4096, 279.320, 0.17 }, { 64, 14336, 4096, 422.626, 0.17 },
		{ 128, 14336, 4096, 425.669, 0.17 }, { 256, 14336, 4096, 483.249, 0.02 },
		{ 1024, 7168, 4096, 649.728, 0.02 }, { 4096, 7168, 4096, 1300.630, 0.02 },
		{ 4096, 14336, 4096, 2363.253, 0.08 },   /* PR #710, fused SiLU: check */
	};
	for (size_t i = 0; i < sizeof pts / sizeof *pts; i++) {
		double routed = 2 * pts[i].m, tpe = routed / 8;
		double flops = 2 * routed * pts[i].n * pts[i].k, bytes = 8 * pts[i].n * pts[i].k * 2;
		double tc = flops / (peak * k->compute_frac * perf_curve_at(k->curve, tpe));
		double us = k->fixed_us / 2 + fmax(tc, bytes / bw) * 1e6;
		assert_double_rel(us, pts[i].us, pts[i].tol);
	}
	struct model m;
	load_model(&m, "mixtral-8x7b");
	struct perf p;
	perf_init(&p, &m, &hw, precision_find("bf16"), 1, 2);
	assert_ptr_equal(p.k_moe, k);
	perf_init(&p, &m, &hw, precision_find("fp8"), 1, 2);
	assert_ptr_not_equal(p.k_moe, k);
	assert_false(p.k_moe->fallback);
	/* More CUs, a higher sustained clock or more stream never slow a
	 * Mixtral step (decode at batch 1 and 64, prefill of 512 and 8,192). */
	struct hw_profile more = hw;
	more.arch.sm_count *= 2;
	more.arch.sustained_clock_mhz = more.arch.boost_clock_mhz;
	more.arch.stream_bandwidth_gb_s *= 1.2;
	more.bandwidth_gb_s *= 1.2;
	static const int64_t seqs[] = { 1, 64 }, prompt[] = { 512, 8192 };
	for (int i = 0; i < 4; i++) {
		struct perf a, c;
		perf_init(&a, &m, &hw, precision_find("bf16"), 1, 2);
		perf_init(&c, &m, &more, precision_find("bf16"), 1, 2);
		struct perf_step st;
		perf_step_clear(&st);
		if (i < 2)
			for (int64_t q = 0; q < seqs[i]; q++)
				perf_step_add(&st, &a, 1, 1000, true);
		else
			perf_step_add(&st, &a, prompt[i - 2], 0, true);
		assert_true(perf_step_time(&c, &st, NULL) <= perf_step_time(&a, &st, NULL) * (1 + 1e-12));
	}
}

/* llama.cpp on the CPU: every ggml graph node ends with a barrier over
 * the worker threads, the one component the CPU backend takes from a
 * measurement (ggml test-barrier: 1.04 us a node at 8 threads on an
 * i9-13900K, llama.cpp PR #9461; 3.04 us across an EPYC's CCDs, PR
 * #9598; 2.0 us for 16 threads over a 7950X's two CCDs, estimate): a
 * batch-1 decode step of Llama-3.1-8B Q8_0 costs 32 layers x 21 nodes x
 * 2.0 us + the LM head's node more than the same step without floors,
 * and the kernel rows stay the CPU class's (no mat-mul table found).
 * Check, end to end (not fitted): mainline llama.cpp tg128 Q8_0 on a
 * Ryzen 9 7950X, 7.56 t/s (ikawrakow/ik_llama.cpp PR #54, 4 threads):
 * within 8% (servesim 7.80, all cores). vLLM on a CPU runs no ggml
 * graph: the named roofline, without floors. */
static void cpu_graph_pays_a_barrier_a_node(void **state)
{
	(void)state;
	struct hw_profile hw;
	load_hw(&hw, "cpu-ddr5-5600");
	struct model m;
	load_model(&m, "llama-3.1-8b");
	struct perf p;
	perf_init(&p, &m, &hw, precision_find("q8_0"), 1, 2);
	perf_use_engine(&p, "llama.cpp");
	const struct perf_backend *b = p.backend;
	assert_string_equal(b->name, "llama.cpp-cpu");
	assert_true(b->kernel_us >= 1.04 && b->kernel_us <= 3.04);
	assert_true(p.k_gemm->fallback && p.k_decode->fallback);
	struct perf_step s;
	perf_step_clear(&s);
	perf_step_add(&s, &p, 1, 64, true);
	struct perf_breakdown floors, none;
	double t = perf_step_time(&p, &s, &floors);
	struct perf q = p;
	perf_use_scalars(&q);
	double t0 = perf_step_time(&q, &s, &none);
	assert_double_rel((t - t0) * 1e6, (32.0 * 21 + 1) * b->kernel_us, 1e-9);
	assert_double_rel((floors.dense - none.dense) * 1e6, 32.0 * 15 * b->kernel_us, 1e-9);
	assert_double_rel(1 / t, 7.56, 0.08);
	perf_use_engine(&p, "vllm");
	assert_string_equal(p.backend->name, "roofline");
	assert_double_rel(perf_step_time(&p, &s, NULL), t0, 1e-9);
}

/* Out-of-sample end-to-end check (not fitted): one MI300X against one
 * H200, both under vLLM v0.26.0 (alpharomercoma/MI300X-vs-H200 REPORT.md,
 * summary table): single-stream Llama-3.1-70B FP8 is 1.12x faster on the
 * H200; single-stream Llama-3.1-8B about a tie (1.02x). Here, batch-1
 * decode steps at 1,000 tokens of context: 1.00 for the 70B (10% off;
 * within 12%) and 0.97 for the 8B (5% off; within 7%). It was 17% off
 * the wrong way round (MI300X 7% faster) while the MI300X streamed at the
 * HBM3 default, 0.90 of 5.3 TB/s: its measured stream is 3.91 TB/s
 * (rocprofiler-compute's roofline, mi300x.ini), 0.74. Then 1.11 / 1.09,
 * until the H200's weight reads took its mat-vec curve (2026-12-02,
 * h200-sxm.ini: 3.25 us a kernel in a graph, bytes at 3.95 TB/s, where
 * they were 0.97 of the HBM default 4.32 TB/s with no floor): the H200's
 * own check (vLLM's nightly run, nightly_h200_check below) went from 22%
 * fast to 12%, this one from 1% to 10% (the 70B's bound was 5%). The two
 * checks pull the H200 opposite ways; the MI300X side's vLLM costs (ROCm
 * decode attention, per-step costs: the CUDA rows stand in) have no
 * component measurement (docs/backends.md). */
static void mi300x_vs_h200_single_stream_check(void **state)
{
	(void)state;
	struct hw_profile mi, h200;
	load_hw(&mi, "mi300x");
	load_hw(&h200, "h200-sxm");
	static const struct {
		const char *model, *weights;
		double h200_speedup, tol;
	} cases[] = { { "llama-3.1-8b", "bf16", 1.02, 0.07 },
		      { "llama-3.1-70b", "fp8", 1.12, 0.12 } };
	for (int i = 0; i < 2; i++) {
		struct model m;
		load_model(&m, cases[i].model);
		double t[2];
		const struct hw_profile *hw[2] = { &mi, &h200 };
		for (int d = 0; d < 2; d++) {
			struct perf p;
			perf_init(&p, &m, hw[d], precision_find(cases[i].weights), 1, 2);
			struct perf_step s;
			perf_step_clear(&s);
			perf_step_add(&s, &p, 1, 1000, true);
			t[d] = perf_step_time(&p, &s, NULL);
		}
		assert_double_rel(t[0] / t[1], cases[i].h200_speedup, cases[i].tol);
	}
}

/* A GB200 NVL72 rack's NVLink Switch joins 72 GPUs though a tray (vLLM's
 * node) holds 4: a TP8 or TP64 group all-reduces over NVLink5, not the
 * NICs; a B200 HGX board's domain is its 8 GPUs, so TP16 leaves it. */
static void nvl72_groups_stay_on_nvlink(void **state)
{
	(void)state;
	struct hw_profile gb, b;
	load_hw(&gb, "gb200");
	load_hw(&b, "b200");
	const struct perf_backend *cuda = perf_backend_find("vllm-cuda");
	const struct perf_collective *alg;
	for (int tp = 8; tp <= 64; tp *= 2) {
		perf_allreduce_s(cuda, &gb, tp, 32 * MIB, &alg);
		assert_false(alg->scale_out);
	}
	perf_allreduce_s(cuda, &b, 16, 32 * MIB, &alg);
	assert_true(alg->scale_out);
	/* Same link speed, so the same TP8 time as on B200's one board. */
	assert_double_rel(perf_allreduce_s(cuda, &gb, 8, 32 * MIB, NULL),
			  perf_allreduce_s(cuda, &b, 8, 32 * MIB, NULL), 1e-9);
}

/* B300 (Blackwell Ultra, hardware_profiles/b300.ini): datasheet facts
 * that must hold together: the BF16 peak is 160 SMs x the derived clock x
 * sm100's 8192 FLOP a clock; its measured-figure estimates are the B200's
 * at the same BF16 / FP8 peaks, so a BF16 prefill matches the B200's
 * dense time within 1%; NVFP4 prefill is faster by the dense FP4 ratio
 * (13125 / 9000) within 2%; batch-1 decode is no slower than the B200's
 * and faster by at most the bandwidth ratio (8000 / 7700) plus 2%. */
static void b300_datasheet_facts_hold(void **state)
{
	(void)state;
	struct hw_profile b3, b2;
	load_hw(&b3, "b300");
	load_hw(&b2, "b200");
	assert_double_rel(b3.arch.sm_count * b3.arch.boost_clock_mhz * 1e6 * 8192, b3.bf16_tflops * 1e12, 0.002);
	struct model m;
	load_model(&m, "llama-3.1-70b");
	const char *const wts[] = { "bf16", "nvfp4" };
	double ratio[2];
	for (int w = 0; w < 2; w++) {
		double t[2];
		const struct hw_profile *hw[2] = { &b3, &b2 };
		for (int d = 0; d < 2; d++) {
			struct perf p;
			perf_init(&p, &m, hw[d], precision_find(wts[w]), 1, 2);
			struct perf_step s;
			perf_step_clear(&s);
			perf_step_add(&s, &p, 8192, 0, true);
			struct perf_op ops[PERF_N_OPS];
			perf_step_ops(&p, &s, ops);
			t[d] = ops[PERF_DENSE].time_s;
		}
		ratio[w] = t[1] / t[0];
	}
	assert_double_rel(ratio[0], 1, 0.01);
	assert_double_rel(ratio[1], 13125.0 / 9000, 0.02);
	double dec[2];
	const struct hw_profile *hw[2] = { &b3, &b2 };
	for (int d = 0; d < 2; d++) {
		struct perf p;
		perf_init(&p, &m, hw[d], precision_find("fp8"), 1, 2);
		struct perf_step s;
		perf_step_clear(&s);
		perf_step_add(&s, &p, 1, 1000, true);
		dec[d] = perf_step_time(&p, &s, NULL);
	}
	assert_true(dec[0] <= dec[1] && dec[1] / dec[0] <= 8000.0 / 7700 + 0.02);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(devices_pick_their_backend),
		cmocka_unit_test(every_row_has_a_source),
		cmocka_unit_test(new_profiles_are_their_own_devices),
		cmocka_unit_test(cdna3_rows_meet_amd_maf),
		cmocka_unit_test(cdna3_streams_at_its_measured_rate),
		cmocka_unit_test(streams_meet_the_gpu_stream_tables),
		cmocka_unit_test(blackwell_fp4_beats_fp8_beats_bf16),
		cmocka_unit_test(b200_gemm_against_vllm_pr_20646),
		cmocka_unit_test(rocm_allreduce_meets_the_mi300x_tables),
		cmocka_unit_test(rocm_moe_meets_the_triton_table),
		cmocka_unit_test(cpu_graph_pays_a_barrier_a_node),
		cmocka_unit_test(mi300x_vs_h200_single_stream_check),
		cmocka_unit_test(b300_datasheet_facts_hold),
		cmocka_unit_test(nvl72_groups_stay_on_nvlink),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
