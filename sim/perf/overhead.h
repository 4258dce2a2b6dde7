/*
 * overhead: what a serving engine spends around the GPU's work, split into
 * what it is (issue 18), per engine family and version:
 *   - before the engine, per request: the API server's HTTP, chat template,
 *     tokenization and add_request (a fixed part plus one per prompt token);
 *   - per step on the engine core's CPU: schedule(), preparing the inputs,
 *     update_from_output (a fixed part plus one per sequence). Synchronous
 *     scheduling runs it between GPU steps; async scheduling runs it while
 *     the previous step is on the GPU, so only what exceeds the GPU step
 *     shows;
 *   - launches: a step of at most the largest CUDA-graph capture size is
 *     padded to the next capture size and replays a graph: one full graph
 *     for a decode-only step, one piece per layer for a step with prefill
 *     tokens (vLLM's FULL_AND_PIECEWISE; the pieces' launches queue ahead
 *     of the GPU and show only where they outrun it); a larger step
 *     runs eager (torch.compile'd), one host launch per kernel per layer
 *     (more for MoE layers), which shows only where the launches outrun
 *     the GPU; --enforce-eager runs every step so, through PyTorch's
 *     slower eager dispatch;
 *   - per step, never hidden (on the GPU, or the GPU waiting): the
 *     sampler (by its path, perf/sampling.h: top-p sorts the whole
 *     vocabulary, top-k takes torch.topk at the same cost, plain random
 *     sampling and greedy pass over the logits; a fixed part plus one per
 *     logit: sequences × vocab) and the hand-off between two
 *     steps that async scheduling leaves;
 *   - after each step, per stream: the output path (detokenization, the
 *     SSE chunk), which delays when a client sees its tokens, not the
 *     next step.
 * Each component number sits in the profile table with its source (or
 * "estimate:"); none is fitted to end-to-end runs. The remainders
 * (request_overhead_ms before the engine, step_overhead_us +
 * step_overhead_per_seq_us per step, never hidden) are the only terms
 * fitted end to end: vLLM V1's per-step remainder to the 15 H100
 * calibration runs (issue 11 lets them set only such engine-level
 * overheads; overhead.c says what it stands for), every other profile's
 * at 0; a hardware profile's [efficiency] replaces them, never adds to
 * them (what `calibrate runs` fits to a user's own runs).
 *
 * An overhead_model is a plain record resolved once per engine; the step
 * cost is O(1) and allocation-free (it runs once per step).
 */
#ifndef SERVESIM_OVERHEAD_H
#define SERVESIM_OVERHEAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hwprofile.h"
#include "sampling.h"

struct overhead_profile {
	const char *name;
	double request_us;             /* the API server's work per request (HTTP,
					* request parsing, add_request) */
	double request_per_token_us;   /* tokenization, per prompt token */
	double step_cpu_us;            /* engine core CPU per step (overlapped with async) */
	double step_cpu_per_seq_us;    /* and per sequence */
	double graph_launch_us;        /* one full CUDA-graph replay (a decode-only step) */
	double piece_launch_us;        /* one piece of a piecewise graph (a step with
					* prefill tokens: one piece per attention layer) */
	double kernel_launch_us;       /* one eager kernel launch, host side */
	double uncompiled_launch_us;   /* the same under --enforce-eager (no torch.compile) */
	double kernels_per_layer;      /* eager kernels of a dense layer */
	double moe_kernels_per_layer;  /* of an MoE layer */
	bool decode_only_graphs;       /* V0's (and TensorRT-LLM's) CUDA graphs:
					* decode-only steps of at most min(256,
					* max_num_seqs padded) sequences, the rest eager */
	double idle_poll_us;           /* an engine-loop pass with nothing to schedule
					* while KV loads are in flight */
	double output_us;              /* output path, per step */
	double output_per_stream_us;   /* and per stream with a token */
	double sampler_us;             /* the sampler on the GPU, per step that samples */
	double sampler_ns_per_logit;   /* and per logit it filters (sequences × vocab) */
	double sampler_knee_logits;    /* past this many logits a step, */
	double sampler_ns_per_logit_past;   /* each further logit costs this */
	/* The sampler's other paths (perf/sampling.h): no top-k/top-p
	 * (softmax, exponential, argmax) and greedy (argmax only); top-k
	 * alone costs the top-p line above. */
	double sampler_random_us, sampler_random_ns_per_logit;
	double sampler_greedy_us, sampler_greedy_ns_per_logit;
	double sampler_penalty_us, sampler_penalty_ns_per_logit;   /* penalties, on any path */
	double sampler_min_p_us, sampler_min_p_ns_per_logit;       /* min-p, on all but greedy */
	double step_gap_us;            /* the GPU idle between two steps (the hand-off) */
	/* The remainders' defaults (a hardware profile that sets
	 * [efficiency]'s key of the same name wins); 0: not fitted. */
	double request_overhead_ms, step_overhead_us, step_overhead_per_seq_us;
	const char *source;
};

#define OVERHEAD_MAX_CAPTURE 72   /* 0.10's list: 3 + 64 */

struct overhead_model {
	const struct overhead_profile *prof;
	double request_overhead_ms;    /* the remainders: the profile's, or the */
	double step_overhead_us;       /* hardware profile's where it sets them */
	double step_overhead_per_seq_us;
	bool async;                    /* CPU work overlaps the GPU step */
	int n_capture;                 /* 0: eager always (--enforce-eager) */
	int32_t capture[OVERHEAD_MAX_CAPTURE];   /* ascending capture sizes, tokens */
	int32_t grid16_from;           /* the sizes go by 16 from here (256; INT32_MAX: by 8
					* throughout, overhead_use_grid8), by 8 below */
	double eager_launch_s;         /* host time to launch one eager forward */
	double pieces;                 /* pieces of a piecewise graph: layers + 1 */
	double vocab;                  /* the logits a sampled sequence has */
	enum sampler_path sampler;     /* the sampler's path (0: top-p, the default) */
	bool penalties;                /* repetition/frequency/presence penalties applied */
	bool min_p;                    /* the min-p filter runs */
	bool piecewise_only;           /* cudagraph_mode PIECEWISE (vLLM 0.10): a
					* decode-only step replays the pieces too */
};

/* The profile named name, or NULL. */
const struct overhead_profile *overhead_profile_find(const char *name);

/* The profiles' names, ", "-separated, into buf (for messages). */
void overhead_profile_names(char *buf, size_t size);

/* vLLM's default capture sizes (VllmConfig._set_cudagraph_sizes): [1, 2, 4],
 * multiples of 8 below 256, of 16 from 256, up to min(2 × max_num_seqs,
 * 512, max_num_batched_tokens). Writes at most cap sizes into out and
 * returns how many. Cannot fail. */
int overhead_capture_sizes(int64_t max_num_seqs, int64_t max_num_batched_tokens, int32_t *out,
			   int cap);

/* vLLM 0.10's capture sizes (VllmConfig._set_cudagraph_sizes then:
 * [1, 2, 4] + range(8, cuda_graph_sizes[0] + 1, 8), cuda_graph_sizes
 * [min(2 × max_num_seqs, 512)]): multiples of 8 throughout, cut at
 * max_num_batched_tokens as the newer list is (no step is larger). Writes
 * at most cap sizes; returns how many. */
int overhead_capture_sizes_grid8(int64_t max_num_seqs, int64_t max_num_batched_tokens, int32_t *out,
				 int cap);

/* vLLM V0's capture sizes (worker/model_runner.py _BATCH_SIZES_TO_CAPTURE):
 * [1, 2, 4] and multiples of 8 up to min(256, max_num_seqs rounded up to
 * the next of them). Writes at most cap sizes; returns how many. */
int overhead_capture_sizes_v0(int64_t max_num_seqs, int32_t *out, int cap);

/* Fills *o. hw: where it sets the remainders itself, its values win.
 * eager: --enforce-eager (no graphs). layers, moe_layers: the
 * layers on the (fullest) GPU. vocab: the model's vocabulary (the
 * logits the sampler filters per sequence). Cannot fail. */
void overhead_model_init(struct overhead_model *o, const struct overhead_profile *prof,
			 const struct hw_profile *hw, bool async, bool eager,
			 int64_t max_num_seqs, int64_t max_num_batched_tokens, double layers,
			 double moe_layers, double vocab);

/* vLLM 0.10's grid in place of the newer one: the capture list
 * (overhead_capture_sizes_grid8) and the padding rule (grid16_from) set
 * together, from the same max_num_seqs and budget overhead_model_init had.
 * Nothing changes for eager steps or V0's decode-only graphs. */
void overhead_use_grid8(struct overhead_model *o, int64_t max_num_seqs, int64_t max_num_batched_tokens);

/* The capture size a step of tokens for seqs sequences runs at, or 0 when
 * it runs eager (V0 graphs only decode-only steps). */
static inline int64_t overhead_padded(const struct overhead_model *o, int64_t tokens, int64_t seqs)
{
	if (o->n_capture == 0 || tokens > o->capture[o->n_capture - 1] || tokens <= 0 ||
	    (o->prof->decode_only_graphs && tokens > seqs))
		return 0;
	int64_t p = tokens <= 4 ? (tokens <= 1 ? 1 : tokens <= 2 ? 2 : 4) :
		    tokens < o->grid16_from ? (tokens + 7) / 8 * 8 : (tokens + 15) / 16 * 16;
	/* The regular grid, unless max_num_batched_tokens cut the list. */
	return p <= o->capture[o->n_capture - 1] ? p : o->capture[o->n_capture - 1];
}

/* What a step adds to its GPU work, in seconds.
 *   tokens, seqs    the step's (per microbatch with a pipeline);
 *   gpu_s           its GPU time (every other row of the step);
 *   dense_tok_s     the dense matmuls' time per token when they are
 *                   compute bound, else 0 (what a padded token costs).
 * With parts non-NULL, also its parts: [0] CPU that shows, [1] launches,
 * [2] graph padding, [3] the rest, never hidden: the sampler, the
 * hand-off gap and any calibrated remainder. */
double overhead_step_s(const struct overhead_model *o, double tokens, double seqs, double gpu_s,
		       double dense_tok_s, double *parts);

/* The sampler's GPU time for a step that samples seqs sequences, in
 * seconds (0 for none): never hidden, part of overhead_step_s's rest. */
double overhead_sampler_s(const struct overhead_model *o, double seqs);

/* Before the engine, in ns: the API server's event-loop work for a
 * request (HTTP, parsing, add_request), and its tokenizer's for a prompt
 * of prompt_len tokens; each queues (engine/apiserver.h). */
int64_t overhead_request_ns(const struct overhead_model *o);
int64_t overhead_tokenize_ns(const struct overhead_model *o, int64_t prompt_len);

/* Before the engine, not queued: the remainder (request_overhead_ms; 0
 * unless a hardware profile sets it), in ns. */
int64_t overhead_request_rest_ns(const struct overhead_model *o);

/* After a step that produced tokens for streams streams, until the
 * clients see them, in ns. */
int64_t overhead_output_ns(const struct overhead_model *o, int64_t streams);

#endif
