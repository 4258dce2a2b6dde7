/*
 * model: a Hugging Face config.json, read as published, and what follows
 * from it (parameters, weight bytes, FLOPs per token, KV bytes per token).
 *
 * The loader reads `text_config` when present (multimodal wrappers), the
 * `head_dim` override, GQA, MoE (which layers, how many experts, top-k,
 * shared experts), MLA, sliding-window layers and `quantization_config`.
 * A field the config lacks takes its transformers default for the
 * architecture (archdefaults.h; num_key_value_heads = num_attention_heads,
 * head_dim = hidden_size / num_attention_heads, tie_word_embeddings per
 * model_type), recorded in defaulted[]; a field the model needs with no
 * default for the architecture is an error naming it.
 *
 * Parameter counts are derived from the dimensions, tensor by tensor, as
 * formats.md §6 describes; "active" counts only the top-k routed experts.
 */
#ifndef SERVESIM_MODEL_H
#define SERVESIM_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "genconfig.h"
#include "precision.h"

/* A field the config left out and what it became: a class default of
 * the architecture's transformers config (archdefaults.h), or derived
 * from other fields as transformers derives it (head_dim = hidden_size /
 * num_attention_heads, num_key_value_heads = num_attention_heads). */
struct model_default {
	char key[40];
	char value[24];               /* as JSON: 4096, false, 30.0 */
	bool derived;
};

#define MODEL_MAX_DEFAULTS 32

/* The most decoder layers a config may have: real models have a few
 * hundred at most, and per-layer work (layer_types, MoE layer rules) must
 * not follow a count a config can type up to 2^31. */
#define MODEL_MAX_LAYERS 100000

struct model {
	char id[64];                  /* file id, e.g. "llama-3.1-8b" */
	char model_type[64];          /* config's model_type (text part) */
	int64_t n_layers;
	int64_t hidden;               /* hidden_size */
	int64_t n_heads;              /* num_attention_heads */
	int64_t n_kv_heads;           /* num_key_value_heads (1 latent "head" for MLA) */
	int64_t head_dim;             /* query/key head size (MLA: nope + rope) */
	int64_t v_head_dim;           /* value head size (= head_dim except MLA) */
	int64_t vocab;
	int64_t max_position_embeddings;
	bool tie_embeddings;
	bool attention_bias;

	/* Feed-forward. Dense layers use dense_ffn_width; MoE layers have
	 * n_experts routed experts of expert_ffn_width, top-k of them per token,
	 * plus shared_ffn_width of always-on shared experts. */
	int64_t dense_ffn_width;
	int ffn_matrices;             /* 3 gated (SwiGLU, GeGLU), 2 plain (GPT-2, Falcon) */
	int64_t n_moe_layers;         /* 0 for dense models */
	int64_t n_experts, experts_per_token;
	int64_t expert_ffn_width, shared_ffn_width;
	bool expert_bias;             /* gpt-oss experts carry biases */

	/* MLA (DeepSeek-V2/V3): latent KV of kv_lora_rank + qk_rope_head_dim. */
	bool mla;
	int64_t kv_lora_rank, q_lora_rank, qk_rope_head_dim, qk_nope_head_dim;

	/* Sliding-window attention: n_sliding_layers layers see only the last
	 * sliding_window tokens (0 when none). */
	int64_t sliding_window, n_sliding_layers;

	/* Rotary position embedding: the dimensions rotated per head
	 * (head_dim × partial_rotary_factor; MLA: qk_rope_head_dim). */
	int64_t rotary_dim;

	/* A multimodal checkpoint's vision encoder and projector (parameters,
	 * kept 16-bit); 0 for a text-only config. */
	double vision_params;

	/* Gemma 2's tanh soft-capping of attention logits and final logits
	 * (0 = none); parsed and shown, not timed: a cheap element-wise op. */
	double attn_softcap, final_softcap;

	/* A GGUF file's tensors as stored, bytes (0 for a config.json). */
	double file_weight_bytes;

	/* What the checkpoint is stored in: "bf16", "fp8", "mxfp4", … */
	char weights[16];
	/* The quantization config leaves attention in 16-bit (an `ignore`
	 * entry matching self_attn, as llm-compressor recipes write). */
	bool quant_skips_attention;
	/* FP8 weights scaled per output channel or per tensor (a
	 * compressed-tensors float 8-bit group with strategy "channel" or
	 * "tensor", no block structure): on Hopper vLLM runs such MoE experts
	 * through its CUTLASS grouped GEMM (cutlass_moe_fp8), not Triton. */
	bool quant_fp8_scaled;

	/* The generation_config shipped beside the config (genconfig.h);
	 * none for a .gguf. */
	struct genconfig gen;

	/* The fields the config left out, in the order they were filled, and
	 * the transformers config class whose defaults filled them (static;
	 * NULL when model_type has no row). */
	const char *defaults_from;
	struct model_default defaulted[MODEL_MAX_DEFAULTS];
	int n_defaulted;
};

/* Reads a config.json, or a .gguf file's header (gguf.h), into *m.
 * Omitted fields take the architecture's transformers defaults
 * (archdefaults.h); hybrid linear-attention / Mamba models are refused.
 * A config.json's generation_config (genconfig_path) is read into m->gen.
 * Returns 0, or -1 with e naming the file and line:column for a syntax
 * error, or the field for a missing/invalid one (of either file). */
int model_load(struct model *m, const char *path, struct err *e);

/* The defaulted fields of one kind (derived: computed from other fields;
 * else the class defaults) as "key=value, …" into buf; "" when none. */
void model_defaults_text(const struct model *m, bool derived, char *buf, size_t n);

/* Resolves name (an id, a Hugging Face id, a config.json, a model folder,
 * an Ollama tag or a .gguf file: modelname.h) and loads it; an Ollama
 * tag's quantization becomes m->weights. */
int model_load_named(struct model *m, const char *name, struct err *e);

/* Parameter groups, derived from the dimensions; counts, not bytes. */
struct model_params {
	double embed;            /* input embedding table */
	double lm_head;          /* 0 when tied */
	double attn_per_layer;   /* q, k, v, o (or the MLA projections) + biases */
	double dense_ffn_per_layer;
	double expert;           /* one routed expert */
	double shared_per_layer; /* shared experts of one MoE layer */
	double router_per_layer;
	double norms;            /* every norm weight in the model */
	double total;
	double active;           /* top-k experts, both embedding tables */
	double active_compute;   /* active without the input embedding (a lookup) */
};

void model_params(const struct model *m, struct model_params *p);

/* Bytes per parameter of each weight group at weight precision w: the one
 * place that says which tensors a format quantizes. Embeddings and LM head
 * stay 16-bit unless w quantizes them (GGUF); MXFP4 covers the routed
 * experts only; attention stays 16-bit when the checkpoint's quantization
 * config ignores it. */
struct model_group_bytes {
	double embed, attn, dense, expert;
};

void model_group_bytes(const struct model *m, const struct precision *w, struct model_group_bytes *b);

/* Weight bytes held by the device at weight precision w. Embeddings stay
 * 16-bit unless w quantizes them (GGUF); MXFP4 applies to experts only. */
double model_weight_bytes(const struct model *m, const struct precision *w);

/* Bytes of weights one decode token reads at batch 1: only k experts, and
 * not an untied input embedding (a one-row lookup). Llama-3.1-8B at bf16:
 * 15.01 GB of its 16.06. */
double model_active_weight_bytes(const struct model *m, const struct precision *w);

/* Matmul FLOPs per token, excluding attention over the context: 2 × the
 * active parameters that multiply (the LM head included). */
double model_linear_flops_per_token(const struct model *m);

/* Attention FLOPs (QK^T and AV) for one token attending to ctx tokens,
 * all layers, sliding windows applied. */
double model_attn_flops_per_token(const struct model *m, double ctx);

/* Device memory a serving engine holds besides the text weights and the KV
 * cache, per GPU at tensor parallelism tp: the vision encoder's weights
 * (16-bit, split by tp) and vLLM's rotary cos/sin cache, precomputed for
 * every position max_position_embeddings allows at 16 bits, once per GPU
 * (2.5 GiB for Llama 4's 10M positions, 32 MiB for Llama 3.1's 128k). */
double model_vision_bytes(const struct model *m, int tp);
double model_rope_cache_bytes(const struct model *m);

/* Layers on the fullest of pp pipeline stages: ceil(n_layers / pp). */
static inline int64_t pipeline_stage_layers(int64_t n_layers, int pp)
{
	return (n_layers + pp - 1) / pp;
}

/* Weight bytes the fullest GPU holds at tensor parallelism tp and pp
 * pipeline stages, split by tp: with one stage, every weight; with more,
 * the last stage's (the fullest stage's layers and one vocab × hidden
 * table, its LM head; it also runs the sampler, so it is the GPU that
 * sizes vLLM's pool). The vision tower counts on every stage. */
double model_weight_bytes_per_gpu(const struct model *m, const struct precision *w, int tp, int pp);

/* KV-cache bytes one token adds, all layers: 2·L·kv_heads·head_dim·bytes,
 * or L·(kv_lora_rank + qk_rope_head_dim)·bytes for MLA. */
double model_kv_bytes_per_token(const struct model *m, double kv_bytes_per_elem);

/* KV-cache bytes one token adds on each of tp tensor-parallel ranks: KV
 * heads split as vLLM splits them, max(1, kv_heads / tp) per rank
 * (replicated when tp exceeds them); MLA's latent vector is on every rank. */
/* KV heads one rank holds: max(1, kv_heads / tp), all of them for MLA or tp 1. */
double model_kv_heads_per_rank(const struct model *m, int tp);
double model_kv_bytes_per_token_per_rank(const struct model *m, double kv_bytes_per_elem, int tp);

#endif
