/*
 * trace_mooncake: the Mooncake trace (kvcache-ai/Mooncake
 * FAST25-release/traces/, JSON lines) for trace.h: one JSON object a line with
 * timestamp (ms), input_length, output_length, hash_ids (512-token block
 * ids) and an optional priority.
 */
#include "trace_int.h"

#include <jansson.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>

#include "xalloc.h"

/* A Mooncake field the row cannot do without. */
static const json_t *mooncake_need(const struct reader *rd, const json_t *o, const char *key,
				   const char *expect)
{
	const json_t *v = json_object_get(o, key);
	if (v && !json_is_null(v))
		return v;
	trace_fail_at(rd, rd->lineno, "%s: missing; expected %s", key, expect);
	return NULL;
}

static int mooncake_row(struct reader *rd, const json_t *o)
{
	static const char ms[] = "milliseconds >= 0";
	static const char count[] = "a positive integer";
	static const char ids[] = "an array of non-negative integers (512-token block ids)";
	const json_t *ts, *in, *out, *hs;
	json_int_t v;
	if (!(ts = mooncake_need(rd, o, "timestamp", ms)) ||
	    !(in = mooncake_need(rd, o, "input_length", count)) ||
	    !(out = mooncake_need(rd, o, "output_length", count)) ||
	    !(hs = mooncake_need(rd, o, "hash_ids", ids)))
		return -1;
	if (!json_is_number(ts) || json_number_value(ts) < 0)
		return trace_json_bad(rd, rd->lineno, "timestamp", ms, ts);
	struct trace_row *r = trace_add_row(rd);
	r->time_s = json_number_value(ts);
	if (!trace_json_int_in(in, 1, INT32_MAX, &v))
		return trace_json_bad(rd, rd->lineno, "input_length", count, in);
	r->input_len = (int32_t)v;
	if (!trace_json_int_in(out, 1, INT32_MAX, &v))
		return trace_json_bad(rd, rd->lineno, "output_length", count, out);
	r->output_len = (int32_t)v;
	/* Optional: the request's vLLM priority (lower is served first under
	 * --scheduling-policy priority). */
	const json_t *pr = json_object_get(o, "priority");
	if (pr && !json_is_null(pr)) {
		if (!trace_json_int_in(pr, INT32_MIN, INT32_MAX, &v))
			return trace_json_bad(rd, rd->lineno, "priority", "an integer", pr);
		r->priority = (int32_t)v;
	}
	if (!json_is_array(hs) || json_array_size(hs) > INT32_MAX)
		return trace_json_bad(rd, rd->lineno, "hash_ids", ids, hs);
	size_t n = json_array_size(hs);
	if (n == 0)
		return 0;
	r->hash_ids = xmalloc(n * sizeof *r->hash_ids);
	r->n_hash_ids = (int32_t)n;
	for (size_t i = 0; i < n; i++) {
		const json_t *h = json_array_get(hs, i);
		if (!trace_json_int_in(h, 0, LLONG_MAX, &v)) {
			char key[48];
			snprintf(key, sizeof key, "hash_ids[%zu]", i);
			return trace_json_bad(rd, rd->lineno, key, "a non-negative integer", h);
		}
		r->hash_ids[i] = (uint64_t)v;
	}
	return 0;
}

/* One object a line, each parsed on its own so that errors carry the
 * file's line. Blank lines are skipped. */
int trace_load_mooncake(struct reader *rd)
{
	rd->timed = true;
	rd->time_divisor = 1000.0;
	while (trace_next_line(rd) >= 0) {
		if (trace_is_blank(rd->line))
			continue;
		json_error_t je;
		json_t *o = json_loads(rd->line, JSON_REJECT_DUPLICATES, &je);
		if (!o)
			return err_set(rd->e, "%s:%ld:%d: invalid JSON: %s", rd->path, rd->lineno,
				       je.column, je.text);
		int rc = json_is_object(o) ? mooncake_row(rd, o)
					   : trace_fail_at(rd, rd->lineno, "expected a JSON object");
		json_decref(o);
		if (rc)
			return -1;
	}
	return 0;
}
