/*
 * trace: real request traces, read into one neutral form for replay.
 *
 * Formats (../shared/traces/, ../shared/reference/formats.md §1):
 *   vllm      `vllm bench serve` result JSON: input_lens, output_lens and,
 *             when present, start_times (seconds); every version's keys.
 *             Requests that failed there (output_lens 0, errors[i] set)
 *             are left out and counted in skipped_failed. SGLang's
 *             bench_serving lines saved with --output-details carry the
 *             same arrays (no start_times) and read the same; a file of
 *             several results replays the one trace_load_result names.
 *             Python's bare Infinity / NaN (json.dumps) are read.
 *   azure     Azure LLM trace CSV: TIMESTAMP,ContextTokens,GeneratedTokens,
 *             wall-clock timestamps with 7 fractional digits; first row = 0.
 *   mooncake  Mooncake JSONL: timestamp (ms), input_length, output_length,
 *             hash_ids (ids of 512-token prefix blocks; equal ids = same KV).
 *   csv       plain CSV with a header naming timestamp_s, input_tokens,
 *             output_tokens (in any order; other columns ignored).
 *   burstgpt  BurstGPT CSV: Timestamp (seconds), Model, Request tokens,
 *             Response tokens, Total tokens, Log Type; rows with 0
 *             response tokens (failed) are left out, counted in
 *             skipped_failed.
 * CSV is RFC 4180 (csv.h): quoted fields may hold commas.
 * "auto" picks by content: a JSON object → vllm, JSON lines → mooncake, a
 * header with TIMESTAMP → azure, with Request tokens → burstgpt, else csv.
 *
 * Errors name the file, the line (JSON: line and column) and the field:
 * `trace.csv:12: ContextTokens: expected a positive integer, got 'x'`.
 */
#ifndef SERVESIM_TRACE_H
#define SERVESIM_TRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "err.h"

#define TRACE_BLOCK_TOKENS 512   /* Mooncake hash_ids granularity */

struct trace_row {
	double time_s;          /* send time relative to the first row; NAN when the file has none */
	int32_t input_len;
	int32_t output_len;
	int32_t n_hash_ids;     /* 0 unless mooncake */
	uint64_t *hash_ids;     /* owned by the trace; NULL when n_hash_ids is 0 */
	int32_t priority;       /* vLLM request priority (mooncake "priority"), 0 if none */
};

struct trace {
	struct trace_row *rows;
	size_t len;
	char format[16];        /* the format actually read */
	size_t skipped_failed;  /* vllm: requests that failed in the measured run
				 * (output_lens 0 with an error), left out */
};

/* Reads path in format ("auto" or one of the formats above) into *t.
 * Rows are sorted by time (stable) when times are present. Returns 0, or -1
 * with e set; on failure *t holds nothing to free. An empty trace is an
 * error. */
int trace_load(struct trace *t, const char *path, const char *format, struct err *e);

/* Whether format is "auto" or one of the readers' formats (the table in
 * trace.c, which every list of them comes from). */
bool trace_format_known(const char *format);

/* "auto, vllm, azure, mooncake, csv, burstgpt" into buf (truncated to cap). */
void trace_format_list(char *buf, size_t cap);

/* As trace_load, for a file of several benchmark results (vllm bench serve
 * --append-result, SGLang bench_serving JSON lines): result (1-based) is
 * the one replayed; 0 means the file holds one result, and several are an
 * error that says to choose one. Other formats take 0 only. */
int trace_load_result(struct trace *t, const char *path, const char *format, int result, struct err *e);

/* Frees the rows and their hash ids; safe on a zeroed trace. */
void trace_free(struct trace *t);

#endif
