/*
 * Model configs as people have them: architectures beyond Llama (GPT-2,
 * Falcon, Phi-3, Gemma 2/3) with transformers' defaults for what a config
 * omits, the hybrid refusal (Qwen3-Next), a GGUF header this test writes
 * itself, and the names that reach a file (Hugging Face cache, Ollama tags,
 * model folders). Fixtures: tests/data/models/README.md says where each
 * config comes from.
 */
#include "testutil.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "model.h"
#include "modelname.h"

#define MODELS TEST_DATA_DIR "/models/"

static void load_ok(struct model *m, const char *path)
{
	struct err e = { { 0 } };
	if (model_load(m, path, &e)) {
		print_error("%s\n", e.msg);
		fail();
	}
}

/* GPT-2 (124 M as published): aliases n_embd/n_layer/n_head, n_inner =
 * 4·n_embd, a plain 2-matrix MLP, tied embeddings. servesim leaves out the
 * 1024×768 learned position table and the MLP/LayerNorm biases (0.9 M of
 * 124.4 M), so 1% is the tolerance; a gated 3-matrix MLP would give 151.9 M
 * and fail it. */
static void gpt2(void **state)
{
	(void)state;
	struct model m;
	struct model_params p;
	load_ok(&m, MODELS "gpt2.json");
	assert_int_equal(m.n_layers, 12);
	assert_int_equal(m.hidden, 768);
	assert_int_equal(m.dense_ffn_width, 3072);
	assert_int_equal(m.max_position_embeddings, 1024);
	assert_int_equal(m.ffn_matrices, 2);
	assert_true(m.tie_embeddings);
	model_params(&m, &p);
	assert_double_rel(p.total, 124.44e6, 0.01);
}

/* Falcon-7B: multi_query means one KV head; ffn 4·4544; plain MLP. The
 * published checkpoint has 6,921,720,704 parameters: within 0.01%. KV
 * bytes per token at bf16: 2·32 layers·1 head·64·2 = 8192. */
static void falcon(void **state)
{
	(void)state;
	struct model m;
	struct model_params p;
	load_ok(&m, MODELS "falcon-7b.json");
	assert_int_equal(m.n_kv_heads, 1);
	assert_int_equal(m.head_dim, 64);
	assert_int_equal(m.dense_ffn_width, 18176);
	assert_true(m.tie_embeddings);
	model_params(&m, &p);
	assert_double_rel(p.total, 6921720704.0, 1e-4);
	assert_double_near(model_kv_bytes_per_token(&m, 2), 8192, 0);
}

/* Phi-3-mini: 3,821,079,552 parameters published (3.8 B); untied. */
static void phi3(void **state)
{
	(void)state;
	struct model m;
	struct model_params p;
	load_ok(&m, MODELS "phi-3-mini-4k-instruct.json");
	model_params(&m, &p);
	assert_false(m.tie_embeddings);
	assert_double_rel(p.total, 3821079552.0, 1e-3);
}

/* GPT-NeoX (Pythia-2.8B, 2,775,208,960 parameters published): a plain
 * MLP, a quarter of each head rotated (rotary_pct, the older name of
 * partial_rotary_factor). Biases and LayerNorm shifts left out: 0.03%. */
static void gpt_neox(void **state)
{
	(void)state;
	struct model m;
	struct model_params p;
	load_ok(&m, MODELS "pythia-2.8b.json");
	assert_int_equal(m.ffn_matrices, 2);
	assert_int_equal(m.rotary_dim, 20);
	assert_string_equal(m.weights, "fp16");
	model_params(&m, &p);
	assert_double_rel(p.total, 2775208960.0, 1e-3);
}

/* Gemma 3 1B: sliding_window_pattern 6 → layers 6, 12, 18, 24 global, 22
 * of 26 slide over 512 tokens; 999,885,952 parameters published (q/k norms
 * left out: 0.01%). */
static void gemma3(void **state)
{
	(void)state;
	struct model m;
	struct model_params p;
	load_ok(&m, MODELS "gemma-3-1b-it.json");
	assert_int_equal(m.n_sliding_layers, 22);
	assert_int_equal(m.sliding_window, 512);
	assert_int_equal(m.head_dim, 256);
	assert_true(m.tie_embeddings);
	model_params(&m, &p);
	assert_double_rel(p.total, 999885952.0, 1e-3);
}

/* Gemma 3 4B as published: its text_config names five fields and leans on
 * Gemma3TextConfig for heads, KV heads, head_dim and vocab. Text 3.88 B +
 * the SigLIP tower 0.41 B = 4.30 B (4,300,079,472 published; the vision
 * tower's biases, norms and position table left out: 0.2%). */
static void gemma3_multimodal_defaults(void **state)
{
	(void)state;
	struct model m;
	struct model_params p;
	load_ok(&m, MODELS "gemma-3-4b-it.json");
	assert_int_equal(m.n_heads, 8);
	assert_int_equal(m.n_kv_heads, 4);
	assert_int_equal(m.head_dim, 256);
	assert_int_equal(m.vocab, 262208);
	assert_int_equal(m.n_sliding_layers, 29);   /* 34 layers, every 6th global: 5 */
	model_params(&m, &p);
	assert_double_rel(p.total + m.vision_params, 4300079472.0, 0.005);
}

/* A Gemma 2 config with only its dimensions: Gemma2Config's defaults fill
 * head_dim 256, 4 KV heads, a 4096-token window on every other layer and
 * the soft-capping of attention (50) and final (30) logits. */
static void gemma2_defaults(void **state)
{
	(void)state;
	struct model m;
	load_ok(&m, MODELS "gemma-2-2b-minimal.json");
	assert_int_equal(m.head_dim, 256);
	assert_int_equal(m.n_kv_heads, 4);
	assert_int_equal(m.sliding_window, 4096);
	assert_int_equal(m.n_sliding_layers, 13);
	assert_double_near(m.attn_softcap, 50, 0);
	assert_double_near(m.final_softcap, 30, 0);
	assert_int_equal(m.max_position_embeddings, 8192);
}

/* Qwen3-Next: 36 of its 48 layers are gated delta-net (linear attention).
 * Sized as full attention its KV cache would be 4× the real one; it is
 * refused, naming the file and why. */
static void hybrid_refused(void **state)
{
	(void)state;
	struct model m;
	struct err e = { { 0 } };
	assert_int_equal(model_load(&m, MODELS "qwen3-next-80b-a3b.json", &e), -1);
	assert_contains(e.msg, "qwen3-next-80b-a3b.json");
	assert_contains(e.msg, "hybrid model");
	assert_contains(e.msg, "gated delta-net");
	assert_contains(e.msg, "36 of 48 layers");
}

/* ---- a GGUF file written here (ggml/include/gguf.h layout, v3) ---------- */

static void w_u32(FILE *f, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		fputc((int)(v >> (8 * i) & 0xff), f);
}

static void w_u64(FILE *f, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		fputc((int)(v >> (8 * i) & 0xff), f);
}

static void w_str(FILE *f, const char *s)
{
	w_u64(f, strlen(s));
	fputs(s, f);
}

static void kv_u32(FILE *f, const char *key, uint32_t v)
{
	w_str(f, key);
	w_u32(f, 4);   /* GGUF_TYPE_UINT32 */
	w_u32(f, v);
}

static void kv_str(FILE *f, const char *key, const char *v)
{
	w_str(f, key);
	w_u32(f, 8);   /* GGUF_TYPE_STRING */
	w_str(f, v);
}

static void tensor(FILE *f, const char *name, uint64_t ne0, uint64_t ne1, uint32_t type, uint64_t off)
{
	w_str(f, name);
	w_u32(f, ne1 ? 2 : 1);
	w_u64(f, ne0);
	if (ne1)
		w_u64(f, ne1);
	w_u32(f, type);
	w_u64(f, off);
}

/* A 2-layer Llama in Q4_K_M (general.file_type 15), hidden 256, 4 heads, 2
 * KV heads, FFN 512, vocab 1000 from a 1000-entry token list, context
 * 4096, with an output.weight (untied). The tensor data is left out: the
 * reader must not need it. */
static void write_gguf(const char *path)
{
	FILE *f = fopen(path, "wb");
	assert_non_null(f);
	fputs("GGUF", f);
	w_u32(f, 3);
	w_u64(f, 2 + 2 * 4);   /* tensors */
	w_u64(f, 9);           /* key/values */
	kv_str(f, "general.architecture", "llama");
	kv_str(f, "general.name", "tiny");
	kv_u32(f, "general.file_type", 15);
	kv_u32(f, "llama.block_count", 2);
	kv_u32(f, "llama.context_length", 4096);
	kv_u32(f, "llama.embedding_length", 256);
	kv_u32(f, "llama.feed_forward_length", 512);
	kv_u32(f, "llama.attention.head_count", 4);
	/* head_count_kv as an array of one per layer (as some converters write) */
	w_str(f, "llama.attention.head_count_kv");
	w_u32(f, 9);
	w_u32(f, 4);
	w_u64(f, 2);
	w_u32(f, 2);
	w_u32(f, 2);
	/* (the token list is replaced by token_embd's extent: vocab 1000) */
	tensor(f, "token_embd.weight", 256, 1000, 12, 0);
	tensor(f, "output.weight", 256, 1000, 14, 0);
	for (int l = 0; l < 2; l++) {
		char n[64];
		snprintf(n, sizeof n, "blk.%d.attn_q.weight", l);
		tensor(f, n, 256, 256, 12, 0);
		snprintf(n, sizeof n, "blk.%d.ffn_up.weight", l);
		tensor(f, n, 256, 512, 12, 0);
		snprintf(n, sizeof n, "blk.%d.ffn_down.weight", l);
		tensor(f, n, 512, 256, 14, 0);
		snprintf(n, sizeof n, "blk.%d.attn_norm.weight", l);
		tensor(f, n, 256, 0, 0, 0);
	}
	fclose(f);
}

static void gguf_header(void **state)
{
	(void)state;
	char path[] = "/tmp/servesim-gguf-XXXXXX.gguf";
	int fd = mkstemps(path, 5);
	assert_true(fd >= 0);
	close(fd);
	write_gguf(path);
	struct model m;
	load_ok(&m, path);
	assert_string_equal(m.model_type, "llama");
	assert_int_equal(m.n_layers, 2);
	assert_int_equal(m.hidden, 256);
	assert_int_equal(m.n_heads, 4);
	assert_int_equal(m.n_kv_heads, 2);
	assert_int_equal(m.head_dim, 64);
	assert_int_equal(m.vocab, 1000);
	assert_int_equal(m.max_position_embeddings, 4096);
	assert_false(m.tie_embeddings);
	assert_string_equal(m.weights, "q4_k_m");
	/* Bytes as stored, per ggml type (GGML_QUANT_SIZES): Q4_K 144 B per
	 * 256, Q6_K 210 B per 256, F32 4 B. */
	double q4k = (256.0 * 1000 + 2 * (256.0 * 256 + 256.0 * 512)) / 256 * 144;
	double q6k = (256.0 * 1000 + 2 * 512.0 * 256) / 256 * 210;
	assert_double_near(m.file_weight_bytes, q4k + q6k + 2 * 256 * 4, 0.5);

	/* Cut anywhere inside the header, the file is an error naming it, never
	 * a crash or a half-read model (under ASan this also checks every
	 * read stays in bounds). */
	struct stat st;
	assert_int_equal(stat(path, &st), 0);
	for (off_t cut = st.st_size - 1; cut >= 0; cut--) {
		FILE *f = fopen(path, "r+b");
		assert_int_equal(ftruncate(fileno(f), cut), 0);
		fclose(f);
		struct err e = { { 0 } };
		assert_int_equal(model_load(&m, path, &e), -1);
		assert_contains(e.msg, path);
		if (cut >= 4 && !strstr(e.msg, "unexpected end of file"))
			fail_msg("cut at %lld: %s", (long long)cut, e.msg);
	}
	unlink(path);
}

/* Names: a Hugging Face id in $HF_HOME's cache (refs/main's snapshot), a
 * model folder, Ollama tags with their default and explicit quantization. */
static void names(void **state)
{
	(void)state;
	char root[64];
	test_tmpdir(root, sizeof root, "hf");
	char dir[512], cmd[4096];
	snprintf(dir, sizeof dir, "%s/hub/models--acme--Tiny-GPT/snapshots/abc123", root);
	snprintf(cmd, sizeof cmd, "mkdir -p '%s' '%s/hub/models--acme--Tiny-GPT/refs' && cp '%s' '%s/config.json' && "
		 "printf abc123 > '%s/hub/models--acme--Tiny-GPT/refs/main'",
		 dir, root, MODELS "gpt2.json", dir, root);
	assert_int_equal(system(cmd), 0);
	setenv("HF_HOME", root, 1);
	unsetenv("HF_HUB_CACHE");
	struct model m;
	struct err e = { { 0 } };
	assert_int_equal(model_load_named(&m, "acme/Tiny-GPT", &e), 0);
	assert_string_equal(m.id, "Tiny-GPT");
	assert_int_equal(m.hidden, 768);
	/* The snapshot folder itself is a model folder. */
	assert_int_equal(model_load_named(&m, dir, &e), 0);
	assert_int_equal(m.n_layers, 12);
	assert_int_equal(model_load_named(&m, "acme/Nothing", &e), -1);
	assert_contains(e.msg, "Hugging Face cache");
	/* A GGUF repository of several quantizations: ORG/NAME:QUANT picks one
	 * (llama.cpp -hf, Ollama hf.co/…). */
	char gdir[600], g1[700], g2[700];
	snprintf(gdir, sizeof gdir, "%s/hub/models--acme--Tiny-GGUF/snapshots/def456", root);
	snprintf(cmd, sizeof cmd, "mkdir -p '%s'", gdir);
	assert_int_equal(system(cmd), 0);
	snprintf(g1, sizeof g1, "%s/tiny-Q4_K_M.gguf", gdir);
	snprintf(g2, sizeof g2, "%s/tiny-Q8_0.gguf", gdir);
	write_gguf(g1);
	write_gguf(g2);
	struct modelname mn;
	assert_int_equal(modelname_resolve("acme/Tiny-GGUF:Q8_0", &mn, &e), 0);
	assert_string_equal(mn.path, g2);
	assert_int_equal(modelname_resolve("hf.co/acme/Tiny-GGUF:q4_k_m", &mn, &e), 0);
	assert_string_equal(mn.path, g1);
	assert_int_equal(modelname_resolve("acme/Tiny-GGUF", &mn, &e), -1);   /* two files: which? */
	/* No refs/main and 2,000 snapshots, the model in the last by name:
	 * every snapshot is looked at (the list once stopped at 256, in
	 * readdir's order, and missed it about seven times in eight). */
	snprintf(cmd, sizeof cmd,
		 "cd '%s' && mkdir -p hub/models--acme--Many/snapshots && cd hub/models--acme--Many/snapshots && "
		 "seq -w 0 1999 | sed 's/^/s/' | xargs mkdir && cp '%s' s1999/config.json",
		 root, MODELS "gpt2.json");
	assert_int_equal(system(cmd), 0);
	assert_int_equal(model_load_named(&m, "acme/Many", &e), 0);
	assert_int_equal(m.hidden, 768);
	test_rmdir(root);

	assert_int_equal(modelname_resolve("llama3.1:8b", &mn, &e), 0);
	assert_string_equal(mn.weights, "q4_k_m");
	assert_string_equal(mn.how, "ollama");
	assert_int_equal(modelname_resolve("llama3.1:70b-instruct-q8_0", &mn, &e), 0);
	assert_string_equal(mn.weights, "q8_0");
	assert_int_equal(modelname_resolve("gpt-oss", &mn, &e), 0);   /* latest = 20b, MXFP4 */
	assert_string_equal(mn.weights, "mxfp4");
	assert_string_equal(mn.id, "gpt-oss:20b");
	assert_int_equal(modelname_resolve("llama3.1:13b", &mn, &e), -1);
	assert_contains(e.msg, "8b, 70b, 405b");
}

/* Quantization in a file beside config.json, as vLLM finds it: ModelOpt's
 * hf_quant_config.json (NVFP4 here), AutoGPTQ's quantize_config.json. */
static void side_quant_files(void **state)
{
	(void)state;
	char dir[64];
	test_tmpdir(dir, sizeof dir, "quant");
	char cmd[2048];
	snprintf(cmd, sizeof cmd,
		 "cp '%s/models/llama-3.1-8b.json' '%s/config.json' && printf '%%s' "
		 "'{\"producer\": {\"name\": \"modelopt\", \"version\": \"0.27.0\"}, "
		 "\"quantization\": {\"quant_algo\": \"NVFP4\", \"kv_cache_quant_algo\": null, \"group_size\": 16}}' "
		 "> '%s/hf_quant_config.json'",
		 getenv("SERVESIM_DATA_DIR"), dir, dir);
	assert_int_equal(system(cmd), 0);
	struct model m;
	struct err e = { { 0 } };
	assert_int_equal(model_load_named(&m, dir, &e), 0);
	assert_string_equal(m.weights, "nvfp4");
	snprintf(cmd, sizeof cmd,
		 "rm '%s/hf_quant_config.json' && printf '%%s' '{\"bits\": 4, \"group_size\": 128, \"desc_act\": false}' "
		 "> '%s/quantize_config.json'",
		 dir, dir);
	assert_int_equal(system(cmd), 0);
	assert_int_equal(model_load_named(&m, dir, &e), 0);
	assert_string_equal(m.weights, "int4");
	test_rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(gpt2),           cmocka_unit_test(falcon),
		cmocka_unit_test(phi3),           cmocka_unit_test(gemma3),
		cmocka_unit_test(gpt_neox),       cmocka_unit_test(gemma3_multimodal_defaults),
		cmocka_unit_test(gemma2_defaults), cmocka_unit_test(hybrid_refused),
		cmocka_unit_test(gguf_header),    cmocka_unit_test(names),
		cmocka_unit_test(side_quant_files),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
