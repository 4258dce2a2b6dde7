/*
 * report_int: what report's writers share (text, JSON, Prometheus, CSV,
 * HTML, each in its own report_<format>.c; report.h is the outside view).
 *
 * The numbers here are computed once, the same way for every format: the
 * four vllm bench serve metrics and their summaries (ms), a group's
 * duration, the peak output tokens in one second, and Ollama's
 * per-request fields with their C10 rates. None of these can fail.
 */
#ifndef SERVESIM_REPORT_INT_H
#define SERVESIM_REPORT_INT_H

#include <stdint.h>

#include "latmetric.h"
#include "report.h"

/* Summary statistics of one metric in ms, exact for per-request samples,
 * histogram-based for ITL. */
struct summary {
	double mean, median, std;
	double p[16];
};

/* Summary of metric `which` (enum lat_metric, latmetric.h) of g, in ms. */
void report_summarize(struct group_metrics *g, int which, const struct report_opts *o,
		      struct summary *s);
/* vLLM's histogram bucket edges (vllm/v1/metrics/loggers.py), seconds, for
 * every Prometheus writer (report_prom.c, report_replicas.c). */
extern const double report_ttft_buckets[], report_e2e_buckets[], report_prefill_token_buckets[],
	report_params_n_buckets[];
extern const size_t report_n_ttft_buckets, report_n_e2e_buckets, report_n_prefill_token_buckets,
	report_n_params_n_buckets;
/* vLLM's build_1_2_5_buckets(max_value): 1, 2, 5, 10, … up to it, at
 * most cap of them into out; returns how many. */
size_t report_buckets_125(int64_t max_value, double *out, size_t cap);

/* A cluster run's histograms beyond C12's (queue, inference, prefill,
 * decode and per-token times, prompt and generation tokens, request
 * parameters, and from each replica's timeline its token gaps as
 * time_per_output_token_seconds and its step sizes as
 * iteration_tokens_total; vllm/v1/metrics/loggers.py) and
 * vllm:cache_config_info, one series per replica under vLLM's engine="i"
 * label, in Prometheus text (report_prom.c). A request counts on the
 * replica it was routed to (its decode replica when disaggregated).
 * Cannot fail. */
void report_prom_replica_hists(FILE *f, const struct run_result *res);

/* llama-server's /metrics (report_prom_llama.c): the end-of-run scrape
 * (stamp NULL) or one OpenMetrics scrape stamped `stamp`. Cannot fail. */
void report_prom_llamacpp(FILE *f, const struct run_result *res, const char *stamp);

/* A bucket edge as prometheus_client writes it: "0.025", "1.0", "10.0". */
struct report_le {
	char s[32];
};
struct report_le report_le_text(double v);

void report_p_word(double p, char *out, size_t cap);
/* What a group's TTFT, TPOT, E2EL and queue-time percentiles are when a
 * lean run sketched them (stats.h: past RUN_EXACT_SAMPLES values), for
 * the report to say next to them; NULL when they are exact. */
const char *report_sketch_note(const struct group_metrics *g);
double report_group_duration(const struct group_metrics *g);
int64_t report_peak_tokens_per_s(const struct run_result *res);
/* The run's Ollama means (ollamafields.h), summed as its requests finished. */
void report_ollama_means(const struct run_result *res, struct ollama_means *m);

#endif
