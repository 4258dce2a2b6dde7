/*
 * vllmflags: the rewrite of a command line with vLLM's flags (see vllmflags.h).
 */
#include "vllmflags_int.h"

#include <ctype.h>
#include <jansson.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "catalog.h"
#include "cli.h"
#include "inidoc.h"
#include "modelname.h"
#include "num.h"
#include "xalloc.h"

char *vf_own(struct rewrite *rw, char *s)
{
	struct vllm_args *va = rw->va;
	xgrow(&va->owned, &va->cap_owned, va->n_owned + 1, sizeof *va->owned);
	va->owned[va->n_owned++] = s;
	return s;
}

static void vf_push_arg(struct rewrite *rw, char *s)
{
	struct vllm_args *va = rw->va;
	xgrow(&va->argv, &va->argv_cap, (size_t)va->argc + 2, sizeof *va->argv);
	va->argv[va->argc++] = s;
	va->argv[va->argc] = NULL;
}

/* Emits `--set key=value` (from --config: kept aside, to go first). */
void vf_emit_set(struct rewrite *rw, const char *key, const char *value)
{
	size_t n = strlen(key) + strlen(value) + 2;
	char *s = vf_own(rw, xmalloc(n));
	snprintf(s, n, "%s=%s", key, value);
	if (rw->label) {
		struct vllm_args *va = rw->va;
		xgrow(&va->origins, &va->cap_origins, va->n_origins + 1, sizeof *va->origins);
		struct vllm_origin *o = &va->origins[va->n_origins++];
		o->set = s;
		snprintf(o->flag, sizeof o->flag, "%s", rw->label);
	}
	if (rw->in_config) {
		xgrow(&rw->front, &rw->cap_front, rw->n_front + 1, sizeof *rw->front);
		rw->front[rw->n_front++] = s;
		return;
	}
	vf_push_arg(rw, "--set");
	vf_push_arg(rw, s);
}

/* "--num-prompts" or "FILE:LINE: num-prompts" for messages. */
const char *vf_where(const struct rewrite *rw, const struct vllm_flag *f, char *buf, size_t cap)
{
	if (rw->origin)
		snprintf(buf, cap, "%s: %s", rw->origin, f->name);
	else
		snprintf(buf, cap, "--%s", f->name);
	return buf;
}

int vf_bad_value(const struct rewrite *rw, const struct vllm_flag *f, const char *expected,
		     const char *val, struct err *e)
{
	char at[512];
	return err_set(e, "%s: expected %s, got '%s'", vf_where(rw, f, at, sizeof at), expected, val);
}

/* vLLM's human-readable integers (--max-model-len 32k): k = 1000, K = 1024,
 * m = 10^6, M = 2^20, g/G likewise (vllm/engine/arg_utils.py
 * human_readable_int). */
int vf_human_int(const char *s, int64_t *out)
{
	size_t n = strlen(s);
	if (n == 0 || n > 60)
		return -1;
	static const struct {
		char c;
		double mult;
	} sfx[] = { { 'k', 1e3 }, { 'K', 1024.0 }, { 'm', 1e6 }, { 'M', MIB },
		    { 'g', 1e9 }, { 'G', GIB } };
	for (size_t i = 0; i < sizeof sfx / sizeof *sfx; i++) {
		if (s[n - 1] != sfx[i].c)
			continue;
		char num[64];
		double v;
		memcpy(num, s, n - 1);
		num[n - 1] = '\0';
		if (num_parse_double(num, &v) || !(v > 0) || isinf(v) || v * sfx[i].mult > 9e15)
			return -1;
		*out = (int64_t)llround(v * sfx[i].mult);
		return 0;
	}
	return num_parse_int64(s, out);
}

const struct vllm_flag *vf_find_flag(const char *name)
{
	for (size_t i = 0; i < vllm_n_flags; i++)
		if (!strcmp(vllm_flags[i].name, name) || (vllm_flags[i].alias && !strcmp(vllm_flags[i].alias, name)))
			return &vllm_flags[i];
	return NULL;
}

void vllmflags_print_table(FILE *f)
{
	fprintf(f, "| vLLM flag | servesim | notes |\n|---|---|---|\n");
	for (size_t i = 0; i < vllm_n_flags; i++) {
		const struct vllm_flag *v = &vllm_flags[i];
		static const char *const what[] = { "", "", "no effect", "refused", "output", "see notes" };
		char alias[16] = "";
		if (v->alias)
			snprintf(alias, sizeof alias, ", `-%s`", v->alias);
		fprintf(f, "| `--%s`%s%s | %s%s%s | %s |\n", v->name, v->kind == VF_BOOL ? " / `--no-…`" : "", alias,
			v->key ? "`" : "", v->key ? v->key : what[v->kind], v->key ? "`" : "", v->help);
	}
}

/* ---- applying one flag ------------------------------------------------ */

/* Checks the value's form for a VF_KEY row, naming the flag. */
static int check_type(struct rewrite *rw, const struct vllm_flag *f, const char *val, struct err *e)
{
	int64_t i;
	double d;
	if (f->type == 'i' && num_parse_int64(val, &i))
		return vf_bad_value(rw, f, "an integer", val, e);
	if (f->type == 'd' && num_parse_double(val, &d))
		return vf_bad_value(rw, f, "a number", val, e);
	return 0;
}

static int apply_flag(struct rewrite *rw, const struct vllm_flag *f, bool negated, const char *const *vals,
		      int n_vals, struct err *e)
{
	char at[512];
	if (f->bench)
		rw->bench_seen = true;
	switch (f->kind) {
	case VF_KEY:
		if (check_type(rw, f, vals[0], e))
			return -1;
		vf_emit_set(rw, f->key, vals[0]);
		return 0;
	case VF_BOOL:
		vf_emit_set(rw, f->key, negated ? "false" : "true");
		return 0;
	case VF_NOOP:
		return 0;
	case VF_REFUSE:
		return err_set(e, "%s: %s", vf_where(rw, f, at, sizeof at), f->help);
	default:
		if (f->kind == VF_OUT && !rw->in_config)
			rw->va->out.any = true;
		if (f->kind == VF_OUT && rw->in_config)
			return err_set(e, "%s: a vllm bench serve flag, not a vllm serve config key",
				       vf_where(rw, f, at, sizeof at));
		if (f->arity == ARG_NONE)
			return f->fn(rw, f, NULL, e);
		for (int i = 0; i < n_vals; i++)
			if (f->fn(rw, f, vals[i], e))
				return -1;
		return 0;
	}
}

/* Applies flag f (negated: its --no- form) with its values; each --set it
 * makes is recorded as typed as f (vllmflags_origin). */
int vf_apply(struct rewrite *rw, const struct vllm_flag *f, bool negated, const char *const *vals, int n_vals,
	     struct err *e)
{
	char label[512];
	rw->label = vf_where(rw, f, label, sizeof label);
	int rc = apply_flag(rw, f, negated, vals, n_vals, e);
	rw->label = NULL;
	return rc;
}

/* What is resolved once every flag is in: the dataset, the dtype. */
int vf_finish(struct rewrite *rw, struct err *e)
{
	const char *name = rw->dataset_name ? rw->dataset_name : "random";
	if (!strcmp(name, "random")) {
		if (rw->dataset_path) {
			rw->label = "--dataset-path";
			vf_emit_set(rw, "workload.trace", rw->dataset_path);
		}
	} else if (!strcmp(name, "sharegpt")) {
		if (rw->dataset_path)
			return err_set(e, "--dataset-path %s: servesim does not tokenize ShareGPT conversations; "
					  "leave out --dataset-path for ShareGPT-like lengths, or give a trace with "
					  "--dataset-name custom --dataset-path FILE",
				       rw->dataset_path);
		/* ShareGPT-like: lognormal lengths with the means vLLM's v0.6
		 * performance post reports for ShareGPT (202 in, 179 out); the
		 * spreads are estimates no measurement here supports. */
		vf_emit_set(rw, "workload.input_distribution", "lognormal");
		vf_emit_set(rw, "workload.random_input_len", "202");
		vf_emit_set(rw, "workload.input_stddev", "180");
		if (rw->sharegpt_output_len) {
			vf_emit_set(rw, "workload.output_distribution", "uniform");
			vf_emit_set(rw, "workload.random_output_len", rw->sharegpt_output_len);
			vf_emit_set(rw, "workload.random_range_ratio", "0");
		} else {
			vf_emit_set(rw, "workload.output_distribution", "lognormal");
			vf_emit_set(rw, "workload.random_output_len", "179");
			vf_emit_set(rw, "workload.output_stddev", "160");
		}
	} else if (catalog_is_file(name) && !rw->dataset_path) {
		rw->label = "--dataset-name";
		vf_emit_set(rw, "workload.trace", name);   /* --dataset-name FILE: a trace */
	} else if (!strcmp(name, "burstgpt") || !strcmp(name, "custom")) {
		if (!rw->dataset_path)
			return err_set(e, "--dataset-name %s: expected --dataset-path FILE (a trace)", name);
		rw->label = "--dataset-path";
		vf_emit_set(rw, "workload.trace", rw->dataset_path);
	} else {
		return err_set(e, "--dataset-name: expected random, sharegpt, burstgpt or custom (a trace in --dataset-path); "
				  "'%s' is not simulated",
			       name);
	}
	if (rw->sharegpt_output_len && strcmp(name, "sharegpt"))
		return err_set(e, "--sharegpt-output-len: only with --dataset-name sharegpt");
	rw->label = NULL;
	if (rw->dtype && !rw->quantization_seen) {
		if (!strcmp(rw->dtype, "bfloat16") || !strcmp(rw->dtype, "bf16"))
			vf_emit_set(rw, "run.weights", "bf16");
		else if (strcmp(rw->dtype, "auto"))
			vf_emit_set(rw, "run.weights", "fp16");
	}
	return 0;
}

/* ---- the command line --------------------------------------------------- */

/* The verb's own option named name (without dashes), or NULL. */
static const struct option *verb_option(const struct option *opts, const char *name, size_t len)
{
	for (; opts->name; opts++)
		if (strlen(opts->name) == len && !strncmp(opts->name, name, len))
			return opts;
	return NULL;
}

int vllmflags_rewrite(const char *verb, const struct option *verb_opts, int argc, char **argv,
		      struct vllm_args *va, struct err *e)
{
	memset(va, 0, sizeof *va);
	struct rewrite rw = { .va = va, .verb = verb };
	vf_push_arg(&rw, argv[0]);
	int rc = 0;
	const char *config = NULL;
	for (int i = 1; i < argc && rc == 0; i++) {
		char *a = argv[i];
		if (!strcmp(a, "--")) {
			for (; i < argc; i++)
				vf_push_arg(&rw, argv[i]);
			break;
		}
		if (a[0] != '-' || !a[1]) {
			/* A scenario keeps its own defaults; a model (vllm serve MODEL)
			 * does not count as one. */
			char path[4096];
			struct err ignored;
			if (catalog_resolve(CATALOG_SCENARIOS, a, path, sizeof path, &ignored) == 0)
				rw.positionals++;
			vf_push_arg(&rw, a);
			continue;
		}
		const char *body = a + (a[1] == '-' ? 2 : 1);
		const char *eq = strchr(body, '=');
		size_t len = eq ? (size_t)(eq - body) : strlen(body);
		const struct option *vo = a[1] == '-' ? verb_option(verb_opts, body, len) : NULL;
		if (vo) {
			vf_push_arg(&rw, a);
			if (vo->has_arg == required_argument && !eq && i + 1 < argc)
				vf_push_arg(&rw, argv[++i]);
			continue;
		}
		char name[128];
		if (len >= sizeof name) {
			rc = err_set(e, "%.*s…: unknown option", 60, a);
			break;
		}
		memcpy(name, body, len);
		name[len] = '\0';
		vf_normalize(name);
		if (!strcmp(name, "config")) {
			if (eq)
				config = eq + 1;
			else if (i + 1 < argc)
				config = argv[++i];
			else
				rc = err_set(e, "--config: expected a YAML file (vllm serve's --config)");
			continue;
		}
		bool negated = false;
		const struct vllm_flag *f = vf_find_flag(name);
		if (a[1] != '-' && f && (!f->alias || strcmp(f->alias, name)))
			f = NULL;   /* single dash: only the short spellings (-tp) */
		if (!f && a[1] == '-' && !strncmp(name, "no-", 3)) {
			f = vf_find_flag(name + 3);
			negated = f && f->kind == VF_BOOL;
			if (!negated)
				f = NULL;
		}
		if (!f) {
			rc = err_set(e, "%.*s: not a servesim %s option, nor a vllm serve / vllm bench serve flag servesim knows "
					"(servesim %s --help; servesim vllm-flags)",
				     (int)(len + (size_t)(body - a)), a, verb, verb);
			break;
		}
		const char *vals[256];
		int n = 0;
		if (f->arity == ARG_NONE || f->kind == VF_BOOL) {
			if (eq) {
				rc = err_set(e, "--%s: takes no value, got '%s'", f->name, eq + 1);
				break;
			}
		} else if (eq) {
			vals[n++] = eq + 1;
		} else if (i + 1 < argc && (f->arity == ARG_ONE || argv[i + 1][0] != '-')) {
			vals[n++] = argv[++i];
		}
		if (f->arity == ARG_MANY)
			while (i + 1 < argc && argv[i + 1][0] != '-' && n < 256)
				vals[n++] = argv[++i];
		if (f->arity != ARG_NONE && f->kind != VF_BOOL && n == 0) {
			rc = err_set(e, "--%s: expected a value", f->name);
			break;
		}
		rc = vf_apply(&rw, f, negated, vals, n, e);
	}
	if (rc == 0 && config)
		rc = vf_read_config(&rw, config, e);
	if (rc == 0)
		rc = vf_finish(&rw, e);
	if (rc == 0 && (rw.n_front || (rw.bench_seen && rw.positionals == 0))) {
		/* --config's settings, and vllm bench serve's defaults without a
		 * scenario, go before everything the command line says. */
		char **rest = va->argv + 1;
		int n_rest = va->argc - 1;
		char **copy = xmalloc(sizeof *copy * (size_t)(n_rest + 1));
		memcpy(copy, rest, sizeof *copy * (size_t)n_rest);
		va->argc = 1;
		if (rw.bench_seen && rw.positionals == 0) {
			vf_push_arg(&rw, "--set");
			vf_push_arg(&rw, "workload.num_prompts=1000");
			vf_push_arg(&rw, "--set");
			vf_push_arg(&rw, "workload.request_rate=inf");
		}
		for (size_t k = 0; k < rw.n_front; k++) {
			vf_push_arg(&rw, "--set");
			vf_push_arg(&rw, rw.front[k]);
		}
		for (int k = 0; k < n_rest; k++)
			vf_push_arg(&rw, copy[k]);
		free(copy);
	}
	free(rw.front);
	return rc;
}

int vllmflags_scenario_or_model(const char *arg, char *out, size_t cap, struct inidoc *ov, struct err *e)
{
	out[0] = '\0';
	if (catalog_resolve(CATALOG_SCENARIOS, arg, out, cap, e) == 0)
		return 1;
	struct err scenario_err = *e;
	struct modelname mn;
	struct err model_err;
	if (modelname_resolve(arg, &mn, &model_err)) {
		*e = scenario_err;
		out[0] = '\0';
		return -1;
	}
	out[0] = '\0';
	struct inidoc first = { 0 };
	if (inidoc_add_overridef(&first, e, "run.model=%s", arg)) {
		inidoc_free(&first);
		return -1;
	}
	inidoc_add_overrides(&first, ov);
	inidoc_free(ov);
	*ov = first;
	return 0;
}

const char *vllmflags_origin(const struct vllm_args *va, const char *assignment)
{
	for (size_t i = 0; i < va->n_origins; i++)
		if (va->origins[i].set == assignment)
			return va->origins[i].flag;
	return NULL;
}

void vllmflags_free(struct vllm_args *va)
{
	free(va->origins);
	for (size_t i = 0; i < va->n_owned; i++)
		free(va->owned[i]);
	free(va->owned);
	free(va->argv);
	free(va->out.metadata);
	memset(va, 0, sizeof *va);
}

int cmd_vllm_flags(int argc, char **argv)
{
	if (argc > 1 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		printf("usage: servesim vllm-flags\n\n"
		       "Prints, as a Markdown table, every vllm serve and vllm bench serve flag that\n"
		       "servesim run, sweep, plan and compare accept, and the scenario key each becomes.\n");
		return EXIT_OK;
	}
	if (argc > 1)
		return cli_misuse("vllm-flags", "unexpected argument '%s'", argv[1]);
	vllmflags_print_table(stdout);
	return fflush(stdout) ? EXIT_FAIL : EXIT_OK;
}
