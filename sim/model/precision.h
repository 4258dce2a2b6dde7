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

/* vLLM's --kv-cache-dtype as servesim models it: the choices of [engine]
 * kv_cache_dtype in order (a scenario keeps the index), each with the
 * bytes one cached element takes. "auto" stores the model's 16-bit dtype;
 * fp8 (vLLM's fp8, fp8_e4m3, fp8_e5m2) one byte (vLLM docs, "Quantized KV
 * Cache"). One row a choice: the names and the widths come from it. */
#define KV_DTYPE_ROWS(X)        \
	X(KV_DTYPE_AUTO, "auto", 2) \
	X(KV_DTYPE_FP8, "fp8", 1)

#define KV_DTYPE_ENUM_(id, name, bytes) id,
enum kv_dtype_id { KV_DTYPE_ROWS(KV_DTYPE_ENUM_) KV_DTYPE_COUNT };
#undef KV_DTYPE_ENUM_

struct kv_dtype {
	const char *name;
	double bytes_per_elem;
};

extern const struct kv_dtype kv_dtypes[KV_DTYPE_COUNT];
extern const char *const kv_dtype_names[KV_DTYPE_COUNT + 1];   /* NULL-ended, for INI_ENUM */

#endif
