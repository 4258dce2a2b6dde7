/*
 * report_prom: Prometheus exposition text of vLLM's metrics (C12) with
 * vLLM's names, labels and buckets, or llama-server's for Ollama and
 * llama.cpp, as a scrape at the end of the run.
 */
#include "report_int.h"

#include <math.h>
#include <string.h>

static const double ttft_buckets[] = { 0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75,
				       1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0 };
static const double itl_buckets[] = { 0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5,
				      0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0 };
static const double e2e_buckets[] = { 0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0,
				      40.0, 50.0, 60.0, 120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0 };

/* A bucket edge as prometheus_client writes it: "0.025", "1.0", "10.0". */
struct le_buf {
	char s[32];
};

static struct le_buf le_text(double v)
{
	struct le_buf b;
	snprintf(b.s, sizeof b.s, v == floor(v) ? "%.1f" : "%g", v);
	return b;
}

static void prom_hist_samples(FILE *f, const char *name, const char *help, const char *labels,
			      struct samples *s, const double *edges, size_t n)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s histogram\n", name, help, name);
	double sum = 0;
	for (size_t i = 0; i < s->n; i++)
		sum += s->v[i];
	samples_sort(s);
	size_t k = 0;
	for (size_t b = 0; b < n; b++) {
		while (k < s->n && s->v[k] <= edges[b])
			k++;
		fprintf(f, "%s_bucket{%s,le=\"%s\"} %zu\n", name, labels, le_text(edges[b]).s, k);
	}
	fprintf(f, "%s_bucket{%s,le=\"+Inf\"} %zu\n%s_sum{%s} %.9g\n%s_count{%s} %zu\n", name, labels,
		s->n, name, labels, sum, name, labels, s->n);
}

/* llama-server's /metrics (tools/server: handle_metrics; formats.md §4),
 * as scraped at the end of the run. Ollama exports no metrics of its own:
 * these are its llama-server's. */
static void report_prom_llamacpp(FILE *f, const struct run_result *res)
{
	const struct engine_stats *es = &res->engine;
	struct ollama_means m;
	report_ollama_means(res, &m);
	struct {
		const char *name, *type, *help;
		double v;
	} rows[] = {
		{ "prompt_tokens_total", "counter", "Number of prompt tokens processed.", (double)m.prompt_tokens },
		{ "prompt_seconds_total", "counter", "Prompt process time", m.prompt_s },
		{ "tokens_predicted_total", "counter", "Number of generation tokens processed.",
		  (double)m.predicted_tokens },
		{ "tokens_predicted_seconds_total", "counter", "Predict process time", m.predicted_s },
		{ "n_decode_total", "counter", "Total number of llama_decode() calls", (double)es->n_decode_total },
		{ "n_tokens_max", "counter", "Largest observed n_tokens.", (double)es->n_tokens_max },
		{ "n_busy_slots_per_decode", "counter", "Average number of busy slots per llama_decode() call",
		  es->n_decode_total ? (double)es->n_busy_slots_total / (double)es->n_decode_total : 0 },
		{ "prompt_tokens_seconds", "gauge", "Average prompt throughput in tokens/s.",
		  m.prompt_s > 0 ? (double)m.prompt_tokens / m.prompt_s : 0 },
		{ "predicted_tokens_seconds", "gauge", "Average generation throughput in tokens/s.",
		  m.predicted_s > 0 ? (double)m.predicted_tokens / m.predicted_s : 0 },
		{ "requests_processing", "gauge", "Number of requests processing.", 0 },
		{ "requests_deferred", "gauge", "Number of requests deferred.", 0 },
	};
	fprintf(f, "# servesim: the scrape llama-server's /metrics would give at the end of the run\n");
	for (size_t i = 0; i < sizeof rows / sizeof *rows; i++)
		fprintf(f, "# HELP llamacpp:%s %s\n# TYPE llamacpp:%s %s\nllamacpp:%s %.9g\n", rows[i].name,
			rows[i].help, rows[i].name, rows[i].type, rows[i].name, rows[i].v);
}

void report_prom(FILE *f, struct run_result *res)
{
	if (res->sc.engine_kind != ENGINE_VLLM) {
		report_prom_llamacpp(f, res);
		return;
	}
	char labels[256];
	snprintf(labels, sizeof labels, "model_name=\"%s\",engine=\"0\"", res->model.id);
	const struct engine_stats *es = &res->engine;
	struct group_metrics *g = &res->all;
	fprintf(f, "# servesim: the scrape vLLM's /metrics would give at the end of the run\n");
	fprintf(f, "# HELP vllm:num_requests_running Number of requests in model execution batches.\n"
		   "# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running{%s} 0\n", labels);
	fprintf(f, "# HELP vllm:num_requests_waiting Number of requests waiting to be processed.\n"
		   "# TYPE vllm:num_requests_waiting gauge\nvllm:num_requests_waiting{%s} 0\n", labels);
	fprintf(f, "# HELP vllm:kv_cache_usage_perc KV-cache usage. 1 means 100 percent usage.\n"
		   "# TYPE vllm:kv_cache_usage_perc gauge\nvllm:kv_cache_usage_perc{%s} 0\n", labels);
	fprintf(f, "# HELP servesim:peak_num_requests_waiting Peak of vllm:num_requests_waiting during the run.\n"
		   "# TYPE servesim:peak_num_requests_waiting gauge\nservesim:peak_num_requests_waiting{%s} %lld\n",
		labels, (long long)res->peak_waiting);
	fprintf(f, "# HELP servesim:peak_kv_cache_usage_perc Peak of vllm:kv_cache_usage_perc during the run.\n"
		   "# TYPE servesim:peak_kv_cache_usage_perc gauge\nservesim:peak_kv_cache_usage_perc{%s} %.6g\n",
		labels, es->peak_kv_usage);
	struct {
		const char *name, *help;
		int64_t v;
	} counters[] = {
		{ "vllm:num_preemptions", "Cumulative number of preemption from the engine.", es->preemptions },
		{ "vllm:prompt_tokens", "Number of prefill tokens processed.", g->total_input },
		{ "vllm:generation_tokens", "Number of generation tokens processed.", g->total_output },
		{ "vllm:prefix_cache_queries", "Prefix cache queries, in terms of number of queried tokens.",
		  es->prefix_queries },
		{ "vllm:prefix_cache_hits", "Prefix cache hits, in terms of number of cached tokens.",
		  es->prefix_hits },
	};
	for (size_t i = 0; i < sizeof counters / sizeof *counters; i++)
		fprintf(f, "# HELP %s_total %s\n# TYPE %s_total counter\n%s_total{%s} %lld\n", counters[i].name,
			counters[i].help, counters[i].name, counters[i].name, labels, (long long)counters[i].v);
	fprintf(f, "# HELP vllm:request_success_total Count of successfully processed requests.\n"
		   "# TYPE vllm:request_success_total counter\n"
		   "vllm:request_success_total{%s,finished_reason=\"length\"} %lld\n", labels,
		(long long)g->completed);
	prom_hist_samples(f, "vllm:time_to_first_token_seconds", "Histogram of time to first token in seconds.",
			  labels, &g->ttft, ttft_buckets, sizeof ttft_buckets / sizeof *ttft_buckets);
	fprintf(f, "# HELP vllm:inter_token_latency_seconds Histogram of inter-token latency in seconds.\n"
		   "# TYPE vllm:inter_token_latency_seconds histogram\n");
	for (size_t b = 0; b < sizeof itl_buckets / sizeof *itl_buckets; b++)
		fprintf(f, "vllm:inter_token_latency_seconds_bucket{%s,le=\"%s\"} %lld\n", labels, le_text(itl_buckets[b]).s,
			(long long)loghist_count_le(&g->itl, itl_buckets[b]));
	fprintf(f, "vllm:inter_token_latency_seconds_bucket{%s,le=\"+Inf\"} %lld\n"
		   "vllm:inter_token_latency_seconds_sum{%s} %.9g\nvllm:inter_token_latency_seconds_count{%s} %lld\n",
		labels, (long long)g->itl.n, labels, g->itl.sum, labels, (long long)g->itl.n);
	prom_hist_samples(f, "vllm:e2e_request_latency_seconds",
			  "Histogram of e2e request latency in seconds.", labels, &g->e2el, e2e_buckets,
			  sizeof e2e_buckets / sizeof *e2e_buckets);
}
