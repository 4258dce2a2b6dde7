/*
 * stepcache: a step timed through the cache is bit-identical to the same
 * step timed without it (the property issue 14 asks of any memo of the
 * step model), over random batches of decodes and prefill chunks, on
 * models and configurations that exercise every row: dense and MoE
 * (skewed router, expert parallelism), sliding windows, tensor and
 * pipeline parallelism, weight offload, the scalar model, an engine
 * overhead model, CUDA, ROCm and Metal backends. Also: the cache answers
 * only for its own perf, hits once warm, and stays bounded.
 */
#include "testutil.h"

#include <stdint.h>
#include <string.h>

#include "hwprofile.h"
#include "model.h"
#include "overhead.h"
#include "precision.h"
#include "stepcache.h"
#include "steptime.h"

struct config {
	const char *model, *hw, *weights;
	int tp, pp, ep;
	double skew, offload_gib;
	bool scalars, ideal, overhead;
};

static const struct config configs[] = {
	{ "llama-3.1-8b", "h100-sxm", "bf16", 1, 1, 1, 0, 0, false, false, true },
	{ "llama-3.1-8b", "h100-sxm", "fp8", 2, 1, 1, 0, 0, false, false, false },
	{ "llama-3.1-70b", "h100-sxm", "bf16", 4, 2, 1, 0, 0, false, false, true },
	{ "mixtral-8x7b", "h100-sxm", "bf16", 2, 1, 1, 0.8, 0, false, false, true },
	{ "qwen3-30b-a3b", "h200-sxm", "fp8", 4, 1, 4, 1.1, 0, false, false, false },
	{ "gemma-2-9b", "a100-80gb-sxm", "bf16", 1, 3, 1, 0, 4, false, false, false },
	{ "gpt-oss-20b", "mi300x", "mxfp4", 1, 1, 1, 0, 0, false, false, false },
	{ "llama-3.2-1b", "m2-ultra", "bf16", 1, 1, 1, 0, 0, false, false, false },
	{ "llama-3.1-8b", "l4", "bf16", 1, 1, 1, 0, 0, true, false, false },
	{ "llama-3.1-8b", "h100-sxm", "bf16", 1, 1, 1, 0, 0, false, true, false },
};

static void build(struct perf *p, struct model *m, struct hw_profile *hw, struct overhead_model *o,
		  const struct config *c)
{
	struct err e = { { 0 } };
	if (model_load_named(m, c->model, &e) || hw_load_named(hw, c->hw, &e))
		fail_msg("%s", e.msg);
	const struct precision *w = precision_find(c->weights);
	assert_non_null(w);
	perf_init(p, m, hw, w, c->tp, 2);
	perf_set_router_skew(p, c->skew);
	if (c->ep > 1)
		perf_expert_parallel(p, c->ep);
	perf_pipeline(p, c->pp);
	perf_offload(p, c->offload_gib, 1e12);
	if (c->scalars)
		perf_use_scalars(p);
	if (c->ideal)
		perf_ideal(p);
	if (c->overhead) {
		const struct overhead_profile *prof = overhead_profile_find("vllm-v1");
		assert_non_null(prof);
		overhead_model_init(o, prof, hw, true, false, 256, 8192, (double)m->n_layers,
				    (double)m->n_moe_layers, (double)m->vocab);
		p->overhead = o;
	}
}

/* A small deterministic generator (splitmix64): uniform in [0, 1). */
struct rng {
	uint64_t s;
};

static void rng_seed(struct rng *r, uint64_t seed)
{
	r->s = seed;
}

static double rng_uniform(struct rng *r)
{
	uint64_t z = (r->s += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	z ^= z >> 31;
	return (double)(z >> 11) * 0x1.0p-53;
}

/* A random batch: some decodes at random contexts, sometimes prefill
 * chunks; batch sizes drawn from a small set so the memo hits. */
static void random_step(struct perf_step *s, const struct perf *p, struct rng *r)
{
	perf_step_clear(s);
	int64_t dec = (int64_t)(rng_uniform(r) * 6) * 8;   /* 0, 8, ..., 40 decodes */
	for (int64_t i = 0; i < dec; i++)
		perf_step_add(s, p, 1, 1 + (int64_t)(rng_uniform(r) * 9000), rng_uniform(r) < 0.9);
	int chunks = rng_uniform(r) < 0.4 ? 1 + (int)(rng_uniform(r) * 3) : 0;
	for (int i = 0; i < chunks; i++)
		perf_step_add(s, p, 1 + (int64_t)(rng_uniform(r) * 2048),
			      (int64_t)(rng_uniform(r) * 4096), rng_uniform(r) < 0.5);
	if (s->tokens == 0)
		perf_step_add(s, p, 1, 100, true);
}

static void cached_equals_computed(void **state)
{
	(void)state;
	for (size_t k = 0; k < sizeof configs / sizeof *configs; k++) {
		struct model m;
		struct hw_profile hw;
		struct overhead_model o;
		struct perf p, plain;
		build(&p, &m, &hw, &o, &configs[k]);
		plain = p;   /* no cache: computed every time */
		p.cache = stepcache_new(&p);
		struct rng r;
		rng_seed(&r, 1234 + k);
		for (int i = 0; i < 3000; i++) {
			struct perf_step s;
			random_step(&s, &p, &r);
			struct perf_breakdown bc, bp;
			double tc = perf_step_time(&p, &s, &bc), tp = perf_step_time(&plain, &s, &bp);
			/* Bit-identical: the memo stores what steptime computed. */
			if (memcmp(&tc, &tp, sizeof tc) != 0 || memcmp(&bc, &bp, sizeof bc) != 0)
				fail_msg("%s on %s (config %zu), step %d: cached %.17g s, computed %.17g s",
					 configs[k].model, configs[k].hw, k, i, tc, tp);
			/* Asked again (the engine's decode-only re-ask): the same. */
			double again = perf_step_time(&p, &s, NULL);
			assert_memory_equal(&again, &tp, sizeof again);
		}
		struct stepcache_stats st;
		stepcache_stats(p.cache, &st);
		/* 3000 steps of at most a few hundred distinct token counts:
		 * most part lookups hit, and the re-asks all hit. */
		assert_true(st.hits > st.misses);
		assert_true(st.step_hits >= 3000);
		stepcache_free(p.cache);
	}
}

/* A copy of the perf (which its holder may change) never reads the
 * original's cache: perf_ideal on the copy changes its time. */
static void copy_bypasses_cache(void **state)
{
	(void)state;
	struct model m;
	struct hw_profile hw;
	struct overhead_model o;
	struct perf p;
	build(&p, &m, &hw, &o, &configs[1]);
	p.cache = stepcache_new(&p);
	struct perf_step s;
	perf_step_clear(&s);
	for (int i = 0; i < 16; i++)
		perf_step_add(&s, &p, 1, 500, true);
	double t = perf_step_time(&p, &s, NULL);
	struct perf q = p;
	perf_ideal(&q);
	double ideal = perf_step_time(&q, &s, NULL);
	struct perf fresh = q;
	fresh.cache = NULL;
	double want = perf_step_time(&fresh, &s, NULL);
	assert_memory_equal(&ideal, &want, sizeof want);
	assert_true(ideal < t);   /* every efficiency 1: faster, so not the cached value */
	stepcache_free(p.cache);
}

/* More distinct keys than STEPCACHE_MAX_SLOTS allows: the table empties
 * and refills, answers stay exact. */
static void bounded(void **state)
{
	(void)state;
	struct model m;
	struct hw_profile hw;
	struct overhead_model o;
	struct perf p, plain;
	build(&p, &m, &hw, &o, &configs[0]);
	plain = p;
	p.cache = stepcache_new(&p);
	for (int64_t n = 1; n <= STEPCACHE_MAX_SLOTS; n++) {
		struct perf_step s;
		perf_step_clear(&s);
		perf_step_add(&s, &p, n, 0, true);
		double a = perf_step_time(&p, &s, NULL), b = perf_step_time(&plain, &s, NULL);
		assert_memory_equal(&a, &b, sizeof a);
	}
	struct stepcache_stats st;
	stepcache_stats(p.cache, &st);
	assert_true(st.resets >= 1);
	assert_true(st.slots <= STEPCACHE_MAX_SLOTS);
	stepcache_free(p.cache);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(cached_equals_computed),
		cmocka_unit_test(copy_bypasses_cache),
		cmocka_unit_test(bounded),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
