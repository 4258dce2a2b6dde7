/*
 * vllmver: the table of vLLM versions and their defaults.
 */
#include "vllmver.h"

#include <stdlib.h>
#include <string.h>


static const struct vllm_version rows[] = {
	{ .name = "0.5", .minor = 5, .async_scheduling = false, .timing = true, .cache_at_alloc = false,
	  .overhead = "vllm-v0-sync",
	  .source = "V0 (LLMEngine) before v0.6: output processing between the steps; V1's scheduler "
		    "rules stand in for V0's" },
	{ .name = "0.6", .minor = 6, .async_scheduling = false, .timing = true, .cache_at_alloc = false,
	  .overhead = "vllm-v0",
	  .source = "V0 v0.6-v0.7: asynchronous output processor (vllm-project/vllm#7049); V1's "
		    "scheduler rules stand in for V0's" },
	{ .name = "0.8", .minor = 8, .async_scheduling = false, .timing = false, .cache_at_alloc = false,
	  .overhead = NULL,
	  .source = "servesim 1's model of V1 (synchronous EngineCore.step, as V1 ran until "
		    "--async-scheduling existed); sliding-window layers beside full ones kept as full "
		    "attention in the KV cache manager (vllm-project/vllm#14097)" },
	{ .name = "0.10", .minor = 10, .async_scheduling = false, .timing = true, .cache_at_alloc = true,
	  .overhead = "vllm-v1", .piecewise_only = true, .capture_grid8 = true, .hybrid_kv = true,
	  .source = "v0.10: V1 with piecewise CUDA graphs only (CompilationConfig.full_cuda_graph off; "
		    "vllm-project/vllm#20059's cudagraph_mode, v0.10.2, defaults to PIECEWISE); the hybrid "
		    "KV cache manager for sliding-window models (its pieces through v0.9: #17394 ... #18593); "
		    "allocate_slots caches blocks as it allocates; async scheduling opt-in; capture sizes "
		    "[1, 2, 4] + range(8, min(2 x max_num_seqs, 512) + 1, 8) (VllmConfig._set_cudagraph_sizes)" },
	{ .name = "0.11", .minor = 11, .async_scheduling = false, .timing = true, .cache_at_alloc = true,
	  .overhead = "vllm-v1", .hybrid_kv = true,
	  .source = "v0.11.0: cudagraph_mode FULL_AND_PIECEWISE by default (config/compilation.py); "
		    "async scheduling opt-in; KVCacheManager.allocate_slots caches blocks as it allocates" },
	{ .name = "0.12", .minor = 12, .async_scheduling = false, .timing = true, .cache_at_alloc = true,
	  .overhead = "vllm-v1", .hybrid_kv = true, .shared_expert_stream = true,
	  .source = "v0.12: 0.11's defaults, and a MoE layer's shared experts on a second CUDA stream "
		    "beside the routed ones for steps of <= 256 tokens (vllm-project/vllm#26440, #28406)" },
	{ .name = "0.13", .minor = 13, .async_scheduling = true, .timing = true, .cache_at_alloc = true,
	  .overhead = "vllm-v1", .hybrid_kv = true, .shared_expert_stream = true,
	  .source = "vllm-project/vllm#27614: async scheduling on by default (off with pipeline "
		    "parallelism and speculative decoding)" },
	{ .name = "0.15", .minor = 15, .async_scheduling = true, .timing = true, .cache_at_alloc = true,
	  .overhead = "vllm-v1", .hybrid_kv = true, .shared_expert_stream = true,
	  .source = "v0.15.1, the version of the 15 calibration runs (../shared/calibration)" },
};

enum { N_ROWS = sizeof rows / sizeof *rows };

const struct vllm_version *vllmver_newest(void)
{
	return &rows[N_ROWS - 1];
}

const struct vllm_version *vllmver_find(const char *text)
{
	if (!text[0])
		return vllmver_newest();
	if (text[0] == 'v')
		text++;
	if (strncmp(text, "0.", 2))
		return NULL;
	const char *p = text + 2;
	char *end;
	if (*p < '0' || *p > '9')
		return NULL;
	long minor = strtol(p, &end, 10);
	if (*end == '.') {
		const char *patch = end + 1;
		if (*patch < '0' || *patch > '9')
			return NULL;
		strtol(patch, &end, 10);
	}
	if (*end || minor < rows[0].minor)
		return NULL;
	const struct vllm_version *best = &rows[0];
	for (int i = 0; i < N_ROWS; i++)
		if (rows[i].minor <= minor)
			best = &rows[i];
	return best;
}
