#include "latmetric.h"

#include <stdio.h>
#include <string.h>

const struct lat_metric_name lat_metrics[N_LAT_METRICS] = {
	[LAT_TTFT] = { "ttft", "Time to First Token", "TTFT" },
	[LAT_TPOT] = { "tpot", "Time per Output Token (excl. 1st token)", "TPOT" },
	[LAT_ITL] = { "itl", "Inter-token Latency", "ITL" },
	[LAT_E2EL] = { "e2el", "End-to-end Latency", "E2EL" },
};

int lat_metric_find(const char *key)
{
	for (int m = 0; m < N_LAT_METRICS; m++)
		if (!strcmp(lat_metrics[m].key, key))
			return m;
	return -1;
}

void lat_metric_list(char *buf, size_t cap)
{
	size_t n = 0;
	if (cap)
		buf[0] = '\0';
	for (int m = 0; m < N_LAT_METRICS && n < cap; m++) {
		int w = snprintf(buf + n, cap - n, "%s%s", m ? ", " : "", lat_metrics[m].key);
		if (w < 0)
			break;
		n += (size_t)w;
	}
}
