#include "sglangmetrics.h"

#include <string.h>

#include "xalloc.h"

bool sglangmetrics_sniff(const char *text)
{
	return strstr(text, "sglang:time_to_first_token_seconds") || strstr(text, "sglang:num_requests_total") ||
	       strstr(text, "sglang:e2e_request_latency_seconds");
}

char *sglangmetrics_as_vllm(const char *text)
{
	static const struct {
		const char *from, *to;
	} names[] = { { "sglang:num_requests_total", "vllm:request_success_total" }, { "sglang:", "vllm:" } };
	size_t n = strlen(text);
	char *out = xmalloc(2 * n + 1);   /* each replacement grows a name by at most 2× */
	size_t o = 0;
	for (size_t i = 0; i < n;) {
		size_t k;
		for (k = 0; k < 2; k++) {
			size_t len = strlen(names[k].from);
			if (!strncmp(text + i, names[k].from, len)) {
				size_t tl = strlen(names[k].to);
				memcpy(out + o, names[k].to, tl);
				o += tl;
				i += len;
				break;
			}
		}
		if (k == 2)
			out[o++] = text[i++];
	}
	out[o] = '\0';
	return out;
}
