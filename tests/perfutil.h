/*
 * perfutil: what the step-model tests share (test_steptime.c,
 * test_backend.c): Llama-3.1-8B, Mixtral-8x7B and the H100 SXM profile,
 * loaded once by setup(); init() builds a perf for them; step() times one
 * step of identical sequences. Header-only, static: each test is its own
 * executable.
 */
#ifndef SERVESIM_PERFUTIL_H
#define SERVESIM_PERFUTIL_H

#include "testutil.h"

#include "hwprofile.h"
#include "model.h"
#include "precision.h"
#include "steptime.h"

static struct model llama, mixtral;
static struct hw_profile h100;

static int setup(void **state)
{
	(void)state;
	struct err e = { { 0 } };
	if (model_load_named(&llama, "llama-3.1-8b", &e) ||
	    model_load_named(&mixtral, "mixtral-8x7b", &e) || hw_load_named(&h100, "h100-sxm", &e)) {
		fprintf(stderr, "setup: %s\n", e.msg);
		return -1;
	}
	return 0;
}

static void init(struct perf *p, const struct model *m, const char *weights, int tp, bool ideal)
{
	const struct precision *w = precision_find(weights);
	assert_non_null(w);
	perf_init(p, m, &h100, w, tp, 2);
	if (ideal)
		perf_ideal(p);
}

/* One step of `seqs` sequences each adding n tokens after ctx. */
static double step(const struct perf *p, int seqs, int64_t n, int64_t ctx, struct perf_breakdown *b)
{
	struct perf_step s;
	perf_step_clear(&s);
	for (int i = 0; i < seqs; i++)
		perf_step_add(&s, p, n, ctx, true);
	return perf_step_time(p, &s, b);
}

#endif
