/*
 * perfsetup: building a step model (struct perf, steptime.h) from a model,
 * a device and a weight precision (perf_init), choosing the engine's
 * backend kernels (perf_use_engine) or the scalar model, and the setup
 * knobs around it: pipeline stages, --cpu-offload-gb's offloaded bytes,
 * the ideal device. steptime.c times steps on what this builds.
 */
#include "steptime.h"

#include <assert.h>
#include <math.h>
#include <string.h>

#include "num.h"

/* Whether a weight group stored at bytes per parameter multiplies in the
 * precision's low-precision dtype (fp8, int8, fp4) rather than bf16. */
static bool group_low(const struct precision *w, double bytes)
{
	return bytes < 2 && matmul_is_low_precision(w->matmul);
}

static double group_peak(const struct hw_profile *hw, const struct precision *w, double bytes)
{
	return bytes >= 2 ? hw_peak_flops(hw, MATMUL_BF16) : hw_peak_flops(hw, w->matmul);
}

void perf_init(struct perf *p, const struct model *m, const struct hw_profile *hw,
	       const struct precision *w, int tp, double kv_bytes_per_elem)
{
	memset(p, 0, sizeof *p);
	struct model_params mp;
	model_params(m, &mp);
	double t = tp;
	struct model_group_bytes gb;
	model_group_bytes(m, w, &gb);
	double L = (double)m->n_layers, Lm = (double)m->n_moe_layers;

	p->hw = hw;
	p->eff = hw->eff;
	p->tp = tp;
	p->n_layers = m->n_layers;
	p->bw = hw->bandwidth_gb_s * 1e9;
	p->peak_matmul = hw_peak_flops(hw, w->matmul);
	p->peak_attn = hw_peak_flops(hw, MATMUL_BF16);

	double dense_params = L * mp.attn_per_layer + (L - Lm) * mp.dense_ffn_per_layer +
			      Lm * (mp.shared_per_layer + mp.router_per_layer);
	double attn_params = L * mp.attn_per_layer;
	p->dense_bytes = ((dense_params - attn_params) * gb.dense + attn_params * gb.attn) / t;
	p->shared_bytes = Lm * mp.shared_per_layer * gb.dense / t;
	p->dense_flops_per_token = 2 * dense_params / t;
	double t_attn = attn_params / group_peak(hw, w, gb.attn);
	double t_rest = (dense_params - attn_params) / group_peak(hw, w, gb.dense);
	p->peak_dense = dense_params / (t_attn + t_rest);
	p->dense_low = ((group_low(w, gb.attn) ? t_attn : 0) + (group_low(w, gb.dense) ? t_rest : 0)) /
		       (t_attn + t_rest);
	double head = mp.lm_head > 0 ? mp.lm_head : mp.embed;   /* tied: the embedding */
	p->lm_head_bytes = head * gb.embed / t;
	p->lm_head_flops_per_token = 2 * head / t;
	p->peak_lm_head = group_peak(hw, w, gb.embed);
	p->lm_head_low = group_low(w, gb.embed);
	p->peak_expert = group_peak(hw, w, gb.expert);
	p->expert_low = group_low(w, gb.expert);
	p->moe_fp8_scaled = p->expert_low && w->matmul == MATMUL_FP8 && m->quant_fp8_scaled;
	p->moe_mxfp4 = !p->expert_low && w->experts_only;   /* MXFP4, the one experts-only precision */

	p->n_moe_layers = Lm;
	p->n_experts = (double)m->n_experts;
	p->experts_per_token = (double)m->experts_per_token;
	p->expert_bytes = mp.expert * gb.expert / t;
	p->expert_flops_per_token = 2 * mp.expert / t;
	p->expert_n = (double)m->expert_ffn_width / t;

	p->kv_bytes_per_token_layer = model_kv_bytes_per_token_per_rank(m, kv_bytes_per_elem, tp) / L;
	p->sliding_layers = (double)m->n_sliding_layers;
	p->full_layers = L - p->sliding_layers;
	p->window = (double)m->sliding_window;
	p->attn_flops_per_pair = 2 * (double)m->n_heads * (double)(m->head_dim + m->v_head_dim) / t;
	p->hidden_bytes_per_token = (double)m->hidden * 2;
	p->head_dim = (double)m->head_dim;
	p->q_per_kv = m->n_kv_heads > 0 ? (double)m->n_heads / (double)m->n_kv_heads : 1;
	p->kv_heads_rank = model_kv_heads_per_rank(m, tp);
	p->weights_quantized = gb.dense < 2;
	p->low_dtype = w->matmul;
	p->weights_name = w->name;
	/* The widest matmul of a layer sets the column tiles of its waves:
	 * the fused gate/up projection (or the fused QKV when wider). */
	double ffn = m->n_moe_layers < m->n_layers ? 2 * (double)m->dense_ffn_width : 0;
	double qkv = (double)(m->n_heads + 2 * m->n_kv_heads) * (double)m->head_dim;
	p->tiles_n_dense = ceil(fmax(fmax(ffn, qkv), (double)m->hidden) / t / 128);
	p->tiles_n_expert = ceil(2 * (double)m->expert_ffn_width / t / 128);
	/* vLLM's fused linear layers: QKV and o on every layer, gate/up and
	 * down on a dense one, a MoE layer's shared experts (two) and router
	 * (one). An MLA layer's decode runs five weight matmuls, not two
	 * (vLLM's DeepseekV2MLAAttention + MLACommonImpl._forward_decode):
	 * the fused q/kv down projection (fused_qkv_a_proj; q_proj and
	 * kv_a_proj_with_mqa without a q LoRA, then q_proj comes in place of
	 * q_b_proj), q_b_proj, the absorbed W_UK_T bmm before attention, the
	 * W_UV bmm after it (_v_up_proj), o_proj: each a weight-streaming
	 * kernel at the mat-vec floor. */
	double attn_kernels = m->mla ? 5 : 2;
	p->dense_kernels = attn_kernels * L + 2 * (L - Lm) +
			   Lm * ((mp.shared_per_layer > 0 ? 2 : 0) + (mp.router_per_layer > 0 ? 1 : 0));
	elementwise_shape(&p->ew_shape, m, w, tp, kv_bytes_per_elem);
	perf_pipeline(p, 1);
	p->ep = 1;
	perf_set_router_skew(p, 0);
	perf_use_engine(p, "vllm");
}

/* The peak a kernel row's fraction is of, over the 16-bit (FP32-accumulate)
 * peak perf_init's groups are rated at. */
static double peak_gain(const struct hw_profile *hw, const struct perf_kernel *k)
{
	double base = hw_peak_flops(hw, MATMUL_BF16);
	if (k->peak == KPEAK_ACC16)
		return hw_peak_flops_acc16(hw) / base;
	if (k->peak == KPEAK_INT8)
		return hw_peak_flops(hw, MATMUL_INT8) / base;
	return 1;
}

void perf_use_engine(struct perf *p, const char *engine)
{
	const struct hw_profile *hw = p->hw;
	const struct perf_backend *b = perf_backend_for(engine, hw);
	const struct hw_efficiency *e = &hw->eff;   /* class defaults under the given keys */
	unsigned given = hw->eff_given;
#define GIVEN(f) ((given & HW_EFF_BIT(f)) != 0)
	int gen = hw->arch.present ? hw->arch.tensor_gen : -2;   /* no facts: only wildcard rows */
	double clock = hw_clock_ratio(hw), stream = hw_stream_bandwidth(hw), hd = p->head_dim;
	bool llama = !strcmp(b->engine, "llama.cpp");
	p->backend = b;
	/* llama.cpp picks its GEMM by the weights' storage (MMQ for GGUF
	 * quants), vLLM by the matmul dtype (the low row for FP8/INT8/FP4). */
	p->k_gemm = perf_kernel_find(b, KOP_GEMM, llama && p->weights_quantized ? KDT_LOW : KDT_16, gen, 0, 0);
	p->k_gemm_low = perf_kernel_find(b, KOP_GEMM, KDT_LOW, gen, 0, 0);
	int moe_dt = p->expert_low ? (p->moe_fp8_scaled ? KDT_FP8_SCALED : KDT_LOW) : p->moe_mxfp4 ? KDT_MXFP4 : KDT_16;
	p->k_moe = perf_kernel_find(b, KOP_MOE, moe_dt, gen, 0, 0);
	p->k_prefill = perf_kernel_find(b, KOP_ATTN_PREFILL, KDT_ANY, gen, (int)hd, (int)p->q_per_kv);
	p->k_decode = perf_kernel_find(b, KOP_ATTN_DECODE, KDT_ANY, gen, (int)hd, (int)p->q_per_kv);
	const struct perf_kernel *k = p->k_gemm, *kl = p->k_gemm_low, *km = p->k_moe;
	p->gemm_cmax = GIVEN(compute_max) || k->fallback ? e->compute_max
							  : k->compute_frac * clock * peak_gain(hw, k);
	if (!GIVEN(compute_max) && !k->fallback && b->weights_gain && p->weights_quantized)
		p->gemm_cmax *= b->weights_gain(p->weights_name, gen);   /* MMQ by GGUF type */
	p->gemm_half = GIVEN(compute_half_tokens) || k->fallback ? e->compute_half_tokens : k->half;
	p->gemm_tile = GIVEN(compute_half_tokens) || k->fallback ? 0 : k->tile_m;
	p->gemm_vec_m = GIVEN(compute_max) || k->fallback ? 0 : k->vec_m;
	p->gemm_vec_cmax = k->vec_frac * clock * peak_gain(hw, k);
	p->gemm_bw = GIVEN(bandwidth) || k->fallback ? p->bw * e->bandwidth : stream * k->bw_frac;
	p->gemm_vec_bw = GIVEN(bandwidth) || k->fallback || k->vec_bw_frac <= 0 ? p->gemm_bw : stream * k->vec_bw_frac;
	p->gemm_serial = !k->fallback && k->serial_load;
	/* A measured mat-vec curve ([arch] gemv_*, hwprofile.h) times vLLM's
	 * weight reads (cuBLAS / CUTLASS, whose memory-bound time at M up to
	 * ~128 is the M = 1 kernel's: vLLM PR #49363's H100 table); llama.cpp's
	 * MMVQ / MMQ rows keep their own llama-bench fits. */
	p->gemv_curve = !llama && !GIVEN(bandwidth) && !k->fallback && hw_gemv_bandwidth(hw, 1, 1) > 0;
	p->gemm_lp = GIVEN(low_precision_compute) || kl->fallback || k->fallback
		     ? e->low_precision_compute : kl->compute_frac / k->compute_frac;
	/* A measured best-shape GEMM rate ([arch] matmul_*_tflops) replaces
	 * clock × fraction for the rows rated at the dtype's peak: serving
	 * shapes reach MAMF_SERVING of it (uncertain: the H100 row's 0.82 is
	 * about 0.95 of cuBLAS's best shapes). GeForce parts beat their
	 * datasheet this way (clocks above the quoted boost). */
	const double MAMF_SERVING = 0.95;
	double mm16 = hw->arch.matmul_bf16_tflops * 1e12;
	enum matmul_dtype ld = p->low_dtype == MATMUL_FP4 ? MATMUL_FP4 : MATMUL_FP8;
	double mm8 = (ld == MATMUL_FP4 ? hw->arch.matmul_fp4_tflops : hw->arch.matmul_fp8_tflops) * 1e12;
	p->gemm_measured = p->gemm_lp_measured = false;
	if (!GIVEN(compute_max) && !k->fallback && k->peak == KPEAK_DTYPE && mm16 > 0) {
		double lowc = p->gemm_lp * p->gemm_cmax;   /* the low row's fraction of its own peak */
		p->gemm_cmax = MAMF_SERVING * mm16 / hw_peak_flops(hw, MATMUL_BF16);
		p->gemm_measured = true;
		if (!GIVEN(low_precision_compute) && !kl->fallback) {
			p->gemm_lp = (mm8 > 0 ? MAMF_SERVING * mm8 / hw_peak_flops(hw, ld) : lowc) /
				     p->gemm_cmax;
			p->gemm_lp_measured = mm8 > 0;
		}
	}
	p->moe_cmax = GIVEN(moe_efficiency) || km->fallback ? e->moe_efficiency * p->gemm_cmax
							     : km->compute_frac * clock * peak_gain(hw, km);
	bool moe_scalar = GIVEN(moe_efficiency) || km->fallback;
	p->moe_bw_curve = moe_scalar ? NULL : km->bw_curve;
	p->moe_width_curve = moe_scalar ? NULL : km->width_curve;
	p->moe_stream = stream;
	p->moe_bw = moe_scalar ? e->moe_efficiency * p->gemm_bw
		    : p->moe_bw_curve ? stream * perf_curve_at(p->moe_bw_curve, p->expert_n) : stream * km->bw_frac;
	p->moe_curve = moe_scalar ? NULL : km->curve;
	p->moe_fixed_s = moe_scalar ? 0 : km->fixed_us * 1e-6;
	p->moe_tile = moe_scalar ? 0 : km->tile_m;
	/* A low-precision row fitted to a low-precision grouped-GEMM table
	 * (it has its own curve) is a fraction of that dtype's peak, as the
	 * low GEMM rows are; the others scale the 16-bit rows by gemm_lp. */
	p->moe_own_peak = !moe_scalar && km->dtype != KDT_16 && km->dtype != KDT_ANY && km->curve;
	p->prefill_clock = GIVEN(attention_compute) || p->k_prefill->fallback || !p->k_prefill->curve ? 0 : clock;
	p->decode_bw = GIVEN(attention_bandwidth) || p->k_decode->fallback ? p->bw * e->attention_bandwidth
									   : stream * p->k_decode->bw_frac;
	/* A calibrated pair of attention keys is the scalar model's curve;
	 * the kernel row's fixed cost goes with its own slope only. */
	bool dec_scalar = GIVEN(attention_half_seqs) || GIVEN(attention_bandwidth) || p->k_decode->fallback;
	p->decode_half = dec_scalar ? e->attention_half_seqs : p->k_decode->half;
	p->decode_fixed_s = dec_scalar ? 0 : p->k_decode->fixed_us * 1e-6;
	p->decode_unit_s = dec_scalar ? 0 : p->k_decode->unit_us * 1e-6;
	p->decode_sms = hw->arch.present ? hw->arch.sm_count : 0;
	p->sm_count = k->waves && hw->arch.present ? hw->arch.sm_count : 0;
	p->gemm_fixed_s = b->gemm_kernels * b->kernel_us * 1e-6;
	p->attn_fixed_s = b->attn_kernels * b->kernel_us * 1e-6;
	p->lm_fixed_s = b->gemm_kernels > 0 ? b->kernel_us * 1e-6 : 0;
	p->ew = hw->arch.present ? elementwise_row_for(b->name) : NULL;
	p->ew_stream = stream;
	p->ew_l2 = hw->arch.present ? hw->arch.l2_mb * 1e6 : 0;
	/* The engine's step overhead on this backend, unless the profile
	 * gives one; a later perf_use_engine restores the class's. */
	struct hw_efficiency cls;
	hw_default_efficiency(hw->hw_class, &cls);
	p->eff.step_overhead_us = GIVEN(step_overhead_us) || !hw->arch.present ? e->step_overhead_us
			        : b->step_overhead_us >= 0 ? b->step_overhead_us : cls.step_overhead_us;
#undef GIVEN
}

void perf_use_scalars(struct perf *p)
{
	p->backend = NULL;
}

void perf_pipeline(struct perf *p, int pp)
{
	assert(pp >= 1);
	p->pp = pp;
	p->stage_layers = (double)pipeline_stage_layers(p->n_layers, pp);
}

double perf_offload(struct perf *p, double gib, double weight_bytes_per_gpu)
{
	double b = gib * GIB;
	p->offload_bytes = b < weight_bytes_per_gpu ? b : weight_bytes_per_gpu;
	return p->offload_bytes;
}

void perf_ideal(struct perf *p)
{
	p->backend = NULL;
	p->eff = (struct hw_efficiency){ .bandwidth = 1, .attention_bandwidth = 1, .compute_max = 1,
					 .compute_half_tokens = 0, .attention_compute = 1,
					 .attention_half_seqs = 0, .moe_efficiency = 1,
					 .low_precision_compute = 1 };
}
