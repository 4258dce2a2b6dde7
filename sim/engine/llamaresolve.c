/*
 * llamaresolve: the llama.cpp server engine's start-up (llamaserver.c,
 * ollama.c): the options checked and defaulted (a flavor's defaults where
 * a key is unset), the memory (weights, output layer, the KV of every slot
 * allocated up front) and where the layers go.
 *
 * Partial offload: num_gpu layers on the device, the rest on a CPU profile,
 * both costed every micro-batch: llama.cpp puts the last num_gpu repeating
 * layers on the GPU and the output layer there too once num_gpu exceeds the
 * layer count; the activations cross the host link once per micro-batch.
 * Every per-layer term of the step-time model (weights, FLOPs, attention)
 * is proportional to the layers, so each device's part is its own
 * struct perf's time scaled by its share of the layers.
 */
#include <assert.h>
#include <math.h>
#include <stdio.h>

#include "llamacpp_int.h"
#include "routerskew.h"

/* "f16, q8_0, …": the GGUF types of the precision table (the ones that
 * quantize every tensor, embeddings included). */
static void gguf_names(char *out, size_t cap)
{
	size_t n, used = 0;
	const struct precision *p = precision_all(&n);
	out[0] = '\0';
	for (size_t i = 0; i < n && used + 1 < cap; i++)
		if (p[i].quantizes_embeddings)
			used += (size_t)snprintf(out + used, cap - used, "%s%s", used ? ", " : "", p[i].name);
}

/* The device memory llama.cpp may use on hw: Metal's share of unified
 * memory on Apple, all of it elsewhere. */
static double gpu_bytes_of(const struct hw_profile *hw)
{
	return hw_memory_bytes(hw) * (hw->hw_class == HW_APPLE ? APPLE_GPU_SHARE : 1);
}

/* The options: checked against the engine, defaulted from the flavor
 * (and, for num_ctx, the model and the device). */
static int resolve_options(struct engine *g, struct err *e)
{
	const struct engine_config *cfg = g->setup.cfg;
	const struct model *m = g->setup.model;
	const struct hw_profile *hw = g->setup.hw;
	const struct precision *w = g->setup.weights;
	const char *kind = g->fl->name;
	if (!w->quantizes_embeddings) {
		char names[256];
		gguf_names(names, sizeof names);
		return err_set(e, "%s: [run] weights: expected a GGUF type for [engine] kind = %s (%s), got '%s'",
			       g->setup.weights_at, kind, names, w->name);
	}
	if (cfg->tensor_parallel_size != 1)
		return err_set(e, "%s: [engine] tensor_parallel_size: expected 1 for kind = %s (llama.cpp splits layers across GPUs, not tensors), got %lld",
			       cfg->tensor_parallel_at, kind, (long long)cfg->tensor_parallel_size);
	if (cfg->pipeline_parallel_size != 1)
		return err_set(e, "%s: [engine] pipeline_parallel_size: expected 1 for kind = %s (a llama.cpp server runs one batch at a time; its layer split is num_gpu), got %lld",
			       cfg->pipeline_parallel_at, kind, (long long)cfg->pipeline_parallel_size);
	g->on_cpu_only = hw->hw_class == HW_CPU;
	double gpu_bytes = gpu_bytes_of(hw);
	int64_t train = m->max_position_embeddings;
	g->n_parallel = cfg->llama.num_parallel > 0 ? cfg->llama.num_parallel : g->fl->num_parallel;
	g->unified = cfg->llama.num_parallel <= 0 && g->fl->unified_by_default;
	if (cfg->llama.num_ctx > 0)
		g->n_ctx = cfg->llama.num_ctx;
	else if (g->fl->cold_loads)
		g->n_ctx = ollama_default_ctx(hw, gpu_bytes, train);
	else
		g->n_ctx = train > 0 ? train : 4096;          /* llama-server -c 0 */
	if (train > 0 && g->n_ctx > train)
		return err_set(e, "%s: [engine] num_ctx: expected at most the model's max_position_embeddings (%lld for %s), got %lld",
			       cfg->llama.num_ctx_at, (long long)train, m->id, (long long)g->n_ctx);
	if (g->n_ctx < 2)
		return err_set(e, "%s: [engine] num_ctx: expected at least 2 tokens, got %lld", cfg->llama.num_ctx_at,
			       (long long)g->n_ctx);
	g->n_batch = cfg->llama.n_batch > 0 ? cfg->llama.n_batch : g->fl->n_batch;
	g->n_ubatch = cfg->llama.n_ubatch > 0 ? cfg->llama.n_ubatch : g->fl->n_ubatch;
	g->n_ubatch = min64(g->n_ubatch, g->n_batch);   /* llama.cpp clamps n_ubatch to n_batch */
	g->n_batch = max64(g->n_batch, g->n_parallel);  /* the batch always holds every decode */
	g->max_queue = cfg->llama.max_queue;
	g->n_keep = min64(OLLAMA_NUM_KEEP, g->n_ctx - 1);
	g->cache_prompt = cfg->llama.cache_prompt;
	g->truncate = cfg->llama.truncate;
	g->context_shift = g->fl->context_shift;
	double keep = cfg->llama.keep_alive_s;
	g->keep_alive_ns = !g->fl->cold_loads || isinf(keep) ? INT64_MAX : (int64_t)llround(keep * 1e9);
	return 0;
}

/* Where the weights and the KV went (place_layers), for the stats. */
struct placement {
	int64_t ngl, all, rep;      /* num_gpu as resolved; n_layers + 1; repeating layers on the device */
	int64_t kv_tokens;
	double kv_layer;            /* KV bytes per layer */
	double on_gpu;              /* bytes on the device */
	double total;               /* weight bytes */
};

/* Memory: layers, output, KV allocated up front for every slot; the layers
 * that do not fit (or num_gpu leaves off) run on the run's CPU profile. */
static int place_layers(struct engine *g, struct placement *pl, struct err *e)
{
	const struct engine_config *cfg = g->setup.cfg;
	const struct model *m = g->setup.model;
	const struct hw_profile *hw = g->setup.hw;
	const struct precision *w = g->setup.weights;
	double gpu_bytes = gpu_bytes_of(hw);
	struct model_params mp;
	model_params(m, &mp);
	double L = (double)m->n_layers, bpw = w->bits_per_weight / 8;
	double total = model_weight_bytes(m, w);
	double out_b = (mp.lm_head > 0 ? mp.lm_head : mp.embed) * bpw;
	double layer_b = (total - (mp.embed + mp.lm_head) * bpw) / L;
	int64_t kv_tokens = g->n_ctx * (g->unified ? 1 : g->n_parallel);
	double kv_layer = (double)kv_tokens * model_kv_bytes_per_token(m, 2) / L;
	int64_t all = m->n_layers + 1;      /* Ollama's count: repeating layers + output */
	int64_t ngl;
	if (g->on_cpu_only) {
		ngl = all;
	} else if (cfg->llama.num_gpu >= 0) {
		ngl = cfg->llama.num_gpu;
		if (ngl > all)
			return err_set(e, "%s: [engine] num_gpu: expected 0 to %lld (%s has %lld layers plus the output layer; -1 = as many as fit), got %lld",
				       cfg->llama.num_gpu_at, (long long)all, m->id, (long long)m->n_layers, (long long)ngl);
	} else {
		double room = gpu_bytes - GPU_RESERVE_BYTES;
		if (L * (layer_b + kv_layer) + out_b <= room)
			ngl = all;
		else
			ngl = room > 0 ? min64((int64_t)floor(room / (layer_b + kv_layer)), m->n_layers) : 0;
	}
	int64_t rep = min64(ngl, m->n_layers);
	struct step_model *sm = &g->sm;
	step_model_on_device(sm);
	sm->dev_frac = (double)rep / L;
	sm->output_on_dev = ngl == all;
	double on_gpu = (double)rep * (layer_b + kv_layer) + (sm->output_on_dev ? out_b : 0);
	double on_cpu = (L - (double)rep) * (layer_b + kv_layer) + (sm->output_on_dev ? 0 : out_b);
	if (g->on_cpu_only) {
		if (on_gpu > hw_memory_bytes(hw))
			return err_set(e, "%s: %s at %s with its KV cache (%.1f GB for %lld tokens) needs %.1f GB; %s has %.1f GB",
				       g->setup.path, m->id, w->name, kv_layer * L / 1e9, (long long)kv_tokens,
				       on_gpu / 1e9, hw->id, hw_memory_bytes(hw) / 1e9);
	} else {
		if (on_gpu > gpu_bytes - GPU_RESERVE_BYTES)
			return err_set(e, "%s: [engine] num_gpu: %lld layers of %s at %s with their KV cache need %.1f GB; %s has %.1f GB for them",
				       cfg->llama.num_gpu_at, (long long)ngl, m->id, w->name, on_gpu / 1e9, hw->id,
				       (gpu_bytes - GPU_RESERVE_BYTES) / 1e9);
		if (rep < m->n_layers || !sm->output_on_dev) {
			/* The run read [engine] cpu_hardware (engine_setup.cpu_hw). */
			const struct hw_profile *cpu = g->cpu_hw = g->setup.cpu_hw;
			assert(cpu);
			if (cpu->hw_class != HW_CPU)
				return err_set(e, "%s: [engine] cpu_hardware: expected a CPU profile (class = cpu) for the layers num_gpu leaves off the GPU, got '%s' (class %s)",
					       cfg->llama.cpu_hardware_at, cpu->id, hw_class_names[cpu->hw_class]);
			if (on_cpu > hw_memory_bytes(cpu))
				return err_set(e, "%s: [engine] num_gpu: the %lld layers left on %s need %.1f GB; it has %.1f GB",
					       cfg->llama.num_gpu_at, (long long)(m->n_layers - rep), cpu->id,
					       on_cpu / 1e9, hw_memory_bytes(cpu) / 1e9);
			perf_init(&sm->cpu, m, cpu, w, 1, 2);
			perf_use_engine(&sm->cpu, "llama.cpp");
			perf_set_router_skew(&sm->cpu, model_router_skew(m, cfg->moe_router_skew, NULL));
			sm->cpu_part = true;
			sm->dev_part = rep > 0 || sm->output_on_dev;
			/* f32 activations cross once per micro-batch. */
			sm->xfer_s_per_token = (double)m->hidden * 4 / (hw->host_bandwidth_gb_s * 1e9);
		}
	}
	*pl = (struct placement){ ngl, all, rep, kv_tokens, kv_layer, on_gpu, total };
	return 0;
}

int llama_resolve(struct engine *g, struct err *e)
{
	const struct engine_config *cfg = g->setup.cfg;
	const struct model *m = g->setup.model;
	const struct hw_profile *hw = g->setup.hw;
	const struct precision *w = g->setup.weights;
	struct placement pl = { 0 };
	if (resolve_options(g, e) || place_layers(g, &pl, e))
		return -1;
	double L = (double)m->n_layers;
	perf_init(&g->sm.dev, m, hw, w, 1, 2);   /* KV in f16: llama.cpp's and Ollama's default */
	perf_use_engine(&g->sm.dev, "llama.cpp");   /* its kernels: MMQ/MMVQ, cuBLAS FP16 compute */
	perf_set_router_skew(&g->sm.dev, model_router_skew(m, cfg->moe_router_skew, NULL));
	g->load_ns = g->fl->cold_loads ? (int64_t)llround(pl.total / (cfg->llama.load_bandwidth_gb_s * 1e9) * 1e9) : 0;
	if (g->load_ns == 0)
		g->keep_alive_ns = INT64_MAX;   /* loaded before the run (inf bandwidth): never cold */

	g->st.max_num_batched_tokens = g->n_batch;
	g->st.max_num_seqs = g->n_parallel;
	/* No whole-scenario length check in the run: a long request is
	 * truncated or refused on its own, as these servers do. */
	g->st.max_model_len = INT32_MAX;
	g->st.num_parallel = g->n_parallel;
	g->st.num_ctx = g->n_ctx;
	g->st.n_batch = g->n_batch;
	g->st.n_ubatch = g->n_ubatch;
	g->st.kv_unified = g->unified;
	g->st.gpu_layers = g->on_cpu_only ? 0 : pl.ngl;
	g->st.layers = pl.all;
	g->st.kv_tokens = pl.kv_tokens;
	g->st.kv_bytes = pl.kv_layer * L;
	g->st.weight_bytes_per_gpu = g->on_cpu_only ? 0 : pl.on_gpu - (double)pl.rep * pl.kv_layer;
	g->st.load_s = (double)g->load_ns / 1e9;
	snprintf(g->st.cpu_hardware, sizeof g->st.cpu_hardware, "%s",
		 g->on_cpu_only ? hw->id : g->cpu_hw ? g->cpu_hw->id : "");
	return 0;
}

