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

#include "enginecfg.h"
#include "err.h"
#include "hwprofile.h"
#include "model.h"
#include "precision.h"
#include "request.h"
#include "stepmodel.h"
#include "steptime.h"

struct engine_hooks {
	void *ctx;
	/* A request's client sees a token at t (its first token included): or,
	 * when the engine streams in chunks, the request's chunk tokens at once
	 * (one inter-token gap, as vllm bench serve counts a chunk). */
	void (*on_token)(void *ctx, size_t req, int64_t t_ns);
	/* A request finished (or failed: state REQ_FAILED, fail_reason set). */
	void (*on_done)(void *ctx, size_t req, int64_t t_ns);
	/* Disaggregated decode (sim/cluster): a request with remote_kv got its
	 * KV blocks at now; the cluster starts pulling its prompt's KV and
	 * returns when it lands. NULL elsewhere. */
	void *kv_ctx;
	int64_t (*kv_pull)(void *kv_ctx, size_t req, int64_t now);
	/* Optional: on_token for each of n requests, in order, all at t (one
	 * step's tokens at once: the per-token bookkeeping in one pass).
	 * NULL: the engine calls on_token one by one. */
	void (*on_tokens)(void *ctx, const size_t *reqs, size_t n, int64_t t_ns);
	/* Optional: n tokens at t of requests of load stage `stage` and
	 * replica `replica` whose last token came gap_ns before (a
	 * fast-forwarded run of decode steps, engine/vllmff.c): the run's
	 * per-token metrics (the ITL histograms, the time line, tokens per
	 * second) but not the requests' own fields, which the engine brings
	 * up to date (last_token_ns, max_itl_ns) before any other hook sees
	 * them. Called before the step's other tokens, once per stage that
	 * has some. NULL: no fast-forward (the reference mode,
	 * --no-fast-forward). */
	void (*on_tokens_steady)(void *ctx, size_t n, int64_t t_ns, int64_t gap_ns, int32_t stage,
				 int32_t replica);
};

struct engine_setup {
	const struct engine_config *cfg;   /* the scenario's [engine] */
	const char *path;                  /* the scenario's file, for errors */
	const char *weights_at;            /* where [run] weights was set, for errors */
	int64_t seed;                      /* the run's seed (rng_stream) */
	const struct model *model;
	const struct hw_profile *hw;
	/* [engine] cpu_hardware, read by the run for a class with cpu_offload
	 * (llama.cpp puts the layers that do not fit there); else NULL. */
	const struct hw_profile *cpu_hw;
	const struct precision *weights;
	struct reqtab *reqs;
	struct engine_hooks hooks;
	/* P/D prefill side (sim/cluster): a finished request keeps its KV
	 * blocks until release_kv (vLLM's NixlConnector delayed free). */
	bool hold_finished_kv;
};

/* What ends a fast-forward lazy run (engine/vllmff.c lazy_passes): the
 * ring's reach, its last two tokens (the finish and the async skip), a
 * block to hash, a sliding window. (A new block does not: a lazy request
 * gets it at its pass, engine/vllmffcross.c.) */
enum ff_cut { FF_CUT_RING, FF_CUT_LAST, FF_CUT_HASH, FF_CUT_WINDOW, FF_CUTS };
#define FF_LEN_BUCKETS 9               /* run lengths 1 .. 511 passes, by powers of two */

/* What the engine resolved at start-up and counted while running. */
struct engine_stats {
	int64_t max_num_batched_tokens, max_num_seqs, max_model_len, block_size;
	int64_t num_gpu_blocks, num_cpu_blocks;
	double weight_bytes_per_gpu, activation_bytes, non_torch_bytes, kv_bytes_per_block;
	/* vLLM's KV cache groups (vllmpool.c kv_groups): layers a group
	 * holds, the full-attention and sliding-window groups (0 without
	 * vLLM's hybrid manager: one group of every layer) and the sliding
	 * groups' window in tokens (0: none). A pool block is one block of
	 * each full group. */
	int64_t kv_group_layers, kv_full_groups, kv_window_groups, kv_window;
	double peak_kv_usage;
	int64_t preemptions;
	int64_t prefix_queries, prefix_hits, prefix_cpu_hits;   /* tokens */
	int64_t steps;
	double busy_s;
	int64_t ff_tokens;                 /* decode tokens fast-forwarded (vLLM, engine/vllmff.c) */
	/* Its lazy runs (what tests/bench/ff_windows.sh prints): how many
	 * began by the limit that set their length (enum ff_cut) and their
	 * planned passes, runs by length (bucket k: 2^k <= passes < 2^(k+1)),
	 * and the syncs (a pass that visits every running request again)
	 * with the runs they cut short and the planned passes those lost. */
	int64_t ff_runs[FF_CUTS], ff_run_passes[FF_CUTS], ff_len_hist[FF_LEN_BUCKETS];
	int64_t ff_syncs, ff_sync_cut, ff_sync_lost;
	/* vLLM's timing (issue 18): the version's row, async scheduling, and
	 * how steps ran: replaying a CUDA graph (with the tokens padding
	 * added) or eager. */
	const char *vllm_version;          /* static; NULL for other engines */
	bool async_scheduling, timing;
	int64_t graph_steps, eager_steps, padded_tokens, max_capture_size;
	const char *sampler;               /* static: the sampler's path (perf/sampling.h); NULL: none */
	bool sampler_penalties;            /* and whether the penalties ran */
	/* Speculative decoding (specdec.h): proposed and accepted tokens
	 * (vLLM's spec_decode_num_draft_tokens, _num_accepted_tokens), and
	 * the drafter's time in steps (seconds). */
	int64_t spec_draft_tokens, spec_accepted_tokens;
	double spec_draft_s;
	double spec_weight_bytes;          /* the drafter's weights per GPU (specdec_memory) */
	double spec_kv_bytes_per_block;    /* its share of kv_bytes_per_block */
	/* Where step time went, summed over steps (seconds). */
	struct perf_breakdown time;
	/* Where decode tokens' steps went, summed over decode tokens (seconds):
	 * reading weights (dense, experts, LM head, all-reduce), reading KV, the
	 * step overhead, a pipeline's hops and waits, and the extra time of
	 * prefill chunks sharing the step (the step minus what its decodes
	 * alone would take). */
	double itl_weights_s, itl_kv_s, itl_overhead_s, itl_pipeline_s, itl_prefill_s;
	int64_t itl_tokens;
	/* Ollama and llama-server (engine/ollama.c); zero for vLLM. */
	int64_t num_parallel, num_ctx, n_batch, n_ubatch;   /* as resolved */
	bool kv_unified;                   /* one KV buffer shared by the slots */
	int64_t gpu_layers, layers;        /* num_gpu, of n_layers + 1 (the output layer) */
	int64_t kv_tokens;                 /* KV cells allocated up front */
	double kv_bytes;                   /* their bytes (f16) */
	double load_s;                     /* one cold load: weight bytes / load bandwidth */
	int64_t model_loads, rejected;     /* loads; 503s of a full pending queue */
	int64_t truncated_prompts, context_shifts, truncated_outputs;
	int64_t n_decode_total, n_busy_slots_total, n_tokens_max;   /* llama-server's /metrics */
	char cpu_hardware[64];             /* the CPU of a partial offload or CPU-only run */
};

/* The engine's state right now (the gauges of SEED C12). */
struct engine_gauges {
	int64_t running, waiting;
	double kv_usage;               /* fraction in [0, 1] */
	int64_t step_tokens;           /* tokens in the step that started last */
};

struct engine;

/* What a class's results look like, for the writers that show them: vLLM's
 * paged KV pool and metrics, or llama.cpp's fixed slots (Ollama and
 * llama-server both run llama.cpp). */
enum engine_family { ENGINE_FAMILY_VLLM, ENGINE_FAMILY_LLAMACPP };

/* Where a scenario set an engine class's keys, as its config_check reads
 * them (the INI document stays with the scenario). */
struct engine_keys_view {
	const char *section;    /* "engine", or a disaggregated pool's "prefill" / "decode" */
	const char *path;       /* the scenario's file */
	bool inherits;          /* a pool: keys it does not set keep [engine]'s, checked there */
	/* Whether key was set in section; where into out: "path:line",
	 * "--set section.key", or the path when it was not. */
	bool (*at)(const void *ctx, const char *key, char *out, size_t cap);
	const void *ctx;
};

struct engine_class {
	const char *name;                  /* [engine] kind */
	const char *backend;               /* the JSON result's "backend" */
	const char *title;                 /* the text report's engine heading */
	enum engine_family family;
	/* The step model's engine (perf_use_engine): whose kernels it runs. */
	const char *perf_engine;
	/* Runs layers on a CPU profile ([engine] cpu_hardware, engine_setup's
	 * cpu_hw) when they do not fit on the device. */
	bool cpu_offload;
	/* Loads the model on demand and unloads it after keep_alive, with a
	 * bounded queue of requests waiting for a load (Ollama): the reports
	 * show loads and 503 rejections. */
	bool loads_on_demand;
	/* [run] weights when the scenario names none: NULL, the model's stored
	 * precision (vLLM loads the checkpoint); llama.cpp servers run GGUF
	 * files, and Ollama's library tags default to Q4_K_M. */
	const char *default_weights;
	/* The class's own [engine] keys: offsets into struct engine_config
	 * plus config_offset, a NULL section ending them; set to their
	 * defaults by config_default, their places (for errors) recorded by
	 * config_locate, at(…) telling where a key was set. NULL keys: none.
	 * Classes may share one table; it is bound once. */
	const struct inidoc_key *keys;
	size_t config_offset;
	void (*config_default)(struct engine_config *c);
	void (*config_locate)(struct engine_config *c, void (*at)(const void *ctx, const char *key, char *out, size_t cap),
			      const void *ctx);
	/* Checks across the class's own keys once bound, whatever the kind
	 * (c->cls, perhaps another class), and notes which were given:
	 * returns 0, or -1 with e naming where (k) and the key. Run once per
	 * keys table, for [engine] and each pool. NULL: nothing to check. */
	int (*config_check)(struct engine_config *c, const struct engine_keys_view *k, struct err *e);
	struct engine *(*create)(const struct engine_setup *setup, struct err *e);
	void (*destroy)(struct engine *eng);
	/* Takes request req at now; may fail it at once (through on_done). */
	void (*submit)(struct engine *eng, size_t req, int64_t now);
	/* Schedules a step starting at now; returns its duration in ns, or -1
	 * when there is nothing to run. */
	int64_t (*start_step)(struct engine *eng, int64_t now);
	/* Applies the step that started last; now is its end. */
	void (*end_step)(struct engine *eng, int64_t now);
	/* The API server's path before the engine for request r sent at now,
	 * in ns (the engine may queue it behind the server's other work, and
	 * records in r which server and how long it queued); NULL: the
	 * hardware profile's request_overhead_ms. */
	int64_t (*request_path_ns)(struct engine *eng, struct request *r, int64_t now);
	void (*gauges)(const struct engine *eng, struct engine_gauges *out);
	/* gauges' waiting alone, without the rest's work (the run reads it
	 * at every step for the peak); NULL: gauges is asked. */
	int64_t (*waiting)(const struct engine *eng);
	/* Tokens of r's prompt this engine's prefix cache holds now (what a
	 * prefix-aware router asks); NULL: the engine has no shared cache. */
	int64_t (*prefix_hit_tokens)(const struct engine *eng, const struct request *r);
	void (*stats)(const struct engine *eng, struct engine_stats *st);
	/* With hold_finished_kv: frees finished request req's held blocks
	 * (none held: a no-op). NULL: the engine never holds them. */
	void (*release_kv)(struct engine *eng, size_t req);
	/* The step model an engine made from setup times its forward passes
	 * on, by the builder its create runs (explain --batch shows a pass as
	 * a run would time it, step_model_ops): *sm, with sm->dev.overhead
	 * pointing at sm->ovh when the engine charges its own overhead model
	 * there, NULL when it keeps the profile's figures. Returns 0, or -1
	 * with e on a bad key. Every class has one. */
	int (*step_model)(const struct engine_setup *setup, struct step_model *sm, struct err *e);
};

extern const struct engine_class vllm_engine_class;
extern const struct engine_class ollama_engine_class;     /* ollama.c */
extern const struct engine_class llamacpp_engine_class;   /* ollama.c: llama-server */

/* Every class, by [engine] kind, the first the default; NULL-terminated.
 * The INI choices and the error listing them come from here. */
extern const struct engine_class *const engine_classes[];

/* The class called name, or NULL. */
const struct engine_class *engine_class_find(const char *name);

/* "vllm, ollama, llamacpp" into buf (truncated to cap). */
void engine_class_list(char *buf, size_t cap);

#endif
