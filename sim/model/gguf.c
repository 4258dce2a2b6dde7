#include "gguf.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "xalloc.h"

/* ggml_type: name, elements per block, bytes per block
 * (gguf-py/gguf/constants.py GGMLQuantizationType and GGML_QUANT_SIZES;
 * the gaps are types llama.cpp removed). */
static const struct {
	const char *name;
	int block, bytes;
} types[GGUF_N_TYPES] = {
	[0] = { "F32", 1, 4 },        [1] = { "F16", 1, 2 },        [2] = { "Q4_0", 32, 18 },
	[3] = { "Q4_1", 32, 20 },     [6] = { "Q5_0", 32, 22 },     [7] = { "Q5_1", 32, 24 },
	[8] = { "Q8_0", 32, 34 },     [9] = { "Q8_1", 32, 40 },     [10] = { "Q2_K", 256, 84 },
	[11] = { "Q3_K", 256, 110 },  [12] = { "Q4_K", 256, 144 },  [13] = { "Q5_K", 256, 176 },
	[14] = { "Q6_K", 256, 210 },  [15] = { "Q8_K", 256, 292 },  [16] = { "IQ2_XXS", 256, 66 },
	[17] = { "IQ2_XS", 256, 74 }, [18] = { "IQ3_XXS", 256, 98 }, [19] = { "IQ1_S", 256, 50 },
	[20] = { "IQ4_NL", 32, 18 },  [21] = { "IQ3_S", 256, 110 }, [22] = { "IQ2_S", 256, 82 },
	[23] = { "IQ4_XS", 256, 136 }, [24] = { "I8", 1, 1 },       [25] = { "I16", 1, 2 },
	[26] = { "I32", 1, 4 },       [27] = { "I64", 1, 8 },       [28] = { "F64", 1, 8 },
	[29] = { "IQ1_M", 256, 56 },  [30] = { "BF16", 1, 2 },      [34] = { "TQ1_0", 256, 54 },
	[35] = { "TQ2_0", 256, 66 },  [39] = { "MXFP4", 32, 17 },
};

const char *gguf_type_name(int t)
{
	return t >= 0 && t < GGUF_N_TYPES && types[t].name ? types[t].name : "?";
}

/* GGUFValueType (constants.py): scalar sizes; STRING = 8, ARRAY = 9. */
enum { V_STRING = 8, V_ARRAY = 9, V_N = 13 };
static const int scalar_size[V_N] = { 1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8 };

struct rd {
	FILE *f;
	const char *path;
	uint64_t off, size;
	struct err *e;
};

static int fail(struct rd *r, const char *what)
{
	return err_set(r->e, "%s: byte %llu: %s", r->path, (unsigned long long)r->off, what);
}

static int get(struct rd *r, void *buf, uint64_t n)
{
	if (n > r->size - r->off || fread(buf, 1, (size_t)n, r->f) != n)
		return fail(r, "unexpected end of file (a length in the header runs past it)");
	r->off += n;
	return 0;
}

static int skip(struct rd *r, uint64_t n)
{
	if (n > r->size - r->off || fseeko(r->f, (off_t)n, SEEK_CUR))
		return fail(r, "unexpected end of file (a length in the header runs past it)");
	r->off += n;
	return 0;
}

static int get_u(struct rd *r, int bytes, uint64_t *out)
{
	unsigned char b[8];
	if (get(r, b, (uint64_t)bytes))
		return -1;
	*out = 0;
	for (int i = bytes - 1; i >= 0; i--)
		*out = *out << 8 | b[i];
	return 0;
}

/* A string; kept (malloc'd into *out) when at most keep bytes, else skipped
 * and *out = NULL. */
static int get_str(struct rd *r, uint64_t keep, char **out)
{
	uint64_t n;
	*out = NULL;
	if (get_u(r, 8, &n))
		return -1;
	if (n > keep)
		return skip(r, n);
	char *s = xmalloc((size_t)n + 1);
	if (get(r, s, n)) {
		free(s);
		return -1;
	}
	s[n] = '\0';
	*out = s;
	return 0;
}

/* One scalar of value type t as JSON. */
static json_t *scalar(struct rd *r, uint32_t t)
{
	uint64_t u;
	if (get_u(r, scalar_size[t], &u))
		return NULL;
	switch (t) {
	case 1: return json_integer((int8_t)u);
	case 3: return json_integer((int16_t)u);
	case 5: return json_integer((int32_t)u);
	case 11: return json_integer((json_int_t)u);
	case 6: {
		uint32_t w = (uint32_t)u;
		float f;
		memcpy(&f, &w, sizeof f);
		return json_real(f);
	}
	case 12: {
		double d;
		memcpy(&d, &u, sizeof d);
		return json_real(d);
	}
	case 7: return json_boolean(u != 0);
	default: return json_integer((json_int_t)u);
	}
}

/* A value: scalars and short strings as JSON; a numeric array of up to
 * 4096 entries as a JSON array; any other array as {"length": n}. */
static json_t *value(struct rd *r, uint32_t t)
{
	if (t >= V_N)
		return fail(r, "expected a GGUF value type 0..12"), NULL;
	if (t == V_STRING) {
		char *s;
		if (get_str(r, 1 << 16, &s))
			return NULL;
		json_t *j = s ? json_string(s) : json_string("");
		free(s);
		return j ? j : json_string("");
	}
	if (t != V_ARRAY)
		return scalar(r, t);
	uint64_t et, n;
	if (get_u(r, 4, &et) || get_u(r, 8, &n))
		return NULL;
	if (et >= V_N || et == V_ARRAY)
		return fail(r, "expected an array of scalars or strings"), NULL;
	if (et == V_STRING) {
		for (uint64_t i = 0; i < n; i++) {
			uint64_t len;
			if (get_u(r, 8, &len) || skip(r, len))
				return NULL;
		}
	} else if (n <= 4096) {
		json_t *a = json_array();
		for (uint64_t i = 0; i < n; i++) {
			json_t *v = scalar(r, (uint32_t)et);
			if (!v) {
				json_decref(a);
				return NULL;
			}
			json_array_append_new(a, v);
		}
		return a;
	} else if (n > (r->size - r->off) / (uint64_t)scalar_size[et] || skip(r, n * (uint64_t)scalar_size[et])) {
		if (r->e && n > (r->size - r->off) / (uint64_t)scalar_size[et])
			fail(r, "unexpected end of file (an array's length runs past it)");
		return NULL;
	}
	return json_pack("{s:I}", "length", (json_int_t)n);
}

/* llama.cpp's architecture names (src/llama-arch.cpp) → model_type. */
static const struct {
	const char *gguf, *model_type;
} arch_names[] = {
	{ "command-r", "cohere" }, { "deepseek2", "deepseek_v3" }, { "falcon", "falcon" },
	{ "falcon-h1", "falcon_h1" }, { "gemma", "gemma" }, { "gemma2", "gemma2" }, { "gemma3", "gemma3_text" },
	{ "gpt-oss", "gpt_oss" }, { "gpt2", "gpt2" }, { "granitehybrid", "granitemoehybrid" },
	{ "jamba", "jamba" }, { "lfm2", "lfm2" }, { "llama", "llama" }, { "llama4", "llama4_text" },
	{ "mamba", "mamba" }, { "mamba2", "mamba2" }, { "nemotron_h", "nemotron_h" }, { "olmo2", "olmo2" },
	{ "phi3", "phi3" }, { "qwen2", "qwen2" }, { "qwen2moe", "qwen2_moe" }, { "qwen3", "qwen3" },
	{ "qwen3moe", "qwen3_moe" }, { "qwen3next", "qwen3_next" }, { "rwkv6", "rwkv" }, { "rwkv7", "rwkv" },
	{ "starcoder2", "starcoder2" },
};

/* A.<suffix> → config field, integers (an array: its largest entry). */
static const struct {
	const char *suffix, *field;
} int_fields[] = {
	{ "block_count", "num_hidden_layers" },
	{ "embedding_length", "hidden_size" },
	{ "feed_forward_length", "intermediate_size" },
	{ "attention.head_count", "num_attention_heads" },
	{ "attention.head_count_kv", "num_key_value_heads" },
	{ "context_length", "max_position_embeddings" },
	{ "vocab_size", "vocab_size" },
	{ "expert_count", "num_local_experts" },
	{ "expert_used_count", "num_experts_per_tok" },
	{ "expert_feed_forward_length", "moe_intermediate_size" },
	{ "expert_shared_count", "n_shared_experts" },
	{ "expert_shared_feed_forward_length", "shared_expert_intermediate_size" },
	{ "leading_dense_block_count", "first_k_dense_replace" },
	{ "attention.sliding_window", "sliding_window" },
	{ "attention.kv_lora_rank", "kv_lora_rank" },
	{ "attention.q_lora_rank", "q_lora_rank" },
	{ "full_attention_interval", "full_attention_interval" },
};

static json_int_t as_int(json_t *v)
{
	if (json_is_integer(v))
		return json_integer_value(v);
	json_int_t best = 0;
	size_t i;
	json_t *x;
	json_array_foreach(v, i, x)
		if (json_integer_value(x) > best)
			best = json_integer_value(x);
	return best;
}

static json_t *meta(json_t *kv, const char *arch, const char *suffix)
{
	char key[256];
	snprintf(key, sizeof key, "%s.%s", arch, suffix);
	return json_object_get(kv, key);
}

/* general.file_type (llama_ftype, include/llama.h) → servesim precision. */
static const char *ftype_precision(int64_t ft)
{
	switch (ft) {
	case 1: return "f16";
	case 2: return "q4_0";
	case 7: return "q8_0";
	case 14: case 15: return "q4_k_m";
	case 16: case 17: return "q5_k_m";
	case 18: return "q6_k";
	case 32: return "bf16";
	case 38: return "mxfp4";
	default: return NULL;
	}
}

/* The dominant ggml_type of the weight matrices → servesim precision. */
static const char *type_precision(int t)
{
	static const char *const names[GGUF_N_TYPES] = {
		[1] = "f16", [2] = "q4_0", [8] = "q8_0", [12] = "q4_k_m", [13] = "q5_k_m",
		[14] = "q6_k", [30] = "bf16", [39] = "mxfp4",
	};
	return t >= 0 && t < GGUF_N_TYPES ? names[t] : NULL;
}

static int build(struct rd *r, json_t *kv, bool has_output, int64_t embd_rows, const struct gguf_weights *w,
		 json_t *cfg)
{
	const char *arch = json_string_value(json_object_get(kv, "general.architecture"));
	if (!arch)
		return err_set(r->e, "%s: general.architecture: missing; expected the model's architecture name", r->path);
	const char *type = arch;
	for (size_t i = 0; i < sizeof arch_names / sizeof *arch_names; i++)
		if (!strcmp(arch_names[i].gguf, arch))
			type = arch_names[i].model_type;
	json_object_set_new(cfg, "model_type", json_string(type));
	json_object_set_new(cfg, "gguf_architecture", json_string(arch));
	for (size_t i = 0; i < sizeof int_fields / sizeof *int_fields; i++) {
		json_t *v = meta(kv, arch, int_fields[i].suffix);
		if (json_is_integer(v) || json_is_array(v))
			json_object_set_new(cfg, int_fields[i].field, json_integer(as_int(v)));
	}
	if (!json_object_get(cfg, "num_hidden_layers"))
		return err_set(r->e, "%s: %s.block_count: missing; expected the layer count", r->path, arch);
	if (!json_object_get(cfg, "vocab_size")) {
		json_t *tokens = json_object_get(kv, "tokenizer.ggml.tokens");
		json_int_t n = json_integer_value(json_object_get(tokens, "length"));
		if (n <= 0)
			n = embd_rows;
		if (n > 0)
			json_object_set_new(cfg, "vocab_size", json_integer(n));
	}
	json_int_t key_len = as_int(meta(kv, arch, "attention.key_length"));
	json_int_t val_len = as_int(meta(kv, arch, "attention.value_length"));
	json_int_t rope = as_int(meta(kv, arch, "rope.dimension_count"));
	if (json_object_get(cfg, "kv_lora_rank")) {
		/* MLA: key_length is nope + rope (key_length_mla in newer files). */
		json_int_t mla_k = as_int(meta(kv, arch, "attention.key_length_mla"));
		json_int_t mla_v = as_int(meta(kv, arch, "attention.value_length_mla"));
		if (mla_k > 0)
			key_len = mla_k;
		if (mla_v > 0)
			val_len = mla_v;
		json_object_set_new(cfg, "qk_rope_head_dim", json_integer(rope));
		json_object_set_new(cfg, "qk_nope_head_dim", json_integer(key_len - rope));
		json_object_set_new(cfg, "v_head_dim", json_integer(val_len));
	} else if (key_len > 0) {
		json_object_set_new(cfg, "head_dim", json_integer(key_len));
		if (rope > 0 && rope < key_len)
			json_object_set_new(cfg, "partial_rotary_factor", json_real((double)rope / (double)key_len));
	}
	static const char *const caps[] = { "attn_logit_softcapping", "final_logit_softcapping", NULL };
	for (const char *const *c = caps; *c; c++) {
		json_t *v = meta(kv, arch, *c);
		if (json_is_number(v))
			json_object_set_new(cfg, *c, json_real(json_number_value(v)));
	}
	json_object_set_new(cfg, "tie_word_embeddings", json_boolean(!has_output));
	json_object_set_new(cfg, "torch_dtype", json_string(w->precision[0] == 'f' ? "float16" : "bfloat16"));
	return 0;
}

int gguf_to_config(const char *path, json_t **config, struct gguf_weights *w, struct err *e)
{
	*config = NULL;
	memset(w, 0, sizeof *w);
	w->file_type = -1;
	struct stat st;
	FILE *f = fopen(path, "rb");
	if (!f)
		return err_set(e, "%s: cannot open: %s", path, strerror(errno));
	if (fstat(fileno(f), &st)) {
		fclose(f);
		return err_set(e, "%s: cannot stat: %s", path, strerror(errno));
	}
	struct rd r = { .f = f, .path = path, .off = 0, .size = (uint64_t)st.st_size, .e = e };
	json_t *kv = json_object(), *cfg = json_object();
	char magic[4];
	uint64_t version, n_tensors, n_kv;
	int rc = -1;
	bool has_output = false;
	int64_t embd_rows = 0;
	if (get(&r, magic, 4) || memcmp(magic, "GGUF", 4)) {
		err_set(e, "%s: byte 0: expected the GGUF magic \"GGUF\"", path);
		goto out;
	}
	if (get_u(&r, 4, &version))
		goto out;
	if (version < 2 || version > 3) {
		err_set(e, "%s: byte 4: expected GGUF version 2 or 3, got %llu", path, (unsigned long long)version);
		goto out;
	}
	if (get_u(&r, 8, &n_tensors) || get_u(&r, 8, &n_kv))
		goto out;
	for (uint64_t i = 0; i < n_kv; i++) {
		char *key;
		uint64_t t;
		if (get_str(&r, 4096, &key))
			goto out;
		if (!key) {
			fail(&r, "expected a key of at most 4096 bytes");
			goto out;
		}
		json_t *v = get_u(&r, 4, &t) ? NULL : value(&r, (uint32_t)t);
		if (!v) {
			err_prefix(e, "key '%s'", key);
			free(key);
			goto out;
		}
		json_object_set_new(kv, key, v);
		free(key);
	}
	w->n_tensors = (int64_t)n_tensors;
	double best = 0, matrix_elems[GGUF_N_TYPES] = { 0 };
	int best_type = -1;
	for (uint64_t i = 0; i < n_tensors; i++) {
		char *name;
		uint64_t n_dims, t, offset, dim;
		double elems = 1;
		int64_t ne1 = 0;
		if (get_str(&r, 4096, &name))
			goto out;
		if (get_u(&r, 4, &n_dims)) {
			free(name);
			goto out;
		}
		if (n_dims > 8) {
			free(name);
			fail(&r, "expected at most 8 tensor dimensions");
			goto out;
		}
		for (uint64_t d = 0; d < n_dims; d++) {
			if (get_u(&r, 8, &dim)) {
				free(name);
				goto out;
			}
			elems *= (double)dim;
			if (d == 1)
				ne1 = (int64_t)dim;
		}
		if (get_u(&r, 4, &t) || get_u(&r, 8, &offset)) {
			free(name);
			goto out;
		}
		if (t >= GGUF_N_TYPES || !types[t].name) {
			fail(&r, "expected a ggml tensor type this reader knows");
			err_prefix(e, "tensor '%s' (type %llu)", name ? name : "?", (unsigned long long)t);
			free(name);
			goto out;
		}
		if (name && !strcmp(name, "output.weight"))
			has_output = true;
		if (name && !strcmp(name, "token_embd.weight"))
			embd_rows = ne1;
		free(name);
		w->elems[t] += elems;
		w->tensor_bytes += elems / types[t].block * types[t].bytes;
		if (n_dims >= 2)
			matrix_elems[t] += elems;
		if (n_dims >= 2 && matrix_elems[t] > best) {
			best = matrix_elems[t];
			best_type = (int)t;
		}
	}
	json_t *ft = json_object_get(kv, "general.file_type");
	if (json_is_integer(ft))
		w->file_type = json_integer_value(ft);
	const char *prec = ftype_precision(w->file_type);
	if (!prec)
		prec = type_precision(best_type);
	if (!prec) {
		err_set(e, "%s: weights mostly %s: not among servesim's precisions (F16, BF16, Q8_0, Q6_K, Q5_K, Q4_K, Q4_0, MXFP4)",
			path, gguf_type_name(best_type));
		goto out;
	}
	snprintf(w->precision, sizeof w->precision, "%s", prec);
	if (build(&r, kv, has_output, embd_rows, w, cfg))
		goto out;
	*config = cfg;
	cfg = NULL;
	rc = 0;
out:
	json_decref(kv);
	json_decref(cfg);
	fclose(f);
	return rc;
}
