/*
 * vllmpark: requests that wait for their KV to arrive instead of joining
 * a step (vLLM's WAITING_FOR_REMOTE_KVS): a CPU-tier prefix hit with the
 * offloading connector (its blocks cross the host link, one load after
 * another) and a request prefilled on another replica (P/D
 * disaggregation: the cluster's kv_pull hook says when its KV lands).
 *
 * Invariants: a parked request holds the GPU blocks its KV lands in and
 * is in neither running nor waiting; parked is in kv_ready_ns order;
 * link_free_ns is when the host link's last load ends; a request leaves
 * parked (vllm_unpark) only once kv_ready_ns <= now, to the front of the
 * waiting queue.
 */
#include <math.h>

#include "simassert.h"
#include "vllm_int.h"

/* Into parked, kept in kv_ready_ns order (host-link loads land in order;
 * remote pulls over several links need not). O(parked) when out of order. */
static void park_sorted(struct engine *g, size_t idx)
{
	struct reqq *q = &g->parked;
	reqq_push_back(q, idx);
	for (size_t k = q->len - 1; k > 0; k--) {
		size_t *prev = reqq_at(q, k - 1), *cur = reqq_at(q, k);
		if (req(g, *prev)->kv_ready_ns <= req(g, *cur)->kv_ready_ns)
			break;
		size_t t = *prev;
		*prev = *cur;
		*cur = t;
	}
}

/* A request whose prompt was prefilled on another replica (P/D
 * disaggregation, vLLM's NixlConnector): it takes blocks for its prompt
 * here, waits (WAITING_FOR_REMOTE_KVS) while the cluster
 * pulls the KV over its link, and is parked until it lands. False when
 * the pool is short: it waits at the head of the queue for blocks. */
bool vllm_admit_remote(struct engine *g, size_t idx, int64_t now)
{
	struct request *r = req(g, idx);
	int64_t need = cdiv(vllm_num_tokens(r), g->block_size);
	if (need > kvpool_num_free(g->pool))
		return false;
	reqq_pop_front(&g->waiting);
	if (need > 0)
		vllm_alloc_blocks(g, r, need);
	r->n_hashed = 0;
	if (r->first_scheduled_ns < 0)
		r->first_scheduled_ns = now;
	r->kv_ready_ns = g->setup.hooks.kv_pull(g->setup.hooks.kv_ctx, idx, now);
	SIM_ASSERT(r->kv_ready_ns >= now, now, idx);
	park_sorted(g, idx);
	return true;
}

/* A CPU-tier hit with vLLM's offloading connector: the request gets GPU
 * blocks for the n_cpu blocks found in host memory and waits
 * (WAITING_FOR_REMOTE_KVS) while they cross the host link, one load after
 * another, instead of joining a step; it is back in the waiting queue, at
 * its front, once they are in (unpark). */
void vllm_park(struct engine *g, size_t idx, int64_t n_cpu, int64_t now)
{
	struct request *r = req(g, idx);
	for (int64_t i = 0; i < n_cpu; i++)
		vllm_push_block(g, r, kvpool_alloc(g->pool));
	int64_t start = g->link_free_ns > now ? g->link_free_ns : now;
	r->kv_ready_ns = start + llround((double)n_cpu * g->cpu_block_transfer_s * 1e9);
	g->link_free_ns = r->kv_ready_ns;
	if (r->first_scheduled_ns < 0)
		g->st.prefix_cpu_hits += n_cpu * g->block_size;
	park_sorted(g, idx);
}

/* Parked requests whose blocks are in by now: their blocks hashed (others
 * may hit them from here), back at the front of the waiting queue in the
 * order they were parked. */
void vllm_unpark(struct engine *g, int64_t now)
{
	size_t n = 0;
	while (n < g->parked.len && req(g, *reqq_at(&g->parked, n))->kv_ready_ns <= now)
		n++;
	for (size_t k = n; k-- > 0;) {
		size_t idx = *reqq_at(&g->parked, k);
		struct request *r = req(g, idx);
		if (r->remote_kv) {
			/* The pulled prompt but its last token: vLLM counts
			 * every pulled token but the last as computed
			 * (Scheduler._update_waiting_for_remote_kv: "if
			 * num_computed_tokens == request.num_tokens:
			 * num_computed_tokens -= 1"), so this replica's next
			 * step computes that one token to get the logits and
			 * samples the client's first token (the prefill side's
			 * is dropped by the proxy). Its full blocks are cached. */
			r->remote_kv = 0;
			r->num_computed = r->prompt_len > 0 ? r->prompt_len - 1 : 0;
			vllm_cache_full_blocks(g, r, r->num_computed);
			vllm_enqueue_waiting(g, idx, true);
			continue;
		}
		for (int32_t j = r->n_hashed; j < r->n_blocks; j++)
			kvpool_set_hash(g->pool, r->blocks[j], vllm_block_hash(r, j, g->block_size));
		r->n_hashed = r->n_blocks;
		r->num_computed = r->n_blocks * (int32_t)g->block_size;
		vllm_enqueue_waiting(g, idx, true);
	}
	for (size_t k = 0; k < n; k++)
		reqq_pop_front(&g->parked);
}
