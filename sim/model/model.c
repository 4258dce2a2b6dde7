#include "model.h"

#include <jansson.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "catalog.h"

/* Reading fields: each helper names the file and the field on failure. */
struct reader {
	const char *path;
	json_t *cfg;     /* the text part: text_config when present */
	json_t *top;     /* the whole file */
	struct err *e;
};

static json_t *field(const struct reader *r, const char *key)
{
	json_t *v = json_object_get(r->cfg, key);
	return json_is_null(v) ? NULL : v;
}

static int need_int(const struct reader *r, const char *key, int64_t *out)
{
	json_t *v = field(r, key);
	if (!v)
		return err_set(r->e, "%s: %s: missing; expected a positive integer", r->path, key);
	if (!json_is_integer(v) || json_integer_value(v) <= 0 || json_integer_value(v) > INT32_MAX)
		return err_set(r->e, "%s: %s: expected an integer from 1 to %d", r->path, key, INT32_MAX);
	*out = json_integer_value(v);
	return 0;
}

/* An optional integer: 0 and *out untouched when absent or null. */
static int opt_int(const struct reader *r, const char *key, int64_t *out)
{
	json_t *v = field(r, key);
	if (!v)
		return 0;
	if (!json_is_integer(v) || json_integer_value(v) < 0 || json_integer_value(v) > INT32_MAX)
		return err_set(r->e, "%s: %s: expected an integer from 0 to %d", r->path, key, INT32_MAX);
	*out = json_integer_value(v);
	return 0;
}

/* The first of keys present, as an integer. */
static int first_int(const struct reader *r, const char *const *keys, int64_t *out)
{
	for (; *keys; keys++)
		if (field(r, *keys))
			return opt_int(r, *keys, out);
	return 0;
}

static bool opt_bool(const struct reader *r, const char *key, bool dflt)
{
	json_t *v = field(r, key);
	return json_is_boolean(v) ? json_is_true(v) : dflt;
}

static const char *opt_str(const struct reader *r, const char *key)
{
	json_t *v = field(r, key);
	return json_is_string(v) ? json_string_value(v) : NULL;
}

static bool type_is(const struct model *m, const char *const *types)
{
	for (; *types; types++)
		if (!strcmp(m->model_type, *types))
			return true;
	return false;
}

/* Hugging Face's PretrainedConfig ties embeddings by default; these model
 * classes override the default to false. */
static bool default_tie(const struct model *m)
{
	static const char *const untied[] = {
		"llama", "mistral", "mixtral", "qwen2", "qwen2_moe", "qwen3", "qwen3_moe",
		"deepseek_v2", "deepseek_v3", "gpt_oss", "llama4_text", "yi", NULL
	};
	return !type_is(m, untied);
}

static int read_moe(const struct reader *r, struct model *m)
{
	static const char *const count_keys[] = {
		"num_local_experts", "num_experts", "n_routed_experts", "moe_num_experts", NULL
	};
	if (first_int(r, count_keys, &m->n_experts))
		return -1;
	if (m->n_experts <= 1) {
		m->n_experts = 0;
		return 0;
	}
	static const char *const topk_keys[] = { "num_experts_per_tok", "experts_per_token", NULL };
	if (first_int(r, topk_keys, &m->experts_per_token))
		return -1;
	if (m->experts_per_token <= 0 || m->experts_per_token > m->n_experts)
		return err_set(r->e, "%s: num_experts_per_tok: expected 1..%lld for %lld experts",
			       r->path, (long long)m->n_experts, (long long)m->n_experts);
	m->expert_ffn_width = m->dense_ffn_width;
	if (opt_int(r, "moe_intermediate_size", &m->expert_ffn_width))
		return -1;
	if (m->expert_ffn_width <= 0)
		return err_set(r->e, "%s: moe_intermediate_size: missing; expected the expert FFN width",
			       r->path);

	int64_t n_shared = 0, shared_width = 0;
	if (opt_int(r, "n_shared_experts", &n_shared) ||
	    opt_int(r, "shared_expert_intermediate_size", &shared_width))
		return -1;
	m->shared_ffn_width = shared_width ? shared_width : n_shared * m->expert_ffn_width;
	static const char *const llama4[] = { "llama4_text", "llama4", NULL };
	if (type_is(m, llama4))
		m->shared_ffn_width = m->expert_ffn_width; /* Llama4TextMoe has one shared expert */

	/* Which layers are MoE, each family its own rule (formats.md §6). */
	int64_t first_dense = 0, freq = 1, sparse_step = 1, interleave = 1;
	if (opt_int(r, "first_k_dense_replace", &first_dense) ||
	    opt_int(r, "moe_layer_freq", &freq) ||
	    opt_int(r, "decoder_sparse_step", &sparse_step) ||
	    opt_int(r, "interleave_moe_layer_step", &interleave))
		return -1;
	json_t *mlp_only = field(r, "mlp_only_layers");
	m->n_moe_layers = 0;
	for (int64_t i = 0; i < m->n_layers; i++) {
		bool moe = i >= first_dense && (freq <= 1 || i % freq == 0) &&
			   (sparse_step <= 1 || (i + 1) % sparse_step == 0) &&
			   (interleave <= 1 || (i + 1) % interleave == 0);
		size_t k;
		json_t *v;
		json_array_foreach(mlp_only, k, v)
			if (json_is_integer(v) && json_integer_value(v) == i)
				moe = false;
		m->n_moe_layers += moe;
	}
	/* Dense layers of an MoE model: DeepSeek uses intermediate_size,
	 * Llama 4 intermediate_size_mlp. */
	if (opt_int(r, "intermediate_size_mlp", &m->dense_ffn_width))
		return -1;
	m->expert_bias = !strcmp(m->model_type, "gpt_oss");
	return 0;
}

static int read_attention(const struct reader *r, struct model *m)
{
	if (need_int(r, "num_attention_heads", &m->n_heads))
		return -1;
	m->n_kv_heads = m->n_heads;
	static const char *const kv_keys[] = {
		"n_head_kv", "num_kv_heads", "num_key_value_heads", "multi_query_group_num", NULL
	};
	if (first_int(r, kv_keys, &m->n_kv_heads))
		return -1;
	if (m->n_kv_heads <= 0 || m->n_heads % m->n_kv_heads)
		return err_set(r->e, "%s: num_key_value_heads: expected a divisor of num_attention_heads (%lld)",
			       r->path, (long long)m->n_heads);

	if (opt_int(r, "kv_lora_rank", &m->kv_lora_rank))
		return -1;
	m->mla = m->kv_lora_rank > 0;
	if (m->mla) {
		int64_t v = 0;
		if (need_int(r, "qk_rope_head_dim", &m->qk_rope_head_dim) ||
		    need_int(r, "qk_nope_head_dim", &m->qk_nope_head_dim) ||
		    need_int(r, "v_head_dim", &v) || opt_int(r, "q_lora_rank", &m->q_lora_rank))
			return -1;
		/* Never config head_dim for MLA: transformers sets it to the rope dim. */
		m->head_dim = m->qk_nope_head_dim + m->qk_rope_head_dim;
		m->v_head_dim = v;
		m->n_kv_heads = m->n_heads;
	} else {
		m->head_dim = 0;
		if (opt_int(r, "head_dim", &m->head_dim))
			return -1;
		if (m->head_dim == 0) {
			if (m->hidden % m->n_heads)
				return err_set(r->e, "%s: head_dim: missing, and hidden_size %lld is not a multiple of num_attention_heads %lld",
					       r->path, (long long)m->hidden, (long long)m->n_heads);
			m->head_dim = m->hidden / m->n_heads;
		}
		m->v_head_dim = m->head_dim;
	}
	static const char *const qkv_bias_types[] = { "qwen2", "qwen2_moe", NULL };
	m->attention_bias = opt_bool(r, "attention_bias", false) || type_is(m, qkv_bias_types);

	/* Sliding windows: layer_types, Gemma 2's alternation, Qwen2's
	 * use_sliding_window + max_window_layers, or every layer (Mistral v0.1). */
	if (opt_int(r, "sliding_window", &m->sliding_window))
		return -1;
	json_t *types = field(r, "layer_types");
	if (m->sliding_window > 0 && json_is_array(types)) {
		size_t k;
		json_t *v;
		json_array_foreach(types, k, v)
			if (json_is_string(v) && !strcmp(json_string_value(v), "sliding_attention"))
				m->n_sliding_layers++;
	} else if (m->sliding_window > 0 && !strcmp(m->model_type, "gemma2")) {
		m->n_sliding_layers = (m->n_layers + 1) / 2; /* even layers slide */
	} else if (m->sliding_window > 0 && field(r, "use_sliding_window")) {
		int64_t max_window_layers = m->n_layers;
		if (opt_int(r, "max_window_layers", &max_window_layers))
			return -1;
		if (opt_bool(r, "use_sliding_window", false))
			m->n_sliding_layers = m->n_layers > max_window_layers ?
						      m->n_layers - max_window_layers : 0;
	} else if (m->sliding_window > 0) {
		m->n_sliding_layers = m->n_layers;
	}
	if (m->n_sliding_layers == 0)
		m->sliding_window = 0;
	return 0;
}

/* The dimensions rotary embedding turns per head: head_dim ×
 * partial_rotary_factor, or MLA's qk_rope_head_dim. */
static int read_rotary(const struct reader *r, struct model *m)
{
	if (m->mla) {
		m->rotary_dim = m->qk_rope_head_dim;
		return 0;
	}
	json_t *f = field(r, "partial_rotary_factor");
	if (f && (!json_is_number(f) || json_number_value(f) <= 0 || json_number_value(f) > 1))
		return err_set(r->e, "%s: partial_rotary_factor: expected a number in (0, 1]", r->path);
	double factor = f ? json_number_value(f) : 1;
	m->rotary_dim = (int64_t)((double)m->head_dim * factor);
	return 0;
}

/* The vision tower of a multimodal config (vision_config, as Llama 4,
 * Qwen2.5-VL, Gemma 3 and Mistral 3 publish it): a ViT of `depth` layers
 * (attention 4·h², MLP 2·h·i, 3·h·i when gated) and a projector into the
 * text model's hidden size. */
static int read_vision(const struct reader *r, struct model *m)
{
	json_t *v = json_object_get(r->top, "vision_config");
	if (!json_is_object(v))
		return 0;
	struct reader vr = { .path = r->path, .top = r->top, .cfg = v, .e = r->e };
	static const char *const depth_keys[] = { "num_hidden_layers", "depth", NULL };
	static const char *const width_keys[] = { "hidden_size", "embed_dim", NULL };
	static const char *const out_keys[] = { "projector_output_dim", "vision_output_dim",
						"out_hidden_size", NULL };
	int64_t depth = 0, h = 0, inter = 0, out = 0;
	if (first_int(&vr, depth_keys, &depth) || first_int(&vr, width_keys, &h) ||
	    opt_int(&vr, "intermediate_size", &inter) || first_int(&vr, out_keys, &out))
		return -1;
	if (depth == 0 || h == 0)
		return err_set(r->e, "%s: vision_config: expected num_hidden_layers (or depth) and hidden_size (or embed_dim)",
			       r->path);
	const char *act = opt_str(&vr, "hidden_act");
	bool gated = act && (!strcmp(act, "silu") || !strcmp(act, "swiglu"));
	double H = (double)h, I = inter > 0 ? (double)inter : 4 * H;
	m->vision_params = (double)depth * (4 * H * H + (gated ? 3 : 2) * H * I) +
			   (double)(out > 0 ? out : h) * (double)m->hidden;
	return 0;
}

/* The stored precision from quantization_config (top level or text part)
 * and torch_dtype/dtype. */
static int read_weights(const struct reader *r, struct model *m)
{
	json_t *q = json_object_get(r->top, "quantization_config");
	if (!q)
		q = json_object_get(r->cfg, "quantization_config");
	if (!q)
		q = json_object_get(r->top, "compression_config");
	const char *dtype = opt_str(r, "torch_dtype");
	if (!dtype)
		dtype = json_string_value(json_object_get(r->top, "torch_dtype"));
	if (!dtype)
		dtype = opt_str(r, "dtype");
	snprintf(m->weights, sizeof m->weights, "%s",
		 dtype && !strcmp(dtype, "float16") ? "fp16" : "bf16");
	if (!json_is_object(q))
		return 0;
	const char *method = json_string_value(json_object_get(q, "quant_method"));
	if (!method)
		return err_set(r->e, "%s: quantization_config.quant_method: missing; expected fp8, awq, gptq, mxfp4, compressed-tensors, …",
			       r->path);
	int64_t bits = json_integer_value(json_object_get(q, "bits"));
	if (!strcasecmp(method, "fp8") || !strcasecmp(method, "fbgemm_fp8")) {
		snprintf(m->weights, sizeof m->weights, "fp8");
	} else if (!strcasecmp(method, "mxfp4")) {
		snprintf(m->weights, sizeof m->weights, "mxfp4");
	} else if (!strcasecmp(method, "awq") || !strcasecmp(method, "gptq")) {
		snprintf(m->weights, sizeof m->weights, "%s", bits == 8 ? "int8" : "int4");
	} else if (!strcasecmp(method, "compressed-tensors")) {
		json_t *ignore = json_object_get(q, "ignore");
		size_t i;
		json_t *v;
		json_array_foreach(ignore, i, v)
			if (json_is_string(v) && strstr(json_string_value(v), "self_attn"))
				m->quant_skips_attention = true;
		/* The first config group's weights say it. */
		json_t *groups = json_object_get(q, "config_groups");
		const char *k;
		json_t *g;
		json_object_foreach(groups, k, g) {
			json_t *w = json_object_get(g, "weights");
			int64_t nb = json_integer_value(json_object_get(w, "num_bits"));
			const char *type = json_string_value(json_object_get(w, "type"));
			if (nb == 8)
				snprintf(m->weights, sizeof m->weights, "%s",
					 type && !strcmp(type, "float") ? "fp8" : "int8");
			else if (nb == 4)
				snprintf(m->weights, sizeof m->weights, "%s",
					 type && !strcmp(type, "float") ? "nvfp4" : "int4");
			break;
		}
	} else if (!strcasecmp(method, "bitsandbytes")) {
		snprintf(m->weights, sizeof m->weights, "%s",
			 json_is_true(json_object_get(q, "load_in_8bit")) ? "int8" : "int4");
	}
	return 0;
}

int model_load(struct model *m, const char *path, struct err *e)
{
	memset(m, 0, sizeof *m);
	catalog_id_of(path, m->id, sizeof m->id);
	json_error_t je;
	json_t *top = json_load_file(path, JSON_REJECT_DUPLICATES, &je);
	if (!top) {
		if (je.line <= 0)
			return err_set(e, "%s: %s", path, je.text);
		return err_set(e, "%s:%d:%d: invalid JSON: %s", path, je.line, je.column, je.text);
	}
	int rc = -1;
	if (!json_is_object(top)) {
		err_set(e, "%s: expected a JSON object (a Hugging Face config.json)", path);
		goto out;
	}
	struct reader r = { .path = path, .top = top, .cfg = top, .e = e };
	json_t *text = json_object_get(top, "text_config");
	if (json_is_object(text))
		r.cfg = text;
	const char *type = opt_str(&r, "model_type");
	if (!type)
		type = json_string_value(json_object_get(top, "model_type"));
	snprintf(m->model_type, sizeof m->model_type, "%s", type ? type : "");

	if (need_int(&r, "num_hidden_layers", &m->n_layers) ||
	    need_int(&r, "hidden_size", &m->hidden) ||
	    need_int(&r, "vocab_size", &m->vocab) ||
	    need_int(&r, "intermediate_size", &m->dense_ffn_width))
		goto out;
	/* Absent: 0, and the engines choose (vLLM's 4096 fallback); present,
	 * a context of 0 tokens is no context: an error, not the fallback. */
	m->max_position_embeddings = 0;
	if (field(&r, "max_position_embeddings") &&
	    need_int(&r, "max_position_embeddings", &m->max_position_embeddings))
		goto out;
	if (read_attention(&r, m) || read_moe(&r, m) || read_weights(&r, m) ||
	    read_rotary(&r, m) || read_vision(&r, m))
		goto out;
	json_t *tie = json_object_get(top, "tie_word_embeddings");
	if (!json_is_boolean(tie))
		tie = field(&r, "tie_word_embeddings");
	m->tie_embeddings = json_is_boolean(tie) ? json_is_true(tie) : default_tie(m);
	rc = 0;
out:
	json_decref(top);
	return rc;
}

int model_load_named(struct model *m, const char *name, struct err *e)
{
	char path[4096];
	if (catalog_resolve(CATALOG_MODELS, name, path, sizeof path, e))
		return -1;
	return model_load(m, path, e);
}

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
	p->dense_ffn_per_layer = 3 * D * (double)m->dense_ffn_width;
	if (m->n_moe_layers) {
		double w = (double)m->expert_ffn_width;
		p->expert = 3 * D * w + (m->expert_bias ? 2 * w + D : 0);
		p->shared_per_layer = 3 * D * (double)m->shared_ffn_width;
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

double model_kv_bytes_per_token_per_rank(const struct model *m, double kv_bytes_per_elem, int tp)
{
	if (m->mla || tp <= 1)
		return model_kv_bytes_per_token(m, kv_bytes_per_elem);
	double heads = floor((double)m->n_kv_heads / tp);
	return model_kv_bytes_per_token(m, kv_bytes_per_elem) * (heads < 1 ? 1 : heads) /
	       (double)m->n_kv_heads;
}
