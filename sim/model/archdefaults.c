#include "archdefaults.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One architecture: its transformers config class and that class's
 * defaults (a JSON object: the __init__ / dataclass defaults of the fields
 * servesim reads), its field aliases (attribute_map: "theirs=ours,…"),
 * whether its MLP is gated, and a hook for defaults that follow from
 * other fields. */
struct arch {
	const char *model_type;
	const char *config_class;
	const char *defaults;
	const char *aliases;
	int ffn_matrices;
	int (*derive)(json_t *cfg, struct model *m, const char *path, struct err *e);
};

static json_int_t get_int(json_t *cfg, const char *key)
{
	return json_integer_value(json_object_get(cfg, key));
}

void arch_note_default(struct model *m, const char *key, const json_t *value, bool derived)
{
	if (m->n_defaulted >= MODEL_MAX_DEFAULTS)
		return;
	struct model_default *d = &m->defaulted[m->n_defaulted++];
	snprintf(d->key, sizeof d->key, "%s", key);
	d->derived = derived;
	if (json_is_array(value)) {
		snprintf(d->value, sizeof d->value, "[%zu entries]", json_array_size(value));
		return;
	}
	char *text = json_dumps(value, JSON_ENCODE_ANY | JSON_REAL_PRECISION(10));
	snprintf(d->value, sizeof d->value, "%s", text ? text : "?");
	free(text);
}

/* Sets key to v (stolen) and records it as derived from other fields. */
static void derive_set(json_t *cfg, struct model *m, const char *key, json_t *v)
{
	arch_note_default(m, key, v, true);
	json_object_set_new(cfg, key, v);
}

/* 4 × hidden_size as a default MLP width, or NULL when hidden_size is not
 * an integer the loader will accept (it then names hidden_size itself;
 * 4 × a 64-bit value typed there could overflow). */
static json_t *four_times_hidden(json_t *cfg)
{
	json_t *h = json_object_get(cfg, "hidden_size");
	if (!json_is_integer(h) || json_integer_value(h) <= 0 || json_integer_value(h) > INT32_MAX)
		return NULL;
	return json_integer(4 * json_integer_value(h));
}

/* GPT2Config: n_inner = None means 4 * n_embd (modeling_gpt2.py GPT2Block);
 * GPT-J's and BLOOM's MLPs are 4 × hidden the same way. */
static int derive_gpt2(json_t *cfg, struct model *m, const char *path, struct err *e)
{
	(void)path, (void)e;
	json_t *four = four_times_hidden(cfg);
	if (!json_is_integer(json_object_get(cfg, "intermediate_size")) && four)
		derive_set(cfg, m, "intermediate_size", four);
	else
		json_decref(four);
	return 0;
}

/* FalconConfig: ffn_hidden_size = None means 4 * hidden_size; KV heads are
 * num_kv_heads with new_decoder_architecture, else 1 with multi_query, else
 * one per attention head (modeling_falcon.py FalconAttention). */
static int derive_falcon(json_t *cfg, struct model *m, const char *path, struct err *e)
{
	(void)path, (void)e;
	json_t *ffn = json_object_get(cfg, "ffn_hidden_size");
	if (!json_is_integer(json_object_get(cfg, "intermediate_size"))) {
		json_t *four = four_times_hidden(cfg);
		if (json_is_integer(ffn))
			json_object_set(cfg, "intermediate_size", ffn);
		else if (four)
			derive_set(cfg, m, "intermediate_size", json_incref(four));
		json_decref(four);
	}
	json_int_t heads = get_int(cfg, "num_attention_heads");
	json_int_t kv = heads;
	json_t *n = json_object_get(cfg, "num_kv_heads");
	if (json_is_true(json_object_get(cfg, "new_decoder_architecture")))
		kv = json_is_integer(n) ? json_integer_value(n) : heads;
	else if (json_is_true(json_object_get(cfg, "multi_query")))
		kv = 1;
	bool stated = json_is_integer(n) && json_is_true(json_object_get(cfg, "new_decoder_architecture"));
	json_object_del(cfg, "num_kv_heads");
	if (stated)
		json_object_set_new(cfg, "num_key_value_heads", json_integer(kv));
	else
		derive_set(cfg, m, "num_key_value_heads", json_integer(kv));
	json_object_set_new(cfg, "attention_bias", json_boolean(json_is_true(json_object_get(cfg, "bias"))));
	return 0;
}

/* Gemma 3: every sliding_window_pattern-th layer is global, the others
 * slide (Gemma3TextConfig: layer_types from sliding_window_pattern = 6 when
 * the config does not list them). */
static int derive_gemma3(json_t *cfg, struct model *m, const char *path, struct err *e)
{
	(void)path, (void)e;
	if (json_is_array(json_object_get(cfg, "layer_types")))
		return 0;
	json_int_t n = get_int(cfg, "num_hidden_layers"), pattern = get_int(cfg, "sliding_window_pattern");
	if (pattern <= 0)
		pattern = 6;
	if (n <= 0 || n > MODEL_MAX_LAYERS)
		return 0;   /* the loader names num_hidden_layers */
	json_t *types = json_array();
	for (json_int_t i = 0; i < n; i++)
		json_array_append_new(types, json_string((i + 1) % pattern ? "sliding_attention" : "full_attention"));
	derive_set(cfg, m, "layer_types", types);
	return 0;
}

/* GPTJConfig: n_inner = None is 4 × n_embd, as GPT-2's; rotary_dim (64)
 * of each head's n_embd / n_head dimensions turn (modeling_gptj.py
 * GPTJAttention), which servesim reads as partial_rotary_factor. */
static int derive_gptj(json_t *cfg, struct model *m, const char *path, struct err *e)
{
	derive_gpt2(cfg, m, path, e);
	json_int_t hidden = get_int(cfg, "hidden_size"), heads = get_int(cfg, "num_attention_heads");
	json_int_t rot = get_int(cfg, "rotary_dim");
	if (!json_object_get(cfg, "partial_rotary_factor") && heads > 0 && hidden % heads == 0 && rot > 0 &&
	    rot <= hidden / heads)
		derive_set(cfg, m, "partial_rotary_factor", json_real((double)rot / (double)(hidden / heads)));
	return 0;
}

/* Sorted by model_type. Each row's defaults are its config class's, from
 * the transformers file named beside it (src/transformers/models/…,
 * v4.5x-v5: the same values in the __init__ signatures of v4 and the
 * dataclass fields of v5; read at huggingface/transformers commit
 * 008e5743 unless the row names another). Only fields servesim reads are
 * listed; a field the class has no default for stays required and its
 * absence is the loader's one-line error. attention_bias is servesim's
 * name for the q/k/v biases a class always has (GPT-2, BLOOM, Phi) or
 * switches with its own flag (OPT's enable_bias, StarCoder2's use_bias,
 * GPT-NeoX's attention_bias). */
static const struct arch archs[] = {
	/* bloom/configuration_bloom.py (a 2-layer, 64-wide test size: vocab
	 * 250880, hidden_size 64, n_layer 2, n_head 8; n_embed is the old
	 * name of hidden_size, __post_init__). ALiBi: no
	 * max_position_embeddings, so the engine chooses (vLLM's fallback). */
	{ "bloom", "BloomConfig",
	  "{\"vocab_size\":250880,\"hidden_size\":64,\"num_hidden_layers\":2,\"num_attention_heads\":8,"
	  "\"attention_bias\":true,\"tie_word_embeddings\":true}",
	  "n_embed=hidden_size,n_layer=num_hidden_layers,n_head=num_attention_heads", 2, derive_gpt2 },
	/* deepseek_v2/configuration_deepseek_v2.py (DeepSeek-V2-Lite style;
	 * num_experts_per_tok has no default: None there, required here) */
	{ "deepseek_v2", "DeepseekV2Config",
	  "{\"vocab_size\":32000,\"hidden_size\":4096,\"intermediate_size\":11008,\"num_hidden_layers\":32,"
	  "\"num_attention_heads\":32,\"max_position_embeddings\":2048,\"tie_word_embeddings\":false,"
	  "\"first_k_dense_replace\":0,\"kv_lora_rank\":512,\"q_lora_rank\":1536,\"n_routed_experts\":64,"
	  "\"n_shared_experts\":2,\"qk_nope_head_dim\":128,\"qk_rope_head_dim\":64,\"v_head_dim\":128,"
	  "\"moe_intermediate_size\":1407}",
	  "", 3, NULL },
	/* deepseek_v3/configuration_deepseek_v3.py (DeepSeek-V3 671B) */
	{ "deepseek_v3", "DeepseekV3Config",
	  "{\"vocab_size\":129280,\"hidden_size\":7168,\"intermediate_size\":18432,\"moe_intermediate_size\":2048,"
	  "\"num_hidden_layers\":61,\"num_attention_heads\":128,\"num_key_value_heads\":128,"
	  "\"n_shared_experts\":1,\"n_routed_experts\":256,\"kv_lora_rank\":512,\"q_lora_rank\":1536,"
	  "\"qk_rope_head_dim\":64,\"v_head_dim\":128,\"qk_nope_head_dim\":128,\"num_experts_per_tok\":8,"
	  "\"first_k_dense_replace\":3,\"max_position_embeddings\":4096,\"tie_word_embeddings\":false}",
	  "", 3, NULL },
	/* falcon/configuration_falcon.py (Falcon-7B; max_position_embeddings
	 * from v4.35 on) */
	{ "falcon", "FalconConfig",
	  "{\"vocab_size\":65024,\"hidden_size\":4544,\"num_hidden_layers\":32,\"num_attention_heads\":71,"
	  "\"max_position_embeddings\":2048,\"multi_query\":true,\"tie_word_embeddings\":true}",
	  "n_layer=num_hidden_layers,n_head=num_attention_heads,n_head_kv=num_kv_heads", 2, derive_falcon },
	/* gemma/configuration_gemma.py (gemma-7b) */
	{ "gemma", "GemmaConfig",
	  "{\"vocab_size\":256000,\"hidden_size\":3072,\"intermediate_size\":24576,\"num_hidden_layers\":28,"
	  "\"num_attention_heads\":16,\"num_key_value_heads\":16,\"head_dim\":256,"
	  "\"max_position_embeddings\":8192,\"tie_word_embeddings\":true}",
	  "", 3, NULL },
	/* gemma2/configuration_gemma2.py (gemma-2-2b dimensions) */
	{ "gemma2", "Gemma2Config",
	  "{\"vocab_size\":256000,\"hidden_size\":2304,\"intermediate_size\":9216,\"num_hidden_layers\":26,"
	  "\"num_attention_heads\":8,\"num_key_value_heads\":4,\"head_dim\":256,"
	  "\"max_position_embeddings\":8192,\"sliding_window\":4096,\"attn_logit_softcapping\":50.0,"
	  "\"final_logit_softcapping\":30.0,\"tie_word_embeddings\":true}",
	  "", 3, NULL },
	/* gemma3/configuration_gemma3.py, Gemma3TextConfig. Gemma 3's
	 * multimodal checkpoints (gemma-3-4b-it) publish a text_config without
	 * heads or vocab and rely on these. */
	{ "gemma3_text", "Gemma3TextConfig",
	  "{\"vocab_size\":262208,\"hidden_size\":2304,\"intermediate_size\":9216,\"num_hidden_layers\":26,"
	  "\"num_attention_heads\":8,\"num_key_value_heads\":4,\"head_dim\":256,"
	  "\"max_position_embeddings\":131072,\"sliding_window\":4096,\"tie_word_embeddings\":true}",
	  "", 3, derive_gemma3 },
	/* gpt2/configuration_gpt2.py (the 124M GPT-2) */
	{ "gpt2", "GPT2Config",
	  "{\"vocab_size\":50257,\"hidden_size\":768,\"num_hidden_layers\":12,\"num_attention_heads\":12,"
	  "\"max_position_embeddings\":1024,\"attention_bias\":true,\"tie_word_embeddings\":true}",
	  "n_embd=hidden_size,n_layer=num_hidden_layers,n_head=num_attention_heads,n_positions=max_position_embeddings,"
	  "n_inner=intermediate_size",
	  2, derive_gpt2 },
	/* gpt_neox/configuration_gpt_neox.py (gpt-neox-20b: vocab 50432,
	 * hidden 6144, 44 layers, 64 heads, intermediate 24576; rotary_pct
	 * 0.25 in convert_rope_params_to_dict) */
	{ "gpt_neox", "GPTNeoXConfig",
	  "{\"vocab_size\":50432,\"hidden_size\":6144,\"num_hidden_layers\":44,\"num_attention_heads\":64,"
	  "\"intermediate_size\":24576,\"max_position_embeddings\":2048,\"partial_rotary_factor\":0.25,"
	  "\"attention_bias\":true,\"tie_word_embeddings\":false}",
	  "rotary_pct=partial_rotary_factor", 2, NULL },
	/* gptj/configuration_gptj.py (gpt-j-6B: vocab 50400, n_positions
	 * 2048, n_embd 4096, n_layer 28, n_head 16, rotary_dim 64; no
	 * attention bias, modeling_gptj.py) */
	{ "gptj", "GPTJConfig",
	  "{\"vocab_size\":50400,\"hidden_size\":4096,\"num_hidden_layers\":28,\"num_attention_heads\":16,"
	  "\"rotary_dim\":64,\"max_position_embeddings\":2048,\"tie_word_embeddings\":false}",
	  "n_embd=hidden_size,n_layer=num_hidden_layers,n_head=num_attention_heads,n_positions=max_position_embeddings,"
	  "n_inner=intermediate_size",
	  2, derive_gptj },
	/* llama/configuration_llama.py (Llama-2-7B) */
	{ "llama", "LlamaConfig",
	  "{\"vocab_size\":32000,\"hidden_size\":4096,\"intermediate_size\":11008,\"num_hidden_layers\":32,"
	  "\"num_attention_heads\":32,\"max_position_embeddings\":2048,\"tie_word_embeddings\":false}",
	  "", 3, NULL },
	/* mistral/configuration_mistral.py (Mistral-7B-v0.1: a 4096-token
	 * window on every layer unless the config says null) */
	{ "mistral", "MistralConfig",
	  "{\"vocab_size\":32000,\"hidden_size\":4096,\"intermediate_size\":14336,\"num_hidden_layers\":32,"
	  "\"num_attention_heads\":32,\"num_key_value_heads\":8,\"max_position_embeddings\":131072,"
	  "\"sliding_window\":4096,\"tie_word_embeddings\":false}",
	  "", 3, NULL },
	/* mixtral/configuration_mixtral.py (Mixtral-8x7B; no window) */
	{ "mixtral", "MixtralConfig",
	  "{\"vocab_size\":32000,\"hidden_size\":4096,\"intermediate_size\":14336,\"num_hidden_layers\":32,"
	  "\"num_attention_heads\":32,\"num_key_value_heads\":8,\"max_position_embeddings\":131072,"
	  "\"num_experts_per_tok\":2,\"num_local_experts\":8,\"tie_word_embeddings\":false}",
	  "", 3, NULL },
	/* opt/configuration_opt.py (documented as opt-350m, but the
	 * dimensions are opt-125m's: vocab 50272, hidden 768, 12 layers, 12
	 * heads, ffn_dim 3072; enable_bias True) */
	{ "opt", "OPTConfig",
	  "{\"vocab_size\":50272,\"hidden_size\":768,\"num_hidden_layers\":12,\"num_attention_heads\":12,"
	  "\"intermediate_size\":3072,\"max_position_embeddings\":2048,\"attention_bias\":true,"
	  "\"tie_word_embeddings\":true}",
	  "ffn_dim=intermediate_size,enable_bias=attention_bias", 2, NULL },
	/* phi/configuration_phi.py (phi-1: vocab 51200, hidden 2048,
	 * intermediate 8192, 24 layers, 32 heads, KV heads = heads,
	 * partial_rotary_factor 0.5 in __post_init__; biased q/k/v) */
	{ "phi", "PhiConfig",
	  "{\"vocab_size\":51200,\"hidden_size\":2048,\"intermediate_size\":8192,\"num_hidden_layers\":24,"
	  "\"num_attention_heads\":32,\"max_position_embeddings\":2048,\"partial_rotary_factor\":0.5,"
	  "\"attention_bias\":true,\"tie_word_embeddings\":false}",
	  "", 2, NULL },
	/* phi3/configuration_phi3.py (Phi-3-mini-4k) */
	{ "phi3", "Phi3Config",
	  "{\"vocab_size\":32064,\"hidden_size\":3072,\"intermediate_size\":8192,\"num_hidden_layers\":32,"
	  "\"num_attention_heads\":32,\"max_position_embeddings\":4096,\"tie_word_embeddings\":false}",
	  "", 3, NULL },
	/* qwen2/configuration_qwen2.py (Qwen2-7B; 32 KV heads, not
	 * num_attention_heads; the window only with use_sliding_window) */
	{ "qwen2", "Qwen2Config",
	  "{\"vocab_size\":151936,\"hidden_size\":4096,\"intermediate_size\":22016,\"num_hidden_layers\":32,"
	  "\"num_attention_heads\":32,\"num_key_value_heads\":32,\"max_position_embeddings\":32768,"
	  "\"use_sliding_window\":false,\"max_window_layers\":28,\"tie_word_embeddings\":false}",
	  "", 3, NULL },
	/* qwen2_moe/configuration_qwen2_moe.py (Qwen1.5-MoE-A2.7B) */
	{ "qwen2_moe", "Qwen2MoeConfig",
	  "{\"vocab_size\":151936,\"hidden_size\":2048,\"intermediate_size\":5632,\"num_hidden_layers\":24,"
	  "\"num_attention_heads\":16,\"num_key_value_heads\":16,\"max_position_embeddings\":32768,"
	  "\"use_sliding_window\":false,\"max_window_layers\":28,\"decoder_sparse_step\":1,"
	  "\"moe_intermediate_size\":1408,\"shared_expert_intermediate_size\":5632,\"num_experts_per_tok\":4,"
	  "\"num_experts\":60,\"tie_word_embeddings\":false}",
	  "", 3, NULL },
	/* qwen3/configuration_qwen3.py (Qwen3-8B style; head_dim 128) */
	{ "qwen3", "Qwen3Config",
	  "{\"vocab_size\":151936,\"hidden_size\":4096,\"intermediate_size\":22016,\"num_hidden_layers\":32,"
	  "\"num_attention_heads\":32,\"num_key_value_heads\":32,\"head_dim\":128,"
	  "\"max_position_embeddings\":32768,\"use_sliding_window\":false,\"max_window_layers\":28,"
	  "\"tie_word_embeddings\":false}",
	  "", 3, NULL },
	/* qwen3_moe/configuration_qwen3_moe.py (Qwen3-30B-A3B style; no
	 * head_dim field: hidden_size / num_attention_heads) */
	{ "qwen3_moe", "Qwen3MoeConfig",
	  "{\"vocab_size\":151936,\"hidden_size\":2048,\"intermediate_size\":6144,\"num_hidden_layers\":24,"
	  "\"num_attention_heads\":32,\"num_key_value_heads\":4,\"max_position_embeddings\":32768,"
	  "\"use_sliding_window\":false,\"decoder_sparse_step\":1,\"moe_intermediate_size\":768,"
	  "\"num_experts_per_tok\":8,\"num_experts\":128,\"tie_word_embeddings\":false}",
	  "", 3, NULL },
	/* starcoder2/configuration_starcoder2.py (starcoder2-7b: vocab 49152,
	 * hidden 3072, intermediate 12288, 30 layers, 24 heads, 2 KV heads;
	 * use_bias True; sliding_window None: no window) */
	{ "starcoder2", "Starcoder2Config",
	  "{\"vocab_size\":49152,\"hidden_size\":3072,\"intermediate_size\":12288,\"num_hidden_layers\":30,"
	  "\"num_attention_heads\":24,\"num_key_value_heads\":2,\"max_position_embeddings\":4096,"
	  "\"attention_bias\":true,\"tie_word_embeddings\":true}",
	  "use_bias=attention_bias", 2, NULL },
};

static const struct arch *find_arch(const char *model_type)
{
	for (size_t i = 0; i < sizeof archs / sizeof *archs; i++)
		if (!strcmp(archs[i].model_type, model_type))
			return &archs[i];
	return NULL;
}

int arch_ffn_matrices(const char *model_type)
{
	const struct arch *a = find_arch(model_type);
	return a ? a->ffn_matrices : 3;
}

/* Hybrid models by model_type, with what their non-attention layers are. */
static const struct {
	const char *model_type, *layers;
} hybrids[] = {
	{ "bamba", "Mamba-2" }, { "falcon_h1", "Mamba-2" }, { "granitemoehybrid", "Mamba-2" },
	{ "jamba", "Mamba" }, { "kimi_linear", "linear attention (KDA)" }, { "lfm2", "short convolution" },
	{ "mamba", "Mamba" }, { "mamba2", "Mamba-2" }, { "minimax", "lightning (linear) attention" },
	{ "minimax_m1", "lightning (linear) attention" }, { "nemotron_h", "Mamba-2" },
	{ "plamo2", "Mamba" }, { "qwen3_next", "gated delta-net (linear attention)" },
	{ "recurrent_gemma", "RG-LRU recurrence" }, { "rwkv", "RWKV recurrence" }, { "zamba", "Mamba" },
	{ "zamba2", "Mamba-2" },
};

/* Counts layers whose layer_types (or layers_block_type) entry is not an
 * attention layer; -1 when the config lists none. */
static int non_attention_layers(json_t *cfg, int *total)
{
	static const char *const keys[] = { "layer_types", "layers_block_type", NULL };
	for (const char *const *k = keys; *k; k++) {
		json_t *types = json_object_get(cfg, *k);
		if (!json_is_array(types))
			continue;
		int n = 0;
		size_t i;
		json_t *v;
		json_array_foreach(types, i, v) {
			const char *s = json_string_value(v);
			if (s && !strstr(s, "attention") && strcmp(s, "attn"))
				n++;
			else if (s && strstr(s, "linear"))
				n++;
		}
		*total = (int)json_array_size(types);
		return n;
	}
	return -1;
}

static int refuse_hybrid(json_t *cfg, const char *model_type, const char *path, struct err *e)
{
	const char *what = NULL;
	for (size_t i = 0; i < sizeof hybrids / sizeof *hybrids; i++)
		if (!strcmp(hybrids[i].model_type, model_type))
			what = hybrids[i].layers;
	int total = 0, n = non_attention_layers(cfg, &total);
	if (!what && n <= 0)
		return 0;
	/* Qwen3-Next lists no layer_types: every full_attention_interval-th
	 * layer is attention (configuration_qwen3_next.py). */
	json_int_t layers = get_int(cfg, "num_hidden_layers"), interval = get_int(cfg, "full_attention_interval");
	if (n < 0 && interval > 0 && layers > 0 && layers <= MODEL_MAX_LAYERS) {
		total = (int)layers;
		n = (int)(layers - layers / interval);
	}
	char count[96] = "";
	if (n > 0)
		snprintf(count, sizeof count, " (%d of %d layers)", n, total);
	return err_set(e, "%s: model_type %s is a hybrid model: its %s layers%s keep a fixed-size recurrent state, "
			  "not a KV cache; servesim sizes KV caches for attention only and refuses it rather than "
			  "size every layer as full attention",
		       path, model_type[0] ? model_type : "(none)", what ? what : "non-attention", count);
}

int arch_normalize(json_t *cfg, const char *model_type, const char *path, struct model *m, struct err *e)
{
	if (refuse_hybrid(cfg, model_type, path, e))
		return -1;
	const struct arch *a = find_arch(model_type);
	if (!a)
		return 0;
	m->defaults_from = a->config_class;
	/* Aliases first: an explicit field under either name beats the default. */
	char buf[512];
	snprintf(buf, sizeof buf, "%s", a->aliases);
	char *save = NULL;
	for (char *pair = strtok_r(buf, ",", &save); pair; pair = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(pair, '=');
		*eq = '\0';
		json_t *v = json_object_get(cfg, pair);
		if (!v || json_is_null(v))
			continue;
		json_t *ours = json_object_get(cfg, eq + 1);
		if (ours && !json_is_null(ours) && !json_equal(ours, v))
			return err_set(e, "%s: %s and %s: both given, with different values", path, pair, eq + 1);
		json_object_set(cfg, eq + 1, v);
	}
	/* An absent field takes the class default; so does a null one, as
	 * transformers' None-means-default fields do, except sliding_window,
	 * where null is "no window" (Mistral v0.3's published config). */
	json_t *d = json_loads(a->defaults, 0, NULL);
	const char *k;
	json_t *v;
	json_object_foreach(d, k, v) {
		json_t *have = json_object_get(cfg, k);
		if (!have || (json_is_null(have) && strcmp(k, "sliding_window"))) {
			json_object_set(cfg, k, v);
			/* GPT-2's attention_bias is servesim's name for biases the
			 * class always has, not one of its fields. */
			if (strcmp(k, "attention_bias"))
				arch_note_default(m, k, v, false);
		}
	}
	json_decref(d);
	return a->derive ? a->derive(cfg, m, path, e) : 0;
}
