/*
 * jsonvals: a file of JSON values as tools write them: one value
 * (pretty-printed or not), JSON lines, or values one after another with
 * any white space between (vllm bench serve --append-result writes "\n"
 * between results; `ollama` pretty-prints). Python's json.dumps writes
 * Infinity, -Infinity and NaN for non-finite floats (SGLang's
 * request_rate = inf): outside strings they read as "inf", "-inf" and
 * null, the way vLLM itself writes an infinite rate.
 */
#ifndef SERVESIM_JSONVALS_H
#define SERVESIM_JSONVALS_H

#include <jansson.h>
#include <stddef.h>

#include "err.h"

struct jsonvals {
	json_t **v;          /* owned */
	int *line;           /* 1-based line where each value starts */
	size_t len, cap;
	/* Bytes jsonvals_parse read, every pass counted (sanitizing, white
	 * space, the parser, the line count): at most about 3 per byte of the
	 * text, whatever the number of values (tests/test_jsonvals.c). */
	size_t work;
};

/* Splits text into its JSON values, in time linear in its length.
 * Returns 0, or -1 with e naming path, line and column of the first value
 * that does not parse; *out is the caller's to free with jsonvals_free in
 * both cases. */
int jsonvals_parse(struct jsonvals *out, const char *text, const char *path, struct err *e);
void jsonvals_free(struct jsonvals *v);

/* text with Python's bare Infinity / -Infinity / NaN replaced (new string,
 * the caller's to free; same line structure). */
char *jsonvals_sanitize(const char *text);

#endif
