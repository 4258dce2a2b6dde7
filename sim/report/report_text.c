/*
 * report_text: the `vllm bench serve` summary block (same labels, order and
 * "{:<40} {:<10.2f}" formatting), then servesim's own sections.
 */
#include "report_int.h"
#include "num.h"
#include "report_replicas.h"
#include "report_spec.h"

#include <math.h>
#include <string.h>

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
	double dur = report_group_duration(g);
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
		line_f(f, "Peak output token throughput (tok/s):", (double)report_peak_tokens_per_s(res));
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
		report_summarize(g, m, o, &s);
		centered(f, lat_metrics[m].title, '-');
		char label[64];
		snprintf(label, sizeof label, "Mean %s (ms):", lat_metrics[m].abbr);
		line_f(f, label, s.mean);
		snprintf(label, sizeof label, "Median %s (ms):", lat_metrics[m].abbr);
		line_f(f, label, s.median);
		for (size_t i = 0; i < o->n_percentiles; i++) {
			char w[16];
			report_p_word(o->percentiles[i], w, sizeof w);
			snprintf(label, sizeof label, "P%s %s (ms):", w, lat_metrics[m].abbr);
			line_f(f, label, s.p[i]);
		}
	}
}

/* The Ollama / llama-server sections of the text report. */
static void slots_text(FILE *f, const struct run_result *res)
{
	const struct engine_stats *es = &res->engine;
	bool ollama = res->sc.engine.cls->loads_on_demand;
	char head[64];
	snprintf(head, sizeof head, "Engine (%s)", res->sc.engine.cls->title);
	centered(f, head, '-');
	line_int(f, "Parallel slots (num_parallel):", es->num_parallel);
	line_int(f, "Context per slot (num_ctx):", es->num_ctx);
	line_int(f, "Batch (n_batch):", es->n_batch);
	line_int(f, "Micro-batch (n_ubatch):", es->n_ubatch);
	line_f(f, "KV cache allocated (GiB):", es->kv_bytes / GIB);
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
	report_ollama_means(res, &m);
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
	line_f(f, "KV pool (GiB per GPU):", (double)es->num_gpu_blocks * es->kv_bytes_per_block / GIB);
	if (es->kv_window_groups > 0) {
		/* vLLM's hybrid KV cache manager (engine/vllmpool.c). */
		char groups[96];
		snprintf(groups, sizeof groups, "%lld full + %lld sliding, %lld layers each",
			 (long long)es->kv_full_groups, (long long)es->kv_window_groups,
			 (long long)es->kv_group_layers);
		fprintf(f, "%-40s %s\n", "KV cache groups:", groups);
		line_int(f, "Sliding window (tokens):", es->kv_window);
	}
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
		res->weights->name, (long long)res->sc.engine.tensor_parallel_size);
	if (res->sc.engine.pipeline_parallel_size > 1)
		fprintf(f, ", pipeline parallel %lld", (long long)res->sc.engine.pipeline_parallel_size);
	fputc('\n', f);
	if (report_sketch_note(g))   /* a lean run past RUN_EXACT_SAMPLES (docs/speed.md) */
		fprintf(f, "Percentiles: %s\n", report_sketch_note(g));
	if (res->sc.engine.cls->family == ENGINE_FAMILY_VLLM)
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
		line_f(f, "Of the API path, queued (ms):", 1e3 * g->sum_ttft_api_queue_s / n);
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
	if (es->time.elementwise > 0)
		line_f(f, "Norms, rotary, activations:", 100 * es->time.elementwise / tot);
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
