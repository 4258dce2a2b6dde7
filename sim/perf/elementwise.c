/*
 * elementwise: the small per-layer kernels' rows and costs (elementwise.h).
 */
#include "elementwise.h"

#include <assert.h>
#include <math.h>
#include <string.h>

/* vLLM on CUDA (v0.11+, torch.compile with Inductor, CUDA graphs). What a
 * Llama-style layer runs besides its GEMMs and attention: the residual add
 * fused with the input RMSNorm and again with the post-attention one, the
 * rotary embedding of q and k, reshape_and_cache_flash (inside the
 * attention op), silu_and_mul; once a step the embedding gather and the
 * final norm. Inductor fuses an FP8 model's per-token quantization into
 * the norm before the QKV and gate/up GEMMs and into the activation before
 * down (vllm-project/vllm#19830: the native, Inductor-fused path is the
 * fastest of its configurations); the quantization of the attention
 * output before o_proj stays a kernel of its own.
 * Floors, in a CUDA-graph decode step on an H100: one kernel's place on
 * the replayed graph's timeline, which is its duration plus the gap to
 * the next. The trivial kernel's: 1.26 us, te42kyfo/gpu-benches
 * gpu-small-kernels/h200_graph.txt (commit c35574e; H200, the H100's
 * GH100 die and L2), row "4096 64kB": a streaming scale kernel of 64 kB
 * captured 10,000 times in one graph, best block size 52 GB/s (checks:
 * a100_80_graph.txt 49 GB/s, 1.34 us; the same kernel launched eagerly
 * back to back, h200.txt row "4096 64kB", 27 GB/s, 2.43 us: that is the
 * host's cudaLaunchKernel rate, which overhead.c charges eager steps, not
 * a GPU floor). What each kernel does beyond a trivial one: the CUPTI
 * durations inside the replayed graph of neuralmagic/nm-vllm#332 (its
 * fix makes the torch profiler see kernels in CUDA graphs; Llama-3-8B
 * FP8, 1 us resolution), less its trivial kernels' 1.0 us (FillFunctor
 * 2 us over 2 calls, DtoD memcpy 5 over 5): rms_norm_kernel 4.0 (its
 * reduction: +3.0), rotary_embedding_kernel 96 us for 32 layers (3.0:
 * the cos/sin gather, +2.0), scaled_fp8_quant_kernel 256 us for 128
 * calls (2.0: +1.0), the embedding's indexSelectSmallIndex 2.0 (+1.0).
 * So nm-vllm's figures are in-graph durations, not eager timings, and a
 * graph adds ~0.26 us a kernel to them. Checks: a fused residual add +
 * RMSNorm Triton kernel takes 4.11 us, flat up to 512 tokens, in
 * NVIDIA/Megatron-LM#6463's decode profile (TE's RMSNorm alone 2.9 us,
 * the add 1.5); silu_and_mul at batch 64 on an H100 is 75 us a step over
 * 32 layers, 2.34 us a call (NVIDIA/TensorRT-LLM#12496's PyTorch-backend
 * profile of Llama-3.1-8B FP8). The KV write (a scatter by slot mapping)
 * and the activation: estimate +1.0, the gather's and the quantization's
 * extra (no in-graph timing of reshape_and_cache_flash found).
 * Bytes: the fused RMSNorm + FP8 quantization of sgl-project/sglang#32994
 * (H100, hidden 4096, cold L2): 13.4 us at 2,048 tokens to 94.1 us at
 * 16,384, 80.7 us for 176 MB more, 2.18 TB/s = 0.703 of the H100's 3.1
 * TB/s stream. Traffic up to half the L2 (25 MB on an H100) costs
 * nothing beyond the floor: the input was just written by the kernel
 * before and sits in L2, the output is written back later. Support: the
 * fused add + RMSNorm of #6463 stays at ~4.1 us up to 512 tokens (21 MB
 * at hidden 5120); #12496's silu_and_mul moves 5.5 MB at batch 64 in
 * 2.34 us, less than the 2.5 us those bytes take from HBM at 0.703. The
 * half: estimate (no L2-residency measurement found). */
#define GRAPH_KERNEL_US 1.26 /* gpu-benches h200_graph.txt, row "4096 64kB" */
#define H100_SMALL_KERNELS                                                                         \
	.floor_us = { [EW_NORM] = GRAPH_KERNEL_US + 3.0,     [EW_ROPE] = GRAPH_KERNEL_US + 2.0,    \
		      [EW_KV_WRITE] = GRAPH_KERNEL_US + 1.0, [EW_ACT] = GRAPH_KERNEL_US + 1.0,     \
		      [EW_QUANT] = GRAPH_KERNEL_US + 1.0,    [EW_EMBED] = GRAPH_KERNEL_US + 1.0 }, \
	.bw_frac = 0.703, .l2_keep_frac = 0.5

static const struct ew_row rows[] = {
	{ .backend = "vllm-cuda",
	  .kernel = "fused add+RMSNorm, rotary, reshape_and_cache_flash, silu_and_mul "
		    "(Inductor/CUDA)",
	  H100_SMALL_KERNELS,
	  .source = "floors in a CUDA graph on H100: 1.26 us a kernel (gpu-benches "
		    "h200_graph.txt, 64 kB) + each kernel's work in nm-vllm #332's in-graph "
		    "profile (RMSNorm +3.0, rotary +2.0, FP8 quant +1.0 us; KV write, SiLU "
		    "estimate +1.0); bytes at 0.703 of stream past half the L2: sglang #32994" },
	/* vLLM on ROCm runs the same layer (its own RMSNorm, rotary and cache
	 * kernels, or AITER's). estimate: CUDA's floors and streaming share
	 * (no in-graph timing of these kernels on an MI300X found); with
	 * none, an MI300X would skip work an H100 pays for (test_devices'
	 * MI300X-vs-H200 check). */
	{ .backend = "vllm-rocm",
	  .kernel = "fused add+RMSNorm, rotary, cache write, silu_and_mul (ROCm)",
	  H100_SMALL_KERNELS,
	  .source = "estimate: vLLM CUDA's floors and streaming share (nm-vllm #332, sglang "
		    "#32994), no ROCm timing found" },
};

const struct ew_row *elementwise_row_for(const char *backend)
{
	for (size_t i = 0; i < sizeof rows / sizeof *rows; i++)
		if (!strcmp(rows[i].backend, backend))
			return &rows[i];
	return NULL;
}

void elementwise_shape(struct ew_shape *s, const struct model *m, const struct precision *w, int tp,
		       double kv_bytes_per_elem)
{
	memset(s, 0, sizeof *s);
	double t = tp > 0 ? tp : 1, L = (double)m->n_layers, Lm = (double)m->n_moe_layers;
	double h = (double)m->hidden, hd = (double)m->head_dim;
	double heads = (double)m->n_heads / t;
	double kv_heads = model_kv_heads_per_rank(m, tp);
	/* Activations are 16-bit. A fused add + RMSNorm reads the input and
	 * the residual and writes both: 8 bytes an element; two a layer, one
	 * more before the LM head (its residual written too). */
	s->calls[EW_NORM] = 2 * L + 1;
	s->bytes_per_token[EW_NORM] = 8 * h;
	if (m->mla) {
		/* MLA (vLLM's DeepseekV2MLAAttention) normalises its latents
		 * with RMSNorms of their own, no residual: kv_a_layernorm on
		 * the kv_lora_rank latent every layer, q_a_layernorm on the
		 * q_lora_rank one where there is a q LoRA; each reads and
		 * writes its 16-bit vector. Per call, averaged with the
		 * residual norms (their bytes sit in L2 at decode sizes). */
		double lora = (double)m->kv_lora_rank, qlora = (double)m->q_lora_rank;
		double extra = L * (qlora > 0 ? 2 : 1);
		double all = s->calls[EW_NORM] * s->bytes_per_token[EW_NORM] + L * 4 * (lora + qlora);
		s->calls[EW_NORM] += extra;
		s->bytes_per_token[EW_NORM] = all / s->calls[EW_NORM];
	}
	/* Rotary: reads and writes this GPU's query and key heads. */
	s->calls[EW_ROPE] = L;
	s->bytes_per_token[EW_ROPE] = 4 * (heads + kv_heads) * hd;
	/* The KV write: reads k and v, writes them at the cache's dtype. */
	s->calls[EW_KV_WRITE] = L;
	s->bytes_per_token[EW_KV_WRITE] = 2 * kv_heads * hd * (2 + kv_bytes_per_elem);
	/* The activation of each dense FFN (gated: reads gate and up, writes
	 * one; plain: reads and writes one) and of an MoE layer's shared
	 * expert; the routed experts' is inside the fused-MoE call (its row's
	 * fixed cost, backend.c). Per call, averaged over the layers that run one. */
	double gated = m->ffn_matrices == 2 ? 4 : 6;
	double dense_w = (double)m->dense_ffn_width / t, shared_w = (double)m->shared_ffn_width / t;
	double act_calls = (L - Lm) * (dense_w > 0) + Lm * (shared_w > 0);
	s->calls[EW_ACT] = act_calls;
	s->bytes_per_token[EW_ACT] =
		act_calls > 0 ? gated * ((L - Lm) * dense_w + Lm * shared_w) / act_calls : 0;
	/* FP8 / INT8 / FP4 activations: the attention output's quantization
	 * before o_proj (16-bit in, 8-bit out), where the attention weights
	 * are quantized. */
	if (matmul_is_low_precision(w->matmul) && !w->experts_only && !m->quant_skips_attention) {
		s->calls[EW_QUANT] = L;
		s->bytes_per_token[EW_QUANT] = 3 * heads * (double)m->v_head_dim;
	}
	/* The embedding gather: one row read and written a token. */
	s->calls[EW_EMBED] = 1;
	s->bytes_per_token[EW_EMBED] = 4 * h;
}

double elementwise_step_s(const struct ew_row *r, const struct ew_shape *s, double tokens,
			  double stream_bw, double l2_bytes, double *bytes)
{
	assert(r && stream_bw > 0);
	double total = 0, moved = 0, keep = r->l2_keep_frac * l2_bytes, bw = r->bw_frac * stream_bw;
	if (tokens > 0)
		for (int k = 0; k < EW_N; k++) {
			if (s->calls[k] <= 0)
				continue;
			double b = s->bytes_per_token[k] * tokens;
			double dram = fmax(0, b - keep);   /* what the L2 allowance does not hold */
			total += s->calls[k] * (r->floor_us[k] * 1e-6 + dram / bw);
			moved += s->calls[k] * dram;
		}
	if (bytes)
		*bytes = moved;
	return total;
}
