/*
 * otherbench: the summaries other serving benchmarks write, read as
 * vllm bench serve results (benchres.h) so that calibrate runs and
 * validate replay them the same way: their request count at their mean
 * input and output lengths, at their concurrency (or rate), against their
 * mean TTFT and E2E latency (../shared/reference/formats.md §5):
 *
 *   llmperf     ray-project/llmperf token_benchmark_ray.py's
 *               *_summary.json: results_ttft_s_mean,
 *               results_end_to_end_latency_s_mean (seconds),
 *               results_num_completed_requests, mean_input_tokens,
 *               mean_output_tokens, num_concurrent_requests, model. Its
 *               inter_token_latency is e2e / output tokens, not a token
 *               gap: not read.
 *   trtllm      trtllm-bench --report_json (tensorrt_llm/bench/dataclasses/
 *               reporting.py): streaming_metrics.avg_ttft_ms,
 *               performance.avg_request_latency_ms, request_info
 *               {num_requests, avg_input_length, avg_output_length},
 *               world_info.issue_rate (requests/s; absent or <= 0: all at
 *               once), engine.model.
 *   genai-perf  NVIDIA GenAI-Perf's *_genai_perf.json: metric objects
 *               {unit, avg, …} for time_to_first_token, request_latency,
 *               request_count, input_sequence_length,
 *               output_sequence_length; the load from input_config
 *               (concurrency or request_rate, wherever it sits). Its
 *               inter_token_latency is a per-request TPOT: not read as ITL.
 *   guidellm    GuideLLM's benchmarks.json (src/guidellm/benchmark/
 *               schemas): one run per benchmarks[] entry, metrics
 *               time_to_first_token_ms, request_latency (s),
 *               prompt_token_count, output_token_count as
 *               {successful: {mean, …}}, request_totals.successful; the
 *               load from config.strategy (concurrent streams, constant or
 *               poisson rate, synchronous, throughput); config.model.
 *
 *   vllm-pytorch  vllm bench serve's *.pytorch.json sidecar (the PyTorch
 *               OSS benchmark format, vllm/benchmarks/lib/utils.py): one
 *               record per statistic; the result's other keys (E2EL,
 *               counts, totals, rate) in each record's metric.extra_info.
 *
 * The converted objects carry what vllm bench serve's keys mean: mean_*_ms
 * in ms, completed, total_*_tokens (the mean × the count), request_rate,
 * max_concurrency, model_id.
 */
#ifndef SERVESIM_OTHERBENCH_H
#define SERVESIM_OTHERBENCH_H

#include <jansson.h>

#include "err.h"

/* The tool a parsed file comes from ("llmperf", "trtllm", "genai-perf",
 * "guidellm", "vllm-pytorch"), or NULL. */
const char *otherbench_sniff(const json_t *top);

/* The file's runs as vllm bench serve result objects (a new array), or
 * NULL with e naming path (and the benchmark) and what is missing. */
json_t *otherbench_as_vllm(const json_t *top, const char *path, struct err *e);

#endif
