/*
 * llamacfg: the [engine] keys of the llama.cpp server classes (kind =
 * ollama, kind = llamacpp: llamaserver.c, ollama.c), declared here by their
 * owner with their defaults. The scenario binds them next to its own
 * [engine] keys through the classes' table (engine.h: keys,
 * config_offset), so it never names one of them.
 *
 * -1 = the engine's default, resolved with the model and the device.
 */
#ifndef SERVESIM_LLAMACFG_H
#define SERVESIM_LLAMACFG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "inidoc.h"

struct llama_config {
	int64_t num_parallel;              /* slots: Ollama 1, llama-server 4 */
	int64_t num_ctx;                   /* tokens per slot */
	int64_t max_queue;                 /* OLLAMA_MAX_QUEUE: requests waiting on a load */
	int64_t n_batch, n_ubatch;         /* logical and physical batch, tokens */
	double keep_alive_s;               /* Ollama: idle seconds before unloading; inf = never */
	double load_bandwidth_gb_s;        /* reading the weights at a cold load */
	int64_t num_gpu;                   /* layers on the device; -1 = as many as fit */
	char cpu_hardware[INI_VALUE_MAX];  /* where the other layers run */
	bool cache_prompt;                 /* llama-server's per-slot prompt cache */
	bool truncate;                     /* Ollama: truncate a prompt longer than num_ctx */
	/* Where num_ctx, num_gpu and cpu_hardware were set, for the errors
	 * found with the model and the device. */
	char num_ctx_at[INI_VALUE_MAX + 32], num_gpu_at[INI_VALUE_MAX + 32];
	char cpu_hardware_at[INI_VALUE_MAX + 32];
};

/* The keys, offsets into struct llama_config; a NULL section ends them. */
extern const struct inidoc_key llamacfg_keys[];

void llamacfg_default(struct llama_config *c);

/* Records where num_ctx, num_gpu and cpu_hardware were set (at gives
 * "path:line", "--set …" or the file), after binding. */
void llamacfg_locate(struct llama_config *c,
		     void (*at)(const void *ctx, const char *key, char *out, size_t cap),
		     const void *ctx);

#endif
