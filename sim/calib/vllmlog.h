/*
 * vllmlog: the memory lines of a `vllm serve` start-up log, to check
 * servesim's KV pool sizing against the real one.
 *
 * Lines read (vllm/v1/worker/gpu_worker.py, gpu_model_runner.py,
 * v1/core/kv_cache_utils.py; vllm/worker/worker.py in V0), each optional:
 *   "Model loading took 14.9888 GiB and 5.1 seconds" (older:
 *     "… GiB memory and …")                                  → weights
 *   "Memory profiling takes … model weights take 14.99GiB;
 *     non_torch_memory takes 0.13GiB; PyTorch activation peak memory takes
 *     1.23GiB; the rest of the memory reserved for KV Cache is 54.92GiB." → each
 *   "total_gpu_memory (79.19GiB) x gpu_memory_utilization (0.90)"         → both
 *   "Available KV cache memory: 54.92 GiB"                   → KV memory
 *   "GPU KV cache size: 449,872 tokens"                      → KV tokens
 *   "# GPU blocks: 28117, # CPU blocks: 2048" (V0)            → blocks
 * Log prefixes (INFO 05-01 12:00:00 [gpu_worker.py:123]) are skipped; the
 * last value of each wins (a restart in the same file). Absent: NAN.
 */
#ifndef SERVESIM_VLLMLOG_H
#define SERVESIM_VLLMLOG_H

#include <stdbool.h>

#include "err.h"

struct vllmlog {
	double weights_gib, activation_gib, non_torch_gib, kv_gib;
	double total_gpu_gib, gpu_memory_utilization;
	double kv_tokens, gpu_blocks;
	int n_found;                    /* lines recognised */
};

bool vllmlog_sniff(const char *text);

/* Reads the lines of text. Returns 0, or -1 with e (path) when none of
 * them is there. */
int vllmlog_parse(struct vllmlog *out, const char *text, const char *path, struct err *e);

#endif
