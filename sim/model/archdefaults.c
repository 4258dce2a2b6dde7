#include "archdefaults.h"

#include <stdio.h>
#include <string.h>

/* One architecture: its transformers config class's defaults (a JSON
 * object, the class's __init__ defaults), its field aliases
 * (attribute_map: "theirs=ours,…"), whether its MLP is gated, and a hook
 * for defaults that follow from other fields. */
struct arch {
	const char *model_type;
	const char *defaults;
	const char *aliases;
	int ffn_matrices;
	int (*derive)(json_t *cfg, const char *path, struct err *e);
};

static json_int_t get_int(json_t *cfg, const char *key)
{
	return json_integer_value(json_object_get(cfg, key));
}

/* GPT2Config: n_inner = None means 4 * n_embd (modeling_gpt2.py GPT2Block);
 * GPT-J's and BLOOM's MLPs are 4 × hidden the same way. */
static int derive_gpt2(json_t *cfg, const char *path, struct err *e)
{
	(void)path, (void)e;
	json_t *inner = json_object_get(cfg, "intermediate_size");
	if (!json_is_integer(inner))
		json_object_set_new(cfg, "intermediate_size", json_integer(4 * get_int(cfg, "hidden_size")));
	return 0;
}

/* FalconConfig: ffn_hidden_size = None means 4 * hidden_size; KV heads are
 * num_kv_heads with new_decoder_architecture, else 1 with multi_query, else
 * one per attention head (modeling_falcon.py FalconAttention). */
static int derive_falcon(json_t *cfg, const char *path, struct err *e)
{
	(void)path, (void)e;
	json_t *ffn = json_object_get(cfg, "ffn_hidden_size");
	if (!json_is_integer(json_object_get(cfg, "intermediate_size")))
		json_object_set_new(cfg, "intermediate_size",
				    json_is_integer(ffn) ? json_incref(ffn) :
							   json_integer(4 * get_int(cfg, "hidden_size")));
	json_int_t heads = get_int(cfg, "num_attention_heads");
	json_int_t kv = heads;
	if (json_is_true(json_object_get(cfg, "new_decoder_architecture"))) {
		json_t *n = json_object_get(cfg, "num_kv_heads");
		kv = json_is_integer(n) ? json_integer_value(n) : heads;
	} else if (json_is_true(json_object_get(cfg, "multi_query"))) {
		kv = 1;
	}
	json_object_del(cfg, "num_kv_heads");
	json_object_set_new(cfg, "num_key_value_heads", json_integer(kv));
	json_object_set_new(cfg, "attention_bias", json_boolean(json_is_true(json_object_get(cfg, "bias"))));
	return 0;
}

/* Gemma 3: every sliding_window_pattern-th layer is global, the others
 * slide (Gemma3TextConfig: layer_types from sliding_window_pattern = 6 when
 * the config does not list them). */
static int derive_gemma3(json_t *cfg, const char *path, struct err *e)
{
	(void)path, (void)e;
	if (json_is_array(json_object_get(cfg, "layer_types")))
		return 0;
	json_int_t n = get_int(cfg, "num_hidden_layers"), pattern = get_int(cfg, "sliding_window_pattern");
	if (pattern <= 0)
		pattern = 6;
	json_t *types = json_array();
	for (json_int_t i = 0; i < n; i++)
		json_array_append_new(types, json_string((i + 1) % pattern ? "sliding_attention" : "full_attention"));
	json_object_set_new(cfg, "layer_types", types);
	return 0;
}

/* Sorted by model_type. Defaults from transformers'
 * models/<type>/configuration_<type>.py (v4.5x). The core dimensions
 * (vocab_size, hidden_size, num_hidden_layers, num_attention_heads,
 * intermediate_size) are left out on purpose: every published config
 * states them, and a config without one is truncated, not a 7B-era
 * default model, so the loader names the missing field instead. */
static const struct arch archs[] = {
	{ "bloom", "{\"tie_word_embeddings\":true}", "n_layer=num_hidden_layers,n_head=num_attention_heads", 2,
	  derive_gpt2 },
	{ "falcon",
	  "{"
	  "\"max_position_embeddings\":2048,\"multi_query\":true,\"tie_word_embeddings\":true}",
	  "n_layer=num_hidden_layers,n_head=num_attention_heads,n_head_kv=num_kv_heads", 2, derive_falcon },
	{ "gemma",
	  "{\"num_key_value_heads\":16,"
	  "\"head_dim\":256,\"max_position_embeddings\":8192,"
	  "\"tie_word_embeddings\":true}",
	  "", 3, NULL },
	{ "gemma2",
	  "{\"num_key_value_heads\":4,"
	  "\"head_dim\":256,\"max_position_embeddings\":8192,"
	  "\"sliding_window\":4096,\"attn_logit_softcapping\":50.0,\"final_logit_softcapping\":30.0,"
	  "\"tie_word_embeddings\":true}",
	  "", 3, NULL },
	/* Gemma 3's multimodal checkpoints (gemma-3-4b-it) publish a
	 * text_config without heads or vocab: Gemma3TextConfig's 8 heads and
	 * 262,208 tokens stand, the one family whose core fields are defaulted
	 * because its own published configs rely on them. */
	{ "gemma3_text",
	  "{\"num_attention_heads\":8,\"vocab_size\":262208,\"num_key_value_heads\":4,"
	  "\"head_dim\":256,\"max_position_embeddings\":131072,"
	  "\"sliding_window\":4096,\"tie_word_embeddings\":true}",
	  "", 3, derive_gemma3 },
	{ "gpt2",
	  "{\"max_position_embeddings\":1024,"
	  "\"attention_bias\":true,\"tie_word_embeddings\":true}",
	  "n_embd=hidden_size,n_layer=num_hidden_layers,n_head=num_attention_heads,n_positions=max_position_embeddings,"
	  "n_inner=intermediate_size",
	  2, derive_gpt2 },
	{ "gpt_neox", "{\"max_position_embeddings\":2048,\"partial_rotary_factor\":0.25,\"tie_word_embeddings\":false}",
	  "rotary_pct=partial_rotary_factor", 2, NULL },
	{ "gptj", "{\"max_position_embeddings\":2048,\"tie_word_embeddings\":false}",
	  "n_embd=hidden_size,n_layer=num_hidden_layers,n_head=num_attention_heads,n_positions=max_position_embeddings,"
	  "n_inner=intermediate_size",
	  2, derive_gpt2 },
	{ "llama",
	  "{"
	  "\"max_position_embeddings\":2048,\"tie_word_embeddings\":false}",
	  "", 3, NULL },
	{ "mistral",
	  "{"
	  "\"max_position_embeddings\":131072,"
	  "\"tie_word_embeddings\":false}",
	  "", 3, NULL },
	{ "opt", "{\"max_position_embeddings\":2048,\"tie_word_embeddings\":true}", "ffn_dim=intermediate_size", 2,
	  NULL },
	{ "phi", "{\"max_position_embeddings\":2048,\"partial_rotary_factor\":0.5,\"tie_word_embeddings\":false}", "",
	  2, NULL },
	{ "phi3",
	  "{"
	  "\"max_position_embeddings\":4096,\"tie_word_embeddings\":false}",
	  "", 3, NULL },
	{ "qwen2",
	  "{"
	  "\"max_position_embeddings\":32768,"
	  "\"tie_word_embeddings\":false}",
	  "", 3, NULL },
	{ "qwen3",
	  "{"
	  "\"head_dim\":128,\"max_position_embeddings\":32768,"
	  "\"tie_word_embeddings\":false}",
	  "", 3, NULL },
	{ "starcoder2", "{\"max_position_embeddings\":4096}", "", 2, NULL },
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
	if (n < 0 && interval > 0 && layers > 0) {
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

int arch_normalize(json_t *cfg, const char *model_type, const char *path, struct err *e)
{
	if (refuse_hybrid(cfg, model_type, path, e))
		return -1;
	const struct arch *a = find_arch(model_type);
	if (!a)
		return 0;
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
	json_t *d = json_loads(a->defaults, 0, NULL);
	const char *k;
	json_t *v;
	json_object_foreach(d, k, v) {
		json_t *have = json_object_get(cfg, k);
		if (!have || json_is_null(have))
			json_object_set(cfg, k, v);
	}
	json_decref(d);
	return a->derive ? a->derive(cfg, path, e) : 0;
}
