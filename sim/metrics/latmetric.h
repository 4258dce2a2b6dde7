/*
 * latmetric: the four latency metrics of `vllm bench serve`, in its order
 * (benchmarks/serve.py: ttft, tpot, itl, e2el). The one table every list of
 * them comes from: the report writers' keys, titles and labels, the
 * calibration readers' result keys (mean_ttft_ms …), --percentile-metrics
 * and plan's SLO names. tests/test_names.c holds the lists to it.
 */
#ifndef SERVESIM_LATMETRIC_H
#define SERVESIM_LATMETRIC_H

#include <stddef.h>

enum lat_metric { LAT_TTFT, LAT_TPOT, LAT_ITL, LAT_E2EL, N_LAT_METRICS };

struct lat_metric_name {
	const char *key;      /* ttft, tpot, itl, e2el: vLLM's result keys and flags */
	const char *title;    /* the text report's block header */
	const char *abbr;     /* TTFT, TPOT, ITL, E2EL */
};

/* Indexed by enum lat_metric; a NULL key ends it (rowtab.h). */
extern const struct lat_metric_name lat_metrics[N_LAT_METRICS + 1];

/* The metric called key, or -1. */
int lat_metric_find(const char *key);

/* "ttft, tpot, itl, e2el" into buf (truncated to cap). */
void lat_metric_list(char *buf, size_t cap);

#endif
