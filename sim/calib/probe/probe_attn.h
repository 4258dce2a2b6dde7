/*
 * probe_attn.h: the attention kernels' launchers and the paged KV pool,
 * shared by the attention rows, the layer rows and --check.
 *
 * Prefill (probe_fa2_prefill_v1, probe_prefill.cu): head dims 64, 80, 96,
 * 128, 256, with or without a sliding window. Decode (probe_flashdec_v2):
 * head dims 64, 128, 256, any number of query heads
 * per KV head (taken eight at a time). A launcher returns 0 for a head
 * dim it has no kernel for, and throws probe_error on a CUDA error.
 */
#ifndef SERVESIM_PROBE_ATTN_H
#define SERVESIM_PROBE_ATTN_H

#include <math.h>

#include "probe.h"

#define PREFILL_KERNEL "probe_fa2_prefill_v1"
#define DECODE_KERNEL "probe_flashdec_v2"
#define PD_BLOCK 16    /* KV block size in tokens (vLLM's default) */

/* A paged KV pool: [block][PD_BLOCK tokens][kv_heads][hd] for K and for V,
 * reached through each sequence's block table, n_copies pools with their
 * blocks shuffled. The split-K partition (part_len tokens, a multiple of
 * PD_BLOCK) is chosen so a step fills the GPU twice over. */
struct paged {
	int batch, ctx, heads, kv_heads, hd;
	int max_blocks, blocks_per_copy, n_copies;
	int part_len, max_parts;
	bf16 *k_cache, *v_cache;
	int *block_tables;     /* n_copies x batch x max_blocks */
	int *ctx_lens;
	float *part_m, *part_l, *part_acc;
};

/* softmax(q.k / sqrt(hd)) computed as exp2: the scale times log2(e). */
static inline float attn_scale_log2(int hd)
{
	return (float)(1.4426950408889634 / sqrt((double)hd));
}

int prefill_supports(int hd);
int decode_supports(int hd);
void attn_set_smem_limits(struct probe *p);   /* once per context */
/* window: a sliding window of that many keys (0: causal over all). */
int launch_flash(struct probe *p, const bf16 *q, int q_ld, const bf16 *k, int k_ld, const bf16 *v,
		 int v_ld, bf16 *o, int o_ld, int T, int C, int heads, int kv_heads, int hd, int window);
/* Causal (query, key) pairs of n queries after c cached keys, each seeing
 * at most w keys (w = 0: all): the step model's perf_causal_pairs. */
double attn_pairs(double n, double c, double w);
int launch_decode(struct probe *p, const struct paged *pg, int copy, const bf16 *q, int q_ld, bf16 *o,
		  int o_ld);
void launch_silu_mul(struct probe *p, const bf16 *gu, bf16 *out, int rows, int inter);
size_t paged_bytes(const struct probe *p, int batch, int ctx, int kv_heads, int hd, int heads,
		   int n_copies);
/* Returns 0 when cudaMalloc fails (nothing left allocated). */
int paged_create(struct probe *p, struct paged *pg, int batch, int ctx, int heads, int kv_heads,
		 int hd, int n_copies);
void paged_destroy(struct probe *p, struct paged *pg);

#endif
