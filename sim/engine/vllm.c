/*
 * The vLLM V1 engine class: steps and start-up. EngineCore.step (or, with
 * async scheduling, step_with_batch_queue: a queue of two steps) around
 * one scheduler pass each (vllmsched.c), the step's time (vllmstep.c:
 * the step model with vLLM's overheads, sim/perf/overhead.c), the KV pool
 * sized as gpu_worker.py sizes it (vllmpool.c), the step's end (tokens to
 * the hooks, finished requests out), submission, the request path and
 * the scheduler's defaults. ../shared/reference/formats.md §3 has the
 * condensed source; docs/engine-vllm.md the whole story.
 *
 * A request samples a token in the step that computes its last known
 * token; a preempted request is recomputed from scratch (its own cached
 * blocks may still hit).
 */
#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "iround.h"
#include "num.h"
#include "routerskew.h"
#include "sampling.h"
#include "simassert.h"
#include "stepcache.h"
#include "vllm_int.h"
#include "vllmver.h"
#include "xalloc.h"

/* Without async scheduling a step is scheduled and run at once. With it,
 * EngineCore keeps a batch queue of two: the step scheduled while the
 * last one ran starts now, and the next is scheduled at once, against
 * the state the running step will leave (its tokens count as computed,
 * its samples as pending). A request that arrives during a step is first
 * seen at its end, so it runs in the step after the next. */
static int64_t vllm_start_step(struct engine *g, int64_t now)
{
	struct batch *run = &g->batch[g->cur];
	if (g->parked.len)
		vllm_unpark(g, now);
	if (!g->queued)
		vllm_schedule(g, run, now);
	g->queued = false;
	if (run->len == 0 && run->n_lazy == 0) {
		if (!g->parked.len)
			return -1;
		/* Nothing to run but a load in flight: the engine loop passes
		 * with empty steps (each polls the connector; a request that
		 * arrives meanwhile is seen at the next) until the load lands. */
		g->idle_wait = true;
		g->step_tokens = 0;
		int64_t wait = req(g, reqq_front(&g->parked))->kv_ready_ns - now;
		/* (Only a remote pull parks under servesim 1's timing, which
		 * has no poll: it waits for the landing.) */
		int64_t poll = g->timing ? iround(g->ovh.prof->idle_poll_us * 1e3) : wait;
		return wait < 1 ? 1 : wait < poll ? wait : poll;
	}
	int64_t ns = vllm_launch(g, run, now);
	if (g->async) {
		struct batch *next = &g->batch[1 - g->cur];
		vllm_schedule(g, next, now);
		g->queued = next->len > 0 || next->n_lazy > 0;
	}
	return ns;
}

/* The output path of step b ending at now: each API server's output
 * handler (AsyncLLM's) does the work of its streams that got a token, after
 * the work queued on its event loop; the clients of server s see their
 * tokens at seen[s]. */
static void output_path(struct engine *g, const struct batch *b, int64_t now, int64_t *seen)
{
	struct apiservers *a = &g->api;
	if (a->n == 1) {
		seen[0] = apiservers_work(a, 0, APISERVER_LOOP, now,
					  overhead_output_ns(&g->ovh, b->step.sampled), NULL);
		return;
	}
	int64_t streams[APISERVER_MAX] = { 0 };
	for (size_t k = 0; k < b->len; k++)
		streams[req(g, b->idx[k])->api_server] += b->samples[k];
	for (int s = 0; s < a->n; s++)
		seen[s] = streams[s] ? apiservers_work(a, s, APISERVER_LOOP, now,
						       overhead_output_ns(&g->ovh, streams[s]), NULL) :
				       now;
}

/* Hands the step's tokens gathered so far to the hooks, in order. */
static void flush_tokens(struct engine *g, int64_t seen)
{
	const struct engine_hooks *h = &g->setup.hooks;
	if (g->n_emitted == 0)   /* (most steps of a fast-forwarded run) */
		return;
	if (h->on_tokens)
		h->on_tokens(h->ctx, g->emitted, g->n_emitted, seen);
	else
		for (size_t k = 0; k < g->n_emitted; k++)
			h->on_token(h->ctx, g->emitted[k], seen);
	g->n_emitted = 0;
}

/* Fast-forward's finished list: kept in run_seq (running) order. */
static void ff_push_done(struct engine *g, size_t idx)
{
	struct idxvec *d = &g->ff.done;
	xgrow(&d->v, &d->cap, d->len + 1, sizeof *d->v);
	size_t j = d->len++;
	int64_t s = req(g, idx)->run_seq;
	for (; j > 0 && req(g, d->v[j - 1])->run_seq > s; j--)
		d->v[j] = d->v[j - 1];
	d->v[j] = idx;
}

/* The finished requests out of running, each done in running order (as
 * the scan of the reference path does it), without reading the others. */
static void ff_remove_done(struct engine *g)
{
	const size_t *done = g->ff.done.v, nd = g->ff.done.len, n = g->n_running;
	size_t *run = g->running;
	/* (Locals: the hook may write anywhere, so fields would be read
	 * again every turn.) Up to the first done, nothing moves. */
	size_t i = 0, w, j = 0;
	while (i < n && run[i] != done[0])
		i++;
	for (w = i; i < n;) {
		/* run[i] is done[j]; the span up to the next done moves down
		 * in one memmove (element by element, this was 5% of a run). */
		size_t idx = run[i++];
		j++;
		g->setup.hooks.on_done(g->setup.hooks.ctx, idx, req(g, idx)->finish_ns);
		size_t k = i;
		if (j < nd)
			while (k < n && run[k] != done[j])
				k++;
		else
			k = n;
		memmove(run + w, run + i, (k - i) * sizeof *run);
		w += k - i;
		i = k;
	}
	SIM_ASSERT(j == nd, SIM_NO_TIME, j);
	g->n_running = w;
}

static void vllm_end_step(struct engine *g, int64_t now)
{
	struct batch *b = &g->batch[g->cur];
	if (g->idle_wait) {
		g->idle_wait = false;
		return;
	}
	bool any_done = false;
	/* The output path: the clients see this step's tokens once their API
	 * server has done their work (after what it had queued). */
	int64_t seen_at[APISERVER_MAX];
	if (g->timing)
		output_path(g, b, now, seen_at);
	else
		seen_at[0] = now;
	const bool spec = g->spec.method != NULL, ff = g->ff.on;
	if (ff)
		vllm_ff_end_step(g, b, seen_at[0]);   /* the lazy tokens first */
	xgrow(&g->emitted, &g->cap_emitted, b->len, sizeof *g->emitted);
	g->n_emitted = 0;
	g->ff.done.len = 0;
	for (size_t k = 0; k < b->len; k++) {
		size_t idx = b->idx[k];
		struct request *r = req(g, idx);
		if (k + PREFETCH_AHEAD < b->len)
			__builtin_prefetch(&req(g, b->idx[k + PREFETCH_AHEAD])->state);
		if (ff)
			vllm_ff_catch_up(g, r);
		bool running = r->state == REQ_RUNNING;
		/* (A request handed over by a prefill replica with more API
		 * servers streams through this replica's first.) */
		int64_t seen = seen_at[r->api_server < g->api.n ? r->api_server : 0];
		int32_t emit = 1;
		if (spec && b->drafts[k] && running) {
			/* Verified: the accepted run and one more; the rejected
			 * drafts' KV is dropped (num_computed back to the last
			 * accepted token). */
			int a = specdec_accept(&g->spec, b->drafts[k]);
			r->num_computed -= b->drafts[k] - a;
			emit += a;
			g->st.spec_draft_tokens += b->drafts[k];
			g->st.spec_accepted_tokens += a;
		}
		if (!g->cache_at_alloc && running)
			vllm_cache_full_blocks(g, r, r->num_computed);
		if (!b->samples[k])
			continue;                     /* a prefill chunk, no token yet */
		/* A request preempted while this step ran keeps its token, as
		 * update_from_output keeps it. */
		r->pending--;
		r->generated += emit;
		if (r->first_token_ns < 0)
			r->first_output_ns = seen - now;
		/* --stream-interval: the output path sends a stream's tokens in
		 * chunks of that many (the first and the last at once). */
		bool last = r->generated >= r->output_len;
		r->chunk += emit;
		if (r->chunk >= g->stream_interval || r->generated == 1 || last)
		{
			if (g->api.n > 1)   /* API servers see their tokens at their own times */
				g->setup.hooks.on_token(g->setup.hooks.ctx, idx, seen);
			else
				g->emitted[g->n_emitted++] = idx;   /* its token: flush_tokens */
		}
		if (last) {
			r->state = REQ_FINISHED;
			r->finish_ns = seen;
			if (running) {
				if (g->setup.hold_finished_kv) {
					vllm_mark_private(g, r);
					kvhold_put(&g->held, idx, r);   /* until release_kv */
				} else {
					vllm_free_blocks(g, r);
					/* Its block list to the next request's:
					 * memory stays with the requests in
					 * flight, not all the run's. */
					vllm_spare_block_list(g, r);
				}
				any_done = true;
				if (ff)
					ff_push_done(g, idx);
			} else {
				reqq_remove(&g->waiting, idx);
				flush_tokens(g, seen);   /* its last token before it is done */
				g->setup.hooks.on_done(g->setup.hooks.ctx, idx, seen);
			}
		}
	}
	flush_tokens(g, seen_at[0]);   /* one API server: every token at its time */
	if (ff && any_done) {
		vllm_ff_drop_done(g);
		ff_remove_done(g);
	} else if (any_done) {
		size_t w = 0;
		for (size_t i = 0; i < g->n_running; i++) {
			size_t idx = g->running[i];
			if (req(g, idx)->state == REQ_FINISHED)
				g->setup.hooks.on_done(g->setup.hooks.ctx, idx, req(g, idx)->finish_ns);
			else
				g->running[w++] = idx;
		}
		g->n_running = w;
	}
	b->len = 0;
	if (g->async)
		g->cur = 1 - g->cur;
}

static void vllm_submit(struct engine *g, size_t idx, int64_t now)
{
	struct request *r = req(g, idx);
	int64_t total = (int64_t)r->prompt_len + r->output_len;
	r->enqueue_ns = now;
	if (total > g->max_model_len) {
		/* vLLM answers 400: "This model's maximum context length is …". */
		engine_fail(&g->setup, idx, now, "prompt + max_tokens exceeds max_model_len");
		return;
	}
	if (cdiv(total, g->block_size) > kvpool_num_usable(g->pool)) {
		engine_fail(&g->setup, idx, now, "needs more KV blocks than the whole pool holds");
		return;
	}
	r->state = REQ_WAITING;
	vllm_note_private(r, g->block_size);
	vllm_enqueue_waiting(g, idx, false);
}

/* The API server's path: servesim 1's one constant; or the request's turn
 * on its API server's event loop (HTTP, parsing; behind the requests and
 * output work before it) and then on its tokenizer thread, plus the
 * request_overhead_ms remainder (0 in the shipped overhead profiles; a
 * calibrated hardware profile may set it), which does not queue. */
static int64_t vllm_request_path_ns(struct engine *g, struct request *r, int64_t now)
{
	if (!g->timing)
		return iround(g->setup.hw->eff.request_overhead_ms * 1e6);
	int s = apiservers_pick(&g->api);
	int64_t loop_wait, tok_wait;
	int64_t t = apiservers_work(&g->api, s, APISERVER_LOOP, now, overhead_request_ns(&g->ovh),
				    &loop_wait);
	t = apiservers_work(&g->api, s, APISERVER_TOKENIZER, t, overhead_tokenize_ns(&g->ovh, r->prompt_len),
			    &tok_wait);
	r->api_server = s;
	r->api_wait_ns = loop_wait + tok_wait;
	return t - now + overhead_request_rest_ns(&g->ovh);
}

static int64_t vllm_waiting(const struct engine *g)
{
	return (int64_t)(g->waiting.len + g->parked.len);
}

static void vllm_gauges(const struct engine *g, struct engine_gauges *out)
{
	out->running = (int64_t)g->n_running;
	out->waiting = vllm_waiting(g);
	out->kv_usage = kvpool_usage(g->pool);
	out->step_tokens = g->step_tokens;
}

static void vllm_stats(const struct engine *g, struct engine_stats *st)
{
	*st = g->st;
	/* kvpool_usage's expression at the fullest launch (vllm_launch keeps
	 * min_free): usage falls as free blocks rise, so the same double as
	 * the largest of every launch's usage, and 0 with no launch. */
	double peak = 1.0 - (double)g->min_free / (double)kvpool_num_usable(g->pool);
	if (peak > st->peak_kv_usage)
		st->peak_kv_usage = peak;
}

/* vLLM's defaults for the OpenAI server (arg_utils.py, about v0.11). */
static void resolve_defaults(struct engine *g, const struct engine_config *cfg,
			     const struct hw_profile *hw, const struct model *m)
{
	g->ver = vllmver_find(cfg->vllm.vllm_version);
	assert(g->ver);
	bool big = hw_memory_bytes(hw) >= 70.0 * GIB && !hw->vllm_small_defaults &&
		   hw->hw_class != HW_CPU;
	g->mnbt = cfg->max_num_batched_tokens > 0 ? cfg->max_num_batched_tokens : big ? 8192 : 2048;
	g->max_seqs = cfg->max_num_seqs > 0 ? cfg->max_num_seqs : big ? 1024 : 256;
	g->max_model_len = cfg->max_model_len > 0 ? cfg->max_model_len :
			   m->max_position_embeddings > 0 ? m->max_position_embeddings : 4096;
	if (!cfg->enable_chunked_prefill && cfg->max_num_batched_tokens <= 0)
		g->mnbt = g->max_model_len;  /* without chunking a whole prompt must fit */
	if (cfg->max_num_seqs <= 0 && g->max_seqs > g->mnbt)
		g->max_seqs = g->mnbt;
}

/* What the scenario's vLLM version (vllmver.h) and its own keys make of
 * the scheduler and the overheads: async scheduling (vLLM turns it off
 * with pipeline parallelism), CUDA graphs, where prefix hashes register,
 * and SchedulerConfig's rule that more than one partial prefill caps
 * chunks at 4% of max_model_len. */
static int resolve_timing(struct engine *g, struct err *e)
{
	const struct engine_config *cfg = g->setup.cfg;
	const struct vllm_version *v = g->ver;
	bool pp = cfg->pipeline_parallel_size > 1;
	bool spec = cfg->vllm.speculative_method[0] != '\0';
	g->async = cfg->vllm.async_scheduling_given ? cfg->vllm.async_scheduling : v->async_scheduling && !pp && !spec;
	if (g->async && pp)
		return err_set(e, "%s: [engine] async_scheduling: not modelled with pipeline_parallel_size > 1 (servesim runs pipeline stages synchronously)",
			       cfg->vllm.async_scheduling_at);
	if (g->async && spec)
		return err_set(e, "%s: [engine] async_scheduling: vLLM turns it off with speculative decoding (#27614)",
			       cfg->vllm.async_scheduling_at);
	/* engine.overhead_profile picks another engine's (or version's)
	 * overheads by name; it brings the split timing with it. */
	const char *pname = cfg->vllm.overhead_profile[0] ? cfg->vllm.overhead_profile : v->overhead;
	g->timing = v->timing || cfg->vllm.overhead_profile[0];
	g->priority = cfg->vllm.scheduling_policy == SCHED_PRIORITY;
	g->stream_interval = cfg->vllm.stream_interval;
	g->cache_at_alloc = v->cache_at_alloc;
	if (cfg->vllm.max_num_partial_prefills > 1 && g->threshold == 0)
		g->threshold = (int64_t)((double)g->max_model_len * 0.04);
	g->st.vllm_version = v->name;
	g->st.async_scheduling = g->async;
	g->st.timing = g->timing;
	if (!g->timing)
		return 0;
	const struct overhead_profile *prof = overhead_profile_find(pname);
	if (!prof) {
		char names[256];
		overhead_profile_names(names, sizeof names);
		return err_set(e, "%s: [engine] overhead_profile: expected one of %s, got '%s'",
			       cfg->vllm.overhead_profile_at, names, pname);
	}
	double layers = g->perf.stage_layers;
	double moe = g->perf.n_moe_layers * layers / (double)g->setup.model->n_layers;
	overhead_model_init(&g->ovh, prof, g->setup.hw, g->async, cfg->vllm.enforce_eager, g->max_seqs,
			    g->mnbt, layers, moe, (double)g->setup.model->vocab);
	struct sampling_params sp = { cfg->vllm.temperature, cfg->vllm.top_p, cfg->vllm.top_k, cfg->vllm.min_p };
	/* --generation-config's default is auto from vLLM 0.8 (vllm-project/
	 * vllm#12622, "Default to generation_config from model"), none before. */
	bool gen_auto = cfg->vllm.generation_config_given ? cfg->vllm.generation_config == 0 : v->minor >= 8;
	g->ovh.piecewise_only = v->piecewise_only && !prof->decode_only_graphs;
	if (v->capture_grid8)
		overhead_use_grid8(&g->ovh, g->max_seqs, g->mnbt);
	g->ovh.sampler = sampling_path(&sp, gen_auto, &g->setup.model->gen, (double)g->setup.model->vocab);
	g->ovh.penalties = sampling_penalties(gen_auto, &g->setup.model->gen);
	g->ovh.min_p = sampling_min_p(&sp, gen_auto, &g->setup.model->gen, g->ovh.sampler);
	g->st.sampler = sampling_path_name(g->ovh.sampler);
	g->st.sampler_penalties = g->ovh.penalties;
	g->perf.overhead = &g->ovh;
	apiservers_init(&g->api, cfg->vllm.api_server_count);
	g->st.max_capture_size = g->ovh.n_capture ? g->ovh.capture[g->ovh.n_capture - 1] : 0;
	return 0;
}

/* The step model of an engine made from g->setup: perf_init on the
 * scenario's tensor parallelism and KV dtype, the router skew, expert
 * parallelism, the pipeline stages and --cpu-offload-gb's share of each
 * GPU's weights. The one builder of vllm_create and vllm_step_model
 * (explain --batch), so a step explained and a step run cannot drift.
 * Returns 0, or -1 with e for more stages than layers. */
static int build_perf(struct engine *g, struct err *e)
{
	const struct engine_config *cfg = g->setup.cfg;
	const struct model *m = g->setup.model;
	int tp = (int)cfg->tensor_parallel_size;
	perf_init(&g->perf, m, g->setup.hw, g->setup.weights, tp, kv_dtypes[cfg->kv_cache_dtype].bytes_per_elem);
	perf_set_router_skew(&g->perf, model_router_skew(m, cfg->moe_router_skew, NULL));
	if (cfg->enable_expert_parallel)
		perf_expert_parallel(&g->perf, tp);
	if (cfg->pipeline_parallel_size > m->n_layers)
		return err_set(e, "%s: [engine] pipeline_parallel_size: expected at most the model's %lld layers, got %lld",
			       cfg->pipeline_parallel_at, (long long)m->n_layers, (long long)cfg->pipeline_parallel_size);
	perf_pipeline(&g->perf, (int)cfg->pipeline_parallel_size);
	perf_offload(&g->perf, cfg->cpu_offload_gb, model_weight_bytes_per_gpu(m, g->setup.weights, tp, g->perf.pp));
	g->perf.shared_stream = g->ver->shared_expert_stream;
	return 0;
}

static struct engine *vllm_create(const struct engine_setup *setup, struct err *e)
{
	struct engine *g = xcalloc(1, sizeof *g);
	const struct engine_config *cfg = setup->cfg;
	g->setup = *setup;
	g->block_size = cfg->block_size;
	g->caching = cfg->enable_prefix_caching;
	g->chunked = cfg->enable_chunked_prefill;
	g->threshold = cfg->long_prefill_token_threshold;
	resolve_defaults(g, cfg, setup->hw, setup->model);
	if (build_perf(g, e)) {
		free(g);
		return NULL;
	}
	if (specdec_init(&g->spec, setup, e) || vllm_size_pool(g, e) || resolve_timing(g, e)) {
		specdec_free(&g->spec);
		kvpool_destroy(g->pool);
		free(g);
		return NULL;
	}
	vllm_ff_init(g);
	g->min_free = kvpool_num_usable(g->pool);   /* usage 0 */
	g->perf.cache = stepcache_new(&g->perf);   /* last: the perf is final */
	g->st.max_num_batched_tokens = g->mnbt;
	g->st.max_num_seqs = g->max_seqs;
	g->st.max_model_len = g->max_model_len;
	g->st.block_size = g->block_size;
	return g;
}

/* The step model vllm_create would build from setup (build_perf, then
 * resolve_defaults and resolve_timing for the overhead model), without
 * the KV pool, the drafter or any request state: the whole pass on the
 * GPUs. */
static int vllm_step_model(const struct engine_setup *setup, struct step_model *sm, struct err *e)
{
	struct engine *g = xcalloc(1, sizeof *g);
	g->setup = *setup;
	g->threshold = setup->cfg->long_prefill_token_threshold;
	resolve_defaults(g, setup->cfg, setup->hw, setup->model);
	int rc = build_perf(g, e) || resolve_timing(g, e) ? -1 : 0;
	if (rc == 0) {
		step_model_on_device(sm);
		sm->dev = g->perf;
		sm->ovh = g->ovh;
		sm->dev.overhead = g->timing ? &sm->ovh : NULL;
	}
	free(g);
	return rc;
}

static void vllm_destroy(struct engine *g)
{
	if (!g)
		return;
	kvpool_destroy(g->pool);
	stepcache_free(g->perf.cache);
	free(g->running);
	reqq_free(&g->waiting);
	reqq_free(&g->parked);
	for (int i = 0; i < 2; i++) {
		free(g->batch[i].idx);
		free(g->batch[i].n);
		free(g->batch[i].samples);
		free(g->batch[i].drafts);
	}
	specdec_free(&g->spec);
	kvhold_free(&g->held);
	vllm_ff_free(g);
	free(g->hits);
	free(g->emitted);
	for (size_t i = 0; i < g->n_spare; i++)
		free(g->spare[i].v);
	free(g->spare);
	free(g);
}

static void vllm_release_kv(struct engine *g, size_t idx)
{
	kvhold_release(&g->held, idx, g->pool);
}

static void vllm_config_default(struct engine_config *c)
{
	vllmcfg_default(&c->vllm);
}

static void vllm_config_locate(struct engine_config *c,
			       void (*at)(const void *ctx, const char *key, char *out, size_t cap),
			       const void *ctx)
{
	vllmcfg_locate(&c->vllm, at, ctx);
}

const struct engine_class vllm_engine_class = {
	.name = "vllm",
	.backend = "vllm",
	.title = "vLLM",
	.family = ENGINE_FAMILY_VLLM,
	.perf_engine = "vllm",
	.keys = vllmcfg_keys,
	.config_offset = offsetof(struct engine_config, vllm),
	.config_default = vllm_config_default,
	.config_locate = vllm_config_locate,
	.config_check = vllmcfg_check,
	.create = vllm_create,
	.destroy = vllm_destroy,
	.submit = vllm_submit,
	.start_step = vllm_start_step,
	.end_step = vllm_end_step,
	.request_path_ns = vllm_request_path_ns,
	.gauges = vllm_gauges,
	.waiting = vllm_waiting,
	.prefix_hit_tokens = vllm_prefix_hit_tokens,
	.stats = vllm_stats,
	.release_kv = vllm_release_kv,
	.step_model = vllm_step_model,
};
