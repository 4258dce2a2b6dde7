/*
 * report_json: the `vllm bench serve --save-result` keys, a `stages` array
 * with the same keys per stage, and a `servesim` object for the rest.
 */
#include "report_int.h"
#include "report_replicas.h"
#include "report_spec.h"

#include <math.h>
#include <string.h>

static void put_metrics(json_t *o, struct group_metrics *g, const struct report_opts *opts)
{
	for (int m = 0; m < 4; m++) {
		if (opts->metrics_mask && !(opts->metrics_mask & 1u << m))
			continue;
		struct summary s;
		report_summarize(g, m, opts, &s);
		char key[64];
		snprintf(key, sizeof key, "mean_%s_ms", lat_metrics[m].key);
		json_object_set_new(o, key, json_real(s.mean));
		snprintf(key, sizeof key, "median_%s_ms", lat_metrics[m].key);
		json_object_set_new(o, key, json_real(s.median));
		snprintf(key, sizeof key, "std_%s_ms", lat_metrics[m].key);
		json_object_set_new(o, key, json_real(s.std));
		for (size_t i = 0; i < opts->n_percentiles; i++) {
			char w[16];
			report_p_word(opts->percentiles[i], w, sizeof w);
			snprintf(key, sizeof key, "p%s_%s_ms", w, lat_metrics[m].key);
			json_object_set_new(o, key, json_real(s.p[i]));
		}
	}
}

static void put_results(json_t *o, const struct run_result *res, struct group_metrics *g,
			const struct report_opts *opts)
{
	const struct scenario *sc = &res->sc;
	double dur = report_group_duration(g);
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
			ollama_fields_of(r, &of);
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
	 * 1's timing (engine.vllm_version = 0.8) keeps its output. */
	if (g->sum_ttft_batch_queue_s > 0 || g->sum_ttft_graph_pad_s > 0 || g->sum_ttft_output_s > 0) {
		json_object_set_new(o, "batch_queue_ms", json_real(1e3 * g->sum_ttft_batch_queue_s / n));
		json_object_set_new(o, "graph_padding_ms", json_real(1e3 * g->sum_ttft_graph_pad_s / n));
		json_object_set_new(o, "output_path_ms", json_real(1e3 * g->sum_ttft_output_s / n));
		json_object_set_new(o, "api_server_queue_ms", json_real(1e3 * g->sum_ttft_api_queue_s / n));
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
	json_object_set_new(o, "backend", json_string(sc->engine.cls->backend));
	json_object_set_new(o, "label", json_null());
	json_object_set_new(o, "model_id", json_string(res->model.id));
	json_object_set_new(o, "tokenizer_id", json_string(res->model.id));
	json_object_set_new(o, "num_prompts", json_integer((json_int_t)res->n_requests));
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
	json_object_set_new(o, "max_output_tokens_per_s", json_real((double)report_peak_tokens_per_s(res)));
	json_object_set_new(o, "max_concurrent_requests", json_integer(res->max_concurrent_per_second));
	if (opts->detailed && res->detail)
		reqdetail_marks(o);   /* streamed: report_json_dumpf writes them */
	else if (opts->detailed)
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
	json_object_set_new(ss, "tensor_parallel_size", json_integer(sc->engine.tensor_parallel_size));
	json_object_set_new(ss, "pipeline_parallel_size", json_integer(sc->engine.pipeline_parallel_size));
	json_object_set_new(ss, "seed", json_integer(sc->seed));
	json_object_set_new(ss, "max_num_batched_tokens", json_integer(es->max_num_batched_tokens));
	json_object_set_new(ss, "max_num_seqs", json_integer(es->max_num_seqs));
	json_object_set_new(ss, "max_model_len", json_integer(es->max_model_len));
	json_object_set_new(ss, "block_size", json_integer(es->block_size));
	json_object_set_new(ss, "num_gpu_blocks", json_integer(es->num_gpu_blocks));
	json_object_set_new(ss, "num_cpu_blocks", json_integer(es->num_cpu_blocks));
	json_object_set_new(ss, "weight_bytes_per_gpu", json_real(es->weight_bytes_per_gpu));
	json_object_set_new(ss, "kv_bytes_per_block", json_real(es->kv_bytes_per_block));
	if (es->kv_window_groups > 0) {
		/* vLLM's hybrid KV cache manager (engine/vllmpool.c); absent
		 * with one group of every layer, so other outputs keep theirs. */
		json_t *groups = json_object();
		json_object_set_new(groups, "layers_per_group", json_integer(es->kv_group_layers));
		json_object_set_new(groups, "full_attention", json_integer(es->kv_full_groups));
		json_object_set_new(groups, "sliding_window", json_integer(es->kv_window_groups));
		json_object_set_new(groups, "window_tokens", json_integer(es->kv_window));
		json_object_set_new(ss, "kv_cache_groups", groups);
	}
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
	if (report_sketch_note(g))   /* a lean run past RUN_EXACT_SAMPLES (docs/speed.md) */
		json_object_set_new(ss, "percentiles", json_string(report_sketch_note(g)));
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
	json_object_set_new(st, "elementwise", json_real(es->time.elementwise));
	json_object_set_new(st, "allreduce", json_real(es->time.allreduce));
	json_object_set_new(st, "weight_offload", json_real(es->time.offload));
	json_object_set_new(st, "overhead", json_real(es->time.overhead));
	json_object_set_new(st, "pipeline", json_real(es->time.pipeline));
	json_object_set_new(ss, "step_time_s", st);
	if (sc->engine.cls->family != ENGINE_FAMILY_VLLM) {
		/* Ollama / llama-server: what they resolved, and the means of
		 * Ollama's per-request fields (each request's are in --out's
		 * requests.csv). */
		struct ollama_means m;
		report_ollama_means(res, &m);
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
