/*
 * probe.h: what the files of servesim-probe share.
 *
 * servesim-probe measures the GPU it runs on for `servesim calibrate fit`.
 * It is split by concern:
 *   probe_core.cu   errors, tracked allocations, the CSV writer, timing
 *                   (warm-up, CUDA graphs, spread), clocks through NVML
 *   probe_mem.cu    memory and link families: stream_read, d2d_copy,
 *                   h2d_copy, d2h_copy, peer_copy, launch
 *   probe_gemm.cu   gemm_bf16, gemm_fp8 (cuBLASLt, fast accumulation),
 *                   gemv_int4 (a W4A16 dequantising GEMV)
 *   probe_moe.cu    moe_gemm: the experts' GEMMs by tokens per expert
 *   probe_attn.cu   the decode attention kernel and the paged KV pool
 *   probe_prefill.cu the prefill attention kernel (FlashAttention-2 layout)
 *   probe_attn_rows.cu attn_prefill, attn_decode, layer
 *   probe_ring.cu   allreduce: a ring over peer copies among all GPUs
 *   probe_elem.cu   elementwise: RMSNorm, rotary embedding, KV-cache write
 *   probe_check.cu  --check: the kernels against naive references, then
 *                   every family on tiny shapes
 *   probe_main.cu   the family table, arguments, device query, main
 *
 * Invariants: a family writes only whole CSV rows through probe_emit
 * (flushed one by one, so a crash keeps what was measured); every device
 * allocation goes through probe_alloc and is released by probe_free or,
 * after a failure, by the family runner; a CUDA or cuBLAS error inside a
 * family throws probe_error, which the runner catches, logs as
 * `# failed: FAMILY: …` and survives (resetting the device when the error
 * is sticky). No mutable globals: everything hangs off struct probe.
 */
#ifndef SERVESIM_PROBE_H
#define SERVESIM_PROBE_H

#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>

#include <vector>

#define PROBE_VERSION 2

/* The CSV header every row follows (probecsv.h reads it back). */
#define PROBE_HEADER                                                                   \
	"kind,shape,tokens,context,dtype,time_us,bytes,flops,kernel,graph,reps,p10_us," \
	"p90_us,frac_bw,frac_peak"

typedef __nv_bfloat16 bf16;

/* ---- errors: thrown inside a family, caught by its runner ---------------- */

struct probe_error {
	char msg[512];
	int sticky;   /* the CUDA context is unusable: the runner resets the device */
};

void probe_throw_cuda(const char *file, int line, const char *what, cudaError_t rc);
void probe_throw_blas(const char *file, int line, const char *what, cublasStatus_t rc);
void probe_throw(const char *file, int line, const char *what, const char *why);

#define CK(call)                                                              \
	do {                                                                  \
		cudaError_t ck_rc = (call);                                   \
		if (ck_rc != cudaSuccess)                                     \
			probe_throw_cuda(__FILE__, __LINE__, #call, ck_rc);   \
	} while (0)

#define BK(call)                                                              \
	do {                                                                  \
		cublasStatus_t bk_rc = (call);                                \
		if (bk_rc != CUBLAS_STATUS_SUCCESS)                           \
			probe_throw_blas(__FILE__, __LINE__, #call, bk_rc);   \
	} while (0)

/* ---- the run's state ----------------------------------------------------- */

struct dims {
	int hidden, intermediate, heads, kv_heads, head_dim, vocab, tp;
};

struct nvml;   /* probe_core.cu: libnvidia-ml.so.1 opened at run time, or absent */

struct probe {
	struct dims d;
	int heads_r, kv_r, inter_r, vocab_r;   /* per tensor-parallel rank */
	int max_tokens, max_context;
	int experts, experts_per_token;   /* routed experts (0: a dense model) */
	int window;                  /* sliding window of the model's windowed layers (0: none) */
	int device, n_devices;
	cudaStream_t stream;
	cublasHandle_t blas;
	cublasLtHandle_t lt;
	void *lt_ws;                 /* cuBLAS / cuBLASLt workspace */
	size_t lt_ws_bytes;
	cudaEvent_t ev0, ev1;
	size_t l2_bytes;
	int cc_major, cc_minor, sms;
	double t_start_s, budget_s;
	int check;                   /* --check: tiny shapes, fewer repetitions */
	FILE *out;
	int rows;
	const char *family;          /* the family running (for # lines) */
	std::vector<void *> allocs;  /* live device allocations */
	std::vector<void *> host_allocs;   /* live pinned host allocations */
	/* References measured earlier in the run, for frac_bw / frac_peak (0
	 * until measured): best streaming read, best GEMM per dtype. */
	double stream_gb_s, gemm_bf16_tflops, gemm_fp8_tflops;
	struct nvml *nvml;
};

/* What time_us measured: the median of the batch means and their spread. */
struct meas {
	double med_us, p10_us, p90_us;
	long long reps;      /* calls timed in all */
	int graph;           /* 1: timed as CUDA graph launches */
};

typedef void (*work_fn)(struct probe *p, void *arg, int rep);

/* probe_core.cu */
double probe_now_s(void);
int probe_over_budget(const struct probe *p);
void probe_note(struct probe *p, const char *key, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void probe_skip(struct probe *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* One CSV row, flushed. kernel names what ran (a cuBLAS call, a probe
 * kernel with its version); frac_bw and frac_peak are computed from the
 * row and the run's references. */
void probe_emit(struct probe *p, const char *kind, const char *shape, long long tokens,
		long long context, const char *dtype, const struct meas *m, double bytes, double flops,
		const char *kernel);
size_t probe_budget_bytes(void);
void *probe_alloc(struct probe *p, size_t bytes);   /* NULL when it does not fit */
void probe_free(struct probe *p, void *ptr);        /* NULL is a no-op */
void *probe_alloc_host(struct probe *p, size_t bytes);   /* pinned; NULL on failure */
void probe_free_host(struct probe *p, void *ptr);
void probe_free_all(struct probe *p);               /* after a failed family */
void probe_fill_bf16(struct probe *p, void *ptr, size_t n, uint32_t seed, float scale);
void probe_fill_fp8(struct probe *p, void *ptr, size_t n, uint32_t seed, float scale);
void probe_fill_bytes(struct probe *p, void *ptr, size_t n, uint32_t seed);
/* Times fn (see probe_core.cu for the method). */
struct meas probe_time(struct probe *p, work_fn fn, void *arg);
int probe_copies_for(const struct probe *p, double bytes, int max);
void probe_warmup(struct probe *p);
void probe_handles_create(struct probe *p);
void probe_handles_destroy(struct probe *p);
void probe_nvml_open(struct probe *p);
void probe_nvml_close(struct probe *p);
void probe_note_clocks(struct probe *p);            /* `# clocks: family=… sm_mhz=…` */
void probe_note_environment(struct probe *p);       /* driver, power limit */

/* The families (probe_mem.cu, probe_gemm.cu, probe_attn.cu). */
void fam_stream_read(struct probe *p);
void fam_d2d_copy(struct probe *p);
void fam_h2d_copy(struct probe *p);
void fam_d2h_copy(struct probe *p);
void fam_peer_copy(struct probe *p);
void fam_allreduce(struct probe *p);
void fam_launch(struct probe *p);
void fam_gemm_bf16(struct probe *p);
void fam_gemm_fp8(struct probe *p);
void fam_gemv_int4(struct probe *p);
void fam_moe_gemm(struct probe *p);
void fam_attn_prefill(struct probe *p);
void fam_attn_prefill_swa(struct probe *p);
void fam_attn_decode(struct probe *p);
void fam_layer(struct probe *p);
void fam_elementwise(struct probe *p);

/* Used by probe_check.cu and the layer family. */
void probe_gemm_bf16(struct probe *p, const bf16 *w, const bf16 *x, bf16 *y, int m, int n, int k);
int probe_gemm_fp8_check(struct probe *p);
int probe_gemv_int4_check(struct probe *p);
int probe_attn_check(struct probe *p);
/* probe_check.cu: max |a - ref| over n values on the device (NaN counts as
 * infinite), and one printed check line; returns err <= tol. */
double probe_max_abs_diff(const bf16 *dev_a, const float *dev_ref, size_t n);
int probe_check_one(const char *what, double err, double tol);

#endif
