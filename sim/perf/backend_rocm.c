/*
 * backend_rocm: vLLM on ROCm (AMD Instinct CDNA2 / CDNA3), the kernel rows
 * and collectives of the "vllm-rocm" backend (sim/perf/backend.h describes
 * what a row is and how it is looked up).
 *
 * What vLLM runs there: hipBLASLt GEMMs (PyTorch's ROCm BLAS, with vLLM's
 * skinny-GEMM kernels at M <= 4), the Triton / AITER fused-MoE kernels,
 * Triton / CK / AITER flash attention for prefill, ROCm paged attention
 * for decode, and vLLM's custom all-reduce (its HIP port) over the
 * Infinity Fabric mesh, RCCL otherwise.
 *
 * The device facts do most of the work here: CDNA3 parts drop their
 * engine clock far below the 2100 MHz the peaks are quoted at under a
 * dense GEMM (1207 MHz on MI300X, 1447 on MI325X, AMD's MAF blog), and
 * the profiles carry that clock and the measured best-shape GEMMs
 * ([arch] matmul_*_tflops), so the rows' fractions are of the
 * clock-adjusted peak, as on CUDA. Every number names its source; those
 * no component measurement supports say `estimate:` / `uncertain:`.
 *
 * Invariants: the table ends with the fallback row; the collectives
 * include a ring row with no size or group limit (perf_allreduce_s needs
 * one that can always run). Const data only.
 */
#include "backend_tables.h"

#include "num.h"

#define N_OF(a) ((int)(sizeof(a) / sizeof *(a)))

/* Prefill attention on CDNA3, fraction of the clock-adjusted 16-bit peak
 * (1207 MHz: 751 TFLOP/s on MI300X) by keys per query: the Triton
 * flash-attention-v2 tutorial kernel forward on MI300, (4, 48, S, S, 64),
 * 0.2102 / 0.6307 / 2.2906 ms at S = 1024 / 2048 / 4096 (tritonbench PR
 * #612): 245, 327, 360 TFLOP/s. The same table's AITER column runs above
 * the device's peak (the PR says so itself), so it is not used; vLLM's
 * CK / AITER kernels are faster than the tutorial one, so this curve is a
 * lower bound. uncertain: head dim 64 only, no hd128 table here. */
static const struct perf_curve triton_fa2_mi300 = {
	3, { 1024, 2048, 4096 }, { 0.326, 0.435, 0.479 }
};

/* The ROCm Triton grouped GEMM's fraction of its 1024-tokens-an-expert
 * rate by tokens per expert (ROCm/triton PR #685; the MoE row below):
 * 0.205 / 0.287 / 0.530 of the clock-adjusted peak at 64 / 256 / 1024,
 * over the row's 0.530. */
static const struct perf_curve triton_moe_rocm_tpe = { 3, { 64, 256, 1024 }, { 0.386, 0.541, 1.0 } };

static const struct perf_kernel vllm_rocm_rows[] = {
	/* hipBLASLt BF16 on CDNA3. With the profile's measured GEMM (MI300X,
	 * MI325X) the ceiling is 0.95 of it (steptime.c); without one, 0.89 of
	 * the clock-adjusted peak: the 94% software efficiency AMD measures at
	 * the GEMM's own clock (hipBLASLt-bench, MI325X; "Measuring
	 * Max-Achievable FLOPs - Part 2", rocm.blogs.amd.com) times the same
	 * 0.95 serving factor. Small M pads to 16 rows: the smallest M of the
	 * CDNA3 matrix instructions hipBLASLt picks at small M (MFMA 16x16x16
	 * bf16; AMD's blog: 16x16x16 gives the higher MAF). Streaming:
	 * uncertain, 0.95 of the memory type's stream, no ROCm GEMV table. */
	{ .op = KOP_GEMM, .dtype = KDT_16, .gen = HW_TC_CDNA3, .kernel = "hipBLASLt BF16 GEMM (gfx942)",
	  .compute_frac = 0.89, .tile_m = 16, .bw_frac = 0.95,
	  .source = "0.95 x the profile's measured GEMM ([arch] matmul_bf16_tflops), else AMD MAF blog part 2: hipBLASLt "
		    "94% of the peak at the GEMM's own clock (x 0.95); 16-row MFMA tiles; GEMV 0.95 of stream uncertain" },
	/* FP8 (fnuz) on CDNA3: hipBLASLt-bench 1273 TFLOP/s at 1230 MHz on
	 * MI300X (AMD MAF blog) = 0.83 of the peak at that clock; x 0.95 serving. */
	{ .op = KOP_GEMM, .dtype = KDT_LOW, .gen = HW_TC_CDNA3, .kernel = "hipBLASLt FP8 GEMM (gfx942, fnuz)",
	  .compute_frac = 0.79, .tile_m = 16, .bw_frac = 0.95,
	  .source = "0.95 x the profile's measured FP8 GEMM, else AMD MAF blog part 2: MI300X FP8 1273 TFLOP/s at 1230 MHz, "
		    "0.83 of that clock's peak (x 0.95)" },
	/* CDNA2 (MI250X): rocBLAS/hipBLASLt, one GCD 147.0 of 191.5 TFLOP/s
	 * at its quoted clock (stas00/ml-engineering MAMF table, ROCm 6.2):
	 * 0.767, x 0.95 serving. Classic tile kernels in waves over the CUs
	 * (uncertain: hipBLASLt's stream-K use on gfx90a not checked). */
	{ .op = KOP_GEMM, .dtype = KDT_ANY, .gen = HW_TC_CDNA2, .kernel = "rocBLAS / hipBLASLt BF16 GEMM (gfx90a)",
	  .waves = true, .compute_frac = 0.73, .tile_m = 16, .bw_frac = 0.95,
	  .source = "0.95 x the profile's measured GEMM, else ml-engineering MAMF: MI250X GCD 147.0 of 191.5 TFLOP/s "
		    "(0.767, x 0.95); GEMV uncertain" },
	/* Fused MoE, BF16 experts (Triton fused_moe; AITER's CK MoE only with
	 * VLLM_ROCM_USE_AITER=1, off by default): fitted to ROCm/triton PR
	 * #685's moe-gemm benchmark (its Triton grouped GEMM, E = 8, top-2,
	 * K = 4096; the AMD Instinct perf-kernels of Dec 2024, the device not
	 * named: uncertain whether MI300X, taken as gfx942). Streaming: five
	 * points at 16-32 tokens an expert (29-940 MB of weights, 88.7-425.7
	 * us), least squares: 92 us a GEMM call + bytes at 2.77 TB/s, 0.71 of
	 * MI300X's measured 3.91 TB/s stream (residuals <= 16%, the 29 MB
	 * shape). A layer runs two such calls (gate/up, down): 184 us a layer
	 * (uncertain: the align and activation kernels are not in the table).
	 * Compute, by tokens per expert (2M/8), less the 92 us: 153.7 / 215.6 /
	 * 398.0 TFLOP/s at 64 / 256 / 1024 tokens an expert (N = 14336 / 7168 /
	 * 7168), 0.205 / 0.287 / 0.530 of the clock-adjusted 751 TFLOP/s
	 * (1207 MHz). Check, not fitted: ROCm/triton PR #710's fused GEMM +
	 * SiLU at M = 4096, N = 14336 (2.363 ms, 414 TFLOP/s) is 6% faster
	 * than this row (test_devices). */
	{ .op = KOP_MOE, .dtype = KDT_16, .gen = KGEN_ANY, .kernel = "Triton fused_moe (grouped GEMM, BF16, ROCm)",
	  .curve = &triton_moe_rocm_tpe, .compute_frac = 0.530, .half = 0, .fixed_us = 184, .bw_frac = 0.71,
	  .source = "ROCm/triton PR #685 moe-gemm (E=8, top-2; device not named, uncertain): 92 us a GEMM call (two a "
		    "layer) + bytes at 0.71 of stream; 0.205-0.530 of the clock-adjusted peak at 64-1024 tokens an expert" },
	/* FP8 / INT8 / FP4 experts. estimate: no ROCm low-precision MoE table
	 * here. Compute: the CUDA w8a8 row's ratio to its dense GEMM (0.58 /
	 * 0.82 = 0.71, vLLM PR #44152 and the Scout fit) applied to the CDNA3
	 * GEMM's 0.89; floor and stream: the BF16 row's above (the same Triton
	 * kernel reading fewer bytes). */
	{ .op = KOP_MOE, .dtype = KDT_ANY, .gen = KGEN_ANY, .kernel = "Triton fused_moe / AITER CK MoE (ROCm, w8a8)",
	  .compute_frac = 0.63, .half = 0, .fixed_us = 184, .bw_frac = 0.71,
	  .source = "estimate: compute the CUDA w8a8 row's 0.71 of its dense GEMM on the CDNA3 GEMM row; floor and stream "
		    "the BF16 row's (ROCm/triton PR #685)" },
	{ .op = KOP_ATTN_PREFILL, .gen = KGEN_ANY, .kernel = "Triton / CK flash attention (ROCm)",
	  .curve = &triton_fa2_mi300, .compute_frac = 1,
	  .source = "tritonbench PR #612: Triton FA2 tutorial fwd on MI300, hd64, 245-360 TFLOP/s at 1k-4k (lower bound)" },
	/* uncertain: no ROCm paged-decode table here; the CUDA GQA row's
	 * intercept and slope (vllm-project/flash-attention PR #63, H100). */
	{ .op = KOP_ATTN_DECODE, .gen = KGEN_ANY, .kernel = "ROCm paged attention (custom, split-KV)",
	  .compute_frac = 0.4, .fixed_us = PERF_FA_DECODE_CALL_US, .bw_frac = 0.887,
	  .source = "uncertain: the CUDA FA3 decode row (vllm-project/flash-attention PR #63) for lack of a ROCm table" },
	{ .fallback = true, .kernel = "roofline, no kernel data", .source = "device-class defaults (hw_default_efficiency)" },
};

/* vLLM's custom all-reduce on ROCm over the Infinity Fabric mesh: one 64
 * GB/s link per GPU pair, so a group of tp uses tp - 1 of the node's seven
 * links and its bandwidth grows with its size (perf_allreduce_s scales the
 * profile's 448 GB/s 8-GPU figure by (tp - 1) / 7 on an infinity-fabric
 * link; vLLM PR #39080 states the rule on MI355X, "peak busbw = (N-1) x
 * 76.8 GB/s"). Fitted to vLLM PR #19744's MI300X TP4 table ("baseline", vLLM's
 * custom all-reduce): one-shot at 2-512 KB, 7.18-14.65 us, is 7.5 us + 3 x
 * bytes at 0.418 of 448 x 3/7, i.e. 0.975 of the mesh (max residual 18%);
 * two-shot at 1-16 MB, 22.9-230.5 us, is 8.7 us + 1.5 x bytes at 0.254 of
 * 448 x 3/7, 0.593 of the mesh (residuals <= 2%). vLLM's size thresholds as
 * on CUDA (custom_all_reduce.cuh, shared by the HIP build), but a 16 MiB
 * buffer: custom_all_reduce.py doubles its max size on ROCm ("crossover is
 * at 16MB buffer size for ROCm"; SGLang's copy keeps the same line).
 * Check, out of sample: ROCm/aiter PR #801's MI300X TP2 table (vLLM cr
 * column, 4 KB-16 MB, 7.07-355.9 us) is 6.5 us + bytes at 48 GB/s, 0.75 of
 * one link; these rows give 0.975 of it, 14-22% fast above 1 MB. */
#define QR_SRC "vLLM PR #19744 MI300X TP4 custom all-reduce table, per mesh link (check: ROCm/aiter PR #801 TP2)"
static const struct perf_collective vllm_rocm_coll[] = {
	{ "custom all-reduce (ROCm), one-shot", TRAFFIC_ONE_SHOT, true, 16 * MIB, 2, 7.5, false, 0.975, false, QR_SRC },
	{ "custom all-reduce (ROCm), one-shot", TRAFFIC_ONE_SHOT, true, 512 * 1024, 4, 7.5, false, 0.975, false, QR_SRC },
	{ "custom all-reduce (ROCm), one-shot", TRAFFIC_ONE_SHOT, true, 256 * 1024, 8, 7.5, false, 0.975, false, QR_SRC },
	{ "custom all-reduce (ROCm), two-shot", TRAFFIC_TWO_SHOT, true, 16 * MIB, 8, 8.7, false, 0.593, false, QR_SRC },
	/* RCCL ring: no rccl-tests table for MI300X here. Its fraction, 0.723
	 * of the mesh (0.31 of 448 at TP4's 3/7), is set so that it meets the
	 * custom two-shot at 16 MiB at TP4 (with the profile's 8 us a hop), the
	 * crossover vLLM's ROCm buffer size encodes: slower below it, faster
	 * above. uncertain: derived, not measured. */
	{ "RCCL ring all-reduce", TRAFFIC_RING, false, 0, 0, 0, true, 0.723, false,
	  "uncertain: set to cross the custom two-shot at 16 MiB at TP4 (custom_all_reduce.py's ROCm crossover)" },
	/* Across nodes: RCCL over RoCE / InfiniBand at the NIC rate, as on
	 * CUDA (nccl-tests #290 / #119, dgx-spark-playbooks PR #103);
	 * uncertain for RCCL. */
	{ "RCCL ring all-reduce over InfiniBand / RoCE", TRAFFIC_RING, false, 0, 0, 30.0, false, 0.94, true,
	  "uncertain for RCCL: nccl-tests #290 / #119 NIC busbw, 30 us from dgx-spark-playbooks PR #103" },
};

const struct perf_backend perf_backend_vllm_rocm = {
	"vllm-rocm", "vllm", 0, 6, 2, "launches in the engine overhead model (sim/perf/overhead.c)", -1,
	vllm_rocm_rows, N_OF(vllm_rocm_rows), vllm_rocm_coll, N_OF(vllm_rocm_coll), NULL
};
