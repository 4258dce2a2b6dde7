#include "benchres.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stats.h"

#include "benchdetail.h"
#include "jsonfile.h"

const char *const benchres_stat_keys[] = { "mean", "median", "p99", NULL };

bool benchres_sniff(const json_t *top)
{
	static const char *const keys[] = { "input_lens", "output_lens", "duration", "completed",
					    "mean_ttft_ms", "request_throughput", "total_output_tokens",
					    "ttfts" };
	if (!json_is_object(top))
		return false;
	int n = 0;
	for (size_t i = 0; i < sizeof keys / sizeof *keys; i++)
		n += json_object_get(top, keys[i]) != NULL;
	return n >= 2;
}

/* A number key: NAN when absent or null; -1 and e when of another type. */
static int get_num(const json_t *top, const char *key, double *out, const char *path, struct err *e)
{
	const json_t *v = json_object_get(top, key);
	*out = NAN;
	if (!v || json_is_null(v))
		return 0;
	if (!json_is_number(v))
		return err_set(e, "%s: %s: expected a number, got a JSON %s", path, key,
			       json_is_string(v) ? "string" : json_is_array(v) ? "array" :
			       json_is_object(v) ? "object" : "boolean");
	*out = json_number_value(v);
	return 0;
}

static int get_count(const json_t *top, const char *key, int64_t *out, const char *path, struct err *e)
{
	double v;
	if (get_num(top, key, &v, path, e))
		return -1;
	if (isnan(v)) {
		*out = -1;
		return 0;
	}
	if (v < 0 || v != floor(v) || v > 9e15)
		return err_set(e, "%s: %s: expected a count >= 0, got %g", path, key, v);
	*out = (int64_t)v;
	return 0;
}

/* E2EL from `latencies` (seconds) when the summary keys lack it, over
 * the successful requests (output_lens > 0) as vLLM computes it. */
static void e2el_from_latencies(struct benchres *b, const json_t *lat, const json_t *out)
{
	struct samples v = { 0 };
	for (size_t i = 0; i < json_array_size(lat); i++) {
		const json_t *x = json_array_get(lat, i), *o = json_array_get(out, i);
		if (!json_is_number(x)) {
			samples_free(&v);
			return;
		}
		if (json_is_integer(o) && json_integer_value(o) == 0)
			continue;   /* failed: left out of vLLM's statistics */
		samples_add(&v, json_number_value(x) * 1e3);
	}
	double *s = b->ms[LAT_E2EL];
	if (v.n && isnan(s[BENCH_MEAN]))
		s[BENCH_MEAN] = samples_mean(&v);
	if (v.n && isnan(s[BENCH_MEDIAN]))
		s[BENCH_MEDIAN] = samples_percentile(&v, 50);
	if (v.n && isnan(s[BENCH_P99]))
		s[BENCH_P99] = samples_percentile(&v, 99);
	samples_free(&v);
}

static bool has_array(const json_t *top, const char *key)
{
	return json_is_array(json_object_get(top, key));
}

int benchres_from_json(struct benchres *b, const json_t *top, const char *path, struct err *e)
{
	memset(b, 0, sizeof *b);
	snprintf(b->path, sizeof b->path, "%s", path);
	if (!json_is_object(top))
		return err_set(e, "%s: expected a JSON object (a vllm bench serve result)", path);
	const char *mid = json_string_value(json_object_get(top, "model_id"));
	snprintf(b->model_id, sizeof b->model_id, "%s", mid ? mid : "");

	const json_t *rate = json_object_get(top, "request_rate");
	b->request_rate = NAN;
	if (json_is_string(rate)) {
		if (strcmp(json_string_value(rate), "inf"))
			return err_set(e, "%s: request_rate: expected a number or \"inf\", got \"%s\"", path,
				       json_string_value(rate));
		b->request_rate = INFINITY;
	} else if (get_num(top, "request_rate", &b->request_rate, path, e)) {
		return -1;
	}
	if (!isnan(b->request_rate) && !(b->request_rate > 0))
		return err_set(e, "%s: request_rate: expected a rate > 0, got %g", path, b->request_rate);
	if (get_num(top, "burstiness", &b->burstiness, path, e) ||
	    get_count(top, "max_concurrency", &b->max_concurrency, path, e) ||
	    get_count(top, "num_prompts", &b->num_prompts, path, e) ||
	    get_count(top, "completed", &b->completed, path, e) ||
	    get_count(top, "failed", &b->failed, path, e) ||
	    get_num(top, "duration", &b->duration_s, path, e) ||
	    get_count(top, "total_input_tokens", &b->total_input, path, e) ||
	    get_count(top, "total_output_tokens", &b->total_output, path, e) ||
	    get_num(top, "request_throughput", &b->request_throughput, path, e) ||
	    get_num(top, "output_throughput", &b->output_throughput, path, e) ||
	    get_num(top, "total_token_throughput", &b->total_token_throughput, path, e))
		return -1;
	if (b->max_concurrency < 0)
		b->max_concurrency = 0;
	for (int m = 0; m < N_LAT_METRICS; m++)
		for (int s = 0; s < BENCH_N_STATS; s++) {
			char key[48];
			snprintf(key, sizeof key, "%s_%s_ms", benchres_stat_keys[s], lat_metrics[m].key);
			if (get_num(top, key, &b->ms[m][s], path, e))
				return -1;
		}
	/* SGLang's bench_serving writes the same statistics with its own E2E
	 * and token-total names (bench_serving.py; formats.md §5). */
	bool sglang = json_object_get(top, "mean_e2e_latency_ms") || json_object_get(top, "sharegpt_output_len") ||
		      json_object_get(top, "accept_length");
	for (int s = 0; s < BENCH_N_STATS && sglang; s++) {
		char key[48];
		snprintf(key, sizeof key, "%s_e2e_latency_ms", benchres_stat_keys[s]);
		if (isnan(b->ms[LAT_E2EL][s]) && get_num(top, key, &b->ms[LAT_E2EL][s], path, e))
			return -1;
	}
	if (sglang && b->total_input < 0 && get_count(top, "total_input", &b->total_input, path, e))
		return -1;
	if (sglang && b->total_output < 0 && get_count(top, "total_output", &b->total_output, path, e))
		return -1;
	/* The per-request arrays (--save-detailed, --output-details): each
	 * request checked, and the means they give standing in for missing
	 * summary keys or checked against present ones. */
	struct benchdetail d;
	if (benchdetail_read(&d, top, path, e) || benchdetail_check(&d, b, path, e))
		return -1;
	b->n_detailed = d.n;
	b->n_detailed_ok = d.n_ok;
	b->has_input_lens = has_array(top, "input_lens");
	b->has_output_lens = has_array(top, "output_lens");
	b->has_start_times = has_array(top, "start_times");
	b->has_latencies = has_array(top, "latencies");
	if (b->has_latencies)
		e2el_from_latencies(b, json_object_get(top, "latencies"), json_object_get(top, "output_lens"));
	if (sglang)
		snprintf(b->version, sizeof b->version, "sglang bench_serving");
	else if (json_object_get(top, "request_goodput:"))
		snprintf(b->version, sizeof b->version, "benchmark_serving.py (old)");
	else if (b->has_start_times || b->has_latencies || json_object_get(top, "rtfx"))
		snprintf(b->version, sizeof b->version, "serve.py (newest)");
	else
		snprintf(b->version, sizeof b->version, "serve.py (about v0.11)");
	return 0;
}

int benchres_load(struct benchres *b, const char *path, struct err *e)
{
	json_t *top = jsonfile_load(path, JSON_REJECT_DUPLICATES, e);
	if (!top) {
		memset(b, 0, sizeof *b);
		return -1;
	}
	int rc = benchres_from_json(b, top, path, e);
	json_decref(top);
	return rc;
}

int benchres_n_means(const struct benchres *b)
{
	return !isnan(b->ms[LAT_TTFT][BENCH_MEAN]) + !isnan(b->ms[LAT_ITL][BENCH_MEAN]) +
	       !isnan(b->ms[LAT_E2EL][BENCH_MEAN]);
}
