#include "obscheck.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "evq.h"

/* Where each format's readers (runobs.c) take each metric from, for
 * messages. A new format adds its row. */
static const struct obs_source {
	const char *format;
	const char *key[OBS_N_METRICS];
} obs_sources[] = {
	{ "vllm-bench", { "mean_ttft_ms", "mean_itl_ms", "mean_e2el_ms" } },
	{ "sglang-bench", { "mean_ttft_ms", "mean_itl_ms", "mean_e2e_latency_ms" } },
	{ "ollama",
	  { "prompt_eval_duration", "eval_duration / eval_count",
	    "prompt_eval_duration + eval_duration" } },
	{ "llama-bench",
	  { "avg_ns (pp test)", "avg_ns / n_gen (tg test)", "avg_ns (pp+tg test)" } },
	{ "prometheus",
	  { "vllm:time_to_first_token_seconds_sum / _count",
	    "vllm:inter_token_latency_seconds_sum / _count",
	    "vllm:e2e_request_latency_seconds_sum / _count" } },
	{ "calibration", { "ttft_mean", "itl_mean", "e2e_mean" } },
};

static const char *source_key(const char *format, int m)
{
	for (size_t i = 0; i < sizeof obs_sources / sizeof *obs_sources; i++)
		if (!strcmp(obs_sources[i].format, format))
			return obs_sources[i].key[m];
	return runobs_metric_names[m];
}

int obscheck_values(const struct runobs *ob, const char *path, struct err *e)
{
	for (int i = 0; i < ob->n_pts; i++)
		for (int m = 0; m < OBS_N_METRICS; m++) {
			double v = ob->pts[i].ms[m];
			if (isnan(v) || (v > 0 && v <= EVQ_HORIZON_S * 1e3))
				continue;
			char stage[32] = "";
			if (ob->pts[i].stage >= 0)
				snprintf(stage, sizeof stage, " (stage %d)", ob->pts[i].stage);
			return err_set(e,
				       "%s: %s%s: %s: expected a measured %s latency in (0, %g] "
				       "ms, got %g ms",
				       path, ob->id, stage, source_key(ob->format, m),
				       runobs_metric_names[m], EVQ_HORIZON_S * 1e3, v);
		}
	return 0;
}
