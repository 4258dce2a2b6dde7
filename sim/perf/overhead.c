/*
 * overhead: the engine-level overhead profiles and the costs built from
 * them (overhead.h).
 */
#include "overhead.h"

#include <math.h>
#include <string.h>

static const struct overhead_profile profiles[] = {
	{ .name = "vllm-v1",
	  /* HF tokenizers (Rust) encode on the order of 1 M tokens/s on one
	   * core; estimate, no vLLM-side measurement found (the 10-21 us per
	   * token of tenstorrent/tt-inference-server#2173 at 131 tokens is
	   * mostly its fixed cost). */
	  .request_per_token_us = 1.0,
	  /* Scheduler.update_from_output: 0.142 ms at batch 128, 0.287 ms at
	   * 256, i.e. 1.1 us per request (vllm-project/vllm#46112's
	   * micro-benchmark); schedule() and input preparation per request
	   * are in the fitted remainder, step_overhead_per_seq_us. */
	  .step_cpu_per_seq_us = 1.1,
	  /* schedule(), KV block allocation and input preparation, per step:
	   * ~250 us of the 541 us per step that openfabric-systems/simllm#204
	   * profiles on vLLM's engine loop at 128 requests (scheduler 18.6%,
	   * KV allocation 16.1%, output update 9.7%; its executor stub and
	   * frontend excluded). Estimate from that study. */
	  .step_cpu_us = 250,
	  /* One cudaGraphLaunch of a whole-model graph: a few us of host time
	   * (NVIDIA's "Getting Started with CUDA Graphs", 2019: tiny kernels
	   * take ~3.8 us each launched one by one, ~3.4 us in a graph; quoted
	   * from memory, not re-read); estimate 10 us for vLLM's piecewise
	   * graphs (one per layer piece). */
	  .graph_launch_us = 10,
	  /* An eager (torch.compile'd, not graphed) kernel launch from Python:
	   * ~5 us of host time (CUDA launch ~2-4 us plus the wrapper).
	   * Estimate. */
	  .kernel_launch_us = 5,
	  /* --enforce-eager also turns torch.compile off: every op goes through
	   * PyTorch's eager dispatcher, ~20 us of host time per kernel
	   * (estimate: PyTorch's per-op overhead is quoted at 10-30 us; it is
	   * what makes small-batch decode with --enforce-eager up to about
	   * twice as slow in vLLM users' reports). */
	  .uncompiled_launch_us = 20,
	  /* A Llama-style layer under torch.compile: RMSNorm, QKV GEMM,
	   * rotary, attention, O GEMM, fused add+RMSNorm, gate_up GEMM,
	   * SiLU-and-mul, down GEMM, the residual: ~10 kernels. An MoE layer
	   * adds the router GEMM, top-k softmax, moe_align, two grouped GEMMs,
	   * the activation and the sum: ~14. Counted from vLLM's
	   * llama.py / fused_moe (no trace). */
	  .kernels_per_layer = 10, .moe_kernels_per_layer = 14,
	  /* AsyncLLM's output handler and each stream's SSE chunk: estimate
	   * 50 us per step plus 10 us per stream (incremental detokenization
	   * and JSON of one chunk); vllm-project/vllm#12287 splits this work
	   * in chunks so the event loop is not blocked. */
	  .output_us = 50, .output_per_stream_us = 10,
	  /* With only KV loads in flight EngineCore keeps stepping with empty
	   * batches (the connector reports finished loads through the model
	   * runner's output): one pass of the loop, estimate 200 us. */
	  .idle_poll_us = 200,
	  /* The remainders, fitted with every component above to the 15
	   * H100 runs of ../shared/calibration (vLLM v0.15.1, async
	   * scheduling): a coordinate search over these three alone, the
	   * step model's efficiencies held at their defaults (docs/engine-vllm.md
	   * "Fitting the remainders"). The request path needs no fixed part
	   * beyond tokenization and the output path; the per-step rest is
	   * what the 15 runs show between steps that the step model and the
	   * components above do not explain. */
	  /* Refitted by issue 11 on top of its backend kernel tables
	   * (`vllm_h100.py --cross-validate`, "fit on all 15 runs"; was 1275
	   * us and 5 us a sequence on the device-class scalars; 1413 us
	   * before the decode-attention row took FA3's fixed cost a layer). */
	  .request_overhead_ms = 0, .step_overhead_us = 1264, .step_overhead_per_seq_us = 0,
	  .source = "vLLM V1 (EngineCore + AsyncLLM), v0.11 onwards" },
};

const struct overhead_profile *overhead_profile_find(const char *name)
{
	for (size_t i = 0; i < sizeof profiles / sizeof *profiles; i++)
		if (!strcmp(profiles[i].name, name))
			return &profiles[i];
	return NULL;
}

int overhead_capture_sizes(int64_t max_num_seqs, int64_t max_num_batched_tokens, int32_t *out,
			   int cap)
{
	int64_t max = 2 * max_num_seqs < 512 ? 2 * max_num_seqs : 512;
	if (max_num_batched_tokens < max)
		max = max_num_batched_tokens;
	int n = 0;
	for (int64_t s = 1; s <= 4 && s <= max && n < cap; s *= 2)
		out[n++] = (int32_t)s;
	for (int64_t s = 8; s < 256 && s <= max && n < cap; s += 8)
		out[n++] = (int32_t)s;
	for (int64_t s = 256; s <= max && n < cap; s += 16)
		out[n++] = (int32_t)s;
	return n;
}

void overhead_model_init(struct overhead_model *o, const struct overhead_profile *prof,
			 const struct hw_profile *hw, bool async, bool eager,
			 int64_t max_num_seqs, int64_t max_num_batched_tokens, double layers,
			 double moe_layers)
{
	memset(o, 0, sizeof *o);
	o->prof = prof;
	unsigned given = hw->overheads_given;
	o->request_overhead_ms = given & HW_GIVEN_REQUEST_OVERHEAD ? hw->eff.request_overhead_ms :
				 prof->request_overhead_ms;
	o->step_overhead_us = given & HW_GIVEN_STEP_OVERHEAD ? hw->eff.step_overhead_us :
			      prof->step_overhead_us;
	o->step_overhead_per_seq_us = given & HW_GIVEN_STEP_PER_SEQ ? hw->eff.step_overhead_per_seq_us :
				      prof->step_overhead_per_seq_us;
	o->async = async;
	if (!eager)
		o->n_capture = overhead_capture_sizes(max_num_seqs, max_num_batched_tokens, o->capture,
						      OVERHEAD_MAX_CAPTURE);
	double kernels = (layers - moe_layers) * prof->kernels_per_layer +
			 moe_layers * prof->moe_kernels_per_layer;
	o->eager_launch_s = kernels * (eager ? prof->uncompiled_launch_us : prof->kernel_launch_us) * 1e-6;
}

double overhead_step_s(const struct overhead_model *o, double tokens, double seqs, double gpu_s,
		       double dense_tok_s, double *parts)
{
	const struct overhead_profile *p = o->prof;
	double cpu = (p->step_cpu_us + p->step_cpu_per_seq_us * seqs) * 1e-6;
	int64_t padded = overhead_padded(o, (int64_t)ceil(tokens));
	double launch, pad = 0;
	if (padded > 0) {
		launch = p->graph_launch_us * 1e-6;
		pad = ((double)padded - tokens) * dense_tok_s;
	} else {
		/* Eager kernels queue ahead of the GPU: only launches that
		 * outrun it show. */
		launch = fmax(0, o->eager_launch_s - gpu_s);
	}
	/* Async scheduling: step k+1's CPU work runs while step k is on the
	 * GPU; what does not fit under it shows. */
	double shown_cpu = o->async ? fmax(0, cpu - gpu_s - launch - pad) : cpu;
	/* What the components leave unexplained, fitted, every step. */
	double rest = (o->step_overhead_us + o->step_overhead_per_seq_us * seqs) * 1e-6;
	if (parts) {
		parts[0] = shown_cpu;
		parts[1] = launch;
		parts[2] = pad;
		parts[3] = rest;
	}
	return shown_cpu + launch + pad + rest;
}

int64_t overhead_request_ns(const struct overhead_model *o, int64_t prompt_len)
{
	return llround(o->request_overhead_ms * 1e6 +
		       o->prof->request_per_token_us * 1e3 * (double)prompt_len);
}

int64_t overhead_output_ns(const struct overhead_model *o, int64_t streams)
{
	return llround((o->prof->output_us + o->prof->output_per_stream_us * (double)streams) * 1e3);
}
