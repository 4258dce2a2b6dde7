/*
 * model: every shipped config loads, and the derived figures match SEED C16
 * and the parameter counts the model publishers state. Published counts are
 * in billions as printed on the model cards / papers; each comparison says
 * its tolerance and why.
 */
#include "testutil.h"

#include "catalog.h"
#include "model.h"
#include "precision.h"

static void load(struct model *m, const char *name)
{
	struct err e = { { 0 } };
	if (model_load_named(m, name, &e)) {
		print_error("%s: %s\n", name, e.msg);
		fail();
	}
}

static void params_of(const char *name, struct model_params *p)
{
	struct model m;
	load(&m, name);
	model_params(&m, p);
}

/* Every JSON file in models/ loads and its figures are sane. */
static void every_model_loads(void **state)
{
	(void)state;
	char **ids;
	size_t n = catalog_list(CATALOG_MODELS, &ids);
	/* The issue asks for at least 19 models; fewer means the folder was
	 * not found or files went missing. */
	assert_true(n >= 19);
	int failed = 0;
	for (size_t i = 0; i < n; i++) {
		struct model m;
		struct err e = { { 0 } };
		if (model_load_named(&m, ids[i], &e)) {
			print_error("%s: %s\n", ids[i], e.msg);
			failed++;
		} else {
			struct model_params p;
			model_params(&m, &p);
			assert_string_equal(m.id, ids[i]);
			assert_true(p.total > 0 && p.active > 0 && p.active <= p.total);
			assert_true(model_kv_bytes_per_token(&m, 2) > 0);
			assert_non_null(precision_find(m.weights));
		}
		free(ids[i]);
	}
	free(ids);
	assert_int_equal(failed, 0);
}

/* SEED C16: 2 × 32 layers × 8 KV heads × 128 head_dim × 2 bytes. */
static void llama_8b_kv_bytes(void **state)
{
	(void)state;
	struct model m;
	load(&m, "llama-3.1-8b");
	/* Exact: a product of small integers, representable in a double. */
	assert_double_near(model_kv_bytes_per_token(&m, 2), 131072.0, 0.0);
	/* SEED C16: "an 8,000-token conversation holds ≈ 1 GB"; 131072 × 8000
	 * = 1.048576e9 bytes. 0.01 GB: the seed's figure to two decimals. */
	assert_double_near(model_kv_bytes_per_token(&m, 2) * 8000 / 1e9, 1.05, 0.01);
	/* fp8 KV (vLLM --kv-cache-dtype fp8): one byte per element, exactly half. */
	assert_double_near(model_kv_bytes_per_token(&m, 1),
			   model_kv_bytes_per_token(&m, 2) / 2, 0.0);
}

/* DeepSeek-V3 MLA caches the latent: 61 × (512 + 64) × 2 bytes. */
static void deepseek_v3_mla_kv_bytes(void **state)
{
	(void)state;
	struct model m;
	load(&m, "deepseek-v3");
	assert_true(m.mla);
	/* Exact: integer arithmetic. */
	assert_double_near(model_kv_bytes_per_token(&m, 2), 70272.0, 0.0);
}

/* Parameter counts, in billions, within 1% of the published ones unless a
 * comment says otherwise: the published figures have three significant
 * digits, so 1% is a few roundings of slack and still catches a missing
 * tensor group (the smallest, the LM head of an 8B model, is 6.5%). */
static void llama_params(void **state)
{
	(void)state;
	struct model_params p;
	/* Meta's model card: Llama 3.1 8B, 8.03 B parameters. */
	params_of("llama-3.1-8b", &p);
	assert_double_rel(p.total / 1e9, 8.03, 0.01);
	/* Dense: every parameter is active. */
	assert_double_near(p.active, p.total, 0.0);
	/* Meta's model card: Llama 3.1 70B, 70.6 B parameters. */
	params_of("llama-3.1-70b", &p);
	assert_double_rel(p.total / 1e9, 70.6, 0.01);
}

static void mixtral_params(void **state)
{
	(void)state;
	struct model_params p;
	/* Mistral AI's Mixtral announcement: 46.7 B total, 12.9 B used per token. */
	params_of("mixtral-8x7b", &p);
	assert_double_rel(p.total / 1e9, 46.7, 0.01);
	assert_double_rel(p.active / 1e9, 12.9, 0.01);
}

static void qwen3_moe_params(void **state)
{
	(void)state;
	struct model_params p;
	/* Qwen3-30B-A3B model card: 30.5 B in total, 29.9 B non-embedding. */
	params_of("qwen3-30b-a3b", &p);
	assert_double_rel(p.total / 1e9, 30.5, 0.01);
	assert_double_rel((p.total - p.embed - p.lm_head) / 1e9, 29.9, 0.01);
	/* The card's "3.3 B activated" has two significant digits; the derived
	 * figure is 3.353 B (48 layers × (18.9 M attention + 8 × 4.72 M
	 * experts + 0.26 M router) + 2 × 311 M untied embeddings), 1.6% above
	 * 3.3, so 1% would fail on the card's rounding (truncation, as "A3B"
	 * itself truncates), not on the count. Allow the last printed digit:
	 * |got - 3.3| <= 0.06. */
	assert_double_near(p.active / 1e9, 3.3, 0.06);
}

static void deepseek_v3_params(void **state)
{
	(void)state;
	struct model_params p;
	/* DeepSeek-V3 technical report: 671 B total parameters. */
	params_of("deepseek-v3", &p);
	assert_double_rel(p.total / 1e9, 671, 0.01);
	/* The report's "37 B activated for each token" has two significant
	 * digits; the derived figure with both embedding tables is 37.55 B.
	 * 1% of 37 (0.37) is finer than the publication's own rounding, so
	 * allow it: |got - 37| <= 0.6. */
	assert_double_near(p.active / 1e9, 37, 0.6);
}

static void gpt_oss_params(void **state)
{
	(void)state;
	struct model_params p;
	/* OpenAI's gpt-oss model card: 116.83 B total (printed 116.8 B). */
	params_of("gpt-oss-120b", &p);
	assert_double_rel(p.total / 1e9, 116.8, 0.01);
	/* The card's 5.13 B active (printed 5.1 B) counts the LM head but not
	 * the input embedding (a lookup, no matmul): active_compute, not
	 * active (5.71 B, which holds both tables). */
	assert_double_rel(p.active_compute / 1e9, 5.1, 0.01);
}

/* A Hugging Face id resolves through models/aliases.ini to the same file. */
static void hf_id_resolves(void **state)
{
	(void)state;
	struct model a, b;
	load(&a, "meta-llama/Llama-3.1-8B-Instruct");
	load(&b, "llama-3.1-8b");
	assert_string_equal(a.id, "llama-3.1-8b");
	assert_int_equal(a.n_layers, b.n_layers);
	assert_int_equal(a.hidden, b.hidden);
	/* Ids match without regard to case. */
	load(&a, "LLAMA-3.1-8B");
	assert_string_equal(a.id, "llama-3.1-8b");
}

static void unknown_model_lists_known(void **state)
{
	(void)state;
	struct model m;
	struct err e = { { 0 } };
	assert_int_equal(model_load_named(&m, "no-such-model", &e), -1);
	assert_contains(e.msg, "no-such-model");
	assert_contains(e.msg, "llama-3.1-8b");
	assert_contains(e.msg, "deepseek-v3");
}

static void weight_bytes(void **state)
{
	(void)state;
	struct model m;
	load(&m, "llama-3.1-8b");
	const struct precision *bf16 = precision_find("bf16"), *fp8 = precision_find("fp8");
	assert_non_null(bf16);
	assert_non_null(fp8);
	double wb16 = model_weight_bytes(&m, bf16), wb8 = model_weight_bytes(&m, fp8);
	/* 8.030 B parameters × 2 bytes = 16.06 GB; 0.01 GB is the figure's
	 * last digit. */
	assert_double_near(wb16 / 1e9, 16.06, 0.01);
	/* fp8 (vLLM --quantization fp8) leaves both 525 M-entry embedding
	 * tables at 16 bits, so not exactly half: 9.08 GB. Strictly above 0.5
	 * (the tables stay wide) and below 0.6 (the rest is halved). */
	assert_true(wb8 > 0.5 * wb16);
	assert_true(wb8 < 0.6 * wb16);
	/* Dense model: a decode token reads every weight except the untied
	 * input embedding, a one-row lookup (128,256 × 4,096 × 2 bytes). */
	struct model_params p;
	model_params(&m, &p);
	assert_double_near(model_active_weight_bytes(&m, bf16), wb16 - 2 * p.embed, 1.0);
}

/* GGUF's bits per weight include the block scales (ggml-common.h: Q4_0 is
 * 18 bytes per 32 weights, Q8_0 34 bytes per 32). Exact: binary fractions. */
static void gguf_bits(void **state)
{
	(void)state;
	const struct precision *q4 = precision_find("q4_0"), *q8 = precision_find("Q8_0");
	assert_non_null(q4);
	assert_non_null(q8);
	assert_double_near(q4->bits_per_weight, 18.0 * 8 / 32, 0.0);
	assert_double_near(q8->bits_per_weight, 34.0 * 8 / 32, 0.0);
	assert_double_near(q4->bits_per_weight, 4.5, 0.0);
	assert_double_near(q8->bits_per_weight, 8.5, 0.0);
	/* GGUF quantizes every tensor, embeddings included. */
	assert_true(q4->quantizes_embeddings);
	assert_null(precision_find("q3_bogus"));
}

/* A malformed config.json names the file, line and column. */
static void bad_json_syntax(void **state)
{
	(void)state;
	struct model m;
	struct err e = { { 0 } };
	assert_int_equal(model_load(&m, TEST_DATA_DIR "/bad_syntax.json", &e), -1);
	/* Line 3 lacks the ':' after "num_hidden_layers". */
	assert_contains(e.msg, "bad_syntax.json:3:");
	assert_contains(e.msg, "invalid JSON");
}

/* A config without a field the model needs, for an architecture with no
 * transformers defaults in servesim, names the file and the field
 * (test_archdefaults.c: a Llama config without it takes LlamaConfig's). */
static void missing_field(void **state)
{
	(void)state;
	struct model m;
	struct err e = { { 0 } };
	assert_int_equal(model_load(&m, TEST_DATA_DIR "/models/defaults/olmo2-no-hidden.json", &e), -1);
	assert_contains(e.msg, "olmo2-no-hidden.json");
	assert_contains(e.msg, "hidden_size: missing");
}

/* A width past the loader's range is named as hidden_size, not multiplied
 * into a default MLP width first (GPT-2's and Falcon's 4 × hidden_size:
 * the fuzz campaign's 4 × 7e18 overflow, tests/fuzz/regress/model). */
static void huge_width_is_named_not_multiplied(void **state)
{
	(void)state;
	const char *files[] = { TEST_DATA_DIR "/models/defaults/gpt2-huge-width.json",
				TEST_DATA_DIR "/models/defaults/falcon-huge-width.json" };
	for (int i = 0; i < 2; i++) {
		struct model m;
		struct err e = { { 0 } };
		assert_int_equal(model_load(&m, files[i], &e), -1);
		assert_contains(e.msg, "-huge-width.json: hidden_size: expected an integer from 1 to 2147483647");
	}
}

/* What a server holds besides the text weights and the KV cache.
 * Llama-4-Scout's vision tower (34 layers of width 1408: attention
 * 4·1408², GELU MLP 2·1408·5632) is 808.9 M parameters, and its projector
 * into the 5120-wide text model 21.0 M (4096 × 5120): 829.9 M, 1.66 GB at
 * 16 bits, half of it on each of two GPUs. vLLM's rotary cache spans
 * max_position_embeddings: 10,485,760 positions × 128 dims × 2 bytes =
 * 2.5 GiB for Scout, 32 MiB for Llama-3.1-8B's 131,072. Exact counts. */
static void vision_tower_and_rope_cache(void **state)
{
	(void)state;
	struct model scout, llama;
	load(&scout, "llama-4-scout-17b-16e");
	load(&llama, "llama-3.1-8b");
	double vit = 34.0 * (4.0 * 1408 * 1408 + 2.0 * 1408 * 5632) + 4096.0 * 5120;
	assert_double_near(scout.vision_params, vit, 0.5);
	assert_double_near(model_vision_bytes(&scout, 2), vit, 0.5);
	assert_double_near(model_rope_cache_bytes(&scout), 2.5 * 1073741824.0, 0.5);
	assert_double_near(llama.vision_params, 0, 0);
	assert_double_near(model_rope_cache_bytes(&llama), 32.0 * 1048576, 0.5);
}

static void vision_config_without_layers(void **state)
{
	(void)state;
	struct model m;
	struct err e = { { 0 } };
	assert_int_equal(model_load(&m, TEST_DATA_DIR "/bad_vision.json", &e), -1);
	assert_contains(e.msg, "bad_vision.json: vision_config: expected num_hidden_layers (or depth)");
}

static void missing_file(void **state)
{
	(void)state;
	struct model m;
	struct err e = { { 0 } };
	assert_int_equal(model_load(&m, TEST_DATA_DIR "/no_such_file.json", &e), -1);
	assert_contains(e.msg, "no_such_file.json");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(every_model_loads),
		cmocka_unit_test(huge_width_is_named_not_multiplied),
		cmocka_unit_test(llama_8b_kv_bytes),
		cmocka_unit_test(deepseek_v3_mla_kv_bytes),
		cmocka_unit_test(llama_params),
		cmocka_unit_test(mixtral_params),
		cmocka_unit_test(qwen3_moe_params),
		cmocka_unit_test(deepseek_v3_params),
		cmocka_unit_test(gpt_oss_params),
		cmocka_unit_test(hf_id_resolves),
		cmocka_unit_test(unknown_model_lists_known),
		cmocka_unit_test(weight_bytes),
		cmocka_unit_test(gguf_bits),
		cmocka_unit_test(vision_tower_and_rope_cache),
		cmocka_unit_test(vision_config_without_layers),
		cmocka_unit_test(bad_json_syntax),
		cmocka_unit_test(missing_field),
		cmocka_unit_test(missing_file),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
