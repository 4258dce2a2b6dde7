/*
 * report_prom: vLLM's metrics (C12 and the rest of vllm/v1/metrics/
 * loggers.py) with vLLM's names, labels and buckets, or llama-server's for
 * Ollama and llama.cpp, in two renderings of one table:
 *   - Prometheus exposition text, as a scrape at the end of the run
 *     (report_prom);
 *   - OpenMetrics text with a scrape every few simulated seconds, each
 *     sample timestamped (report_openmetrics), which `promtool tsdb
 *     create-blocks-from openmetrics` turns into TSDB blocks.
 * Each family has one series per engine: engine="0" for a single engine,
 * engine="i" for each replica of a cluster (as vLLM labels the engine cores
 * of a data-parallel deployment, under the same names). How a family is
 * rendered from the request records, time series and timeline is
 * promfam.c's; llama-server's writer is report_prom_llama.c.
 */
#include "report_int.h"
#include "omsnap.h"
#include "promfam.h"
#include "report_replicas.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "timeline.h"
#include "wholefile.h"
#include "xalloc.h"

const double report_ttft_buckets[] = { 0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75,
				       1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0 };
const double report_prefill_token_buckets[] = { 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0 };
const double report_params_n_buckets[] = { 1, 2, 5, 10, 20 };
const double report_e2e_buckets[] = { 0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0,
				      40.0, 50.0, 60.0, 120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0 };

const size_t report_n_ttft_buckets = sizeof report_ttft_buckets / sizeof *report_ttft_buckets;
const size_t report_n_e2e_buckets = sizeof report_e2e_buckets / sizeof *report_e2e_buckets;
const size_t report_n_prefill_token_buckets =
	sizeof report_prefill_token_buckets / sizeof *report_prefill_token_buckets;
const size_t report_n_params_n_buckets = sizeof report_params_n_buckets / sizeof *report_params_n_buckets;

struct report_le report_le_text(double v)
{
	struct report_le b;
	snprintf(b.s, sizeof b.s, v == floor(v) ? "%.1f" : "%g", v);
	return b;
}

/* ---- vLLM: one table, two renderings ---- */

/* vLLM's build_1_2_5_buckets(max_model_len): 1, 2, 5, 10, … up to it. */
size_t report_buckets_125(int64_t max_value, double *out, size_t cap)
{
	size_t n = 0;
	for (double p = 1; n < cap; p *= 10)
		for (int i = 0; i < 3 && n < cap; i++) {
			double v = p * (i == 0 ? 1 : i == 1 ? 2 : 5);
			if (v > (double)max_value)
				return n;
			out[n++] = v;
		}
	return n;
}

/* vllm:cache_config_info's labels for one engine: CacheConfig.metrics_info(),
 * the keys servesim knows. */
static void cache_config_labels(char *labels, size_t cap, const struct scenario *sc,
				const struct engine_stats *es, int engine)
{
	snprintf(
		labels, cap,
		"block_size=\"%lld\",cache_dtype=\"%s\",enable_prefix_caching=\"%s\",engine=\"%d\","
		"gpu_memory_utilization=\"%g\",num_cpu_blocks=\"%lld\",num_gpu_blocks=\"%lld\"",
		(long long)es->block_size, kv_dtypes[sc->engine.kv_cache_dtype].name,
		sc->engine.enable_prefix_caching ? "True" : "False", engine,
		sc->engine.gpu_memory_utilization,
		(long long)es->num_cpu_blocks, (long long)es->num_gpu_blocks);
}

/* vllm:cache_config_info: the labels above on a gauge set to 1, one per
 * engine. */
static void cache_config_info(const struct prom_out *all)
{
	if (!all->openmetrics)
		promfam_family(all, "vllm:cache_config_info", "gauge", "Information of the LLMEngine CacheConfig");
	else /* OpenMetrics has an info type: family vllm:cache_config, sample
	      * vllm:cache_config_info, the same series vLLM's gauge gives. */
		fprintf(all->f, "# HELP vllm:cache_config Information of the LLMEngine CacheConfig\n"
				"# TYPE vllm:cache_config info\n");
	FOR_SERIES(all, o) {
		char labels[768];
		cache_config_labels(labels, sizeof labels, &o->res->sc, o->cur->es, o->cur->engine);
		for (size_t k = 0; k < o->n_scrapes; k++) {
			char ts[48];
			fprintf(o->f, "vllm:cache_config_info{%s} 1%s\n", labels, promfam_stamp(o, k, ts, sizeof ts));
		}
	}
}

/* Bucket edges of the histograms beyond C12's; EK_TL_*: from the timeline
 * (token gaps, step sizes), not from the request records. */
enum edges_kind { EK_E2E, EK_PREFILL_TOKEN, EK_TPOT, EK_125, EK_PARAMS_N, EK_TL_GAPS, EK_TL_ITER };

static const struct more_hist {
	const char *name, *help;
	enum req_metric m;
	enum edges_kind edges;
} more_hists[] = {
	{ "vllm:request_queue_time_seconds",
	  "Histogram of time spent in WAITING phase for request.", RM_QUEUE, EK_E2E },
	{ "vllm:request_inference_time_seconds",
	  "Histogram of time spent in RUNNING phase for request.", RM_INFERENCE, EK_E2E },
	{ "vllm:request_prefill_time_seconds",
	  "Histogram of time spent in PREFILL phase for request.", RM_PREFILL, EK_E2E },
	{ "vllm:request_decode_time_seconds",
	  "Histogram of time spent in DECODE phase for request.", RM_DECODE, EK_E2E },
	{ "vllm:time_per_prefill_token_request_seconds",
	  "Time spent per token during prefill phase in seconds", RM_PREFILL_PER_TOKEN,
	  EK_PREFILL_TOKEN },
	{ "vllm:request_time_per_output_token_seconds",
	  "Histogram of time_per_output_token_seconds per request.", RM_REQUEST_TPOT, EK_TPOT },
	/* The name vLLM before 0.11 gave inter_token_latency_seconds, which
	 * its example Grafana dashboard still plots. */
	{ "vllm:time_per_output_token_seconds", "Histogram of time per output token in seconds.",
	  RM_ONE, EK_TL_GAPS },
	{ "vllm:request_prompt_tokens", "Number of prefill tokens processed.", RM_PROMPT_TOKENS,
	  EK_125 },
	{ "vllm:request_generation_tokens", "Number of generation tokens processed.",
	  RM_GENERATION_TOKENS, EK_125 },
	{ "vllm:iteration_tokens_total", "Histogram of number of tokens per engine_step.", RM_ONE,
	  EK_TL_ITER },
	/* vllm bench serve sends max_tokens = the output length, n = 1. */
	{ "vllm:request_max_num_generation_tokens",
	  "Histogram of maximum number of requested generation tokens.", RM_GENERATION_TOKENS,
	  EK_125 },
	{ "vllm:request_params_n", "Histogram of the n request parameter.", RM_ONE, EK_PARAMS_N },
	{ "vllm:request_params_max_tokens", "Histogram of the max_tokens request parameter.",
	  RM_GENERATION_TOKENS, EK_125 },
};

/* The edges of kind k (not EK_TL_*), in buf when they depend on the
 * engine (vLLM's build_1_2_5_buckets(max_model_len)). */
static const double *more_edges(enum edges_kind k, const struct engine_stats *es, double *buf,
				size_t cap, size_t *n)
{
	switch (k) {
	case EK_E2E:
		*n = report_n_e2e_buckets;
		return report_e2e_buckets;
	case EK_PREFILL_TOKEN:
		*n = report_n_prefill_token_buckets;
		return report_prefill_token_buckets;
	case EK_TPOT:
		*n = TIMELINE_N_ITL;
		return timeline_itl_edges;
	case EK_PARAMS_N:
		*n = report_n_params_n_buckets;
		return report_params_n_buckets;
	case EK_125:
	case EK_TL_GAPS:
	case EK_TL_ITER:
		break;
	}
	*n = report_buckets_125(es->max_model_len, buf, cap);
	return buf;
}

/* A histogram of more_hists over request records, per series (the edges
 * from each series' engine: vLLM's build_1_2_5_buckets(max_model_len)). */
static void hist_more(const struct prom_out *all, const struct more_hist *mh)
{
	promfam_family(all, mh->name, "histogram", mh->help);
	FOR_SERIES(all, o) {
		double buf[64];
		size_t n_edges;
		const double *edges = more_edges(mh->edges, o->cur->es, buf, sizeof buf / sizeof *buf, &n_edges);
		promfam_hist_obs_series(o, mh->name, mh->m, edges, n_edges);
	}
}

/* The histograms of vllm/v1/metrics/loggers.py beyond C12's; with
 * timeline_only, those from the timeline only (token gaps, step sizes). */
static void more_metrics(const struct prom_out *o, bool timeline_only)
{
	for (size_t h = 0; h < sizeof more_hists / sizeof *more_hists; h++) {
		const struct more_hist *mh = &more_hists[h];
		if (mh->edges == EK_TL_GAPS || mh->edges == EK_TL_ITER)
			promfam_hist_timeline(o, mh->name, mh->help, mh->edges == EK_TL_GAPS);
		else if (!timeline_only)
			hist_more(o, mh);
	}
}

/* The series of a run: one per cluster replica (engine="i", the requests
 * routed to it, its own gauges and timeline), or the one engine's
 * (engine="0"). Caller frees. */
static struct prom_series *run_series(const struct run_result *res, int *n)
{
	*n = res->n_replicas ? res->n_replicas : 1;
	struct prom_series *ser = xcalloc((size_t)*n, sizeof *ser);
	char model[256];
	promfam_label_value(model, sizeof model, res->model.id);
	for (int i = 0; i < *n; i++) {
		struct prom_series *s = &ser[i];
		if (res->n_replicas) {
			const struct replica_result *rr = &res->replicas[i];
			*s = (struct prom_series){ .replica = i, .ts = rr->ts, .n_ts = rr->n_ts, .tl = rr->timeline,
						   .itl = &rr->itl, .es = &rr->engine,
						   .peak_waiting = (double)rr->peak_waiting, .engine = i };
		} else {
			*s = (struct prom_series){ .replica = -1, .ts = res->ts, .n_ts = res->n_ts, .tl = res->timeline,
						   .itl = &res->all.itl, .es = &res->engine,
						   .peak_waiting = (double)res->peak_waiting, .engine = 0 };
		}
		snprintf(s->labels, sizeof s->labels, "model_name=\"%s\",engine=\"%d\"", model, i);
	}
	return ser;
}

static void vllm_metrics(struct prom_out *o)
{
	if (!o->openmetrics)
		fprintf(o->f, "# servesim: the scrape vLLM's /metrics would give at the end of the "
			      "run\n");
	promfam_gauge_ts(o, "vllm:num_requests_running", "Number of requests in model execution batches.",
		 G_RUNNING);
	promfam_gauge_ts(o, "vllm:num_requests_waiting", "Number of requests waiting to be processed.",
		 G_WAITING);
	promfam_gauge_ts(o, "vllm:kv_cache_usage_perc", "KV-cache usage. 1 means 100 percent usage.", G_KV);
	if (!o->openmetrics) {
		promfam_gauge_const(o, "servesim:peak_num_requests_waiting",
			    "Peak of vllm:num_requests_waiting during the run.", false);
		promfam_gauge_const(o, "servesim:peak_kv_cache_usage_perc",
			    "Peak of vllm:kv_cache_usage_perc during the run.", true);
	}
	promfam_counter_obs(o, "vllm:num_preemptions", "Cumulative number of preemption from the engine.",
		    "", RM_PREEMPTIONS, false);
	promfam_counter_obs(o, "vllm:prompt_tokens", "Number of prefill tokens processed.", "",
		    RM_PROMPT_TOKENS, false);
	promfam_counter_obs(o, "vllm:generation_tokens", "Number of generation tokens processed.", "",
		    RM_ONE, true);
	promfam_counter_total(o, "vllm:prefix_cache_queries",
		      "Prefix cache queries, in terms of number of queried tokens.", false);
	promfam_counter_total(o, "vllm:prefix_cache_hits",
		      "Prefix cache hits, in terms of number of cached tokens.", true);
	promfam_counter_obs(o, "vllm:request_success", "Count of successfully processed requests.",
		    ",finished_reason=\"length\"", RM_ONE, false);
	promfam_hist_obs(o, "vllm:time_to_first_token_seconds", "Histogram of time to first token in seconds.", RM_TTFT,
		 report_ttft_buckets, report_n_ttft_buckets);
	promfam_hist_timeline(o, "vllm:inter_token_latency_seconds",
		      "Histogram of inter-token latency in seconds.", true);
	promfam_hist_obs(o, "vllm:e2e_request_latency_seconds", "Histogram of e2e request latency in seconds.", RM_E2E,
		 report_e2e_buckets, report_n_e2e_buckets);
	more_metrics(o, false);
	/* Deprecated in vLLM 0.9 for kv_cache_usage_perc; the example
	 * dashboard's "Cache Utilization" panel reads it. */
	promfam_gauge_ts(o, "vllm:gpu_cache_usage_perc",
		 "GPU KV-cache usage. 1 means 100 percent usage.DEPRECATED: Use "
		 "vllm:kv_cache_usage_perc instead.",
		 G_KV);
	cache_config_info(o);
}

void report_prom(FILE *f, struct run_result *res)
{
	if (res->sc.engine.cls->family != ENGINE_FAMILY_VLLM) {
		report_prom_llamacpp(f, res, NULL);
		return;
	}
	if (res->n_replicas) {   /* one series per engine (report_replicas.c) */
		report_replicas_prom(f, res);
		return;
	}
	struct prom_out o = { .f = f, .res = res, .n_scrapes = 1, .obs = res->prom_obs };
	o.series = run_series(res, &o.n_series);
	vllm_metrics(&o);
	free((void *)o.series);
}

void report_openmetrics(FILE *f, const struct run_result *res, double epoch_s)
{
	struct prom_out o = { .f = f, .res = res, .openmetrics = true, .epoch_s = epoch_s, .snap = res->om_snap };
	o.interval_ns = omsnap_interval_ns(res->end_ns);
	/* From 0 to the first scrape after the run ended (its gauges at 0). */
	o.n_scrapes = (size_t)(res->end_ns / o.interval_ns) + 2;
	if (res->sc.engine.cls->family != ENGINE_FAMILY_VLLM) {
		char ts[48];
		snprintf(ts, sizeof ts, " %.3f",
			 epoch_s + (double)(o.n_scrapes - 1) * (double)o.interval_ns / 1e9);
		report_prom_llamacpp(f, res, ts);
	} else {
		/* A cluster: every family one series per replica (engine="i"),
		 * under the names vLLM's data-parallel engines use. */
		o.series = run_series(res, &o.n_series);
		vllm_metrics(&o);
		free((void *)o.series);
	}
	fprintf(f, "# EOF\n");
}

void report_prom_replica_hists(FILE *f, const struct run_result *res)
{
	struct prom_out o = { .f = f, .res = res, .n_scrapes = 1, .obs = res->prom_obs };
	o.series = run_series(res, &o.n_series);
	more_metrics(&o, false);
	cache_config_info(&o);
	free((void *)o.series);
}
