/*
 * enginecfg: the [engine] section of a scenario, what the serving engine
 * reads at start-up. The scenario (sim/workload) holds one and binds its
 * keys; the engine (engine.h) sees this struct and never the scenario, so
 * the arrows run one way: workload -> engine.
 *
 * Key names follow `vllm serve` flags, underscored; defaults are vLLM's
 * (scenario.c sets them). Keys whose default depends on the hardware or
 * the model stay "unset" (-1) and are resolved by the engine.
 */
#ifndef SERVESIM_ENGINECFG_H
#define SERVESIM_ENGINECFG_H

#include <stdbool.h>
#include <stdint.h>

#include "inidoc.h"
#include "llamacfg.h"
#include "vllmcfg.h"

struct engine_class;

struct engine_config {
	const struct engine_class *cls;    /* kind: a row of engine_classes (engine.h) */
	char kind[INI_VALUE_MAX];          /* its name, as written */
	int64_t tensor_parallel_size;
	int64_t pipeline_parallel_size;    /* vLLM --pipeline-parallel-size; 1 = none */
	int64_t nnodes;                    /* vLLM --nnodes: servers one replica spans (startup.h) */
	int64_t max_num_batched_tokens;    /* -1 = vLLM's default for the device */
	int64_t max_num_seqs;              /* -1 = vLLM's default for the device */
	int64_t max_model_len;             /* -1 = the model's max_position_embeddings */
	double gpu_memory_utilization;
	int64_t block_size;
	bool enable_prefix_caching;
	bool enable_chunked_prefill;
	int64_t long_prefill_token_threshold;
	int64_t num_gpu_blocks_override;   /* -1 = size from memory */
	double cpu_offload_gb;             /* weights per GPU in host memory, GiB */
	int kv_cache_dtype;                /* 0 auto, 1 fp8 */
	double moe_router_skew;            /* Zipf exponent of expert popularity, 0 uniform,
					    * -1 the model family's (routerskew.h; servesim's own) */
	bool enable_expert_parallel;       /* vLLM --enable-expert-parallel: experts whole over the tp GPUs */
	/* The keys of kind = vllm, declared by that class (vllmcfg.h) and
	 * bound through engine_classes' keys. */
	struct vllm_config vllm;
	/* The keys of kind = ollama or llamacpp, declared by those classes
	 * (llamacfg.h) and bound through engine_classes' keys. */
	struct llama_config llama;

	/* Where keys checked against the model and the device were set
	 * ("path:line", "--set …", or the file when the default stands). */
	char tensor_parallel_at[INI_VALUE_MAX + 32], pipeline_parallel_at[INI_VALUE_MAX + 32];
};

/* GPUs one server replica uses: tensor × pipeline parallel. */
static inline int64_t enginecfg_gpus(const struct engine_config *c)
{
	return c->tensor_parallel_size * c->pipeline_parallel_size;
}

#endif
