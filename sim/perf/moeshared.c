/*
 * moeshared: a MoE layer's shared experts on a second CUDA stream beside
 * its routed experts (vLLM's SharedFusedMoE): how much of their time the
 * routed call hides. steptime.h declares it; struct perf holds the state
 * (shared_bytes, shared_stream).
 *
 * vLLM runs the shared experts on an auxiliary stream while the routed
 * experts run on the main one, their outputs summed after (vllm-project/
 * vllm#26440, "Dual stream execution of shared_experts and
 * selected_experts inside FusedMoE"), for batches of at most 256 tokens
 * (vllm-project/vllm#28406, DUAL_STREAM_TOKEN_THRESHOLD); Llama 4's
 * Llama4MoE and DeepSeek's MoE pass their shared experts to it
 * (SharedFusedMoE). The routed call's fixed time (the backend row's
 * moe_fixed_s: the router's top-k, the permutes, the activation quant and
 * the grouped GEMMs' own latency, small kernels that leave the memory bus
 * mostly idle) is where the shared experts' weight reads go: estimate,
 * the hidden part is the shared experts' time up to that fixed time a
 * layer (no measurement of the overlap at a kernel level was found; the
 * PR's end-to-end figure, DeepSeek-R1 FP8 TPOT 23.35 -> 22.09 ms on
 * 8 x B200 at batch 32, is a check only).
 */
#include "steptime.h"

#include <math.h>

/* vllm-project/vllm#28406's DUAL_STREAM_TOKEN_THRESHOLD: larger steps run
 * the shared experts on the main stream. */
#define DUAL_STREAM_MAX_TOKENS 256

double perf_moe_shared_hidden_s(const struct perf *p, const struct perf *q, double tokens, double dense_s)
{
	if (!p->shared_stream || tokens > DUAL_STREAM_MAX_TOKENS || p->shared_bytes <= 0 ||
	    p->n_moe_layers <= 0 || p->dense_bytes <= 0)
		return 0;
	/* The shared experts' part of the dense row: on the profile's mat-vec
	 * curve, their two kernels a layer and their bytes; else their share
	 * of the row's bytes. */
	double shared_s = dense_s * p->shared_bytes / p->dense_bytes;
	if (q->gemv_curve) {
		double bw = hw_gemv_bandwidth(p->hw, p->shared_bytes, 2 * p->n_moe_layers);
		if (bw > 0)
			shared_s = fmin(dense_s, p->shared_bytes / bw);
	}
	return fmin(shared_s, p->n_moe_layers * q->moe_fixed_s);
}
