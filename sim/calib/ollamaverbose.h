/*
 * ollamaverbose: what `ollama run --verbose` prints after each answer
 * (api/types.go Metrics.Summary, Ollama v0.1 to the newest):
 *
 *   total duration:       4.567891234s
 *   load duration:        12.345ms
 *   prompt eval count:    26 token(s)
 *   prompt eval duration: 123.456ms
 *   prompt eval rate:     210.61 tokens/s
 *   eval count:           298 token(s)
 *   eval duration:        3.456s
 *   eval rate:            86.23 tokens/s
 *
 * Durations are Go time.Duration strings (1h2m3.5s, 12.345ms, 500µs,
 * 100ns). Lines are printed only when their value is > 0; one block per
 * answer, the answers' text between blocks. Each block becomes one
 * /api/generate response line (ollamaresp.h reads it), at the line where
 * the block starts.
 */
#ifndef SERVESIM_OLLAMAVERBOSE_H
#define SERVESIM_OLLAMAVERBOSE_H

#include <stdbool.h>

#include "err.h"

/* Does text hold an `ollama run --verbose` summary? */
bool ollamaverbose_sniff(const char *text);

/* The blocks of text as JSON lines of /api/generate responses (a new
 * string; its line numbers are the blocks' own). NULL with e naming path,
 * line and field for a value that does not parse. */
char *ollamaverbose_to_jsonl(const char *text, const char *path, struct err *e);

/* A Go time.Duration string in ns. Returns 0, or -1 when it is not one. */
int ollamaverbose_duration(const char *s, double *ns);

#endif
