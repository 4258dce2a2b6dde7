/*
 * backend: the kernels an engine runs on a device, and what each reaches
 * (DESIGN "Where the data flow is going next": backend tables).
 *
 * A backend (vLLM on CUDA, vLLM on ROCm, llama.cpp on CUDA / Metal / CPU)
 * is a table of kernel rows, `{ .op, .dtype, .gen, .kernel, ..., .source }`,
 * looked up by operator group, matmul dtype and tensor-core generation:
 * the first row that matches wins, and every table ends with the named
 * place-holder row "roofline, no kernel data" (the device-class scalars of
 * hw_default_efficiency), so a lookup never fails and `explain` can say
 * which row it used. Each row gives achieved efficiency as a curve of the
 * operator's shape, every number with the component-level measurement it
 * comes from (or `uncertain:` where none supports it):
 *   - matmuls: compute_frac of the clock-adjusted peak of the row's
 *     accumulate type, times M / (tile_m · ceil(M / tile_m)) (rows padded
 *     to whole tiles of the instruction or threadblock shape), times
 *     tile-wave quantization over the device's SMs for kernels that are
 *     not persistent;
 *   - grouped MoE GEMMs: the same, per expert, with tokens per expert
 *     padded to the kernel's BLOCK_SIZE_M, times the row's curve by
 *     tokens per expert (where it has one), plus fixed_us a MoE layer;
 *   - prefill attention: a table of the fraction of peak by keys per query
 *     (FlashAttention-2/3 benchmark curves), per head-dim class;
 *   - decode attention: fixed_us a layer, plus unit_us for each (sequence,
 *     KV head) work unit over the device's SMs, plus the KV bytes at
 *     bw_frac of streaming bandwidth (kernel microbenchmarks' intercepts
 *     and slopes), so the bandwidth reached rises with the bytes a call
 *     reads and the floor with the work units a batch brings;
 *   - memory-bound reads: bw_frac of the device's streaming bandwidth
 *     (hw_stream_bandwidth), plus kernel_us per kernel launched (the
 *     backend's kernels a layer): at small batch a step's achieved
 *     bandwidth is bytes / (bytes / bw + kernels · kernel_us), so it
 *     falls with bytes per kernel and rises to bw as kernels grow.
 * Collectives are rows too (perf_allreduce_s): one-shot / two-shot custom
 * all-reduce, NCCL/RCCL ring, by link, and NCCL over InfiniBand / RoCE
 * for a group spanning nodes, fitted to published benchmark tables.
 *
 * Tables are const and static; lookups are O(rows) and done once, in
 * perf_init; nothing here allocates or can fail.
 */
#ifndef SERVESIM_BACKEND_H
#define SERVESIM_BACKEND_H

#include <stdbool.h>

#include "hwprofile.h"

/* Operator groups a kernel row serves (a subset of perf_op_kind). */
enum perf_kop { KOP_GEMM, KOP_MOE, KOP_ATTN_PREFILL, KOP_ATTN_DECODE, KOP_N };

/* The matmul dtype class a row serves. KDT_FP8_SCALED: FP8 scaled per
 * channel or per tensor (not per block), which some backends run through
 * another kernel (vLLM on Hopper: CUTLASS grouped GEMM for MoE); a lookup
 * for it falls back to the KDT_LOW rows. KDT_MXFP4: MXFP4 weights with
 * 16-bit activations (gpt-oss experts; vLLM on Hopper: triton_kernels'
 * matmul_ogs); a lookup for it falls back to the KDT_16 rows. */
enum perf_kdtype { KDT_ANY, KDT_16, KDT_LOW, KDT_FP8_SCALED, KDT_MXFP4 };

#define KGEN_ANY (-1)

/* The peak a row's compute_frac is a fraction of: the precision's matmul
 * dtype (FP32-accumulate at 16 bits), FP16 with FP16 accumulate
 * (llama.cpp's cuBLAS path), or INT8 (llama.cpp's MMQ). */
enum perf_kpeak { KPEAK_DTYPE, KPEAK_ACC16, KPEAK_INT8 };

/* Achieved fraction of peak by x (log-linear between points, clamped at
 * the ends). */
struct perf_curve {
	int n;
	double x[8], y[8];
};

struct perf_kernel {
	int op;                      /* enum perf_kop */
	int dtype;                   /* enum perf_kdtype */
	int gen;                     /* enum hw_tensor_gen, or KGEN_ANY */
	int head_dim_max;            /* attention: rows for head dims up to this; 0 any */
	int group_min;               /* attention: rows for at least this many query heads per KV
				      * head (GQA group); 0 any */
	const char *kernel;          /* what the engine runs, by its name */
	int peak;                    /* enum perf_kpeak: which peak compute_frac is of */
	bool waves;                  /* one tile per SM per wave (not persistent / stream-K) */
	double compute_frac;         /* of the clock-adjusted peak, large shapes */
	double half;                 /* matmul without tile_m: M tokens at half of compute_frac */
	double tile_m;               /* matmul: rows of the smallest tile the kernel issues; M pads
				      * to whole tiles (Hopper WGMMA: 64); 0: the half curve */
	double vec_m;                /* matmul: up to this many rows the backend runs a mat-vec kernel
				      * instead (llama.cpp's MMVQ: 8), at vec_frac of the row's peak
				      * with no tile padding; 0: none */
	double vec_frac;
	double vec_bw_frac;          /* … and the mat-vec kernel's fraction of the stream (0: bw_frac,
				      * which is then the tiled kernel's) */
	bool serial_load;            /* matmul: the tiled kernel's weight reads and its MMAs add
				      * (bytes / bw + FLOPs / rate) instead of overlapping (the larger
				      * of the two): llama.cpp's MMQ loads and unpacks each weight
				      * tile before its int8 MMAs */
	double fixed_us;             /* decode attention, MoE: fixed time of one call (a layer), on
				      * top of its bytes at bw_frac of stream */
	double unit_us;              /* decode attention: time of one (sequence, KV head) work unit's
				      * latency floor, per SM: the call adds unit_us · units / SMs */
	const struct perf_curve *curve;  /* prefill attention: fraction of peak by keys per query;
					  * MoE: by tokens per expert (times compute_frac) */
	double bw_frac;              /* of hw_stream_bandwidth */
	const struct perf_curve *bw_curve;  /* MoE: fraction of stream by the expert's intermediate
					     * width on one GPU (replaces bw_frac); NULL: bw_frac */
	const struct perf_curve *width_curve;  /* MoE: the compute rate times this by the same width
						* (NULL: 1) */
	bool fallback;               /* the "roofline, no kernel data" row: class scalars */
	const char *source;
};

/* An all-reduce algorithm: time = latency_us + hops · profile latency_us
 * + traffic(tp) · bytes / (link bandwidth · link_frac), or, for a row
 * with a grid (perf_coll_grid, below), latency_us + the larger of that
 * bandwidth term and the grid's passes. Traffic per byte
 * of message each GPU sends: one-shot tp - 1, two-shot and ring
 * 2(tp - 1)/tp, multimem 1 whatever tp (NVLink SHARP: the NVSwitch
 * reduces and multicasts). The symmetric-memory rows (multimem, and the
 * same communicator's two-shot kernel at tp 2) run on Hopper NVLink parts
 * with an NVSwitch only, at the sm90 sizes of vLLM's symmetric-memory
 * all-reduce (collective.c). */
enum perf_traffic { TRAFFIC_ONE_SHOT, TRAFFIC_TWO_SHOT, TRAFFIC_RING, TRAFFIC_MULTIMEM, TRAFFIC_SYMM_TWO_SHOT };

struct perf_collective {
	const char *name;
	int traffic;                 /* enum perf_traffic */
	bool nvlink_only;            /* needs every GPU pair on NVLink / Infinity Fabric */
	double max_bytes;            /* largest message it takes; 0: any */
	int tp_max;                  /* largest group it runs for; 0: any */
	double latency_us;           /* fixed */
	bool ring_hops;              /* adds 2(tp-1) × the profile's per-hop latency */
	double link_frac;            /* of the profile's per-direction link bandwidth; scale_out:
				      * of the node's NICs (network_gbit_s × gpus_per_node) */
	bool scale_out;              /* for a group spanning nodes (tp > gpus_per_node) only; the
				      * other rows need the group inside one node */
	const char *source;
};

/* A collective kernel launched on a fixed grid, which sweeps each GPU's
 * share of a message (two-shot: message / tp; one-shot: all of it) in
 * whole passes of pass_bytes, each costing pass_us however full; and a
 * generation's own parameters for a row (pass_bytes 0: no grid, only
 * latency_us and link_frac in place of the row's). */
struct perf_coll_grid {
	const struct perf_collective *row;
	double pass_bytes;
	double pass_us;
	const char *source;
	int gen;           /* enum hw_tensor_gen it is for; HW_TC_NONE: parts without their own */
	double latency_us; /* for that generation, in place of the row's; 0: the row's */
	double link_frac;  /* likewise; 0: the row's */
};

/* The grid of row c, or NULL (a row timed by its bytes alone): the entry
 * for parts without their own. */
const struct perf_coll_grid *perf_coll_grid_of(const struct perf_collective *c);

/* The grid of row c on hw: the entry of hw's tensor-core generation where
 * one exists, else perf_coll_grid_of's; NULL as it. */
const struct perf_coll_grid *perf_coll_grid_for(const struct perf_collective *c, const struct hw_profile *hw);

struct perf_backend {
	const char *name;            /* "vllm-cuda" … */
	const char *engine;          /* "vllm", "llama.cpp" */
	double kernel_us;            /* fixed cost of one kernel in a step (launch, ramp, tail) */
	double gemm_kernels;         /* kernels a decoder layer launches for its matmuls, norms, activations */
	double attn_kernels;         /* … and for attention (rope, cache write, attention) */
	const char *launch_source;
	double step_overhead_us;     /* the engine's per-step CPU cost on this backend, replacing the
				      * device class's (fitted to vLLM); < 0: the class's */
	const struct perf_kernel *rows;
	int n_rows;
	const struct perf_collective *coll;
	int n_coll;
	/* The GEMM rate of quantized weights of this storage type (a GGUF
	 * name: "q4_0", "q4_k_m", …) on tensor generation gen, relative to
	 * the row's (fitted to the type its source measured); NULL: 1 for
	 * every type. For kernels whose speed depends on the type's unpacking
	 * (llama.cpp's MMQ). */
	double (*weights_gain)(const char *weights, int gen);
};

/* The backend an engine ("vllm", "ollama", "llama.cpp") runs on hw: by
 * vendor and class. Unknown engine names take vLLM's. Never NULL. */
const struct perf_backend *perf_backend_for(const char *engine, const struct hw_profile *hw);

/* A backend by name ("vllm-cuda", …), or NULL. */
const struct perf_backend *perf_backend_find(const char *name);

/* The first row of b for (op, dtype, tensor gen, head dim, query heads
 * per KV head); the fallback row when none matches. Never NULL. */
const struct perf_kernel *perf_kernel_find(const struct perf_backend *b, int op, int dtype, int gen,
					   int head_dim, int group);

/* The curve's value at x (log-linear in x, clamped). */
double perf_curve_at(const struct perf_curve *c, double x);

/* One all-reduce of bytes per GPU over tp GPUs on hw: the fastest of b's
 * algorithms that may run there (as vLLM dispatches); *alg (when not
 * NULL) names it. tp <= 1 costs 0. */
double perf_allreduce_s(const struct perf_backend *b, const struct hw_profile *hw, int tp, double bytes,
			const struct perf_collective **alg);

/* The fraction of its link row c reaches on bytes over tp GPUs of hw: its
 * link_frac, less where its grid's passes take longer than the bytes
 * (explain's efficiency of the all-reduce row). */
double perf_allreduce_frac(const struct perf_collective *c, const struct hw_profile *hw, int tp, double bytes);

/* Where row c's figures on hw come from (explain's source): its
 * generation's entry where hw's tensor-core generation has one, else the
 * row's own. */
const char *perf_allreduce_source(const struct perf_collective *c, const struct hw_profile *hw);

#endif
