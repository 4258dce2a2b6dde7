/*
 * precision: how many bits a weight or a KV element takes, by the names
 * users know (vLLM's --dtype/--quantization/--kv-cache-dtype, GGUF types).
 *
 * Bits per weight include the scales a format stores alongside (AWQ/GPTQ
 * with group 128: 4 + 32/128 = 4.25; MXFP4: 4 + 8/32 = 4.25; GGUF Q4_0:
 * 4.5, Q8_0: 8.5). The table is the only place these numbers live.
 */
#ifndef SERVESIM_PRECISION_H
#define SERVESIM_PRECISION_H

#include <stdbool.h>
#include <stddef.h>

enum matmul_dtype {
	MATMUL_FP32,
	MATMUL_BF16,     /* bf16/fp16 tensor cores (weight-only quant dequantises to this) */
	MATMUL_FP8,
	MATMUL_INT8,
	MATMUL_FP4,
};

/* 8- and 4-bit tensor-core matmuls (the step model's low_precision_compute). */
static inline bool matmul_is_low_precision(enum matmul_dtype d)
{
	return d == MATMUL_FP8 || d == MATMUL_INT8 || d == MATMUL_FP4;
}

struct precision {
	const char *name;            /* "bf16", "fp8", "q4_k_m" … */
	double bits_per_weight;
	enum matmul_dtype matmul;    /* the dtype the matmuls run in */
	bool quantizes_embeddings;   /* GGUF: every tensor; vLLM: embeddings stay 16-bit */
	bool experts_only;           /* MXFP4 in gpt-oss: only the MoE experts */
	const char *note;            /* one line for --help and errors */
};

/* The entry for name (case-insensitive), or NULL. Borrowed, static. */
const struct precision *precision_find(const char *name);

/* All entries, for listings and error messages. */
const struct precision *precision_all(size_t *n);

/* "bf16, fp16, fp8, …": the known names, for "expected one of" messages. */
void precision_names(char *out, size_t cap);

#endif
