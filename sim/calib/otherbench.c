#include "otherbench.h"

#include <math.h>
#include <stdbool.h>
#include <string.h>

/* A number at a path of object keys ("a", "b", NULL); NAN when absent. */
static double num_at(const json_t *o, const char *const *keys)
{
	for (; *keys && o; keys++)
		o = json_object_get(o, *keys);
	return json_is_number(o) ? json_number_value(o) : NAN;
}

#define NUM(o, ...) num_at((o), (const char *const[]){ __VA_ARGS__, NULL })

/* The first number under key anywhere in o (depth-first); NAN if none. */
static double find_num(const json_t *o, const char *key, int depth)
{
	if (!json_is_object(o) || depth > 6)
		return NAN;
	json_t *v = json_object_get(o, key);
	if (json_is_number(v))
		return json_number_value(v);
	const char *k;
	json_t *x;
	json_object_foreach((json_t *)o, k, x) {
		double d = find_num(x, key, depth + 1);
		if (!isnan(d))
			return d;
	}
	return NAN;
}

/* vLLM's PyTorch-benchmark-format sidecar (*.pytorch.json, written when
 * SAVE_TO_PYTORCH_BENCHMARK_FORMAT is set; vllm/benchmarks/lib/utils.py
 * convert_to_pytorch_benchmark_format): a list of records {benchmark:
 * {name, extra_info: {args}}, model: {name}, metric: {name,
 * benchmark_values: [v], extra_info: {the rest of the result}}}, one per
 * TTFT/TPOT/ITL statistic. */
static bool is_pytorch_sidecar(const json_t *top)
{
	const json_t *r = json_array_get(top, 0);
	return json_is_array(top) && json_is_object(json_object_get(r, "metric")) &&
	       json_object_get(json_object_get(r, "metric"), "benchmark_values") &&
	       json_is_object(json_object_get(r, "benchmark"));
}

/* The sidecar back as one vllm bench serve result: the first record's
 * extra_info, each record's metric, the model's name; the per-request
 * arrays left out (the sidecar is replayed at its mean lengths). */
static json_t *from_pytorch_sidecar(const json_t *top, const char *path, struct err *e)
{
	const json_t *first = json_array_get(top, 0);
	json_t *o = json_deep_copy(json_object_get(json_object_get(first, "metric"), "extra_info"));
	if (!json_is_object(o)) {
		json_decref(o);
		err_set(e, "%s: [0].metric.extra_info: expected the result's other keys (an object)", path);
		return NULL;
	}
	static const char *const arrays[] = { "input_lens", "output_lens", "start_times", "ttfts", "itls", "latencies",
					      "generated_texts", "errors", NULL };
	for (const char *const *a = arrays; *a; a++)
		json_object_del(o, *a);
	const char *model = json_string_value(json_object_get(json_object_get(first, "model"), "name"));
	if (model && !json_object_get(o, "model_id"))
		json_object_set_new(o, "model_id", json_string(model));
	size_t i;
	json_t *r;
	json_array_foreach((json_t *)top, i, r) {
		const json_t *m = json_object_get(r, "metric");
		const char *name = json_string_value(json_object_get(m, "name"));
		const json_t *v = json_array_get(json_object_get(m, "benchmark_values"), 0);
		if (name && json_is_number(v))
			json_object_set_new(o, name, json_real(json_number_value(v)));
	}
	return o;
}

const char *otherbench_sniff(const json_t *top)
{
	if (is_pytorch_sidecar(top))
		return "vllm-pytorch";
	if (!json_is_object(top))
		return NULL;
	if (json_object_get(top, "results_ttft_s_mean") ||
	    (json_object_get(top, "num_concurrent_requests") && json_object_get(top, "results_end_to_end_latency_s_mean")))
		return "llmperf";
	if (json_object_get(top, "streaming_metrics") ||
	    (json_object_get(top, "performance") && json_object_get(top, "request_info")))
		return "trtllm";
	if (json_is_object(json_object_get(top, "time_to_first_token")) && json_object_get(top, "request_latency"))
		return "genai-perf";
	const json_t *b = json_array_get(json_object_get(top, "benchmarks"), 0);
	if (json_is_object(json_object_get(b, "metrics")) &&
	    json_object_get(json_object_get(b, "metrics"), "time_to_first_token_ms"))
		return "guidellm";
	return NULL;
}

/* GenAI-Perf's value of a metric object in ms (its unit says). */
static double genai_ms(const json_t *top, const char *metric)
{
	const json_t *m = json_object_get(top, metric);
	double v = NUM(m, "avg");
	const char *unit = json_string_value(json_object_get(m, "unit"));
	if (unit && !strcmp(unit, "ns"))
		v /= 1e6;
	else if (unit && !strcmp(unit, "us"))
		v /= 1e3;
	else if (unit && !strcmp(unit, "s"))
		v *= 1e3;
	return v;
}

static void put(json_t *o, const char *key, double v)
{
	if (isfinite(v))
		json_object_set_new(o, key, json_real(v));
}

static json_t *one_run(const json_t *top, const char *tool, const char *top_model, const char *path, struct err *e)
{
	double ttft = NAN, e2e = NAN, n = NAN, in = NAN, out = NAN, conc = NAN, rate = NAN;
	const char *model = NULL;
	if (!strcmp(tool, "llmperf")) {
		ttft = NUM(top, "results_ttft_s_mean") * 1e3;
		e2e = NUM(top, "results_end_to_end_latency_s_mean") * 1e3;
		n = NUM(top, "results_num_completed_requests");
		in = NUM(top, "mean_input_tokens");
		out = NUM(top, "mean_output_tokens");
		conc = NUM(top, "num_concurrent_requests");
		model = json_string_value(json_object_get(top, "model"));
	} else if (!strcmp(tool, "trtllm")) {
		ttft = NUM(top, "streaming_metrics", "avg_ttft_ms");
		e2e = NUM(top, "performance", "avg_request_latency_ms");
		n = NUM(top, "request_info", "num_requests");
		in = NUM(top, "request_info", "avg_input_length");
		out = NUM(top, "request_info", "avg_output_length");
		rate = NUM(top, "world_info", "issue_rate");
		model = json_string_value(json_object_get(json_object_get(top, "engine"), "model"));
	} else if (!strcmp(tool, "guidellm")) {
		/* One entry of benchmarks[]: metrics.*.successful.mean; the
		 * strategy (concurrent streams, a constant or Poisson rate,
		 * synchronous = one at a time, throughput = all at once). */
		const json_t *m = json_object_get(top, "metrics");
		ttft = NUM(m, "time_to_first_token_ms", "successful", "mean");
		e2e = NUM(m, "request_latency", "successful", "mean") * 1e3;
		in = NUM(m, "prompt_token_count", "successful", "mean");
		out = NUM(m, "output_token_count", "successful", "mean");
		n = NUM(m, "request_totals", "successful");
		if (isnan(n))
			n = find_num(json_object_get(top, "scheduler_metrics"), "successful", 0);
		const json_t *cfg = json_object_get(top, "config");
		const json_t *st = json_object_get(cfg, "strategy");
		const char *type = json_string_value(json_object_get(st, "type_"));
		if (!type)
			type = json_string_value(json_object_get(st, "type"));
		if (type && !strcmp(type, "synchronous"))
			conc = 1;
		else if (type && !strcmp(type, "concurrent"))
			conc = find_num(st, "streams", 0);
		else if (type && (!strcmp(type, "constant") || !strcmp(type, "poisson") || !strcmp(type, "async")))
			rate = find_num(st, "rate", 0);
		model = top_model;
	} else {
		ttft = genai_ms(top, "time_to_first_token");
		e2e = genai_ms(top, "request_latency");
		n = NUM(top, "request_count", "avg");
		in = NUM(top, "input_sequence_length", "avg");
		out = NUM(top, "output_sequence_length", "avg");
		const json_t *cfg = json_object_get(top, "input_config");
		conc = find_num(cfg, "concurrency", 0);
		rate = find_num(cfg, "request_rate", 0);
		const json_t *names = json_object_get(cfg, "model");
		if (!names)
			names = json_object_get(cfg, "model_names");
		model = json_is_array(names) ? json_string_value(json_array_get(names, 0)) : json_string_value(names);
	}
	static const char *const need[] = { "the request count", "the mean input length", "the mean output length" };
	double vals[] = { n, in, out };
	for (int i = 0; i < 3; i++)
		if (!(vals[i] >= 1)) {
			err_set(e, "%s: %s summary without %s: the requests cannot be rebuilt", path, tool, need[i]);
			return NULL;
		}
	if (isnan(ttft) && isnan(e2e)) {
		err_set(e, "%s: %s summary without a mean TTFT or request latency: nothing measured", path, tool);
		return NULL;
	}
	json_t *o = json_object();
	json_object_set_new(o, "backend", json_string(tool));
	if (model)
		json_object_set_new(o, "model_id", json_string(model));
	json_object_set_new(o, "completed", json_integer((json_int_t)llround(n)));
	json_object_set_new(o, "total_input_tokens", json_integer((json_int_t)llround(in * n)));
	json_object_set_new(o, "total_output_tokens", json_integer((json_int_t)llround(out * n)));
	if (conc >= 1)
		json_object_set_new(o, "max_concurrency", json_integer((json_int_t)llround(conc)));
	if (rate > 0 && isfinite(rate))
		json_object_set_new(o, "request_rate", json_real(rate));
	else
		json_object_set_new(o, "request_rate", json_string("inf"));
	put(o, "mean_ttft_ms", ttft);
	put(o, "mean_e2el_ms", e2e);
	return o;
}

json_t *otherbench_as_vllm(const json_t *top, const char *path, struct err *e)
{
	const char *tool = otherbench_sniff(top);
	if (!tool) {
		err_set(e, "%s: not an LLMPerf, trtllm-bench, GenAI-Perf or GuideLLM summary", path);
		return NULL;
	}
	json_t *runs = json_array();
	if (!strcmp(tool, "vllm-pytorch")) {
		json_t *o = from_pytorch_sidecar(top, path, e);
		if (!o) {
			json_decref(runs);
			return NULL;
		}
		json_array_append_new(runs, o);
		return runs;
	}
	if (strcmp(tool, "guidellm")) {
		json_t *o = one_run(top, tool, NULL, path, e);
		if (!o) {
			json_decref(runs);
			return NULL;
		}
		json_array_append_new(runs, o);
		return runs;
	}
	const char *model = json_string_value(json_object_get(json_object_get(top, "config"), "model"));
	size_t i;
	json_t *b;
	json_array_foreach(json_object_get(top, "benchmarks"), i, b) {
		json_t *o = one_run(b, tool, model, path, e);
		if (!o) {
			err_prefix(e, "benchmarks[%zu]", i);
			json_decref(runs);
			return NULL;
		}
		json_array_append_new(runs, o);
	}
	return runs;
}
