/*
 * request: one request's record, from the client's send to its last token.
 * A plain struct: the workload fills the first group, the engine the rest.
 * Requests live in one growing table (struct reqtab) and are named by their
 * index in it, never by pointer (the table moves as closed-loop users add
 * requests). A lean run recycles a finished request's index for a later
 * one (reqtab_recycle), so the table holds the requests in flight; id
 * keeps the order they were made in.
 */
#ifndef SERVESIM_REQUEST_H
#define SERVESIM_REQUEST_H

#include <stddef.h>
#include <stdint.h>

enum req_state { REQ_PENDING, REQ_WAITING, REQ_RUNNING, REQ_FINISHED, REQ_FAILED };

struct request {
	/* What a step's per-request paths and the token hooks read, first
	 * (128 bytes, two or three cache lines: the fast path is bound by the
	 * first touch of each visited record; spread over the record these
	 * fields were five). */
	int state;                /* enum req_state */
	int32_t prompt_len, output_len;
	int32_t num_computed;     /* tokens whose KV is in the cache */
	int32_t generated;        /* output tokens produced */
	int32_t pending;          /* sampled tokens of steps in flight (vLLM's
				   * num_output_placeholders): 0 or 1, 2 with async */
	int32_t chunk;            /* of which not yet sent to the client (the engine sets
				   * it; on_token takes them: one SSE chunk) */
	int32_t n_blocks, cap_blocks;
	int32_t n_hashed;         /* leading blocks registered in the prefix cache */
	int16_t api_server;       /* the API-server process it went through */
	int16_t ff_owes;          /* fast-forward (below): 1 while the end of pass ff_end - 2,
				   * its last lazy run's last, is still to apply */
	int32_t first_private;    /* vLLM: its first block only it could hit (INT32_MAX:
				   * none), as engine/vllmblocks.c reads it from the
				   * fields below, kept here for the step's paths */
	int32_t *blocks;          /* KV block ids, owned while running */
	/* vLLM's fast-forward decode (engine/vllmff.c), next to the fields it
	 * defers. While it is lazy (the scheduler passes up to ff_p1,
	 * decoding one token each and doing nothing else; lazy iff ff_sched <
	 * ff_p1), num_computed, generated, pending, last_token_ns and
	 * max_itl_ns are stale: the passes before ff_sched and the step ends
	 * before ff_end are applied to them, the rest when the engine next
	 * touches it (vllm_ff_catch_up). run_seq orders the running set
	 * (admission order); ff_sample is the last pass it sampled a token in. */
	int64_t ff_p1, ff_sched, ff_end;
	int64_t ff_sample, run_seq;
	int64_t first_token_ns, last_token_ns;   /* (ns) */
	int64_t max_itl_ns;       /* the longest gap between two of its tokens */
	int32_t stage;            /* load stage it belongs to (sent during) */
	int32_t replica;          /* the cluster's replica it was routed to (its decode
				   * replica when disaggregated) */

	/* What the client sends. */
	int64_t want_send_ns;     /* when the workload wants to send it */
	int32_t conversation;     /* -1 when not part of a conversation */
	int32_t turn;
	int32_t priority;         /* vLLM's request priority: lower runs first under
				   * --scheduling-policy priority; 0 by default */
	/* Prompt content, for prefix caching: tokens [0, shared_len) are the
	 * shared prefix of group shared_key; the rest belong to own_key (the
	 * conversation, or the request alone), position by position. Mooncake
	 * traces instead name each 512-token block (block512, borrowed). */
	uint64_t shared_key, own_key;
	int32_t shared_len;
	int32_t n_block512;
	const uint64_t *block512;

	/* Engine state. */
	int32_t cached_tokens;    /* prefix-cache hit at first scheduling */

	/* Timing (ns). */
	int64_t send_ns;          /* client send (after max_concurrency wait) */
	int64_t enqueue_ns;       /* reaches the engine (after the API path) */
	int64_t first_scheduled_ns;
	int64_t finish_ns;
	/* Steps before the first token: this request's share of them (by
	 * tokens) and the rest, spent on other requests in the same steps. */
	int64_t prefill_own_ns, prefill_shared_ns;
	/* vLLM's timing (issue 18): the start of the first step it is in (-1
	 * until then; later than first_scheduled_ns with async scheduling,
	 * which schedules a step while the one before runs), the CUDA-graph
	 * padding of its steps before the first token, and the output path
	 * of its first token. */
	int64_t first_launch_ns, ttft_pad_ns, first_output_ns;
	int64_t kv_ready_ns;      /* its CPU-tier blocks are in the GPU pool (parked) */
	int64_t api_wait_ns;      /* of its API path, queued behind other work on its
				   * API server's event loop (engine/apiserver.h) */
	/* Ollama and llama-server (engine/ollama.c). */
	int64_t load_ns;          /* waiting for the model to load: Ollama's load_duration */
	int32_t prompt_eval_count;/* prompt tokens after truncation, cached ones included */
	int32_t prefill_replica;  /* disaggregated (sim/cluster): the replica that ran its
				   * prefill; else -1 */
	int32_t preemptions;
	int32_t remote_kv;        /* 1: its prompt's KV comes from a prefill replica (the
				   * prompt's last token is computed again here, as vLLM
				   * does, and the first token sampled here) */
	const char *fail_reason;  /* static string when FAILED */
	int64_t id;               /* made id-th (0-based): its index, unless recycled */
};

struct reqtab {
	struct request *v;
	size_t len, cap;
	int64_t made;             /* requests ever added */
	size_t *free_idx;         /* recycled indices, reused last first */
	size_t n_free, cap_free;
};

/* Adds a zeroed request (at a recycled index when there is one, else
 * appended) and returns its index. Cannot fail. */
size_t reqtab_add(struct reqtab *t);

/* Request idx is done with: its block list is freed and its index goes to
 * the next reqtab_add. Cannot fail. */
void reqtab_recycle(struct reqtab *t, size_t idx);

void reqtab_free(struct reqtab *t);   /* frees block arrays too */

#endif
