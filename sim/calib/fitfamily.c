#include "fitfamily.h"

#include <math.h>

#define P(...) { __VA_ARGS__, -1 }

/* Production grades, against the probe's own references:
 *  - decode: FlashInfer's batch decode and FlashAttention's split-KV
 *    (flash-decoding) kernels stream the KV cache at close to the
 *    device's copy bandwidth for long contexts (FlashInfer blog
 *    2024-02-02, "Accelerating Self-Attentions for LLM Serving with
 *    FlashInfer", bandwidth-utilisation plots on A100/RTX 4090; Dao et
 *    al., "Flash-Decoding for long-context inference", PyTorch blog
 *    2023-10-13). 0.80 of stream_read is a line drawn under those plots,
 *    not a number they state.
 *  - prefill: FlashAttention-2 reaches 50-73% of A100's bf16 peak in the
 *    forward pass (Dao 2023, arXiv:2307.08691, §4.1), FlashAttention-3 up
 *    to 740 TFLOP/s, 75% of H100 SXM's 989 (Shah et al. 2024,
 *    arXiv:2407.08608, §4.1): about what cuBLAS reaches on the same
 *    devices (70-80% of peak), so production prefill attention runs at
 *    0.7-1.0 of the GEMM rate for long sequences at head_dim 128; 0.70
 *    of the best bf16 GEMM row is the line. */
static const struct fitfam table[] = {
	{ .name = "stream_read", .kind = PROBE_STREAM_READ, .dtype = -1, .params = P(EFF_BANDWIDTH) },
	{ .name = "d2d_copy", .kind = PROBE_D2D_COPY, .dtype = -1, .params = P(EFF_BANDWIDTH) },
	{ .name = "gemm_bf16", .kind = PROBE_GEMM, .dtype = PROBE_DT_BF16,
	  .params = P(EFF_BANDWIDTH, EFF_COMPUTE_MAX, EFF_COMPUTE_HALF_TOKENS) },
	{ .name = "gemm_fp8", .kind = PROBE_GEMM, .dtype = PROBE_DT_FP8,
	  .params = P(EFF_LOW_PRECISION_COMPUTE) },
	{ .name = "gemv_int4", .kind = PROBE_GEMM, .dtype = PROBE_DT_INT4, .params = P(-1),
	  .report = "the bf16 roofline at half a byte a weight (the probe's W4A16 GEMV is a stand-in for Marlin: not fitted)" },
	{ .name = "moe_gemm", .kind = PROBE_MOE_GEMM, .dtype = -1, .params = P(EFF_MOE_EFFICIENCY) },
	{ .name = "attn_decode", .kind = PROBE_ATTN_DECODE, .dtype = -1,
	  .params = P(EFF_ATTENTION_BANDWIDTH, EFF_ATTENTION_HALF_SEQS), .ref = FITFAM_REF_STREAM,
	  .production_frac = 0.80,
	  .production = "FlashInfer / flash-decoding stream KV near copy bandwidth (>= 0.80 of stream_read)" },
	{ .name = "attn_prefill", .kind = PROBE_ATTN_PREFILL, .dtype = -1,
	  .params = P(EFF_ATTENTION_COMPUTE), .ref = FITFAM_REF_GEMM, .production_frac = 0.70,
	  .production = "FlashAttention-2/3 run at 0.7-1.0 of the GEMM rate (>= 0.70 of the best bf16 GEMM)" },
	{ .name = "layer", .kind = PROBE_LAYER, .dtype = -1,
	  .params = P(EFF_BANDWIDTH, EFF_ATTENTION_BANDWIDTH, EFF_ATTENTION_COMPUTE) },
	{ .name = "elementwise", .kind = PROBE_ELEMENTWISE, .dtype = -1, .params = P(-1),
	  .report = "the bandwidth roofline (the step model has no term for RMSNorm, RoPE, KV writes)" },
	{ .name = "h2d_copy", .kind = PROBE_H2D_COPY, .dtype = -1, .params = P(-1),
	  .report = "the profile's host link (host_bandwidth_gb_s)" },
	{ .name = "d2h_copy", .kind = PROBE_D2H_COPY, .dtype = -1, .params = P(-1),
	  .report = "the profile's host link (host_bandwidth_gb_s)" },
	{ .name = "peer_copy", .kind = PROBE_PEER_COPY, .dtype = -1, .params = P(-1),
	  .report = "the profile's GPU-to-GPU link (interconnect bandwidth_gb_s)" },
	{ .name = "allreduce", .kind = PROBE_ALLREDUCE, .dtype = -1, .params = P(-1),
	  .report = "the profile's GPU-to-GPU link as bus bandwidth (nccl-tests' busbw convention)" },
	{ .name = "launch", .kind = PROBE_LAUNCH, .dtype = -1, .params = P(-1),
	  .report = "launch latency is part of step_overhead_us, which `calibrate runs` fits from real runs" },
};
enum { N_FAMILIES = sizeof table / sizeof *table };

const struct fitfam *fitfamily_table(size_t *n)
{
	*n = N_FAMILIES;
	return table;
}

int fitfamily_of(const struct probe_row *r)
{
	for (int f = 0; f < N_FAMILIES; f++)
		if (table[f].kind == r->kind && (table[f].dtype < 0 || table[f].dtype == r->dtype))
			return f;
	return -1;
}

int fitfamily_params(int f, int main_dtype, int out[FITFAM_MAX_PARAMS])
{
	int n = 0;
	const struct fitfam *fam = &table[f];
	if (main_dtype == PROBE_DT_FP8 && fam->kind == PROBE_GEMM) {
		/* fp8 weights: the fp8 rows set the GEMM curve, bf16 ones are reported. */
		if (fam->dtype == PROBE_DT_FP8) {
			out[n++] = EFF_BANDWIDTH;
			out[n++] = EFF_COMPUTE_MAX;
			out[n++] = EFF_COMPUTE_HALF_TOKENS;
		}
		return n;
	}
	for (int i = 0; i < FITFAM_MAX_PARAMS && fam->params[i] >= 0; i++)
		out[n++] = fam->params[i];
	return n;
}

/* Best bytes/s (stream) or FLOP/s (gemm) over rows of kind/dtype. */
static double best_rate(const struct probe_data *d, int kind, int dtype, bool flops)
{
	double best = 0;
	for (size_t i = 0; i < d->len; i++) {
		const struct probe_row *r = &d->rows[i];
		if (r->kind != kind || (dtype >= 0 && r->dtype != dtype))
			continue;
		double rate = (flops ? r->flops : r->bytes) / r->time_us;
		best = fmax(best, rate);
	}
	return best;
}

double fitfamily_grade(const struct probe_data *d, int f)
{
	const struct fitfam *fam = &table[f];
	if (fam->ref == FITFAM_REF_NONE)
		return -1;
	bool flops = fam->ref == FITFAM_REF_GEMM;
	double ref = flops ? best_rate(d, PROBE_GEMM, PROBE_DT_BF16, true)
			   : best_rate(d, PROBE_STREAM_READ, -1, false);
	if (!(ref > 0))
		return -1;
	return best_rate(d, fam->kind, fam->dtype, flops) / ref;
}
