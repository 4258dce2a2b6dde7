#include "vllmlog.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "textfile.h"

bool vllmlog_sniff(const char *text)
{
	return strstr(text, "Model loading took") || strstr(text, "Available KV cache memory:") ||
	       strstr(text, "GPU KV cache size:") || strstr(text, "# GPU blocks:") ||
	       strstr(text, "reserved for KV Cache is");
}

/* The number after needle in line ("1,234" and "54.92GiB" allowed); NAN
 * when needle is absent. */
static double after(const char *line, const char *needle)
{
	const char *p = strstr(line, needle);
	if (!p)
		return NAN;
	p += strlen(needle);
	while (*p == ' ' || *p == '(')
		p++;
	char num[64];
	size_t o = 0;
	for (; *p && o < sizeof num - 1 && (strchr("0123456789.", *p) || (*p == ',' && p[1] >= '0' && p[1] <= '9'));
	     p++)
		if (*p != ',')
			num[o++] = *p;
	num[o] = '\0';
	char *end;
	double v = strtod(num, &end);
	return o && !*end ? v : NAN;
}

static void take(double *slot, double v, int *found)
{
	if (!isnan(v)) {
		*slot = v;
		(*found)++;
	}
}

int vllmlog_parse(struct vllmlog *out, const char *text, const char *path, struct err *e)
{
	double *all[] = { &out->weights_gib, &out->activation_gib, &out->non_torch_gib, &out->kv_gib,
			  &out->total_gpu_gib, &out->gpu_memory_utilization, &out->kv_tokens, &out->gpu_blocks };
	for (size_t i = 0; i < sizeof all / sizeof *all; i++)
		*all[i] = NAN;
	out->n_found = 0;
	const char *cur = text, *p;
	size_t n;
	while (textfile_next_line(&cur, &p, &n)) {
		char line[2048];
		snprintf(line, sizeof line, "%.*s", (int)(n < sizeof line ? n : sizeof line - 1), p);
		int f = 0;
		take(&out->weights_gib, after(line, "Model loading took"), &f);
		take(&out->weights_gib, after(line, "model weights take"), &f);
		take(&out->non_torch_gib, after(line, "non_torch_memory takes"), &f);
		take(&out->activation_gib, after(line, "PyTorch activation peak memory takes"), &f);
		take(&out->kv_gib, after(line, "reserved for KV Cache is"), &f);
		take(&out->kv_gib, after(line, "Available KV cache memory:"), &f);
		take(&out->total_gpu_gib, after(line, "total_gpu_memory"), &f);
		take(&out->gpu_memory_utilization, after(line, "gpu_memory_utilization"), &f);
		take(&out->kv_tokens, after(line, "GPU KV cache size:"), &f);
		take(&out->gpu_blocks, after(line, "# GPU blocks:"), &f);
		take(&out->gpu_blocks, after(line, "# cuda blocks:"), &f);
		out->n_found += f;
	}
	if (!out->n_found)
		return err_set(e, "%s: no vLLM start-up memory line (Model loading took …, Available KV cache memory: …, GPU KV cache size: …)",
			       path);
	return 0;
}
