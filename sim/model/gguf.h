/*
 * gguf: a GGUF file's header (llama.cpp's model format), read without
 * touching the weights, as the Hugging Face config it stands for.
 *
 * The layout, from ggml/include/gguf.h and gguf-py/gguf/constants.py
 * (llama.cpp, GGUF v3; v2 reads the same): magic "GGUF", u32 version, u64
 * tensor count, u64 key/value count; each key a u64-length string, a u32
 * value type (UINT8 … FLOAT64, STRING, ARRAY of one type) and the value;
 * then per tensor its name, u32 n_dims, n_dims u64 extents, u32 ggml_type
 * and u64 offset. All little-endian. Only the header is read: the reader
 * seeks over strings and arrays it does not keep, and stops at the first
 * tensor's data.
 *
 * gguf_to_config maps the metadata of general.architecture = A onto
 * config.json fields (A.block_count → num_hidden_layers,
 * A.embedding_length → hidden_size, A.attention.head_count_kv →
 * num_key_value_heads, A.context_length → max_position_embeddings, …;
 * model_type from a table of llama.cpp's architecture names), and reports
 * the bytes and elements of each tensor type.
 */
#ifndef SERVESIM_GGUF_H
#define SERVESIM_GGUF_H

#include <jansson.h>
#include <stdint.h>

#include "err.h"

#define GGUF_N_TYPES 40   /* ggml_type values known (0 … 39, MXFP4) */

struct gguf_weights {
	char precision[16];                 /* servesim's name of the dominant type: "q4_k_m", "q8_0", … */
	int64_t file_type;                  /* general.file_type (llama_ftype), -1 when absent */
	double tensor_bytes;                /* every tensor as stored */
	double elems[GGUF_N_TYPES];         /* elements stored in each ggml_type */
	int64_t n_tensors;
};

/* Reads path's header into *config (a new object the caller owns: HF
 * config fields plus "gguf_architecture") and *w. Returns 0, or -1 with e
 * naming the file, the byte offset and what was expected (bad magic, an
 * unsupported version, a length past the end of the file, a missing
 * A.block_count …). */
int gguf_to_config(const char *path, json_t **config, struct gguf_weights *w, struct err *e);

/* The name of ggml_type t ("Q4_K", "F16"), or "?" when unknown. */
const char *gguf_type_name(int t);

#endif
