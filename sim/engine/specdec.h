/*
 * specdec: vLLM's speculative decoding (--speculative-config), for the
 * vLLM engine. The methods are rows of a const table looked up by name
 * ([engine] speculative_method): each says whether it needs a drafter
 * model and how its proposals cost.
 *
 * Each decode step of a running request proposes k tokens (the drafter:
 * k passes of its own model over the batch's drafting sequences, or a
 * prompt n-gram lookup on the CPU), the target verifies k + 1 tokens in
 * one wider step, and the request emits the accepted run plus one (the
 * corrected or bonus token), as vLLM's rejection sampler does. Position i
 * is accepted with probability p_i given the ones before it were
 * (speculative_acceptance: one value for all, or a list per position);
 * the draws come from the run's "speculative" random stream.
 *
 * vLLM turns async scheduling off with speculative decoding (#27614).
 */
#ifndef SERVESIM_SPECDEC_H
#define SERVESIM_SPECDEC_H

#include <gsl/gsl_rng.h>
#include <stdbool.h>
#include <stdint.h>

#include "err.h"
#include "model.h"
#include "steptime.h"

#define SPECDEC_MAX_TOKENS 16

enum specdec_cost {
	SPEC_COST_NONE,      /* ngram: a CPU lookup in the prompt, no GPU pass */
	SPEC_COST_MODEL,     /* draft, eagle: k decode passes of the drafter's model */
	SPEC_COST_MTP,       /* mtp: k passes of one target layer (the model's MTP module) */
};

struct specdec_method {
	const char *name;
	int cost;            /* enum specdec_cost */
	bool needs_model;    /* speculative_model names the drafter */
	bool shares_tables;  /* uses the target's embedding and LM head (not its own) */
	/* NULL: draft_tensor_parallel_size may be 1 under a wider target;
	 * else why it must be the target's. */
	const char *target_tp_only;
	const char *source;
};

extern const struct specdec_method specdec_methods[];   /* NULL-name terminated */

/* The method called name, or NULL. */
const struct specdec_method *specdec_find(const char *name);
void specdec_list(char *buf, size_t cap);   /* "ngram, draft, eagle, mtp" */

/* Parses "0.7" or "0.9,0.7,0.5" into p[0..k) (a shorter list repeats its
 * last value). Returns 0, or -1 when a value is not a probability in [0, 1]
 * or the list is longer than k. */
int specdec_parse_acceptance(const char *text, int k, double *p);

struct specdec {
	const struct specdec_method *method;   /* NULL: off */
	int k;                                 /* num_speculative_tokens */
	double accept[SPECDEC_MAX_TOKENS];
	struct model draft_model;
	int draft_tp;                          /* the drafter's tensor parallelism */
	struct perf draft;                     /* SPEC_COST_MODEL: the drafter's step model, at draft_tp */
	gsl_rng *rng;                          /* the "speculative" stream */
};

struct engine_setup;

/* Sets *s up from the scenario's [engine] keys (off when
 * speculative_method is unset): loads the drafter's model config and
 * checks its tensor parallelism (draft_tensor_parallel_size) as vLLM
 * does: 1 or the target's (SpeculativeConfig._verify_and_get_draft_tp),
 * the target's for a draft model (V1's DraftModelProposer refuses
 * another: the ranks' compiled drafters would collide); an EAGLE head at
 * 1 runs whole on every rank of the target (weights, KV and passes of one
 * GPU, no all-reduce). ngram has no drafter and mtp's module is costed as
 * a target layer, so for them only the target's is accepted. Returns 0,
 * or -1 with e naming the file and key. */
int specdec_init(struct specdec *s, const struct engine_setup *setup, struct err *e);
void specdec_free(struct specdec *s);

/* The drafter's tensor parallelism dtp under a target at tp, as
 * specdec_init checks it (at: where the key was set, for the error).
 * Returns 0, or -1 with e naming at, [section] and the key. */
int specdec_check_draft_tp(const struct specdec_method *m, int64_t tp, int64_t dtp, const char *at,
			   const char *section, struct err *e);

/* The drafter's time (seconds) for a step whose drafting sequences are
 * summed in draft (one decode token each, at their contexts) and whose
 * target decode-only step would take target_decode_s. */
double specdec_draft_s(const struct specdec *s, const struct perf_step *draft, double target_decode_s,
		       int64_t target_layers);

/* The drafter's memory on each target GPU, as vLLM gives it: its weights
 * are loaded beside the target's (with the target's tensor parallelism)
 * before the KV pool is sized, and its attention layers get KV in the
 * same blocks as the target's (one block table; a block's bytes are the
 * sum over both models' layers), so the target's pool shrinks twice.
 * draft: the drafter config's weights and KV; eagle: the head's weights
 * without the vocabulary tables it shares with the target (vLLM's
 * EagleProposer.load_model shares embed_tokens and lm_head) and its KV;
 * mtp: one target layer of each (estimate: the MTP module is one decoder
 * layer of the target's shape); ngram: none. A drafter at its own tensor
 * parallelism (draft_tp) holds 1/draft_tp of them on each GPU. tp is the
 * target's. *weight_bytes per GPU, *kv_bytes_per_token per rank. Cannot
 * fail. */
void specdec_memory(const struct specdec *s, const struct model *target, const struct precision *w, int tp,
		    double kv_bytes_per_elem, double *weight_bytes, double *kv_bytes_per_token);

/* How many of d proposed tokens the target accepts (a run from the first). */
int specdec_accept(struct specdec *s, int d);

#endif
