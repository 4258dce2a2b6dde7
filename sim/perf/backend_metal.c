/*
 * backend_metal: llama.cpp on Apple Silicon GPUs (ggml's Metal backend),
 * the kernel rows and the per-kernel floor of the "llama.cpp-metal"
 * backend (sim/perf/backend.h describes what a row is and how it is
 * looked up).
 *
 * What llama.cpp runs there: kernel_mul_mm (simdgroup 8x8 matrices, the
 * weights dequantized into threadgroup memory) for batches above 8
 * tokens, kernel_mul_mv / mul_mv_ext (one or a few tokens, each weight row
 * read once) below, mul_mm_id / mul_mv_id for MoE experts,
 * kernel_flash_attn_ext for prefill and its _vec variant for decode, all
 * encoded into one command buffer a step: every node of the ggml graph is
 * one dispatch, and each pays a floor of a few microseconds.
 *
 * The numbers are component measurements (test-backend-ops perf on Metal,
 * copy and GEMM benchmarks on M-series GPUs), each cited next to it; the
 * llama-bench pp512 / tg128 tables (discussion #4167,
 * tests/accuracy/llamacpp_apple.py) are end-to-end and only check the
 * composition. Apple publishes no FLOP rates: the profiles' peaks are
 * cores x 128 FP32 lanes x 2 x clock (FP16 at the same rate on M1-M4), so
 * the compute fractions below are of that figure.
 *
 * Invariants: the table ends with the fallback row; the collectives hold
 * one ring row with no limit. Const data only.
 */
#include "backend_tables.h"

#define N_OF(a) ((int)(sizeof(a) / sizeof *(a)))

/* Prefill attention: fraction of the 16-bit peak by keys per query.
 * uncertain: no ggml flash_attn_ext table on Metal here. The curve is
 * MLX's fused SDPA on an M3 Ultra (raullenchai/Rapid-MLX PR #258, causal,
 * 32 heads, head dim 128): 35 / 88 / 88 / 95% of the same chip's measured
 * matmul at 1k / 4k / 16k / 32k tokens, applied to the GEMM row's 0.84
 * below (attention reaches that share of what a matmul reaches there). */
static const struct perf_curve sdpa_m3_ultra = {
	4, { 1024, 4096, 16384, 32768 }, { 0.294, 0.739, 0.740, 0.798 }
};

static const struct perf_kernel llamacpp_metal_rows[] = {
	/* F16 weights. Compute: 0.84 of the FP16 peak, the measured rate of
	 * an F16 GEMM on an M1 GPU (JuliaGPU/Metal.jl PR #80: MPS, N = 8192,
	 * Float16 -> Float32, 1.92 of 2.275 TFLOP/s on 7 cores); llama.cpp's
	 * own kernel_mul_mm shows ~88% ALU utilization at a 4096 x 4096 x 4096
	 * shape on an M1 Max in Xcode's counters (llama.cpp PR #2615), an
	 * upper bound for its FLOP rate (the counter includes address and
	 * conversion work). No small-M curve (half 0): up to 8 tokens
	 * llama.cpp runs the mat-vec kernels (mul_mv_ext, PR #10581), which
	 * read each weight once and are bandwidth-bound. Streaming: 1.0 of
	 * the LPDDR5 stream, which is itself a GPU copy (hwprofile.c: 0.795
	 * of the datasheet, an M2 Ultra copying at 636 of 800 GB/s). */
	{ .op = KOP_GEMM, .dtype = KDT_16, .gen = HW_TC_APPLE, .kernel = "kernel_mul_mm (simdgroup 8x8, F16) / kernel_mul_mv",
	  .compute_frac = 0.84, .half = 0, .bw_frac = 1.0,
	  .source = "Metal.jl PR #80: MPS F16 GEMM 0.84 of an M1's peak (llama.cpp PR #2615: mul_mm ~88% ALU, an upper bound); "
		    "mat-vec at the stream: M2 Ultra GPU copy 636 of 800 GB/s (chsasank/device-benchmarks)" },
	/* GGUF quantized weights (Q4_0, Q8_0, K-quants): the same mul_mm
	 * with dequantization (uncertain: no per-type Metal GEMM table here,
	 * F16's fraction), and the quantized mat-vec kernels at the stream
	 * (0.81 of the datasheet against the copy's 0.795): test-backend-ops perf MUL_MAT on an M3 Pro (150 GB/s;
	 * llama.cpp PR #27776, ub=1): q4_K / q6_K mat-vecs of 17,324-71,488 KiB
	 * at 122-126 GB/s, a slope of 121.5 GB/s between 17.7 MB (140.7 us)
	 * and 73.2 MB (597.3 us) = 0.81. Smaller matrices in that table (2.9-4.2
	 * MiB, 176-184 GB/s) stay in the system-level cache between runs,
	 * which a model's weights do not. */
	{ .op = KOP_GEMM, .dtype = KDT_LOW, .gen = HW_TC_APPLE, .kernel = "kernel_mul_mm (dequantizing) / kernel_mul_mv (q4/q5/q6/q8)",
	  .compute_frac = 0.84, .half = 0, .bw_frac = 1.0,
	  .source = "llama.cpp PR #27776 test-backend-ops M3 Pro q4_K/q6_K mat-vec: 121.5 GB/s slope = 0.81 of 150 GB/s; "
		    "compute uncertain: the F16 row's 0.84" },
	/* MoE experts: mul_mm_id / mul_mv_id. uncertain: no Metal
	 * MUL_MAT_ID table here; the dense rows' fractions. */
	{ .op = KOP_MOE, .dtype = KDT_ANY, .gen = HW_TC_APPLE, .kernel = "kernel_mul_mm_id / kernel_mul_mv_id",
	  .compute_frac = 0.84, .half = 0, .bw_frac = 1.0,
	  .source = "uncertain: no Metal MUL_MAT_ID table; the dense rows' 0.84 compute, the mat-vecs' stream (PR #27776)" },
	{ .op = KOP_ATTN_PREFILL, .gen = HW_TC_APPLE, .kernel = "kernel_flash_attn_ext (simdgroup)",
	  .curve = &sdpa_m3_ultra, .compute_frac = 1,
	  .source = "uncertain: MLX SDPA on M3 Ultra, 35-95% of its matmul at 1k-32k (Rapid-MLX PR #258), x 0.84" },
	/* Decode attention: flash_attn_ext_vec reads the KV cache at 0.25 of
	 * the datasheet, 0.31 of the 0.795 stream: test-backend-ops FLASH_ATTN_EXT on an M4 Max (546
	 * GB/s), kv = 16384, head dim 128, f16, 2 queries: 34.41 MiB read in
	 * 263.78 us = 137 GB/s (llama.cpp PR #23114, under an Xcode GPU
	 * capture, ALU 19%, occupancy 34%). Check, not fitted: llama-bench
	 * tg32 at depth on an M2 Ultra (PR #28439, Qwen3-30B-A3B Q8_0, 98 KB of
	 * KV a token) slows by 2.9 ms from 0 to 8,192 tokens, 0.35 of 800
	 * GB/s: this row is 40% slower there. */
	{ .op = KOP_ATTN_DECODE, .gen = HW_TC_APPLE, .kernel = "kernel_flash_attn_ext_vec (split-K)",
	  .compute_frac = 0.4, .half = 0, .bw_frac = 0.31,
	  .source = "llama.cpp PR #23114 test-backend-ops FLASH_ATTN_EXT M4 Max kv=16384 hd128: 137 GB/s = 0.25 of 546" },
	{ .fallback = true, .kernel = "roofline, no kernel data", .source = "device-class defaults (hw_default_efficiency)" },
};

/* Macs have no GPU-to-GPU link: llama.cpp spreads a model over several
 * through its RPC backend by layers, which never all-reduces. uncertain:
 * a ring over the profile's placeholder link, for a tensor split. */
static const struct perf_collective llamacpp_metal_coll[] = {
	{ "ring all-reduce (llama.cpp RPC, Thunderbolt)", TRAFFIC_RING, false, 0, 0, 0, true, 0.69, false,
	  "uncertain: llama.cpp RPC splits layers and never all-reduces; ring at vLLM PR #24532's NCCL fraction" },
};

/* The floor of one dispatch in a graph: test-backend-ops perf times a
 * graph of many copies of one op, so its smallest ops give the per-node
 * cost. M3 Pro: a q4_K mat-vec of 155 KiB, 5.15 us/run (PR #27776), 1.1 us
 * of it bytes at 150 GB/s: 4.1 us. M4 Max: iq3_xxs 4096 x 512 mat-vec (0.8
 * MB), 7.49 us/run (llama.cpp PR #28086), 1.8 us of it bytes at 0.795 of
 * 546 GB/s: 5.7 us. 5.0 us, between the two. Nodes a layer: 21,
 * estimate: llama.cpp's llama graph (llm_build_llama) dispatches two RMS
 * norms and their scales, the q / k / v / o, gate / up / down mat-muls,
 * SiLU and its product, two residual adds (15 with the matmuls), and two
 * ropes, two cache writes, the attention and its output copy (6); views
 * and reshapes are not dispatched. */
#define METAL_LAUNCH                                                                                       \
	"5.0 us a node: test-backend-ops smallest ops, M3 Pro 155 kB mat-vec 5.15 us (PR #27776), M4 Max 0.8 MB " \
	"7.49 us (PR #28086), less their bytes; 21 nodes a layer (estimate: llm_build_llama's graph)"

const struct perf_backend perf_backend_llamacpp_metal = {
	"llama.cpp-metal", "llama.cpp", 5.0, 15, 6, METAL_LAUNCH, 0,
	llamacpp_metal_rows, N_OF(llamacpp_metal_rows), llamacpp_metal_coll, N_OF(llamacpp_metal_coll), NULL
};
