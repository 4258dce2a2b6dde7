/*
 * report_replicas: per-replica lines, JSON and Prometheus series.
 */
#include "report_replicas.h"
#include "report_int.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "report_spec.h"
#include "xalloc.h"

/* One engine's numbers as vLLM's /metrics would show them. */
struct series {
	char labels[256];
	int64_t preemptions, prompt_tokens, generation_tokens, prefix_queries, prefix_hits, completed;
	int64_t peak_waiting;
	double peak_kv;
	struct samples *ttft, *e2el;
	const struct replhist_one *streamed;   /* a lean run's TTFT and E2E histograms, or NULL */
	const struct loghist *itl;
};

/* ---- a lean cluster run's TTFT and E2E histograms (report.h: replhist) ---- */

#define RH_CAP 32   /* more than report_n_ttft_buckets, report_n_e2e_buckets */

/* One replica's: per bucket (the first edge >= the value; RH_CAP - 1:
 * above them all), the count and the sum in the order the run added its
 * samples (run_record_replica), as hist_samples sums them. */
struct replhist_one {
	int64_t ttft[RH_CAP], e2el[RH_CAP], n_ttft, n_e2el;
	double ttft_sum, e2el_sum;
};

struct replhist {
	struct replhist_one *rep;
	int n;
};

struct replhist *replhist_create(void)
{
	return xcalloc(1, sizeof(struct replhist));
}

void replhist_destroy(struct replhist *h)
{
	if (!h)
		return;
	free(h->rep);
	free(h);
}

static size_t first_edge_at_least(const double *edges, size_t n, double v)
{
	size_t b = 0;
	while (b < n && v > edges[b])
		b++;
	return b < n ? b : RH_CAP - 1;
}

static struct replhist_one *replhist_at(struct replhist *h, int i)
{
	if (i >= h->n) {
		h->rep = xrealloc(h->rep, (size_t)(i + 1) * sizeof *h->rep);
		memset(h->rep + h->n, 0, (size_t)(i + 1 - h->n) * sizeof *h->rep);
		h->n = i + 1;
	}
	return &h->rep[i];
}

static void add_ttft(struct replhist_one *o, double v)
{
	o->ttft[first_edge_at_least(report_ttft_buckets, report_n_ttft_buckets, v)]++;
	o->ttft_sum += v;
	o->n_ttft++;
}

/* The samples run_record_replica adds, for the same request in the same
 * order (on_record follows it for every request done). */
void replhist_row(void *ctx, const struct request *r, int64_t settled_ns)
{
	(void)settled_ns;
	struct replhist *h = ctx;
	if (r->state == REQ_FAILED || r->replica < 0)
		return;
	double ttft = (double)(r->first_token_ns - r->send_ns) / 1e9;
	double e2el = (double)(r->finish_ns - r->send_ns) / 1e9;
	if (r->prefill_replica >= 0)
		replhist_at(h, r->prefill_replica);   /* grows the table first: the pointer stays */
	struct replhist_one *o = replhist_at(h, r->replica);
	add_ttft(o, ttft);
	o->e2el[first_edge_at_least(report_e2e_buckets, report_n_e2e_buckets, e2el)]++;
	o->e2el_sum += e2el;
	o->n_e2el++;
	if (r->prefill_replica >= 0)
		add_ttft(&h->rep[r->prefill_replica], ttft);
}

static double hit_rate(const struct engine_stats *es)
{
	return es->prefix_queries ? (double)es->prefix_hits / (double)es->prefix_queries : 0;
}

void report_replicas_text(FILE *f, struct run_result *res)
{
	if (!res->n_replicas)
		return;
	fprintf(f, "-------------------- Replicas --------------------\n");
	fprintf(f, "%d replicas, router %s\n", res->n_replicas, router_classes[res->sc.cluster.router].name);
	for (int i = 0; i < res->n_replicas; i++) {
		struct replica_result *rr = &res->replicas[i];
		fprintf(f, "%d %-8s %s tp%lld %6lld req  TTFT %.2f/%.2f ms  ITL %.2f/%.2f ms  KV %.1f%%  hit %.1f%%  preempt %lld\n",
			i, rr->role, rr->hardware, (long long)rr->tensor_parallel_size, (long long)rr->requests, 1e3 * samples_mean(&rr->ttft),
			1e3 * samples_percentile(&rr->ttft, 99), 1e3 * loghist_mean(&rr->itl),
			1e3 * loghist_percentile(&rr->itl, 99), 100 * rr->engine.peak_kv_usage,
			100 * hit_rate(&rr->engine), (long long)rr->engine.preemptions);
	}
	fprintf(f, "(TTFT and ITL: mean/p99; KV: peak usage; hit: prefix cache hit rate)\n");
	const struct cluster_kv_stats *kv = &res->kv;
	if (kv->transfers) {
		fprintf(f, "KV transfers over %s (%.0f Gb/s, %.0f us): %lld, %.1f MB each per rank\n", kv->link,
			kv->bytes_per_s * 8 / 1e9, kv->latency_s * 1e6, (long long)kv->transfers,
			kv->bytes / (double)kv->transfers / 1e6);
		fprintf(f, "%-40s %-10.2f\n", "Mean KV transfer (ms):", 1e3 * kv->transfer_s / (double)kv->transfers);
		fprintf(f, "%-40s %-10.2f\n", "Mean wait for a busy link (ms):",
			1e3 * kv->link_wait_s / (double)kv->transfers);
		fprintf(f, "%-40s %-10.2f\n", "Mean wait for decode KV blocks (ms):",
			1e3 * kv->block_wait_s / (double)kv->transfers);
		fprintf(f, "%-40s %-10.2f\n", "Mean prefill KV hold (ms):", 1e3 * kv->hold_s / (double)kv->transfers);
		if (kv->expired)   /* VLLM_NIXL_ABORT_REQUEST_TIMEOUT fired */
			fprintf(f, "KV freed unread after the %g s abort timeout: %lld requests\n",
				kv->abort_timeout_s, (long long)kv->expired);
	}
}

json_t *report_replicas_json(struct run_result *res)
{
	if (!res->n_replicas)
		return NULL;
	json_t *a = json_array();
	for (int i = 0; i < res->n_replicas; i++) {
		struct replica_result *rr = &res->replicas[i];
		json_t *o = json_object();
		json_object_set_new(o, "replica", json_integer(i));
		json_object_set_new(o, "role", json_string(rr->role));
		json_object_set_new(o, "hardware", json_string(rr->hardware));
		json_object_set_new(o, "tensor_parallel_size", json_integer(rr->tensor_parallel_size));
		json_object_set_new(o, "requests", json_integer(rr->requests));
		json_object_set_new(o, "completed", json_integer(rr->completed));
		json_object_set_new(o, "total_input_tokens", json_integer(rr->input_tokens));
		json_object_set_new(o, "total_output_tokens", json_integer(rr->output_tokens));
		json_object_set_new(o, "mean_ttft_ms", json_real(1e3 * samples_mean(&rr->ttft)));
		json_object_set_new(o, "p99_ttft_ms", json_real(1e3 * samples_percentile(&rr->ttft, 99)));
		json_object_set_new(o, "mean_itl_ms", json_real(1e3 * loghist_mean(&rr->itl)));
		json_object_set_new(o, "p99_itl_ms", json_real(1e3 * loghist_percentile(&rr->itl, 99)));
		json_object_set_new(o, "peak_kv_cache_usage", json_real(rr->engine.peak_kv_usage));
		json_object_set_new(o, "prefix_cache_hit_rate", json_real(hit_rate(&rr->engine)));
		json_object_set_new(o, "preemptions", json_integer(rr->engine.preemptions));
		json_object_set_new(o, "engine_steps", json_integer(rr->engine.steps));
		json_array_append_new(a, o);
	}
	return a;
}

json_t *report_kv_transfer_json(const struct run_result *res)
{
	const struct cluster_kv_stats *kv = &res->kv;
	if (!kv->link)
		return NULL;
	json_t *o = json_object();
	double n = kv->transfers ? (double)kv->transfers : 1;
	json_object_set_new(o, "link", json_string(kv->link));
	json_object_set_new(o, "gbit_s", json_real(kv->bytes_per_s * 8 / 1e9));
	json_object_set_new(o, "latency_us", json_real(kv->latency_s * 1e6));
	json_object_set_new(o, "transfers", json_integer(kv->transfers));
	json_object_set_new(o, "bytes_per_rank", json_real(kv->bytes));
	json_object_set_new(o, "mean_transfer_ms", json_real(1e3 * kv->transfer_s / n));
	json_object_set_new(o, "mean_link_wait_ms", json_real(1e3 * kv->link_wait_s / n));
	json_object_set_new(o, "mean_decode_block_wait_ms", json_real(1e3 * kv->block_wait_s / n));
	json_object_set_new(o, "mean_prefill_hold_ms", json_real(1e3 * kv->hold_s / n));
	json_object_set_new(o, "abort_request_timeout_s", json_real(kv->abort_timeout_s));
	json_object_set_new(o, "expired_before_read", json_integer(kv->expired));
	return o;
}

static const double itl_buckets[] = { 0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5,
				      0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0 };

static void hist_samples(FILE *f, const char *name, const char *help, struct series *ser, int n,
			 bool e2el, const double *edges, size_t ne)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s histogram\n", name, help, name);
	for (int i = 0; i < n; i++) {
		const char *labels = ser[i].labels;
		const struct replhist_one *o = ser[i].streamed;
		struct samples *s = e2el ? ser[i].e2el : ser[i].ttft;
		double sum = 0;
		size_t total;
		if (o) {
			sum = e2el ? o->e2el_sum : o->ttft_sum;
			total = (size_t)(e2el ? o->n_e2el : o->n_ttft);
		} else {
			for (size_t j = 0; j < s->n; j++)
				sum += s->v[j];
			samples_sort(s);
			total = s->n;
		}
		size_t k = 0;
		for (size_t b = 0; b < ne; b++) {
			if (o)
				k += (size_t)(e2el ? o->e2el : o->ttft)[b];
			else
				while (k < s->n && s->v[k] <= edges[b])
					k++;
			fprintf(f, "%s_bucket{%s,le=\"%s\"} %zu\n", name, labels, report_le_text(edges[b]).s, k);
		}
		fprintf(f, "%s_bucket{%s,le=\"+Inf\"} %zu\n%s_sum{%s} %.9g\n%s_count{%s} %zu\n", name, labels,
			total, name, labels, sum, name, labels, total);
	}
}

static void gauge(FILE *f, const char *name, const char *help, struct series *ser, int n, size_t field,
		  bool is_double)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s gauge\n", name, help, name);
	for (int i = 0; i < n; i++) {
		const char *p = (const char *)&ser[i] + field;
		if (field == (size_t)-1)
			fprintf(f, "%s{%s} 0\n", name, ser[i].labels);
		else if (is_double)
			fprintf(f, "%s{%s} %.6g\n", name, ser[i].labels, *(const double *)p);
		else
			fprintf(f, "%s{%s} %lld\n", name, ser[i].labels, (long long)*(const int64_t *)p);
	}
}

static void write_series(FILE *f, struct series *ser, int n)
{
	fprintf(f, "# servesim: the scrape vLLM's /metrics would give at the end of the run\n");
	gauge(f, "vllm:num_requests_running", "Number of requests in model execution batches.", ser, n,
	      (size_t)-1, false);
	gauge(f, "vllm:num_requests_waiting", "Number of requests waiting to be processed.", ser, n, (size_t)-1,
	      false);
	gauge(f, "vllm:kv_cache_usage_perc", "KV-cache usage. 1 means 100 percent usage.", ser, n, (size_t)-1,
	      false);
	gauge(f, "servesim:peak_num_requests_waiting", "Peak of vllm:num_requests_waiting during the run.", ser,
	      n, offsetof(struct series, peak_waiting), false);
	gauge(f, "servesim:peak_kv_cache_usage_perc", "Peak of vllm:kv_cache_usage_perc during the run.", ser, n,
	      offsetof(struct series, peak_kv), true);
	static const struct {
		const char *name, *help;
		size_t field;
	} counters[] = {
		{ "vllm:num_preemptions", "Cumulative number of preemption from the engine.",
		  offsetof(struct series, preemptions) },
		{ "vllm:prompt_tokens", "Number of prefill tokens processed.", offsetof(struct series, prompt_tokens) },
		{ "vllm:generation_tokens", "Number of generation tokens processed.",
		  offsetof(struct series, generation_tokens) },
		{ "vllm:prefix_cache_queries", "Prefix cache queries, in terms of number of queried tokens.",
		  offsetof(struct series, prefix_queries) },
		{ "vllm:prefix_cache_hits", "Prefix cache hits, in terms of number of cached tokens.",
		  offsetof(struct series, prefix_hits) },
	};
	for (size_t c = 0; c < sizeof counters / sizeof *counters; c++) {
		fprintf(f, "# HELP %s_total %s\n# TYPE %s_total counter\n", counters[c].name, counters[c].help,
			counters[c].name);
		for (int i = 0; i < n; i++)
			fprintf(f, "%s_total{%s} %lld\n", counters[c].name, ser[i].labels,
				(long long)*(const int64_t *)((const char *)&ser[i] + counters[c].field));
	}
	fprintf(f, "# HELP vllm:request_success_total Count of successfully processed requests.\n"
		   "# TYPE vllm:request_success_total counter\n");
	for (int i = 0; i < n; i++)
		fprintf(f, "vllm:request_success_total{%s,finished_reason=\"length\"} %lld\n", ser[i].labels,
			(long long)ser[i].completed);
	hist_samples(f, "vllm:time_to_first_token_seconds", "Histogram of time to first token in seconds.", ser,
		     n, false, report_ttft_buckets, report_n_ttft_buckets);
	fprintf(f, "# HELP vllm:inter_token_latency_seconds Histogram of inter-token latency in seconds.\n"
		   "# TYPE vllm:inter_token_latency_seconds histogram\n");
	for (int i = 0; i < n; i++) {
		const char *labels = ser[i].labels;
		const struct loghist *h = ser[i].itl;
		for (size_t b = 0; b < sizeof itl_buckets / sizeof *itl_buckets; b++)
			fprintf(f, "vllm:inter_token_latency_seconds_bucket{%s,le=\"%s\"} %lld\n", labels,
				report_le_text(itl_buckets[b]).s, (long long)loghist_count_le(h, itl_buckets[b]));
		fprintf(f, "vllm:inter_token_latency_seconds_bucket{%s,le=\"+Inf\"} %lld\n"
			   "vllm:inter_token_latency_seconds_sum{%s} %.9g\nvllm:inter_token_latency_seconds_count{%s} %lld\n",
			labels, (long long)h->n, labels, h->sum, labels, (long long)h->n);
	}
	hist_samples(f, "vllm:e2e_request_latency_seconds", "Histogram of e2e request latency in seconds.", ser,
		     n, true, report_e2e_buckets, report_n_e2e_buckets);
}

void report_replicas_prom(FILE *f, struct run_result *res)
{
	int n = res->n_replicas ? res->n_replicas : 1;
	struct series *ser = xcalloc((size_t)n, sizeof *ser);
	for (int i = 0; i < n; i++) {
		struct series *s = &ser[i];
		snprintf(s->labels, sizeof s->labels, "model_name=\"%s\",engine=\"%d\"", res->model.id, i);
		const struct engine_stats *es = res->n_replicas ? &res->replicas[i].engine : &res->engine;
		s->preemptions = es->preemptions;
		s->prefix_queries = es->prefix_queries;
		s->prefix_hits = es->prefix_hits;
		s->peak_kv = es->peak_kv_usage;
		if (res->n_replicas) {
			struct replica_result *rr = &res->replicas[i];
			s->prompt_tokens = rr->input_tokens;
			s->generation_tokens = rr->output_tokens;
			s->completed = rr->completed;
			s->peak_waiting = rr->peak_waiting;
			s->ttft = &rr->ttft;
			s->e2el = &rr->e2el;
			s->itl = &rr->itl;
			if (res->rep_hist) {   /* lean: its samples were sketched */
				static const struct replhist_one none;
				s->streamed = i < res->rep_hist->n ? &res->rep_hist->rep[i] : &none;
			}
		} else {
			s->prompt_tokens = res->all.total_input;
			s->generation_tokens = res->all.total_output;
			s->completed = res->all.completed;
			s->peak_waiting = res->peak_waiting;
			s->ttft = &res->all.ttft;
			s->e2el = &res->all.e2el;
			s->itl = &res->all.itl;
		}
	}
	write_series(f, ser, n);
	if (res->n_replicas)
		report_prom_replica_hists(f, res);
	if (!res->n_replicas)
		report_spec_prom(f, res, ser[0].labels);
	free(ser);
}
