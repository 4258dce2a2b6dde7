/*
 * engine: a serving engine, chosen by name from a table of classes (the
 * Linux sched_class pattern). The run drives it with three calls:
 * submit a request, start a step (which returns its duration), end the step
 * (which emits tokens through the hooks). An engine never reads the clock
 * itself; the run passes `now`.
 */
#ifndef SERVESIM_ENGINE_H
#define SERVESIM_ENGINE_H

#include <stdbool.h>
#include <stdint.h>

#include "err.h"
#include "hwprofile.h"
#include "model.h"
#include "precision.h"
#include "request.h"
#include "scenario.h"
#include "steptime.h"

struct engine_hooks {
	void *ctx;
	/* A request produced a token at t (its first token included). */
	void (*on_token)(void *ctx, size_t req, int64_t t_ns);
	/* A request finished (or failed: state REQ_FAILED, fail_reason set). */
	void (*on_done)(void *ctx, size_t req, int64_t t_ns);
};

struct engine_setup {
	const struct scenario *sc;
	const struct model *model;
	const struct hw_profile *hw;
	const struct precision *weights;
	struct reqtab *reqs;
	struct engine_hooks hooks;
};

/* What the engine resolved at start-up and counted while running. */
struct engine_stats {
	int64_t max_num_batched_tokens, max_num_seqs, max_model_len, block_size;
	int64_t num_gpu_blocks, num_cpu_blocks;
	double weight_bytes_per_gpu, activation_bytes, non_torch_bytes, kv_bytes_per_block;
	double peak_kv_usage;
	int64_t preemptions;
	int64_t prefix_queries, prefix_hits, prefix_cpu_hits;   /* tokens */
	int64_t steps;
	double busy_s;
	/* Where step time went, summed over steps (seconds). */
	struct perf_breakdown time;
};

/* The engine's state right now (the gauges of SEED C12). */
struct engine_gauges {
	int64_t running, waiting;
	double kv_usage;               /* fraction in [0, 1] */
	int64_t step_tokens;           /* tokens in the step that started last */
};

struct engine;

struct engine_class {
	const char *name;
	struct engine *(*create)(const struct engine_setup *setup, struct err *e);
	void (*destroy)(struct engine *eng);
	/* Takes request req at now; may fail it at once (through on_done). */
	void (*submit)(struct engine *eng, size_t req, int64_t now);
	/* Schedules a step starting at now; returns its duration in ns, or -1
	 * when there is nothing to run. */
	int64_t (*start_step)(struct engine *eng, int64_t now);
	/* Applies the step that started last; now is its end. */
	void (*end_step)(struct engine *eng, int64_t now);
	void (*gauges)(const struct engine *eng, struct engine_gauges *out);
	void (*stats)(const struct engine *eng, struct engine_stats *st);
};

extern const struct engine_class vllm_engine_class;

/* The class for a scenario's [engine] kind. */
const struct engine_class *engine_class_for(int kind);

#endif
