#include "latmetric.h"

#include "rowtab.h"

const struct lat_metric_name lat_metrics[N_LAT_METRICS + 1] = {
	[LAT_TTFT] = { "ttft", "Time to First Token", "TTFT" },
	[LAT_TPOT] = { "tpot", "Time per Output Token (excl. 1st token)", "TPOT" },
	[LAT_ITL] = { "itl", "Inter-token Latency", "ITL" },
	[LAT_E2EL] = { "e2el", "End-to-end Latency", "E2EL" },
	[N_LAT_METRICS] = { NULL, NULL, NULL },
};

int lat_metric_find(const char *key)
{
	return rowtab_index(lat_metrics, sizeof *lat_metrics, key);
}

void lat_metric_list(char *buf, size_t cap)
{
	rowtab_list(lat_metrics, sizeof *lat_metrics, buf, cap);
}
