/*
 * llamacpp_int.h: what the llama.cpp server engine's files share (not a
 * public interface: the classes are engine.h's). llamaserver.c is the
 * engine (slots, queue, prompt cache, steps), llamaresolve.c its start-up
 * (options, defaults, layer placement), ollama.c what Ollama adds on top
 * (its defaults, cold loads, the pending queue, prompt truncation).
 */
#ifndef SERVESIM_LLAMACPP_INT_H
#define SERVESIM_LLAMACPP_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "engine.h"
#include "engine_int.h"
#include "num.h"
#include "stepmodel.h"

enum slot_state { SLOT_IDLE, SLOT_PROMPT, SLOT_GENERATING };
enum model_state { MODEL_UNLOADED, MODEL_LOADING, MODEL_LOADED };

/* What tells Ollama from llama-server. */
struct flavor {
	const char *name;
	bool cold_loads;          /* loads on demand, unloads after keep_alive */
	bool truncates;           /* Ollama truncates a long prompt (truncate = true) */
	bool context_shift;       /* Ollama starts llama-server with --context-shift */
	int64_t n_batch, n_ubatch;
	int64_t num_parallel;     /* the default */
	bool unified_by_default;  /* llama-server -np auto: one KV buffer for all slots */
};

extern const struct flavor ollama_flavor;     /* ollama.c */
extern const struct flavor llamacpp_flavor;   /* llamaserver.c */

/* Ollama's num_keep (4) plus the BOS token the tokenizer adds. */
#define OLLAMA_NUM_KEEP 5
/* llama-server --slot-prompt-similarity. */
#define SLOT_PROMPT_SIMILARITY 0.10
/* GPU memory llama.cpp's compute buffers and the driver take (Ollama's
 * estimate reserves a graph buffer of this order for 512-token batches). */
#define GPU_RESERVE_BYTES (0.5 * GIB)
/* macOS lets the GPU wire about 75% of unified memory by default (Metal's
 * recommendedMaxWorkingSetSize), which Ollama reports as VRAM. */
#define APPLE_GPU_SHARE 0.75

struct slot {
	int state;                /* enum slot_state */
	size_t req;               /* the request being served */
	int64_t n_tokens;         /* tokens whose KV the slot holds */
	int64_t n_prompt;         /* prompt tokens to process (after truncation) */
	bool altered;             /* truncated or shifted: only the first num_keep tokens stay in place */
	/* Prompt cache: the first cache_len tokens of the sequence of the
	 * request it served last are in the KV (valid when has_cache); that
	 * request's identity is copied (a lean run reuses its record). */
	bool has_cache;
	struct request cache_id;  /* its shared/own keys and block512 ids only */
	int64_t cache_len;
	int64_t last_used_ns;     /* for least-recently-used choice; -1 = never */
};

/* One sequence's part of a step's batch. */
struct entry {
	int slot;
	int64_t n, ctx;           /* tokens, and tokens already in its KV */
	bool decode;
	bool samples;             /* its last token produces a sampled token */
};

struct engine {
	struct engine_setup setup;
	const struct flavor *fl;
	struct step_model sm;             /* a pass on the device, or on it and the CPU (num_gpu) */
	const struct hw_profile *cpu_hw;  /* the CPU part's profile (the setup's), NULL: none */
	bool on_cpu_only;                 /* the device is a CPU: one perf, all layers */
	int64_t n_parallel, n_ctx, n_batch, n_ubatch, max_queue, n_keep;
	bool unified, cache_prompt, truncate, context_shift;
	int64_t keep_alive_ns;            /* INT64_MAX = never unload */
	int64_t load_ns;
	int model;                        /* enum model_state */
	int64_t load_end_ns, idle_since_ns;
	int64_t n_pending;                /* waiting for the load besides the one that started it */
	struct slot *slots;
	size_t *queue;                    /* FIFO of request indices: [q_head, q_len) */
	size_t q_head, q_len, q_cap;
	struct entry *batch;
	size_t n_batch_entries, cap_batch;
	bool step_is_load;
	int64_t step_tokens;
	size_t *finished;
	size_t n_finished, cap_finished;
	struct engine_stats st;
};

static inline struct request *req(struct engine *g, size_t i)
{
	return engine_req(&g->setup, i);
}

static inline int64_t min64(int64_t a, int64_t b)
{
	return a < b ? a : b;
}

static inline int64_t max64(int64_t a, int64_t b)
{
	return a > b ? a : b;
}

/* llamaserver.c */
struct engine *llama_create(const struct engine_setup *setup, const struct flavor *fl, struct err *e);
void llama_destroy(struct engine *g);
/* The step model llama_create would build from setup (llama_resolve:
 * the options and where the layers go), without slots or queue
 * (engine_class.step_model). */
int llama_step_model(const struct engine_setup *setup, const struct flavor *fl, struct step_model *sm, struct err *e);
void llama_submit(struct engine *g, size_t idx, int64_t now);
int64_t llama_start_step(struct engine *g, int64_t now);
void llama_end_step(struct engine *g, int64_t now);
void llama_gauges(const struct engine *g, struct engine_gauges *out);
void llama_stats(const struct engine *g, struct engine_stats *st);
int64_t llama_busy_slots(const struct engine *g);
size_t llama_queue_waiting(const struct engine *g);

/* The classes' [engine] keys (engine_class.keys: llamacfg.h). */
void llama_config_default(struct engine_config *c);
void llama_config_locate(struct engine_config *c,
			 void (*at)(const void *ctx, const char *key, char *out, size_t cap),
			 const void *ctx);
/* [engine] cpu_hardware, when set: a CPU profile that loads, whatever the
 * kind (engine_class.config_check). */
int llama_config_check(struct engine_config *c, const struct engine_keys_view *k, struct err *e);

/* llamaresolve.c: the options, defaults and memory of g's setup. Returns 0
 * or -1 with e naming the key. */
int llama_resolve(struct engine *g, struct err *e);

/* What both classes' engine_class rows hold alike: one llama-server
 * implementation, its keys and its kernels. */
#define LLAMA_CLASS_COMMON                                                                     \
	.family = ENGINE_FAMILY_LLAMACPP, .perf_engine = "llama.cpp", .cpu_offload = true,     \
	.keys = llamacfg_keys, .config_offset = offsetof(struct engine_config, llama),         \
	.config_default = llama_config_default, .config_locate = llama_config_locate,          \
	.config_check = llama_config_check,                                                     \
	.destroy = llama_destroy, .submit = llama_submit, .start_step = llama_start_step,      \
	.end_step = llama_end_step, .gauges = llama_gauges, .stats = llama_stats

/* ollama.c */
/* Ollama's default num_ctx on hw (gpu_bytes of it usable), capped at the
 * model's training context train (0: unknown). */
int64_t ollama_default_ctx(const struct hw_profile *hw, double gpu_bytes, int64_t train);
/* A prompt of *n tokens longer than the context: Ollama's truncation.
 * Returns 0 with *n cut, or -1 after failing request idx. */
int ollama_truncate(struct engine *g, size_t idx, int64_t now, int64_t *n);
/* The scheduler's side of a new request: unloads after keep_alive, starts
 * a cold load, queues behind one. Returns 0, or -1 after failing request
 * idx with the 503 of a full pending queue. */
int ollama_schedule(struct engine *g, size_t idx, int64_t now);

#endif
