/*
 * probepred: what the step-time model predicts for one probe measurement
 * under given efficiencies, so a fit and the simulator agree by
 * construction.
 *
 * Every prediction goes through perf_step_time (sim/perf/steptime.h) on a
 * struct perf made for the measured operator:
 *   stream_read, d2d_copy, elementwise
 *                          a "matmul" with the row's bytes and no FLOPs:
 *                          bytes / (bandwidth x bandwidth efficiency) (the
 *                          step model has no term for RMSNorm, RoPE and
 *                          KV writes: this is what they are compared with);
 *   gemm                   a dense group of one weight N x K (2 bytes a
 *                          weight in bf16, 1 in fp8) at M = tokens, the
 *                          dtype's peak: the roofline of the dense matmuls;
 *   attn_prefill           one layer of the probe's model (dims), a chunk
 *                          of `tokens` after `context` cached: the prefill
 *                          attention term (a sliding-window layer when the
 *                          row has a window);
 *   attn_decode            the same layer, `tokens` sequences each reading
 *                          `context` tokens of KV: the decode attention term;
 *   layer                  dense + attention terms of that layer;
 *   h2d_copy, d2h_copy     bytes over the profile's host link, peer_copy
 *                          over its GPU-to-GPU link, allreduce the ring's
 *                          2 (N-1)/N of the buffer over it (datasheet
 *                          rates, no efficiency: what the fit compares
 *                          them with);
 *   gemm int4              a W4A16 weight (half a byte a weight plus a bf16
 *                          scale per 128) at the bf16 peak;
 *   moe_gemm               one MoE layer's experts, every one of the E
 *                          given `tokens` tokens: the experts term with
 *                          E experts, all touched (top-k = E, so the
 *                          tokens per expert are exactly the row's);
 *   launch                 no prediction: NAN.
 * Step overheads, the LM head and all-reduces are left out: the probe's
 * kernels have none of them. The row's own bytes/flops columns are used
 * only for the bandwidth rows; the rest are recomputed from the shapes as
 * the simulator computes them.
 */
#ifndef SERVESIM_PROBEPRED_H
#define SERVESIM_PROBEPRED_H

#include "hwprofile.h"
#include "model.h"
#include "probecsv.h"

struct probepred {
	const struct hw_profile *hw;   /* borrowed */
	struct model layer;            /* one decoder layer of the probe's dims */
	int tp;
};

/* Prepares predictions for rows measured with dims on hw. Cannot fail
 * (dims were checked when read). */
void probepred_init(struct probepred *pp, const struct hw_profile *hw, const struct probe_dims *dims);

/* Predicted time of row r in microseconds under eff; NAN for a row the
 * model has no term for (launch) or a link the profile does not give. */
double probepred_time_us(const struct probepred *pp, const struct hw_efficiency *eff,
			 const struct probe_row *r);

#endif
