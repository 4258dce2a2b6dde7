/*
 * advise: what limits a run and which of the seed's remedies help it, each
 * one simulated (SEED C26, C27, C29-C32).
 *
 * Diagnosis, from one simulated run of the scenario (or, for a real run,
 * the measured numbers beside the replay's simulated breakdown), each
 * finding with its evidence and the claim it comes from:
 *   queue             requests wait for their first step: the time from
 *                     reaching the engine to the first scheduled step is
 *                     more than half of TTFT (C26: num_requests_waiting > 0
 *                     is a capacity problem);
 *   prefill           the prefill itself is more than half of TTFT; with
 *                     a shared system prompt of 30% of the prompt or more,
 *                     it is paid on every request (C26, C29);
 *   prefill-interference  prefill chunks in the decode steps make more than
 *                     30% of the mean ITL, or ITL p99 / p50 > 2 (C27, C20);
 *   kv-pressure       preemptions, or peak KV usage >= 95% (C17);
 *   weight-bandwidth  reading the weights is more than half of a decode
 *                     token's step time (C31, C32);
 *   kv-reads          reading the KV cache is more than 30% of it (C30).
 *
 * Remedies, each a set of --set overrides, proposed when a finding it
 * answers is present: shorten the system prompt (halve random_prefix_len),
 * enable prefix caching (shared prefixes only), raise or lower
 * max_num_batched_tokens, fp8 weights, fp8 KV cache, gpu_memory_utilization
 * 0.95, twice the tensor parallelism, a second replica (half the load per
 * replica), and the shipped datacenter GPU with the next higher memory
 * bandwidth or bf16 compute. Every remedy is simulated with the same
 * replications and seeds as the scenario itself; a remedy the engine
 * refuses at start-up is kept with its reason.
 *
 * The failing metric: with an SLO, the limit furthest past (or nearest to)
 * its bound; without one, TTFT p99 when queue, prefill or KV pressure is
 * found, else ITL p99. gain = (before - after) / before on it (> 0: lower
 * is better); remedies are ranked by gain, ties by the lower $/hour where
 * prices exist, then in proposal order.
 */
#ifndef SERVESIM_ADVISE_H
#define SERVESIM_ADVISE_H

#include <jansson.h>
#include <stdbool.h>

#include "err.h"
#include "inidoc.h"
#include "measure.h"
#include "plan.h"
#include "scenario.h"

#define ADVISE_MAX_FINDINGS 8
#define ADVISE_MAX_REMEDIES 16
#define ADVISE_MAX_SETS 3

struct advise_finding {
	const char *id;              /* "queue", "kv-pressure" … (static) */
	const char *claim;           /* "C26, C29" (static) */
	char detail[512];
};

struct advise_remedy {
	const char *name;            /* "fp8 KV cache" (static) */
	char why[256];
	char set[ADVISE_MAX_SETS][INI_VALUE_MAX + 64];   /* section.key=value */
	int n_set;
	struct measure_summary after;
	double usd_per_hour;         /* NaN without a price */
	double gain;
	char *error;                 /* the remedy cannot run (owned) */
};

/* A real run's measured numbers (advise --result): what it measured
 * replaces the simulated "before" on the keys it has. */
struct advise_measured {
	bool have;
	double v[MEAS_N];            /* NaN where the run did not measure */
	double waiting;              /* vllm:num_requests_waiting from a scrape; NaN without */
};

struct advise {
	/* In. */
	struct scenario sc;          /* the run to advise on */
	struct plan_slo slo;         /* may be empty */
	int replications, jobs;
	struct progress *progress;   /* simulations done, on stderr (progress.h); NULL: none */
	struct advise_measured meas;
	/* Out. */
	struct measure_summary before;
	double usd_per_hour;         /* the scenario's own, NaN without a price */
	int metric;                  /* enum measure_id: the failing metric */
	struct advise_finding find[ADVISE_MAX_FINDINGS];
	int n_find;
	struct advise_remedy rem[ADVISE_MAX_REMEDIES];
	int n_rem;
	int order[ADVISE_MAX_REMEDIES];   /* remedies best first */
};

/* Runs the scenario, diagnoses it, proposes and simulates the remedies and
 * ranks them. Returns 0, or -1 with e when the scenario itself cannot run. */
int advise_run(struct advise *a, struct err *e);
void advise_free(struct advise *a);

/* {"kind": "advise", "scenario", "slo", "metric", "before",
 * "diagnosis": [{id, claim, detail}…], "remedies": [{remedy, why, set,
 * before, after, gain, usd_per_hour, error}…] best first}. Cannot fail. */
json_t *advise_json(const struct advise *a);

/* The text for people, from the JSON. */
void advise_text(FILE *f, json_t *doc);

#endif
