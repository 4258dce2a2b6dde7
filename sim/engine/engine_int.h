/*
 * engine_int: what the engine implementations (vllm.c, ollama.c) share
 * behind engine.h: a request by its index, failing one at submission, and
 * adding a step's time breakdown to the run's (the cluster adds its
 * replicas' the same way). Not for the layers above the engines.
 *
 * Requests are named by index, never kept by pointer: the table moves when
 * closed-loop users add requests (request.h), so a pointer from engine_req
 * is good until the next on_done.
 */
#ifndef SERVESIM_ENGINE_INT_H
#define SERVESIM_ENGINE_INT_H

#include <stddef.h>
#include <stdint.h>

#include "engine.h"
#include "request.h"
#include "steptime.h"

/* Request i of the run. Borrowed (see above). Cannot fail. */
static inline struct request *engine_req(const struct engine_setup *s, size_t i)
{
	return &s->reqs->v[i];
}

/* Request idx ends failed at now with reason why (borrowed: a string
 * constant, as the request keeps it), and the run hears of it (on_done,
 * which may grow the request table). Cannot fail. */
static inline void engine_fail(const struct engine_setup *s, size_t idx, int64_t now, const char *why)
{
	struct request *r = engine_req(s, idx);
	r->state = REQ_FAILED;
	r->fail_reason = why;
	r->finish_ns = now;
	s->hooks.on_done(s->hooks.ctx, idx, now);
}

/* Adds step breakdown b to the run's acc, with extra_overhead_s more
 * overhead (work outside the step model, such as vLLM's scheduler) and
 * total_s as the step's whole time. Cannot fail. */
static inline void engine_time_add(struct perf_breakdown *acc, const struct perf_breakdown *b,
				   double extra_overhead_s, double total_s)
{
	acc->dense += b->dense;
	acc->experts += b->experts;
	acc->lm_head += b->lm_head;
	acc->attn_prefill += b->attn_prefill;
	acc->attn_decode += b->attn_decode;
	acc->elementwise += b->elementwise;
	acc->allreduce += b->allreduce;
	acc->offload += b->offload;
	acc->overhead += b->overhead + extra_overhead_s;
	acc->pipeline += b->pipeline;
	acc->total += total_s;
}

#endif
