/*
 * steptime: how long one engine step takes on one device (SEED C1-C7, C16,
 * C19; DESIGN "Step-time model").
 *
 * A step is a batch of prefill chunks (n tokens after c cached ones) and
 * decode tokens (1 token after c). Per operator group the time is the
 * roofline max(FLOPs / (peak × compute efficiency), bytes / (bandwidth ×
 * bandwidth efficiency)), and the step is their sum plus a fixed overhead:
 *   - dense matmuls (QKV/O projections, dense or shared FFN, router): the
 *     weights are read once per step whatever the batch (C19);
 *   - routed experts: E·(1-(1-k/E)^T) distinct experts touched by T tokens,
 *     each read once, at moe_efficiency of a dense matmul's efficiencies;
 *     with the shared experts on a second stream (vLLM 0.12+, steps of at
 *     most 256 tokens) the routed calls' fixed part hides under the shared
 *     experts' reads (moeshared.c);
 *   - LM head, only for the sequences that sample a token;
 *   - prefill attention: causal pairs of the chunk against its context (C5);
 *   - decode attention: every sequence reads its whole KV cache (C16), at
 *     attention_bandwidth × S'/(S' + attention_half_seqs), S' the decode
 *     sequences but at least the half point;
 *   - the small kernels between them (elementwise.h: norms, rotary, the KV
 *     write, the activation), a latency floor each plus their bytes, on
 *     backends that have a row for them (vLLM on CUDA);
 *   - tensor parallel all-reduces, two per layer, ring (2(tp-1) hops);
 *   - pipeline parallelism (perf_pipeline): the batch runs as up to pp
 *     microbatches through pp stages of ceil(L/pp) layers; a step lasts
 *     until every sequence has its token: the longer of one microbatch's
 *     trip through all stages and the microbatches queued at the slowest
 *     stage (the last: it also runs the LM head and the sampler).
 * The efficiencies come from the backend's kernel rows (backend.h: which
 * kernel the engine runs for each group on this device, its curve of
 * shape and its source) applied to the device facts (hwprofile.h: clock
 * under load, SMs, accumulate-type peaks, streaming bandwidth); keys a
 * profile's [efficiency] section gives override them one by one, and a
 * perf without a backend (perf_use_scalars) is the scalar model of
 * p->eff alone: compute_max · M / (M + compute_half_tokens), times
 * low_precision_compute for 8- and 4-bit matmuls. Each group adds its
 * kernels' fixed launch cost per layer (the small-batch decode floor).
 * Routed experts: distinct experts touched by a batch under a Zipf router
 * of exponent router_skew (0: uniform), tokens per expert padded to the
 * grouped GEMM's BLOCK_SIZE_M. All-reduce: the backend's collective rows
 * by message size, group size and link. With every efficiency at 1 and no
 * overhead (perf_ideal), a batch-1 decode step is weight bytes ÷ bandwidth (C8).
 *
 * perfsetup.c builds struct perf (perf_init, the backend, pipeline stages,
 * offload); steptime.c times steps on it.
 *
 * The accumulation struct is built incrementally by the scheduler, so the
 * cost of a step is O(sequences in it), with no allocation.
 */
#ifndef SERVESIM_STEPTIME_H
#define SERVESIM_STEPTIME_H

#include <stdbool.h>
#include <stdint.h>

#include "backend.h"
#include "elementwise.h"
#include "hwprofile.h"
#include "model.h"
#include "precision.h"

enum { PERF_TOUCH_N = 24 };
struct overhead_model;
struct stepcache;

/* Precomputed per (model, device, precision, TP): bytes and FLOPs per
 * token of each operator group, per GPU. A plain record. */
struct perf {
	const struct hw_profile *hw;
	struct hw_efficiency eff;
	int tp;
	double bw;                   /* bytes/s, peak */
	double peak_matmul;          /* FLOP/s at the weights' matmul dtype */
	/* FLOP/s of each weight group's matmuls: the precision's matmul dtype
	 * for quantized groups, bf16 for groups the precision leaves 16-bit
	 * (an fp8 checkpoint's attention or LM head, MXFP4's dense part);
	 * dense blends its attention and FFN parts by their FLOPs. The *_low
	 * shares are the part of each group's time at peak spent in 8- or
	 * 4-bit matmuls, which reach low_precision_compute of the 16-bit
	 * efficiency. */
	double peak_dense, peak_lm_head, peak_expert;
	double dense_low, lm_head_low, expert_low;
	double peak_attn;            /* FLOP/s for attention (bf16) */
	double dense_bytes;          /* per GPU, read once per step */
	double dense_flops_per_token;
	double lm_head_bytes, lm_head_flops_per_token;
	double n_moe_layers, n_experts, experts_per_token;
	double expert_bytes, expert_flops_per_token;   /* one expert, per GPU */
	double expert_n;               /* one expert's intermediate width on a GPU (its 1/tp slice;
					* whole under expert parallelism) */
	double kv_bytes_per_token_layer;               /* per GPU, one layer */
	double full_layers, sliding_layers, window;
	double attn_flops_per_pair;                    /* per layer, per GPU */
	double hidden_bytes_per_token;   /* one token's activations, hidden × 2: what an
					  * all-reduce sums and a pipeline stage sends on */
	double offload_bytes;        /* weights in host memory, streamed over the
				      * host link every step (vLLM --cpu-offload-gb);
				      * set by the engine, 0 by default */
	/* Engine-level overheads (sim/perf/overhead.h), set by the engine;
	 * NULL: [efficiency]'s step_overhead_us + step_overhead_per_seq_us. */
	const struct overhead_model *overhead;
	/* The memo of this perf's step parts (stepcache.h), attached by the
	 * engine that owns it once the perf is final; perf_step_time reads it
	 * for this perf only (a copy bypasses it). NULL: none. */
	struct stepcache *cache;
	int64_t n_layers;
	int pp;                      /* pipeline stages (perf_pipeline), 1 by default */
	double stage_layers;         /* layers on the fullest stage, ceil(L/pp) */

	double head_dim;             /* query/key head size: picks the attention curve */
	double q_per_kv;             /* query heads per KV head (GQA group): picks the decode row */
	bool weights_quantized;      /* dense weights below 16 bits (llama.cpp: MMQ) */
	int low_dtype;               /* the precision's matmul dtype (enum matmul_dtype) */
	const char *weights_name;    /* the precision's name ("q4_0", "bf16"…; static) */

	/* Kernel efficiencies (perf_init; NULL backend: p->eff's scalars). */
	const struct perf_backend *backend;
	const struct perf_kernel *k_gemm, *k_gemm_low, *k_moe, *k_prefill, *k_decode;
	double gemm_cmax, gemm_half;   /* 16-bit GEMM: fraction of peak at large M, M at half */
	double gemm_tile;              /* rows M pads to (the kernel's tile); 0: the half curve */
	double gemm_vec_m, gemm_vec_cmax;  /* up to gemm_vec_m rows: a mat-vec kernel at this fraction
					    * of peak, unpadded (backend row vec_m); 0: none */
	double gemm_vec_bw;            /* … reading the weights at this many bytes/s */
	double gemm_lp;                /* low-precision GEMM fraction ÷ the 16-bit one */
	bool gemm_measured;            /* gemm_cmax is 0.95 of the profile's measured GEMM ([arch]
					* matmul_bf16_tflops), not the kernel row's fraction */
	bool gemm_lp_measured;         /* … and gemm_lp of its measured FP8/FP4 GEMM */
	double gemm_bw;                /* bytes/s a weight-streaming GEMM reaches */
	bool gemm_serial;              /* above gemm_vec_m rows the dense row's weight reads and MMAs
					* add, not overlap (backend row serial_load) */
	bool gemv_curve;               /* the weight reads go by the profile's measured mat-vec curve
					* (hw_gemv_bandwidth: a floor a kernel + bytes at its slope)
					* instead of gemm_bw / gemm_vec_bw */
	double dense_kernels;          /* weight matmul kernels of the dense row, all layers (qkv, o,
					* gate/up, down; a MoE layer's shared experts and router) */
	double shared_bytes;           /* the MoE layers' shared experts' weights (part of dense_bytes) */
	bool shared_stream;            /* they run on a second stream beside the routed experts
					* (vLLM's SharedFusedMoE from 0.12, steps of <= 256 tokens) */
	double moe_cmax, moe_bw;       /* grouped GEMM: fraction of peak, bytes/s */
	const struct perf_curve *moe_bw_curve;  /* moe_bw is moe_stream × this at expert_n (NULL:
						 * a fixed fraction); perf_expert_parallel re-reads it */
	double moe_stream;             /* the stream bandwidth moe_bw_curve is a fraction of */
	const struct perf_curve *moe_width_curve;  /* compute times this at expert_n (NULL: 1) */
	const struct perf_curve *moe_curve;  /* … times this by tokens per expert (NULL: 1) */
	double moe_fixed_s;            /* … plus this a MoE layer */
	double moe_tile;               /* rows an expert's tokens pad to (the row's tile_m); 0:
					* Triton fused_moe's BLOCK_SIZE_M by batch */
	bool moe_own_peak;             /* moe_cmax is of the low dtype's own peak (a low-precision
					* grouped-GEMM table), not times the GEMM rows' ratio */
	bool moe_fp8_scaled;           /* experts in per-channel / per-tensor FP8 (model.h) */
	bool moe_mxfp4;                /* experts in MXFP4, activations 16-bit (--weights mxfp4) */
	double prefill_clock;          /* prefill attention: curve × this; 0: eff.attention_compute */
	double decode_bw, decode_half; /* decode attention: bytes/s at many sequences, half point */
	double decode_fixed_s;         /* decode attention: fixed time of a layer's call (no half curve) */
	double decode_unit_s;          /* … plus this per (sequence, KV head) unit over decode_sms */
	double decode_sms;             /* SMs the decode units spread over (0: no unit cost) */
	double kv_heads_rank;          /* KV heads a rank holds (at least 1) */
	double sm_count;               /* for tile waves; 0: no wave quantization */
	double tiles_n_dense, tiles_n_expert;   /* 128-wide column tiles of the widest matmul */
	double gemm_fixed_s, attn_fixed_s;      /* launch floor of one layer's kernels */
	const struct ew_row *ew;       /* the backend's small kernels (NULL: none modelled) */
	struct ew_shape ew_shape;      /* … their calls and bytes for this model (perf_init) */
	double ew_stream, ew_l2;       /* stream bytes/s and L2 bytes they run at */
	double lm_fixed_s;
	double router_skew;            /* Zipf exponent of expert popularity; 0: uniform */
	double router_scale;           /* c of expert i's pick chance min(1, c·i^-skew), Σ = k */
	double touched_tab[PERF_TOUCH_N];  /* experts touched at T = 2^i tokens (router_skew > 0) */
	/* Expert parallelism (perf_expert_parallel): ep GPUs each hold E/ep
	 * whole experts in id order (ids carry no popularity; moe.c). */
	int ep;                        /* 1: experts sliced by tensor parallelism */
	double ep_share;               /* routing choices that land on the busiest GPU, of k */
	double ep_touched_tab[PERF_TOUCH_N];   /* its experts touched at T = 2^i tokens */
};

/* The work of one step, accumulated sequence by sequence. */
struct perf_step {
	int64_t tokens;              /* scheduled tokens, all sequences */
	int64_t seqs;
	int64_t sampled;             /* sequences producing a token this step */
	int64_t dec_seqs;            /* of which decodes (1 token after a context) */
	double dec_ctx_full, dec_ctx_win;      /* Σ tokens of KV read by decodes */
	double pre_pairs_full, pre_pairs_win;  /* Σ causal (query, key) pairs */
	double pre_ctx_full, pre_ctx_win;      /* Σ KV tokens read by prefill chunks */
};

/* Fills *p. tp must divide nothing in particular (KV heads replicate when
 * tp exceeds them, as vLLM does). kv_bytes_per_elem: 2 (auto at 16-bit)
 * or 1 (fp8). Cannot fail. */
void perf_init(struct perf *p, const struct model *m, const struct hw_profile *hw,
	       const struct precision *w, int tp, double kv_bytes_per_elem);

/* Keeps up to gib GiB of each GPU's weight_bytes in host memory (vLLM
 * --cpu-offload-gb): they cross the host link every step. Returns the
 * bytes offloaded. */
double perf_offload(struct perf *p, double gib, double weight_bytes_per_gpu);

/* Splits the layers into pp pipeline stages (vLLM
 * --pipeline-parallel-size), one GPU group each, joined by the profile's
 * interconnect. pp >= 1; 1 is no pipeline. */
void perf_pipeline(struct perf *p, int pp);

/* Sets every efficiency to 1 and the overheads to 0: the datasheet line. */
void perf_ideal(struct perf *p);

/* Runs the engine's kernels ("vllm", "ollama", "llama.cpp"; perf_init
 * takes vLLM's, or llama.cpp's on Apple and CPU): re-derives the kernel
 * efficiencies from that backend's rows. */
void perf_use_engine(struct perf *p, const char *engine);

/* Drops the backend: p->eff's scalars alone set every efficiency (what a
 * probe fit adjusts). */
void perf_use_scalars(struct perf *p);

/* Expert popularity as a Zipf law of exponent skew >= 0 (0: uniform). */
void perf_set_router_skew(struct perf *p, double skew);

/* Expert parallelism over the tp GPUs (vLLM --enable-expert-parallel):
 * experts are placed whole, E/ep a GPU in id order, instead of sliced;
 * the MoE step lasts as long as the busiest GPU (under a skewed router the
 * one whose E/ep experts, drawn at random from the popularity law, take
 * the largest share: moe.c). ep = 1 undoes it. */
void perf_expert_parallel(struct perf *p, int ep);

/* Under expert parallelism: the experts of the busiest GPU that a
 * batch of tokens touches; *routed gets the routing choices that land
 * there. */
double perf_moe_first_gpu(const struct perf *p, double tokens, double *routed);

/* Expert i's (1-based, most popular first) chance to be among one token's
 * picks; the E of them sum to experts_per_token. 0 for a dense model. */
double perf_moe_pick(const struct perf *p, int i);

/* The routed experts' row time that the shared experts' second stream
 * hides in a step of tokens (their reads run in the routed calls' fixed
 * time): the shared experts' part of the dense row's dense_s, at most the
 * routed calls' fixed time (moeshared.c); 0 without shared_stream or past
 * the stream's 256-token threshold. */
double perf_moe_shared_hidden_s(const struct perf *p, const struct perf *q, double tokens, double dense_s);

/* Expected distinct experts a batch of tokens touches, and (when busiest
 * is not NULL) the expected tokens of the most popular expert. */
double perf_moe_touched(const struct perf *p, double tokens, double *busiest);

static inline void perf_step_clear(struct perf_step *s)
{
	*s = (struct perf_step){ 0 };
}

/* The step its decodes alone would make (for attributing ITL). */
static inline void perf_step_decodes_only(const struct perf_step *s, struct perf_step *out)
{
	*out = (struct perf_step){ .tokens = s->dec_seqs, .seqs = s->dec_seqs,
				   .sampled = s->dec_seqs, .dec_seqs = s->dec_seqs,
				   .dec_ctx_full = s->dec_ctx_full, .dec_ctx_win = s->dec_ctx_win };
}

/* The prefill part of perf_step_add (out of line: it is rare). */
void perf_step_add_prefill(struct perf_step *s, const struct perf *p, double n, double c);
double perf_causal_pairs(double n, double c, double w);

/* Adds one sequence: n new tokens after ctx already in the KV cache; a
 * decode is n = 1. samples: the sequence produces a token this step.
 * Inline: it runs once per sequence per step, the simulator's hot path. */
static inline void perf_step_add(struct perf_step *s, const struct perf *p, int64_t n,
				 int64_t ctx, bool samples)
{
	s->tokens += n;
	s->seqs++;
	s->sampled += samples;
	if (n == 1 && ctx > 0) {
		double kv = (double)ctx + 1;
		s->dec_seqs++;
		s->dec_ctx_full += kv;
		s->dec_ctx_win += p->window > 0 && kv > p->window ? p->window : kv;
		return;
	}
	perf_step_add_prefill(s, p, (double)n, (double)ctx);
}

/* One operator group of a step: its work and what bounds it. */
enum perf_op_kind {
	PERF_DENSE, PERF_EXPERTS, PERF_LM_HEAD, PERF_ATTN_PREFILL, PERF_ATTN_DECODE,
	PERF_ELEMENTWISE, PERF_ALLREDUCE, PERF_OFFLOAD, PERF_OVERHEAD, PERF_PIPELINE, PERF_N_OPS
};

/* Whether op's work is spread over the layers (a pipeline stage or a
 * device holding a share of the layers does that share of it). */
static inline bool perf_op_per_layer(int op)
{
	return op == PERF_DENSE || op == PERF_EXPERTS || op == PERF_ATTN_PREFILL || op == PERF_ATTN_DECODE ||
	       op == PERF_ELEMENTWISE || op == PERF_ALLREDUCE;
}

struct perf_op {
	const char *name;
	double flops, bytes;       /* per GPU */
	double time_s;
	double peak_flops, peak_bytes_s;   /* the device's, for the achieved fraction */
	bool compute_bound;
	const char *kernel;        /* what the backend runs for it (NULL: none named) */
	double eff;                /* efficiency applied to the bounding resource's peak */
	const char *source;        /* where that efficiency comes from */
};

/* Fills ops[PERF_N_OPS] for the step and returns its duration in seconds
 * (perf_step_time is this, summed). With a pipeline, the operator rows
 * are one microbatch's trip through every stage and PERF_PIPELINE (the
 * bubble) is the rest of the step: stage hops, and microbatches waiting
 * their turn; its bytes are the hops'. */
double perf_step_ops(const struct perf *p, const struct perf_step *s, struct perf_op *ops);

/* Breakdown of a step, seconds. */
struct perf_breakdown {
	double dense, experts, lm_head, attn_prefill, attn_decode, allreduce, offload, overhead;
	double elementwise;          /* norms, rotary, KV write, activations (elementwise.h) */
	double pipeline;
	double total;
};

/* The step's duration in seconds; fills *b when not NULL. */
double perf_step_time(const struct perf *p, const struct perf_step *s, struct perf_breakdown *b);

/* *b of operator rows ops[PERF_N_OPS] (perf_step_ops') and their step's
 * total. Cannot fail. */
void perf_ops_breakdown(const struct perf_op *ops, double total, struct perf_breakdown *b);

#endif
