#include "llamaserver.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonvals.h"
#include "xalloc.h"

bool llamaserver_sniff(const json_t *o)
{
	const json_t *t = json_object_get(o, "timings");
	return json_is_object(t) && json_object_get(t, "prompt_ms") && json_object_get(t, "predicted_ms");
}

static double get(const json_t *t, const char *key)
{
	const json_t *v = json_object_get(t, key);
	return json_is_number(v) ? json_number_value(v) : NAN;
}

char *llamaserver_to_ollama(const char *text, const char *path, struct err *e)
{
	struct jsonvals vals;
	if (jsonvals_parse(&vals, text, path, e)) {
		jsonvals_free(&vals);
		return NULL;
	}
	char *out = NULL;
	size_t len = 0, cap = 0;
	int out_line = 1;
	xgrow(&out, &cap, 1, 1);
	out[0] = '\0';
	for (size_t i = 0; i < vals.len; i++) {
		const json_t *t = json_object_get(vals.v[i], "timings");
		double pn = get(t, "prompt_n"), pms = get(t, "prompt_ms"), gn = get(t, "predicted_n"),
		       gms = get(t, "predicted_ms"), cn = get(t, "cache_n");
		if (!json_is_object(t) || !(pn >= 0) || !(pms >= 0) || !(gn >= 0) || !(gms >= 0)) {
			err_set(e, "%s:%d: timings: expected prompt_n, prompt_ms, predicted_n and predicted_ms >= 0 (a llama-server response)",
				path, vals.line[i]);
			free(out);
			jsonvals_free(&vals);
			return NULL;
		}
		const char *model = json_string_value(json_object_get(vals.v[i], "model"));
		for (; out_line < vals.line[i]; out_line++)   /* keep the response's line */
			xappendf(&out, &len, &cap, "\n");
		/* Unbounded: four numbers of up to 309 digits each overran a
		 * 640-byte buffer. */
		xappendf(&out, &len, &cap,
			 "{\"model\": \"%.200s\", \"done\": true, \"prompt_eval_count\": %.0f, "
			 "\"prompt_eval_duration\": %.0f, \"eval_count\": %.0f, \"eval_duration\": %.0f}",
			 model && !strpbrk(model, "\"\\") ? model : "", (isnan(cn) ? 0 : cn) + pn, pms * 1e6, gn,
			 gms * 1e6);
	}
	jsonvals_free(&vals);
	return out;
}
