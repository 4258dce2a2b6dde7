/*
 * sampling: which path vLLM V1's sampler takes for a workload's sampling
 * parameters and the model's published generation_config defaults
 * (genconfig.h, read with the model) that vLLM applies under
 * --generation-config auto (its default).
 *
 * vLLM V1 (v0.15, vllm/v1/sample/sampler.py and ops/topk_topp_sampler.py):
 *   - every request greedy (temperature < 1e-5): argmax only, top-k and
 *     top-p skipped (Sampler.sample returns before them);
 *   - otherwise, no request with top-p and none with top-k: softmax,
 *     exponential noise, argmax (random_sample), no sort;
 *   - top-k without top-p: torch.topk (apply_top_k_only), no sort;
 *   - any top-p: a sort of the whole vocabulary (apply_top_k_top_p; the
 *     FlashInfer sampler is opt-in, VLLM_USE_FLASHINFER_SAMPLER).
 * A request's own parameter wins; one it does not send takes the model's
 * generation_config.json value under "auto", else vLLM's default
 * (temperature 1, top_p 1, top_k off). `vllm bench serve` sends only the
 * --temperature/--top-p/--top-k given (it "no longer sets temperature==0
 * (greedy) in requests by default", vllm/benchmarks/serve.py); inference-
 * perf sends none (inference_perf/apis/completion.py).
 *
 * Invariant: a model without a generation_config file is assumed to set
 * a top_p below 1 (under auto), so sent no parameter it keeps the top-p
 * path servesim charged before it read sampling parameters.
 */
#ifndef SERVESIM_SAMPLING_H
#define SERVESIM_SAMPLING_H

#include <stdbool.h>
#include <stdint.h>

#include "genconfig.h"

enum sampler_path {
	SAMPLER_TOP_P,    /* a sort of the whole vocabulary (the default) */
	SAMPLER_TOP_K,    /* torch.topk, no sort */
	SAMPLER_RANDOM,   /* softmax + exponential + argmax */
	SAMPLER_GREEDY,   /* argmax only */
	SAMPLER_N_PATHS
};

/* A workload's sampling parameters, as `vllm bench serve` sends them
 * (--temperature, --top-p, --top-k, --min-p); SAMPLING_NOT_SENT: not
 * sent. top_k 0 or -1 sent means off, min_p 0 likewise (vLLM). */
struct sampling_params {
	double temperature;
	double top_p;
	int64_t top_k;
	double min_p;
};

#define SAMPLING_NOT_SENT (-2)

/* Whether the min-p filter runs (vLLM's MinPLogitsProcessor, argmax
 * invariant: on every path but greedy) for requests sent sp: a min_p > 0
 * sent, else (under gen_auto) the generation_config gen's. Cannot fail. */
bool sampling_min_p(const struct sampling_params *sp, bool gen_auto, const struct genconfig *gen,
		    enum sampler_path path);

/* Whether the requests carry a repetition, frequency or presence penalty:
 * only the model's generation_config gen sets one (under gen_auto), since
 * neither `vllm bench serve` nor inference-perf sends one. Cannot fail. */
bool sampling_penalties(bool gen_auto, const struct genconfig *gen);

/* The path's name ("top-p sort", …), for explain. */
const char *sampling_path_name(enum sampler_path p);

/* The path vLLM's sampler takes for requests sent sp, with the model's
 * generation_config gen applied when gen_auto (--generation-config auto).
 * vocab: the model's (a top-k at or past it is off). Cannot fail. */
enum sampler_path sampling_path(const struct sampling_params *sp, bool gen_auto, const struct genconfig *gen,
				double vocab);

#endif
