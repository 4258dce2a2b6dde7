#include "scenario.h"

#include <assert.h>
#include <float.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "evq.h"
#include "num.h"
#include "precision.h"
#include "scenlists.h"
#include "trace.h"
#include "xalloc.h"

static const char *const arrival_names[] = { "poisson", "gamma", "constant", NULL };
static const char *const ramp_names[] = { "none", "linear", "exponential", NULL };
static const char *const dist_names[] = { "uniform", "normal", "lognormal", "empirical", NULL };

#define F(field) offsetof(struct scenario, field)
#define BIG DBL_MAX

static const struct inidoc_key keys[] = {
	{ "run", "model", INI_STRING, F(model), 0, 0, 0, "a model id, Hugging Face id or path", NULL },
	{ "run", "hardware", INI_STRING, F(hardware), 0, 0, 0, "a hardware id or path", NULL },
	{ "run", "seed", INI_INT, F(seed), 0, 0, 4294967295.0, "an integer in [0, 2^32)", NULL },
	{ "run", "weights", INI_STRING, F(weights), 0, 0, 0, "a precision name (bf16, fp8, int4, q4_0, …)", NULL },
	{ "run", "timeseries_interval_s", INI_DOUBLE, F(timeseries_interval_s), INI_MIN_EXCLUSIVE, 0, BIG,
	  "seconds > 0", NULL },

	{ "workload", "num_prompts", INI_INT, F(num_prompts), 0, 1, SCENARIO_MAX_PROMPTS,
	  "an integer from 1 to 10^7 (the most requests one run holds)", NULL },
	{ "workload", "request_rate", INI_DOUBLE, F(request_rate), INI_MIN_EXCLUSIVE | INI_ALLOW_INF, 0, 1e9,
	  "requests per second > 0, or inf", NULL },
	{ "workload", "burstiness", INI_DOUBLE, F(burstiness), INI_MIN_EXCLUSIVE, 0, 1e6,
	  "a gamma shape > 0 (1 = Poisson)", NULL },
	{ "workload", "arrival", INI_ENUM, F(arrival), 0, 0, 0, "poisson, gamma or constant", arrival_names },
	{ "workload", "max_concurrency", INI_INT, F(max_concurrency), 0, 1, 1e9, "an integer >= 1", NULL },
	{ "workload", "ramp_up_strategy", INI_ENUM, F(ramp_up_strategy), 0, 0, 0,
	  "none, linear or exponential", ramp_names },
	{ "workload", "ramp_up_start_rps", INI_DOUBLE, F(ramp_up_start_rps), INI_MIN_EXCLUSIVE, 0, 1e9,
	  "requests per second > 0", NULL },
	{ "workload", "ramp_up_end_rps", INI_DOUBLE, F(ramp_up_end_rps), INI_MIN_EXCLUSIVE, 0, 1e9,
	  "requests per second > 0", NULL },
	{ "workload", "stages", INI_STRING, F(stages_text), 0, 0, 0, "RATE:DURATION_S, …", NULL },
	{ "workload", "priorities", INI_STRING, F(priorities_text), 0, 0, 0, "PRIORITY:WEIGHT, …", NULL },
	{ "workload", "random_input_len", INI_INT, F(input.mean), 0, 1, 1e8, "a token count >= 1", NULL },
	{ "workload", "random_output_len", INI_INT, F(output.mean), 0, 1, 1e8, "a token count >= 1", NULL },
	{ "workload", "random_range_ratio", INI_DOUBLE, F(random_range_ratio), 0, 0, 0.999999999,
	  "a ratio in [0, 1)", NULL },
	{ "workload", "random_prefix_len", INI_INT, F(random_prefix_len), 0, 0, 1e8, "a token count >= 0", NULL },
	{ "workload", "prefix_groups", INI_INT, F(prefix_groups), 0, 1, 1e9, "an integer >= 1", NULL },
	{ "workload", "input_distribution", INI_ENUM, F(input.dist), 0, 0, 0,
	  "uniform, normal, lognormal or empirical", dist_names },
	{ "workload", "input_stddev", INI_DOUBLE, F(input.stddev), 0, 0, BIG, "a standard deviation >= 0", NULL },
	{ "workload", "input_file", INI_STRING, F(input.file), 0, 0, 0, "a file of lengths", NULL },
	{ "workload", "output_distribution", INI_ENUM, F(output.dist), 0, 0, 0,
	  "uniform, normal, lognormal or empirical", dist_names },
	{ "workload", "output_stddev", INI_DOUBLE, F(output.stddev), 0, 0, BIG, "a standard deviation >= 0", NULL },
	{ "workload", "output_file", INI_STRING, F(output.file), 0, 0, 0, "a file of lengths", NULL },
	{ "workload", "users", INI_INT, F(users), 0, 0, 1e7, "a user count >= 0 (0 = open loop)", NULL },
	{ "workload", "think_time_s", INI_DOUBLE, F(think_time_s), 0, 0, EVQ_HORIZON_S,
	  "seconds from 0 to 10^8 (the simulator's horizon)", NULL },
	{ "workload", "turns", INI_INT, F(turns), 0, 1, 1e6, "turns per conversation >= 1", NULL },
	{ "workload", "trace", INI_STRING, F(trace), 0, 0, 0, "a trace file", NULL },
	/* Checked against trace.c's readers after binding. */
	{ "workload", "trace_format", INI_STRING, F(trace_format), 0, 0, 0, "a trace format", NULL },
	{ "workload", "trace_time_scale", INI_DOUBLE, F(trace_time_scale), INI_MIN_EXCLUSIVE, 0, BIG,
	  "a factor > 0 on trace times", NULL },
	{ "workload", "trace_result", INI_INT, F(trace_result), 0, 0, 1e6,
	  "the result to replay (1 = the first) of a file holding several (--append-result, SGLang JSON lines); 0 = the file is one result",
	  NULL },

	/* Checked against engine_classes after binding, so the choices and
	 * the error listing them come from the table. */
	{ "engine", "kind", INI_STRING, F(engine.kind), 0, 0, 0, "an engine kind", NULL },
	{ "engine", "tensor_parallel_size", INI_INT, F(engine.tensor_parallel_size), 0, 1, 1024, "an integer >= 1", NULL },
	{ "engine", "pipeline_parallel_size", INI_INT, F(engine.pipeline_parallel_size), 0, 1, 1024, "an integer >= 1",
	  NULL },
	{ "engine", "nnodes", INI_INT, F(engine.nnodes), 0, 1, 1024, "a node count >= 1 (vLLM --nnodes)", NULL },
	{ "engine", "max_num_batched_tokens", INI_INT, F(engine.max_num_batched_tokens), 0, 1, 1e8,
	  "a token count >= 1", NULL },
	{ "engine", "max_num_seqs", INI_INT, F(engine.max_num_seqs), 0, 1, 1e7, "an integer >= 1", NULL },
	{ "engine", "max_model_len", INI_INT, F(engine.max_model_len), 0, 2, 1e9, "a token count >= 2", NULL },
	{ "engine", "gpu_memory_utilization", INI_DOUBLE, F(engine.gpu_memory_utilization), INI_MIN_EXCLUSIVE, 0, 1,
	  "a fraction in (0, 1]", NULL },
	/* Checked against vllm_block_sizes after binding (check_block_size). */
	{ "engine", "block_size", INI_INT, F(engine.block_size), 0, 1, 256,
	  "tokens per KV block: 1, 8, 16, 32, 64, 128 or 256 (vLLM's --block-size; ollama and llamacpp ignore it)",
	  NULL },
	{ "engine", "enable_prefix_caching", INI_BOOL, F(engine.enable_prefix_caching), 0, 0, 0, "true or false", NULL },
	{ "engine", "enable_chunked_prefill", INI_BOOL, F(engine.enable_chunked_prefill), 0, 0, 0, "true or false", NULL },
	{ "engine", "long_prefill_token_threshold", INI_INT, F(engine.long_prefill_token_threshold), 0, 0, 1e8,
	  "a token count >= 0 (0 = off)", NULL },
	{ "engine", "num_gpu_blocks_override", INI_INT, F(engine.num_gpu_blocks_override), 0, 2, 1e9,
	  "a block count >= 2", NULL },
	{ "engine", "cpu_offload_gb", INI_DOUBLE, F(engine.cpu_offload_gb), 0, 0, 1e6,
	  "GiB of weights per GPU kept in host memory, >= 0 (vLLM --cpu-offload-gb)", NULL },
	{ "engine", "kv_cache_dtype", INI_ENUM, F(engine.kv_cache_dtype), 0, 0, 0, "auto or fp8", kv_dtype_names },
	{ "engine", "moe_router_skew", INI_DOUBLE, F(engine.moe_router_skew), 0, 0, 10,
	  "a Zipf exponent in [0, 10] (0: uniform routing; unset: the model family's, docs/step-model.md)", NULL },
	{ "engine", "enable_expert_parallel", INI_BOOL, F(engine.enable_expert_parallel), 0, 0, 0, "true or false",
	  NULL },

	{ "slo", "ttft_ms", INI_DOUBLE, F(slo_ttft_ms), INI_MIN_EXCLUSIVE, 0, BIG, "milliseconds > 0", NULL },
	{ "slo", "tpot_ms", INI_DOUBLE, F(slo_tpot_ms), INI_MIN_EXCLUSIVE, 0, BIG, "milliseconds > 0", NULL },
	{ "slo", "e2el_ms", INI_DOUBLE, F(slo_e2el_ms), INI_MIN_EXCLUSIVE, 0, BIG, "milliseconds > 0", NULL },
};

enum { N_KEYS = sizeof keys / sizeof *keys, MAX_KEYS = SCENARIO_MAX_KEYS };

/* The scenario's keys and the engine classes' own [engine] keys (each
 * table once; offsets made relative to the scenario) into out. Returns
 * their count. */
static size_t all_keys(struct inidoc_key *out)
{
	size_t n = 0;
	for (size_t i = 0; i < N_KEYS; i++)
		out[n++] = keys[i];
	for (size_t c = 0; engine_classes[c]; c++) {
		const struct engine_class *cls = engine_classes[c];
		bool bound = false;
		for (size_t d = 0; d < c; d++)
			bound |= engine_classes[d]->keys == cls->keys;
		if (!cls->keys || bound)
			continue;
		for (const struct inidoc_key *k = cls->keys; k->section; k++) {
			assert(n < MAX_KEYS);
			out[n] = *k;
			out[n++].offset += offsetof(struct scenario, engine) + cls->config_offset;
		}
	}
	return n;
}

size_t scenario_keys(struct inidoc_key *out)
{
	return all_keys(out);
}

void scenario_default(struct scenario *sc)
{
	memset(sc, 0, sizeof *sc);
	snprintf(sc->path, sizeof sc->path, "built-in default");
	snprintf(sc->model, sizeof sc->model, "llama-3.1-8b");
	snprintf(sc->hardware, sizeof sc->hardware, "h100-sxm");
	sc->seed = 0;                        /* vllm bench serve --seed 0 */
	sc->timeseries_interval_s = 1.0;
	sc->num_prompts = 200;               /* SEED C13: --num-prompts 200 */
	sc->request_rate = 4;                /* SEED C13: --request-rate 4 */
	sc->burstiness = 1.0;
	sc->arrival = ARRIVAL_POISSON;
	sc->input.mean = 1024;               /* vllm bench serve --random-input-len */
	sc->output.mean = 128;               /* --random-output-len */
	sc->prefix_groups = 1;
	sc->turns = 1;
	sc->trace_time_scale = 1.0;
	snprintf(sc->trace_format, sizeof sc->trace_format, "auto");
	snprintf(sc->engine.kind, sizeof sc->engine.kind, "%s", engine_classes[0]->name);
	sc->engine.cls = engine_classes[0];  /* vllm */
	sc->engine.tensor_parallel_size = 1;
	sc->engine.nnodes = 1;
	sc->engine.pipeline_parallel_size = 1;
	sc->engine.max_num_batched_tokens = -1;
	sc->engine.max_num_seqs = -1;
	sc->engine.max_model_len = -1;
	sc->engine.gpu_memory_utilization = 0.9;
	sc->engine.block_size = 16;
	sc->engine.enable_prefix_caching = true;
	sc->engine.enable_chunked_prefill = true;
	sc->engine.num_gpu_blocks_override = -1;
	sc->engine.moe_router_skew = -1;   /* ROUTER_SKEW_FAMILY: the model family's */
	for (size_t i = 0; engine_classes[i]; i++)    /* the classes' own keys */
		if (engine_classes[i]->config_default)
			engine_classes[i]->config_default(&sc->engine);
	clustercfg_default(&sc->cluster);
}

/* "4:600, 20:600" → stages. */
/* A relative file named in the scenario is relative to the scenario.
 * Returns -1 when the joined path does not fit. */
static int relative_to(char *file, const char *scenario_path)
{
	const char *slash = strrchr(scenario_path, '/');
	if (!file[0] || file[0] == '/' || !slash)
		return 0;
	char joined[INI_VALUE_MAX];
	int n = snprintf(joined, sizeof joined, "%.*s/%s", (int)(slash - scenario_path),
			 scenario_path, file);
	if (n < 0 || n >= (int)sizeof joined)
		return -1;
	memcpy(file, joined, (size_t)n + 1);
	return 0;
}

/* Where section.key was set, into out: "path:line", "--set section.key"
 * (or the vLLM flag typed), or the path alone when the default stands. */
static void key_at(const struct inidoc *doc, const char *section, const char *key, char *out,
		   size_t cap)
{
	const struct inidoc_entry *en = inidoc_find(doc, section, key);
	if (en)
		inidoc_entry_at(doc, en, out, cap);
	else
		snprintf(out, cap, "%s", doc->path);
}

/* key_at for an engine class's [engine] keys (engine_class.config_locate). */
static void engine_key_at(const void *doc, const char *key, char *out, size_t cap)
{
	key_at(doc, "engine", key, out, cap);
}

/* [section] kind: a row of engine_classes, which lists the choices. */
static int bind_kind(struct engine_config *c, const struct inidoc *doc, const char *section,
		     struct err *e)
{
	const struct engine_class *cls = engine_class_find(c->kind);
	if (!cls) {
		char at[INI_VALUE_MAX + 32], names[256];
		key_at(doc, section, "kind", at, sizeof at);
		engine_class_list(names, sizeof names);
		return err_set(e, "%s: [%s] kind: expected one of %s, got '%s'", at, section, names, c->kind);
	}
	c->cls = cls;
	return 0;
}

/* vLLM's BlockSize, the choices of `vllm serve --block-size` (v0.15
 * vllm/config/cache.py: Literal[1, 8, 16, 32, 64, 128, 256]). */
static const int64_t vllm_block_sizes[] = { 1, 8, 16, 32, 64, 128, 256 };

/* [section] block_size, when set: one of vLLM's sizes, whatever the kind.
 * llama.cpp's servers (Ollama, llama-server) keep their cache per token
 * and ignore it, as every engine ignores the other kinds' keys, so that one
 * file serves both (c28's `--set engine.kind=vllm`); its value is checked
 * all the same, as every key's is. */
static int check_block_size(const struct engine_config *c, const struct inidoc *doc, const char *section,
			    struct err *e)
{
	if (!inidoc_find(doc, section, "block_size"))
		return 0;
	for (size_t i = 0; i < sizeof vllm_block_sizes / sizeof *vllm_block_sizes; i++)
		if (c->block_size == vllm_block_sizes[i])
			return 0;
	char at[INI_VALUE_MAX + 32];
	key_at(doc, section, "block_size", at, sizeof at);
	return err_set(e, "%s: [%s] block_size: expected 1, 8, 16, 32, 64, 128 or 256 (vLLM's --block-size choices), got %lld",
		       at, section, (long long)c->block_size);
}

/* An engine class's view of where its keys were set (engine_keys_view). */
struct keys_ctx {
	const struct inidoc *doc;
	const char *section;
};

static bool keys_view_at(const void *ctx, const char *key, char *out, size_t cap)
{
	const struct keys_ctx *k = ctx;
	key_at(k->doc, k->section, key, out, cap);
	return inidoc_find(k->doc, k->section, key) != NULL;
}

/* Each engine class's config_check (once per function, as classes share
 * tables) on c, bound from section of doc: each class checks its own keys,
 * so none of them is named here. */
static int check_classes(struct engine_config *c, const struct inidoc *doc, const char *section, bool inherits,
			 struct err *e)
{
	struct keys_ctx kc = { doc, section };
	struct engine_keys_view v = { section, doc->path, inherits, keys_view_at, &kc };
	for (size_t i = 0; engine_classes[i]; i++) {
		const struct engine_class *cls = engine_classes[i];
		bool done = false;
		for (size_t d = 0; d < i; d++)
			done |= engine_classes[d]->config_check == cls->config_check;
		if (cls->config_check && !done && cls->config_check(c, &v, e))
			return -1;
	}
	return 0;
}

/* Checks across keys, naming the key whose value cannot stand. */
static int check(struct scenario *sc, struct inidoc *doc, struct err *e)
{
	const struct inidoc_entry *en;
	sc->num_prompts_given = inidoc_find(doc, "workload", "num_prompts") != NULL;
	if (bind_kind(&sc->engine, doc, "engine", e) || check_block_size(&sc->engine, doc, "engine", e))
		return -1;
	if (!trace_format_known(sc->trace_format)) {
		char at[INI_VALUE_MAX + 32], names[128];
		key_at(doc, "workload", "trace_format", at, sizeof at);
		trace_format_list(names, sizeof names);
		return err_set(e, "%s: [workload] trace_format: expected one of %s, got '%s'", at, names,
			       sc->trace_format);
	}
	static const struct {
		const char *key;
		size_t off;
	} files[] = { { "trace", offsetof(struct scenario, trace) },
		      { "input_file", offsetof(struct scenario, input.file) },
		      { "output_file", offsetof(struct scenario, output.file) } };
	for (size_t i = 0; i < 3; i++)
		if ((en = inidoc_find(doc, "workload", files[i].key)) && en->line > 0 &&
		    relative_to((char *)sc + files[i].off, doc->path))
			return err_set(e, "%s:%d: [workload] %s: the path relative to the scenario's folder is longer than %d characters",
				       doc->path, en->line, files[i].key, INI_VALUE_MAX - 1);
	key_at(doc, "workload", "random_input_len", sc->input_len_at, sizeof sc->input_len_at);
	key_at(doc, "run", "weights", sc->weights_at, sizeof sc->weights_at);
	key_at(doc, "engine", "tensor_parallel_size", sc->engine.tensor_parallel_at,
	       sizeof sc->engine.tensor_parallel_at);
	key_at(doc, "engine", "pipeline_parallel_size", sc->engine.pipeline_parallel_at,
	       sizeof sc->engine.pipeline_parallel_at);
	for (size_t i = 0; engine_classes[i]; i++)
		if (engine_classes[i]->config_locate)
			engine_classes[i]->config_locate(&sc->engine, engine_key_at, doc);
	if (check_classes(&sc->engine, doc, "engine", false, e))
		return -1;
	if (sc->weights[0] && !precision_find(sc->weights)) {
		char names[512];
		precision_names(names, sizeof names);
		return err_set(e, "%s: [run] weights: expected one of %s, got '%s'", sc->weights_at, names,
			       sc->weights);
	}
	if (!sc->weights[0] && sc->engine.cls->default_weights)
		snprintf(sc->weights, sizeof sc->weights, "%s", sc->engine.cls->default_weights);
	if (sc->priorities_text[0] &&
	    scenario_parse_priorities(sc, inidoc_find(doc, "workload", "priorities"), doc->path, e))
		return -1;
	if (sc->stages_text[0]) {
		if (scenario_parse_stages(sc, inidoc_find(doc, "workload", "stages"), doc->path, e))
			return -1;
		/* A stage sends rate × duration requests: that is num_prompts. */
		double total = 0, span_s = 0;
		for (int i = 0; i < sc->n_stages; i++) {
			total += round(sc->stages[i].rate * sc->stages[i].duration_s);
			span_s += sc->stages[i].duration_s;
		}
		if (!(total <= SCENARIO_MAX_PROMPTS))
			return err_set(e, "%s: [workload] stages: the stages send %g requests; expected at most %d (rate × duration summed)",
				       doc->path, total, SCENARIO_MAX_PROMPTS);
		if (!(span_s <= EVQ_HORIZON_S))
			return err_set(e, "%s: [workload] stages: the stages last %g s; expected at most the simulator's horizon of %g s",
				       doc->path, span_s, EVQ_HORIZON_S);
		sc->num_prompts = (int64_t)total;
		if (sc->num_prompts < 1)
			return err_set(e, "%s: [workload] stages: the stages send no request", doc->path);
	}
	if (sc->burstiness != 1.0 && sc->arrival == ARRIVAL_POISSON &&
	    !inidoc_find(doc, "workload", "arrival"))
		sc->arrival = ARRIVAL_GAMMA;   /* vLLM: burstiness != 1 means gamma gaps */
	if (sc->ramp_up_strategy != RAMP_NONE) {
		/* vllm bench serve needs both ends, and ramps one load, not stages. */
		const struct inidoc_entry *r = inidoc_find(doc, "workload", "ramp_up_strategy");
		char at[INI_VALUE_MAX + 32];
		if (r->line > 0)
			snprintf(at, sizeof at, "%s:%d", doc->path, r->line);
		else
			snprintf(at, sizeof at, "--set workload.ramp_up_strategy");
		if (!sc->ramp_up_start_rps || !sc->ramp_up_end_rps)
			return err_set(e, "%s: [workload] ramp_up_strategy: expected ramp_up_start_rps and ramp_up_end_rps with it",
				       at);
		if (sc->n_stages || sc->users > 0 || sc->trace[0])
			return err_set(e, "%s: [workload] ramp_up_strategy: a ramp cannot be combined with stages, users or a trace",
				       at);
	}
	/* A file of lengths is what the empirical distribution draws from:
	 * given without a distribution it implies that one (as burstiness
	 * implies gamma gaps), rather than being ignored by the uniform
	 * default. A distribution given too keeps it (a sweep over them). */
	if (sc->input.file[0] && !inidoc_find(doc, "workload", "input_distribution"))
		sc->input.dist = LEN_EMPIRICAL;
	if (sc->output.file[0] && !inidoc_find(doc, "workload", "output_distribution"))
		sc->output.dist = LEN_EMPIRICAL;
	if (sc->input.dist == LEN_EMPIRICAL && !sc->input.file[0])
		return err_set(e, "%s: [workload] input_file: missing; expected a file of lengths for input_distribution = empirical",
			       doc->path);
	if (sc->output.dist == LEN_EMPIRICAL && !sc->output.file[0])
		return err_set(e, "%s: [workload] output_file: missing; expected a file of lengths for output_distribution = empirical",
			       doc->path);
	if ((en = inidoc_find(doc, "workload", "users")) && sc->users > 0 && sc->n_stages)
		return err_set(e, "%s:%d: [workload] users: closed-loop users cannot be combined with stages",
			       doc->path, en->line);
	return 0;
}

static const char *const pool_names[N_POOLS] = { "prefill", "decode" };

/* Keeps the [prefill] and [decode] entries for scenario_pool. */
static int take_pools(struct scenario *sc, struct inidoc *doc, struct err *e)
{
	for (size_t i = 0; i < doc->len; i++) {
		struct inidoc_entry *en = &doc->entries[i];
		for (int p = 0; p < N_POOLS; p++) {
			if (strcmp(en->section, pool_names[p]))
				continue;
			int *n = &sc->n_pool[p];
			/* A later --set of the same key replaces the file's. */
			int k = 0;
			while (k < *n && strcmp(sc->pool[p][k].key, en->key))
				k++;
			if (k == SCENARIO_MAX_POOL_KEYS)
				return err_set(e, "%s: [%s] %s: at most %d keys per pool", doc->path, en->section,
					       en->key, SCENARIO_MAX_POOL_KEYS);
			struct pool_override *o = &sc->pool[p][k];
			snprintf(o->key, sizeof o->key, "%s", en->key);
			snprintf(o->value, sizeof o->value, "%s", en->value);
			o->line = en->line;
			if (k == *n)
				(*n)++;
			en->used = true;
		}
	}
	return 0;
}

int scenario_pool(const struct scenario *base, int pool, struct scenario *out, struct err *e)
{
	*out = *base;
	if (!base->n_pool[pool])
		return 0;
	/* The engine's keys (and run's hardware) under the pool's name, so
	 * errors say [prefill] or [decode]. */
	struct inidoc_key every[MAX_KEYS], pk[MAX_KEYS];
	size_t n = 0, n_every = all_keys(every);
	for (size_t i = 0; i < n_every; i++) {
		if (strcmp(every[i].section, "engine") &&
		    (strcmp(every[i].section, "run") || strcmp(every[i].key, "hardware")))
			continue;
		pk[n] = every[i];
		pk[n++].section = pool_names[pool];
	}
	struct inidoc doc = { 0 };
	doc.path = xstrdup(base->path);
	for (int k = 0; k < base->n_pool[pool]; k++) {
		const struct pool_override *o = &base->pool[pool][k];
		xgrow(&doc.entries, &doc.cap, doc.len + 1, sizeof *doc.entries);
		struct inidoc_entry *en = &doc.entries[doc.len++];
		memset(en, 0, sizeof *en);
		snprintf(en->section, sizeof en->section, "%s", pool_names[pool]);
		snprintf(en->key, sizeof en->key, "%s", o->key);
		snprintf(en->value, sizeof en->value, "%s", o->value);
		en->line = o->line;
	}
	int rc = inidoc_bind(&doc, pk, n, out, false, NULL, e);
	if (rc == 0)
		rc = bind_kind(&out->engine, &doc, pool_names[pool], e);
	if (rc == 0)
		rc = check_block_size(&out->engine, &doc, pool_names[pool], e);
	if (rc == 0)
		rc = check_classes(&out->engine, &doc, pool_names[pool], true, e);
	if (rc == 0) {
		if (inidoc_find(&doc, pool_names[pool], "tensor_parallel_size"))
			key_at(&doc, pool_names[pool], "tensor_parallel_size", out->engine.tensor_parallel_at,
			       sizeof out->engine.tensor_parallel_at);
		if (inidoc_find(&doc, pool_names[pool], "pipeline_parallel_size"))
			key_at(&doc, pool_names[pool], "pipeline_parallel_size", out->engine.pipeline_parallel_at,
			       sizeof out->engine.pipeline_parallel_at);
	}
	inidoc_free(&doc);
	return rc;
}

/* Tries each pool's overrides once, so a bad one fails the load. */
static int check_pools(const struct scenario *sc, struct err *e)
{
	for (int p = 0; p < N_POOLS; p++) {
		if (!sc->n_pool[p])
			continue;
		if (!clustercfg_disaggregated(&sc->cluster))
			return err_set(e, "%s: [%s] %s: pools need a disaggregated cluster ([cluster] prefill_replicas and decode_replicas)",
				       sc->path, pool_names[p], sc->pool[p][0].key);
		struct scenario *tmp = xcalloc(1, sizeof *tmp);
		int rc = scenario_pool(sc, p, tmp, e);
		free(tmp);
		if (rc)
			return -1;
	}
	return 0;
}

/* An entry no table claimed is in a section nobody owns. */
static int unknown_sections(const struct inidoc *doc, struct err *e)
{
	for (size_t i = 0; i < doc->len; i++) {
		const struct inidoc_entry *en = &doc->entries[i];
		if (en->used)
			continue;
		char at[INI_VALUE_MAX + 32];
		inidoc_entry_at(doc, en, at, sizeof at);
		return err_set(e, "%s: [%s] %s: unknown section; expected one of [run], [workload], [engine], [slo], [cluster], [prefill], [decode]",
			       at, en->section, en->key);
	}
	return 0;
}

int scenario_load(struct scenario *sc, const char *path, struct inidoc *overrides,
		  struct err *e)
{
	scenario_default(sc);
	struct inidoc doc = { 0 };
	if (path) {
		/* A file starts from vLLM's own defaults, not the built-in demo. */
		snprintf(sc->path, sizeof sc->path, "%s", path);
		sc->num_prompts = 1000;               /* vllm bench serve --num-prompts */
		sc->request_rate = INFINITY;          /* --request-rate inf */
		if (inidoc_load(&doc, path, e)) {
			inidoc_free(&doc);
			return -1;
		}
	} else {
		doc.path = xstrdup("built-in default");
	}
	if (overrides)
		inidoc_add_overrides(&doc, overrides);
	struct inidoc_key every[MAX_KEYS];
	int rc = inidoc_bind(&doc, every, all_keys(every), sc, true, NULL, e);
	if (rc == 0)
		rc = clustercfg_bind(&sc->cluster, &doc, e);
	if (rc == 0)
		rc = take_pools(sc, &doc, e);
	if (rc == 0)
		rc = unknown_sections(&doc, e);
	if (rc == 0)
		rc = check(sc, &doc, e);
	if (rc == 0)
		rc = check_pools(sc, e);
	inidoc_free(&doc);
	return rc;
}
