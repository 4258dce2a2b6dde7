/*
 * vllmtable: the vLLM flags servesim knows, one row each, and the handlers
 * of those that need more than a key. Names and defaults: vLLM's
 * vllm/engine/arg_utils.py (EngineArgs.add_cli_args), vllm/benchmarks/serve.py
 * (add_cli_args) and vllm/benchmarks/datasets/arg_utils.py, as
 * ../shared/reference/formats.md §1 and §3 read them (about v0.11 and the
 * newest).
 */
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "latmetric.h"
#include "list.h"
#include "num.h"
#include "vllmflags_int.h"
#include "xalloc.h"

/* ---- handlers ----------------------------------------------------------- */

static int h_max_model_len(struct rewrite *rw, const struct vllm_flag *f, const char *val, struct err *e)
{
	int64_t v;
	if (vf_human_int(val, &v))
		return vf_bad_value(rw, f, "a token count (e.g. 8192, 32k, 1M)", val, e);
	char s[32];
	snprintf(s, sizeof s, "%lld", (long long)v);
	vf_emit_set(rw, "engine.max_model_len", s);
	return 0;
}

static int h_kv_cache_dtype(struct rewrite *rw, const struct vllm_flag *f, const char *val, struct err *e)
{
	/* vLLM's CacheDType: auto, bfloat16 (= the model's 16 bits), fp8,
	 * fp8_e4m3, fp8_e5m2 (one byte each). */
	static const char *const one_byte[] = { "fp8", "fp8_e4m3", "fp8_e5m2", NULL };
	for (const char *const *p = one_byte; *p; p++)
		if (!strcmp(val, *p)) {
			vf_emit_set(rw, "engine.kv_cache_dtype", "fp8");
			return 0;
		}
	if (!strcmp(val, "auto") || !strcmp(val, "bfloat16")) {
		vf_emit_set(rw, "engine.kv_cache_dtype", "auto");
		return 0;
	}
	return vf_bad_value(rw, f, "auto, bfloat16, fp8, fp8_e4m3 or fp8_e5m2 (fp8_inc and fp8_ds_mla are not modelled)",
			 val, e);
}

static int h_quantization(struct rewrite *rw, const struct vllm_flag *f, const char *val, struct err *e)
{
	/* vLLM's --quantization names (vllm/model_executor/layers/quantization
	 * QUANTIZATION_METHODS) onto servesim's weight precisions. Methods the
	 * checkpoint's own config already says leave run.weights alone. */
	static const struct {
		const char *vllm, *weights;
	} map[] = {
		{ "fp8", "fp8" }, { "fbgemm_fp8", "fp8" }, { "ptpc_fp8", "fp8" }, { "modelopt", "fp8" },
		{ "awq", "awq" }, { "awq_marlin", "awq" }, { "gptq", "gptq" }, { "gptq_marlin", "gptq" },
		{ "mxfp4", "mxfp4" }, { "modelopt_fp4", "nvfp4" }, { "bitsandbytes", "int4" },
		{ "compressed-tensors", "" }, { "gguf", "" },
	};
	rw->quantization_seen = true;
	for (size_t i = 0; i < sizeof map / sizeof *map; i++) {
		if (strcmp(val, map[i].vllm))
			continue;
		if (map[i].weights[0])
			vf_emit_set(rw, "run.weights", map[i].weights);
		return 0;
	}
	return vf_bad_value(rw, f, "fp8, fbgemm_fp8, ptpc_fp8, modelopt, modelopt_fp4, awq, awq_marlin, gptq, gptq_marlin, mxfp4, bitsandbytes, compressed-tensors or gguf",
			 val, e);
}

static int h_dtype(struct rewrite *rw, const struct vllm_flag *f, const char *val, struct err *e)
{
	static const char *const ok[] = { "auto", "bfloat16", "bf16", "half", "float16", "fp16", NULL };
	for (const char *const *p = ok; *p; p++)
		if (!strcmp(val, *p)) {
			rw->dtype = val;
			return 0;
		}
	return vf_bad_value(rw, f, "auto, bfloat16, half or float16 (float32 is not modelled)", val, e);
}

static int h_data_parallel(struct rewrite *rw, const struct vllm_flag *f, const char *val, struct err *e)
{
	int64_t v;
	char at[512];
	(void)at;
	if (num_parse_int64(val, &v) || v < 1)
		return vf_bad_value(rw, f, "an integer >= 1", val, e);
	if (v > 1)   /* N engines behind the cluster's router (docs/cluster.md) */
		vf_emit_set(rw, "cluster.replicas", val);
	return 0;
}

/* vLLM's SpeculativeConfig.method as servesim's engine.speculative_method
 * (specdec.c's table), or NULL. Without a method vLLM infers it from the
 * model's name: an EAGLE head, else a draft model. */
static const char *spec_method(const char *method, const char *model)
{
	static const struct {
		const char *vllm, *ours;
	} map[] = { { "ngram", "ngram" },	     { "eagle", "eagle" }, { "eagle3", "eagle" },
		    { "draft_model", "draft" },	     { "mtp", "mtp" },	   { "deepseek_mtp", "mtp" },
		    { "qwen3_next_mtp", "mtp" },     { "ernie_mtp", "mtp" } };
	if (!method) {
		if (!model)
			return NULL;
		for (const char *p = model; *p; p++)
			if (!strncasecmp(p, "eagle", 5))
				return "eagle";
		return "draft";
	}
	for (size_t i = 0; i < sizeof map / sizeof *map; i++)
		if (!strcmp(method, map[i].vllm))
			return map[i].ours;
	return NULL;
}

static int h_speculative(struct rewrite *rw, const struct vllm_flag *f, const char *val, struct err *e)
{
	char at[512];
	json_error_t je;
	json_t *j = json_loads(val, 0, &je);
	if (!json_is_object(j)) {
		json_decref(j);
		return err_set(e, "%s: expected a JSON object like {\"method\": \"ngram\", \"num_speculative_tokens\": 4}, got '%s'",
			       vf_where(rw, f, at, sizeof at), val);
	}
	const char *method = json_string_value(json_object_get(j, "method"));
	const char *model = json_string_value(json_object_get(j, "model"));
	json_t *k = json_object_get(j, "num_speculative_tokens");
	json_t *dtp = json_object_get(j, "draft_tensor_parallel_size");
	const char *ours = spec_method(method, model), *key;
	json_t *v;
	int rc = 0;
	json_object_foreach(j, key, v)
		if (strcmp(key, "method") && strcmp(key, "model") && strcmp(key, "num_speculative_tokens") &&
		    strcmp(key, "draft_tensor_parallel_size") && strcmp(key, "prompt_lookup_max") &&
		    strcmp(key, "prompt_lookup_min") && !rc)
			rc = err_set(e, "%s: \"%s\": servesim reads method, model, num_speculative_tokens and draft_tensor_parallel_size (prompt_lookup_min/max have no effect on its timing)",
				     vf_where(rw, f, at, sizeof at), key);
	if (!rc && !ours)
		rc = err_set(e, "%s: speculative method '%s' is not simulated; expected ngram, eagle, eagle3, draft_model or an mtp method",
			     vf_where(rw, f, at, sizeof at), method ? method : "(none, and no model)");
	else if (!rc && !(json_is_integer(k) && json_integer_value(k) >= 1))
		rc = err_set(e, "%s: expected \"num_speculative_tokens\": an integer >= 1", vf_where(rw, f, at, sizeof at));
	else if (!rc && dtp && !(json_is_integer(dtp) && json_integer_value(dtp) >= 1))
		rc = err_set(e, "%s: expected \"draft_tensor_parallel_size\": an integer >= 1", vf_where(rw, f, at, sizeof at));
	if (!rc) {
		char n[32];
		snprintf(n, sizeof n, "%lld", (long long)json_integer_value(k));
		vf_emit_set(rw, "engine.speculative_method", ours);
		if (model)
			vf_emit_set(rw, "engine.speculative_model", model);
		vf_emit_set(rw, "engine.num_speculative_tokens", n);
		if (dtp) {
			snprintf(n, sizeof n, "%lld", (long long)json_integer_value(dtp));
			vf_emit_set(rw, "engine.draft_tensor_parallel_size", n);
		}
	}
	json_decref(j);
	return rc;
}

static int h_offload_backend(struct rewrite *rw, const struct vllm_flag *f, const char *val, struct err *e)
{
	char at[512];
	if (!strcmp(val, "native"))
		return 0;
	return err_set(e, "%s %s: only vLLM's native CPU offloading is simulated", vf_where(rw, f, at, sizeof at), val);
}

static int h_ramp(struct rewrite *rw, const struct vllm_flag *f, const char *val, struct err *e)
{
	if (strcmp(val, "linear") && strcmp(val, "exponential"))
		return vf_bad_value(rw, f, "linear or exponential", val, e);
	vf_emit_set(rw, "workload.ramp_up_strategy", val);
	return 0;
}

static int h_dataset_name(struct rewrite *rw, const struct vllm_flag *f, const char *val, struct err *e)
{
	(void)f, (void)e;
	rw->dataset_name = val;
	return 0;
}

static int h_dataset_path(struct rewrite *rw, const struct vllm_flag *f, const char *val, struct err *e)
{
	(void)f, (void)e;
	rw->dataset_path = val;
	return 0;
}

static int h_sharegpt_output_len(struct rewrite *rw, const struct vllm_flag *f, const char *val, struct err *e)
{
	int64_t v;
	if (num_parse_int64(val, &v) || v < 1)
		return vf_bad_value(rw, f, "a token count >= 1", val, e);
	rw->sharegpt_output_len = val;
	return 0;
}

/* --goodput ttft:500 tpot:50 (ms; vllm bench serve's KEY:VALUE pairs). */
static int h_goodput(struct rewrite *rw, const struct vllm_flag *f, const char *val, struct err *e)
{
	const char *colon = strchr(val, ':');
	double ms;
	static const char *const keys[] = { "ttft", "tpot", "e2el", NULL };
	if (colon && !num_parse_double(colon + 1, &ms) && ms > 0 && !isinf(ms)) {
		for (const char *const *k = keys; *k; k++) {
			if (strlen(*k) != (size_t)(colon - val) || strncmp(val, *k, (size_t)(colon - val)))
				continue;
			char key[32];
			snprintf(key, sizeof key, "slo.%s_ms", *k);
			vf_emit_set(rw, key, colon + 1);
			return 0;
		}
	}
	return vf_bad_value(rw, f, "KEY:MS pairs with KEY ttft, tpot or e2el (e.g. ttft:500 tpot:50)", val, e);
}

static int o_percentile_metrics(struct rewrite *rw, const struct vllm_flag *f, const char *val, struct err *e)
{
	char tok[64];
	unsigned mask = 0;
	int rc;
	for (const char *cur = val; (rc = list_next(&cur, tok, sizeof tok)) != 0;) {
		int m = rc > 0 ? lat_metric_find(tok) : -1;
		if (m < 0) {
			mask = 0;
			break;
		}
		mask |= 1u << m;
	}
	if (!mask) {
		char names[64], expected[96];
		lat_metric_list(names, sizeof names);
		snprintf(expected, sizeof expected, "a comma-separated list of %s", names);
		return vf_bad_value(rw, f, expected, val, e);
	}
	rw->va->out.percentile_metrics = mask;
	return 0;
}

static int o_simple(struct rewrite *rw, const struct vllm_flag *f, const char *val, struct err *e)
{
	(void)e;
	struct vllm_out *o = &rw->va->out;
	const char *n = f->name;
	if (!strcmp(n, "save-result"))
		o->save_result = true;
	else if (!strcmp(n, "append-result"))
		o->append_result = o->save_result = true;
	else if (!strcmp(n, "save-detailed"))
		o->save_detailed = true;
	else if (!strcmp(n, "result-dir"))
		o->result_dir = val;
	else if (!strcmp(n, "result-filename"))
		o->result_filename = val;
	else if (!strcmp(n, "label"))
		o->label = val;
	else if (!strcmp(n, "metric-percentiles"))
		o->metric_percentiles = val;
	return 0;
}

static int o_metadata(struct rewrite *rw, const struct vllm_flag *f, const char *val, struct err *e)
{
	struct vllm_out *o = &rw->va->out;
	const char *eq = strchr(val, '=');
	if (!eq || eq == val)
		return vf_bad_value(rw, f, "KEY=VALUE pairs", val, e);
	xgrow(&o->metadata, &o->cap_metadata, o->n_metadata + 1, sizeof *o->metadata);
	o->metadata[o->n_metadata++] = vf_own(rw, xstrdup(val));
	return 0;
}

/* ---- the table ------------------------------------------------------------ */

#define KEY(n, al, k, t, h) { n, al, VF_KEY, ARG_ONE, k, t, NULL, false, h }
#define BKEY(n, k, t, h) { n, NULL, VF_KEY, ARG_ONE, k, t, NULL, true, h }
#define BOOL(n, k, h) { n, NULL, VF_BOOL, ARG_NONE, k, 0, NULL, false, h }
#define NOOP(n, a, b, h) { n, NULL, VF_NOOP, a, NULL, 0, NULL, b, h }
#define REFUSE(n, a, h) { n, NULL, VF_REFUSE, a, NULL, 0, NULL, false, h }
#define SPECIAL(n, al, a, fn, b, h) { n, al, VF_SPECIAL, a, NULL, 0, fn, b, h }
/* A handler that sets key (shown in the table; the handler emits it). */
#define SPECIALK(n, al, a, k, fn, b, h) { n, al, VF_SPECIAL, a, k, 0, fn, b, h }
#define OUT(n, a, fn, h) { n, NULL, VF_OUT, a, NULL, 0, fn, true, h }

/* Sorted by name. */
const struct vllm_flag vllm_flags[] = {
	NOOP("api-key", ARG_ONE, true, "client setting: no effect in a simulation"),
	KEY("api-server-count", "asc", "engine.api_server_count", 'i', "API-server processes the requests are spread over (default 1)"),
	OUT("append-result", ARG_NONE, o_simple, "append the result to the result file as one more JSON line"),
	BOOL("async-scheduling", "engine.async_scheduling", "async scheduling (the batch queue of two; default by vLLM version)"),
	NOOP("backend", ARG_ONE, true, "client setting: no effect in a simulation"),
	NOOP("base-url", ARG_ONE, true, "client setting: no effect in a simulation"),
	KEY("block-size", NULL, "engine.block_size", 'i', "tokens per KV block (default 16)"),
	BKEY("burstiness", "workload.burstiness", 'd', "gamma shape of the gaps (1 = Poisson)"),
	NOOP("chat-template", ARG_ONE, false, "prompt formatting: no effect in a simulation"),
	KEY("cpu-offload-gb", NULL, "engine.cpu_offload_gb", 'd', "GiB of weights per GPU kept in host memory"),
	SPECIAL("data-parallel-size", "dp", ARG_ONE, h_data_parallel, false,
		"N engines behind a router: cluster.replicas = N (docs/cluster.md)"),
	SPECIAL("dataset-name", NULL, ARG_ONE, h_dataset_name, true,
		"random (default): random lengths; sharegpt: ShareGPT-like lognormal lengths; "
		"burstgpt, custom: the trace in --dataset-path; or a trace file itself"),
	SPECIALK("dataset-path", NULL, ARG_ONE, "workload.trace", h_dataset_path, true,
		"a trace file (workload.trace: vllm result JSON, Azure or BurstGPT CSV, Mooncake JSONL)"),
	NOOP("disable-log-requests", ARG_NONE, false, "logging: no effect in a simulation"),
	NOOP("disable-log-stats", ARG_NONE, false, "logging: no effect in a simulation"),
	NOOP("disable-shuffle", ARG_NONE, true, "dataset order: no effect on synthetic lengths"),
	NOOP("disable-tqdm", ARG_NONE, true, "client setting: no effect in a simulation"),
	NOOP("distributed-executor-backend", ARG_ONE, false, "process layout: no effect in a simulation"),
	NOOP("download-dir", ARG_ONE, false, "loading: no effect in a simulation"),
	SPECIALK("dtype", NULL, ARG_ONE, "run.weights", h_dtype, false,
		"auto, bfloat16 or float16: run.weights = bf16 / fp16 unless --quantization says"),
	NOOP("enable-auto-tool-choice", ARG_NONE, false, "tool calling: no effect in a simulation"),
	BOOL("enable-chunked-prefill", "engine.enable_chunked_prefill", "chunked prefill (default on)"),
	REFUSE("enable-expert-parallel", ARG_NONE, "expert parallelism is not simulated (experts split by tensor parallelism)"),
	NOOP("enable-log-requests", ARG_NONE, false, "logging: no effect in a simulation"),
	BOOL("enable-prefix-caching", "engine.enable_prefix_caching", "automatic prefix caching (default on)"),
	NOOP("endpoint", ARG_ONE, true, "client setting: no effect in a simulation"),
	BOOL("enforce-eager", "engine.enforce_eager", "eager mode: no CUDA graphs (vLLM timing, docs/engine-vllm.md)"),
	KEY("generation-config", NULL, "engine.generation_config", 's',
	    "auto (default): the model's generation_config.json sampling defaults; vllm: none (the sampler's path)"),
	SPECIALK("goodput", NULL, ARG_MANY, "slo.*_ms", h_goodput, true, "KEY:MS SLOs (ttft, tpot, e2el) → slo.*_ms"),
	KEY("gpu-memory-utilization", NULL, "engine.gpu_memory_utilization", 'd',
	    "fraction of device memory vLLM may use (default 0.9)"),
	NOOP("header", ARG_MANY, true, "client setting: no effect in a simulation"),
	NOOP("host", ARG_ONE, false, "server address: no effect in a simulation"),
	NOOP("ignore-eos", ARG_NONE, true, "servesim always generates the requested output length"),
	SPECIALK("kv-cache-dtype", NULL, ARG_ONE, "engine.kv_cache_dtype", h_kv_cache_dtype, false,
		"auto, bfloat16, fp8, fp8_e4m3, fp8_e5m2 → engine.kv_cache_dtype auto / fp8"),
	SPECIAL("kv-offloading-backend", NULL, ARG_ONE, h_offload_backend, false, "native only"),
	KEY("kv-offloading-size", NULL, "engine.kv_offload_gib", 'd', "GiB of host memory for offloaded KV blocks"),
	OUT("label", ARG_ONE, o_simple, "the result's label (and file-name prefix)"),
	NOOP("load-format", ARG_ONE, false, "loading: no effect in a simulation"),
	NOOP("logprobs", ARG_ONE, true, "sampling output: no effect on timing"),
	KEY("long-prefill-token-threshold", NULL, "engine.long_prefill_token_threshold", 'i',
	    "longest prefill chunk per step (0 = off)"),
	BKEY("max-concurrency", "workload.max_concurrency", 'i', "client-side limit on requests in flight"),
	NOOP("max-log-len", ARG_ONE, false, "logging: no effect in a simulation"),
	SPECIALK("max-model-len", NULL, ARG_ONE, "engine.max_model_len", h_max_model_len, false,
		"context length (vLLM's human-readable 32k, 1M accepted)"),
	KEY("max-num-batched-tokens", NULL, "engine.max_num_batched_tokens", 'i', "token budget per step"),
	KEY("max-num-partial-prefills", NULL, "engine.max_num_partial_prefills", 'i', "prefills chunked at once"),
	KEY("max-num-seqs", NULL, "engine.max_num_seqs", 'i', "running requests at most"),
	OUT("metadata", ARG_MANY, o_metadata, "KEY=VALUE pairs added to the result JSON"),
	OUT("metric-percentiles", ARG_ONE, o_simple, "percentiles to report (default 99)"),
	BKEY("min-p", "workload.min_p", 'd', "min-p sent (> 0: the min-p filter in the sampler, off when greedy)"),
	KEY("model", NULL, "run.model", 's', "a model id, config.json, folder, Hugging Face id, Ollama tag or .gguf"),
	KEY("num-gpu-blocks-override", NULL, "engine.num_gpu_blocks_override", 'i', "KV blocks, instead of sizing from memory"),
	BKEY("num-prompts", "workload.num_prompts", 'i', "requests to send (default 1000)"),
	NOOP("num-warmups", ARG_ONE, true, "warm-up requests are not part of the result: no effect"),
	OUT("percentile-metrics", ARG_ONE, o_percentile_metrics, "which of ttft,tpot,itl,e2el to report (servesim: all four)"),
	KEY("pipeline-parallel-size", "pp", "engine.pipeline_parallel_size", 'i', "pipeline stages"),
	NOOP("port", ARG_ONE, false, "server address: no effect in a simulation"),
	NOOP("profile", ARG_NONE, true, "torch profiler: no effect in a simulation"),
	SPECIALK("quantization", "q", ARG_ONE, "run.weights", h_quantization, false, "the weights' method → run.weights"),
	BKEY("ramp-up-end-rps", "workload.ramp_up_end_rps", 'd', "the ramp's last rate"),
	BKEY("ramp-up-start-rps", "workload.ramp_up_start_rps", 'd', "the ramp's first rate"),
	SPECIALK("ramp-up-strategy", NULL, ARG_ONE, "workload.ramp_up_strategy", h_ramp, true, "linear or exponential → workload.ramp_up_strategy"),
	BKEY("random-input-len", "workload.random_input_len", 'i', "input tokens (default 1024)"),
	BKEY("random-output-len", "workload.random_output_len", 'i', "output tokens (default 128)"),
	BKEY("random-prefix-len", "workload.random_prefix_len", 'i', "a shared prefix on top of the input (default 0)"),
	BKEY("random-range-ratio", "workload.random_range_ratio", 'd', "lengths uniform in L·[1-r, 1+r] (default 0)"),
	NOOP("ready-check-timeout-sec", ARG_ONE, true, "client setting: no effect in a simulation"),
	NOOP("reasoning-parser", ARG_ONE, false, "output parsing: no effect in a simulation"),
	NOOP("request-id-prefix", ARG_ONE, true, "client setting: no effect in a simulation"),
	BKEY("request-rate", "workload.request_rate", 'd', "requests per second (default inf: all at t=0)"),
	OUT("result-dir", ARG_ONE, o_simple, "folder of the result file"),
	OUT("result-filename", ARG_ONE, o_simple, "name of the result file"),
	NOOP("revision", ARG_ONE, false, "loading: no effect in a simulation"),
	OUT("save-detailed", ARG_NONE, o_simple, "keep the per-request arrays in the result"),
	OUT("save-result", ARG_NONE, o_simple, "write the result JSON (vllm bench serve's name and keys)"),
	KEY("scheduling-policy", NULL, "engine.scheduling_policy", 's', "fcfs or priority"),
	KEY("seed", NULL, "run.seed", 'i', "the run's seed (default 0)"),
	NOOP("served-model-name", ARG_MANY, false, "server naming: no effect in a simulation"),
	SPECIALK("sharegpt-output-len", NULL, ARG_ONE, "workload.random_output_len", h_sharegpt_output_len, true,
		"with --dataset-name sharegpt: a fixed output length"),
	SPECIAL("speculative-config", NULL, ARG_ONE, h_speculative, false,
		"JSON {method, model, num_speculative_tokens, draft_tensor_parallel_size} → engine.* (acceptance: engine.speculative_acceptance)"),
	KEY("stream-interval", NULL, "engine.stream_interval", 'i', "tokens per streamed chunk (default 1)"),
	NOOP("swap-space", ARG_ONE, false, "V1 preempts by recompute, never swaps: no effect"),
	BKEY("temperature", "workload.temperature", 'd', "sampling temperature sent (0 = greedy: argmax, no top-k/top-p)"),
	KEY("tensor-parallel-size", "tp", "engine.tensor_parallel_size", 'i', "GPUs per engine"),
	NOOP("tokenizer", ARG_ONE, true, "servesim counts tokens, it does not tokenize: no effect"),
	NOOP("tokenizer-mode", ARG_ONE, false, "servesim does not tokenize: no effect"),
	NOOP("tool-call-parser", ARG_ONE, false, "output parsing: no effect in a simulation"),
	BKEY("top-k", "workload.top_k", 'i', "top-k sent (torch.topk in the sampler; 0 or -1 = off)"),
	BKEY("top-p", "workload.top_p", 'd', "top-p sent (< 1: a sort of the vocabulary in the sampler)"),
	NOOP("trust-remote-code", ARG_NONE, false, "loading: no effect in a simulation"),

	REFUSE("use-beam-search", ARG_NONE, "beam search is not simulated (one sequence per request)"),
	NOOP("uvicorn-log-level", ARG_ONE, false, "logging: no effect in a simulation"),

};


const size_t vllm_n_flags = sizeof vllm_flags / sizeof *vllm_flags;
