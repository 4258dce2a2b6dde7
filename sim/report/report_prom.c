/*
 * report_prom: vLLM's metrics (C12 and the rest of vllm/v1/metrics/
 * loggers.py) with vLLM's names, labels and buckets, or llama-server's for
 * Ollama and llama.cpp, in two renderings of one table:
 *   - Prometheus exposition text, as a scrape at the end of the run
 *     (report_prom);
 *   - OpenMetrics text with a scrape every few simulated seconds, each
 *     sample timestamped (report_openmetrics), which `promtool tsdb
 *     create-blocks-from openmetrics` turns into TSDB blocks.
 * Each family is computed from the request records (a request's metrics
 * count when vLLM records them: TTFT and prompt tokens at its first token,
 * the rest when it finishes), the time series (gauges) and the run's
 * timeline (token gaps and step sizes, when recorded). A scrape at time t
 * counts what happened before t.
 */
#include "report_int.h"
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
static const double prefill_per_token_buckets[] = { 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0 };
static const double params_n_buckets[] = { 1, 2, 5, 10, 20 };
const double report_e2e_buckets[] = { 0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0,
				      40.0, 50.0, 60.0, 120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0 };

const size_t report_n_ttft_buckets = sizeof report_ttft_buckets / sizeof *report_ttft_buckets;
const size_t report_n_e2e_buckets = sizeof report_e2e_buckets / sizeof *report_e2e_buckets;

struct report_le report_le_text(double v)
{
	struct report_le b;
	snprintf(b.s, sizeof b.s, v == floor(v) ? "%.1f" : "%g", v);
	return b;
}

/* llama-server's /metrics (tools/server: handle_metrics; formats.md §4),
 * as scraped at the end of the run. Ollama exports no metrics of its own:
 * these are its llama-server's. */
static void report_prom_llamacpp(FILE *f, const struct run_result *res, const char *stamp)
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
	if (!stamp) {
		fprintf(f, "# servesim: the scrape llama-server's /metrics would give at the end of the run\n");
		for (size_t i = 0; i < sizeof rows / sizeof *rows; i++)
			fprintf(f, "# HELP llamacpp:%s %s\n# TYPE llamacpp:%s %s\nllamacpp:%s %.9g\n", rows[i].name,
				rows[i].help, rows[i].name, rows[i].type, rows[i].name, rows[i].v);
		return;
	}
	/* OpenMetrics: a counter's family drops _total; llama-server's two
	 * "counters" without it are gauges there. One scrape, at the end. */
	for (size_t i = 0; i < sizeof rows / sizeof *rows; i++) {
		size_t n = strlen(rows[i].name);
		bool total = n > 6 && !strcmp(rows[i].name + n - 6, "_total");
		fprintf(f, "# HELP llamacpp:%.*s %s\n# TYPE llamacpp:%.*s %s\nllamacpp:%s %.9g%s\n",
			(int)(total ? n - 6 : n), rows[i].name, rows[i].help, (int)(total ? n - 6 : n),
			rows[i].name, total ? "counter" : "gauge", rows[i].name, rows[i].v, stamp);
	}
}

/* ---- vLLM: one table, two renderings ---- */

/* One observation of a request metric: its value and when vLLM records it. */
struct obs {
	int64_t t_ns;
	double v;
};

static int by_time(const void *a, const void *b)
{
	const struct obs *x = a, *y = b;
	return (x->t_ns > y->t_ns) - (x->t_ns < y->t_ns);
}

/* What a request metric is, from its record (completed requests only). */
enum req_metric {
	RM_TTFT,
	RM_E2E,
	RM_QUEUE,
	RM_INFERENCE,
	RM_PREFILL,
	RM_DECODE,
	RM_PREFILL_PER_TOKEN,
	RM_REQUEST_TPOT,
	RM_PROMPT_TOKENS,
	RM_GENERATION_TOKENS,
	RM_ONE,
	RM_PREEMPTIONS,
};

/* The value of m for r and when vLLM records it; false when r has none
 * (TPOT of a one-token answer). */
static bool req_value(const struct request *r, enum req_metric m, struct obs *o)
{
	const double ns = 1e9;
	o->t_ns = r->finish_ns;
	switch (m) {
	case RM_TTFT:
		o->t_ns = r->first_token_ns;
		o->v = (double)(r->first_token_ns - r->send_ns) / ns;
		break;
	case RM_E2E:
		o->v = (double)(r->finish_ns - r->send_ns) / ns;
		break;
	case RM_QUEUE:
		o->v = (double)(r->first_scheduled_ns - r->enqueue_ns) / ns;
		break;
	case RM_INFERENCE:
		o->v = (double)(r->last_token_ns - r->first_scheduled_ns) / ns;
		break;
	case RM_PREFILL:
		o->v = (double)(r->first_token_ns - r->first_scheduled_ns) / ns;
		break;
	case RM_DECODE:
		o->v = (double)(r->last_token_ns - r->first_token_ns) / ns;
		break;
	case RM_PREFILL_PER_TOKEN:
		if (r->prompt_len <= 0)
			return false;
		o->v = (double)(r->first_token_ns - r->first_scheduled_ns) / ns / r->prompt_len;
		break;
	case RM_REQUEST_TPOT:
		if (r->output_len <= 1)
			return false;
		o->v = (double)(r->last_token_ns - r->first_token_ns) / ns / (r->output_len - 1);
		break;
	case RM_PROMPT_TOKENS:
		o->t_ns = r->first_token_ns;
		o->v = r->prompt_len;
		break;
	case RM_GENERATION_TOKENS:
		o->v = r->output_len;
		break;
	case RM_ONE:
		o->v = 1;
		break;
	case RM_PREEMPTIONS:
		o->v = r->preemptions;
		break;
	}
	return true;
}

/* One engine's series: vLLM labels each engine core of a data-parallel
 * deployment engine="i" under the same metric names, so a cluster's
 * replicas are engines 0…n-1 and a single engine is engine="0". */
struct prom_series {
	char labels[512];            /* model_name="…",engine="i" */
	int replica;                 /* the requests counted: -1 every one, else those routed to it */
	const struct ts_row *ts;     /* its gauges over time */
	size_t n_ts;
	const struct timeline *tl;   /* its token gaps and steps; NULL: none recorded */
	const struct loghist *itl;   /* its token gaps, without a timeline */
	const struct engine_stats *es;
	double peak_waiting;
	int engine;
};

/* A rendering: Prometheus text with one scrape at the end (no
 * timestamps), or OpenMetrics with scrapes at k·interval, k = 0..n-1,
 * stamped epoch_s + k·interval. Each family has a sample set per series;
 * the emitters below see one series at a time through pick(). */
struct prom_out {
	FILE *f;
	const struct run_result *res;
	bool openmetrics;
	const struct prom_series *series;
	int n_series;
	const struct prom_series *cur;
	char labels[512];            /* cur's */
	int replica;                 /* cur's */
	size_t n_scrapes;
	int64_t interval_ns;
	double epoch_s;
};

/* all with series s current, in tmp. */
static const struct prom_out *pick(const struct prom_out *all, int s, struct prom_out *tmp)
{
	*tmp = *all;
	tmp->cur = &all->series[s];
	snprintf(tmp->labels, sizeof tmp->labels, "%s", tmp->cur->labels);
	tmp->replica = tmp->cur->replica;
	return tmp;
}

/* The observations of m over the completed requests o counts, by time
 * (caller frees). */
static struct obs *collect(const struct prom_out *o, enum req_metric m, size_t *n)
{
	const struct reqtab *reqs = &o->res->reqs;
	struct obs *v = xcalloc(reqs->len ? reqs->len : 1, sizeof *v);
	*n = 0;
	for (size_t i = 0; i < reqs->len; i++) {
		const struct request *r = &reqs->v[i];
		if (r->state == REQ_FINISHED && (o->replica < 0 || r->replica == o->replica) &&
		    req_value(r, m, &v[*n]))
			(*n)++;
	}
	qsort(v, *n, sizeof *v, by_time);
	return v;
}

static int64_t scrape_ns(const struct prom_out *o, size_t k)
{
	return o->openmetrics ? (int64_t)k * o->interval_ns : INT64_MAX;
}

/* " 12.000" (OpenMetrics) or "" into buf. */
static const char *stamp(const struct prom_out *o, size_t k, char *buf, size_t cap)
{
	if (!o->openmetrics)
		return "";
	snprintf(buf, cap, " %.3f", o->epoch_s + (double)scrape_ns(o, k) / 1e9);
	return buf;
}

/* HELP and TYPE. A counter's family is `name` in OpenMetrics and
 * `name_total` in Prometheus text, as prometheus_client writes them. */
static void family(const struct prom_out *o, const char *name, const char *type, const char *help)
{
	const char *suffix = !o->openmetrics && !strcmp(type, "counter") ? "_total" : "";
	fprintf(o->f, "# HELP %s%s %s\n# TYPE %s%s %s\n", name, suffix, help, name, suffix, type);
}

enum gauge_src { G_RUNNING, G_WAITING, G_KV };

/* Each emitter below writes one family: HELP and TYPE, then the samples of
 * every series (FOR_SERIES makes `o` the current one). */
#define FOR_SERIES(all, o)                                                                       \
	struct prom_out tmp_;                                                                    \
	for (int s_ = 0; s_ < (all)->n_series; s_++)                                             \
		for (const struct prom_out *o = pick(all, s_, &tmp_); o; o = NULL)

/* A gauge from the time series: the last sample at or before the scrape;
 * 0 once the run is over (nothing runs, waits or holds KV then). */
static void gauge_ts(const struct prom_out *all, const char *name, const char *help,
		     enum gauge_src src)
{
	family(all, name, "gauge", help);
	FOR_SERIES(all, o) {
		const struct ts_row *rows = o->cur->ts;
		size_t j = 0;
		for (size_t k = 0; k < o->n_scrapes; k++) {
			int64_t t = scrape_ns(o, k);
			while (j < o->cur->n_ts && rows[j].t_s * 1e9 <= (double)t)
				j++;
			double v = 0;
			if (j > 0 && t < o->res->end_ns) {
				const struct ts_row *r = &rows[j - 1];
				v = src == G_RUNNING   ? (double)r->running
				    : src == G_WAITING ? (double)r->waiting
						       : r->kv_usage;
			}
			char ts[48];
			fprintf(o->f, "%s{%s} %.6g%s\n", name, o->labels, v, stamp(o, k, ts, sizeof ts));
		}
	}
}

/* A counter: the sum of m's observations before each scrape, plus (for
 * generation tokens) the token gaps of the timeline. extra: more labels. */
static void counter_obs(const struct prom_out *all, const char *name, const char *help,
			const char *extra, enum req_metric m, bool plus_gaps)
{
	family(all, name, "counter", help);
	FOR_SERIES(all, o) {
		size_t n, j = 0, w = 0;
		struct obs *v = collect(o, m, &n);
		double acc = 0, gap_sum = 0;
		int64_t gaps[TIMELINE_N_ITL + 1] = { 0 };
		const struct timeline *tl = o->cur->tl;
		for (size_t k = 0; k < o->n_scrapes; k++) {
			int64_t t = scrape_ns(o, k);
			for (; j < n && v[j].t_ns < t; j++)
				acc += v[j].v;
			double total = acc;
			if (plus_gaps && tl) {
				size_t upto = t == INT64_MAX ? tl->n_windows : (size_t)(t / TIMELINE_WINDOW_NS);
				timeline_accumulate(tl, &tl->itl, w, upto, gaps, &gap_sum);
				w = upto > w ? upto : w;
				int64_t g = 0;
				for (size_t b = 0; b <= TIMELINE_N_ITL; b++)
					g += gaps[b];
				total += (double)g;
			} else if (plus_gaps) {
				total += (double)o->cur->itl->n;
			}
			char ts[48];
			fprintf(o->f, "%s_total{%s%s} %.17g%s\n", name, o->labels, extra, total,
				stamp(o, k, ts, sizeof ts));
		}
		free(v);
	}
}

/* One histogram sample set: cumulative counts over edges, then +Inf. */
static void hist_point(const struct prom_out *o, const char *name, const double *edges,
		       size_t n_edges, const int64_t *counts, double sum, size_t k)
{
	char ts[48];
	stamp(o, k, ts, sizeof ts);
	const char *st = o->openmetrics ? ts : "";
	int64_t acc = 0;
	for (size_t b = 0; b < n_edges; b++) {
		acc += counts[b];
		fprintf(o->f, "%s_bucket{%s,le=\"%s\"} %lld%s\n", name, o->labels,
			report_le_text(edges[b]).s, (long long)acc, st);
	}
	acc += counts[n_edges];
	fprintf(o->f, "%s_bucket{%s,le=\"+Inf\"} %lld%s\n", name, o->labels, (long long)acc, st);
	if (o->openmetrics) /* OpenMetrics orders _count before _sum; either parses */
		fprintf(o->f, "%s_count{%s} %lld%s\n%s_sum{%s} %.9g%s\n", name, o->labels,
			(long long)acc, st, name, o->labels, sum, st);
	else
		fprintf(o->f, "%s_sum{%s} %.9g\n%s_count{%s} %lld\n", name, o->labels, sum, name,
			o->labels, (long long)acc);
}

/* The samples of a histogram of a request metric over the given bucket
 * edges, for the requests o's current series counts and under its labels. */
static void hist_obs_series(const struct prom_out *o, const char *name, enum req_metric m,
			    const double *edges, size_t n_edges)
{
	size_t n, j = 0;
	struct obs *v = collect(o, m, &n);
	int64_t *counts = xcalloc(n_edges + 1, sizeof *counts);
	double sum = 0;
	for (size_t k = 0; k < o->n_scrapes; k++) {
		int64_t t = scrape_ns(o, k);
		for (; j < n && v[j].t_ns < t; j++) {
			size_t b = 0;
			while (b < n_edges && v[j].v > edges[b])
				b++;
			counts[b]++;
			sum += v[j].v;
		}
		hist_point(o, name, edges, n_edges, counts, sum, k);
	}
	free(counts);
	free(v);
}

/* A histogram family of a request metric: HELP, TYPE and every series'. */
static void hist_obs(const struct prom_out *all, const char *name, const char *help, enum req_metric m,
		     const double *edges, size_t n_edges)
{
	family(all, name, "histogram", help);
	FOR_SERIES(all, o)
		hist_obs_series(o, name, m, edges, n_edges);
}

/* A histogram of the timeline (token gaps, step sizes), per series; in
 * Prometheus text without a timeline, the token gaps come from the
 * series' ITL histogram (loghist_count_le) and the step sizes are left
 * out. */
static void hist_timeline(const struct prom_out *all, const char *name, const char *help, bool gaps)
{
	const double *edges = gaps ? timeline_itl_edges : timeline_iter_edges;
	size_t n_edges = gaps ? TIMELINE_N_ITL : TIMELINE_N_ITER;
	if (!all->series[0].tl && !gaps)
		return;
	family(all, name, "histogram", help);
	FOR_SERIES(all, o) {
		const struct timeline *tl = o->cur->tl;
		int64_t counts[TIMELINE_N_ITL + 1] = { 0 };
		double sum = 0;
		if (!tl) {
			const struct loghist *h = o->cur->itl;
			int64_t prev = 0;
			for (size_t b = 0; b < n_edges; b++) {
				int64_t c = loghist_count_le(h, edges[b]);
				counts[b] = c - prev;
				prev = c;
			}
			counts[n_edges] = h->n - prev;
			hist_point(o, name, edges, n_edges, counts, h->sum, 0);
			continue;
		}
		const struct timeline_hist *h = gaps ? &tl->itl : &tl->iter;
		size_t w = 0;
		for (size_t k = 0; k < o->n_scrapes; k++) {
			int64_t t = scrape_ns(o, k);
			size_t upto = t == INT64_MAX ? tl->n_windows : (size_t)(t / TIMELINE_WINDOW_NS);
			timeline_accumulate(tl, h, w, upto, counts, &sum);
			w = upto > w ? upto : w;
			hist_point(o, name, edges, n_edges, counts, sum, k);
		}
	}
}

/* A gauge that is one number all run long (end-of-run peaks): the same
 * value at every scrape, per series. */
static void gauge_const(const struct prom_out *all, const char *name, const char *help, bool kv)
{
	family(all, name, "gauge", help);
	FOR_SERIES(all, o) {
		double v = kv ? o->cur->es->peak_kv_usage : o->cur->peak_waiting;
		for (size_t k = 0; k < o->n_scrapes; k++) {
			char ts[48];
			fprintf(o->f, "%s{%s} %.6g%s\n", name, o->labels, v, stamp(o, k, ts, sizeof ts));
		}
	}
}

/* A counter known only as an end-of-run total (the prefix cache's):
 * Prometheus text only. */
static void counter_total(const struct prom_out *all, const char *name, const char *help, bool hits)
{
	if (all->openmetrics)
		return;
	family(all, name, "counter", help);
	FOR_SERIES(all, o) {
		int64_t v = hits ? o->cur->es->prefix_hits : o->cur->es->prefix_queries;
		fprintf(o->f, "%s_total{%s} %lld\n", name, o->labels, (long long)v);
	}
}

static void label_value(char *out, size_t cap, const char *v)
{
	size_t n = 0;
	for (; *v && n + 3 < cap; v++) {
		if (*v == '\\' || *v == '"' || *v == '\n') {
			out[n++] = '\\';
			out[n++] = *v == '\n' ? 'n' : *v;
		} else {
			out[n++] = *v;
		}
	}
	out[n] = '\0';
}

/* vLLM's build_1_2_5_buckets(max_model_len): 1, 2, 5, 10, … up to it. */
static size_t buckets_125(int64_t max_value, double *out, size_t cap)
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
		family(all, "vllm:cache_config_info", "gauge", "Information of the LLMEngine CacheConfig");
	else /* OpenMetrics has an info type: family vllm:cache_config, sample
	      * vllm:cache_config_info, the same series vLLM's gauge gives. */
		fprintf(all->f, "# HELP vllm:cache_config Information of the LLMEngine CacheConfig\n"
				"# TYPE vllm:cache_config info\n");
	FOR_SERIES(all, o) {
		char labels[768];
		cache_config_labels(labels, sizeof labels, &o->res->sc, o->cur->es, o->cur->engine);
		for (size_t k = 0; k < o->n_scrapes; k++) {
			char ts[48];
			fprintf(o->f, "vllm:cache_config_info{%s} 1%s\n", labels, stamp(o, k, ts, sizeof ts));
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
		*n = sizeof prefill_per_token_buckets / sizeof *prefill_per_token_buckets;
		return prefill_per_token_buckets;
	case EK_TPOT:
		*n = TIMELINE_N_ITL;
		return timeline_itl_edges;
	case EK_PARAMS_N:
		*n = sizeof params_n_buckets / sizeof *params_n_buckets;
		return params_n_buckets;
	case EK_125:
	case EK_TL_GAPS:
	case EK_TL_ITER:
		break;
	}
	*n = buckets_125(es->max_model_len, buf, cap);
	return buf;
}

/* A histogram of more_hists over request records, per series (the edges
 * from each series' engine: vLLM's build_1_2_5_buckets(max_model_len)). */
static void hist_more(const struct prom_out *all, const struct more_hist *mh)
{
	family(all, mh->name, "histogram", mh->help);
	FOR_SERIES(all, o) {
		double buf[64];
		size_t n_edges;
		const double *edges = more_edges(mh->edges, o->cur->es, buf, sizeof buf / sizeof *buf, &n_edges);
		hist_obs_series(o, mh->name, mh->m, edges, n_edges);
	}
}

/* The histograms of vllm/v1/metrics/loggers.py beyond C12's; with
 * timeline_only, those from the timeline only (token gaps, step sizes). */
static void more_metrics(const struct prom_out *o, bool timeline_only)
{
	for (size_t h = 0; h < sizeof more_hists / sizeof *more_hists; h++) {
		const struct more_hist *mh = &more_hists[h];
		if (mh->edges == EK_TL_GAPS || mh->edges == EK_TL_ITER)
			hist_timeline(o, mh->name, mh->help, mh->edges == EK_TL_GAPS);
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
	label_value(model, sizeof model, res->model.id);
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
	gauge_ts(o, "vllm:num_requests_running", "Number of requests in model execution batches.",
		 G_RUNNING);
	gauge_ts(o, "vllm:num_requests_waiting", "Number of requests waiting to be processed.",
		 G_WAITING);
	gauge_ts(o, "vllm:kv_cache_usage_perc", "KV-cache usage. 1 means 100 percent usage.", G_KV);
	if (!o->openmetrics) {
		gauge_const(o, "servesim:peak_num_requests_waiting",
			    "Peak of vllm:num_requests_waiting during the run.", false);
		gauge_const(o, "servesim:peak_kv_cache_usage_perc",
			    "Peak of vllm:kv_cache_usage_perc during the run.", true);
	}
	counter_obs(o, "vllm:num_preemptions", "Cumulative number of preemption from the engine.",
		    "", RM_PREEMPTIONS, false);
	counter_obs(o, "vllm:prompt_tokens", "Number of prefill tokens processed.", "",
		    RM_PROMPT_TOKENS, false);
	counter_obs(o, "vllm:generation_tokens", "Number of generation tokens processed.", "",
		    RM_ONE, true);
	counter_total(o, "vllm:prefix_cache_queries",
		      "Prefix cache queries, in terms of number of queried tokens.", false);
	counter_total(o, "vllm:prefix_cache_hits",
		      "Prefix cache hits, in terms of number of cached tokens.", true);
	counter_obs(o, "vllm:request_success", "Count of successfully processed requests.",
		    ",finished_reason=\"length\"", RM_ONE, false);
	hist_obs(o, "vllm:time_to_first_token_seconds", "Histogram of time to first token in seconds.", RM_TTFT,
		 report_ttft_buckets, report_n_ttft_buckets);
	hist_timeline(o, "vllm:inter_token_latency_seconds",
		      "Histogram of inter-token latency in seconds.", true);
	hist_obs(o, "vllm:e2e_request_latency_seconds", "Histogram of e2e request latency in seconds.", RM_E2E,
		 report_e2e_buckets, report_n_e2e_buckets);
	more_metrics(o, false);
	/* Deprecated in vLLM 0.9 for kv_cache_usage_perc; the example
	 * dashboard's "Cache Utilization" panel reads it. */
	gauge_ts(o, "vllm:gpu_cache_usage_perc",
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
	struct prom_out o = { .f = f, .res = res, .n_scrapes = 1 };
	o.series = run_series(res, &o.n_series);
	vllm_metrics(&o);
	free((void *)o.series);
}

/* Scrapes every 1, 2, 5, 10, 15, 30 or 60 s, the first that keeps them
 * to REPORT_OM_MAX_SCRAPES or fewer (a second is the timeline's window). */
static int64_t om_interval_ns(int64_t end_ns)
{
	static const int64_t steps_s[] = { 1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 1800, 3600 };
	size_t n = sizeof steps_s / sizeof *steps_s;
	for (size_t i = 0; i < n; i++)
		if (end_ns / (steps_s[i] * TIMELINE_WINDOW_NS) + 2 <= REPORT_OM_MAX_SCRAPES)
			return steps_s[i] * TIMELINE_WINDOW_NS;
	return steps_s[n - 1] * TIMELINE_WINDOW_NS;
}

void report_openmetrics(FILE *f, const struct run_result *res, double epoch_s)
{
	struct prom_out o = { .f = f, .res = res, .openmetrics = true, .epoch_s = epoch_s };
	o.interval_ns = om_interval_ns(res->end_ns);
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
	struct prom_out o = { .f = f, .res = res, .n_scrapes = 1 };
	o.series = run_series(res, &o.n_series);
	more_metrics(&o, false);
	cache_config_info(&o);
	free((void *)o.series);
}
