/*
 * ollamafields: Ollama's per-request fields (api/types.go Metrics) from a
 * request record, and their means over a run's completed requests, summed
 * as requests finish (so a lean run, which keeps no record, reports them).
 *
 * The same definitions for every engine (load 0 for vLLM). prompt_eval_count
 * counts cached tokens too (Ollama on llama-server: cache_n + prompt_n),
 * prompt_eval_duration only the slot's prompt steps; eval_* run from the
 * first token to the last (llama-server's predicted_n, predicted_ms).
 */
#ifndef SERVESIM_OLLAMAFIELDS_H
#define SERVESIM_OLLAMAFIELDS_H

#include <stdint.h>

#include "request.h"

struct ollama_fields {   /* ns */
	int64_t total_ns, load_ns, prompt_eval_count, prompt_eval_ns, eval_count, eval_ns;
};

/* Means of the Ollama fields and C10 rates over completed requests: sums
 * (ollama_means_add, in finish order) until ollama_means_finish. */
struct ollama_means {
	double total_ms, load_ms, prompt_eval_count, prompt_eval_ms, eval_count, eval_ms;
	double prefill_tok_s, decode_tok_s;
	int64_t n, n_prefill, n_decode;
	/* llama-server's /metrics counters */
	int64_t prompt_tokens, predicted_tokens;
	double prompt_s, predicted_s;
};

void ollama_fields_of(const struct request *r, struct ollama_fields *o);

/* SEED C10: count / duration × 1e9; 0 when the duration is 0. */
double ollama_c10_rate(int64_t count, int64_t ns);

/* Adds completed request r to the sums. */
void ollama_means_add(struct ollama_means *m, const struct request *r);

/* The sums into means (the counters stay totals). */
void ollama_means_finish(struct ollama_means *m);

#endif
