#include "startup.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "num.h"

/* "1, 2, 4, 8" : the tensor parallel sizes up to max that divide heads. */
static void divisors(int64_t heads, int64_t max, char *out, size_t cap)
{
	out[0] = '\0';
	for (int64_t d = 1; d <= heads && d <= max; d++)
		if (heads % d == 0) {
			size_t len = strlen(out);
			snprintf(out + len, cap - len, "%s%lld", len ? ", " : "", (long long)d);
		}
}

static int vllm_setup(const struct engine_setup *su, struct err *e)
{
	const struct engine_config *cfg = su->cfg;
	const struct hw_profile *hw = su->hw;
	if (hw->hw_class == HW_APPLE)
		return err_set(e, "%s: [engine] kind: vLLM does not run on Apple GPUs (%s has no CUDA or ROCm; vLLM on macOS runs on the CPU only); expected kind = ollama or kind = llamacpp (llama.cpp's Metal backend)",
			       su->path, hw->id);
	int64_t tp = cfg->tensor_parallel_size, heads = su->model->n_heads;
	if (heads > 0 && heads % tp) {
		char ok[256];
		divisors(heads, 1024, ok, sizeof ok);
		return err_set(e, "%s: [engine] tensor_parallel_size: Total number of attention heads (%lld) must be divisible by tensor parallel size (%lld); expected one of %s",
			       cfg->tensor_parallel_at, (long long)heads, (long long)tp, ok);
	}
	/* The GPUs a replica reaches: its nodes', or its GPU-to-GPU link
	 * domain's when that is larger ([interconnect] link_domain_gpus: an
	 * NVL72 rack's NVLink Switch joins 72 GB200s across trays of 4, so a
	 * tensor-parallel group of 8-72 there stays on NVLink). */
	int64_t world = tp * cfg->pipeline_parallel_size, have = hw->gpus_per_node * cfg->nnodes;
	if (world > have && world <= hw->link_domain_gpus)
		return 0;
	if (world > have) {
		int64_t need = (world + hw->gpus_per_node - 1) / hw->gpus_per_node;
		char domain[160] = "";
		if (hw->link_domain_gpus > hw->gpus_per_node)
			snprintf(domain, sizeof domain, " and beyond its link domain of %lld GPUs ([interconnect] link_domain_gpus)",
				 (long long)hw->link_domain_gpus);
		return err_set(e, "%s: [engine] nnodes: World size (%lld) is larger than the number of available GPUs (%lld) in %s (%lld node%s of %lld %s)%s; set nnodes = %lld (vLLM --nnodes) if the replica is meant to span nodes",
			       su->path, (long long)world, (long long)have, cfg->nnodes > 1 ? "these nodes" : "this node",
			       (long long)cfg->nnodes, cfg->nnodes == 1 ? "" : "s", (long long)hw->gpus_per_node,
			       hw->id, domain, (long long)need);
	}
	return 0;
}

static int gguf_setup(const struct engine_setup *su, struct err *e)
{
	const struct engine_config *cfg = su->cfg;
	if (cfg->kv_cache_dtype == KV_DTYPE_FP8)
		return err_set(e, "%s: [engine] kv_cache_dtype: llama.cpp has no fp8 KV cache (its cache types are f16, q8_0 and q4_0: OLLAMA_KV_CACHE_TYPE, llama-server --cache-type-k); expected kv_cache_dtype = auto for kind = %s",
			       su->path, cfg->cls->name);
	return 0;
}

/* The blocks of one KV cache group (a pool block is kv_full_groups of
 * them) that one request of len tokens needs at most, as
 * kv_cache_utils.py's _max_memory_usage_bytes_from_groups sums them:
 * cdiv(len, block_size) for each full-attention group and, for each
 * sliding-window group, cdiv(min(window − 1 + max_num_batched_tokens,
 * len), block_size) + 1 (SlidingWindowSpec.max_memory_usage_bytes: the
 * window's tokens plus a step's, and one block for a window that does
 * not start at a block's start). */
static int64_t kv_blocks_needed(const struct engine_stats *st, int64_t len)
{
	int64_t bs = st->block_size;
	int64_t need = st->kv_full_groups * ((len + bs - 1) / bs);
	if (st->kv_window_groups > 0) {
		int64_t w = st->kv_window - 1 + st->max_num_batched_tokens;
		if (w > len)
			w = len;
		need += st->kv_window_groups * ((w + bs - 1) / bs + 1);
	}
	return need;
}

/* The largest length up to max_model_len whose request fits avail group
 * blocks, by bisection over kv_blocks_needed as vLLM's
 * _estimate_max_model_len_from_groups does (one group: every block's
 * tokens, blocks × block_size). */
static int64_t max_len_fitting(const struct engine_stats *st, int64_t avail)
{
	int64_t lo = 0, hi = st->max_model_len;
	while (lo < hi) {
		int64_t mid = lo + (hi - lo + 1) / 2;
		if (kv_blocks_needed(st, mid) <= avail)
			lo = mid;
		else
			hi = mid - 1;
	}
	return lo;
}

int startup_check(const struct engine_setup *setup, const struct engine_stats *st, struct err *e)
{
	const struct engine_config *cfg = setup->cfg;
	if (cfg->cls->family != ENGINE_FAMILY_VLLM)
		return gguf_setup(setup, e);
	if (vllm_setup(setup, e))
		return -1;
	if (st->max_num_batched_tokens < st->max_num_seqs)
		return err_set(e, "%s: [engine] max_num_batched_tokens: max_num_batched_tokens (%lld) must be greater than or equal to max_num_seqs (%lld); expected max_num_batched_tokens >= %lld or max_num_seqs <= %lld",
			       setup->path, (long long)st->max_num_batched_tokens, (long long)st->max_num_seqs,
			       (long long)st->max_num_seqs, (long long)st->max_num_batched_tokens);
	if (!cfg->enable_chunked_prefill && st->max_num_batched_tokens < st->max_model_len)
		return err_set(e, "%s: [engine] max_num_batched_tokens: max_num_batched_tokens (%lld) is smaller than max_model_len (%lld). This effectively limits the maximum sequence length to max_num_batched_tokens and makes vLLM reject longer sequences; expected max_num_batched_tokens >= %lld, max_model_len <= %lld, or enable_chunked_prefill = true",
			       setup->path, (long long)st->max_num_batched_tokens, (long long)st->max_model_len,
			       (long long)st->max_model_len, (long long)st->max_num_batched_tokens);
	/* A pool forced with num_gpu_blocks_override is the user's own
	 * statement of its size (a testing knob): no refusal. */
	if (cfg->num_gpu_blocks_override > 0)
		return 0;
	int64_t avail = st->num_gpu_blocks * st->kv_full_groups;
	if (kv_blocks_needed(st, st->max_model_len) > avail) {
		double gib = GIB, group_block = st->kv_bytes_per_block / (double)st->kv_full_groups;
		int64_t fits = max_len_fitting(st, avail);
		return err_set(e, "%s: [engine] max_model_len: To serve at least one request with the models's max seq len (%lld), (%.2f GiB KV cache is needed, which is larger than the available KV cache memory (%.2f GiB). Based on the available memory, the estimated maximum model length is %lld. Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine; expected max_model_len <= %lld",
			       setup->path, (long long)st->max_model_len,
			       group_block * (double)kv_blocks_needed(st, st->max_model_len) / gib,
			       st->kv_bytes_per_block * (double)st->num_gpu_blocks / gib, (long long)fits,
			       (long long)fits);
	}
	return 0;
}
