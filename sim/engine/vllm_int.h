/*
 * vllm_int: what the vLLM V1 engine's files share. vllm.c: the engine
 * class, the step loop and its end, start-up; vllmstep.c: a step's
 * duration and its attribution; vllmpool.c: the KV pool's size
 * (start-up memory); vllmsched.c: one scheduler pass; vllmblocks.c: the
 * blocks' hashes and prefix lookups; vllmpark.c: requests waiting for
 * their KV (CPU-tier loads, remote pulls); vllmff.c: fast-forward decode.
 * Not for other modules: they see engine.h.
 *
 * Invariants: a request is in at most one of running, waiting and parked;
 * its num_computed counts the tokens of every step it is in (scheduled
 * ones included), pending the sampled tokens of those steps; with async
 * scheduling at most two steps hold it (batch[cur] running, batch[1 - cur]
 * queued).
 */
#ifndef SERVESIM_VLLM_INT_H
#define SERVESIM_VLLM_INT_H

#include "apiserver.h"
#include "engine.h"
#include "engine_int.h"
#include "kvhold.h"
#include "kvpool.h"
#include "overhead.h"
#include "reqq.h"
#include "specdec.h"
#include "vllmver.h"
#include "xalloc.h"

/* Load stages a fast-forwarded (lazy, vllmff.c) request may be of
 * (SCENARIO_MAX_STAGES; a request of another stays explicit). */
#define FF_STAGES 32

/* One scheduled step: its requests, their tokens, whether each samples. */
struct batch {
	size_t *idx;
	int32_t *n;
	bool *samples;
	int32_t *drafts;                 /* speculative tokens verified with it (0: none;
					  * written only with speculative decoding on) */
	size_t len, cap;
	struct perf_step step;
	struct perf_step draft;          /* the drafting sequences, for the drafter's passes */
	double extra_s;                  /* CPU-tier loads in this step */
	int64_t pass;                    /* its scheduler pass (vllmff.c) */
	size_t n_lazy;                   /* lazy decodes in it besides idx[] (vllmff.c) */
	int32_t n_stages;                /* of them by load stage: lazy_stage[0, n_stages) */
	int32_t lazy_stage[FF_STAGES];
};

/* Fast-forward decode (vllmff.c): a running request that will only decode
 * one token a step for the next passes is lazy: counted in aggregates,
 * untouched until its next event pass (ring buckets), and passes over the
 * rest (the explicit set) leave results byte-identical to the reference. */
#define FF_RING 256                      /* passes ahead a lazy run may reach */
_Static_assert((FF_RING & (FF_RING - 1)) == 0, "FF_RING: a power of two (ring index by mask)");
/* The gap table's levels: spans 2^0 .. 2^4 = 16 ends, a lazy run's length
 * under the default 16-token blocks; a longer range takes 16 at a time
 * (ffgap_max, vllmffgap.h). Nine levels (the whole ring) cost a step 4 more updates, and
 * at a low rate steps outnumber catch-ups 3 to 1 (rate-1 point: 172k
 * steps, 52k catch-ups). */
#define FF_LEVELS 5
#define FF_CHUNK (1 << (FF_LEVELS - 1))
_Static_assert(FF_CHUNK <= FF_RING, "FF_LEVELS: the gap table's spans fit the ring");

struct idxvec {
	size_t *v;
	size_t len, cap;
};

/* A lazy request's next block crossing (vllmffcross.c): its run_seq, to
 * take it in running order, and its index. */
struct ffcross {
	int64_t seq;
	size_t idx;
};

struct crossvec {
	struct ffcross *v;
	size_t len, cap;
};

struct vllm_ff {
	bool on;                         /* the run takes steady tokens, nothing rules it out */
	int64_t passes;                  /* the next scheduler pass's number (from 1) */
	int64_t ends;                    /* the last ended pass + 1 */
	int64_t last_seen;               /* when the clients saw the last ended pass's tokens */
	int64_t seen[FF_RING], gap[FF_RING];   /* by ended pass: seen time, gap to the one before */
	int64_t gmax[FF_LEVELS][FF_RING];      /* by ended pass e: the longest gap of (e - 2^k, e] */
	size_t n_lazy;
	int64_t lazy_kv;                 /* Σ over lazy of (num_computed - ff_sched + 1) */
	size_t n_win;                    /* lazy runs below the sliding window (all without) */
	int64_t lazy_kv_win;             /* lazy_kv over them */
	int32_t by_stage[FF_STAGES];     /* lazy requests by load stage */
	int32_t n_stages;                /* by_stage[n_stages, FF_STAGES) are 0 */
	int32_t replica;                 /* every lazy request's (-1: none yet) */
	struct idxvec due[FF_RING];      /* lazy requests by ff_p1 */
	struct crossvec cross[FF_RING];  /* lazy requests by the pass of their next new block */
	size_t cross_taken;              /* of this pass's, those given their block (in run_seq order) */
	int32_t *cross_blocks;           /* vllm_ff_cross_take_all's blocks */
	size_t cap_cross_blocks;
	struct idxvec expl;              /* running, not lazy: in run_seq order */
	struct idxvec owing;             /* no longer lazy, step ends still to apply */
	struct idxvec tmp, done;
	int64_t *demand;                 /* by expl position: vllm_ff_begin_pass's vllm_demand */
	size_t cap_demand;
	int64_t next_seq;                /* the next admission's run_seq */
};

/* A block-id array and its capacity (engine.spare). */
struct block_list {
	int32_t *v;
	int32_t cap;
};

struct engine {
	struct engine_setup setup;
	struct perf perf;
	struct kvpool *pool;
	int64_t min_free;                /* the fewest free blocks at a launch (vllm_stats: peak KV usage) */
	int64_t block_size, mnbt, max_seqs, max_model_len, threshold;
	const struct vllm_version *ver;  /* the scenario's version row (vllmver_find; scenario_load
					  * checked it), looked up once by resolve_defaults */
	bool caching, chunked;
	/* vLLM's timing (vllmver.h, overhead.h). With async scheduling
	 * batch[cur] is on the GPU and batch[1 - cur], when queued, was
	 * scheduled while it ran and starts when it ends (EngineCore's batch
	 * queue of two); without, batch[0] is the only one. */
	bool async, timing, cache_at_alloc;
	bool priority;                   /* --scheduling-policy priority, else fcfs */
	int64_t stream_interval;         /* tokens a streamed chunk carries */
	struct overhead_model ovh;
	struct batch batch[2];
	int cur;
	bool queued;
	double cpu_block_transfer_s;     /* one block over the host link */
	size_t *running;                 /* admission order */
	size_t n_running, cap_running;
	struct reqq waiting;
	struct reqq parked;              /* loading CPU-tier blocks, by kv_ready_ns */
	int64_t link_free_ns;            /* the host link's loads end here */
	bool idle_wait;                  /* the "step" running waits on a load */
	struct apiservers api;           /* the API-server event loops: request and output paths */
	int64_t step_tokens;             /* tokens in the current step */
	int32_t *hits;                   /* prefix-lookup scratch, kept across steps */
	size_t cap_hits;
	size_t *emitted;                 /* end_step's tokens not yet handed to the hooks */
	size_t n_emitted, cap_emitted;
	struct specdec spec;             /* speculative decoding; spec.method NULL: off */
	struct kvhold held;              /* setup.hold_finished_kv: finished requests' blocks */
	struct block_list *spare;        /* finished requests' block lists, for the next ones */
	size_t n_spare, cap_spare;
	struct vllm_ff ff;
	struct engine_stats st;
};

/* How many requests ahead the per-request loops of a step prefetch
 * records (each is a cache miss otherwise: the loops are bound by it). */
#define PREFETCH_AHEAD 6

static inline struct request *req(struct engine *g, size_t i)
{
	return engine_req(&g->setup, i);
}

static inline int64_t cdiv(int64_t a, int64_t b)
{
	return (a + b - 1) / b;
}

/* Its tokens, sampled ones still in flight included (vLLM's num_tokens
 * plus num_output_placeholders). */
static inline int64_t vllm_num_tokens(const struct request *r)
{
	return (int64_t)r->prompt_len + r->generated + r->pending;
}

/* vllmblocks.c. Room for one more block id in r's list: a list a finished
 * request left (g->spare), sized at once for the request's whole length. */
void vllm_grow_block_list(struct engine *g, struct request *r);

/* vllmblocks.c. A finished request's block list, emptied, kept for a
 * later request (memory stays with the requests in flight). */
void vllm_spare_block_list(struct engine *g, struct request *r);

/* Appends block b to r's block list. */
static inline void vllm_push_block(struct engine *g, struct request *r, int32_t b)
{
	if (r->n_blocks == r->cap_blocks)
		vllm_grow_block_list(g, r);
	r->blocks[r->n_blocks++] = b;
}

/* Appends n newly allocated blocks to r's list (kvpool_alloc_n: n <= the
 * pool's free blocks), as n vllm_push_block of kvpool_alloc would. */
static inline void vllm_alloc_blocks(struct engine *g, struct request *r, int64_t n)
{
	while ((int64_t)r->n_blocks + n > r->cap_blocks)
		vllm_grow_block_list(g, r);
	kvpool_alloc_n(g->pool, r->blocks + r->n_blocks, n);
	r->n_blocks += (int32_t)n;
}

/* vllmstep.c. Starts b on the GPU at now: its time, the step's stats and
 * attribution; returns its duration in ns. */
int64_t vllm_launch(struct engine *g, const struct batch *b, int64_t now);

/* vllmpool.c. Sizes and creates g->pool (gpu_worker.py); 0, or -1 with e
 * set when no KV cache fits. */
int vllm_size_pool(struct engine *g, struct err *e);

/* One scheduler pass into b, at now (Scheduler.schedule): running requests
 * first, preempting when a block cannot be had; then, if nobody was
 * preempted, waiting ones. Cannot fail. */
void vllm_schedule(struct engine *g, struct batch *b, int64_t now);

/* Moves parked requests whose CPU-tier blocks are in by now back to the
 * waiting queue. */
void vllm_unpark(struct engine *g, int64_t now);

/* Into the waiting queue, in the policy's order (front: a preempted or
 * reloaded request, first under FCFS). */
void vllm_enqueue_waiting(struct engine *g, size_t idx, bool front);

/* vllmpark.c. A request prefilled on another replica: takes blocks for
 * its prompt and parks until the cluster's pull lands;
 * false (nothing changed) when the pool is short. Pops it off waiting. */
bool vllm_admit_remote(struct engine *g, size_t idx, int64_t now);

/* vllmpark.c. Parks r (popped off waiting, its GPU hits held) while its
 * n_cpu CPU-tier blocks cross the host link, after the loads before it. */
void vllm_park(struct engine *g, size_t idx, int64_t n_cpu, int64_t now);

/* vllmblocks.c. The content hash of block j of r (block size bs); never 0. */
uint64_t vllm_block_hash(const struct request *r, int64_t j, int64_t bs);

/* vllmblocks.c. Leading prefix-cache hits of r among its first max_blocks
 * blocks: the GPU ones into gpu[] (*n_gpu of them); returns the count of
 * further blocks the CPU tier holds. A lookup only. */
int64_t vllm_lookup_prefix(struct engine *g, const struct request *r, int32_t *gpu,
			   int64_t *n_gpu, int64_t max_blocks);

/* vllmblocks.c. Makes r's private blocks findable (a preemption: it may
 * come back for them), each under its real hash. */
void vllm_publish_blocks(struct engine *g, struct request *r);

/* vllmblocks.c. The first block of r that only r itself could ever hit
 * (its own_key's, outside a conversation, never preempted), or INT64_MAX
 * when every block may be shared. */
int64_t vllm_first_private_block(const struct request *r, int64_t bs);

/* Keeps vllm_first_private_block in r->first_private (INT32_MAX for
 * none): at submission and whenever what it reads changes (a
 * preemption). */
void vllm_note_private(struct request *r, int64_t bs);

/* Registers the hashes of r's blocks that its first tokens fill. */
void vllm_cache_full_blocks_slow(struct engine *g, struct request *r, int64_t tokens);
static inline void vllm_cache_full_blocks(struct engine *g, struct request *r, int64_t tokens)
{
	/* Inline: it is asked at every scheduled request's every pass, and
	 * a block fills once in 16 of them; the rest cost this compare. */
	if (g->caching && tokens >= (int64_t)(r->n_hashed + 1) * g->block_size)
		vllm_cache_full_blocks_slow(g, r, tokens);
}

/* Leading tokens of r's prompt whose blocks the GPU prefix cache holds
 * (a lookup only: nothing is touched). O(blocks hit). */
int64_t vllm_prefix_hit_tokens(const struct engine *g, const struct request *r);

/* Releases r's blocks, last first. */
void vllm_free_blocks(struct engine *g, struct request *r);

/* Gives r's registered private blocks their stand-in marks (they carry
 * none while r holds them: vllm_free_blocks marks them by releasing them
 * as a run), before someone else releases its blocks one by one (a P/D
 * prefill replica's hold). */
void vllm_mark_private(struct engine *g, struct request *r);

/* Tokens r would schedule in a pass with a budget to spare (0: none),
 * and whether they would sample. */
int64_t vllm_demand(const struct engine *g, const struct request *r, bool *samples);

/* vllmff.c. Sets ff.on from the setup; call once, after the timing. */
void vllm_ff_init(struct engine *g);
void vllm_ff_free(struct engine *g);

/* Applies r's lazy passes and step ends so far to its fields. */
void vllm_ff_catch_up(struct engine *g, struct request *r);

/* At the start of pass b (b->pass set): lazy requests due now become
 * explicit; true when the pass may run over the explicit set alone (the
 * lazy ones counted into b->step, *budget less their tokens), false when
 * every request is explicit again and the pass runs over all of them. */
bool vllm_ff_begin_pass(struct engine *g, struct batch *b, int64_t *budget);

/* A pass with nothing to visit (no explicit request, none due, nobody
 * waiting: most passes of a low-rate point) in one call: the lazy sums
 * into b and the pass counter on, as begin_pass, an empty running part
 * and waiting queue and end_pass would leave them; false (nothing done)
 * otherwise. */
bool vllm_ff_quiet_pass(struct engine *g, struct batch *b, int64_t *budget);

/* Request idx, a victim of FCFS preemption in pass b, which began over
 * the explicit set (vllm_ff_begin_pass let it through short of blocks),
 * out of fast-forward's sets before preempt_at takes it out of running:
 * lazy, it is caught up to the pass (as a sync would) and its decode
 * taken out of b's sums and *budget; explicit, it leaves the explicit set
 * and its demand. */
void vllm_ff_unrun(struct engine *g, struct batch *b, int64_t *budget, size_t idx);

/* Lazy request idx's run ends at this pass, before its due one: it leaves
 * its due list, and its planned passes from here are counted lost (as a
 * sync counts them). The caller then takes it out of the lazy set. */
void vllm_ff_cut_run(struct engine *g, size_t idx);

/* After pass b: its entries that will only decode for a while become
 * lazy from the next pass; admissions join the explicit set (all of
 * running after a pass over all of it); the pass counter moves on. */
void vllm_ff_end_pass(struct engine *g, struct batch *b, size_t n_running_before);

/* At the end of step b seen by clients at seen: the seen ring, the step
 * ends owed; then the step's lazy tokens to the hook. Before b's entries. */
void vllm_ff_end_step(struct engine *g, const struct batch *b, int64_t seen);

/* The finished requests of a step's end (ff.done, in running order) out
 * of the explicit set. Before on_done. */
void vllm_ff_drop_done(struct engine *g);

/* vllmffcross.c: a lazy run across block boundaries. The pass at which
 * lazy r's next token starts a new block (it is lazy: num_computed and
 * ff_sched are stale together). */
static inline int64_t vllm_ff_next_cross(const struct engine *g, const struct request *r)
{
	return r->ff_sched + (int64_t)r->n_blocks * g->block_size - r->num_computed;
}

/* Lazy request idx (just made lazy, or given its block at this pass) is
 * listed at its next crossing if its run reaches it. */
void vllm_ff_cross_plan(struct engine *g, size_t idx);

/* Lazy request idx leaves its run before its next crossing (a victim):
 * off that pass's list. */
void vllm_ff_cross_forget(struct engine *g, size_t idx);

/* This pass's crossings: how many, then (once the pass is known to run
 * over the explicit set with blocks for all of them, and there are some)
 * sorted by run_seq. Between passes none is taken (cross_taken 0). */
static inline size_t vllm_ff_cross_count(const struct engine *g)
{
	return g->ff.cross[(uint64_t)g->ff.passes & (FF_RING - 1)].len;
}
void vllm_ff_cross_sort(struct engine *g);

/* Gives this pass's crossing requests that come before run_seq seq in
 * running order their new block (INT64_MAX: all that are left): the pool
 * then pops and registers in the reference's order. */
void vllm_ff_cross_before_slow(struct engine *g, int64_t seq);
static inline void vllm_ff_cross_before(struct engine *g, int64_t seq)
{
	const struct crossvec *c = &g->ff.cross[(uint64_t)g->ff.passes & (FF_RING - 1)];
	if (g->ff.cross_taken < c->len && c->v[g->ff.cross_taken].seq < seq)
		vllm_ff_cross_before_slow(g, seq);
}

/* This pass's crossing requests given their blocks at once, in list
 * order, when that cannot show: the pass allocates and registers nothing
 * else (alone), or the first others + crossings blocks of the free queue
 * hold no hash (kvpool_head_anonymous), so that which request gets which
 * of them only renames blocks. Then the list is empty (true); else it is
 * left as it was (false): sorted, it is taken in running order. */
bool vllm_ff_cross_take_all(struct engine *g, bool alone, int64_t others);

/* Short of blocks for them: this pass's crossing requests end their runs
 * now (due at this pass, their planned passes counted lost); the caller
 * takes the pass's due again. */
void vllm_ff_cross_end_runs(struct engine *g);

/* Every list emptied (a sync), or freed. */
void vllm_ff_cross_clear(struct engine *g);
void vllm_ff_cross_free(struct engine *g);

#endif
