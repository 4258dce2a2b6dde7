#include "report.h"
#include "report_replicas.h"
#include "report_spec.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "wholefile.h"

/* One metric of vllm bench serve: its key, title and how to read it. */
struct metric {
	const char *key;      /* ttft, tpot, itl, e2el */
	const char *title;    /* block header */
	const char *abbr;     /* TTFT, TPOT, ITL, E2EL */
};

static const struct metric metrics[] = {
	{ "ttft", "Time to First Token", "TTFT" },
	{ "tpot", "Time per Output Token (excl. 1st token)", "TPOT" },
	{ "itl", "Inter-token Latency", "ITL" },
	{ "e2el", "End-to-end Latency", "E2EL" },
};

/* Summary statistics of one metric in ms, exact for per-request samples,
 * histogram-based for ITL. */
struct summary {
	double mean, median, std;
	double p[16];
};

static void summarize(struct group_metrics *g, int which, const struct report_opts *o,
		      struct summary *s)
{
	memset(s, 0, sizeof *s);
	if (which == 2) {
		s->mean = loghist_mean(&g->itl) * 1e3;
		s->std = loghist_std(&g->itl) * 1e3;
		s->median = loghist_percentile(&g->itl, 50) * 1e3;
		for (size_t i = 0; i < o->n_percentiles; i++)
			s->p[i] = loghist_percentile(&g->itl, o->percentiles[i]) * 1e3;
		return;
	}
	struct samples *v = which == 0 ? &g->ttft : which == 1 ? &g->tpot : &g->e2el;
	s->mean = samples_mean(v) * 1e3;
	s->std = samples_std(v) * 1e3;
	s->median = samples_percentile(v, 50) * 1e3;
	for (size_t i = 0; i < o->n_percentiles; i++)
		s->p[i] = samples_percentile(v, o->percentiles[i]) * 1e3;
}

/* "99" for 99, "99.9" for 99.9, as serve.py's p_word. */
static void p_word(double p, char *out, size_t cap)
{
	if (p == floor(p))
		snprintf(out, cap, "%d", (int)p);
	else
		snprintf(out, cap, "%g", p);
}

static double group_duration(const struct group_metrics *g)
{
	return (double)(g->last_done_ns - g->start_ns) / 1e9;
}

static int64_t peak_tokens_per_s(const struct run_result *res)
{
	return res->peak_second_tokens;
}

static void line_int(FILE *f, const char *label, int64_t v)
{
	fprintf(f, "%-40s %-10lld\n", label, (long long)v);
}

static void line_f(FILE *f, const char *label, double v)
{
	fprintf(f, "%-40s %-10.2f\n", label, v);
}

static void centered(FILE *f, const char *s, char fill)
{
	int n = 50, len = (int)strlen(s), left = (n - len) / 2, right = n - len - left;
	for (int i = 0; i < left; i++)
		fputc(fill, f);
	fputs(s, f);
	for (int i = 0; i < right; i++)
		fputc(fill, f);
	fputc('\n', f);
}

static void vllm_block(FILE *f, struct run_result *res, struct group_metrics *g,
		       const struct report_opts *o, bool whole_run)
{
	const struct scenario *sc = &res->sc;
	double dur = group_duration(g);
	line_int(f, "Successful requests:", g->completed);
	line_int(f, "Failed requests:", g->failed);
	if (sc->max_concurrency > 0)
		line_int(f, "Maximum request concurrency:", sc->max_concurrency);
	if (whole_run && !sc->n_stages && !isinf(sc->request_rate) && !sc->trace[0] && !sc->users &&
	    sc->ramp_up_strategy == RAMP_NONE)
		line_f(f, "Request rate configured (RPS):", sc->request_rate);
	line_f(f, "Benchmark duration (s):", dur);
	line_int(f, "Total input tokens:", g->total_input);
	line_int(f, "Total generated tokens:", g->total_output);
	line_f(f, "Request throughput (req/s):", dur > 0 ? (double)g->completed / dur : 0);
	if (sc->slo_ttft_ms || sc->slo_tpot_ms || sc->slo_e2el_ms)
		line_f(f, "Request goodput (req/s):", dur > 0 ? (double)g->good / dur : 0);
	line_f(f, "Output token throughput (tok/s):", dur > 0 ? (double)g->total_output / dur : 0);
	if (whole_run) {
		line_f(f, "Peak output token throughput (tok/s):", (double)peak_tokens_per_s(res));
		line_f(f, "Peak concurrent requests:", (double)res->max_concurrent_per_second);
	}
	line_f(f, "Total token throughput (tok/s):",
	       dur > 0 ? (double)(g->total_input + g->total_output) / dur : 0);
	for (int m = 0; m < 4; m++) {
		/* vllm bench serve prints ttft, tpot, itl by default; e2el on request.
		 * servesim prints all four unless --percentile-metrics chose. */
		if (o->metrics_mask && !(o->metrics_mask & 1u << m))
			continue;
		struct summary s;
		summarize(g, m, o, &s);
		centered(f, metrics[m].title, '-');
		char label[64];
		snprintf(label, sizeof label, "Mean %s (ms):", metrics[m].abbr);
		line_f(f, label, s.mean);
		snprintf(label, sizeof label, "Median %s (ms):", metrics[m].abbr);
		line_f(f, label, s.median);
		for (size_t i = 0; i < o->n_percentiles; i++) {
			char w[16];
			p_word(o->percentiles[i], w, sizeof w);
			snprintf(label, sizeof label, "P%s %s (ms):", w, metrics[m].abbr);
			line_f(f, label, s.p[i]);
		}
	}
}

/* Ollama's per-request fields (api/types.go Metrics), in ns, from a
 * request record; the same definitions for every engine (load 0 for vLLM).
 * prompt_eval_count counts cached tokens too (Ollama on llama-server:
 * cache_n + prompt_n), prompt_eval_duration only the slot's prompt steps;
 * eval_* run from the first token to the last (llama-server's
 * predicted_n, predicted_ms). */
struct ollama_fields {
	int64_t total_ns, load_ns, prompt_eval_count, prompt_eval_ns, eval_count, eval_ns;
};

static void ollama_fields(const struct request *r, struct ollama_fields *o)
{
	o->total_ns = r->finish_ns - r->send_ns;
	o->load_ns = r->load_ns;
	o->prompt_eval_count = r->prompt_eval_count > 0 ? r->prompt_eval_count : r->prompt_len;
	o->prompt_eval_ns = r->first_token_ns - r->first_scheduled_ns;
	o->eval_count = r->output_len;
	o->eval_ns = r->last_token_ns - r->first_token_ns;
}

/* SEED C10: count / duration × 1e9; 0 when the duration is 0. */
static double c10_rate(int64_t count, int64_t ns)
{
	return ns > 0 ? (double)count / (double)ns * 1e9 : 0;
}

/* Means of the Ollama fields and C10 rates over completed requests. */
struct ollama_means {
	double total_ms, load_ms, prompt_eval_count, prompt_eval_ms, eval_count, eval_ms;
	double prefill_tok_s, decode_tok_s;
	int64_t n, n_prefill, n_decode;
	/* llama-server's /metrics counters */
	int64_t prompt_tokens, predicted_tokens;
	double prompt_s, predicted_s;
};

static void ollama_means(const struct run_result *res, struct ollama_means *m)
{
	memset(m, 0, sizeof *m);
	for (size_t i = 0; i < res->reqs.len; i++) {
		const struct request *r = &res->reqs.v[i];
		if (r->state != REQ_FINISHED)
			continue;
		struct ollama_fields o;
		ollama_fields(r, &o);
		m->n++;
		m->total_ms += (double)o.total_ns / 1e6;
		m->load_ms += (double)o.load_ns / 1e6;
		m->prompt_eval_count += (double)o.prompt_eval_count;
		m->prompt_eval_ms += (double)o.prompt_eval_ns / 1e6;
		m->eval_count += (double)o.eval_count;
		m->eval_ms += (double)o.eval_ns / 1e6;
		if (o.prompt_eval_ns > 0) {
			m->prefill_tok_s += c10_rate(o.prompt_eval_count, o.prompt_eval_ns);
			m->n_prefill++;
		}
		if (o.eval_ns > 0) {
			m->decode_tok_s += c10_rate(o.eval_count, o.eval_ns);
			m->n_decode++;
		}
		m->prompt_tokens += o.prompt_eval_count - r->cached_tokens;
		m->prompt_s += (double)o.prompt_eval_ns / 1e9;
		m->predicted_tokens += o.eval_count;
		m->predicted_s += (double)o.eval_ns / 1e9;
	}
	double n = m->n ? (double)m->n : 1;
	m->total_ms /= n;
	m->load_ms /= n;
	m->prompt_eval_count /= n;
	m->prompt_eval_ms /= n;
	m->eval_count /= n;
	m->eval_ms /= n;
	m->prefill_tok_s /= m->n_prefill ? (double)m->n_prefill : 1;
	m->decode_tok_s /= m->n_decode ? (double)m->n_decode : 1;
}

/* The Ollama / llama-server sections of the text report. */
static void slots_text(FILE *f, const struct run_result *res)
{
	const struct engine_stats *es = &res->engine;
	bool ollama = res->sc.engine_kind == ENGINE_OLLAMA;
	centered(f, ollama ? "Engine (Ollama)" : "Engine (llama.cpp server)", '-');
	line_int(f, "Parallel slots (num_parallel):", es->num_parallel);
	line_int(f, "Context per slot (num_ctx):", es->num_ctx);
	line_int(f, "Batch (n_batch):", es->n_batch);
	line_int(f, "Micro-batch (n_ubatch):", es->n_ubatch);
	line_f(f, "KV cache allocated (GiB):", es->kv_bytes / 1073741824.0);
	if (es->cpu_hardware[0] && es->gpu_layers == 0 && res->hw.hw_class == HW_CPU) {
		fprintf(f, "%-40s %s\n", "Layers on:", es->cpu_hardware);
	} else {
		line_int(f, "Layers on the device (num_gpu):", es->gpu_layers);
		line_int(f, "Layers in the model (with output):", es->layers);
		if (es->gpu_layers < es->layers)
			fprintf(f, "%-40s %s\n", "Other layers on:", es->cpu_hardware);
	}
	line_int(f, "Engine steps (llama_decode calls):", es->steps);
	line_f(f, "Engine busy (%):", res->end_ns ? 100 * es->busy_s / ((double)res->end_ns / 1e9) : 0);
	line_int(f, "Peak requests waiting:", res->peak_waiting);
	line_f(f, "Prompt cache hit rate (%):",
	       es->prefix_queries ? 100.0 * (double)es->prefix_hits / (double)es->prefix_queries : 0);
	if (ollama) {
		line_int(f, "Model loads:", es->model_loads);
		line_f(f, "Load duration each (ms):", 1e3 * es->load_s);
		line_int(f, "Rejected, pending queue full (503):", es->rejected);
		line_int(f, "Truncated prompts:", es->truncated_prompts);
		line_int(f, "Context shifts:", es->context_shifts);
	} else {
		line_int(f, "Answers cut at the context's end:", es->truncated_outputs);
	}
	struct ollama_means m;
	ollama_means(res, &m);
	centered(f, "Ollama timings (mean per request)", '-');
	line_f(f, "load_duration (ms):", m.load_ms);
	line_f(f, "prompt_eval_count:", m.prompt_eval_count);
	line_f(f, "prompt_eval_duration (ms):", m.prompt_eval_ms);
	line_f(f, "eval_count:", m.eval_count);
	line_f(f, "eval_duration (ms):", m.eval_ms);
	line_f(f, "total_duration (ms):", m.total_ms);
	line_f(f, "Prefill rate (tok/s, C10):", m.prefill_tok_s);
	line_f(f, "Decode rate (tok/s, C10):", m.decode_tok_s);
}

/* The vLLM engine's own section: resolved settings and the KV pool. */
static void vllm_engine_text(FILE *f, const struct run_result *res)
{
	const struct engine_stats *es = &res->engine;
	centered(f, "Engine (vLLM V1)", '-');
	line_int(f, "max_num_batched_tokens:", es->max_num_batched_tokens);
	line_int(f, "max_num_seqs:", es->max_num_seqs);
	line_int(f, "max_model_len:", es->max_model_len);
	line_int(f, "Engine steps:", es->steps);
	line_f(f, "Engine busy (%):", res->end_ns ? 100 * es->busy_s / ((double)res->end_ns / 1e9) : 0);
	if (es->timing) {            /* vLLM's newer timing (docs/engine-vllm.md) */
		fprintf(f, "%-40s %s\n", "vLLM version (timing):", es->vllm_version);
		fprintf(f, "%-40s %s\n", "Async scheduling:", es->async_scheduling ? "on" : "off");
		line_int(f, "Largest CUDA-graph size:", es->max_capture_size);
		line_int(f, "Steps replaying a CUDA graph:", es->graph_steps);
		line_int(f, "Steps run eager:", es->eager_steps);
	}
	centered(f, "KV cache pool", '-');
	line_int(f, "GPU KV blocks:", es->num_gpu_blocks);
	line_int(f, "Block size (tokens):", es->block_size);
	line_f(f, "KV pool (GiB per GPU):", (double)es->num_gpu_blocks * es->kv_bytes_per_block / 1073741824.0);
	if (es->num_cpu_blocks)
		line_int(f, "CPU offload blocks:", es->num_cpu_blocks);
	line_f(f, "Peak KV cache usage (%):", 100 * es->peak_kv_usage);
	line_int(f, "Peak requests waiting:", res->peak_waiting);
	line_int(f, "Preemptions:", es->preemptions);
	line_f(f, "Prefix cache hit rate (%):",
	       es->prefix_queries ? 100.0 * (double)es->prefix_hits / (double)es->prefix_queries : 0);
	report_spec_text(f, res);
}

void report_text(FILE *f, struct run_result *res, const struct report_opts *o)
{
	centered(f, " Serving Benchmark Result ", '=');
	vllm_block(f, res, &res->all, o, true);
	fprintf(f, "==================================================\n");

	const struct engine_stats *es = &res->engine;
	struct group_metrics *g = &res->all;
	double n = g->completed ? (double)g->completed : 1;
	centered(f, " servesim ", '=');
	fprintf(f, "%s on %s, weights %s, tensor parallel %lld", res->model.id, res->hw.id,
		res->weights->name, (long long)res->sc.tensor_parallel_size);
	if (res->sc.pipeline_parallel_size > 1)
		fprintf(f, ", pipeline parallel %lld", (long long)res->sc.pipeline_parallel_size);
	fputc('\n', f);
	if (res->sc.engine_kind == ENGINE_VLLM)
		vllm_engine_text(f, res);
	else
		slots_text(f, res);
	centered(f, "Where TTFT went (mean)", '-');
	line_f(f, "API and tokenizer path (ms):", 1e3 * g->sum_ttft_overhead_s / n);
	line_f(f, "Queue, before first scheduled (ms):", 1e3 * g->sum_ttft_queue_s / n);
	line_f(f, "Own prefill compute (ms):", 1e3 * g->sum_ttft_own_s / n);
	line_f(f, "Steps shared with other requests (ms):", 1e3 * g->sum_ttft_shared_s / n);
	line_f(f, "Waiting between chunks (ms):", 1e3 * g->sum_ttft_between_s / n);
	if (es->timing) {            /* vLLM's newer timing (docs/engine-vllm.md) */
		line_f(f, "Waiting for the batch queue (ms):", 1e3 * g->sum_ttft_batch_queue_s / n);
		line_f(f, "CUDA-graph padding (ms):", 1e3 * g->sum_ttft_graph_pad_s / n);
		line_f(f, "Output path (ms):", 1e3 * g->sum_ttft_output_s / n);
	}
	double nd = es->itl_tokens ? (double)es->itl_tokens : 1;
	centered(f, "Where ITL went (mean per decode token)", '-');
	line_f(f, "Reading weights (ms):", 1e3 * es->itl_weights_s / nd);
	line_f(f, "Reading KV cache (ms):", 1e3 * es->itl_kv_s / nd);
	line_f(f, "Prefill chunks sharing the step (ms):", 1e3 * es->itl_prefill_s / nd);
	line_f(f, "Step overhead (ms):", 1e3 * es->itl_overhead_s / nd);
	if (es->itl_pipeline_s > 0)
		line_f(f, "Pipeline bubble (ms):", 1e3 * es->itl_pipeline_s / nd);
	centered(f, "Where step time went (%)", '-');
	double tot = es->time.total > 0 ? es->time.total : 1;
	line_f(f, "Dense weights and matmuls:", 100 * es->time.dense / tot);
	if (es->time.experts > 0)
		line_f(f, "MoE experts:", 100 * es->time.experts / tot);
	line_f(f, "LM head:", 100 * es->time.lm_head / tot);
	line_f(f, "Prefill attention:", 100 * es->time.attn_prefill / tot);
	line_f(f, "Decode attention (KV reads):", 100 * es->time.attn_decode / tot);
	if (es->time.allreduce > 0)
		line_f(f, "Tensor-parallel all-reduce:", 100 * es->time.allreduce / tot);
	if (es->time.offload > 0)
		line_f(f, "Offloaded weights over the host link:", 100 * es->time.offload / tot);
	line_f(f, "Per-step overhead:", 100 * es->time.overhead / tot);
	if (es->time.pipeline > 0)
		line_f(f, "Pipeline bubble (hops, waits):", 100 * es->time.pipeline / tot);
	for (int s = 0; res->n_stages > 1 && s < res->n_stages; s++) {
		char title[64];
		snprintf(title, sizeof title, " Stage %d: %g req/s for %g s ", s, res->sc.stages[s].rate,
			 res->sc.stages[s].duration_s);
		centered(f, title, '=');
		vllm_block(f, res, run_stage_metrics(res, s), o, false);
	}
	report_replicas_text(f, res);
	fprintf(f, "==================================================\n");
}

static void put_metrics(json_t *o, struct group_metrics *g, const struct report_opts *opts)
{
	for (int m = 0; m < 4; m++) {
		if (opts->metrics_mask && !(opts->metrics_mask & 1u << m))
			continue;
		struct summary s;
		summarize(g, m, opts, &s);
		char key[64];
		snprintf(key, sizeof key, "mean_%s_ms", metrics[m].key);
		json_object_set_new(o, key, json_real(s.mean));
		snprintf(key, sizeof key, "median_%s_ms", metrics[m].key);
		json_object_set_new(o, key, json_real(s.median));
		snprintf(key, sizeof key, "std_%s_ms", metrics[m].key);
		json_object_set_new(o, key, json_real(s.std));
		for (size_t i = 0; i < opts->n_percentiles; i++) {
			char w[16];
			p_word(opts->percentiles[i], w, sizeof w);
			snprintf(key, sizeof key, "p%s_%s_ms", w, metrics[m].key);
			json_object_set_new(o, key, json_real(s.p[i]));
		}
	}
}

static void put_results(json_t *o, const struct run_result *res, struct group_metrics *g,
			const struct report_opts *opts)
{
	const struct scenario *sc = &res->sc;
	double dur = group_duration(g);
	json_object_set_new(o, "duration", json_real(dur));
	json_object_set_new(o, "completed", json_integer(g->completed));
	json_object_set_new(o, "failed", json_integer(g->failed));
	json_object_set_new(o, "total_input_tokens", json_integer(g->total_input));
	json_object_set_new(o, "total_output_tokens", json_integer(g->total_output));
	json_object_set_new(o, "request_throughput", json_real(dur > 0 ? (double)g->completed / dur : 0));
	bool slo = sc->slo_ttft_ms || sc->slo_tpot_ms || sc->slo_e2el_ms;
	json_object_set_new(o, "request_goodput",
			    slo ? json_real(dur > 0 ? (double)g->good / dur : 0) : json_null());
	json_object_set_new(o, "output_throughput", json_real(dur > 0 ? (double)g->total_output / dur : 0));
	json_object_set_new(o, "total_token_throughput",
			    json_real(dur > 0 ? (double)(g->total_input + g->total_output) / dur : 0));
	put_metrics(o, g, opts);
}

/* vllm bench serve --save-detailed: one entry per request, in send order
 * of the request table; seconds; a failed request has output 0, no times
 * and its error, as vLLM writes it. `itls` is left out: servesim keeps no
 * per-token times (the ITL histogram is in the summary keys). Ollama's
 * per-request fields come along for every engine. */
static void put_detailed(json_t *o, const struct run_result *res)
{
	json_t *in = json_array(), *out = json_array(), *ttft = json_array(), *lat = json_array();
	json_t *start = json_array(), *errs = json_array(), *ol = json_array();
	for (size_t i = 0; i < res->reqs.len; i++) {
		const struct request *r = &res->reqs.v[i];
		bool ok = r->state == REQ_FINISHED;
		json_array_append_new(in, json_integer(r->prompt_len));
		json_array_append_new(out, json_integer(ok ? r->output_len : 0));
		json_array_append_new(ttft, ok ? json_real((double)(r->first_token_ns - r->send_ns) / 1e9) : json_real(0));
		json_array_append_new(lat, ok ? json_real((double)(r->finish_ns - r->send_ns) / 1e9) : json_real(0));
		json_array_append_new(start, json_real((double)r->send_ns / 1e9));
		json_array_append_new(errs, json_string(ok || !r->fail_reason ? "" : r->fail_reason));
		json_t *f = json_object();
		if (ok) {
			struct ollama_fields of;
			ollama_fields(r, &of);
			json_object_set_new(f, "total_duration", json_integer(of.total_ns));
			json_object_set_new(f, "load_duration", json_integer(of.load_ns));
			json_object_set_new(f, "prompt_eval_count", json_integer(of.prompt_eval_count));
			json_object_set_new(f, "prompt_eval_duration", json_integer(of.prompt_eval_ns));
			json_object_set_new(f, "eval_count", json_integer(of.eval_count));
			json_object_set_new(f, "eval_duration", json_integer(of.eval_ns));
		}
		json_array_append_new(ol, f);
	}
	json_object_set_new(o, "input_lens", in);
	json_object_set_new(o, "output_lens", out);
	json_object_set_new(o, "ttfts", ttft);
	json_object_set_new(o, "latencies", lat);
	json_object_set_new(o, "start_times", start);
	json_object_set_new(o, "errors", errs);
	json_object_set_new(o, "ollama_metrics", ol);
}

json_t *report_ttft_breakdown(const struct group_metrics *g)
{
	double n = g->completed ? (double)g->completed : 1;
	json_t *o = json_object();
	json_object_set_new(o, "api_overhead_ms", json_real(1e3 * g->sum_ttft_overhead_s / n));
	json_object_set_new(o, "queue_ms", json_real(1e3 * g->sum_ttft_queue_s / n));
	json_object_set_new(o, "own_prefill_ms", json_real(1e3 * g->sum_ttft_own_s / n));
	json_object_set_new(o, "shared_steps_ms", json_real(1e3 * g->sum_ttft_shared_s / n));
	json_object_set_new(o, "between_chunks_ms", json_real(1e3 * g->sum_ttft_between_s / n));
	/* vLLM's newer timing (issue 18); absent where it is off, so servesim
	 * 1's timing (engine.vllm_version = 0.10) keeps its output. */
	if (g->sum_ttft_batch_queue_s > 0 || g->sum_ttft_graph_pad_s > 0 || g->sum_ttft_output_s > 0) {
		json_object_set_new(o, "batch_queue_ms", json_real(1e3 * g->sum_ttft_batch_queue_s / n));
		json_object_set_new(o, "graph_padding_ms", json_real(1e3 * g->sum_ttft_graph_pad_s / n));
		json_object_set_new(o, "output_path_ms", json_real(1e3 * g->sum_ttft_output_s / n));
	}
	return o;
}

json_t *report_itl_breakdown(const struct engine_stats *es)
{
	double n = es->itl_tokens ? (double)es->itl_tokens : 1;
	json_t *o = json_object();
	json_object_set_new(o, "weights_ms", json_real(1e3 * es->itl_weights_s / n));
	json_object_set_new(o, "kv_cache_ms", json_real(1e3 * es->itl_kv_s / n));
	json_object_set_new(o, "prefill_sharing_ms", json_real(1e3 * es->itl_prefill_s / n));
	json_object_set_new(o, "overhead_ms", json_real(1e3 * es->itl_overhead_s / n));
	json_object_set_new(o, "pipeline_ms", json_real(1e3 * es->itl_pipeline_s / n));
	return o;
}

json_t *report_json(struct run_result *res, const struct report_opts *opts)
{
	const struct scenario *sc = &res->sc;
	json_t *o = json_object();
	json_object_set_new(o, "date", json_string("simulated"));
	json_object_set_new(o, "endpoint_type", json_string("servesim"));
	static const char *const backends[] = { [ENGINE_VLLM] = "vllm", [ENGINE_OLLAMA] = "ollama",
						[ENGINE_LLAMACPP] = "llama.cpp" };
	json_object_set_new(o, "backend", json_string(backends[sc->engine_kind]));
	json_object_set_new(o, "label", json_null());
	json_object_set_new(o, "model_id", json_string(res->model.id));
	json_object_set_new(o, "tokenizer_id", json_string(res->model.id));
	json_object_set_new(o, "num_prompts", json_integer((json_int_t)res->reqs.len));
	/* One rate for the run, as vLLM saves it; stages, a trace and closed-loop
	 * users have none (their rates are in `stages`, or there is no rate). */
	bool one_rate = !sc->n_stages && !sc->trace[0] && sc->users == 0;
	json_object_set_new(o, "request_rate", !one_rate ? json_null() :
					       isinf(sc->request_rate) ? json_string("inf") :
					       json_real(sc->request_rate));
	json_object_set_new(o, "burstiness", json_real(sc->burstiness));
	json_object_set_new(o, "max_concurrency",
			    sc->max_concurrency > 0 ? json_integer(sc->max_concurrency) : json_null());
	if (sc->ramp_up_strategy != RAMP_NONE) {
		json_object_set_new(o, "ramp_up_strategy",
				    json_string(sc->ramp_up_strategy == RAMP_LINEAR ? "linear" : "exponential"));
		json_object_set_new(o, "ramp_up_start_rps", json_real(sc->ramp_up_start_rps));
		json_object_set_new(o, "ramp_up_end_rps", json_real(sc->ramp_up_end_rps));
	}
	put_results(o, res, &res->all, opts);
	json_object_set_new(o, "max_output_tokens_per_s", json_real((double)peak_tokens_per_s(res)));
	json_object_set_new(o, "max_concurrent_requests", json_integer(res->max_concurrent_per_second));
	if (opts->detailed)
		put_detailed(o, res);

	json_t *stages = json_array();
	for (int s = 0; s < res->n_stages; s++) {
		json_t *st = json_object();
		json_object_set_new(st, "stage", json_integer(s));
		if (sc->n_stages) {
			json_object_set_new(st, "request_rate", json_real(sc->stages[s].rate));
			json_object_set_new(st, "stage_duration_s", json_real(sc->stages[s].duration_s));
		}
		put_results(st, res, run_stage_metrics(res, s), opts);
		json_array_append_new(stages, st);
	}
	json_object_set_new(o, "stages", stages);

	const struct engine_stats *es = &res->engine;
	struct group_metrics *g = &res->all;
	double n = g->completed ? (double)g->completed : 1;
	json_t *ss = json_object();
	json_object_set_new(ss, "version", json_string(SERVESIM_VERSION));
	json_object_set_new(ss, "scenario", json_string(sc->path));
	json_object_set_new(ss, "hardware", json_string(res->hw.id));
	json_object_set_new(ss, "weights", json_string(res->weights->name));
	json_object_set_new(ss, "tensor_parallel_size", json_integer(sc->tensor_parallel_size));
	json_object_set_new(ss, "pipeline_parallel_size", json_integer(sc->pipeline_parallel_size));
	json_object_set_new(ss, "seed", json_integer(sc->seed));
	json_object_set_new(ss, "max_num_batched_tokens", json_integer(es->max_num_batched_tokens));
	json_object_set_new(ss, "max_num_seqs", json_integer(es->max_num_seqs));
	json_object_set_new(ss, "max_model_len", json_integer(es->max_model_len));
	json_object_set_new(ss, "block_size", json_integer(es->block_size));
	json_object_set_new(ss, "num_gpu_blocks", json_integer(es->num_gpu_blocks));
	json_object_set_new(ss, "num_cpu_blocks", json_integer(es->num_cpu_blocks));
	json_object_set_new(ss, "weight_bytes_per_gpu", json_real(es->weight_bytes_per_gpu));
	json_object_set_new(ss, "kv_bytes_per_block", json_real(es->kv_bytes_per_block));
	json_object_set_new(ss, "peak_kv_cache_usage", json_real(es->peak_kv_usage));
	json_object_set_new(ss, "peak_num_requests_waiting", json_integer(res->peak_waiting));
	json_object_set_new(ss, "peak_in_flight_requests", json_integer(res->max_concurrent));
	json_object_set_new(ss, "num_preemptions", json_integer(es->preemptions));
	json_object_set_new(ss, "prefix_cache_queries", json_integer(es->prefix_queries));
	json_object_set_new(ss, "prefix_cache_hits", json_integer(es->prefix_hits));
	json_object_set_new(ss, "prefix_cache_cpu_hits", json_integer(es->prefix_cpu_hits));
	json_object_set_new(ss, "prefix_cache_hit_rate",
			    json_real(es->prefix_queries ? (double)es->prefix_hits / (double)es->prefix_queries : 0));
	json_object_set_new(ss, "engine_steps", json_integer(es->steps));
	json_object_set_new(ss, "engine_busy_s", json_real(es->busy_s));
	if (es->timing) {            /* vLLM's newer timing (docs/engine-vllm.md) */
		json_t *t = json_object();
		json_object_set_new(t, "vllm_version", json_string(es->vllm_version));
		json_object_set_new(t, "async_scheduling", json_boolean(es->async_scheduling));
		json_object_set_new(t, "max_cudagraph_capture_size", json_integer(es->max_capture_size));
		json_object_set_new(t, "cudagraph_steps", json_integer(es->graph_steps));
		json_object_set_new(t, "eager_steps", json_integer(es->eager_steps));
		json_object_set_new(t, "cudagraph_padded_tokens", json_integer(es->padded_tokens));
		json_object_set_new(ss, "vllm_timing", t);
	}
	json_object_set_new(ss, "mean_queue_ms", json_real(1e3 * g->sum_ttft_queue_s / n));
	json_object_set_new(ss, "p99_queue_ms", json_real(1e3 * samples_percentile(&g->queue, 99)));
	json_object_set_new(ss, "mean_ttft_breakdown", report_ttft_breakdown(g));
	json_object_set_new(ss, "mean_itl_breakdown", report_itl_breakdown(es));
	json_t *st = json_object();
	json_object_set_new(st, "dense", json_real(es->time.dense));
	json_object_set_new(st, "experts", json_real(es->time.experts));
	json_object_set_new(st, "lm_head", json_real(es->time.lm_head));
	json_object_set_new(st, "attention_prefill", json_real(es->time.attn_prefill));
	json_object_set_new(st, "attention_decode", json_real(es->time.attn_decode));
	json_object_set_new(st, "allreduce", json_real(es->time.allreduce));
	json_object_set_new(st, "weight_offload", json_real(es->time.offload));
	json_object_set_new(st, "overhead", json_real(es->time.overhead));
	json_object_set_new(st, "pipeline", json_real(es->time.pipeline));
	json_object_set_new(ss, "step_time_s", st);
	if (sc->engine_kind != ENGINE_VLLM) {
		/* Ollama / llama-server: what they resolved, and the means of
		 * Ollama's per-request fields (each request's are in --out's
		 * requests.csv). */
		struct ollama_means m;
		ollama_means(res, &m);
		json_object_set_new(ss, "max_model_len", json_integer(es->num_ctx));
		json_t *ol = json_object();
		json_object_set_new(ol, "num_parallel", json_integer(es->num_parallel));
		json_object_set_new(ol, "num_ctx", json_integer(es->num_ctx));
		json_object_set_new(ol, "n_batch", json_integer(es->n_batch));
		json_object_set_new(ol, "n_ubatch", json_integer(es->n_ubatch));
		json_object_set_new(ol, "kv_unified", json_boolean(es->kv_unified));
		json_object_set_new(ol, "kv_cache_bytes", json_real(es->kv_bytes));
		json_object_set_new(ol, "num_gpu", json_integer(es->gpu_layers));
		json_object_set_new(ol, "layers", json_integer(es->layers));
		json_object_set_new(ol, "cpu_hardware", es->cpu_hardware[0] ? json_string(es->cpu_hardware) : json_null());
		json_object_set_new(ol, "model_loads", json_integer(es->model_loads));
		json_object_set_new(ol, "load_s", json_real(es->load_s));
		json_object_set_new(ol, "rejected_queue_full", json_integer(es->rejected));
		json_object_set_new(ol, "truncated_prompts", json_integer(es->truncated_prompts));
		json_object_set_new(ol, "context_shifts", json_integer(es->context_shifts));
		json_object_set_new(ol, "truncated_outputs", json_integer(es->truncated_outputs));
		json_object_set_new(ol, "mean_total_duration_ns", json_real(m.total_ms * 1e6));
		json_object_set_new(ol, "mean_load_duration_ns", json_real(m.load_ms * 1e6));
		json_object_set_new(ol, "mean_prompt_eval_count", json_real(m.prompt_eval_count));
		json_object_set_new(ol, "mean_prompt_eval_duration_ns", json_real(m.prompt_eval_ms * 1e6));
		json_object_set_new(ol, "mean_eval_count", json_real(m.eval_count));
		json_object_set_new(ol, "mean_eval_duration_ns", json_real(m.eval_ms * 1e6));
		json_object_set_new(ol, "mean_prefill_tok_s", json_real(m.prefill_tok_s));
		json_object_set_new(ol, "mean_decode_tok_s", json_real(m.decode_tok_s));
		json_object_set_new(ss, "ollama", ol);
	}
	json_t *replicas = report_replicas_json(res);
	if (replicas)
		json_object_set_new(ss, "replicas", replicas);
	json_t *kv = report_kv_transfer_json(res);
	if (kv)
		json_object_set_new(ss, "kv_transfer", kv);
	json_t *spec = report_spec_json(res);
	if (spec)
		json_object_set_new(ss, "speculative", spec);
	json_object_set_new(o, "servesim", ss);
	return o;
}

/* llama-server's /metrics (tools/server: handle_metrics; formats.md §4),
 * as scraped at the end of the run. Ollama exports no metrics of its own:
 * these are its llama-server's. */
static void report_prom_llamacpp(FILE *f, const struct run_result *res)
{
	const struct engine_stats *es = &res->engine;
	struct ollama_means m;
	ollama_means(res, &m);
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
	report_replicas_prom(f, res);   /* one series per engine (report_replicas.c) */
}

static void requests_csv(FILE *f, const struct run_result *res)
{
	fprintf(f, "id,stage,conversation,turn,send_s,input_tokens,output_tokens,cached_tokens,"
		   "ttft_s,tpot_s,e2el_s,queue_s,max_itl_s,preemptions,status,error,"
		   "total_duration,load_duration,prompt_eval_count,prompt_eval_duration,eval_count,"
		   "eval_duration,prompt_eval_rate_tok_s,eval_rate_tok_s\n");
	for (size_t i = 0; i < res->reqs.len; i++) {
		const struct request *r = &res->reqs.v[i];
		if (r->state == REQ_FAILED) {
			fprintf(f, "%zu,%d,%d,%d,%.9f,%d,%d,0,,,,,,0,failed,\"%s\",,,,,,,,\n", i, r->stage, r->conversation,
				r->turn, (double)r->send_ns / 1e9, r->prompt_len, r->output_len, r->fail_reason);
			continue;
		}
		double ttft = (double)(r->first_token_ns - r->send_ns) / 1e9;
		double e2el = (double)(r->finish_ns - r->send_ns) / 1e9;
		double tpot = r->output_len > 1 ? (e2el - ttft) / (r->output_len - 1) : 0;
		fprintf(f, "%zu,%d,%d,%d,%.9f,%d,%d,%d,%.9f,%.9f,%.9f,%.9f,%.9f,%d,ok,", i, r->stage,
			r->conversation, r->turn, (double)r->send_ns / 1e9, r->prompt_len, r->output_len,
			r->cached_tokens, ttft, tpot, e2el, (double)(r->first_scheduled_ns - r->enqueue_ns) / 1e9,
			(double)r->max_itl_ns / 1e9, r->preemptions);
		struct ollama_fields o;
		ollama_fields(r, &o);
		fprintf(f, ",%lld,%lld,%lld,%lld,%lld,%lld,%.3f,%.3f\n", (long long)o.total_ns,
			(long long)o.load_ns, (long long)o.prompt_eval_count, (long long)o.prompt_eval_ns,
			(long long)o.eval_count, (long long)o.eval_ns,
			c10_rate(o.prompt_eval_count, o.prompt_eval_ns), c10_rate(o.eval_count, o.eval_ns));
	}
}

static void timeseries_csv(FILE *f, const struct run_result *res)
{
	fprintf(f, "time_s,num_requests_running,num_requests_waiting,kv_cache_usage_perc,step_tokens,step_time_s\n");
	for (size_t i = 0; i < res->n_ts; i++) {
		const struct ts_row *t = &res->ts[i];
		fprintf(f, "%.6f,%lld,%lld,%.6f,%lld,%.9f\n", t->t_s, (long long)t->running,
			(long long)t->waiting, t->kv_usage, (long long)t->step_tokens, t->step_s);
	}
}

static void itl_row(void *ctx, double mid, int64_t count)
{
	fprintf(ctx, "%.9f,%lld\n", mid, (long long)count);
}

/* Every token gap of the run, as the ITL histogram holds it (values within
 * 1/4096 of the true ones, stats.h). */
static void itl_histogram_csv(FILE *f, const struct run_result *res)
{
	fprintf(f, "itl_s,tokens\n");
	loghist_each(&res->all.itl, itl_row, f);
}

int report_csv(const char *dir, const struct run_result *res, struct err *e)
{
	static const struct {
		const char *name;
		void (*write)(FILE *f, const struct run_result *res);
	} files[] = {
		{ "requests.csv", requests_csv },
		{ "timeseries.csv", timeseries_csv },
		{ "itl_histogram.csv", itl_histogram_csv },
	};
	struct wholedir d;
	if (wholedir_open(&d, dir, e))
		return err_prefix(e, "--out");
	for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
		FILE *f = wholedir_file(&d, files[i].name, e);
		if (!f) {
			wholedir_abort(&d);
			return -1;
		}
		files[i].write(f, res);
		if (wholedir_close(&d, f, e)) {
			wholedir_abort(&d);
			return -1;
		}
	}
	return wholedir_commit(&d, e);
}
