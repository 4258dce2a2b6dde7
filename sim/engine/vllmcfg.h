/*
 * vllmcfg: the [engine] keys only the vLLM class (kind = vllm: vllm.c)
 * reads, declared here by their owner with their defaults, as llamacfg.h
 * declares the llama.cpp classes'. The scenario binds them next to its
 * own [engine] keys through the class's table (engine.h: keys,
 * config_offset); the keys every engine reads stay in struct
 * engine_config.
 *
 * Key names follow `vllm serve` flags, underscored; defaults are vLLM's.
 */
#ifndef SERVESIM_VLLMCFG_H
#define SERVESIM_VLLMCFG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "inidoc.h"

enum sched_policy { SCHED_FCFS, SCHED_PRIORITY };

struct vllm_config {
	double kv_offload_gib;             /* the CPU tier of the KV cache, GiB of host memory */
	/* vLLM's timing (engine/vllmver.c picks the defaults of the version). */
	char vllm_version[INI_VALUE_MAX];  /* "" = the newest servesim knows */
	char overhead_profile[INI_VALUE_MAX];  /* "" = the version's (sim/perf/overhead.c) */
	bool async_scheduling;             /* --async-scheduling, when given */
	bool async_scheduling_given;       /* else the version's default */
	bool enforce_eager;                /* --enforce-eager: no CUDA graphs */
	int64_t max_num_partial_prefills;  /* > 1: long_prefill_token_threshold 4% of max_model_len */
	int scheduling_policy;             /* enum sched_policy (--scheduling-policy) */
	int64_t stream_interval;           /* tokens per streamed chunk (--stream-interval) */
	int64_t api_server_count;          /* API-server processes (--api-server-count) */
	/* --generation-config: 0 auto (the model's generation_config.json
	 * sampling defaults), 1 vllm (none); perf/sampling.h. Not given: auto
	 * from vLLM 0.8 (vllm-project/vllm#12622), vllm before. */
	int generation_config;
	bool generation_config_given;
	/* [workload] temperature, top_p, top_k: what `vllm bench serve`
	 * sends (--temperature …); SAMPLING_NOT_SENT: not sent. */
	double temperature, top_p;
	int64_t top_k;
	double min_p;
	/* --speculative-config (engine/specdec.h); "" = off */
	char speculative_method[INI_VALUE_MAX];
	char speculative_model[INI_VALUE_MAX];
	int64_t num_speculative_tokens;
	char speculative_acceptance[INI_VALUE_MAX];   /* "0.7" or "0.9,0.7,0.5" */
	int64_t draft_tensor_parallel_size;           /* 0 = the target's (vLLM's default) */
	/* Where overhead_profile and async_scheduling were set, for the
	 * errors found with the model and the device. */
	char overhead_profile_at[INI_VALUE_MAX + 32];
	char async_scheduling_at[INI_VALUE_MAX + 32];
};

/* The keys, offsets into struct vllm_config; a NULL section ends them. */
extern const struct inidoc_key vllmcfg_keys[];

void vllmcfg_default(struct vllm_config *c);

/* Records where overhead_profile and async_scheduling were set (at gives
 * "path:line", "--set …" or the file), after binding. */
void vllmcfg_locate(struct vllm_config *c,
		    void (*at)(const void *ctx, const char *key, char *out, size_t cap),
		    const void *ctx);

struct engine_config;
struct engine_keys_view;
struct err;

/* The vLLM class's config_check (engine.h): vllm_version is one servesim
 * knows, --speculative-config is whole (a known method, its drafter, k,
 * the acceptance; kind vllm only), and whether async_scheduling was
 * given (else the version's default). */
int vllmcfg_check(struct engine_config *c, const struct engine_keys_view *k, struct err *e);

#endif
