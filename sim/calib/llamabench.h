/*
 * llamabench: llama-bench results (tools/llama-bench, formats.md §4) in
 * CSV (`-o csv`), JSON (`-o json`, an array) or JSONL (`-o jsonl`).
 *
 * One test a row: n_prompt prompt tokens then n_gen generated ones, after
 * n_depth tokens already in the context; avg_ns is the mean time of the
 * test (all of it, prompt and generation), over its repetitions. Columns
 * are found by name (the set varies by build); n_depth and n_ubatch may be
 * absent (older builds) and read as 0 and 512. CSV values may be quoted
 * ("" escapes a quote), as llama-bench quotes them.
 */
#ifndef SERVESIM_LLAMABENCH_H
#define SERVESIM_LLAMABENCH_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "err.h"

struct llamabench_test {
	int line;                     /* CSV/JSONL line, or JSON array index + 1 */
	int64_t n_prompt, n_gen, n_depth, n_ubatch;
	double avg_ns;
	char model_type[128];         /* "llama 8B Q4_K - Medium" */
	char model_filename[256];
};

struct llamabench_list {
	struct llamabench_test *v;
	size_t len, cap;
};

/* Does this CSV header line, or this JSON object, look like llama-bench? */
bool llamabench_sniff_header(const char *first_line);
bool llamabench_sniff_json(const json_t *o);

/* Parses CSV text / a JSON array / JSON lines. Return 0, or -1 with e
 * naming path, line (or array index) and field; *out is the caller's to
 * free with llamabench_free in both cases. */
int llamabench_parse_csv(struct llamabench_list *out, const char *text, const char *path,
			 struct err *e);
int llamabench_parse_json(struct llamabench_list *out, const json_t *array, const char *path,
			  struct err *e);
int llamabench_parse_jsonl(struct llamabench_list *out, const char *text, const char *path,
			   struct err *e);

void llamabench_free(struct llamabench_list *l);

/* The precision name (precision.h) of a llama-bench model_type such as
 * "llama 8B Q4_K - Medium" → "q4_k_m"; NULL when not recognised. */
const char *llamabench_weights(const char *model_type);

#endif
