/*
 * trace_json: what the JSON traces share (trace_mooncake.c's lines,
 * trace_vllm.c's results): integers in a range, and the message for a
 * value that is not what a key expects.
 */
#include "trace_int.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

/* v as compact JSON for a message, cut to SHOWN_CHARS. */
static void json_shown(const json_t *v, char *buf, size_t cap)
{
	char *s = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
	snprintf(buf, cap, "%.*s", SHOWN_CHARS, s ? s : "?");
	free(s);
}

/* A JSON integer in [min, max]; NULL v (absent) fails too. */
bool trace_json_int_in(const json_t *v, json_int_t min, json_int_t max, json_int_t *out)
{
	if (!json_is_integer(v) || json_integer_value(v) < min || json_integer_value(v) > max)
		return false;
	*out = json_integer_value(v);
	return true;
}

int trace_json_bad(const struct reader *rd, long line, const char *key, const char *expect,
		   const json_t *v)
{
	char shown[SHOWN_CHARS + 1];
	json_shown(v, shown, sizeof shown);
	return trace_fail_at(rd, line, "%s: expected %s, got %s", key, expect, shown);
}
