/*
 * startup: what the real engines refuse when they start, refused the same
 * way here (exit 2 through the run's error), with the setting at fault and
 * the value that would work, in the engine's own words where it has them.
 *
 * vLLM (vllm/config/ (scheduler, parallel, model), vllm/v1/core/kv_cache_utils.py, about v0.11):
 *   - a device it does not run on (Apple GPUs: no Metal backend);
 *   - num_attention_heads not divisible by tensor_parallel_size;
 *   - a world size (tp × pp) larger than the GPUs of the nodes it spans
 *     (gpus_per_node × nnodes);
 *   - max_num_batched_tokens below max_num_seqs, or, without chunked
 *     prefill, below max_model_len;
 *   - a KV pool that cannot hold one request of max_model_len (with the
 *     largest max_model_len that fits, as vLLM estimates it).
 * Ollama and llama-server: a KV cache type llama.cpp does not have (fp8).
 * (num_ctx above the model's context is refused by ollama.c itself.)
 *
 * The checks read only the setup and what the engine resolved; they keep
 * no state. The run calls startup_check once, right after it creates the
 * engine (whose own start-up errors, such as no room for any KV block,
 * come first).
 */
#ifndef SERVESIM_STARTUP_H
#define SERVESIM_STARTUP_H

#include "engine.h"
#include "err.h"

/* Checks the setup and what the engine resolved (st: its stats right
 * after create). Returns 0 or -1 with e (the first refusal). */
int startup_check(const struct engine_setup *setup, const struct engine_stats *st, struct err *e);

#endif
