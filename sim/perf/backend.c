#include "backend.h"

#include <assert.h>
#include <math.h>
#include <stddef.h>
#include <string.h>

#include "backend_tables.h"
#include "num.h"

#define N_OF(a) ((int)(sizeof(a) / sizeof *(a)))

/* ---- Prefill attention curves: fraction of the 16-bit peak by keys per
 * query. The benchmarks are non-causal runs of sequence length s (s keys
 * per query); a causal chunk is read at its mean keys per query, which
 * does the same work per query. */

/* FlashAttention-3, H100 SXM5, BF16, head dim 128, forward: 467, 565,
 * 625, 638, 646, 648 TFLOP/s at 512 … 16k (FA3 paper, arXiv 2407.08608,
 * fig. "Attention forward speed, head dim 128"), over 989.4. */
static const struct perf_curve fa3_hd128 = {
	6, { 512, 1024, 2048, 4096, 8192, 16384 }, { 0.472, 0.571, 0.632, 0.645, 0.653, 0.655 }
};
/* The same figure at head dim 256: 286, 427, 537, 612, 628, 642. */
static const struct perf_curve fa3_hd256 = {
	6, { 512, 1024, 2048, 4096, 8192, 16384 }, { 0.289, 0.432, 0.543, 0.619, 0.635, 0.649 }
};
/* FlashAttention-2 on Ampere/Ada: the shape of the curve above, to the
 * 70% plateau the FA2 paper (arXiv 2307.08691) reports on A100 ("50-73%
 * of the theoretical maximum"). uncertain: no per-length A100 table here. */
static const struct perf_curve fa2_ampere = {
	6, { 512, 1024, 2048, 4096, 8192, 16384 }, { 0.585, 0.662, 0.685, 0.696, 0.70, 0.70 }
};

/* Triton fused_moe's grouped GEMM: fraction of the clock-adjusted peak
 * by tokens per expert (vLLM PR #24700's H100 table; the row below). */
static const struct perf_curve fused_moe_tpe = { 3, { 128, 256, 384 }, { 0.301, 0.474, 0.522 } };

/* The same table's call cost at 1.0 of the stream (the BF16 row below);
 * the MXFP4 row borrows it as an estimate. */
#define TRITON_MOE_CALL_US 31.2

/* An sm90 FP8 grouped GEMM's compute rate by tokens per expert, as a
 * fraction of the clock-adjusted FP8 peak (1898 TFLOP/s on an H100 SXM at
 * 1755 MHz) after the rows pad to 64 (the CUTLASS sm90 tile): DeepGEMM,
 * wide experts (N 4096, K 7168). 160 tokens: 645 TFLOP/s, masked layout,
 * 16 groups, H100 (deepseek-ai/DeepGEMM PR #192, "Original"; its 32- and
 * 96-token points, 175 and 521, stream at 2.8 TB/s, bandwidth-bound, so
 * not compute points); 1024: 1233, masked, 1 group; 4096: 1288,
 * contiguous, 8 groups (DeepGEMM README tables, H800: the H100 SXM's
 * 132 SMs and FP8 peak). 645 / 1898 / (160 / 192) = 0.408, 0.650, 0.679. */
static const struct perf_curve fp8_grouped_tpe = { 3, { 160, 1024, 4096 }, { 0.408, 0.650, 0.679 } };

/* Triton fused_moe with FP8 (w8a8) experts: its streaming rate by the
 * expert's intermediate width on one GPU (N: 2N-wide gate/up, N-deep down
 * projection), as a fraction of the stream: narrow slices give each expert few thread blocks and a short
 * reduction (vLLM PR #46642: the block-FP8 gate-up GEMM "SM-bound" at
 * decode). Least squares of a call cost plus bytes over each table's
 * batch 1-16 (expected experts touched at uniform routing, as the tables'
 * random gating), residuals <= 7 us:
 *   N 256: 2.88 TB/s = 0.667 of the H200's 4.32, 23.6 us a call: vLLM PR
 *     #36559's (swap-AB, merged) H200 "Main" (before it) benchmark_moe table,
 *     Qwen3-Next-80B-A3B-Instruct-FP8 (block FP8; default TP2: E 512, top-10,
 *     K 2048): 29.97 / 33.00 / 46.43 / 62.29 / 99.91 us at batch 1-16;
 *   N 768: 2.54 TB/s = 0.821 of the H100's 3.1, 32.3 us: PR #24700's Qwen3-30B-A3B
 *     fp8_w8a8 H100 table (TP1: E 128, top-8, K 2048), batch 1-128;
 *   N 1024: 3.95 TB/s = 0.914 of 4.32, 27.1 us: PR #36554's (the same
 *     change, closed for #36559) H200 "Main" table, DeepSeek-R1-0528 (block
 *     FP8, TP2: E 256, top-8, K 7168): 77.42 / 112.23 / 190.77 / 350.54 us at batch 1-8.
 * Wider slices keep 0.914 (uncertain: no FP8 table above N 1024 here; PR
 * #44152's H20 BF16 Mixtral w13 kernel, N 14336, streams at 0.86). The
 * width stands for the whole shape (uncertain: DeepSeek-V3's N 256 slices
 * at TP8 have K 7168, Qwen3-Next's K 2048). */
static const struct perf_curve fused_moe_w8a8_bw = { 3, { 256, 768, 1024 }, { 0.667, 0.821, 0.914 } };

/* The same kernel's compute rate by tokens per expert, as a fraction of
 * the clock-adjusted FP8 peak (1898 TFLOP/s on an H100 SXM at 1755 MHz),
 * from vLLM PR #24700's H100 benchmark_moe
 * table (Qwen3-30B-A3B fp8_w8a8, TP1: E = 128, top-8, K 2048, N 768,
 * "Main"): 355.49 / 391.86 / 536.33 / 911.64 / 1647.57 us a call at
 * batch 256 / 512 / 1024 / 2048 / 4096 (16 … 256 tokens an expert), less
 * the row's 32.3 us, are 59.8 / 107.5 / 153.4 / 175.8 / 191.4 TFLOP/s of
 * real (unpadded) work: the tiles' padding at these sizes is inside the
 * figures, so the row pads nothing further (tile_m 1). Check, not fitted:
 * sglang's DeepSeek-V3 TP8 block-FP8 benchmark on H200 (vLLM's
 * fused_moe, 1.01 ms at batch 506-512, K 7168, N 256; test_moe). INT8
 * and FP4 experts take the same fractions of their own peaks (uncertain:
 * FP8 tables only). Wide experts: fused_moe_w8a8_width below. */
static const struct perf_curve fused_moe_w8a8_tpe = {
	5, { 16, 32, 64, 128, 256 }, { 0.0315, 0.0566, 0.0808, 0.0926, 0.1008 }
};

/* The same kernel's compute rate by the expert's slice width, times the
 * curve above. Up to 1024 wide: the tables above (256 wide at K 7168
 * within 22%, 768 at K 2048; both tables' experts hold about 5M weights a
 * GPU).
 * Estimate above it: no wide-expert FP8 Triton table was found, and an FP8
 * kernel of the same tiles is taken to reach at least the BF16 row's
 * FLOP/s on Mixtral's 7168-wide slices (443 TFLOP/s at 256 tokens an
 * expert in PR #24700's BF16 table, against 191 here: x 2.3), log-linear
 * in between; without it Mixtral-wide FP8 experts (--weights fp8 or a
 * per-tensor "fp8" checkpoint) turned compute-bound at a 64-sequence
 * decode, where the BF16 table of that shape stays bandwidth-bound. */
static const struct perf_curve fused_moe_w8a8_width = { 2, { 1024, 7168 }, { 1, 2.3 } };

/* ---- vLLM on CUDA ---- */
static const struct perf_kernel vllm_cuda[] = {
	/* cuBLAS/CUTLASS BF16 GEMM on Hopper: persistent (stream-K / tile
	 * scheduler) kernels, so no wave quantization. 0.82 of the
	 * clock-adjusted peak: about 0.79 of the 989 TFLOP/s datasheet at
	 * large M (cuBLAS BF16 ~750-800 TFLOP/s on H100 SXM at 4k-8k cubes;
	 * uncertain: read from public GEMM sweeps, not a table stored here),
	 * with the SXM part holding ~1755 of 1830 MHz. Check, not fitted:
	 * torch.matmul BF16 on an H100 SXM, 788.7 / 797.5 TFLOP/s at 4096^3 /
	 * 8192^3 (zzc0721/torch-performance-test-data #79), against 778-780
	 * from this row (test_steptime hopper_gemm_meets_the_best_shape_tables). Small M: the tokens
	 * pad to whole 64-row tiles, the M of Hopper's only warpgroup MMA
	 * (PTX ISA, wgmma.mma_async .m64nNk16; CUTLASS sm90 tiles are 64 or
	 * 128 rows): a shape fact, no fit (it replaces the H100 runs'
	 * half_tokens of 24).
	 * Tried and not adopted (2026-12-01): near the ridge a GEMM is slower
	 * than max(tc, tm). vLLM PR #49363's H100 torch-bf16 column
	 * (bench_fp8_gemm.py, Gemma-4-31B's N = 43008, K = 5376: 48.3 / 188.0
	 * / 364.7 / 593.3 TFLOP/s at M = 16 / 64 / 128 / 256; N = 12288: 46.5 /
	 * 182.6 / 352.6 at 16 / 64 / 128) is met within 4% by (tc^p +
	 * tm^p)^(1/p), p = 3.3, where this row's max is 19% fast at N = 43008,
	 * M = 256 (707 against 593.3); PR #17126's Llama-3.1-8B shape (N 6144,
	 * K 4096, GPU not named: 160.6 / 307.9 / 544.3 at 64 / 128 / 256) is
	 * 13-24% fast on the max, 7-13% on the blend. The table has no row
	 * past M = 256, so the exponent rests on one ridge point; with it the
	 * H100 check moved in sample 9.81 / 9.53 / 9.50 -> 9.90 / 9.33 / 9.30%
	 * (TTFT / ITL / E2E) but cross-validated 9.8 / 5.8 / 5.8 -> 10.5 /
	 * 6.3 / 6.3% (the TP-2 folds' prefill and mixed steps longer), so it
	 * waits for a table at M = 512-8192. */
	{ .op = KOP_GEMM, .dtype = KDT_16, .gen = HW_TC_HOPPER, .kernel = "cuBLAS/CUTLASS BF16 GEMM (sm90)",
	  .compute_frac = 0.82, .tile_m = 64, .bw_frac = 0.97,
	  .source = "cuBLAS BF16 ~0.79 of H100 datasheet at large M (uncertain); M padded to wgmma's 64 rows (PTX ISA); GEMV 0.97 of stream (test-backend-ops, llama.cpp #15131)" },
	/* FP8 GEMM on Hopper (CUTLASS scaled_mm / DeepGEMM-class): 0.55 of
	 * the FP8 peak. DeepGEMM reports up to 1550 TFLOP/s on H800 (0.78)
	 * for its best shapes; vLLM's per-tensor CUTLASS path sits lower.
	 * uncertain: 0.55 = the former 0.7 ratio to bf16, set from TensorRT-LLM's
	 * FP8 table (end-to-end). */
	{ .op = KOP_GEMM, .dtype = KDT_LOW, .gen = HW_TC_HOPPER, .kernel = "CUTLASS FP8 scaled_mm (sm90)",
	  .compute_frac = 0.575, .tile_m = 64, .bw_frac = 0.97,
	  .source = "DeepGEMM <=0.78 of FP8 peak (H800); 0.575 uncertain, from the TRT-LLM FP8 table; M padded to wgmma's 64 rows" },
	/* Datacenter Blackwell (sm100, tcgen05). For a profile without measured
	 * GEMMs (B200 and GB200 carry theirs): 0.95 of B200's best shapes
	 * (ml-engineering MAMF: BF16 1745 of 2250, FP8 3432.5 of 4500 TFLOP/s
	 * at 1856 MHz), 0.737 and 0.725. At a serving shape vLLM's CUTLASS FP8
	 * plateaus lower: 2447-2545 at N 6144, K 4096, M 16384 (vLLM PR
	 * #19566), 0.54-0.57 of 4500 (test_devfacts). NVFP4 reaches less of its
	 * own peak (3038.8-3904.3 of 9000, vLLM PR #20646), which a profile's
	 * matmul_fp4_tflops carries; without one FP4 takes this FP8 fraction
	 * (uncertain, fast). */
	{ .op = KOP_GEMM, .dtype = KDT_LOW, .gen = HW_TC_BLACKWELL, .kernel = "CUTLASS FP8/FP4 GEMM (sm100)",
	  .compute_frac = 0.725, .tile_m = 128, .bw_frac = 0.97,
	  .source = "0.95 x B200 FP8 MAMF 3432.5 of 4500 (ml-engineering); check: vLLM PR #19566 CUTLASS FP8 2447-2545 at "
		    "K 4096; M padded to tcgen05's 128 rows" },
	{ .op = KOP_GEMM, .dtype = KDT_16, .gen = HW_TC_BLACKWELL, .kernel = "cuBLAS/CUTLASS BF16 GEMM (sm100)",
	  .compute_frac = 0.737, .tile_m = 128, .bw_frac = 0.97,
	  .source = "0.95 x B200 BF16 MAMF 1745 of 2250 (ml-engineering); M padded to tcgen05.mma's 128 rows (its full-rate "
		    "single-SM shape)" },
	/* RTX / GeForce Blackwell (sm_120: RTX 5090, RTX PRO 6000) has no
	 * tcgen05, so neither the sm100 rows above nor Hopper's wgmma ones:
	 * CUTLASS's sm120 GEMMs are sm90-style TMA warp-specialized kernels on
	 * warp-level mma.sync (PyTorch PR #155991: "the same SM100 template",
	 * cluster 1x1x1, tiles 128x128x128, or 64 rows with the Pingpong
	 * schedule), persistent, so no waves; M pads to 64 rows. FP8: CUTLASS
	 * sm120 row-wise scaled_mm (what vLLM builds for 12.0, SCALED_MM_ARCHS
	 * "12.0f") on an RTX 5090, N = K = 4096: 17.56 / 69.63 / 266.57 /
	 * 339.28 / 388.91 TFLOP/s at M = 16 / 64 / 256 / 1024 / 4096 (PR
	 * #155991), 0.928 of the 419 FP32-accumulate peak at 4096; 0.88 = 0.95
	 * of that (serving shapes, steptime.c's MAMF_SERVING). BF16: 0.86 =
	 * 0.95 x 457.61 / 503.8, cuBLASLt's best shape on an RTX PRO 6000
	 * (xzwgit/gpu-flops-bench README). A profile's measured GEMMs
	 * ([arch] matmul_*) replace both. */
	{ .op = KOP_GEMM, .dtype = KDT_LOW, .gen = HW_TC_BLACKWELL_SM120, .kernel = "CUTLASS FP8/FP4 scaled_mm (sm120, mma.sync)",
	  .compute_frac = 0.88, .tile_m = 64, .bw_frac = 0.97,
	  .source = "PyTorch PR #155991 RTX 5090 CUTLASS sm120 FP8 row-wise: 388.91 TFLOP/s at 4096^3 = 0.928 of 419, x 0.95; "
		    "M padded to the Pingpong schedule's 64 rows" },
	{ .op = KOP_GEMM, .dtype = KDT_ANY, .gen = HW_TC_BLACKWELL_SM120, .kernel = "cuBLAS/CUTLASS BF16 GEMM (sm120, mma.sync)",
	  .compute_frac = 0.86, .tile_m = 64, .bw_frac = 0.97,
	  .source = "cuBLASLt best shape 457.61 of 503.8 on RTX PRO 6000 (gpu-flops-bench) x 0.95; persistent TMA kernels on "
		    "mma.sync (PyTorch PR #155991), M padded to 64 rows; GEMV 0.97 of stream (llama.cpp #15131)" },
	/* Ampere / Ada cuBLAS: classic tile kernels, one 128x128 tile per SM
	 * per wave (CUTLASS 2.x threadblock shapes of 64 or 128 rows), so
	 * partial waves cost a full one. 0.80 of the clock-adjusted peak
	 * (A100 cuBLAS BF16 ~250 of 312 TFLOP/s at large cubes; uncertain:
	 * public GEMM sweeps give 240-270, none stored here). Small M: the
	 * rows pad to whole 64- or 128-row threadblock tiles (a shape fact,
	 * no fit; tile_eff picks the better of the two per wave), on Ampere as
	 * on Ada since 2026-12-01: it replaces the former H100 end-to-end
	 * fit's half at 24 tokens, which no A100 measurement supported (none
	 * of cuBLAS by M on A100 was found). The padding had waited on a tuner
	 * bug it exposed (`compare c13-bench-serve --hardware a100-80gb-sxm`
	 * selected 14.22 req/s at a setting its own --fixed rerun gave as
	 * 11.88: the fine search started at the coarse rate, --fixed at the
	 * scenario's load; sim/plan/tune.c now starts both there). Check, not
	 * fitted: the TensorRT-LLM A100 TTFTs of measured_public.md move from
	 * 16.7 / 24.8% to 22.2 / 30.2% MAPE (70B TP4 / 7B; the 128-token ones
	 * were already 24-35% short, docs/accuracy.md). */
	{ .op = KOP_GEMM, .dtype = KDT_ANY, .gen = HW_TC_AMPERE, .kernel = "cuBLAS BF16 GEMM (sm80, 128x128 tiles)",
	  .waves = true, .compute_frac = 0.80, .tile_m = 64, .bw_frac = 0.97,
	  .source = "A100 cuBLAS ~0.80 of peak at large M (uncertain); M padded to 64/128-row tiles in waves (CUTLASS 2.x shapes); GEMV 0.97 of stream (llama.cpp #15131)" },
	{ .op = KOP_GEMM, .dtype = KDT_LOW, .gen = HW_TC_ADA, .kernel = "CUTLASS FP8 scaled_mm (sm89, 128x128 tiles)",
	  .waves = true, .compute_frac = 0.56, .tile_m = 64, .bw_frac = 0.97,
	  .source = "uncertain: no Ada FP8 GEMM table here; Hopper's FP8/BF16 ratio (0.575/0.82) on the Ada BF16 row" },
	{ .op = KOP_GEMM, .dtype = KDT_ANY, .gen = HW_TC_ADA, .kernel = "cuBLAS BF16 GEMM (sm89, 128x128 tiles)",
	  .waves = true, .compute_frac = 0.80, .tile_m = 64, .bw_frac = 0.97,
	  .source = "0.80 as Ampere (uncertain); M padded to 64/128-row tiles in waves (CUTLASS 2.x shapes); FP32-accumulate peak (PyTorch default), Ada whitepaper" },
	/* Triton fused_moe (vLLM's default MoE path on CUDA), fitted to
	 * vLLM PR #24700's H100 table (benchmark_moe.py, tuned config,
	 * Mixtral-8x7B BF16 at TP2: E=8, N=7168, K=4096, top-2; the whole
	 * fused_moe call: routing, align, both grouped GEMMs, activation).
	 * Streaming: 144 us at batch 1 (2 experts, 352 MB) to 471-494 us at
	 * 16-128 tokens (all 8, 1.41 GB), least squares over the eleven
	 * points of batch 1-128 (experts touched at uniform routing, as its
	 * random gating): 31.2 us a call + bytes at the 3.1 TB/s stream
	 * (a free slope gives 3.11 TB/s and 32.5 us), residuals <= 9.8 us
	 * (until 2026-12-03 18.5 us at a stream taken as 3.0, residuals
	 * <= 12.1). Compute, by tokens per expert (2T/8): 662 / 834 / 1123 us
	 * at T = 512 / 1024 / 1536 less the 31.2 us are 286 / 450 / 496
	 * TFLOP/s = 0.301 / 0.474 / 0.522 of the clock-adjusted 949 (the
	 * roofline's max with the
	 * 1.41 GB read reproduces each point). Check, not fitted: PR
	 * #44152's H20 w13-only kernel (Mixtral shape, batch 1: 0.076 ms
	 * for 235 MB) is 65 us of bytes at this rate plus an 11 us floor,
	 * under this row's 31.2 us for the whole call. Tokens per expert pad
	 * to BLOCK_SIZE_M (steptime.c moe_block_m). */
	/* MXFP4 experts with BF16 activations on Hopper (gpt-oss): vLLM's
	 * default there is OpenAI's triton_kernels matmul_ogs (Mxfp4Backend
	 * TRITON; Marlin without triton_kernels), which upcasts each weight
	 * tile to BF16 for wgmma. Streaming: 2290 GB/s on H200 for its
	 * bf16 x mxfp4 MoE (triton PR #9248, bench_mlp's gpt-oss-x2 shapes,
	 * E 128, top-4, before that PR's 15% and PR #9279's further 6%, both
	 * Jan 2026, later than the copy vLLM 0.15 vendors): 0.53 of the
	 * H200's 4.32 TB/s stream, taken as a fraction on H100 too (same SMs
	 * and clocks; uncertain: if the upcast binds, not HBM, H100 reaches
	 * more of its stream). triton PR #6833 puts the upcast path at 28-49%
	 * utilisation. Call cost and compute: estimate, the BF16 Triton
	 * row's (31.2 us, its curve): no matmul_ogs table by batch on Hopper
	 * was found. Off Hopper this row does not apply (Blackwell runs
	 * FlashInfer's native MXFP4 MoE; others Marlin): the BF16 rows. */
	{ .op = KOP_MOE, .dtype = KDT_MXFP4, .gen = HW_TC_HOPPER, .kernel = "triton_kernels matmul_ogs (bf16 x mxfp4, sm90)",
	  .curve = &fused_moe_tpe, .compute_frac = 1, .half = 0, .fixed_us = TRITON_MOE_CALL_US, .bw_frac = 0.53,
	  .source = "triton PR #9248: bf16 x mxfp4 MoE 2290 GB/s on H200 (0.53 of stream; 2640-2800 after PRs #9248/#9279); "
		    "estimate: call cost and compute of the BF16 Triton fused_moe row (vLLM PR #24700)" },
	{ .op = KOP_MOE, .dtype = KDT_16, .gen = KGEN_ANY, .kernel = "Triton fused_moe (grouped GEMM, BF16)",
	  .curve = &fused_moe_tpe, .compute_frac = 1, .half = 0, .fixed_us = TRITON_MOE_CALL_US, .bw_frac = 1.0,
	  .source = "vLLM PR #24700 H100 benchmark_moe table (Mixtral BF16 TP2): 31.2 us a call + bytes at 1.0 of stream; "
		    "0.301-0.522 of peak at 128-384 tokens an expert" },
	/* Per-channel / per-tensor FP8 experts on Hopper (Scout's
	 * compressed-tensors checkpoint): vLLM's CUTLASS path (cutlass_moe_fp8:
	 * per-token activation quant, expert offsets, row shuffle, two grouped
	 * GEMMs, SiLU-and-mul, requant, unshuffle). Streaming: 71 us a call +
	 * bytes at 1.0 of stream, from sglang PR #5680's H200 table of the
	 * same kernel (a port of vLLM PR #13972's; cutlass_moe_cuda_graphs, 25
	 * calls a figure, Mixtral at TP4: E=8, top-2, K 4096, N 7168, 88.1 MB
	 * an expert): 112 us at batch 1 (2 experts), 232 us at 16 (7.92
	 * expected): a slope of 4.35 TB/s, 1.006 of the H200's 4.32 stream,
	 * and 71 us a call; batch 4 and 8 (200, 240 us) sit 9% above the line
	 * (random top-k, tested). The same table's Triton fused_moe column,
	 * 30 us + bytes at 0.98 of stream, meets PR #24700's H100 FP8 Triton
	 * table (32.3 us, the w8a8 row's check): the CUTLASS path costs ~40 us
	 * more a call at decode batches. Check, not fitted: vLLM PR #20762's
	 * eager cutlass_moe_fp8 (E=8, top-2, K 4096, N 28672; Hopper, its
	 * batch-1-to-16 slope is 2.98 TB/s, 0.96 of an H100 SXM's stream): 326
	 * us at batch 1, 1034 at 16, 1041 at 32; this row gives 298, 971, 980
	 * (-6..-8%, tested; -3..-6% while the H100's stream was taken as 3.0). Compute: fp8_grouped_tpe (DeepGEMM's FP8 grouped
	 * GEMM on H100/H800: no CUTLASS MoE table above 128 tokens was found;
	 * its grouped GEMM is the same wgmma FP8 pipeline), tokens an expert
	 * padded to 64 rows (grouped_mm_c3x's sm90 tiles are 64 rows; swap-AB
	 * configs for small M). INT8 experts would take this row too
	 * (uncertain: vLLM runs them through Triton). */
	{ .op = KOP_MOE, .dtype = KDT_FP8_SCALED, .gen = HW_TC_HOPPER, .kernel = "CUTLASS grouped GEMM FP8 (cutlass_moe_fp8, sm90)",
	  .curve = &fp8_grouped_tpe, .compute_frac = 1, .tile_m = 64, .fixed_us = 71, .bw_frac = 1.0,
	  .source = "sglang PR #5680 H200 cutlass_moe (CUDA graphs, Mixtral TP4): 71 us a call + bytes at 1.0 of stream "
		    "(check: vLLM PR #20762, -3..-6%); compute: DeepGEMM FP8 grouped GEMM H100/H800 (PR #192, README), "
		    "0.41-0.68 of the FP8 peak at 160-4096 tokens an expert" },
	/* FP8 / INT8 / FP4 experts (w8a8 with dynamic per-token activation
	 * quantization: an extra kernel and scaled MMAs). Bandwidth (since
	 * 2026-12-02): fused_moe_w8a8_bw by expert slice width, one of its
	 * points PR #24700's benchmark_moe table (Qwen3-30B-A3B fp8_w8a8, TP1:
	 * 44.5 us at batch 1 to 273.7 us at 128, a least-squares 32.3 us a call
	 * + bytes at 2.54 TB/s, 0.821 of stream, residuals <= 4.2 us, tested); until then
	 * one 0.86 of stream, PR #44152's H20 w13 kernel at batch 1 (Mixtral
	 * shape, BF16: 0.076 ms for 235 MB, 3.09 TB/s = 0.86 of a 0.90 stream),
	 * now a check of the curve's wide end (0.914). That table's 32.3 us a call (E=128, top-8) is
	 * the row's call cost since Scout's experts left it (2026-12-01; it
	 * was not taken while the row served them, since on sm90 vLLM's FP8
	 * MoE oracle ranks its CUTLASS grouped
	 * GEMM (CutlassExpertsFp8, via TritonOrCutlassExperts, which falls
	 * back to Triton only on sm100 at M <= 8) ahead of Triton for
	 * per-channel / per-token FP8 such as Scout's compressed-tensors
	 * checkpoint (vLLM PR #16537: CUTLASS the default for
	 * Llama-4-Scout-FP8-dynamic on H100): those take the CUTLASS row
	 * above; this one serves block-FP8, INT8 and FP4 experts, FP8 by
	 * --weights fp8 alone, and FP8 off Hopper). Check: sglang PR #5680's
	 * H200 table times Triton fused_moe under CUDA graphs at 30 us a call
	 * + bytes at 0.98 of stream (Mixtral TP4 shape). Compute (2026-12-02):
	 * fused_moe_w8a8_tpe, the same PR #24700 table's batch 256-4096 points
	 * (0.032-0.101 of the clock-adjusted FP8 peak at 16-256 tokens an
	 * expert, a fraction of the experts' own dtype peak), in place of the
	 * estimate 0.58 x the GEMM rows' low-precision ratio (the former fit to
	 * the Scout runs, 3.4-3.8x the table's rate at batch 2048-4096). That
	 * rate was not taken while Scout's FP8 experts used this row (it
	 * saturated those runs); they take the CUTLASS row above since
	 * 2026-12-01, so none of the 15 runs reads this row now. Check, not
	 * fitted: sglang's DeepSeek-V3 TP8 block-FP8 table on H200 (vLLM's
	 * fused_moe, 1.01 ms a call at batch 506-512: K 7168, N 256, 16 tokens
	 * an expert), within 25% (test_moe; wider K than Qwen3's). The BF16
	 * row above on Scout's FP8 experts was tried (2026-12-01): in-sample
	 * ITL 5.35 -> 7.08%, cv 6.2 -> 8.1%, so the FP8 path is not the BF16
	 * kernel's. */
	{ .op = KOP_MOE, .dtype = KDT_LOW, .gen = KGEN_ANY, .kernel = "Triton fused_moe (w8a8)",
	  .curve = &fused_moe_w8a8_tpe, .compute_frac = 1, .tile_m = 1, .half = 0, .fixed_us = 32.3,
	  .bw_curve = &fused_moe_w8a8_bw, .width_curve = &fused_moe_w8a8_width,
	  .source = "vLLM PRs #36559 / #24700 / #36554 benchmark_moe tables (H200 / H100 / H200): 0.667 / 0.821 / 0.914 of "
		    "stream at expert slices 256 / 768 / 1024 wide; 32.3 us a call (PR #24700 H100 fp8_w8a8 table; check: "
		    "sglang PR #5680, 30 us on H200); compute: PR #24700's H100 fp8_w8a8 table, 0.032-0.101 of the FP8 peak at "
		    "16-256 tokens an expert up to 1024-wide slices; estimate: x2.3 at 7168 wide (the BF16 table's FLOP/s)" },
	/* FlashAttention-3 prefill on Hopper (vLLM's FLASH_ATTN backend). */
	{ .op = KOP_ATTN_PREFILL, .gen = HW_TC_HOPPER, .head_dim_max = 128, .kernel = "FlashAttention-3 (varlen, paged)",
	  .curve = &fa3_hd128, .compute_frac = 1,
	  .source = "FA3 paper (arXiv 2407.08608) H100 BF16 hd128 forward: 467-648 TFLOP/s by length" },
	{ .op = KOP_ATTN_PREFILL, .gen = HW_TC_HOPPER, .kernel = "FlashAttention-3 (varlen, paged)",
	  .curve = &fa3_hd256, .compute_frac = 1,
	  .source = "FA3 paper (arXiv 2407.08608) H100 BF16 hd256 forward: 286-642 TFLOP/s by length" },
	{ .op = KOP_ATTN_PREFILL, .gen = HW_TC_BLACKWELL, .kernel = "FlashInfer / TRT-LLM-gen attention (sm100)",
	  .curve = &fa3_hd128, .compute_frac = 1,
	  .source = "uncertain: no Blackwell attention table here; FA3's Hopper fractions" },
	{ .op = KOP_ATTN_PREFILL, .gen = KGEN_ANY, .kernel = "FlashAttention-2 (varlen, paged)",
	  .curve = &fa2_ampere, .compute_frac = 1,
	  .source = "FA2 paper (arXiv 2307.08691): up to ~70% of A100 peak; shape from FA2 on H100 (FA3 paper)" },
	/* Paged decode attention (vLLM's FlashAttention fork, split-KV):
	 * each layer's call a fixed time, plus a latency floor for each
	 * (sequence, KV head) work unit spread over the SMs, plus its KV
	 * bytes at a streaming rate set by the GQA group (query heads per KV
	 * head): FA packs a group's heads into the rows of one tile, so a
	 * grouped model fills its MMA rows and MHA (one head a tile) does not.
	 * GQA: 13.7 us + bytes at 2.75 TB/s (0.887 of the H100's 3.1 TB/s
	 * stream), least squares over the batch-1 decode timings of
	 * vllm-project/flash-attention PR #63 (H100, "main", Qwen-32B TP2
	 * shape: 20 query / 4 KV heads, hd 128, bf16): 14.8, 15.6, 16.5,
	 * 19.1, 26.3 us at 1k-16k tokens (2.1-33.6 MB), residuals < 0.8 us
	 * (4 units: the unit term is 0.03 us there).
	 * Unit cost 0.933 us a unit per SM: microsoft/onnxruntime PR #21414,
	 * FA2 paged batch decode on A100 SXM 80GB (nvbench, BWUtil over
	 * 2.039 TB/s), 64 sequences, 32 query = 32 KV heads, hd 128, page
	 * 256: 107.7, 186.8, 338.8 us at 128.5, 256.5, 512.5 MiB are 31.4 us
	 * + bytes at 1.746 TB/s (residuals < 1.5 us); 31.4 - 13.7 = 17.7 us
	 * over 64 x 32 / 108 SM = 19.0 units a SM. uncertain: A100's call
	 * floor taken as the H100's 13.7. Check, not fitted: the same PR's
	 * H100 SXM FA2 GQA table (64 sequences, 64 query / 8 KV heads, page
	 * 256: 21.1, 23.0, 28.8, 43.6 us at 9-65 MiB) is 20.7, 23.8, 29.9,
	 * 42.1 us on this GQA row, within 4%. This row is the first of the
	 * two KGEN_ANY rows below: the table is searched in order, so the
	 * Hopper and Ampere rows, fitted to vLLM's own kernel timed in a CUDA
	 * graph at serving sizes, come before it and replace it there;
	 * elsewhere this H100 fraction stands (uncertain: no table of vLLM's
	 * decode on Ada was fitted; check, aiconfigurator's L40S table of
	 * vLLM 0.14.0's decode, the Hopper row's selection, at the L40S's
	 * 0.778 TB/s stream: best 0.918, rms 5.2% at this row's 0.887). */
	/* The 13.7 us and launches: PR #63's table times one call at a time
	 * (its timer unnamed; the repo's benchmarks use triton's do_bench,
	 * which flushes the L2 before each call, so the host has launched the
	 * call before the GPU reaches it). No host launch cost is in it, only
	 * the GPU's own per-kernel floor, which a graph-replayed step pays too
	 * (1.26 us in a graph, te42kyfo/gpu-benches h200_graph.txt; eager back
	 * to back 2.43 us is the host's rate, h200.txt): nothing subtracted. */
	/* GQA on Hopper: the FA decode rows' call floor and unit cost
	 * (PERF_FA_DECODE_*, backend_tables.h), its KV bytes at 0.985 of the stream (3.05 TB/s on an H100 SXM), least
	 * squares in log time over ai-dynamo/aiconfigurator's H100 SXM table
	 * of vLLM 0.14.0's own decode attention
	 * (systems/data/h100_sxm/attention/vllm/0.14.0/generation_attention_perf.parquet,
	 * kernel vllm_flash_attn, bf16 KV, hd 128, one layer's call with its KV
	 * write, replayed in a CUDA graph; collector/vllm/collect_attn.py):
	 * the 259 GQA points of serving shape, contexts of 255 tokens or more,
	 * 256 (sequence, KV head) units or more and 100 MB or more of KV (past
	 * twice the 50 MB L2: the table reads one layer's cache over and over,
	 * so smaller ones are L2-resident, where a step's 32-80 layers read
	 * theirs cold), rms 6.0% (PR #63's 0.887 there: 10.5%), worst -21% at
	 * 512 sequences x 255 tokens (2 KV heads); e.g. 64 sequences x 2,047 tokens, 32 / 8
	 * heads: 185.1 us measured, 193.1 here (212.6 at 0.887). PR #63's
	 * slope came from 2-34 MB, under the L2's size, where the floor
	 * dominates. Not fitted: fewer than 128 (sequence, KV head) units,
	 * where the table is slower than this row (11% on average at 32-127
	 * units, 33% under 32, up to ~2x at one or two sequences of 16k-131k
	 * tokens): vLLM's split-KV choice in a graph, not modelled
	 * (docs/step-model.md "Not done"). Check: the MHA row
	 * below (1.0 of stream, 13.7 us) meets the table's MHA points (8 = 8
	 * heads) of the same selection at rms 6.8% (its own best slope 0.969). */
	{ .op = KOP_ATTN_DECODE, .gen = HW_TC_HOPPER, .group_min = 2, .kernel = "FlashAttention-3 paged decode (vLLM fork, sm90, GQA packed)",
	  .compute_frac = 0.49, .fixed_us = PERF_FA_DECODE_CALL_US, .unit_us = PERF_FA_DECODE_UNIT_US, .bw_frac = 0.985,
	  .source = "aiconfigurator H100 SXM vLLM 0.14.0 generation-attention table (CUDA graph, >= 100 MB): bytes at 0.985 "
		    "of stream; 13.7 us a call (vllm-project/flash-attention PR #63), 0.933 us a unit (onnxruntime PR #21414)" },
	/* Ampere (vLLM runs its FlashAttention-2 fork there): the FA decode
	 * rows' call floor and unit cost, the KV bytes at the rates of
	 * aiconfigurator's A100 SXM 80GB table of vLLM 0.14.0's own decode
	 * (systems/data/a100_sxm/attention/vllm/0.14.0/generation_attention_perf.parquet,
	 * vllm_flash_attn in a CUDA graph, bf16 KV, hd 128), the Hopper row's
	 * selection (>= 255 tokens, >= 256 units, >= 100 MB): GQA 0.792 of
	 * the A100's 1.835 TB/s stream (0.90 of its datasheet, hwprofile.c),
	 * rms 9.8% over 259 points (PR #63's H100 0.887: 14.0%); MHA (8 = 8
	 * heads) 0.853, rms 10.1% over 96 (ONNX Runtime's FA2 0.95, the last
	 * decode row: 14.2%). A free fit of floor and unit as well gains
	 * under 2 points (25 us and no unit term). Other Ampere parts (A10G,
	 * RTX 3090) take the fractions of their own streams (uncertain: no
	 * table of theirs). */
	{ .op = KOP_ATTN_DECODE, .gen = HW_TC_AMPERE, .group_min = 2, .kernel = "FlashAttention-2 paged decode (vLLM fork, sm80, GQA)",
	  .compute_frac = 0.49, .fixed_us = PERF_FA_DECODE_CALL_US, .unit_us = PERF_FA_DECODE_UNIT_US, .bw_frac = 0.792,
	  .source = "aiconfigurator A100 SXM vLLM 0.14.0 generation-attention table (CUDA graph, >= 100 MB): bytes at 0.792 "
		    "of stream; 13.7 us a call (vllm-project/flash-attention PR #63), 0.933 us a unit (onnxruntime PR #21414)" },
	{ .op = KOP_ATTN_DECODE, .gen = HW_TC_AMPERE, .kernel = "FlashAttention-2 paged decode (vLLM fork, sm80, MHA)",
	  .compute_frac = 0.49, .fixed_us = PERF_FA_DECODE_CALL_US, .unit_us = PERF_FA_DECODE_UNIT_US, .bw_frac = 0.853,
	  .source = "aiconfigurator A100 SXM vLLM 0.14.0 generation-attention table (CUDA graph, >= 100 MB), MHA points: bytes "
		    "at 0.853 of stream; 13.7 us a call (PR #63), 0.933 us a unit (onnxruntime PR #21414)" },
	/* Datacenter Blackwell (sm100; vLLM runs FlashInfer there): 7 us a
	 * call + KV bytes at the profile's stream (1.0, the cap: 6.93 TB/s on
	 * a B200, the 0.90 HBM default), no unit term, GQA and MHA alike:
	 * least squares in log time over ai-dynamo/aiconfigurator's B200 table
	 * of vLLM 0.19.0's decode
	 * (systems/data/b200_sxm/attention/vllm/0.19.0/generation_attention_perf.parquet,
	 * vllm_flashinfer in a CUDA graph, bf16 KV, hd 128), the Hopper row's
	 * selection but past twice the 126 MB L2 (>= 260 MB): 265 points, rms
	 * 5.0% (GQA 5.2, MHA 4.6), where the rows below gave 29 / 23% (FA's
	 * floor and unit term are too high for this kernel: one sequence of
	 * 512 tokens takes 8.7 us). Free, the slope would be 1.07 of the
	 * stream (7.42 TB/s, 0.963 of the datasheet; rms 3.8%): the stream is
	 * an uncertain default this kernel beats, kept as the row's cap (a
	 * measured B200 copy figure would settle it). Check, not fitted: the
	 * B300 and GB200 tables of the same version at their own default
	 * streams, rms 3.0 and 7.4%. */
	{ .op = KOP_ATTN_DECODE, .gen = HW_TC_BLACKWELL, .kernel = "FlashInfer / TRT-LLM-gen paged decode (sm100)",
	  .compute_frac = 0.49, .fixed_us = 7, .bw_frac = 1.0,
	  .source = "aiconfigurator B200 vLLM 0.19.0 generation-attention table (CUDA graph, >= 260 MB): 7 us a call + "
		    "bytes at the stream (its fit 1.07, capped); check: its B300 and GB200 tables (rms 3.0 / 7.4%)" },
	{ .op = KOP_ATTN_DECODE, .gen = KGEN_ANY, .group_min = 2, .kernel = "FlashAttention-3 paged decode (split-KV, GQA packed)",
	  .compute_frac = 0.49, .fixed_us = PERF_FA_DECODE_CALL_US, .unit_us = PERF_FA_DECODE_UNIT_US, .bw_frac = 0.887,
	  .source = "vllm-project/flash-attention PR #63 H100 batch-1 GQA decode: 13.7 us + bytes at 2.75 TB/s (0.887 of stream); "
		    "0.933 us a (seq, KV head) unit per SM: onnxruntime PR #21414 A100 FA2 MHA decode table" },
	/* MHA (one query head a KV head) on Hopper: vLLM runs its FA3 fork,
	 * whose decode path takes 64-row tiles (PR #63) where MHA's single
	 * query row per head wastes most of a 128-row tile. No table at that
	 * kernel's MHA shapes; FA3 upstream before the fix bounds it from
	 * below: Dao-AILab/flash-attention issue #1572 (H100, batch 16, 32 =
	 * 32 heads, hd 128, page 8): 27.6 / 292.0 / 567.2 us at 128 / 2000 /
	 * 4000 tokens (33.5 / 524 / 1049 MB), a line of 10-13 us + bytes at
	 * 1.88 TB/s = 0.63 of stream; the 64-row tile lifts that H20
	 * run 1.7x, 0.63 x 1.7 = 1.07 of stream, so the fork streams at the
	 * stream (1.0, the cap) and pays the GQA row's 13.7 us call floor
	 * (PR #63; #1572's intercept is 10-13 us at 512 work units, so no
	 * separate unit term at that size). Check: the FA2 A100 MHA table
	 * below streams at 0.95 of its stream. Until 2026-12-02 an estimate
	 * fitted end to end to the Llama-2-7B runs (1.0 of stream, half of it
	 * at 16 sequences): 699 us at #1572's 16 x 4000 point, slower than
	 * the kernel before its fix, and fitted to ITLs the client derived
	 * with 0.78-0.85 of the tokens vLLM generated
	 * (tests/accuracy/simrun.py counted_len; docs/engine-vllm.md). */
	{ .op = KOP_ATTN_DECODE, .gen = HW_TC_HOPPER, .kernel = "FlashAttention-3 paged decode (MHA, 64-row tiles)",
	  .compute_frac = 0.49, .fixed_us = PERF_FA_DECODE_CALL_US, .bw_frac = 1.0,
	  .source = "FA3 upstream H100 MHA decode (flash-attention #1572: 0.63 of stream) x the 64-row tile's 1.7x "
		    "(same issue, H20), capped at the stream; 13.7 us a call (vllm-project/flash-attention PR #63)" },
	/* MHA elsewhere (vLLM runs FA2 on Ada; Ampere has its row above): the slope of
	 * onnxruntime PR #21414's A100 MHA table above, 1.746 TB/s = 0.95 of
	 * the A100's 1.835 TB/s stream (0.90 of 2.039, hwprofile.c), its
	 * floors the GQA row's. uncertain on Ada and RTX Blackwell (sm100 has its row above). */
	{ .op = KOP_ATTN_DECODE, .gen = KGEN_ANY, .kernel = "FlashAttention-2 paged decode (MHA, split-KV)",
	  .compute_frac = 0.49, .fixed_us = PERF_FA_DECODE_CALL_US, .unit_us = PERF_FA_DECODE_UNIT_US, .bw_frac = 0.95,
	  .source = "onnxruntime PR #21414 A100 FA2 MHA paged decode: bytes at 0.95 of stream, 0.933 us a (seq, KV head) unit "
		    "per SM; 13.7 us a call as the GQA row (vllm-project/flash-attention PR #63)" },
	{ .fallback = true, .kernel = "roofline, no kernel data", .source = "device-class defaults (hw_default_efficiency)" },
};

/* vLLM on CUDA's all-reduce rows: sim/perf/backend_nvlink.c (backend_tables.h). */

/* llama.cpp splits layers across GPUs (-sm layer) and never all-reduces;
 * a tensor split (-sm row) goes through the host: NCCL-less ring at the
 * PCIe figure. uncertain: no component table. */
static const struct perf_collective ring_only[] = {
	{ "ring all-reduce (NCCL/RCCL)", TRAFFIC_RING, false, 0, 0, 0, true, 0.69, false,
	  "ring at vLLM PR #24532's NCCL fraction (uncertain off NVLink)" },
};

/* vLLM: its launch costs (one CUDA-graph replay a step, eager launches
 * above the largest capture size) are the engine-level overhead model's
 * (sim/perf/overhead.c, issue 18), so the backend adds no per-kernel
 * floor (kernel_us 0): a floor of ~8 kernels a layer at ~1.5 us, with no
 * component table behind it, made the cross-validation worse (docs/accuracy.md). */
#define VLLM_LAUNCH "launches in the engine overhead model (sim/perf/overhead.c)"

/* vLLM on ROCm: sim/perf/backend_rocm.c (backend_tables.h). */

/* llama.cpp on CUDA: sim/perf/backend_llamacpp_cuda.c (backend_tables.h). */

/* ---- The named roofline: the device-class fallback for a device and
 * engine without a table. ---- */
static const struct perf_kernel fallback_only[] = {
	{ .fallback = true, .kernel = "roofline, no kernel data", .source = "device-class defaults (hw_default_efficiency)" },
};

static const struct perf_backend backends[] = {
	{ "vllm-cuda", "vllm", 0, 6, 2, VLLM_LAUNCH, -1, vllm_cuda, N_OF(vllm_cuda), perf_nvlink_coll, N_OF(perf_nvlink_coll), NULL },
	{ "roofline", "any", 0, 0, 0, "none", -1, fallback_only, N_OF(fallback_only), ring_only, N_OF(ring_only), NULL },
};

/* The backends of their own files (backend_tables.h). */
static const struct perf_backend *const other_backends[] = { &perf_backend_vllm_rocm,
								    &perf_backend_llamacpp_cuda,
								    &perf_backend_llamacpp_metal,
								    &perf_backend_llamacpp_cpu };

const struct perf_backend *perf_backend_find(const char *name)
{
	for (int i = 0; i < N_OF(backends); i++)
		if (!strcmp(backends[i].name, name))
			return &backends[i];
	for (int i = 0; i < N_OF(other_backends); i++)
		if (!strcmp(other_backends[i]->name, name))
			return other_backends[i];
	return NULL;
}

const struct perf_backend *perf_backend_for(const char *engine, const struct hw_profile *hw)
{
	bool llama = engine && (!strcmp(engine, "ollama") || !strcmp(engine, "llama.cpp"));
	const char *name = "roofline";
	if (hw->hw_class == HW_APPLE)
		name = "llama.cpp-metal";
	else if (hw->hw_class == HW_CPU)
		name = llama ? "llama.cpp-cpu" : "roofline";   /* vLLM's CPU build runs no ggml graph */
	else if (!strcmp(hw_vendor_names[hw->vendor], "amd"))
		name = llama ? "roofline" : "vllm-rocm";
	else if (!strcmp(hw_vendor_names[hw->vendor], "nvidia"))
		name = llama ? "llama.cpp-cuda" : "vllm-cuda";
	const struct perf_backend *b = perf_backend_find(name);
	assert(b);
	return b;
}

const struct perf_kernel *perf_kernel_find(const struct perf_backend *b, int op, int dtype, int gen,
					   int head_dim, int group)
{
	for (int i = 0; i < b->n_rows; i++) {
		const struct perf_kernel *k = &b->rows[i];
		if (k->fallback)
			return k;
		if (k->op != op || (k->gen != KGEN_ANY && k->gen != gen))
			continue;
		if (k->dtype != KDT_ANY && k->dtype != dtype && !(dtype == KDT_FP8_SCALED && k->dtype == KDT_LOW) &&
		    !(dtype == KDT_MXFP4 && k->dtype == KDT_16))
			continue;
		if (k->head_dim_max > 0 && head_dim > k->head_dim_max)
			continue;
		if (k->group_min > 0 && group < k->group_min)
			continue;
		return k;
	}
	assert(!"backend table without a fallback row");
	return &b->rows[b->n_rows - 1];
}

double perf_curve_at(const struct perf_curve *c, double x)
{
	assert(c->n >= 1);
	if (x <= c->x[0])
		return c->y[0];
	for (int i = 1; i < c->n; i++)
		if (x <= c->x[i]) {
			double t = log(x / c->x[i - 1]) / log(c->x[i] / c->x[i - 1]);
			return c->y[i - 1] + t * (c->y[i] - c->y[i - 1]);
		}
	return c->y[c->n - 1];
}
