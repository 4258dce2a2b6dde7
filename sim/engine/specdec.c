/*
 * specdec: the speculative-decoding methods and their draws.
 */
#include "specdec.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "list.h"
#include "num.h"
#include "precision.h"
#include "rowtab.h"
#include "engine.h"
#include "rngstream.h"

const struct specdec_method specdec_methods[] = {
	{ "ngram", SPEC_COST_NONE, false, false, "it has no drafter model",
	  "vLLM's NgramProposer: a prompt lookup on the CPU (its cost not modelled)" },
	/* vllm/v1/spec_decode/draft_model.py: _raise_if_draft_tp_mismatch. */
	{ "draft", SPEC_COST_MODEL, true, false, "vLLM V1's draft-model proposer requires it",
	  "a smaller model of the same tokenizer, k decode passes" },
	/* EAGLE3 heads at draft_tensor_parallel_size 1 under TP 4 targets:
	 * vLLM's EAGLE3-on-AMD blog (MiniMax-M2.5, Kimi-K2.5). */
	{ "eagle", SPEC_COST_MODEL, true, true, NULL,
	  "an EAGLE head (one decoder layer and the LM head, its own config), k passes" },
	{ "mtp", SPEC_COST_MTP, false, true,
	  "its module is costed as a target layer; another parallelism is not modelled",
	  "the model's multi-token-prediction layer (DeepSeek-V3), costed as one target layer per pass" },
	{ NULL, 0, false, false, NULL, NULL },
};

const struct specdec_method *specdec_find(const char *name)
{
	return rowtab_find(specdec_methods, sizeof *specdec_methods, name);
}

void specdec_list(char *buf, size_t cap)
{
	rowtab_list(specdec_methods, sizeof *specdec_methods, buf, cap);
}

int specdec_parse_acceptance(const char *text, int k, double *p)
{
	int n = list_doubles(text, p, k, NULL, 0);
	if (n < 0)
		return -1;
	for (int i = 0; i < n; i++)
		if (!(p[i] >= 0 && p[i] <= 1))
			return -1;
	for (int i = n; i < k; i++)
		p[i] = p[n - 1];
	return 0;
}

int specdec_check_draft_tp(const struct specdec_method *m, int64_t tp, int64_t dtp, const char *at,
			   const char *section, struct err *e)
{
	if (dtp != tp && dtp != 1)
		return err_set(e, "%s: [%s] draft_tensor_parallel_size: expected 1 or the target's tensor_parallel_size %lld (vLLM allows no other), got %lld",
			       at, section, (long long)tp, (long long)dtp);
	if (dtp != tp && m->target_tp_only)
		return err_set(e, "%s: [%s] draft_tensor_parallel_size: expected the target's tensor_parallel_size %lld for speculative_method %s (%s), got %lld",
			       at, section, (long long)tp, m->name, m->target_tp_only, (long long)dtp);
	return 0;
}

int specdec_init(struct specdec *s, const struct engine_setup *setup, struct err *e)
{
	const struct engine_config *cfg = setup->cfg;
	memset(s, 0, sizeof *s);
	if (!cfg->vllm.speculative_method[0])
		return 0;
	s->method = specdec_find(cfg->vllm.speculative_method);
	s->k = (int)cfg->vllm.num_speculative_tokens;
	/* scenario_load checked the method and the acceptance list. */
	if (!s->method || specdec_parse_acceptance(cfg->vllm.speculative_acceptance, s->k, s->accept))
		return err_set(e, "%s: [engine] speculative_method: bad speculative configuration", setup->path);
	int64_t tp = cfg->tensor_parallel_size, dtp = cfg->vllm.draft_tensor_parallel_size ? cfg->vllm.draft_tensor_parallel_size : tp;
	if (specdec_check_draft_tp(s->method, tp, dtp, setup->path, "engine", e))
		return -1;
	s->draft_tp = (int)dtp;
	if (s->method->cost == SPEC_COST_MODEL) {
		if (model_load_named(&s->draft_model, cfg->vllm.speculative_model, e))
			return err_prefix(e, "%s: [engine] speculative_model", setup->path);
		perf_init(&s->draft, &s->draft_model, setup->hw, setup->weights, s->draft_tp,
			  kv_dtypes[cfg->kv_cache_dtype].bytes_per_elem);
	}
	s->rng = rng_stream("speculative", setup->seed);
	return 0;
}

void specdec_free(struct specdec *s)
{
	if (s->rng)
		gsl_rng_free(s->rng);
	s->rng = NULL;
}

double specdec_draft_s(const struct specdec *s, const struct perf_step *draft, double target_decode_s,
		       int64_t target_layers)
{
	if (!s->method || draft->seqs == 0)
		return 0;
	switch (s->method->cost) {
	case SPEC_COST_MODEL:
		return s->k * perf_step_time(&s->draft, draft, NULL);
	case SPEC_COST_MTP:
		return s->k * target_decode_s / (double)target_layers;
	default:
		return 0;
	}
}

/* m's weights without its vocabulary tables (embedding and LM head). */
static double body_bytes(const struct model *m, const struct precision *w)
{
	struct model_params p;
	struct model_group_bytes b;
	model_params(m, &p);
	model_group_bytes(m, w, &b);
	double tables = (m->tie_embeddings ? 1 : 2) * p.embed * b.embed;
	return model_weight_bytes(m, w) - tables;
}

void specdec_memory(const struct specdec *s, const struct model *target, const struct precision *w, int tp,
		    double kv_bytes_per_elem, double *weight_bytes, double *kv_bytes_per_token)
{
	*weight_bytes = *kv_bytes_per_token = 0;
	if (!s->method)
		return;
	const struct model *dm = &s->draft_model;
	if (s->method->cost == SPEC_COST_MTP) {
		double layers = (double)target->n_layers;
		*weight_bytes = body_bytes(target, w) / layers / tp;
		*kv_bytes_per_token = model_kv_bytes_per_token_per_rank(target, kv_bytes_per_elem, tp) / layers;
	} else if (s->method->cost == SPEC_COST_MODEL) {
		int dtp = s->draft_tp;
		*weight_bytes = s->method->shares_tables ? body_bytes(dm, w) / dtp : model_weight_bytes_per_gpu(dm, w, dtp, 1);
		*kv_bytes_per_token = model_kv_bytes_per_token_per_rank(dm, kv_bytes_per_elem, dtp);
	}
}

int specdec_accept(struct specdec *s, int d)
{
	int a = 0;
	while (a < d && gsl_rng_uniform(s->rng) < s->accept[a])
		a++;
	return a;
}
