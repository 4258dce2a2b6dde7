/*
 * ollamaresp: Ollama /api/generate and /api/chat responses (api/types.go
 * GenerateResponse, ChatResponse: the same embedded Metrics), as JSON
 * lines, one pretty-printed object or several (jsonvals.h), as formats.md
 * §4 and SEED C10 describe them.
 *
 * Durations are integer nanoseconds; Ollama leaves zero values out
 * (omitempty), so a missing key reads as 0. Lines with "done": false
 * (streaming chunks before the last) carry no metrics and are skipped, as
 * are blank lines. prompt_eval_count includes prompt-cache hits in the
 * newest (llama-server) runner while prompt_eval_duration covers only the
 * computed tokens: a reader cannot tell them apart, and says so.
 */
#ifndef SERVESIM_OLLAMARESP_H
#define SERVESIM_OLLAMARESP_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "err.h"

struct ollamaresp {
	int line;                           /* 1-based line in the file */
	char model[128];                    /* "llama3.1:8b"; "" when absent */
	int64_t prompt_eval_count, eval_count;
	int64_t prompt_eval_duration_ns, eval_duration_ns;
	int64_t total_duration_ns, load_duration_ns;
};

struct ollamaresp_list {
	struct ollamaresp *v;
	size_t len, cap;
};

/* Does this JSON object look like an /api/generate response? */
bool ollamaresp_sniff(const json_t *o);

/* Parses text (the whole file, NUL-terminated) as JSON lines. Returns 0,
 * or -1 with e naming path, line and key; *out is the caller's to free
 * with ollamaresp_free in both cases. A file whose lines all lack metrics
 * is an error. */
int ollamaresp_parse(struct ollamaresp_list *out, const char *text, const char *path,
		     struct err *e);

void ollamaresp_free(struct ollamaresp_list *l);

#endif
