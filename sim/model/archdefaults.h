/*
 * archdefaults: what a Hugging Face config leaves out, per architecture.
 *
 * transformers gives every config class its own defaults (GPT2Config's
 * n_layer = 12, Gemma2Config's head_dim = 256, …) and some classes their
 * own field names (GPT-2's n_embd, Falcon's n_head). One row per
 * model_type says both, from transformers' configuration_<type>.py; the
 * model loader calls arch_normalize on the text part of a config before it
 * reads a field, so an omitted field takes the class default and an
 * aliased one its standard name. Explicit fields always win, and every
 * field filled is recorded in the model (struct model_default), so that
 * `servesim model` and `explain` can say which values the config did not
 * give.
 *
 * Hybrid architectures (linear attention, Mamba, gated delta-net layers:
 * Qwen3-Next, Jamba, Falcon-H1, …) keep a fixed-size recurrent state in most
 * layers instead of a KV cache. servesim sizes KV caches for attention
 * only, so arch_normalize refuses them with a message that says why,
 * rather than size every layer as full attention.
 */
#ifndef SERVESIM_ARCHDEFAULTS_H
#define SERVESIM_ARCHDEFAULTS_H

#include <jansson.h>
#include <stdbool.h>

#include "err.h"
#include "model.h"

/* Renames aliased fields and fills the class defaults into cfg (the text
 * part of a config; modified in place), recording each filled field in
 * m->defaulted and the class in m->defaults_from. Returns 0, or -1 with e
 * naming path for a hybrid model or an inconsistent alias. */
int arch_normalize(json_t *cfg, const char *model_type, const char *path, struct model *m, struct err *e);

/* Records key = value as defaulted in m (derived: computed from other
 * fields rather than a class constant). */
void arch_note_default(struct model *m, const char *key, const json_t *value, bool derived);

/* Matrices in one feed-forward block: 3 for a gated MLP (SwiGLU, GeGLU:
 * gate, up, down), 2 for GPT-2's and Falcon's plain MLP (up, down). */
int arch_ffn_matrices(const char *model_type);

#endif
