#include "model.h"

#include <jansson.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "archdefaults.h"
#include "catalog.h"
#include "genconfig.h"
#include "gguf.h"
#include "jsonfile.h"
#include "modelname.h"

/* Reading fields: each helper names the file and the field on failure. */
struct reader {
	const char *path;
	json_t *cfg;     /* the text part: text_config when present */
	json_t *top;     /* the whole file */
	struct err *e;
	struct model *m; /* where defaults are recorded */
};

static json_t *field(const struct reader *r, const char *key)
{
	json_t *v = json_object_get(r->cfg, key);
	return json_is_null(v) ? NULL : v;
}

static int need_int(const struct reader *r, const char *key, int64_t *out)
{
	json_t *v = field(r, key);
	if (!v && r->m->defaults_from)
		return err_set(r->e, "%s: %s: missing; expected a positive integer (transformers' %s has no default for it)",
			       r->path, key, r->m->defaults_from);
	if (!v)
		return err_set(r->e, "%s: %s: missing; expected a positive integer (model_type '%s' has no transformers defaults in servesim: sim/model/archdefaults.c)",
			       r->path, key, r->m->model_type);
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
/* Records key = v as derived from other fields (archdefaults.h). */
static void note_derived(struct model *m, const char *key, int64_t v)
{
	json_t *j = json_integer(v);
	arch_note_default(m, key, j, true);
	json_decref(j);
}

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
	if (m->experts_per_token == 0 && !field(r, "num_experts_per_tok") && !field(r, "experts_per_token"))
		return err_set(r->e, "%s: num_experts_per_tok: missing; expected 1..%lld for %lld experts", r->path,
			       (long long)m->n_experts, (long long)m->n_experts);
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
	bool kv_given = false;
	for (const char *const *k = kv_keys; *k; k++)
		kv_given = kv_given || field(r, *k);
	if (first_int(r, kv_keys, &m->n_kv_heads))
		return -1;
	if (!kv_given)
		note_derived(m, "num_key_value_heads", m->n_kv_heads);
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
			note_derived(m, "head_dim", m->head_dim);
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
	if (q && !json_is_null(q) && !json_is_object(q))
		return err_set(r->e, "%s: quantization_config: expected an object (with quant_method)", r->path);
	const char *dkey = "torch_dtype";
	json_t *dt = field(r, dkey);
	if (!dt)
		dt = json_object_get(r->top, dkey);
	if (!dt)
		dt = field(r, dkey = "dtype");
	const char *dtype = json_string_value(dt);
	/* A dtype servesim does not know is an error, not bf16, unless the
	 * quantization_config says the precision. */
	if (dt && !json_is_null(dt) && !json_is_object(q) &&
	    (!dtype || (strcmp(dtype, "bfloat16") && strcmp(dtype, "float16") && strcmp(dtype, "float32"))))
		return err_set(r->e, "%s: %s: expected bfloat16, float16 or float32, got '%.40s'", r->path, dkey,
			       dtype ? dtype : "a value of another type");
	snprintf(m->weights, sizeof m->weights, "%s",
		 dtype && !strcmp(dtype, "float16") ? "fp16" : "bf16");
	if (!json_is_object(q))
		return 0;
	static const char methods[] = "fp8, fbgemm_fp8, mxfp4, awq, gptq, compressed-tensors, modelopt or bitsandbytes";
	const char *method = json_string_value(json_object_get(q, "quant_method"));
	if (!method)
		return err_set(r->e, "%s: quantization_config.quant_method: missing; expected %s", r->path, methods);
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
			if (nb == 8) {
				snprintf(m->weights, sizeof m->weights, "%s",
					 type && !strcmp(type, "float") ? "fp8" : "int8");
				const char *strat = json_string_value(json_object_get(w, "strategy"));
				json_t *block = json_object_get(w, "block_structure");
				m->quant_fp8_scaled = type && !strcmp(type, "float") && strat &&
						      (!strcmp(strat, "channel") || !strcmp(strat, "tensor")) &&
						      (!block || json_is_null(block));
			}
			else if (nb == 4)
				snprintf(m->weights, sizeof m->weights, "%s",
					 type && !strcmp(type, "float") ? "nvfp4" : "int4");
			break;
		}
	} else if (!strcasecmp(method, "modelopt")) {
		/* NVIDIA ModelOpt (hf_quant_config.json's quantization.quant_algo). */
		const char *algo = json_string_value(json_object_get(q, "quant_algo"));
		if (algo && !strcasecmp(algo, "NVFP4"))
			snprintf(m->weights, sizeof m->weights, "nvfp4");
		else if (algo && !strncasecmp(algo, "FP8", 3))
			snprintf(m->weights, sizeof m->weights, "fp8");
		else if (algo && strstr(algo, "W4A"))
			snprintf(m->weights, sizeof m->weights, "int4");
		else if (algo && strstr(algo, "W8A"))
			snprintf(m->weights, sizeof m->weights, "int8");
	} else if (!strcasecmp(method, "bitsandbytes")) {
		snprintf(m->weights, sizeof m->weights, "%s",
			 json_is_true(json_object_get(q, "load_in_8bit")) ? "int8" : "int4");
	} else {
		/* Its weight bytes would be a guess: say so rather than read bf16. */
		return err_set(r->e, "%s: quantization_config.quant_method: expected %s, got '%.40s'", r->path, methods,
			       method);
	}
	return 0;
}

/* Reads the model from a parsed config (top, borrowed). */
static int from_config(struct model *m, json_t *top, const char *path, struct err *e)
{
	if (!json_is_object(top))
		return err_set(e, "%s: expected a JSON object (a Hugging Face config.json)", path);
	struct reader r = { .path = path, .top = top, .cfg = top, .e = e, .m = m };
	json_t *text = json_object_get(top, "text_config");
	if (json_is_object(text))
		r.cfg = text;
	const char *type = opt_str(&r, "model_type");
	if (!type)
		type = json_string_value(json_object_get(top, "model_type"));
	snprintf(m->model_type, sizeof m->model_type, "%s", type ? type : "");
	/* A multimodal wrapper may state tie_word_embeddings at its top level
	 * only: that value is the config's, not a default to fill. */
	json_t *top_tie = json_object_get(top, "tie_word_embeddings");
	if (r.cfg != top && json_is_boolean(top_tie) && !json_object_get(r.cfg, "tie_word_embeddings"))
		json_object_set(r.cfg, "tie_word_embeddings", top_tie);
	if (arch_normalize(r.cfg, m->model_type, path, m, e))
		return -1;
	m->ffn_matrices = arch_ffn_matrices(m->model_type);

	if (need_int(&r, "num_hidden_layers", &m->n_layers) ||
	    need_int(&r, "hidden_size", &m->hidden) ||
	    need_int(&r, "vocab_size", &m->vocab) ||
	    need_int(&r, "intermediate_size", &m->dense_ffn_width))
		return -1;
	if (m->n_layers > MODEL_MAX_LAYERS)
		return err_set(e, "%s: num_hidden_layers: expected an integer from 1 to %d, got %lld", path, MODEL_MAX_LAYERS,
			       (long long)m->n_layers);
	/* Absent: 0, and the engines choose (vLLM's 4096 fallback); present,
	 * a context of 0 tokens is no context: an error, not the fallback. */
	m->max_position_embeddings = 0;
	if (field(&r, "max_position_embeddings") &&
	    need_int(&r, "max_position_embeddings", &m->max_position_embeddings))
		return -1;
	if (read_attention(&r, m) || read_moe(&r, m) || read_weights(&r, m) ||
	    read_rotary(&r, m) || read_vision(&r, m))
		return -1;
	json_t *cap = field(&r, "attn_logit_softcapping");
	m->attn_softcap = json_is_number(cap) ? json_number_value(cap) : 0;
	cap = field(&r, "final_logit_softcapping");
	m->final_softcap = json_is_number(cap) ? json_number_value(cap) : 0;
	json_t *tie = json_object_get(top, "tie_word_embeddings");
	if (!json_is_boolean(tie))
		tie = field(&r, "tie_word_embeddings");
	m->tie_embeddings = json_is_boolean(tie) ? json_is_true(tie) : default_tie(m);
	if (!json_is_boolean(tie)) {
		json_t *v = json_boolean(m->tie_embeddings);
		arch_note_default(m, "tie_word_embeddings", v, false);
		json_decref(v);
	}
	return 0;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);
	return n >= k && !strcasecmp(s + n - k, suffix);
}

/* A checkpoint whose quantization is in a file beside config.json, as vLLM
 * reads it (model_executor/model_loader/weight_utils.py get_quant_config):
 * NVIDIA ModelOpt's hf_quant_config.json ({producer: {name: modelopt},
 * quantization: {quant_algo}}) and AutoGPTQ's quantize_config.json
 * ({bits, group_size, …}). Sets top.quantization_config when the config
 * has none. Returns 0, or -1 with e for a sibling that does not parse. */
static int side_quant_config(json_t *top, const char *path, struct err *e)
{
	if (json_object_get(top, "quantization_config") || json_object_get(top, "compression_config"))
		return 0;
	const char *slash = strrchr(path, '/');
	static const char *const names[] = { "hf_quant_config.json", "quantize_config.json" };
	for (int i = 0; i < 2; i++) {
		char side[4096];
		snprintf(side, sizeof side, "%.*s%s", slash ? (int)(slash - path + 1) : 0, path, names[i]);
		if (!catalog_is_file(side))
			continue;
		json_error_t je;
		json_t *j = json_load_file(side, JSON_REJECT_DUPLICATES, &je);
		if (!json_is_object(j)) {
			json_decref(j);
			return err_set(e, "%s:%d:%d: expected a JSON object (%s)", side, je.line, je.column, je.text);
		}
		json_t *q;
		if (i == 0) {
			const char *algo = json_string_value(json_object_get(json_object_get(j, "quantization"), "quant_algo"));
			q = json_pack("{s:s, s:s}", "quant_method", "modelopt", "quant_algo", algo ? algo : "");
		} else {
			q = json_deep_copy(j);
			if (!json_object_get(q, "quant_method"))
				json_object_set_new(q, "quant_method", json_string("gptq"));
		}
		json_object_set_new(top, "quantization_config", q);
		json_decref(j);
		return 0;
	}
	return 0;
}

int model_load(struct model *m, const char *path, struct err *e)
{
	memset(m, 0, sizeof *m);
	catalog_id_of(path, m->id, sizeof m->id);
	genconfig_none(&m->gen);
	if (ends_with(path, ".gguf")) {
		/* A GGUF file: its header as a config, its tensors' types as the
		 * stored precision. */
		json_t *cfg;
		struct gguf_weights w;
		if (gguf_to_config(path, &cfg, &w, e))
			return -1;
		char *dot = strrchr(m->id, '.');
		if (dot && !strcasecmp(dot, ".gguf"))
			*dot = '\0';
		int rc = from_config(m, cfg, path, e);
		json_decref(cfg);
		if (rc == 0) {
			snprintf(m->weights, sizeof m->weights, "%s", w.precision);
			m->file_weight_bytes = w.tensor_bytes;
		}
		return rc;
	}
	json_t *top = jsonfile_load(path, JSON_REJECT_DUPLICATES, e);
	if (!top)
		return -1;
	if (json_is_object(top) && side_quant_config(top, path, e)) {
		json_decref(top);
		return -1;
	}
	int rc = from_config(m, top, path, e);
	json_decref(top);
	char gen[4096];
	if (rc == 0 && genconfig_path(path, gen, sizeof gen) == 0)
		rc = genconfig_load(&m->gen, gen, e);
	return rc;
}

int model_load_named(struct model *m, const char *name, struct err *e)
{
	struct modelname mn;
	if (modelname_resolve(name, &mn, e) || model_load(m, mn.path, e))
		return -1;
	/* The id people gave (an HF cache snapshot's file is config.json). */
	if (mn.id[0])
		snprintf(m->id, sizeof m->id, "%s", mn.id);
	if (mn.weights[0])
		snprintf(m->weights, sizeof m->weights, "%s", mn.weights);
	return 0;
}

void model_defaults_text(const struct model *m, bool derived, char *buf, size_t n)
{
	size_t len = 0;
	buf[0] = '\0';
	for (int i = 0; i < m->n_defaulted && len < n; i++) {
		const struct model_default *d = &m->defaulted[i];
		if (d->derived != derived)
			continue;
		int k = snprintf(buf + len, n - len, "%s%s=%s", len ? ", " : "", d->key, d->value);
		len += k > 0 ? (size_t)k : 0;
	}
}
