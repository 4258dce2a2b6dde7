/*
 * promscrape: Prometheus exposition text (a scrape of an HTTP /metrics
 * page), reduced to its samples: `name{label="value",…} value [timestamp]`
 * lines; `#` lines (HELP, TYPE, comments) and blank lines are skipped.
 * Label values are kept as written and unescaped (\\, \", \n) when read
 * with promscrape_label. Values are floats,
 * including +Inf, -Inf and NaN.
 *
 * Queries sum a metric over all its label sets (vLLM exports one series per
 * engine, and request_success per finished_reason), which is what a mean
 * over the whole server needs.
 */
#ifndef SERVESIM_PROMSCRAPE_H
#define SERVESIM_PROMSCRAPE_H

#include <stdbool.h>
#include <stddef.h>

#include "err.h"

struct promscrape_sample {
	char name[128];
	char *labels;            /* owned: `k="v",…` as written; "" when none */
	double value;
	int line;
};

struct promscrape {
	struct promscrape_sample *v;
	size_t len, cap;
};

/* Does the text look like a scrape whose metrics start with prefix
 * ("vllm:")? Looks at the first 64 lines. */
bool promscrape_sniff(const char *text, const char *prefix);

/* Parses text. Returns 0, or -1 with e naming path and line; *out is the
 * caller's to free with promscrape_free in both cases. */
int promscrape_parse(struct promscrape *out, const char *text, const char *path, struct err *e);

void promscrape_free(struct promscrape *s);

/* The sum of every sample named name; *found says whether there was one. */
double promscrape_sum(const struct promscrape *s, const char *name, bool *found);

/* The value of label key in the first sample named name, copied to out;
 * false when absent. */
bool promscrape_label(const struct promscrape *s, const char *name, const char *key, char *out,
		      size_t cap);

#endif
