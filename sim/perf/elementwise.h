/*
 * elementwise: the small kernels a decoder layer runs between its matmuls
 * and its attention (issue 11's "small-batch decode"): the fused residual
 * add + RMSNorm (two a layer, one more at the end), the rotary embedding,
 * the KV-cache write (vLLM's reshape_and_cache_flash), the gated
 * activation (silu_and_mul), for FP8 models the activation quantization
 * that no norm or activation absorbs, and the embedding lookup once a step.
 *
 * Each kernel costs a floor (its place on a replayed CUDA graph's
 * timeline at a few tokens: the in-graph launch gap, ramp, one reduction,
 * tail; never below a trivial kernel's in a graph) plus its bytes at a
 * streaming fraction of the device's stream bandwidth, where the bytes
 * that fit in a share of the L2 (half, on vLLM CUDA) cost nothing beyond the floor (the input was
 * just written by the producing kernel; the output is written back
 * later). So at decode batch sizes a layer's small kernels are a fixed
 * ~16.5 us on an H100, and at prefill chunk sizes they stream.
 *
 * Rows are per backend, looked up by the backend's name; a backend
 * without a row (llama.cpp's, whose per-node floor in backend.c already
 * counts its graph's norms and activations; the scalar model) has no
 * such kernels: elementwise_row_for returns NULL and the step model adds
 * nothing. Every number sits in the row with its source.
 *
 * Invariants: the time is the sum over kernels of floor + max(0, bytes −
 * l2_keep) / bandwidth, so it never falls when tokens or layers grow, and
 * it is never less than the bytes at the full streaming rate minus the
 * L2 allowance. Nothing here allocates or fails.
 */
#ifndef SERVESIM_ELEMENTWISE_H
#define SERVESIM_ELEMENTWISE_H

#include <stdbool.h>

#include "model.h"
#include "precision.h"

/* The kernel classes, in the order the rows give their floors. */
enum ew_kernel { EW_NORM, EW_ROPE, EW_KV_WRITE, EW_ACT, EW_QUANT, EW_EMBED, EW_N };

/* One backend's small kernels. */
struct ew_row {
	const char *backend;   /* perf_backend name: "vllm-cuda" */
	const char *kernel;    /* what explain names */
	double floor_us[EW_N]; /* one call's latency in a CUDA graph, us */
	double bw_frac;	       /* of hw_stream_bandwidth, for the bytes past the L2 allowance */
	double l2_keep_frac;   /* of the L2: traffic a kernel gets for its floor */
	const char *source;
};

/* A model's small kernels on one GPU of a tp group: how many a step runs
 * of each class and the bytes each moves per token. A plain record. */
struct ew_shape {
	double calls[EW_N];	      /* per step (layers × per layer, + once a step) */
	double bytes_per_token[EW_N]; /* one call's bytes per token, per GPU */
};

/* The row of backend name, or NULL (no small-kernel model there). */
const struct ew_row *elementwise_row_for(const char *backend);

/* Fills *s for model m at weights w on one of tp GPUs, KV stored at
 * kv_bytes_per_elem. Cannot fail. */
void elementwise_shape(struct ew_shape *s, const struct model *m, const struct precision *w, int tp,
		       double kv_bytes_per_elem);

/* A step of tokens through every layer: seconds; *bytes (when not NULL)
 * gets the bytes moved to or from device memory (those past the L2
 * allowance: the rest never leave the L2, so a row's bytes over its time
 * stays under the stream, as explain's fraction of peak shows). stream_bw: the device's streaming bytes/s;
 * l2_bytes: its L2 (0: none). tokens <= 0 costs 0. */
double elementwise_step_s(const struct ew_row *r, const struct ew_shape *s, double tokens,
			  double stream_bw, double l2_bytes, double *bytes);

#endif
