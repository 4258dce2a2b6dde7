/*
 * probecsv: the measurements servesim-probe writes, read back.
 *
 * A probe file is `# key: value` comment lines (servesim-probe, device, sm,
 * dims, skipped, elapsed_s …) anywhere, and a CSV whose first non-comment
 * line is exactly the header `kind,shape,tokens,context,dtype,time_us,
 * bytes,flops`. Kinds (probe_kind_names): stream_read, d2d_copy, gemm,
 * attn_prefill, attn_decode, layer. dtype: none, bf16, fp16 or fp8. A gemm
 * row names its weight NAME_nN_kK (qkv_n6144_k4096): N outputs, K inputs.
 * Rows with tokens = B for decode (sequences) and context = KV tokens each
 * sequence reads; prefill rows have tokens = chunk and context = tokens
 * already cached. time_us > 0; bytes and flops >= 0.
 *
 * Errors name the file and line: `probe.csv:12: time_us: expected a time
 * in microseconds > 0, got 'x'`. A file without any row is an error.
 */
#ifndef SERVESIM_PROBECSV_H
#define SERVESIM_PROBECSV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "err.h"

enum probe_kind {
	PROBE_STREAM_READ,
	PROBE_D2D_COPY,
	PROBE_GEMM,
	PROBE_ATTN_PREFILL,
	PROBE_ATTN_DECODE,
	PROBE_LAYER,
	PROBE_N_KINDS
};

enum probe_dtype { PROBE_DT_NONE, PROBE_DT_BF16, PROBE_DT_FP8 };

extern const char *const probe_kind_names[];    /* NULL-terminated */
extern const char *const probe_dtype_names[];   /* "none", "bf16", "fp8", NULL */

struct probe_row {
	int kind;                 /* enum probe_kind */
	char shape[48];
	int64_t tokens, context;
	int dtype;                /* enum probe_dtype (fp16 reads as bf16) */
	double time_us, bytes, flops;
	int64_t gemm_n, gemm_k;   /* gemm rows: the weight's shape; else 0 */
	bool decode;              /* layer rows: shape "decode" (else a prefill) */
	int line;                 /* 1-based line in the file */
};

/* The model dimensions the probe ran with (`# dims:`), full model, not
 * per rank; tp is the tensor-parallel size the shapes were sharded for. */
struct probe_dims {
	int64_t hidden, intermediate, heads, kv_heads, head_dim, vocab, tp;
};

struct probe_data {
	char path[4096];
	char device[256];         /* `# device:`; "" when absent */
	bool has_dims;
	struct probe_dims dims;
	struct probe_row *rows;
	size_t len, cap;
};

/* Reads path into *d (the caller frees it with probecsv_free, also on
 * failure). Returns 0, or -1 with e naming the file and line. */
int probecsv_load(struct probe_data *d, const char *path, struct err *e);

void probecsv_free(struct probe_data *d);   /* safe on a zeroed struct */

/* The hardware profile id for a CUDA device name as the probe records it
 * ("NVIDIA H100 80GB HBM3" → "h100-sxm"), or NULL when not known. */
const char *probecsv_hardware_id(const char *device);

#endif
