/*
 * routerskew: the family defaults of the router's skew (routerskew.h).
 *
 * How a row is set: a published per-expert (or per-EP-rank) load count,
 * recorded while a real model served or scored text, is matched by the
 * exponent whose Zipf shares (the saturating law of sim/perf/moe.c) give
 * the same statistic. tests/test_moe.c recomputes each statistic from the
 * shipped exponent against the published figure.
 */
#include "routerskew.h"

#include <stdint.h>
#include <string.h>

struct skew_row {
	const char *model_type;
	int64_t n_experts;   /* the shape measured (GGUF's deepseek2 also names DeepSeek-V2's 160) */
	double skew;
	const char *source;
};

static const struct skew_row rows[] = {
	/* DeepSeek-V3 / R1 (E 256, top-8): TensorRT-LLM
	 * examples/ep_load_balancer/README.md, DeepSeek-R1 at EP32 (8
	 * experts a rank in id order), iterations 100-200 of trtllm-bench,
	 * per-layer rank loads of 1024 routed tokens a rank: std 491.65
	 * (CV 0.480) and (max - mean) / mean 1.564, averaged over the MoE
	 * layers. Expert ids carry no popularity order, so a rank holds 8
	 * experts drawn at random: Zipf 0.66 gives that CV, 0.635 that
	 * imbalance; 0.65 meets both within 6%. */
	{ "deepseek_v3", 256, 0.65,
	  "DeepSeek-R1 rank loads at EP32 (TensorRT-LLM ep_load_balancer README: CV 0.48, imbalance 1.56)" },
	/* Not a row: Qwen3-30B-A3B's llama-imatrix counts (gpu-container's
	 * routing de-risk, mcp-tool-shop-org.github.io/gpu-container/handbook/
	 * derisk: ~1k tokens of a few prose / code / math prompts; 1 - H/ln E
	 * = 0.111, top expert 4.3%, 65 of 128 experts for 90% of picks).
	 * That is one short stream's concentration, where a serving step's
	 * tokens come from as many independent requests (TensorRT-LLM's
	 * tech blog 4 shows a single request's hot experts differ from
	 * another's), and its three figures ask three Zipf exponents (0.48,
	 * 0.78, 1.15). Llama 4, Mixtral, gpt-oss: no measurement found. */
};

double model_router_skew(const struct model *m, double given, const char **source)
{
	if (given >= 0) {
		if (source)
			*source = "[engine] moe_router_skew";
		return given;
	}
	if (m->n_experts > 1)
		for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
			if (!strcmp(m->model_type, rows[i].model_type) && m->n_experts == rows[i].n_experts) {
				if (source)
					*source = rows[i].source;
				return rows[i].skew;
			}
	if (source)
		*source = "uniform: no published expert-load measurement for this family";
	return 0;
}
