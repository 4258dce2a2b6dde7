/*
 * testjson: the CLI tests' one way to run `servesim ARGS` and read its JSON
 * (jansson), for tests that include testutil.h and are built with
 * SERVESIM_BIN (tests/CMakeLists.txt). A non-zero exit or output that is
 * not JSON fails the test with the command and its stderr.
 */
#ifndef SERVESIM_TESTJSON_H
#define SERVESIM_TESTJSON_H

#include <jansson.h>

#include "testutil.h"

/* servesim ARGS --format json's document; the caller json_decref()s it. */
static inline json_t *servesim_json(const char *args)
{
	char *out = test_servesim(0, args);
	json_error_t je;
	json_t *doc = json_loads(out, 0, &je);
	if (!doc)
		fail_msg("servesim %s: not JSON: %s", args, je.text);
	free(out);
	return doc;
}

/* o's number at key, NaN when it is missing or not a number. */
static inline double num(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);
	return json_is_number(v) ? json_number_value(v) : NAN;
}

/* The item of array arr whose string at key is value; fails the test when
 * there is none. */
static inline json_t *item_with(json_t *arr, const char *key, const char *value)
{
	size_t i;
	json_t *it;
	json_array_foreach(arr, i, it) {
		const char *s = json_string_value(json_object_get(it, key));
		if (s && !strcmp(s, value))
			return it;
	}
	fail_msg("no item with %s = '%s'", key, value);
	return NULL;
}

#endif
