/*
 * backend_llamacpp_cuda: llama.cpp on NVIDIA GPUs (ggml's CUDA backend),
 * the kernel rows, the rate of each GGUF type's MMQ and the per-node
 * floor of the "llama.cpp-cuda" backend (sim/perf/backend.h describes
 * what a row is and how it is looked up).
 *
 * Which mat-mul kernel runs (ggml-cuda's ggml_cuda_should_use_mmq and the
 * dispatch around it, mmq.cu): quantized weights (Q4_0 … Q8_0, the
 * K-quants, the IQ types, MXFP4) take MMQ at every batch size on any GPU
 * with int8 tensor-core MMA (Turing and newer: `turing_mma_available`
 * returns true before any batch-size rule, which only the DP4A path of
 * Pascal / Volta and AMD parts have), and MMVQ (mat-vec) at batch 1-8;
 * F16 / BF16 weights take cuBLAS with FP16 compute for prefill and ggml's
 * own mmv / mmf kernels for small batches (PR #15131). MMQ runs on the
 * Ampere-style mma.sync int8 instruction (m16n8k32) on every generation:
 * it has no wgmma (Hopper) or tcgen05 (datacenter Blackwell) path, so the
 * quoted INT8 peak of those parts, which only the new instructions reach,
 * is an upper bound there.
 *
 * What is fitted, and to what (every number below carries its source):
 * MMQ's fraction of the INT8 peak per tensor-core generation, from
 * JohannesGaessler's llama-bench tables in the MMQ pull requests (one
 * GPU, one 8B model, microbatch 512, each PR's own build), and the
 * K-quants' rate relative to the 32-weight-block types from the same
 * tables; cuBLAS FP16 and MMVQ from PR #4766 and #15131.
 *
 * Invariants: the table ends with the fallback row; the collectives hold
 * one ring row with no limit; mmq_gain is in (0, 1] and 1 for a type the
 * table does not name. Const data only.
 */
#include <string.h>

#include "backend_tables.h"

#define N_OF(a) ((int)(sizeof(a) / sizeof *(a)))

/* FlashAttention-2 on H100 (FA3 paper, arXiv 2407.08608, fig. "Attention
 * forward speed, head dim 128": 309, 350, 362, 368, 370, 370 TFLOP/s at
 * 512 … 16k over 989.4): what a kernel without Hopper-specific
 * instructions reaches; ggml's mma flash attention is one. */
static const struct perf_curve fa2_on_hopper = {
	6, { 512, 1024, 2048, 4096, 8192, 16384 }, { 0.312, 0.354, 0.366, 0.372, 0.374, 0.374 }
};

/* ggml's mma flash attention (fattn-mma-f16) on Ampere / Ada, fraction
 * of the 16-bit (FP32-accumulate) peak by keys per query. Component
 * point: RTX 3090, Llama-3-8B Q4_0, microbatch 512, pp512 at depth 32768
 * runs at 1448.12 t/s (llama.cpp PR #17505, its PR column) against
 * 3654.78 at depth 0 (PR #7676's Q5_0, a faster build would make the
 * difference larger): 416.6 us a token more for 4 × 32 heads × 128 ×
 * 33,024 keys × 32 layers = 17.3 GFLOP, 41.6 TFLOP/s = 0.58 of 71.2
 * (0.29 of the FP16-accumulate 142.3). Taken as 0.56 at 8k keys and
 * beyond, with FA2's shape toward short keys (FA3 paper, FA2 on H100:
 * 0.84 / 0.95 / 0.98 / 0.99 of its plateau at 512 / 1k / 2k / 4k);
 * uncertain below 8k (one point, at 33k). */
static const struct perf_curve ggml_fa_ampere_ada = {
	6, { 512, 1024, 2048, 4096, 8192, 16384 }, { 0.470, 0.530, 0.548, 0.557, 0.56, 0.56 }
};

/* MMQ's fraction of the clock-adjusted INT8 peak at large batches. The
 * 8B model of these tables is Llama-3-8B: 2 × 7.50 G FLOPs a token in its
 * mat-muls (lm_head included), so t/s × 15.0 G is the rate reached over
 * the whole pass, attention and norms included; the rows' fractions are
 * set so that the step model (which adds those) meets the point.
 *   Ada: RTX 4090, Q4_0, pp512 at microbatch 512: 10358.75 t/s (llama.cpp
 *   PR #7676, "CUDA: use tensor cores for MMQ", its table's PR column) =
 *   155 TOPS over the pass.
 *   Ampere: RTX 3090, Q5_0 (a 32-block type as Q4_0: on the RTX 4090 of
 *   PR #8062 Q5_0 pp2048 runs at 10491.78, 1.01 × Q4_0's pp512), pp512 at
 *   microbatch 512: 3654.78 t/s (PR #7676) = 54.8 TOPS over the pass.
 * MMQ reads and unpacks each weight tile to int8 in shared memory, then
 * runs its MMAs on it: the two add (serial_load). PR #7676's RTX 4090
 * Q4_0 column at microbatch 16 … 256 (1937.21, 3427.61, 5420.06, 7443.66,
 * 9601.53 t/s) is 7.1 ms + 76.5 us a token a microbatch, linear within
 * 2%: a fixed read and the MMAs on top, not the larger of the two. With
 * that sum the fractions set at microbatch 512 are 0.261 (Ada) and 0.1925
 * (Ampere) of the INT8 peak. MMQ has used stream-k since PR #8018 (its
 * tiles split along K over all SMs): no wave steps (waves = false). It
 * picks its token tile (mmq_x) in steps of 8 (mmq.cuh), so M pads to 8. Decode (MMVQ): Q8_0 tg128 98 t/s × 7.16 GB = 703 GB/s, 0.73 of the
 * stream with the per-kernel floor below (PR #4766, RTX 4090). */
#define MMQ_ADA 0.261
#define MMQ_AMPERE 0.1925
/* Hopper / datacenter Blackwell: Ampere's fraction times what mma.sync
 * reaches of a wgmma-quoted peak (the row below says where from). */
#define MMQ_MMA_SYNC_ON_WGMMA 0.0986

/* MMVQ, the mat-vec kernel quantized weights take at 1 to 8 tokens
 * (MMVQ_MAX_BATCH_SIZE, mmvq.cuh): dp4a dot products on the CUDA cores,
 * whose int8 rate is a quarter of the tensor cores' on Ampere and Ada
 * alike (64 INT32 lanes an SM against 256 int8 tensor MACs), so its
 * work per token grows with the batch while the weights are read once.
 * Fitted to llama.cpp PR #15802's RTX 3090 table (Llama-3-8B Q4_0, pp512
 * at microbatch 1 … 8, its PR column: 156.56, 279.89, 390.96, 470.48,
 * 509.70, 541.57, 559.30, 583.77 t/s): at 5-8 tokens a microbatch costs
 * 1.4 ms more a token, 10 TOPS, 0.036 of the 284.7 INT8 peak; set so
 * the step model meets microbatch 8. Ada takes the same fraction
 * (uncertain: no Ada microbatch table of MMVQ was found). */
/* MMQ at 9 to ~64 tokens reads and unpacks every weight tile whatever
 * the tokens, at less than MMVQ's stream: RTX 4090 Q4_0 pp512 at
 * microbatch 10 … 16 (llama.cpp PR #15131, FlashAttention off, its PR
 * column: 1216.63, 1340.94, 1460.17, 1564.21, 1684.51, 1785.59, 1930.50
 * t/s) is a flat 8.2-8.3 ms a microbatch: the weights' read plus the
 * MMAs (serial_load) meets it with the read at MMVQ's 0.90 of the stream
 * (PR #4766's tg128; 0.69 when the two were taken as overlapping). */
#define MMQ_BW 0.90
#define MMVQ_MAX_BATCH 8
#define MMVQ_FRAC 0.0345

static const struct perf_kernel llamacpp_cuda_rows[] = {
	/* F16 weights go through cuBLAS with FP16 compute (CUBLAS_COMPUTE_16F:
	 * the FP16-accumulate rate, twice PyTorch's on GeForce). RTX 4090 llama
	 * 7B F16 pp512 11048 t/s (llama.cpp PR #4766 llama-bench) = 149
	 * TFLOP/s = 0.45 of the 330 FP16-accumulate peak for the whole pass at
	 * M = 512 (attention included); 0.478 with M in whole 64/128-row
	 * tiles (512 pads to none) and the waves meets that point (tested,
	 * test_backend.c). */
	{ .op = KOP_GEMM, .dtype = KDT_16, .gen = KGEN_ANY, .kernel = "cuBLAS FP16 GEMM, FP16 compute (prefill) / mmv (decode)",
	  .peak = KPEAK_ACC16, .waves = true, .compute_frac = 0.478, .tile_m = 64, .bw_frac = 1.0,
	  .source = "llama.cpp PR #4766 RTX 4090 F16 pp512 (0.45 of acc16 peak at M=512); GEMV 0.95 of peak = stream (PR #15131)" },
	{ .op = KOP_GEMM, .dtype = KDT_LOW, .gen = HW_TC_AMPERE, .kernel = "MMQ (int8 mma.sync, sm80) / MMVQ",
	  .peak = KPEAK_INT8, .waves = false, .compute_frac = MMQ_AMPERE, .tile_m = 8, .bw_frac = MMQ_BW, .serial_load = true,
	  .vec_m = MMVQ_MAX_BATCH, .vec_frac = MMVQ_FRAC, .vec_bw_frac = 0.90,
	  .source = "llama.cpp PR #7676 RTX 3090 Q5_0 pp512 (ub 512): 0.1925 of INT8, the weights' read (0.90 of stream) added; stream-k (PR #8018); "
		    "MMVQ at 1-8 tokens 0.0345 of INT8 (PR #15802 RTX 3090 ub 1-8), stream 0.90 (PR #4766 tg128)" },
	{ .op = KOP_GEMM, .dtype = KDT_LOW, .gen = HW_TC_ADA, .kernel = "MMQ (int8 mma.sync, sm89) / MMVQ",
	  .peak = KPEAK_INT8, .waves = false, .compute_frac = MMQ_ADA, .tile_m = 8, .bw_frac = MMQ_BW, .serial_load = true,
	  .vec_m = MMVQ_MAX_BATCH, .vec_frac = MMVQ_FRAC, .vec_bw_frac = 0.90,
	  .source = "llama.cpp PR #7676 RTX 4090 Q4_0 pp512 (ub 512): 0.261 of INT8, the weights' read (0.90 of stream) added; stream-k (PR #8018); "
		    "MMVQ at 1-8 tokens 0.0345 of INT8 (PR #15802 RTX 3090 ub 1-8), stream 0.90 (PR #4766 tg128)" },
	/* RTX / GeForce Blackwell (sm_120): MMQ's mma.sync int8 is the
	 * instruction its INT8 peak is quoted for (no tcgen05 there), as on
	 * Ada, so Ada's fraction (uncertain: no sm120 llama-bench MMQ table
	 * was found). */
	{ .op = KOP_GEMM, .dtype = KDT_LOW, .gen = HW_TC_BLACKWELL_SM120, .kernel = "MMQ (int8 mma.sync, sm120) / MMVQ",
	  .peak = KPEAK_INT8, .waves = false, .compute_frac = MMQ_ADA, .tile_m = 8, .bw_frac = MMQ_BW, .serial_load = true,
	  .vec_m = MMVQ_MAX_BATCH, .vec_frac = MMVQ_FRAC, .vec_bw_frac = 0.90,
	  .source = "uncertain: Ada's MMQ fraction (PR #7676 RTX 4090) on sm120's mma.sync int8 peak; weights' read 0.90 of stream added (PR #15131, #7676 ub 16-256); "
		    "MMVQ 0.0345 of INT8 (PR #15802, RTX 3090), stream 0.90 (PR #4766 tg128)" },
	/* Hopper, datacenter Blackwell (and any later part): the same mma.sync
	 * kernel, whose quoted INT8 peak only wgmma / tcgen05 reach. No
	 * llama-bench MMQ table on an H100 / B200 was found; what mma.sync
	 * reaches there is scaled from another mma.sync kernel measured on both
	 * generations, FlashAttention-2: 0.374 of H100's 16-bit peak at head
	 * dim 128 (FA3 paper, arXiv 2407.08608, its FA2 curve, fa2_on_hopper
	 * above) against up to 0.73 of A100's (FA2 paper, arXiv 2307.08691:
	 * forward pass "up to 73% of the theoretical maximum"), 0.512; times
	 * Ampere's MMQ fraction (A100 is an Ampere part): 0.1925 x 0.512 =
	 * 0.0986 of the INT8 peak, 195 TOPS on an H100 SXM (1.6x an A100's
	 * 120). Uncertain (a ratio of two papers' plateaus; datacenter
	 * Blackwell takes Hopper's ratio, unmeasured). Ada's 0.261 before:
	 * 516 TOPS, 4.3x an A100. */
	{ .op = KOP_GEMM, .dtype = KDT_LOW, .gen = KGEN_ANY, .kernel = "MMQ (int8 mma.sync) / MMVQ",
	  .peak = KPEAK_INT8, .waves = false, .compute_frac = MMQ_MMA_SYNC_ON_WGMMA, .tile_m = 8, .bw_frac = MMQ_BW, .serial_load = true,
	  .vec_m = MMVQ_MAX_BATCH, .vec_frac = MMVQ_FRAC, .vec_bw_frac = 0.90,
	  .source = "uncertain: Ampere's MMQ fraction (PR #7676 RTX 3090) x FA2's mma.sync plateau H100/A100 (0.374 FA3 paper / 0.73 FA2 paper); "
		    "weights' read 0.90 of stream added; MMVQ 0.0345 of INT8 (PR #15802, RTX 3090), stream 0.90 (PR #4766 tg128)" },
	{ .op = KOP_MOE, .dtype = KDT_ANY, .gen = KGEN_ANY, .kernel = "mul_mat_id (MMQ/MMVQ per expert)",
	  .peak = KPEAK_INT8, .compute_frac = 0.22, .half = 0, .bw_frac = 0.85, .source = "uncertain: the MMQ row, a little lower" },
	{ .op = KOP_ATTN_PREFILL, .gen = HW_TC_AMPERE, .kernel = "ggml flash-attention (fattn-mma, sm80)",
	  .curve = &ggml_fa_ampere_ada, .compute_frac = 1,
	  .source = "llama.cpp PR #17505 RTX 3090 pp512@d32768 vs d0 (PR #7676): 0.58 of the 16-bit peak at 33k keys; FA2's shape below" },
	{ .op = KOP_ATTN_PREFILL, .gen = HW_TC_ADA, .kernel = "ggml flash-attention (fattn-mma, sm89)",
	  .curve = &ggml_fa_ampere_ada, .compute_frac = 1,
	  .source = "uncertain: the RTX 3090 point (llama.cpp PR #17505) on Ada, the same mma.sync kernel and FP32-acc/FP16-acc ratio" },
	{ .op = KOP_ATTN_PREFILL, .gen = HW_TC_BLACKWELL_SM120, .kernel = "ggml flash-attention (fattn-mma, sm120)",
	  .curve = &ggml_fa_ampere_ada, .compute_frac = 1,
	  .source = "uncertain: the RTX 3090 point (llama.cpp PR #17505) on sm120, the same mma.sync kernel as Ampere / Ada" },
	{ .op = KOP_ATTN_PREFILL, .gen = KGEN_ANY, .kernel = "ggml flash-attention (fattn-mma)",
	  .curve = &fa2_on_hopper, .compute_frac = 1,
	  .source = "uncertain: ggml's mma FA kernel taken at FA2-on-H100 fractions (FA3 paper figure)" },
	{ .op = KOP_ATTN_DECODE, .gen = KGEN_ANY, .kernel = "ggml flash-attention (fattn-vec)",
	  .compute_frac = 0.3, .half = 0, .bw_frac = 0.9, .source = "uncertain: streaming KV read, no table" },
	{ .fallback = true, .kernel = "roofline, no kernel data", .source = "device-class defaults (hw_default_efficiency)" },
};

/* The K-quants (super-blocks of 256 with 6-bit sub-block scales) cost
 * MMQ more unpacking per int8 tile than the 32-block types the rows
 * above were set from. Microbatch 512, each PR's own column:
 *   Ada, RTX 4090: Q4_K_S pp2048 9278.55 t/s (PR #7860, "int8 tensor
 *   cores for MMQ (q4_K, q5_K, q6_K)") over Q4_0 pp512 10358.75 (PR
 *   #7676): 0.896 (the longer test's attention, ~2% of its time, not
 *   taken out).
 *   Ampere, RTX 3090: Q5_K_S 3532.41 and Q6_K 3596.13 pp2048 (PR #8062)
 *   over Q5_0 pp512 3654.78 (PR #7676): 0.966, 0.984, mean 0.975.
 * Other generations take Ada's (uncertain). Q8_0 and the other 32-block
 * types run MMQ's q8_0-style tile load: 1 (uncertain for Q8_0: no
 * microbatch-512 point of it was found; Q5_0 / Q4_0 is 1.01 above). */
static const struct mmq_type {
	const char *prefix;          /* GGUF type names starting with it */
	int gen;                     /* enum hw_tensor_gen, or KGEN_ANY */
	double gain;
} mmq_types[] = {
	{ "q2_k", HW_TC_AMPERE, 0.975 }, { "q3_k", HW_TC_AMPERE, 0.975 }, { "q4_k", HW_TC_AMPERE, 0.975 },
	{ "q5_k", HW_TC_AMPERE, 0.975 }, { "q6_k", HW_TC_AMPERE, 0.975 },
	{ "q2_k", KGEN_ANY, 0.896 },     { "q3_k", KGEN_ANY, 0.896 },     { "q4_k", KGEN_ANY, 0.896 },
	{ "q5_k", KGEN_ANY, 0.896 },     { "q6_k", KGEN_ANY, 0.896 },
};

static double mmq_gain(const char *weights, int gen)
{
	if (!weights)
		return 1;
	for (int i = 0; i < N_OF(mmq_types); i++) {
		const struct mmq_type *t = &mmq_types[i];
		if ((t->gen == KGEN_ANY || t->gen == gen) && !strncmp(weights, t->prefix, strlen(t->prefix)))
			return t->gain;
	}
	return 1;
}

/* llama.cpp splits layers across GPUs (-sm layer) and never all-reduces;
 * a tensor split (-sm row) goes through the host: NCCL-less ring at the
 * PCIe figure. uncertain: no component table. */
static const struct perf_collective llamacpp_cuda_coll[] = {
	{ "ring all-reduce (NCCL/RCCL)", TRAFFIC_RING, false, 0, 0, 0, true, 0.69, false,
	  "ring at vLLM PR #24532's NCCL fraction (uncertain off NVLink)" },
};

/* llama.cpp builds a ggml graph of ~20 nodes a layer (norms, three
 * projections, rope, KV copies, attention, FFN, adds). RTX 4090 7B:
 * F16 tg128 61.03 t/s is 16.4 ms a token against 14.1 ms of weights at
 * 0.95 of 1008 GB/s; Q8_0 98.13 t/s is 10.2 against 7.5 ms: ~2.5 ms a
 * 32-layer step, ~3.5 us a node (PR #4766, before CUDA graphs). That
 * residual is the whole of llama_decode's per-step cost beyond the
 * weights, so the backend carries no further step overhead (0): the
 * device classes' 1,010 us is vLLM's scheduler, fitted to vLLM runs. */
#define LLAMACPP_LAUNCH "llama.cpp PR #4766 RTX 4090 tg128 F16/Q8_0 minus bytes/stream: ~2.5 ms per 32-layer step"

const struct perf_backend perf_backend_llamacpp_cuda = {
	"llama.cpp-cuda", "llama.cpp", 3.5, 15, 5, LLAMACPP_LAUNCH, 0,
	llamacpp_cuda_rows, N_OF(llamacpp_cuda_rows), llamacpp_cuda_coll, N_OF(llamacpp_cuda_coll), mmq_gain
};
