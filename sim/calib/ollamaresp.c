#include "ollamaresp.h"

#include <stdlib.h>
#include <string.h>

#include "jsonvals.h"
#include "xalloc.h"

static const char *const metric_keys[] = {
	"prompt_eval_count", "prompt_eval_duration", "eval_count", "eval_duration",
	"total_duration", "load_duration",
};
enum { N_KEYS = sizeof metric_keys / sizeof *metric_keys };

bool ollamaresp_sniff(const json_t *o)
{
	if (!json_is_object(o))
		return false;
	for (size_t i = 0; i < N_KEYS; i++)
		if (json_object_get(o, metric_keys[i]))
			return true;
	/* A response whose counts were all zero still has these. */
	return json_object_get(o, "done") && json_object_get(o, "model") &&
	       (json_object_get(o, "response") || json_object_get(o, "message") || json_object_get(o, "done_reason"));
}

/* A non-negative integer key; missing = 0 (omitempty). */
static int get_ns(const json_t *o, const char *key, int64_t *out, const char *path, int line,
		  struct err *e)
{
	const json_t *v = json_object_get(o, key);
	*out = 0;
	if (!v)
		return 0;
	if (!json_is_integer(v) || json_integer_value(v) < 0)
		return err_set(e, "%s:%d: %s: expected an integer >= 0 (nanoseconds or a count), got %s",
			       path, line, key, json_is_real(v) ? "a fraction" : "another JSON type");
	*out = (int64_t)json_integer_value(v);
	return 0;
}

int ollamaresp_parse(struct ollamaresp_list *out, const char *text, const char *path, struct err *e)
{
	memset(out, 0, sizeof *out);
	struct jsonvals vals;
	if (jsonvals_parse(&vals, text, path, e)) {
		jsonvals_free(&vals);
		return err_prefix(e, "expected Ollama /api/generate or /api/chat responses");
	}
	size_t skipped = 0;
	int rc = 0;
	for (size_t i = 0; i < vals.len && !rc; i++) {
		const json_t *o = vals.v[i];
		int line = vals.line[i];
		if (!json_is_object(o) || !ollamaresp_sniff(o)) {
			rc = err_set(e, "%s:%d: expected an Ollama /api/generate or /api/chat response (prompt_eval_count, eval_count, eval_duration …)",
				     path, line);
			break;
		}
		if (json_is_false(json_object_get(o, "done"))) {
			skipped++;
			continue;
		}
		struct ollamaresp r = { .line = line };
		const char *model = json_string_value(json_object_get(o, "model"));
		snprintf(r.model, sizeof r.model, "%s", model ? model : "");
		if (get_ns(o, "prompt_eval_count", &r.prompt_eval_count, path, line, e) ||
		    get_ns(o, "eval_count", &r.eval_count, path, line, e) ||
		    get_ns(o, "prompt_eval_duration", &r.prompt_eval_duration_ns, path, line, e) ||
		    get_ns(o, "eval_duration", &r.eval_duration_ns, path, line, e) ||
		    get_ns(o, "total_duration", &r.total_duration_ns, path, line, e) ||
		    get_ns(o, "load_duration", &r.load_duration_ns, path, line, e)) {
			rc = -1;
			break;
		}
		xgrow(&out->v, &out->cap, out->len + 1, sizeof *out->v);
		out->v[out->len++] = r;
	}
	jsonvals_free(&vals);
	if (!rc && out->len == 0)
		rc = err_set(e, "%s: no finished /api/generate response (%zu streaming chunks with \"done\": false, none with the metrics)",
			     path, skipped);
	return rc;
}

void ollamaresp_free(struct ollamaresp_list *l)
{
	free(l->v);
	memset(l, 0, sizeof *l);
}
