/*
 * sampling: the sampler's path from the sampling parameters (sampling.h).
 */
#include "sampling.h"

#define NS SAMPLING_NOT_SENT

/* vLLM's eps for greedy (vllm/v1/sample/sampler.py _SAMPLING_EPS). */
#define GREEDY_EPS 1e-5

const char *sampling_path_name(enum sampler_path p)
{
	static const char *const names[SAMPLER_N_PATHS] = { "top-p, a sort of the vocabulary",
							    "top-k, torch.topk", "random, no filter",
							    "greedy, argmax only" };
	return p >= 0 && p < SAMPLER_N_PATHS ? names[p] : "?";
}

bool sampling_min_p(const struct sampling_params *sp, bool gen_auto, const struct genconfig *gen,
		    enum sampler_path path)
{
	double m = sp->min_p >= 0 ? sp->min_p : gen_auto && gen->present ? gen->min_p : 0;
	return path != SAMPLER_GREEDY && m > 0;
}

bool sampling_penalties(bool gen_auto, const struct genconfig *gen)
{
	return gen_auto && gen->present && genconfig_penalty(gen);
}

enum sampler_path sampling_path(const struct sampling_params *sp, bool gen_auto, const struct genconfig *gen,
				double vocab)
{
	/* A model without a file: most instruct models' files set top_p
	 * (Meta's, Qwen's in models/generation_config/), so servesim assumes
	 * one (what it charged before it read sampling parameters).
	 * estimate: no count of models behind "most". */
	struct genconfig assumed;
	const struct genconfig *g = NULL;
	if (gen_auto && gen->present) {
		g = gen;
	} else if (gen_auto) {
		genconfig_none(&assumed);
		assumed.top_p = 0.9;
		g = &assumed;
	}
	double t = sp->temperature >= 0 ? sp->temperature : g && g->temperature >= 0 ? g->temperature : 1;
	double p = sp->top_p >= 0 ? sp->top_p : g && g->top_p >= 0 ? g->top_p : 1;
	int64_t k = sp->top_k != NS ? sp->top_k : g && g->top_k != GENCONFIG_UNSET ? g->top_k : -1;
	if (t < GREEDY_EPS)
		return SAMPLER_GREEDY;
	if (p < 1)
		return SAMPLER_TOP_P;
	if (k > 0 && (double)k < vocab)
		return SAMPLER_TOP_K;
	return SAMPLER_RANDOM;
}
