/*
 * runobs_int: what the runobs readers share (runobs.h is the interface).
 * runobs.c builds observations (the helpers below) and detects a file's
 * format; each reader file turns one family of formats into observations:
 *   runobs_bench.c  benchmark-client results, JSON: vllm bench serve (every
 *                   version, --append-result), SGLang bench_serving lines,
 *                   LLMPerf / trtllm-bench / GenAI-Perf / GuideLLM, and the
 *                   dispatch of every JSON text to its reader
 *   runobs_local.c  local engines' own timings: Ollama responses,
 *                   llama-server replies, llama-bench tests
 *   runobs_agg.c    aggregates: a /metrics scrape's histograms, the
 *                   calibration CSVs' per-stage means
 */
#ifndef SERVESIM_RUNOBS_INT_H
#define SERVESIM_RUNOBS_INT_H

#include <jansson.h>
#include <stdbool.h>

#include "calibcsv.h"
#include "err.h"
#include "inidoc.h"
#include "llamabench.h"
#include "runobs.h"

/* What a reader had to assume or skip, kept in set->notes. */
void runobs_note(struct runobs_set *set, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Whether the user's --set gives section.key. */
bool runobs_user_sets(const struct runobs_opts *o, const char *section, const char *key);

/* Loads ob->sc from ini_path (NULL: the built-in default) with ov, the
 * user's overrides last, then subsamples a staged run. Frees ov. */
int runobs_finish(struct runobs *ob, const char *ini_path, struct inidoc *ov, const struct runobs_opts *o,
		  struct err *e);
void runobs_init(struct runobs *ob, const char *format, int clock, int itl);
struct runobs_point *runobs_add_point(struct runobs *ob, int stage);
/* Adds ob to set once obscheck_values accepts it; otherwise -1 with e
 * and nothing is added. */
int runobs_push(struct runobs_set *set, const struct runobs *ob, const char *path, struct err *e);
/* The run.* settings of a one-model observation. */
int runobs_add_run(struct inidoc *ov, const char *model, const char *weights, const struct runobs_opts *o,
		   struct err *e);
/* One request alone, in prompt and out generated tokens. */
int runobs_add_single_request(struct inidoc *ov, long long in, long long out, struct err *e);

/* The readers: each appends its observations to set, or returns -1 with
 * e naming the file. */
/* result: 0 for a file of one result, else which of several (1-based). */
int runobs_from_vllm(struct runobs_set *set, const json_t *top, const char *path, int result,
		     const struct runobs_opts *o, struct err *e);
/* Any JSON text: *handled is false when no JSON reader knows it. */
int runobs_from_json_text(struct runobs_set *set, const char *text, const char *path,
			  const struct runobs_opts *o, struct err *e, bool *handled);
int runobs_from_ollama(struct runobs_set *set, const char *text, const char *path, const struct runobs_opts *o,
		       struct err *e);
int runobs_from_llamaserver(struct runobs_set *set, const char *text, const char *path,
			    const struct runobs_opts *o, struct err *e);
int runobs_from_llamabench(struct runobs_set *set, struct llamabench_list *l, const char *path,
			   const struct runobs_opts *o, struct err *e);
int runobs_from_prometheus(struct runobs_set *set, const char *text, const char *path,
			   const struct runobs_opts *o, struct err *e);
int runobs_from_calibration(struct runobs_set *set, enum calibcsv_kind kind, const char *path,
			    const struct runobs_opts *o, struct err *e);

#endif
