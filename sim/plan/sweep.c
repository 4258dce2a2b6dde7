#include "sweep.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog.h"
#include "list.h"
#include "num.h"
#include "par.h"
#include "precision.h"
#include "xalloc.h"

static const struct {
	const char *name, *key;
} shorts[] = {
	{ "request_rate", "workload.request_rate" },
	{ "max_concurrency", "workload.max_concurrency" },
	{ "num_prompts", "workload.num_prompts" },
	{ "random_input_len", "workload.random_input_len" },
	{ "random_output_len", "workload.random_output_len" },
	{ "hardware", "run.hardware" },
	{ "model", "run.model" },
	{ "weights", "run.weights" },
	{ "seed", "run.seed" },
	{ "tensor_parallel_size", "engine.tensor_parallel_size" },
	{ "tp", "engine.tensor_parallel_size" },
	{ "pipeline_parallel_size", "engine.pipeline_parallel_size" },
	{ "pp", "engine.pipeline_parallel_size" },
	{ "max_num_batched_tokens", "engine.max_num_batched_tokens" },
	{ "max_num_seqs", "engine.max_num_seqs" },
};

const char *sweep_short_names(void)
{
	return "request_rate, max_concurrency, num_prompts, random_input_len, random_output_len, "
	       "hardware, model, weights, seed, tensor_parallel_size (tp), pipeline_parallel_size (pp), max_num_batched_tokens, "
	       "max_num_seqs";
}

int sweep_key_expand(const char *name, char *out, size_t cap)
{
	if (strchr(name, '.')) {
		snprintf(out, cap, "%s", name);
		return 0;
	}
	for (size_t i = 0; i < sizeof shorts / sizeof *shorts; i++)
		if (!strcmp(name, shorts[i].name)) {
			snprintf(out, cap, "%s", shorts[i].key);
			return 0;
		}
	return -1;
}

/* The item [s, end) without surrounding blanks, in a new string. */
static char *trim_dup(const char *s, const char *end)
{
	while (s < end && isspace((unsigned char)*s))
		s++;
	while (end > s && isspace((unsigned char)end[-1]))
		end--;
	char *r = xmalloc((size_t)(end - s) + 1);
	memcpy(r, s, (size_t)(end - s));
	r[end - s] = '\0';
	return r;
}

static void add_value(struct sweep_axis *ax, size_t *cap, char *v)
{
	xgrow(&ax->values, cap, ax->n + 1, sizeof *ax->values);
	ax->values[ax->n++] = v;
}

/* START:STOP:STEP → values, each printed with 12 significant digits so
 * 0.1 steps read 0.3, not 0.30000000000000004. */
static int add_range(struct sweep_axis *ax, size_t *cap, const char *item, struct err *e)
{
	char buf[INI_VALUE_MAX], *part[3], *save = NULL;
	snprintf(buf, sizeof buf, "%s", item);
	int n = 0;
	for (char *p = buf;; p = NULL) {
		char *tok = strtok_r(p, ":", &save);
		if (!tok)
			break;
		if (n == 3)
			return err_set(e, "--vary %s: expected START:STOP:STEP, got '%s'", ax->spec, item);
		part[n++] = tok;
	}
	double a[3];
	if (n != 3 || item[strlen(item) - 1] == ':' || item[0] == ':' || strstr(item, "::"))
		return err_set(e, "--vary %s: expected START:STOP:STEP, got '%s'", ax->spec, item);
	for (int i = 0; i < 3; i++)
		if (num_parse_double(part[i], &a[i]) || isinf(a[i]))
			return err_set(e, "--vary %s: expected finite numbers START:STOP:STEP, got '%s' in '%s'",
				       ax->spec, part[i], item);
	if (!(a[2] > 0))
		return err_set(e, "--vary %s: expected a STEP > 0 in START:STOP:STEP, got '%s'", ax->spec,
			       part[2]);
	if (a[0] > a[1])
		return err_set(e, "--vary %s: reversed range '%s'; expected START <= STOP", ax->spec, item);
	double steps = floor((a[1] - a[0]) / a[2] + 1e-9);
	if (steps + 1 > SWEEP_MAX_POINTS)
		return err_set(e, "--vary %s: '%s' has %.0f values; expected at most %d", ax->spec, item,
			       steps + 1, SWEEP_MAX_POINTS);
	for (double i = 0; i <= steps; i++) {
		char v[64];
		snprintf(v, sizeof v, "%.12g", a[0] + i * a[2]);
		add_value(ax, cap, xstrdup(v));
	}
	return 0;
}

int sweep_axis_parse(struct sweep_axis *ax, const char *spec, struct err *e)
{
	memset(ax, 0, sizeof *ax);
	ax->spec = xstrdup(spec);
	const char *eq = strchr(spec, '=');
	if (!eq)
		return err_set(e, "--vary: expected KEY=V1,V2,… or KEY=START:STOP:STEP, got '%s'", spec);
	char *name = trim_dup(spec, eq);
	int bad = !name[0] || sweep_key_expand(name, ax->key, sizeof ax->key);
	if (bad)
		err_set(e, "--vary %s: unknown key '%s'; expected SECTION.KEY of a scenario (e.g. workload.request_rate) or one of %s",
			spec, name, sweep_short_names());
	free(name);
	if (bad)
		return -1;
	size_t cap = 0;
	char item[INI_VALUE_MAX];
	int got;
	for (const char *cur = eq + 1; (got = list_next(&cur, item, sizeof item)) != 0;) {
		int rc = 0;
		if (got < 0)
			rc = err_set(e, "--vary %s: expected a value or START:STOP:STEP %s, got %s", spec,
				     cur || ax->n ? "between commas" : "after '='", item[0] ? "too long a value" : "nothing");
		else if (strchr(item, ':'))
			rc = add_range(ax, &cap, item, e);
		else
			add_value(ax, &cap, xstrdup(item));
		if (rc)
			return -1;
		if (ax->n > SWEEP_MAX_POINTS)
			return err_set(e, "--vary %s: expected at most %d values", spec, SWEEP_MAX_POINTS);
	}
	ax->numeric = true;
	for (size_t i = 0; i < ax->n; i++) {
		double d;
		if (num_parse_double(ax->values[i], &d) || isinf(d))
			ax->numeric = false;
	}
	return 0;
}

void sweep_axis_free(struct sweep_axis *ax)
{
	for (size_t i = 0; i < ax->n; i++)
		free(ax->values[i]);
	free(ax->values);
	free(ax->spec);
	memset(ax, 0, sizeof *ax);
}

/* Names the catalog must know (hardware, models, precisions) are checked
 * once per value here, so a typo is bad input and not a failed point. */
static int check_names(const struct sweep_axis *ax, struct err *e)
{
	char path[4096];
	for (size_t i = 0; i < ax->n; i++) {
		const char *v = ax->values[i];
		int bad = 0;
		if (!strcmp(ax->key, "run.hardware"))
			bad = catalog_resolve(CATALOG_HARDWARE, v, path, sizeof path, e);
		else if (!strcmp(ax->key, "run.model"))
			bad = catalog_resolve(CATALOG_MODELS, v, path, sizeof path, e);
		else if (!strcmp(ax->key, "run.weights") && !precision_find(v)) {
			char names[512];
			precision_names(names, sizeof names);
			bad = err_set(e, "expected a precision (%s), got '%s'", names, v);
		}
		if (bad)
			return err_prefix(e, "--vary %s", ax->spec);
	}
	return 0;
}

int sweep_init(struct sweep *sw, const char *scenario_path, const struct inidoc *overrides,
	       const struct sweep_axis *axes, size_t n_axes, struct err *e)
{
	*sw = (struct sweep){ scenario_path, overrides, axes, n_axes, 1, 0 };
	for (size_t a = 0; a < n_axes; a++) {
		if (sw->n_points * axes[a].n > SWEEP_MAX_POINTS)
			return err_set(e, "--vary: the grid has more than %d points", SWEEP_MAX_POINTS);
		sw->n_points *= axes[a].n;
		if (check_names(&axes[a], e))
			return -1;
		for (size_t b = 0; b < a; b++)
			if (!strcmp(axes[a].key, axes[b].key))
				return err_set(e, "--vary %s: %s is varied twice; expected each key once",
					       axes[a].spec, axes[a].key);
	}
	return 0;
}

size_t sweep_coord(const struct sweep *sw, size_t i, size_t a)
{
	size_t stride = 1;
	for (size_t b = a + 1; b < sw->n_axes; b++)
		stride *= sw->axes[b].n;
	return i / stride % sw->axes[a].n;
}

/* Rewrites "--set KEY: …" (the scenario's words for an override) into
 * "--vary SPEC: …" for an axis's key, or prefixes the point's values. */
static void blame(const struct sweep *sw, size_t i, struct err *e)
{
	for (size_t a = 0; a < sw->n_axes; a++) {
		char head[INI_NAME_MAX * 2 + 16];
		int n = snprintf(head, sizeof head, "--set %s:", sw->axes[a].key);
		if (!strncmp(e->msg, head, (size_t)n)) {
			char rest[ERR_MSG_MAX];
			snprintf(rest, sizeof rest, "%s", e->msg + n);
			err_set(e, "--vary %s:%s", sw->axes[a].spec, rest);
			return;
		}
	}
	char at[512] = "";
	for (size_t a = 0; a < sw->n_axes; a++) {
		size_t len = strlen(at);
		snprintf(at + len, sizeof at - len, "%s%s=%s", a ? ", " : "", sw->axes[a].key,
			 sw->axes[a].values[sweep_coord(sw, i, a)]);
	}
	err_prefix(e, "--vary point %zu (%s)", i, at);
}

int sweep_point_scenario(const struct sweep *sw, size_t i, struct scenario *sc, struct err *e)
{
	struct inidoc ov = { 0 };
	int rc = 0;
	if (sw->overrides)
		inidoc_add_overrides(&ov, sw->overrides);
	for (size_t a = 0; a < sw->n_axes && !rc; a++) {
		if (inidoc_add_overridef(&ov, e, "%s=%s", sw->axes[a].key,
					 sw->axes[a].values[sweep_coord(sw, i, a)])) {
			err_prefix(e, "--vary %s", sw->axes[a].spec);
			rc = -1;
		}
	}
	if (!rc && scenario_load(sc, sw->scenario_path, &ov, e)) {
		blame(sw, i, e);
		rc = -1;
	}
	inidoc_free(&ov);
	return rc;
}

/* One simulation: replication `rep` of point `point`. */
struct task {
	size_t point;
	int rep;
	struct measure m;
	char *error;
};

struct run_ctx {
	const struct sweep *sw;
	struct task *tasks;
};

static void run_task(void *ctx, size_t i)
{
	struct run_ctx *rc = ctx;
	struct task *t = &rc->tasks[i];
	struct scenario base, sc;
	struct err e;
	if (sweep_point_scenario(rc->sw, t->point, &base, &e) == 0) {
		measure_replica(&sc, &base, t->rep);
		double n = ceil(sc.request_rate * rc->sw->duration_s);
		if (rc->sw->duration_s > 0 && isfinite(sc.request_rate) && !sc.trace[0] && !sc.n_stages &&
		    n > (double)sc.num_prompts)
			sc.num_prompts = n < 1e9 ? (int64_t)n : 1000000000;
		if (measure_run(&t->m, &sc, &e) == 0)
			return;
	}
	t->error = xstrdup(e.msg);
}

int sweep_run(const struct sweep *sw, const struct shard *sh, int replications, int jobs,
	      struct progress *progress,
	      struct sweep_point **out, size_t *n_out, struct err *e)
{
	size_t n = 0;
	struct sweep_point *pts = NULL;
	size_t cap = 0;
	struct scenario sc;
	for (size_t i = 0; i < sw->n_points; i++) {
		if (!resultdoc_in_shard(sh, i))
			continue;
		/* Every point is loaded once here so bad input stops the sweep
		 * before any simulation; the workers load it again (cheap). */
		if (sweep_point_scenario(sw, i, &sc, e)) {
			free(pts);
			return -1;
		}
		xgrow(&pts, &cap, n + 1, sizeof *pts);
		pts[n++] = (struct sweep_point){ .index = i };
	}
	size_t nt = n * (size_t)replications;
	struct task *tasks = xcalloc(nt ? nt : 1, sizeof *tasks);
	for (size_t t = 0; t < nt; t++) {
		tasks[t].point = pts[t / (size_t)replications].index;
		tasks[t].rep = (int)(t % (size_t)replications);
	}
	struct run_ctx ctx = { sw, tasks };
	par_for_progress(nt, jobs, run_task, &ctx, progress);
	struct measure *reps = xcalloc((size_t)replications, sizeof *reps);
	for (size_t p = 0; p < n; p++) {
		struct task *t = &tasks[p * (size_t)replications];
		for (int r = 0; r < replications; r++) {
			reps[r] = t[r].m;
			if (t[r].error && !pts[p].error)
				pts[p].error = t[r].error;
			else
				free(t[r].error);
		}
		if (!pts[p].error)
			measure_summarize(&pts[p].s, reps, replications);
	}
	free(reps);
	free(tasks);
	*out = pts;
	*n_out = n;
	return 0;
}
