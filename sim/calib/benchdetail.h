/*
 * benchdetail: the per-request arrays of a benchmark result, checked
 * request by request and summarised as the tool summarised them.
 *
 * Writers: vllm bench serve --save-detailed (vllm/benchmarks/serve.py:
 * input_lens, output_lens, ttfts, itls, errors, and in newer versions
 * start_times and latencies) and SGLang bench_serving --output-details
 * (python/sglang/bench_serving.py `result_details`: input_lens,
 * output_lens, ttfts, itls, generated_texts, errors). Seconds throughout;
 * a failed request has output_lens 0 and its error in errors[i], and both
 * tools leave it out of every statistic (calculate_metrics: only
 * outputs[i].success counts).
 *
 * Checked: each array present has one entry per request; every TTFT, gap
 * and latency is a finite number of seconds >= 0, a successful request's
 * TTFT > 0. Summarised: the mean TTFT over successful requests, the mean
 * of all their token gaps (both tools' mean_itl_ms: itls flattened), the
 * mean latency; these fill the summary statistics a result lacks, and
 * where it has them they must agree (0.5% + 0.01 ms, room for a rounded
 * summary), else the file contradicts itself and is an error that says
 * both values.
 */
#ifndef SERVESIM_BENCHDETAIL_H
#define SERVESIM_BENCHDETAIL_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "benchres.h"
#include "err.h"

struct benchdetail {
	size_t n;                   /* requests (entries of input_lens) */
	size_t n_ok;                /* successful: output_lens > 0 */
	size_t n_gaps;              /* token gaps in itls, successful requests */
	double mean_ms[N_LAT_METRICS];   /* NAN where the arrays do not give it */
};

/* Reads and checks top's per-request arrays (path for messages); d->n is 0
 * when the result has no input_lens. Returns 0, or -1 with e naming the
 * array and index. */
int benchdetail_read(struct benchdetail *d, const json_t *top, const char *path, struct err *e);

/* Fills b's missing means from d, and checks those present against d.
 * Returns 0, or -1 with e naming the key and both values. */
int benchdetail_check(const struct benchdetail *d, struct benchres *b, const char *path, struct err *e);

#endif
