/*
 * plan: the highest load a configuration sustains within an SLO, what it
 * takes to serve a target rate, what that costs, and what binds it.
 *
 * SLO: limits on latency statistics over a run, e.g. `ttft_p99_ms=2000,
 * itl_p99_ms=50` (any of ttft, tpot, itl, e2el with mean, p50, p90, p95 or
 * p99, in _ms or _s). A scenario's [slo] section (vLLM's per-request
 * goodput thresholds) reads as p99 limits: 99% of requests within each.
 *
 * Search (per candidate configuration, in lock-step rounds so that every
 * round's simulations run in parallel and the answer does not depend on
 * the number of threads):
 *   - a load passes when, for every SLO limit, the one-sided upper
 *     `confidence` bound of the mean over R replications,
 *     mean + t_{confidence, R-1} × sd / sqrt(R), is within the limit (with
 *     R = 1: the one value), and at least one request completed;
 *   - replication r uses seed + seed_offset + r at every load (seed_offset
 *     is 0 but for tune's confirmation; common random numbers:
 *     the same arrival pattern, compressed or stretched), so pass/fail is
 *     close to monotone in the load;
 *   - a rate search sends at least rate × duration_s requests at each
 *     rate (default 60 s), so that a run above capacity lasts long enough
 *     for its queue to show in the percentiles (a 200-request run at 400
 *     req/s ends before it does);
 *   - bracketing: from the scenario's rate (or 1 req/s), multiply by step
 *     (default 2) while it passes (up to max_rate), divide while it fails
 *     (down to 0.001 req/s);
 *   - then bisection until the bracket [pass, fail) is within `tolerance`
 *     of its upper end (concurrency: until it is one request wide).
 * The answer is the bracket's lower end: the highest load seen to pass.
 *
 * Binding limit, read at the bracket's upper end (the lowest load seen to
 * fail, where the SLO breaks), first match wins:
 *   1. kv-pool: peak KV usage >= 0.95 or any preemption;
 *   2. prefill-interference: the SLO limit furthest past its bound is on
 *      ITL or TPOT, and ITL p99 (its upper bound, as the pass rule reads it)
 *      / ITL p50 > 2 (decode steps stretched by the prefill chunks sharing
 *      them, SEED C20-C21);
 *   3. otherwise the largest share of step time by resource (measure.h):
 *      compute (prefill attention and matmuls above the weight-read floor),
 *      bandwidth (weight reads and KV reads), step-overhead or interconnect.
 */
#ifndef SERVESIM_PLAN_H
#define SERVESIM_PLAN_H

#include <stdbool.h>
#include <stddef.h>

#include "err.h"
#include "measure.h"
#include "scenario.h"

#define PLAN_MAX_SLO 8

struct plan_slo {
	int n;
	int metric[PLAN_MAX_SLO];    /* enum measure_id */
	double limit[PLAN_MAX_SLO];  /* in the metric's unit (ms) */
};

/* Parses "METRIC=VALUE,…" (--slo). Returns 0, or -1 with e naming --slo
 * and what was expected: an unknown metric or statistic, a unit other than
 * ms or s, a value that is not a number > 0, an empty or repeated limit. */
int plan_slo_parse(struct plan_slo *slo, const char *spec, struct err *e);

/* The scenario's [slo] as p99 limits. Returns how many it has (0: none). */
int plan_slo_from_scenario(struct plan_slo *slo, const struct scenario *sc);

/* "ttft_p99_ms <= 2000, itl_p99_ms <= 50" in out. Cannot fail. */
void plan_slo_text(const struct plan_slo *slo, char *out, size_t cap);

enum plan_by { PLAN_BY_RATE, PLAN_BY_CONCURRENCY };

struct plan_opts {
	int by;                      /* enum plan_by */
	int replications;            /* R >= 1 */
	double confidence;           /* of the one-sided bound, in [0.5, 1) */
	double tolerance;            /* final bracket width / its upper end (rate) */
	double max_rate;             /* req/s (rate) or requests (concurrency) */
	int max_evals;               /* per candidate */
	double duration_s;           /* rate search: each load sends at least load × this
					many requests (0: the scenario's num_prompts) */
	double step;                 /* bracketing: ×step while the load passes, ÷step while it
					fails (default 2; tune's confirmation starts near the
					answer and steps by 1 + 4 × tolerance) */
	int confirm_blocks;          /* tuning (tune.h): fresh seed blocks the chosen setting
					is searched again on (default 3; 0: none) */
	int jobs;
	struct progress *progress;   /* points done, on stderr (progress.h); NULL: none */
};

/* Defaults: by rate, 5 replications, 0.95, 2%, 1000 req/s, 40 evaluations,
 * 60 s of arrivals at least, step 2, 3 confirmation blocks, all
 * processors. */
void plan_opts_default(struct plan_opts *o);

enum plan_status {
	PLAN_OK,                     /* bracketed: lo passes, hi fails */
	PLAN_NOT_REACHED,            /* passes even at max_rate */
	PLAN_UNREACHABLE,            /* fails even at the lowest load */
	PLAN_INFEASIBLE,             /* the configuration cannot run */
};

extern const char *const plan_status_names[];

/* One load tried: the load, the worst SLO ratio (bound / limit) and the
 * verdict. */
struct plan_eval {
	double load;
	double worst;
	bool pass;
};

/* A configuration to search, and what the search found. */
struct plan_cand {
	size_t index;                /* in the whole list (for shards) */
	struct scenario sc;          /* the configuration; its load is searched */
	char weights[16];            /* the weight precision, resolved ("bf16" …) */
	double price_usd_per_gpu_hour;  /* NaN without cost */
	int64_t seed_offset;         /* replication r runs seed + seed_offset + r (default 0) */
	/* Out. */
	int status;                  /* enum plan_status */
	double lo, hi;               /* highest passing, lowest failing load; NaN when none */
	struct measure_summary at_lo, at_hi;
	struct plan_eval *evals;     /* owned */
	size_t n_evals, cap_evals;
	char *error;                 /* PLAN_INFEASIBLE: the run's error (owned) */
	int64_t sim_replicas;        /* --simulate-replicas (planreplicas.h): the replicas the
				      * simulated cluster needs for the target; 0: not simulated */
	/* Search state. */
	int phase;
	double next;
};

/* Fills *c for configuration sc. With `cost`, loads the hardware profile
 * and takes its price: a profile without one is an error naming `origin`
 * (the flag or key it came from) and how to go on without cost. Returns 0
 * or -1 with e. */
int plan_cand_init(struct plan_cand *c, size_t index, const struct scenario *sc, bool cost,
		   const char *origin, struct err *e);
void plan_cand_free(struct plan_cand *c);

/* What an hour of one GPU serving costs (--cost). Cloud: the profile's
 * [price] price_per_hour_usd. Own: the purchase price spread over `years`
 * of hours, divided by the utilization (an owned GPU costs its hours
 * whether it serves or not, and serves only `utilization` of them), plus
 * the power it draws while serving, board_power_w + server_overhead_w at
 * usd_per_kwh ([ownership]; idle draw is not counted). Either way, $ per
 * 1M tokens = this ÷ tokens per serving hour. */
struct plan_cost {
	bool own;
	double years;                /* > 0 */
	double usd_per_kwh;          /* >= 0 */
	double utilization;          /* (0, 1] */
};

/* The cloud defaults, and --cost own's: 3 years, 0.12 $/kWh, 0.6. */
void plan_cost_default(struct plan_cost *pc);

/* Sets c->price_usd_per_gpu_hour by pc from c's hardware profile. A
 * profile without the section pc needs is an error naming origin and what
 * to do. Returns 0 or -1 with e. */
int plan_cand_price(struct plan_cand *c, const struct plan_cost *pc, const char *origin, struct err *e);

/* Whether sc's load can be searched: an open-loop workload, without a
 * trace, stages or closed-loop users. Returns 0 or -1 with e. */
int plan_check_searchable(const struct scenario *sc, struct err *e);

/* Searches every candidate (see the header comment). Cannot fail: a
 * candidate that cannot run ends PLAN_INFEASIBLE with its error. */
void plan_search(struct plan_cand *c, size_t n, const struct plan_slo *slo,
		 const struct plan_opts *o);

/* The binding limit of a searched candidate ("kv-pool", "compute", …;
 * static) and one line of evidence in detail. Cannot fail. */
const char *plan_limit(const struct plan_cand *c, const struct plan_slo *slo, const struct plan_opts *o,
		       char *detail, size_t cap);

/* The load a candidate sustains as a request rate (req/s): lo for a rate
 * search, the measured throughput at lo for a concurrency search; 0 when
 * none passes. */
double plan_sustained_rate(const struct plan_cand *c, const struct plan_opts *o);

/* Output tokens per second of one replica at its limit: the sustained rate
 * × the output tokens per completed request of the run there; NaN when no
 * load passes. */
double plan_tokens_per_s(const struct plan_cand *c, const struct plan_opts *o);

/* The SLO's worst ratio over a load's replications: the largest upper
 * `conf` bound / limit (1 = exactly at a limit; <= 1 passes), +inf when no
 * request completed; which gets the limit's index. Cannot fail. */
double plan_worst_ratio(const struct measure_summary *s, const struct plan_slo *slo, double conf, int *which);

/* How many requests a run at `load` sends (the scenario's num_prompts, or
 * more with duration_s). */
int64_t plan_requests_at(const struct plan_cand *c, const struct plan_opts *o, double load);

#endif
