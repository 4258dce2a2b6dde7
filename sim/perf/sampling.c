/*
 * sampling: the sampler's path from the sampling parameters (sampling.h).
 */
#include "sampling.h"

#include <string.h>

#define NS SAMPLING_NOT_SENT

/* vLLM's eps for greedy (vllm/v1/sample/sampler.py _SAMPLING_EPS). */
#define GREEDY_EPS 1e-5

/* The sampling fields of a model's generation_config.json that vLLM reads
 * (ModelConfig.get_diff_sampling_param: temperature, top_p, top_k,
 * min_p, repetition_penalty, max_new_tokens; do_sample is ignored).
 * SAMPLING_NOT_SENT: the file has no such field. By models/ file id. */
static const struct gen_config {
	const char *model;
	struct sampling_params sp;
	bool penalty;            /* repetition_penalty (or frequency/presence) set */
	const char *source;
} gen_configs[] = {
	/* Meta's files: "do_sample": true, "temperature": 0.6, "top_p": 0.9
	 * (Llama-2 base and chat since July 2023, Llama-3.1 base and
	 * Instruct). */
	{ "llama-2-7b", { 0.6, 0.9, NS, NS }, false, "meta-llama/Llama-2-7b-hf generation_config.json" },
	{ "llama-2-70b", { 0.6, 0.9, NS, NS }, false, "meta-llama/Llama-2-70b-hf generation_config.json" },
	{ "llama-3.1-8b", { 0.6, 0.9, NS, NS }, false, "meta-llama/Llama-3.1-8B generation_config.json" },
	{ "llama-3.1-70b", { 0.6, 0.9, NS, NS }, false, "meta-llama/Llama-3.1-70B generation_config.json" },
	{ "llama-3.1-405b", { 0.6, 0.9, NS, NS }, false,
	  "meta-llama/Llama-3.1-405B generation_config.json" },
	/* uncertain: Meta's Llama-4 Instruct file as the Llama-3 ones (the
	 * RedHatAI FP8 copy keeps it). */
	{ "llama-4-scout-17b-16e", { 0.6, 0.9, NS, NS }, false,
	  "meta-llama/Llama-4-Scout-17B-16E-Instruct generation_config.json (uncertain)" },
	/* Qwen's model card: temperature 0.7, top_p 0.8, top_k 20,
	 * repetition_penalty 1.05 (its generation_config.json). */
	{ "qwen2.5-7b-instruct", { 0.7, 0.8, 20, NS }, true, "Qwen/Qwen2.5-7B-Instruct generation_config.json" },
	/* Files with token ids only: vLLM's defaults apply (temperature 1,
	 * no top-p, no top-k). uncertain: recalled, not read here. */
	{ "mistral-nemo-12b", { NS, NS, NS, NS }, false,
	  "mistralai/Mistral-Nemo-Instruct-2407 generation_config.json: token ids only (uncertain)" },
	{ "yi-34b", { NS, NS, NS, NS }, false, "01-ai/Yi-34B generation_config.json: token ids only (uncertain)" },
};

const char *sampling_path_name(enum sampler_path p)
{
	static const char *const names[SAMPLER_N_PATHS] = { "top-p, a sort of the vocabulary",
							    "top-k, torch.topk", "random, no filter",
							    "greedy, argmax only" };
	return p >= 0 && p < SAMPLER_N_PATHS ? names[p] : "?";
}

static const struct gen_config *gen_config_find(const char *model_id)
{
	for (size_t i = 0; model_id && i < sizeof gen_configs / sizeof *gen_configs; i++)
		if (!strcmp(gen_configs[i].model, model_id))
			return &gen_configs[i];
	return NULL;
}

/* A model without an entry: most instruct models' files set top_p (Meta's,
 * Qwen's above), so servesim assumes one (what it charged before it read
 * sampling parameters). estimate: no count of models behind "most". */
static const struct gen_config assumed = { "", { NS, 0.9, NS, NS }, false, "assumed: a top_p below 1" };

bool sampling_min_p(const struct sampling_params *sp, enum sampler_path path)
{
	return path != SAMPLER_GREEDY && sp->min_p > 0;
}

bool sampling_penalties(bool gen_auto, const char *model_id)
{
	const struct gen_config *g = gen_auto ? gen_config_find(model_id) : NULL;
	return g && g->penalty;
}

enum sampler_path sampling_path(const struct sampling_params *sp, bool gen_auto, const char *model_id,
				double vocab)
{
	const struct gen_config *g = NULL;
	if (gen_auto) {
		g = gen_config_find(model_id);
		if (!g)
			g = &assumed;
	}
	double t = sp->temperature >= 0 ? sp->temperature : g && g->sp.temperature >= 0 ? g->sp.temperature : 1;
	double p = sp->top_p >= 0 ? sp->top_p : g && g->sp.top_p >= 0 ? g->sp.top_p : 1;
	int64_t k = sp->top_k != NS ? sp->top_k : g && g->sp.top_k != NS ? g->sp.top_k : -1;
	if (t < GREEDY_EPS)
		return SAMPLER_GREEDY;
	if (p < 1)
		return SAMPLER_TOP_P;
	if (k > 0 && (double)k < vocab)
		return SAMPLER_TOP_K;
	return SAMPLER_RANDOM;
}
