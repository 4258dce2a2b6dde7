/*
 * vllmpool: the vLLM engine's start-up memory, as gpu_worker.py sizes it:
 * what each GPU holds besides the KV cache (weights, a drafter's, the
 * activation peak, the sampler, non-torch memory, the rotary cache), the
 * bytes of a block, and so the GPU blocks; the CPU tier's blocks
 * (kv_offload_gib) and one block's time over the host link. Creates the
 * pool and records the figures in the engine's stats.
 *
 * Invariants: called once at create, after perf, the defaults (mnbt) and
 * specdec are set; on success the pool holds at least 2 GPU blocks; on
 * failure g->pool is left NULL and e says why.
 */
#include <math.h>

#include "num.h"
#include "vllm_int.h"

/* vLLM's hybrid KV cache manager, for a model with both sliding-window
 * and full-attention layers (vllm/v1/core/kv_cache_utils.py,
 * get_kv_cache_groups → _get_kv_cache_groups_uniform_page_size): the
 * layers of each attention type are split into KV cache groups of
 * group_size layers (the fewer type's count, or the larger one's when it
 * is under 1.5 times that; the last group of a type padded), every group
 * with a block table of its own over one pool whose blocks hold one
 * block of group_size layers (get_kv_cache_config_from_groups:
 * available // page_size // group_size). A full-attention group's
 * request holds a block per block_size tokens; a sliding group's
 * (SlidingWindowManager) at most cdiv(min(window − 1 +
 * max_num_batched_tokens, max_model_len), block_size) + 1
 * (SlidingWindowSpec.max_memory_usage_bytes). servesim's pool block is
 * one block of every full group, so a request draws its blocks as with a
 * single group. vLLM turns the manager off when a KV connector is set
 * (VllmConfig.__post_init__: "Turning off hybrid kv cache manager because
 * `--kv-transfer-config` is set"): with the CPU tier (kv_offload_gib,
 * the offloading connector) and on either side of a disaggregated pair
 * (NixlConnector) every layer stays in one group. Chunked local
 * attention (Llama 4), which vLLM also keeps out of the manager by
 * default, is not a sliding window here. Before vLLM 0.10 (the version row's hybrid_kv) such models were
 * full attention to the KV cache manager (vllm-project/vllm#14097).
 * Without sliding layers, or with only sliding ones: one group of every
 * layer (full_groups 1, window_groups 0). */
static void kv_groups(struct engine *g)
{
	const struct model *m = g->setup.model;
	int64_t slide = m->n_sliding_layers, full = m->n_layers - slide;
	g->st.kv_group_layers = m->n_layers;
	g->st.kv_full_groups = 1;
	g->st.kv_window_groups = 0;
	g->st.kv_window = 0;
	if (!g->ver->hybrid_kv || slide <= 0 || full <= 0 || g->setup.cfg->vllm.kv_offload_gib > 0 ||
	    g->setup.hold_finished_kv || g->setup.hooks.kv_pull)
		return;
	int64_t lo = slide < full ? slide : full, hi = slide < full ? full : slide;
	int64_t size = (double)hi < 1.5 * (double)lo ? hi : lo;
	g->st.kv_group_layers = size;
	g->st.kv_full_groups = (full + size - 1) / size;
	g->st.kv_window_groups = (slide + size - 1) / size;
	g->st.kv_window = m->sliding_window;
}

/* Sizes the pool as gpu_worker.py does: utilization × memory minus the
 * weights (a vision tower's included), the rotary cache, the activation
 * peak of a max_num_batched_tokens dummy step and non-torch memory,
 * divided by the bytes of a block (per GPU; with pipeline stages, the
 * GPU with the least room, as vLLM takes the minimum over workers). */
int vllm_size_pool(struct engine *g, struct err *e)
{
	const struct engine_config *cfg = g->setup.cfg;
	const struct model *m = g->setup.model;
	const struct hw_profile *hw = g->setup.hw;
	double tp = (double)cfg->tensor_parallel_size;
	double kv_elem = kv_dtypes[cfg->kv_cache_dtype].bytes_per_elem;
	/* With pipeline stages the binding GPU is the last stage's: the
	 * fullest stage's layers (their weights and KV), the LM head and the
	 * sampler (model_weight_bytes_per_gpu). */
	double stage = g->perf.stage_layers / (double)m->n_layers;
	double kv_token_gpu = model_kv_bytes_per_token_per_rank(m, kv_elem, (int)tp) * stage;
	/* With the hybrid manager a pool block holds a block of each full
	 * group: full_groups × group_size layers (kv_groups). */
	kv_groups(g);
	if (g->st.kv_window_groups > 0)
		kv_token_gpu = kv_token_gpu / (double)m->n_layers *
			       (double)(g->st.kv_group_layers * g->st.kv_full_groups);
	/* A drafter's weights and its layers' KV in the same blocks (specdec.h). */
	double draft_w, draft_kv;
	specdec_memory(&g->spec, m, g->setup.weights, (int)tp, kv_elem, &draft_w, &draft_kv);
	double block_bytes = (kv_token_gpu + draft_kv) * (double)g->block_size;
	double weights = model_weight_bytes_per_gpu(m, g->setup.weights, (int)tp, g->perf.pp);
	/* --cpu-offload-gb: that much of each GPU's weights lives in host
	 * memory and streams over the host link every step (build_perf set
	 * it from the same weights). */
	weights -= g->perf.offload_bytes;
	/* What vLLM's start-up profiling leaves out of the pool besides the
	 * weights, per GPU: the activations of a max_num_batched_tokens dummy
	 * step (FFN intermediates and hidden states, 16-bit), the sampler's
	 * working set on fp32 logits, and non-torch
	 * memory (CUDA context, cuBLAS workspace, NCCL). The three
	 * coefficients are a least-squares fit to the 11 dense runs of
	 * ../shared/calibration/ (residual <= 0.3 GiB; README "KV pool"). */
	double ffn = (double)(m->n_moe_layers ? m->expert_ffn_width * m->experts_per_token :
						 m->dense_ffn_width);
	double act = 0.417 * (double)g->mnbt * (3 * ffn / tp + 4 * (double)m->hidden) * 2;
	/* The sampler term was fitted on runs that all had max_num_seqs 128;
	 * how it grows with max_num_seqs is unknown, so it is held at its
	 * fitted size (12.2 fp32 copies of 128 rows of logits) rather than
	 * extrapolated. */
	double sampler = 12.2 * 128 * (double)m->vocab * 4;
	double non_torch = 0.411 * GIB;
	act += sampler;
	double rope = model_rope_cache_bytes(m);
	double available = ceil(hw_memory_bytes(hw) * cfg->gpu_memory_utilization) - weights - draft_w - act -
			   non_torch - rope;
	g->st.spec_weight_bytes = draft_w;
	g->st.spec_kv_bytes_per_block = draft_kv * (double)g->block_size;
	g->st.weight_bytes_per_gpu = weights;
	g->st.activation_bytes = act;
	g->st.non_torch_bytes = non_torch;
	g->st.kv_bytes_per_block = block_bytes;
	int64_t blocks = cfg->num_gpu_blocks_override > 0 ? cfg->num_gpu_blocks_override :
			 (int64_t)floor(available / block_bytes);
	if (blocks < 2)
		return err_set(e, "%s: the model's weights (%.1f GB per GPU) and activations leave no room for a KV cache in %.1f GB × gpu_memory_utilization %.2f; use more tensor parallelism, a smaller precision or a larger device",
			       g->setup.path, weights / 1e9, hw_memory_bytes(hw) / 1e9, cfg->gpu_memory_utilization);
	g->st.num_gpu_blocks = blocks;
	int64_t cpu_blocks = (int64_t)floor(cfg->vllm.kv_offload_gib * GIB / block_bytes);
	g->st.num_cpu_blocks = cpu_blocks;
	g->cpu_block_transfer_s = block_bytes / (hw->host_bandwidth_gb_s * 1e9);
	g->pool = kvpool_create(blocks, cpu_blocks);
	return 0;
}
