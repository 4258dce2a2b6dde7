/*
 * genconfig: reading generation_config.json (genconfig.h).
 */
#include "genconfig.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog.h"
#include "jsonfile.h"

int genconfig_path(const char *config_path, char *out, size_t cap)
{
	const char *slash = strrchr(config_path, '/');
	const char *base = slash ? slash + 1 : config_path;
	int dir = (int)(base - config_path);
	int n;
	if (!strcmp(base, "config.json")) {
		n = snprintf(out, cap, "%.*sgeneration_config.json", dir, config_path);
	} else {
		char id[256];
		catalog_id_of(config_path, id, sizeof id);
		n = snprintf(out, cap, "%.*sgeneration_config/%s.json", dir, config_path, id);
	}
	return n >= 0 && (size_t)n < cap ? 0 : -1;
}

/* One sampling field: its key, where it goes, its range as vLLM's
 * SamplingParams._verify_args checks it. */
static const struct field {
	const char *key;
	size_t off;
	bool integer;
	double lo, hi;
	bool lo_open;
	const char *expect;
} fields[] = {
	{ "temperature", offsetof(struct genconfig, temperature), false, 0, INFINITY, false, "a number >= 0" },
	{ "top_p", offsetof(struct genconfig, top_p), false, 0, 1, true, "a number in (0, 1]" },
	{ "top_k", offsetof(struct genconfig, top_k), true, -1, INT32_MAX, false, "an integer >= -1 (0 or -1: off)" },
	{ "min_p", offsetof(struct genconfig, min_p), false, 0, 1, false, "a number in [0, 1]" },
	{ "repetition_penalty", offsetof(struct genconfig, repetition_penalty), false, 0, INFINITY, true,
	  "a number > 0" },
};

static int read_field(struct genconfig *g, json_t *top, const struct field *f, const char *path, struct err *e)
{
	json_t *v = json_object_get(top, f->key);
	if (!v || json_is_null(v))
		return 0;
	bool ok = f->integer ? json_is_integer(v) : json_is_number(v);
	double x = ok ? json_number_value(v) : 0;
	ok = ok && isfinite(x) && x <= f->hi && (f->lo_open ? x > f->lo : x >= f->lo);
	if (!ok) {
		char *got = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
		err_set(e, "%s: %s: expected %s, got '%.60s'", path, f->key, f->expect, got ? got : "?");
		free(got);
		return -1;
	}
	char *at = (char *)g + f->off;
	if (f->integer)
		*(int64_t *)(void *)at = json_integer_value(v);
	else
		*(double *)(void *)at = x;
	return 0;
}

void genconfig_none(struct genconfig *g)
{
	*g = (struct genconfig){ .temperature = GENCONFIG_UNSET, .top_p = GENCONFIG_UNSET, .top_k = GENCONFIG_UNSET,
				 .min_p = GENCONFIG_UNSET, .repetition_penalty = GENCONFIG_UNSET };
}

int genconfig_load(struct genconfig *g, const char *path, struct err *e)
{
	genconfig_none(g);
	if (!catalog_is_file(path))
		return 0;
	json_t *top = jsonfile_load(path, JSON_REJECT_DUPLICATES, e);
	if (!top)
		return -1;
	int rc = 0;
	if (!json_is_object(top))
		rc = err_set(e, "%s: expected a JSON object (a Hugging Face generation_config.json)", path);
	for (size_t i = 0; !rc && i < sizeof fields / sizeof *fields; i++)
		rc = read_field(g, top, &fields[i], path, e);
	json_decref(top);
	g->present = rc == 0;
	return rc;
}

bool genconfig_penalty(const struct genconfig *g)
{
	return g->repetition_penalty > 0 && g->repetition_penalty != 1;
}
