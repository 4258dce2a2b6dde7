/*
 * validateany: `servesim validate` for every result format besides a
 * vllm bench serve JSON (validate.h): whatever runobs reads (SGLang lines,
 * --append-result files, Ollama JSON or --verbose text, llama-bench in
 * any output, /metrics scrapes) is replayed observation by observation and
 * its measured mean TTFT, ITL and E2E set beside the simulated ones, on
 * each measurement's own clock; a vLLM start-up log (vllmlog.h) is checked
 * against the simulated KV pool: weights, activation peak, non-torch
 * memory, KV cache GiB and tokens (the log's gpu_memory_utilization is
 * used unless --set gives one).
 *
 * The result is a JSON object: file, format, model, hardware, rows
 * [{observation, metric, measured, predicted, error_pct}], notes.
 */
#ifndef SERVESIM_VALIDATEANY_H
#define SERVESIM_VALIDATEANY_H

#include <jansson.h>
#include <stdbool.h>

#include "err.h"
#include "validate.h"

/* Is path a single vllm bench serve result JSON (validate_run's kind)? */
bool validateany_is_vllm_result(const char *path);

/* Replays path. Returns the object (the caller's), or NULL with e naming
 * the file and what could not be read or simulated. */
json_t *validateany_run(const char *path, const struct validate_opts *opts, struct err *e);

/* Prints the object as a table. */
void validateany_print(FILE *f, const json_t *r);

#endif
