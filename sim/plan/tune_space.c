/*
 * tune_space: the tuner's search space (tune.h): the table of [engine]
 * knobs it searches by default with their values (tune_keys), the default
 * space for a scenario, `--search KEY=V1,V2,…` axes, checking every value
 * loads, the scenario's own value of a knob as text, and the space as JSON.
 *
 * Invariants: an axis has 1..TUNE_MAX_VALUES values and a space at most
 * TUNE_MAX_AXES axes; the default space is empty for an engine outside
 * vLLM's family, and max_model_len (when present) is its first axis.
 */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "engine.h"
#include "list.h"
#include "tune_int.h"

/* ---- the space ---- */

enum tk_type { TK_INT, TK_BOOL, TK_DTYPE, TK_FRACTION };

#define F(field) offsetof(struct scenario, field)

/* The engine knobs that move a configuration's SLO rate, in the order the
 * descent visits them (the largest lever first), with their default
 * values. The values bracket vLLM's defaults (2048 or 8192 tokens, 256 or
 * 1024 sequences: vllm/engine/arg_utils.py) by factors of two: SEED C20-C21
 * (a smaller token budget interrupts decode less, a larger one prefills
 * faster) and C16-C17 (KV pool size: fp8 halves a token's bytes). */
static const struct tune_key {
	const char *key;
	int type;                    /* enum tk_type */
	size_t offset;               /* in struct scenario */
	const char *values;          /* NULL: set by tune_space_default */
} tune_keys[] = {
	{ "max_model_len", TK_INT, F(engine.max_model_len), NULL },
	{ "max_num_batched_tokens", TK_INT, F(engine.max_num_batched_tokens), "512,1024,2048,4096,8192,16384" },
	{ "enable_chunked_prefill", TK_BOOL, F(engine.enable_chunked_prefill), "true,false" },
	{ "long_prefill_token_threshold", TK_INT, F(engine.long_prefill_token_threshold), "0,256,1024" },
	{ "max_num_seqs", TK_INT, F(engine.max_num_seqs), "64,128,256,512,1024" },
	{ "kv_cache_dtype", TK_DTYPE, F(engine.kv_cache_dtype), "auto,fp8" },
	{ "enable_prefix_caching", TK_BOOL, F(engine.enable_prefix_caching), "true,false" },
	{ "gpu_memory_utilization", TK_FRACTION, F(engine.gpu_memory_utilization), NULL },
};

#undef F

static const struct tune_key *key_row(const char *key)
{
	for (size_t i = 0; i < sizeof tune_keys / sizeof *tune_keys; i++)
		if (!strcmp(tune_keys[i].key, key))
			return &tune_keys[i];
	return NULL;
}

/* The scenario's own value of key as text ("default" for an unset
 * integer, "" for a key outside the table). */
void tune_own_text(const struct scenario *sc, const char *key, char *out, size_t cap)
{
	const struct tune_key *k = key_row(key);
	const char *p = k ? (const char *)sc + k->offset : NULL;
	if (!k) {
		snprintf(out, cap, "%s", "");
	} else if (k->type == TK_INT) {
		int64_t v = *(const int64_t *)(const void *)p;
		if (v < 0)
			snprintf(out, cap, "default");
		else
			snprintf(out, cap, "%lld", (long long)v);
	} else if (k->type == TK_BOOL) {
		snprintf(out, cap, "%s", *(const bool *)(const void *)p ? "true" : "false");
	} else if (k->type == TK_DTYPE) {
		snprintf(out, cap, "%s", kv_dtypes[*(const int *)(const void *)p].name);
	} else {
		snprintf(out, cap, "%g", *(const double *)(const void *)p);
	}
}

static int axis_values(struct tune_axis *a, const char *list, struct err *e)
{
	a->n = 0;
	char tok[sizeof a->values[0]];
	int rc;
	for (const char *cur = list; (rc = list_next(&cur, tok, sizeof tok)) != 0;) {
		if (rc < 0 || a->n == TUNE_MAX_VALUES)
			return err_set(e, "--search: %s: expected up to %d comma-separated values of up to %zu characters, got '%s'",
				       a->key, TUNE_MAX_VALUES, sizeof a->values[0] - 1, list);
		memcpy(a->values[a->n++], tok, sizeof tok);
	}
	return 0;
}

void tune_space_default(struct tune_space *s, const struct scenario *sc, double max_gmu)
{
	memset(s, 0, sizeof *s);
	if (sc->engine.cls->family != ENGINE_FAMILY_VLLM)
		return;
	bool shares = sc->random_prefix_len > 0 || sc->turns > 1;
	/* vLLM's default max_model_len is the model's whole context, whose KV
	 * a small device cannot hold for one request (startup.h refuses it,
	 * as vLLM does); what a user passes instead is a length that holds the
	 * workload's longest request: vLLM's random dataset has one. */
	if (sc->engine.max_model_len <= 0 && !sc->trace[0] && sc->input.dist == LEN_UNIFORM &&
	    sc->output.dist == LEN_UNIFORM) {
		double r = sc->random_range_ratio;
		double in = (double)sc->random_prefix_len + ceil((double)sc->input.mean * (1 + r));
		double out = ceil((double)sc->output.mean * (1 + r));
		double need = in + (double)(sc->turns - 1) * (in - (double)sc->random_prefix_len + out) + out;
		double len = 2048;
		while (len < need)
			len *= 2;
		struct tune_axis *a = &s->axis[s->n++];
		snprintf(a->key, sizeof a->key, "max_model_len");
		snprintf(a->values[0], sizeof a->values[0], "%.0f", len);
		a->n = 1;
	}
	for (size_t i = 0; i < sizeof tune_keys / sizeof *tune_keys; i++) {
		const struct tune_key *k = &tune_keys[i];
		if ((!strcmp(k->key, "enable_prefix_caching") && !shares) || !strcmp(k->key, "max_model_len"))
			continue;
		struct tune_axis *a = &s->axis[s->n];
		snprintf(a->key, sizeof a->key, "%s", k->key);
		if (k->values) {
			struct err e;
			axis_values(a, k->values, &e);   /* the table's lists are well formed */
		} else {
			/* gpu_memory_utilization: more memory only grows the KV
			 * pool, so the user's bound is the one value worth
			 * trying besides the scenario's own. */
			if (!(max_gmu > sc->engine.gpu_memory_utilization))
				continue;
			snprintf(a->values[0], sizeof a->values[0], "%g", max_gmu);
			a->n = 1;
		}
		s->n++;
	}
}

int tune_space_add(struct tune_space *s, const char *spec, struct err *e)
{
	const char *eq = strchr(spec, '=');
	const char *key = spec;
	if (!strncmp(key, "engine.", 7))
		key += 7;
	const char *dot = strchr(key, '.');
	if (!eq || eq == key || (size_t)(eq - key) >= sizeof s->axis[0].key || (dot && dot < eq))
		return err_set(e, "--search: expected [engine.]KEY=V1,V2,… (an [engine] key, e.g. max_num_batched_tokens=512,1024,2048), got '%s'",
			       spec);
	char name[48];
	memcpy(name, key, (size_t)(eq - key));
	name[eq - key] = '\0';
	int i = 0;
	while (i < s->n && strcmp(s->axis[i].key, name))
		i++;
	if (i == s->n) {
		if (s->n == TUNE_MAX_AXES)
			return err_set(e, "--search: expected at most %d axes, got '%s' too", TUNE_MAX_AXES, spec);
		memset(&s->axis[i], 0, sizeof s->axis[i]);
		snprintf(s->axis[i].key, sizeof s->axis[i].key, "%s", name);
		s->n++;
	}
	return axis_values(&s->axis[i], eq + 1, e);
}

int tune_space_check(const struct tune_space *s, const char *path, const struct inidoc *base,
		     struct err *e)
{
	for (int a = 0; a < s->n; a++)
		for (int v = 0; v < s->axis[a].n; v++) {
			struct inidoc ov = { 0 };
			struct scenario sc;
			inidoc_add_overrides(&ov, base);
			int rc = inidoc_add_overridef(&ov, e, "engine.%s=%s", s->axis[a].key, s->axis[a].values[v]) ||
				 scenario_load(&sc, path, &ov, e);
			inidoc_free(&ov);
			if (rc)
				return err_prefix(e, "--search %s", s->axis[a].key);
		}
	return 0;
}

json_t *tune_space_json(const struct tune_space *s)
{
	json_t *j = json_object();
	for (int a = 0; a < s->n; a++) {
		json_t *v = json_array();
		for (int k = 0; k < s->axis[a].n; k++)
			json_array_append_new(v, json_string(s->axis[a].values[k]));
		json_object_set_new(j, s->axis[a].key, v);
	}
	return j;
}
