/*
 * modelsize: what follows from a loaded model's dimensions (model.h):
 * parameter groups, weight bytes at a precision (whole, per GPU, active
 * per token), matmul and attention FLOPs per token, and KV-cache bytes per
 * token. Pure functions of struct model; model.c reads the configs.
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "model.h"

void model_params(const struct model *m, struct model_params *p)
{
	double D = (double)m->hidden, H = (double)m->n_heads;
	double hd = (double)m->head_dim, vd = (double)m->v_head_dim;
	memset(p, 0, sizeof *p);
	p->embed = (double)m->vocab * D;
	p->lm_head = m->tie_embeddings ? 0 : p->embed;
	if (m->mla) {
		double rope = (double)m->qk_rope_head_dim, nope = (double)m->qk_nope_head_dim;
		double lora = (double)m->kv_lora_rank, qlora = (double)m->q_lora_rank;
		double q = qlora > 0 ? D * qlora + qlora + qlora * H * hd : D * H * hd;
		p->attn_per_layer = q + D * (lora + rope) + lora + lora * H * (nope + vd) + H * vd * D;
	} else {
		double kv = (double)m->n_kv_heads * hd;
		p->attn_per_layer = D * H * hd + 2 * D * kv + H * hd * D;
		if (m->attention_bias)
			p->attn_per_layer += H * hd + 2 * kv;
	}
	p->dense_ffn_per_layer = (double)m->ffn_matrices * D * (double)m->dense_ffn_width;
	if (m->n_moe_layers) {
		double w = (double)m->expert_ffn_width;
		p->expert = (double)m->ffn_matrices * D * w + (m->expert_bias ? 2 * w + D : 0);
		p->shared_per_layer = (double)m->ffn_matrices * D * (double)m->shared_ffn_width;
		p->router_per_layer = D * (double)m->n_experts + (m->expert_bias ? (double)m->n_experts : 0);
	}
	p->norms = (2 * (double)m->n_layers + 1) * D;

	double L = (double)m->n_layers, Lm = (double)m->n_moe_layers;
	double common = p->embed + p->lm_head + p->norms + L * p->attn_per_layer +
			(L - Lm) * p->dense_ffn_per_layer +
			Lm * (p->shared_per_layer + p->router_per_layer);
	p->total = common + Lm * (double)m->n_experts * p->expert;
	p->active = common + Lm * (double)m->experts_per_token * p->expert;
	p->active_compute = p->active - p->embed;
}

void model_group_bytes(const struct model *m, const struct precision *w, struct model_group_bytes *b)
{
	double bits = w->bits_per_weight / 8;
	b->embed = w->quantizes_embeddings || w->bits_per_weight >= 16 ? bits : 2.0;
	b->expert = bits;
	b->dense = w->experts_only ? 2.0 : bits;
	b->attn = m->quant_skips_attention && b->dense < 2 ? 2.0 : b->dense;
}

/* Splits the parameters into embedding tables, attention, routed experts
 * (`experts` of them per MoE layer) and the rest, each at its own bytes. */
static double weight_bytes(const struct model *m, const struct precision *w, double experts)
{
	struct model_params p;
	struct model_group_bytes b;
	model_params(m, &p);
	model_group_bytes(m, w, &b);
	double emb = p.embed + p.lm_head;
	double attn = (double)m->n_layers * p.attn_per_layer;
	double active_experts = (double)m->n_moe_layers * (double)m->experts_per_token * p.expert;
	double rest = p.active - emb - attn - active_experts;
	return emb * b.embed + attn * b.attn + rest * b.dense +
	       (double)m->n_moe_layers * experts * p.expert * b.expert;
}

double model_vision_bytes(const struct model *m, int tp)
{
	return m->vision_params * 2 / tp;
}

double model_rope_cache_bytes(const struct model *m)
{
	return (double)m->max_position_embeddings * (double)m->rotary_dim * 2;
}

double model_weight_bytes(const struct model *m, const struct precision *w)
{
	return weight_bytes(m, w, (double)m->n_experts);
}

double model_weight_bytes_per_gpu(const struct model *m, const struct precision *w, int tp, int pp)
{
	double all = model_weight_bytes(m, w);
	if (pp > 1) {
		struct model_params p;
		struct model_group_bytes b;
		model_params(m, &p);
		model_group_bytes(m, w, &b);
		double table = p.embed * b.embed;   /* the LM head is the same size */
		double tables = m->tie_embeddings ? table : 2 * table;
		double stage = (double)pipeline_stage_layers(m->n_layers, pp) / (double)m->n_layers;
		all = (all - tables) * stage + table;
	}
	return all / tp + model_vision_bytes(m, tp);
}

double model_active_weight_bytes(const struct model *m, const struct precision *w)
{
	struct model_params p;
	struct model_group_bytes b;
	model_params(m, &p);
	model_group_bytes(m, w, &b);
	/* An untied input embedding is a lookup of one row per token, not a
	 * stream: drop it (a tied table is read whole, as the LM head). */
	double lookup = m->tie_embeddings ? 0 : p.embed;
	return weight_bytes(m, w, (double)m->experts_per_token) - lookup * b.embed;
}

double model_linear_flops_per_token(const struct model *m)
{
	struct model_params p;
	model_params(m, &p);
	return 2 * (p.active_compute - p.norms);
}

double model_attn_flops_per_token(const struct model *m, double ctx)
{
	double full = (double)(m->n_layers - m->n_sliding_layers);
	double slide = (double)m->n_sliding_layers;
	double c_slide = m->sliding_window > 0 ? fmin(ctx, (double)m->sliding_window) : ctx;
	double per_ctx = 2 * (double)m->n_heads * (double)(m->head_dim + m->v_head_dim);
	return per_ctx * (full * ctx + slide * c_slide);
}

double model_kv_bytes_per_token(const struct model *m, double kv_bytes_per_elem)
{
	if (m->mla)
		return (double)m->n_layers * (double)(m->kv_lora_rank + m->qk_rope_head_dim) *
		       kv_bytes_per_elem;
	return 2.0 * (double)m->n_layers * (double)m->n_kv_heads * (double)m->head_dim *
	       kv_bytes_per_elem;
}

double model_kv_heads_per_rank(const struct model *m, int tp)
{
	if (m->mla || tp <= 1)
		return (double)m->n_kv_heads;
	double heads = floor((double)m->n_kv_heads / tp);
	return heads < 1 ? 1 : heads;
}

double model_kv_bytes_per_token_per_rank(const struct model *m, double kv_bytes_per_elem, int tp)
{
	if (m->mla || tp <= 1)
		return model_kv_bytes_per_token(m, kv_bytes_per_elem);
	return model_kv_bytes_per_token(m, kv_bytes_per_elem) * model_kv_heads_per_rank(m, tp) /
	       (double)m->n_kv_heads;
}
