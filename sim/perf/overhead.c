/*
 * overhead: the engine-level overhead profiles and the costs built from
 * them (overhead.h).
 */
#include "overhead.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "iround.h"

/* The sampler's paths other than top-p's sort (perf/sampling.h), shared
 * by every profile (the same PyTorch ops):
 * No top-k/top-p (random_sample): the logits to fp32, the temperature,
 * softmax, exponential noise, a division and argmax, no sort. The softmax
 * alone: ~93 us a step at batch 16 of Qwen3.6-35B-A3B (vocabulary 248,320
 * assumed: 4.0 M logits), 0.023 ns a logit (vllm-project/vllm#51526's
 * profile, "the softmax was ~93 us/step"); argmax is a second row
 * reduction of the same size, and the four elementwise passes move ~20 B
 * a logit (0.007 ns at 3 TB/s): 0.053 ns a logit. Fixed part: estimate 20
 * us (six kernels, against the ~15 of the sort path's 100 us).
 * Greedy (every request at temperature 0): the fp32 copy and argmax,
 * 0.025 ns a logit (argmax as the softmax's reduction, the copy 6 B a
 * logit); fixed part estimate 10 us.
 * Top-k alone (apply_top_k_only, torch.topk): the top-p line, within its
 * tolerance: 2.06 ms for top-k against 2.32 for top-p at 128 x 131,072
 * (vllm-project/vllm#40376's PyTorch column).
 * Penalties (a model whose generation_config sets repetition_penalty, as
 * Qwen2.5-Instruct's 1.05; vLLM applies it by default), before any path:
 * apply_all_penalties builds (sequences, vocab + 1) int64 bin counts and
 * masks of the prompt's and of the output's tokens (zeros, scatter_add_,
 * > 0: 17 B a logit each), the repetition-penalty kernel (vllm-project/
 * vllm#18437: logits and two masks, 10 B) and the frequency and presence
 * terms, applied even at 0 (~41 B): ~85 B a logit, 0.028 ns at 3 TB/s.
 * estimate: that byte count (no H100 timing of the whole path found; #18437
 * times the repetition kernel alone, without a table here), and 40 us
 * for its ~9 kernels. The per-step CPU work of the path (the output
 * history padded into a pinned tensor each step, and under async
 * scheduling a wait on the previous step's sampled ids, vllm-project/
 * vllm#47540) is left out: it overlaps the GPU step while it fits.
 * Min-p (a min_p > 0 sent; MinPLogitsProcessor, skipped when all greedy):
 * a softmax, its row max, a compare and a masked fill: 0.04 ns a logit
 * (the softmax's 0.023 of #51526 above, the max a second reduction at
 * half of it, ~14 B of compare and fill); estimate: 15 us for its four
 * kernels. */
#define SAMPLER_OTHER_PATHS \
	.sampler_random_us = 20, .sampler_random_ns_per_logit = 0.053, .sampler_greedy_us = 10, \
	.sampler_greedy_ns_per_logit = 0.025, .sampler_penalty_us = 40, .sampler_penalty_ns_per_logit = 0.028, \
	.sampler_min_p_us = 15, .sampler_min_p_ns_per_logit = 0.04

static const struct overhead_profile profiles[] = {
	{ .name = "vllm-v1",
	  /* The API server's own work per request on its event loop:
	   * uvicorn's HTTP parse, the CompletionRequest model's validation,
	   * SamplingParams, InputProcessor and the ZMQ send to the engine core.
	   * Estimate: 0.5 ms (a minimal FastAPI route serves a few thousand
	   * requests/s on one core; vLLM's request model and processor are
	   * several times that work); no vLLM measurement of it found. */
	  .request_us = 500,
	  /* Tokenization, per prompt token, on the one-thread tokenizer
	   * executor (vllm-project/vllm#25301) holding the GIL: the Qwen3
	   * tokenizer encodes 1024 prompts of 10,000 tokens in 8.0 s on one
	   * thread, 0.78 us a token, and batching them gains nothing without
	   * TOKENIZERS_PARALLELISM (vllm-project/vllm#45759's benchmark);
	   * HF tokenizers v0.23.1 encode English at 3.9 MB/s on one Xeon 8375C
	   * core, ~1.1 us a token at ~4.5 bytes a token
	   * (huggingface/tokenizers#2298's table). 1 us, between the two. */
	  .request_per_token_us = 1.0,
	  /* Scheduler.update_from_output: 0.142 ms at batch 128, 0.287 ms at
	   * 256, i.e. 1.1 us per request (vllm-project/vllm#46112's
	   * micro-benchmark); schedule() and input preparation per request
	   * are not separated from the per-step step_cpu_us below. */
	  .step_cpu_per_seq_us = 1.1,
	  /* schedule(), KV block allocation and input preparation, per step:
	   * ~250 us of the 541 us per step that openfabric-systems/simllm#204
	   * profiles on vLLM's engine loop at 128 requests (scheduler 18.6%,
	   * KV allocation 16.1%, output update 9.7%; its executor stub and
	   * frontend excluded). schedule() alone agrees: 5.2 ms for 56 calls
	   * over 100 requests, 488 ms for 5,000 calls over 10,000, ~95 us a
	   * call either way (vllm-project/vllm#19057's FCFS benchmark). The
	   * split between fixed and per request is an estimate from those. */
	  .step_cpu_us = 250,
	  /* vLLM 0.11+ runs FULL_AND_PIECEWISE graphs: a decode-only step
	   * replays one full graph, a step with prefill tokens one piece per
	   * attention layer (attention itself between them).
	   * A piece: 4.7 us. Voxtral-Mini-4B on one H200 decodes 209 tokens in
	   * 1.150 s piecewise (12,272 graph launches, 59 a step) and 1.093 s
	   * with full graphs (208, one a step) (vllm-project/vllm#51167's
	   * table): 0.27 ms a step for 58 more launches.
	   * A full replay: estimate 10 us of host time (cudaGraphLaunch of a
	   * large graph; no vLLM measurement of it alone found). Bounded
	   * above by ahrefs/ocannl#488's ~15 us fixed for a replay and its
	   * stream sync (8-117 no-op kernels, RTX 5070 Ti laptop, WSL2). */
	  .graph_launch_us = 10, .piece_launch_us = 4.7,
	  /* An eager (torch.compile'd, not graphed) kernel launch: 6.8-9.1 us
	   * of host time per Inductor kernel (CachingAutotuner.run, 0 to 19
	   * arguments), of which cuLaunchKernel itself is 3.0 us
	   * (meta-pytorch/tritonbench#1017, GB200); 7 us. Check on the raw
	   * launch: a trivial kernel launched back to back from C++ takes 2.43
	   * us a kernel on an H200 (te42kyfo/gpu-benches gpu-small-kernels/
	   * h200.txt, row "4096 64kB", 27 GB/s), 1.26 us captured in a graph
	   * (h200_graph.txt, elementwise.c's in-graph floor). This host cost is
	   * the one place an eager step pays launches; the GPU side of a
	   * kernel is the step model's rows, graph or not. */
	  .kernel_launch_us = 7,
	  /* --enforce-eager also turns torch.compile off: every op goes through
	   * PyTorch's eager dispatcher. Estimate 20 us a kernel, 200 us a
	   * dense layer, between two measurements of eager against graphed
	   * decode: Llama-2-7B, 100 tokens in 1.2 s eager and 1.05 s with
	   * graphs (vllm-project/vllm#1440, 2023: 1.5 ms a step, 47 us a
	   * layer); Qwen2.5-Omni-7B's thinker on 2 A800s, TPOT 22 ms eager and
	   * 13 ms with graphs (vllm-project/vllm-omni#7960: 9 ms a step, 320 us
	   * a layer). The dispatch alone is below that, as it should be
	   * (a vLLM kernel is several PyTorch ops and a module call): ~2 us a
	   * tensor op from Python, 4 us an op on CUDA (pytorch/pytorch#41383,
	   * #82793), ~7 us an eager elementwise op (flagos-ai/FlagGems#4812). */
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
	   * in chunks so the event loop is not blocked. Bounded above: V0.3's
	   * Python detokenize_incrementally took 19-21 us a call (a stream's
	   * token; vllm-project/vllm#5206, Qwen1.5-0.5B); V1 detokenizes with
	   * tokenizers' DecodeStream (FastIncrementalDetokenizer), faster. */
	  .output_us = 50, .output_per_stream_us = 10,
	  /* With only KV loads in flight EngineCore keeps stepping with empty
	   * batches (the connector reports finished loads through the model
	   * runner's output): one pass of the loop, estimate 200 us. */
	  .idle_poll_us = 200,
	  /* The sampler, on the GPU after the forward pass, outside the
	   * graphs, for every scheduled request (V1 samples partial prefills
	   * too and drops their token). With top-p or top-k (the models'
	   * generation_config defaults, which vLLM applies since
	   * --generation-config auto: Llama-2/3/4 and Qwen2.5 set top_p) vLLM
	   * 0.15 filters with a PyTorch sort of the whole vocabulary (its
	   * FlashInfer sampler off by default, the Triton one, vllm-project/
	   * vllm#33538, came after). That sort's measured time: 0.094-0.136
	   * ms at batch 1 and vocab 32,768 (vllm-project/vllm#51507's PyTorch
	   * column), 0.39 ms at 56 x 32,768 (#33538, H100), 1.07 ms at 64 x
	   * 131,072, 2.06-2.40 ms at 128 x 131,072 and 5.5-6.15 ms at 512 x
	   * 131,072 (vllm-project/vllm#40376), 3.81 ms at 256 x 131,072, top-k
	   * (vllm-project/vllm#32558). Two lines through them: 100 us + 0.13
	   * ns a logit up to 16.8 M logits (128 x 131,072: 2.28 ms), 0.077 ns
	   * a logit beyond (512 x 131,072: 6.15 ms); every point within 13%.
	   * The GPU of #40376 is not named; #33538's is an H100. That 0.15
	   * ran the sort: the KV-pool fit (engine/vllm.c) finds a sampler
	   * working set of 12.2 fp32 copies of the logits, as the sort's 1.25
	   * GB at 256 x 131,072 (9.3 copies, #32558), not Triton's 2.9. Greedy
	   * requests, and requests with neither top-p nor top-k, skip the
	   * sort (SAMPLER_OTHER_PATHS; the path from the workload's sampling
	   * parameters and the model's generation_config, perf/sampling.c).
	   * Checked against gpu_model_runner (v0.15): logits_indices takes the
	   * last scheduled token of every request in the batch, partial
	   * prefills included, compute_logits and the sampler run on all of
	   * them, and the partial prefills' tokens are dropped afterwards
	   * (discard_request_indices), so every scheduled sequence pays. */
	  .sampler_us = 100, .sampler_ns_per_logit = 0.13, .sampler_knee_logits = 16.8e6,
	  .sampler_ns_per_logit_past = 0.077, SAMPLER_OTHER_PATHS,
	  /* The hand-off between two steps with async scheduling, GPU idle:
	   * 150-170 us between two decode steps at batch 256 with CUDA graphs,
	   * the GPU otherwise 100% busy (vllm-project/vllm#11133, the V1
	   * async-scheduling prototype; 50-70 us without graphs). */
	  .step_gap_us = 160,
	  /* The engine-level remainder: what a V1 step costs beyond every
	   * component above and the step model's kernel rows (steptime.c,
	   * elementwise.c), per step, never hidden. Fitted to the 15 H100
	   * runs of ../shared/calibration (vLLM 0.15.1) by crossval.py's "fit
	   * on all 15 runs" (least squares of TTFT, ITL and E2E over their
	   * goals, on a grid of the remainder): 0 us, the grid's edge, since
	   * the small kernels' in-graph floors (elementwise.c: gpu-benches'
	   * 1.26 us a kernel in a graph plus each kernel's own work) carry
	   * what the former 80 us stood for; the objective is flat (67.7 at 0,
	   * 68.1 at 80). The per-sequence term and the request path's
	   * remainder fit to 0 too. Leave-one-family-out, each fold refitting
	   * this term alone: 0-87 us by fold, cv TTFT 10.6%, ITL 8.3%, E2E
	   * 8.2% (tests/accuracy/vllm_h100.py --cross-validate, main of 23:30
	   * UTC; docs/engine-vllm.md "The engine-level remainder"). A hardware
	   * profile's [efficiency] step_overhead_us replaces it. */
	  .request_overhead_ms = 0, .step_overhead_us = 0, .step_overhead_per_seq_us = 0,
	  .source = "vLLM V1 (EngineCore + AsyncLLM), v0.11 onwards" },
	/* vLLM V0 (LLMEngine) before v0.6: schedule(), _prepare_model_input
	 * (no persistent batch: rebuilt each step), sampling and
	 * _process_model_outputs (detokenization included) run between the
	 * GPU steps, nothing overlapped. */
	{ .name = "vllm-v0-sync",
	  .request_us = 500, .request_per_token_us = 1.0,   /* as V1's */
	  /* Between two steps, per sequence: "when BS is 200, all this
	   * together [sampling, prepare input, process_model_output, scheduler
	   * time] can be 20ms" (vllm-project/vllm#6801, V0 v0.5, Aug 2024),
	   * 100 us a sequence; _process_model_outputs alone takes 3.4 ms at
	   * batch 32 on Llama-3-70B on 4 H100s (vllm-project/vllm#6913); the
	   * multi-step RFC sees 5-13 ms of GPU bubble a decode step
	   * (vllm-project/vllm#6854). Fixed part: estimate 500 us (#6913:
	   * 0.2 ms of output processing at batch 1, plus the scheduler and
	   * input preparation). */
	  .step_cpu_us = 500, .step_cpu_per_seq_us = 100,
	  /* V0's graphs are captured per decode batch size and replayed
	   * whole (estimate as V1's full replay); prefill and mixed steps run
	   * eager without torch.compile (V1's --enforce-eager figure). */
	  .graph_launch_us = 10, .piece_launch_us = 0, .kernel_launch_us = 20,
	  .uncompiled_launch_us = 20, .kernels_per_layer = 10, .moe_kernels_per_layer = 14,
	  .decode_only_graphs = true,
	  .output_us = 50, .output_per_stream_us = 10, .idle_poll_us = 200,
	  /* The sampler as V1's (the same PyTorch sort for top-p); no
	   * separate hand-off: the step CPU above runs between the steps. */
	  .sampler_us = 100, .sampler_ns_per_logit = 0.13, .sampler_knee_logits = 16.8e6,
	  .sampler_ns_per_logit_past = 0.077, SAMPLER_OTHER_PATHS, .step_gap_us = 0,
	  .request_overhead_ms = 0, .step_overhead_us = 0, .step_overhead_per_seq_us = 0,
	  .source = "vLLM V0 (LLMEngine), before v0.6: synchronous output processing" },
	/* vLLM V0 v0.6-v0.7: the asynchronous output processor
	 * (vllm-project/vllm#7049, on by default) runs step k's
	 * _process_model_outputs while step k+1 is on the GPU; the scheduler
	 * and input preparation stay between the steps. */
	{ .name = "vllm-v0",
	  .request_us = 500, .request_per_token_us = 1.0,
	  /* Llama-2-7B at batch 256 on ShareGPT: 5-6 ms between two decode
	   * steps (vllm-project/vllm#10634, V0 v0.6.4 era), about 20 us a
	   * sequence after a fixed part (estimate 400 us). */
	  .step_cpu_us = 400, .step_cpu_per_seq_us = 20,
	  .graph_launch_us = 10, .piece_launch_us = 0, .kernel_launch_us = 20,
	  .uncompiled_launch_us = 20, .kernels_per_layer = 10, .moe_kernels_per_layer = 14,
	  .decode_only_graphs = true,
	  .output_us = 50, .output_per_stream_us = 10, .idle_poll_us = 200,
	  .sampler_us = 100, .sampler_ns_per_logit = 0.13, .sampler_knee_logits = 16.8e6,
	  .sampler_ns_per_logit_past = 0.077, SAMPLER_OTHER_PATHS, .step_gap_us = 0,   /* as V0 sync */
	  .request_overhead_ms = 0, .step_overhead_us = 0, .step_overhead_per_seq_us = 0,
	  .source = "vLLM V0 (LLMEngine), v0.6-v0.7: asynchronous output processing" },
	/* TensorRT-LLM's PyTorch backend with its overlap scheduler (the
	 * default): PyExecutor prepares step k+1 while step k runs, one step
	 * of lookahead. Run with engine.async_scheduling = true for the
	 * overlap; the scheduler rules stay vLLM V1's. */
	{ .name = "trtllm-pytorch",
	  .request_us = 500, .request_per_token_us = 1.0,   /* as vLLM's (trtllm-serve) */
	  /* Host step time 45.11 ms an iteration at max_batch_size 1536 a
	   * rank (GPT-OSS-120B on GB200, attention DP 2; NVIDIA/TensorRT-LLM
	   * #10273): 29 us a sequence, overlapped with the GPU step. Fixed
	   * part: estimate 300 us. */
	  .step_cpu_us = 300, .step_cpu_per_seq_us = 29,
	  /* CUDA graphs for generation-only batches (its cuda_graph_config);
	   * other steps eager. Launch costs as vLLM's (same PyTorch). */
	  .graph_launch_us = 10, .piece_launch_us = 0, .kernel_launch_us = 7,
	  .uncompiled_launch_us = 20, .kernels_per_layer = 10, .moe_kernels_per_layer = 14,
	  .decode_only_graphs = true,
	  .output_us = 50, .output_per_stream_us = 10, .idle_poll_us = 200,
	  /* The host work the one step of lookahead leaves exposed: ~580 us an
	   * iteration of GPU idle (Llama-3.1-8B FP8 on a B200, concurrency 64;
	   * NVIDIA/TensorRT-LLM#13957's traces). Its sampler: estimate as
	   * vLLM's (no TensorRT-LLM figure found). */
	  .sampler_us = 100, .sampler_ns_per_logit = 0.13, .sampler_knee_logits = 16.8e6,
	  .sampler_ns_per_logit_past = 0.077, SAMPLER_OTHER_PATHS, .step_gap_us = 580,
	  .request_overhead_ms = 0, .step_overhead_us = 0, .step_overhead_per_seq_us = 0,
	  .source = "TensorRT-LLM PyTorch backend, overlap scheduler" },
};

void overhead_profile_names(char *buf, size_t size)
{
	size_t len = 0;
	buf[0] = '\0';
	for (size_t i = 0; i < sizeof profiles / sizeof *profiles && len < size; i++)
		len += (size_t)snprintf(buf + len, size - len, "%s%s", i ? ", " : "", profiles[i].name);
}

const struct overhead_profile *overhead_profile_find(const char *name)
{
	for (size_t i = 0; i < sizeof profiles / sizeof *profiles; i++)
		if (!strcmp(profiles[i].name, name))
			return &profiles[i];
	return NULL;
}

/* vLLM's capture list: 1, 2, 4, then multiples of 8, and of 16 from
 * coarse_from on, up to min(2 x max_num_seqs, 512, the token budget). */
static int capture_sizes(int64_t max_num_seqs, int64_t max_num_batched_tokens, int64_t coarse_from,
			 int32_t *out, int cap)
{
	int64_t max = 2 * max_num_seqs < 512 ? 2 * max_num_seqs : 512;
	if (max_num_batched_tokens < max)
		max = max_num_batched_tokens;
	int n = 0;
	for (int64_t s = 1; s <= 4 && s <= max && n < cap; s *= 2)
		out[n++] = (int32_t)s;
	for (int64_t s = 8; s <= max && n < cap; s += s < coarse_from ? 8 : 16)
		out[n++] = (int32_t)s;
	return n;
}

int overhead_capture_sizes(int64_t max_num_seqs, int64_t max_num_batched_tokens, int32_t *out,
			   int cap)
{
	return capture_sizes(max_num_seqs, max_num_batched_tokens, 256, out, cap);
}

int overhead_capture_sizes_grid8(int64_t max_num_seqs, int64_t max_num_batched_tokens, int32_t *out,
				 int cap)
{
	return capture_sizes(max_num_seqs, max_num_batched_tokens, INT64_MAX, out, cap);
}

int overhead_capture_sizes_v0(int64_t max_num_seqs, int32_t *out, int cap)
{
	int64_t max = max_num_seqs <= 4 ? (max_num_seqs <= 1 ? 1 : max_num_seqs <= 2 ? 2 : 4) :
		      (max_num_seqs + 7) / 8 * 8;
	if (max > 256)
		max = 256;
	int n = 0;
	for (int64_t s = 1; s <= 4 && s <= max && n < cap; s *= 2)
		out[n++] = (int32_t)s;
	for (int64_t s = 8; s <= max && n < cap; s += 8)
		out[n++] = (int32_t)s;
	return n;
}

void overhead_model_init(struct overhead_model *o, const struct overhead_profile *prof,
			 const struct hw_profile *hw, bool async, bool eager,
			 int64_t max_num_seqs, int64_t max_num_batched_tokens, double layers,
			 double moe_layers, double vocab)
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
	o->grid16_from = 256;
	if (!eager)
		o->n_capture = prof->decode_only_graphs ? overhead_capture_sizes_v0(max_num_seqs, o->capture,
									   OVERHEAD_MAX_CAPTURE) :
				 capture_sizes(max_num_seqs, max_num_batched_tokens, o->grid16_from, o->capture,
					       OVERHEAD_MAX_CAPTURE);
	o->pieces = layers + 1;
	o->vocab = vocab;
	double kernels = (layers - moe_layers) * prof->kernels_per_layer +
			 moe_layers * prof->moe_kernels_per_layer;
	o->eager_launch_s = kernels * (eager ? prof->uncompiled_launch_us : prof->kernel_launch_us) * 1e-6;
}

void overhead_use_grid8(struct overhead_model *o, int64_t max_num_seqs, int64_t max_num_batched_tokens)
{
	if (o->n_capture == 0 || o->prof->decode_only_graphs)
		return;
	o->grid16_from = INT32_MAX;
	o->n_capture = capture_sizes(max_num_seqs, max_num_batched_tokens, o->grid16_from, o->capture,
				     OVERHEAD_MAX_CAPTURE);
}

/* The path's own cost, seconds (no penalties). */
static double sampler_path_s(const struct overhead_model *o, double logits)
{
	const struct overhead_profile *p = o->prof;
	if (o->sampler == SAMPLER_RANDOM)
		return p->sampler_random_us * 1e-6 + p->sampler_random_ns_per_logit * logits * 1e-9;
	if (o->sampler == SAMPLER_GREEDY)
		return p->sampler_greedy_us * 1e-6 + p->sampler_greedy_ns_per_logit * logits * 1e-9;
	double knee = p->sampler_knee_logits;
	double ns = logits <= knee ? p->sampler_ns_per_logit * logits :
				     p->sampler_ns_per_logit * knee + p->sampler_ns_per_logit_past * (logits - knee);
	return p->sampler_us * 1e-6 + ns * 1e-9;
}

double overhead_sampler_s(const struct overhead_model *o, double seqs)
{
	if (seqs <= 0)
		return 0;
	const struct overhead_profile *p = o->prof;
	double logits = seqs * o->vocab;
	double pen = o->penalties ? p->sampler_penalty_us * 1e-6 + p->sampler_penalty_ns_per_logit * logits * 1e-9 : 0;
	double min_p = o->min_p ? p->sampler_min_p_us * 1e-6 + p->sampler_min_p_ns_per_logit * logits * 1e-9 : 0;
	return sampler_path_s(o, logits) + pen + min_p;
}

double overhead_step_s(const struct overhead_model *o, double tokens, double seqs, double gpu_s,
		       double dense_tok_s, double *parts)
{
	const struct overhead_profile *p = o->prof;
	double cpu = (p->step_cpu_us + p->step_cpu_per_seq_us * seqs) * 1e-6;
	int64_t padded = overhead_padded(o, (int64_t)ceil(tokens), (int64_t)ceil(seqs));
	double launch, pad = 0;
	if (padded > 0) {
		/* A decode-only step (a token a sequence) replays the full
		 * graph; one with prefill tokens the pieces, which queue ahead
		 * of the GPU like eager launches (the first always shows). */
		double piece = p->piece_launch_us * 1e-6;
		launch = tokens <= seqs ? p->graph_launch_us * 1e-6 : fmax(piece, o->pieces * piece - gpu_s);
		/* PIECEWISE only (vLLM 0.10): a decode-only step replays the
		 * pieces as well, and they all show: vllm-project/vllm#51167's
		 * decode steps took 0.27 ms more piecewise than full, 58 more
		 * launches, on which piece_launch_us rests. */
		if (o->piecewise_only && tokens <= seqs)
			launch = o->pieces * piece;
		pad = ((double)padded - tokens) * dense_tok_s;
	} else {
		/* Eager kernels queue ahead of the GPU: only launches that
		 * outrun it show. */
		launch = fmax(0, o->eager_launch_s - gpu_s);
	}
	/* Async scheduling: step k+1's CPU work runs while step k is on the
	 * GPU; what does not fit under it shows. */
	double shown_cpu = o->async ? fmax(0, cpu - gpu_s - launch - pad) : cpu;
	/* Never hidden: the sampler on the GPU (every scheduled sequence's
	 * logits), the hand-off gap, and a calibrated remainder where a
	 * hardware profile sets one. */
	double rest = overhead_sampler_s(o, seqs) + p->step_gap_us * 1e-6 +
		      (o->step_overhead_us + o->step_overhead_per_seq_us * seqs) * 1e-6;
	if (parts) {
		parts[0] = shown_cpu;
		parts[1] = launch;
		parts[2] = pad;
		parts[3] = rest;
	}
	return shown_cpu + launch + pad + rest;
}

int64_t overhead_request_ns(const struct overhead_model *o)
{
	return iround(o->prof->request_us * 1e3);
}

int64_t overhead_tokenize_ns(const struct overhead_model *o, int64_t prompt_len)
{
	return iround(o->prof->request_per_token_us * 1e3 * (double)prompt_len);
}

int64_t overhead_request_rest_ns(const struct overhead_model *o)
{
	return iround(o->request_overhead_ms * 1e6);
}

int64_t overhead_output_ns(const struct overhead_model *o, int64_t streams)
{
	return iround((o->prof->output_us + o->prof->output_per_stream_us * (double)streams) * 1e3);
}
