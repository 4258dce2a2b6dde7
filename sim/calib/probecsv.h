/*
 * probecsv: the measurements servesim-probe writes, read back.
 *
 * A probe file is `# key: value` comment lines (servesim-probe, device, sm,
 * dims, clocks, skipped, failed, elapsed_s …) anywhere, and a CSV whose
 * first non-comment line is one of two headers:
 *   version 1  kind,shape,tokens,context,dtype,time_us,bytes,flops
 *   version 2  the same, then kernel,graph,reps,p10_us,p90_us,frac_bw,
 *              frac_peak (which kernel ran, whether it was timed as a CUDA
 *              graph, the calls timed, the spread of the batch means, and
 *              what it reached against the run's own stream_read and GEMM)
 * Kinds (probe_kind_names): stream_read, d2d_copy, h2d_copy, d2h_copy,
 * peer_copy, allreduce (tokens = GPUs, bytes = the buffer each holds),
 * launch, elementwise (RMSNorm, RoPE, KV-cache write by tokens), gemm,
 * moe_gemm, attn_prefill, attn_decode, layer. dtype: none,
 * bf16, fp16 (read as bf16), fp8 or int4. A gemm row names its weight
 * NAME_nN_kK (qkv_n6144_k4096): N outputs, K inputs; a moe_gemm row
 * moe_eE_kK_hH_iI (E experts, K of them a token, hidden H, expert width I
 * per rank) with tokens = tokens per expert; an attn_prefill row whose
 * shape ends in _wW went through a sliding window of W keys. Rows with tokens = B
 * for decode (sequences) and context = KV tokens each sequence reads;
 * prefill rows have tokens = chunk and context = tokens already cached.
 * time_us > 0; bytes, flops and the version-2 numbers >= 0.
 *
 * The probe flushes each row as it is measured, so a run that crashed or
 * was killed leaves a file whose last line may be cut short: a last line
 * without its newline is dropped (d->truncated; in a version-1 file only
 * when it does not parse), and the rows before it are read. `# failed: FAMILY: …` lines are collected,
 * and `# clocks: family=F sm_mhz=N mem_mhz=N power_w=N … throttle=R` lines
 * (free text after the colon; unknown keys ignored, a bad number ignored).
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
	PROBE_H2D_COPY,
	PROBE_D2H_COPY,
	PROBE_PEER_COPY,
	PROBE_LAUNCH,
	PROBE_MOE_GEMM,
	PROBE_ALLREDUCE,
	PROBE_ELEMENTWISE,
	PROBE_N_KINDS
};

enum probe_dtype { PROBE_DT_NONE, PROBE_DT_BF16, PROBE_DT_FP8, PROBE_DT_INT4 };

extern const char *const probe_kind_names[];    /* NULL-terminated */
extern const char *const probe_dtype_names[];   /* "none", "bf16", "fp8", "int4", NULL */

#define PROBECSV_MAX_FAILED 16
#define PROBECSV_MAX_CLOCKS 32

/* One `# clocks:` line: the GPU's state after a family ran (NVML). */
struct probe_clocks {
	char family[48];
	double sm_mhz, mem_mhz, power_w;
	char throttle[96];        /* NVML's reasons joined by '|', "none", or "" */
};

struct probe_row {
	int kind;                 /* enum probe_kind */
	char shape[48];
	int64_t tokens, context;
	int dtype;                /* enum probe_dtype (fp16 reads as bf16) */
	double time_us, bytes, flops;
	int64_t gemm_n, gemm_k;   /* gemm rows: the weight's shape; moe_gemm: H, I; else 0 */
	int64_t moe_experts, moe_top_k;   /* moe_gemm rows: E and K; else 0 */
	int64_t window;           /* attn_prefill rows shaped NAME_wW: a sliding window; else 0 */
	bool decode;              /* layer rows: shape "decode" (else a prefill) */
	int line;                 /* 1-based line in the file */
	/* Version 2 (zero or "" in a version-1 file): */
	char kernel[48];          /* what ran: "cublasGemmEx_bf16", "probe_flashdec_v2" … */
	bool graph;               /* timed as CUDA graph launches */
	int64_t reps;             /* calls timed */
	double p10_us, p90_us;    /* spread of the batch means */
	double frac_bw, frac_peak;   /* against the run's stream_read / GEMM, as the probe saw it */
};

/* The model dimensions the probe ran with (`# dims:`), full model, not
 * per rank; tp is the tensor-parallel size the shapes were sharded for.
 * experts, experts_per_token and window are optional (0: a dense model,
 * no sliding window). */
struct probe_dims {
	int64_t hidden, intermediate, heads, kv_heads, head_dim, vocab, tp;
	int64_t experts, experts_per_token, window;
};

struct probe_data {
	char path[4096];
	char device[256];         /* `# device:`; "" when absent */
	bool has_dims;
	struct probe_dims dims;
	int version;              /* 1 or 2: which header */
	bool truncated;           /* the last line was cut short and dropped */
	char failed[PROBECSV_MAX_FAILED][48];   /* families of `# failed:` lines */
	int n_failed;
	struct probe_clocks clocks[PROBECSV_MAX_CLOCKS];   /* `# clocks:` lines, in order */
	int n_clocks;
	struct probe_row *rows;
	size_t len, cap;
};

/* Reads path into *d (the caller frees it with probecsv_free, also on
 * failure). Returns 0, or -1 with e naming the file and line. */
int probecsv_load(struct probe_data *d, const char *path, struct err *e);

void probecsv_free(struct probe_data *d);   /* safe on a zeroed struct */

/* Reads path, a rerun of some families (`servesim-probe --only`), into d:
 * its rows replace d's rows of the same kind and dtype, its failures and
 * clock lines are added. The two must be of the same device and dims (a
 * file without dims takes d's). Returns 0, or -1 with e naming path and
 * what differs (d is then unchanged). */
int probecsv_append(struct probe_data *d, const char *path, struct err *e);

/* Whether a clocks line's throttle reasons mean the GPU ran slower than
 * it can (power or thermal caps, hardware slowdown), not merely idle. */
bool probecsv_throttled(const struct probe_clocks *c);

/* The hardware profile id for a CUDA device name as the probe records it
 * ("NVIDIA H100 80GB HBM3" → "h100-sxm"), or NULL when not known. */
const char *probecsv_hardware_id(const char *device);

#endif
