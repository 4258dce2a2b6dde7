/*
 * sglangmetrics: SGLang's Prometheus /metrics (python/sglang/srt/metrics/
 * collector.py) read as vLLM's. The histograms runobs uses have the same
 * names and units under the sglang: prefix (time_to_first_token_seconds,
 * inter_token_latency_seconds, e2e_request_latency_seconds), as do the
 * token counters (prompt_tokens_total, generation_tokens_total); finished
 * requests are sglang:num_requests_total where vLLM has
 * vllm:request_success_total. Buckets differ and do not matter: only
 * _sum and _count are read.
 */
#ifndef SERVESIM_SGLANGMETRICS_H
#define SERVESIM_SGLANGMETRICS_H

#include <stdbool.h>

bool sglangmetrics_sniff(const char *text);

/* text with SGLang's names replaced by vLLM's (a new string, same lines). */
char *sglangmetrics_as_vllm(const char *text);

#endif
