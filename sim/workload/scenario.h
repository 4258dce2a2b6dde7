/*
 * scenario: one simulated experiment, read from an INI file (plus --set
 * overrides), or the built-in default.
 *
 * Key names follow `vllm bench serve` and `vllm serve` flags, underscored,
 * wherever vLLM has the concept; defaults are vLLM's. Keys whose default
 * depends on the hardware or the model (max_num_batched_tokens,
 * max_num_seqs, max_model_len) stay "unset" (-1) here and are resolved by
 * the engine, as vLLM resolves them at start-up. The README lists every key.
 */
#ifndef SERVESIM_SCENARIO_H
#define SERVESIM_SCENARIO_H

#include <stdbool.h>
#include <stdint.h>

#include "clustercfg.h"
#include "enginecfg.h"
#include "err.h"
#include "inidoc.h"

enum arrival_kind { ARRIVAL_POISSON, ARRIVAL_GAMMA, ARRIVAL_CONSTANT };
enum ramp_kind { RAMP_NONE, RAMP_LINEAR, RAMP_EXPONENTIAL };
enum len_dist { LEN_UNIFORM, LEN_NORMAL, LEN_LOGNORMAL, LEN_EMPIRICAL };

#define SCENARIO_MAX_STAGES 32
#define SCENARIO_MAX_POOL_KEYS 16

/* One [prefill] or [decode] entry (the pools: clustercfg.h's enum
 * pool_role): it overrides an [engine] key or run's hardware for that
 * pool's replicas. */
struct pool_override {
	char key[INI_NAME_MAX];
	char value[INI_VALUE_MAX];
	int line;                          /* 0 for --set */
};

/* The most requests one run makes (num_prompts, the stages' sum): each
 * holds a record of ~250 bytes and its latency samples, so 10^7 stay
 * within a few GB. Checked up front; not a vLLM limit. */
#define SCENARIO_MAX_PROMPTS 10000000

struct stage {
	double rate;          /* requests per second */
	double duration_s;
};

/* The most priority classes workload.priorities names. */
#define SCENARIO_MAX_PRIORITIES 16

struct priority_class {   /* one entry of workload.priorities */
	int32_t priority;     /* vLLM's request priority (lower first) */
	double weight;        /* its share of the conversations, relative */
};

struct len_spec {
	int dist;             /* enum len_dist */
	int64_t mean;         /* random_input_len / random_output_len */
	double stddev;        /* normal, lognormal */
	char file[INI_VALUE_MAX];  /* empirical: one length per line */
};

struct scenario {
	char path[INI_VALUE_MAX];   /* the file, or "built-in default" */

	/* [run] */
	char model[INI_VALUE_MAX];
	char hardware[INI_VALUE_MAX];
	int64_t seed;
	char weights[INI_VALUE_MAX];       /* "" = the model's stored precision */
	double timeseries_interval_s;

	/* [workload] */
	int64_t num_prompts;
	bool num_prompts_given;            /* set explicitly (caps a trace) */
	double request_rate;               /* INFINITY = all at t=0 */
	double burstiness;
	int arrival;                       /* enum arrival_kind */
	int64_t max_concurrency;           /* 0 = unlimited */
	int ramp_up_strategy;              /* enum ramp_kind (--ramp-up-strategy) */
	double ramp_up_start_rps, ramp_up_end_rps;
	char stages_text[INI_VALUE_MAX];
	struct stage stages[SCENARIO_MAX_STAGES];
	int n_stages;                      /* 0 = one stage of num_prompts */
	char priorities_text[INI_VALUE_MAX];  /* PRIORITY:WEIGHT, … (synthetic workloads) */
	struct priority_class priorities[SCENARIO_MAX_PRIORITIES];
	int n_priorities;                  /* 0 = every request priority 0 */
	struct len_spec input, output;
	double random_range_ratio;
	int64_t random_prefix_len;
	int64_t prefix_groups;
	int64_t users;                     /* closed loop when > 0 */
	double think_time_s;
	int64_t turns;                     /* requests per conversation */
	char trace[INI_VALUE_MAX];
	char trace_format[INI_VALUE_MAX];  /* "auto" or a format of trace.h */
	double trace_time_scale;
	int64_t trace_result;              /* which result of a file of several (1-based); 0: the file is one */

	/* [engine] (engine/enginecfg.h) */
	struct engine_config engine;

	/* Where random_input_len was set ("path:line" or "--set …"), for
	 * errors found once the model is known. */
	char input_len_at[INI_VALUE_MAX + 32];
	/* The same for keys checked against the model and the device. */
	char weights_at[INI_VALUE_MAX + 32];

	/* [cluster] (sim/cluster/clustercfg.h owns its keys) */
	struct cluster_config cluster;
	/* [prefill], [decode]: the entries as written, applied by scenario_pool */
	struct pool_override pool[N_POOLS][SCENARIO_MAX_POOL_KEYS];
	int n_pool[N_POOLS];

	/* [slo]: goodput thresholds in ms (0 = not set), as --goodput */
	double slo_ttft_ms, slo_tpot_ms, slo_e2el_ms;
};

/* Fills *sc with the built-in default: Llama-3.1-8B on H100 SXM, 200
 * prompts at 4 req/s, Poisson, vLLM's random dataset (1024 in, 128 out),
 * i.e. `vllm bench serve --num-prompts 200 --request-rate 4` (SEED C13). */
void scenario_default(struct scenario *sc);

/* The keys of [run], [workload], [engine] and [slo], the engine classes'
 * own [engine] keys included ([cluster] is clustercfg_keys'), offsets
 * relative to struct scenario, into out (SCENARIO_MAX_KEYS of them at
 * most), for the generated key reference (sim/report/keydoc.c). Returns
 * their count. Cannot fail. */
enum { SCENARIO_MAX_KEYS = 128 };
size_t scenario_keys(struct inidoc_key *out);

/* Loads path (or, when path is NULL, starts from the default) and applies
 * the overrides in *overrides (entries of a doc built with
 * inidoc_add_override; may be NULL). Returns 0 or -1 with e naming the file,
 * line and key (or the --set). */
int scenario_load(struct scenario *sc, const char *path, struct inidoc *overrides,
		  struct err *e);

/* The scenario one pool's replicas run: base with that pool's [prefill]
 * or [decode] overrides applied. Returns 0, or -1 with e naming the file,
 * line and [pool] key (scenario_load has already tried every override,
 * so a loaded scenario's pools do not fail). */
int scenario_pool(const struct scenario *base, int pool, struct scenario *out, struct err *e);

/* GPUs one server replica of the scenario uses: tensor × pipeline parallel. */
static inline int64_t scenario_gpus(const struct scenario *sc)
{
	return enginecfg_gpus(&sc->engine);
}

#endif
