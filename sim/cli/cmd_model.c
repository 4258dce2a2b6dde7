/*
 * servesim model: what a config.json implies (parameters, weight bytes,
 * FLOPs per token, KV bytes per token; SEED C5, C16).
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "model.h"
#include "num.h"

static void help(void)
{
	printf("usage: servesim model NAME|PATH [--weights P] [--kv-cache-dtype auto|fp8]\n"
	       "                     [--context N] [--format text|json]\n\n"
	       "Derived figures of a Hugging Face config.json: parameters (total, active),\n"
	       "weight bytes at a precision, FLOPs per token (matmuls, and attention at a\n"
	       "context of N tokens), and KV-cache bytes per token and at N tokens.\n"
	       "  --context N   context for the attention and KV figures (default 8000, SEED C16)\n");
}

int cmd_model(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "context", required_argument, NULL, 'c' },
		{ "format", required_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{ "kv-cache-dtype", required_argument, NULL, 'k' },
		{ "weights", required_argument, NULL, 'w' },
		{ 0 },
	};
	const char *weights = NULL, *kv_dtype = "auto";
	int64_t ctx = 8000;
	enum out_format fmt = FMT_TEXT;
	struct err e;
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'c':
			if (num_parse_int64(optarg, &ctx) || ctx < 1)
				return cli_misuse("model", "--context: expected a positive token count, got '%s'", optarg);
			break;
		case 'f':
			if (cli_parse_format(optarg, 1u << FMT_TEXT | 1u << FMT_JSON, &fmt, &e))
				return cli_fail("model", &e);
			break;
		case 'h': help(); return EXIT_OK;
		case 'k': kv_dtype = optarg; break;
		case 'w': weights = optarg; break;
		default: return cli_bad_option("model", argv);
		}
	}
	if (optind != argc - 1)
		return cli_misuse("model", "expected one model id or path");
	struct model m;
	if (model_load_named(&m, argv[optind], &e))
		return cli_fail("model", &e);
	const struct precision *w = precision_find(weights ? weights : m.weights);
	if (!w) {
		char names[512];
		precision_names(names, sizeof names);
		err_set(&e, "--weights: expected one of %s, got '%s'", names, weights);
		return cli_fail("model", &e);
	}
	double kv_elem = !strcmp(kv_dtype, "fp8") ? 1 : !strcmp(kv_dtype, "auto") ? 2 : 0;
	if (kv_elem == 0)
		return cli_misuse("model", "--kv-cache-dtype: expected auto or fp8, got '%s'", kv_dtype);

	struct model_params p;
	model_params(&m, &p);
	double wbytes = model_weight_bytes(&m, w);
	double lin = model_linear_flops_per_token(&m);
	double attn = model_attn_flops_per_token(&m, (double)ctx);
	double kv = model_kv_bytes_per_token(&m, kv_elem);

	if (fmt == FMT_JSON) {
		json_t *o = json_object();
		json_object_set_new(o, "id", json_string(m.id));
		json_object_set_new(o, "model_type", json_string(m.model_type));
		json_object_set_new(o, "num_hidden_layers", json_integer(m.n_layers));
		json_object_set_new(o, "hidden_size", json_integer(m.hidden));
		json_object_set_new(o, "num_attention_heads", json_integer(m.n_heads));
		json_object_set_new(o, "num_key_value_heads", json_integer(m.n_kv_heads));
		json_object_set_new(o, "head_dim", json_integer(m.head_dim));
		json_object_set_new(o, "vocab_size", json_integer(m.vocab));
		json_object_set_new(o, "max_position_embeddings", json_integer(m.max_position_embeddings));
		json_object_set_new(o, "tie_word_embeddings", json_boolean(m.tie_embeddings));
		json_object_set_new(o, "moe_layers", json_integer(m.n_moe_layers));
		json_object_set_new(o, "num_experts", json_integer(m.n_experts));
		json_object_set_new(o, "experts_per_token", json_integer(m.experts_per_token));
		json_object_set_new(o, "mla", json_boolean(m.mla));
		json_object_set_new(o, "sliding_window", json_integer(m.sliding_window));
		json_object_set_new(o, "sliding_layers", json_integer(m.n_sliding_layers));
		json_object_set_new(o, "stored_weights", json_string(m.weights));
		json_object_set_new(o, "params_total", outfmt_real(p.total, 0));
		json_object_set_new(o, "params_active", outfmt_real(p.active, 0));
		json_object_set_new(o, "params_active_without_input_embedding", outfmt_real(p.active_compute, 0));
		json_object_set_new(o, "weights", json_string(w->name));
		json_object_set_new(o, "bits_per_weight", outfmt_real(w->bits_per_weight, 4));
		json_object_set_new(o, "weight_bytes", outfmt_real(wbytes, 0));
		json_object_set_new(o, "linear_flops_per_token", outfmt_real(lin, 0));
		json_object_set_new(o, "context_tokens", json_integer(ctx));
		json_object_set_new(o, "attention_flops_per_token_at_context", outfmt_real(attn, 0));
		json_object_set_new(o, "kv_bytes_per_token", outfmt_real(kv, 0));
		json_object_set_new(o, "kv_bytes_at_context", outfmt_real(kv * (double)ctx, 0));
		if (m.attn_softcap > 0 || m.final_softcap > 0) {
			json_object_set_new(o, "attn_logit_softcapping", json_real(m.attn_softcap));
			json_object_set_new(o, "final_logit_softcapping", json_real(m.final_softcap));
		}
		if (m.file_weight_bytes > 0)
			json_object_set_new(o, "gguf_tensor_bytes", outfmt_real(m.file_weight_bytes, 0));
		json_t *dflt = json_object();
		for (int i = 0; i < m.n_defaulted; i++) {
			json_t *v = json_loads(m.defaulted[i].value, JSON_DECODE_ANY, NULL);
			json_object_set_new(dflt, m.defaulted[i].key, v ? v : json_string(m.defaulted[i].value));
		}
		json_object_set_new(o, "defaulted", dflt);
		json_object_set_new(o, "defaults_from", m.defaults_from ? json_string(m.defaults_from) : json_null());
		return cli_print_json(o);
	}
	printf("%s (%s)\n", m.id, m.model_type);
	printf("  layers %lld, hidden %lld, heads %lld (KV %lld%s), head_dim %lld, vocab %lld, max context %lld\n",
	       (long long)m.n_layers, (long long)m.hidden, (long long)m.n_heads,
	       (long long)m.n_kv_heads, m.mla ? ", MLA latent" : "", (long long)m.head_dim,
	       (long long)m.vocab, (long long)m.max_position_embeddings);
	if (m.n_moe_layers)
		printf("  MoE: %lld of %lld layers, %lld experts, top-%lld, expert FFN %lld, shared FFN %lld\n",
		       (long long)m.n_moe_layers, (long long)m.n_layers, (long long)m.n_experts,
		       (long long)m.experts_per_token, (long long)m.expert_ffn_width,
		       (long long)m.shared_ffn_width);
	if (m.mla)
		printf("  MLA: kv_lora_rank %lld + qk_rope_head_dim %lld per token per layer\n",
		       (long long)m.kv_lora_rank, (long long)m.qk_rope_head_dim);
	if (m.n_sliding_layers)
		printf("  sliding window %lld tokens on %lld layers\n", (long long)m.sliding_window,
		       (long long)m.n_sliding_layers);
	printf("  parameters: %.3f B total, %.3f B active (%.3f B without the input embedding)\n",
	       p.total / 1e9, p.active / 1e9, p.active_compute / 1e9);
	printf("  weights at %s (%.4g bits/weight; stored as %s): %.2f GB\n", w->name,
	       w->bits_per_weight, m.weights, wbytes / 1e9);
	if (m.file_weight_bytes > 0)
		printf("  GGUF tensors as stored: %.2f GB (%+.1f%% against the estimate above)\n", m.file_weight_bytes / 1e9,
		       100 * (wbytes - m.file_weight_bytes) / m.file_weight_bytes);
	if (m.attn_softcap > 0 || m.final_softcap > 0)
		printf("  logit soft-capping: attention %.4g, final %.4g (not timed: an element-wise tanh)\n",
		       m.attn_softcap, m.final_softcap);
	char dflt[1024];
	model_defaults_text(&m, false, dflt, sizeof dflt);
	if (dflt[0])
		printf("  not in the config, %s's defaults (transformers): %s\n",
		       m.defaults_from ? m.defaults_from : "the architecture", dflt);
	model_defaults_text(&m, true, dflt, sizeof dflt);
	if (dflt[0])
		printf("  not in the config, derived as transformers derives them: %s\n", dflt);
	printf("  FLOPs per token: %.2f GFLOP in matmuls + %.2f GFLOP attention at %lld tokens of context\n",
	       lin / 1e9, attn / 1e9, (long long)ctx);
	printf("  KV cache (%s): %.0f bytes per token (%.1f KiB); %lld tokens hold %.3f GB\n", kv_dtype,
	       kv, kv / 1024, (long long)ctx, kv * (double)ctx / 1e9);
	return EXIT_OK;
}
