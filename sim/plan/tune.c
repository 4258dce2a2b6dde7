/*
 * tune: the tuner's settings and search (tune.h): a setting's scenario,
 * fingerprint, JSON and --set flags; the coarse coordinate descent and the
 * fine search of the finalists, all candidates at once; the item JSON. The
 * space is tune_space.c, the confirmation tune_confirm.c (tune_int.h).
 *
 * Invariants: a candidate tries at most TUNE_MAX_CONFIGS settings, each
 * once (by fingerprint: picking the scenario's own value is the same
 * setting); every step is one plan_search over all candidates.
 */
#include "tune.h"

#include <gsl/gsl_cdf.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "resultdoc.h"
#include "tune_int.h"
#include "xalloc.h"

/* ---- settings ---- */

/* The value axis a runs with in setting c: its pick, or the scenario's own. */
static void axis_value(const struct tune_space *s, const struct tune_config *c, int a,
		       const struct scenario *own, char *v, size_t cap)
{
	if (c->pick[a] >= 0)
		snprintf(v, cap, "%s", s->axis[a].values[c->pick[a]]);
	else
		tune_own_text(own, s->axis[a].key, v, cap);
}

/* The setting's key: per axis the value it runs with (the scenario's own
 * value for -1, so that picking the value the scenario already has is the
 * same setting). */
static void fingerprint(const struct tune_space *s, const struct tune_config *c, const struct scenario *own,
			char *out, size_t cap)
{
	out[0] = '\0';
	for (int a = 0; a < s->n; a++) {
		char v[32];
		axis_value(s, c, a, own, v, sizeof v);
		size_t len = strlen(out);
		snprintf(out + len, cap - len, "%s=%s;", s->axis[a].key, v);
	}
}

static int load_config(struct scenario *sc, const struct tune_cand *t, const struct tune_space *s,
		       const struct tune_config *c, struct err *e)
{
	struct inidoc ov = { 0 };
	inidoc_add_overrides(&ov, &t->ov);
	int rc = 0;
	for (int a = 0; a < s->n && !rc; a++)
		if (c->pick[a] >= 0)
			rc = inidoc_add_overridef(&ov, e, "engine.%s=%s", s->axis[a].key,
						  s->axis[a].values[c->pick[a]]);
	rc = rc || scenario_load(sc, t->path, &ov, e);
	inidoc_free(&ov);
	return rc;
}

json_t *tune_config_json(const struct tune_space *s, const struct tune_config *c,
			 const struct scenario *own)
{
	json_t *j = json_object();
	for (int a = 0; a < s->n; a++) {
		char v[32];
		axis_value(s, c, a, own, v, sizeof v);
		json_t *val;
		json_t *parsed = json_loads(v, JSON_DECODE_ANY, NULL);
		if (parsed && (json_is_number(parsed) || json_is_boolean(parsed)))
			val = parsed;
		else {
			json_decref(parsed);
			val = json_string(v[0] ? v : "as the scenario");
		}
		json_object_set_new(j, s->axis[a].key, val);
	}
	return j;
}

void tune_config_flags(const struct tune_space *s, const struct tune_config *c, char *out, size_t cap)
{
	out[0] = '\0';
	for (int a = 0; a < s->n; a++) {
		if (c->pick[a] < 0)
			continue;
		size_t len = strlen(out);
		snprintf(out + len, cap - len, "%s--set engine.%s=%s", len ? " " : "", s->axis[a].key,
			 s->axis[a].values[c->pick[a]]);
	}
}

/* ---- the search ---- */

struct slot {
	struct tune_cand *t;
	size_t tried;                /* index in t->tried */
};

/* Index of the setting c of t in t->tried, adding it when new (then *is_new). */
static size_t find_or_add(struct tune_cand *t, const struct tune_space *s, const struct tune_config *c,
			  bool *is_new)
{
	char want[1024], have[1024];
	fingerprint(s, c, &t->cand->sc, want, sizeof want);
	for (size_t i = 0; i < t->n_tried; i++) {
		fingerprint(s, &t->tried[i].cfg, &t->cand->sc, have, sizeof have);
		if (!strcmp(want, have)) {
			*is_new = false;
			return i;
		}
	}
	t->tried = xrealloc(t->tried, (t->n_tried + 1) * sizeof *t->tried);
	t->tried[t->n_tried] = (struct tune_tried){ .cfg = *c, .rate = NAN };
	*is_new = true;
	return t->n_tried++;
}

/* Searches the settings in slots (coarse or fine by o), each starting at
 * start[i] when > 0 (the coarse steps: the best coarse rate so far), else
 * at the scenario's own load (the fine search). With keep, the
 * searched plan candidates are returned in keep[i] (the caller frees them);
 * else they are freed. */
static void search(struct slot *slots, size_t n, const double *start, const struct tune_space *s,
		   const struct plan_slo *slo, const struct plan_opts *o, bool fine, struct plan_cand *keep)
{
	struct plan_cand *pc = xcalloc(n + 1, sizeof *pc);
	size_t *from = xcalloc(n + 1, sizeof *from), m = 0;
	for (size_t i = 0; i < n; i++) {
		struct tune_cand *t = slots[i].t;
		struct tune_tried *tr = &t->tried[slots[i].tried];
		struct plan_cand c = *t->cand;
		struct err e;
		c.evals = NULL;
		c.n_evals = c.cap_evals = 0;
		c.error = NULL;
		if (load_config(&c.sc, t, s, &tr->cfg, &e)) {
			tr->error = xstrdup(e.msg);
			c.status = PLAN_INFEASIBLE;
			c.error = xstrdup(e.msg);
			if (keep)
				keep[i] = c;
			else
				free(c.error);
			continue;
		}
		if (start[i] > 0) {
			if (o->by == PLAN_BY_CONCURRENCY)
				c.sc.max_concurrency = (int64_t)fmax(1, floor(start[i]));
			else
				c.sc.request_rate = start[i];
		}
		pc[m] = c;
		from[m++] = i;
	}
	plan_search(pc, m, slo, o);
	for (size_t k = 0; k < m; k++) {
		struct slot *sl = &slots[from[k]];
		struct tune_tried *tr = &sl->t->tried[sl->tried];
		double rate = pc[k].status == PLAN_INFEASIBLE ? 0 : isnan(pc[k].lo) ? 0 : pc[k].lo;
		sl->t->simulations += (int64_t)(pc[k].n_evals ? pc[k].n_evals : 1) * o->replications;
		if (pc[k].error && !tr->error)
			tr->error = xstrdup(pc[k].error);
		if (fine) {
			tr->rate = rate;
		} else {
			tr->coarse_rate = rate;
		}
		if (keep)
			keep[from[k]] = pc[k];
		else
			plan_cand_free(&pc[k]);
	}
	free(from);
	free(pc);
}

/* One descent step: for each candidate, the settings that change axis a of
 * its current one to each of the axis's values. */
static void step_axis(struct tune_cand *t, size_t n, int a, struct tune_config *cur, const struct tune_space *s,
		      const struct plan_slo *slo, const struct plan_opts *coarse, bool *moved)
{
	size_t cap = n * TUNE_MAX_VALUES + 1, ns = 0;
	struct slot *slots = xcalloc(cap, sizeof *slots);
	double *start = xcalloc(cap, sizeof *start);
	size_t (*idx)[TUNE_MAX_VALUES] = xcalloc(n + 1, sizeof *idx);
	/* max_model_len is searched only to rescue a setting that cannot
	 * start (tune_space_default): one that runs keeps its own. */
	bool rescue = !strcmp(s->axis[a].key, "max_model_len");
	for (size_t i = 0; i < n; i++) {
		bool is_new;
		size_t now = find_or_add(&t[i], s, &cur[i], &is_new);
		for (int v = 0; v < s->axis[a].n; v++) {
			if (t[i].n_tried >= TUNE_MAX_CONFIGS || (rescue && !t[i].tried[now].error)) {
				idx[i][v] = now;
				continue;
			}
			struct tune_config c = cur[i];
			c.pick[a] = (int8_t)v;
			idx[i][v] = find_or_add(&t[i], s, &c, &is_new);
			if (is_new) {
				start[ns] = t[i].tried[now].coarse_rate;
				slots[ns++] = (struct slot){ &t[i], idx[i][v] };
			} else {
				t[i].reused++;
			}
		}
	}
	search(slots, ns, start, s, slo, coarse, false, NULL);
	for (size_t i = 0; i < n; i++) {
		bool is_new;
		size_t now = find_or_add(&t[i], s, &cur[i], &is_new), best = now;
		double base = t[i].tried[now].coarse_rate, top = base;
		for (int v = 0; v < s->axis[a].n; v++)
			if (t[i].tried[idx[i][v]].coarse_rate > top) {
				top = t[i].tried[idx[i][v]].coarse_rate;
				best = idx[i][v];
			}
		if (best != now && top > base * (1 + coarse->tolerance)) {
			cur[i] = t[i].tried[best].cfg;
			*moved = true;
		}
	}
	free(idx);
	free(start);
	free(slots);
}

static int by_coarse(const void *pa, const void *pb, void *ctx)
{
	const struct tune_tried *tr = ctx;
	const size_t *a = pa, *b = pb;
	double x = tr[*a].coarse_rate, y = tr[*b].coarse_rate;
	if (x != y)
		return x > y ? -1 : 1;
	return (*a > *b) - (*a < *b);
}

/* Insertion sort of idx[0..n) by coarse rate, best first (n is small). */
static void sort_by_coarse(size_t *idx, size_t n, const struct tune_tried *tr)
{
	for (size_t i = 1; i < n; i++)
		for (size_t j = i; j > 0 && by_coarse(&idx[j], &idx[j - 1], (void *)tr) < 0; j--) {
			size_t x = idx[j];
			idx[j] = idx[j - 1];
			idx[j - 1] = x;
		}
}

void tune_run(struct tune_cand *t, size_t n, const struct tune_space *s, const struct plan_slo *slo,
	      const struct plan_opts *o)
{
	struct plan_opts coarse = *o;
	coarse.replications = 1;
	coarse.tolerance = fmax(o->tolerance, 0.05);
	struct tune_config *cur = xcalloc(n + 1, sizeof *cur);
	for (size_t i = 0; i < n; i++) {
		memset(cur[i].pick, -1, sizeof cur[i].pick);
		t[i].winner = -1;
		t[i].n_finalists = 0;
	}
	/* The scenario's own setting first: every other starts from its rate. */
	{
		struct slot *slots = xcalloc(n + 1, sizeof *slots);
		double *start = xcalloc(n + 1, sizeof *start);
		for (size_t i = 0; i < n; i++) {
			bool is_new;
			slots[i] = (struct slot){ &t[i], find_or_add(&t[i], s, &cur[i], &is_new) };
		}
		search(slots, n, start, s, slo, &coarse, false, NULL);
		free(start);
		free(slots);
	}
	for (int pass = 0; pass < 2; pass++) {
		bool moved = false;
		for (int a = 0; a < s->n; a++)
			step_axis(t, n, a, cur, s, slo, &coarse, &moved);
		if (!moved)
			break;
	}
	/* Fine: the finalists of every candidate in one search. */
	struct slot *slots = xcalloc(n * TUNE_FINALISTS + 1, sizeof *slots);
	double *start = xcalloc(n * TUNE_FINALISTS + 1, sizeof *start);
	size_t ns = 0;
	for (size_t i = 0; i < n; i++) {
		size_t *idx = xcalloc(t[i].n_tried + 1, sizeof *idx);
		for (size_t k = 0; k < t[i].n_tried; k++)
			idx[k] = k;
		sort_by_coarse(idx, t[i].n_tried, t[i].tried);
		for (size_t k = 0; k < t[i].n_tried && t[i].n_finalists < TUNE_FINALISTS; k++) {
			const struct tune_tried *tk = &t[i].tried[idx[k]];
			bool same = false;
			for (int f = 0; f < t[i].n_finalists; f++) {
				const struct tune_tried *tf = &t[i].tried[t[i].finalists[f]];
				same |= fabs(tf->coarse_rate - tk->coarse_rate) <= 1e-3 * tf->coarse_rate;
			}
			if ((tk->error || same) && t[i].n_finalists > 0)
				continue;
			t[i].finalists[t[i].n_finalists++] = (int)idx[k];
			/* From the scenario's own load, as `--fixed` with the
			 * printed --set line searches it: a search started at the
			 * coarse rate brackets a noisy pass/fail differently and
			 * its rate did not reproduce (test_plan_tune). */
			start[ns] = 0;
			slots[ns++] = (struct slot){ &t[i], idx[k] };
		}
		free(idx);
	}
	struct plan_cand *kept = xcalloc(ns + 1, sizeof *kept);
	search(slots, ns, start, s, slo, o, true, kept);
	/* The winner: the best fine rate; ties, the better coarse rank. */
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		int nf = t[i].n_finalists, best = 0;
		for (int f = 1; f < nf; f++)
			if (t[i].tried[t[i].finalists[f]].rate > t[i].tried[t[i].finalists[best]].rate)
				best = f;
		/* Finalists best first by fine rate (stable). */
		int order[TUNE_FINALISTS], no = 0;
		order[no++] = best;
		for (int f = 0; f < nf; f++)
			if (f != best)
				order[no++] = f;
		for (int x = 1; x < no; x++)
			for (int y = x; y > 1 && t[i].tried[t[i].finalists[order[y]]].rate >
							 t[i].tried[t[i].finalists[order[y - 1]]].rate;
			     y--) {
				int z = order[y];
				order[y] = order[y - 1];
				order[y - 1] = z;
			}
		int fin[TUNE_FINALISTS];
		for (int f = 0; f < nf; f++)
			fin[f] = t[i].finalists[order[f]];
		t[i].winner = fin[0];
		struct plan_cand *w = &kept[k + (size_t)order[0]];
		struct scenario own;
		struct err e;
		plan_cand_free(t[i].cand);
		*t[i].cand = *w;
		if (!load_config(&own, &t[i], s, &t[i].tried[fin[0]].cfg, &e))
			t[i].cand->sc = own;   /* without the search's starting load */
		for (int f = 0; f < nf; f++) {
			t[i].finalists[f] = fin[f];
			if (f != order[0])
				plan_cand_free(&kept[k + (size_t)f]);
		}
		k += (size_t)nf;
	}
	free(kept);
	free(start);
	free(slots);
	free(cur);
	tune_confirm(t, n, slo, o);
}

void tune_cand_free(struct tune_cand *t)
{
	for (size_t i = 0; i < t->n_tried; i++)
		free(t->tried[i].error);
	free(t->tried);
	t->tried = NULL;
	t->n_tried = 0;
}

json_t *tune_item_json(const struct tune_cand *t, const struct tune_space *s, const struct plan_opts *o)
{
	(void)o;
	json_t *j = json_object();
	struct scenario base;
	struct err e;
	struct tune_config own;
	memset(own.pick, -1, sizeof own.pick);
	/* The scenario's own values, for the axes left as they are. */
	if (load_config(&base, t, s, &own, &e))
		base = t->cand->sc;
	char flags[2048];
	if (t->winner >= 0) {
		const struct tune_tried *w = &t->tried[t->winner];
		json_object_set_new(j, "config", tune_config_json(s, &w->cfg, &base));
		tune_config_flags(s, &w->cfg, flags, sizeof flags);
		json_object_set_new(j, "set", json_string(flags));
	}
	json_object_set_new(j, "settings_tried", json_integer((json_int_t)t->n_tried));
	json_object_set_new(j, "simulations", json_integer(t->simulations));
	json_object_set_new(j, "reused", json_integer(t->reused));
	double half = NAN, load_half = NAN;
	if (t->winner >= 0)
		resultdoc_put(j, "selection_rate", t->selection_rate, 4);
	if (t->n_confirmed > 0) {
		json_t *c = json_object(), *rates = json_array();
		double sum = 0, ss = 0;
		int B = t->n_confirmed;
		for (int b = 0; b < B; b++) {
			sum += t->confirmed[b];
			json_array_append_new(rates, json_real(round(t->confirmed[b] * 1e4) / 1e4));
		}
		double mean = sum / B;
		for (int b = 0; b < B; b++)
			ss += (t->confirmed[b] - mean) * (t->confirmed[b] - mean);
		double lm = 0, lss = 0;
		for (int b = 0; b < B; b++)
			lm += t->confirmed_load[b] / B;
		for (int b = 0; b < B; b++)
			lss += (t->confirmed_load[b] - lm) * (t->confirmed_load[b] - lm);
		if (B >= 2) {
			double tq = gsl_cdf_tdist_Pinv(0.975, B - 1);
			half = tq * sqrt(ss / (B - 1)) / sqrt(B);
			load_half = tq * sqrt(lss / (B - 1)) / sqrt(B);
		}
		json_object_set_new(c, "seed_offset", json_integer((json_int_t)t->confirm_seed_offset));
		json_object_set_new(c, "blocks", json_integer(B));
		json_object_set_new(c, "rates", rates);
		resultdoc_put(c, "mean", mean, 4);
		resultdoc_put(c, "ci95", half, 4);
		json_object_set_new(j, "confirmation", c);
	}
	json_t *ru = json_array();
	for (int f = 1; f < t->n_finalists; f++) {
		const struct tune_tried *r = &t->tried[t->finalists[f]];
		json_t *x = json_object();
		json_object_set_new(x, "config", tune_config_json(s, &r->cfg, &base));
		tune_config_flags(s, &r->cfg, flags, sizeof flags);
		json_object_set_new(x, "set", json_string(flags));
		resultdoc_put(x, "max_rate", r->rate, 4);
		/* In the unit the finalists were searched in (a load),
		 * against the spread of the winner's load over the blocks. */
		if (!isnan(load_half))
			json_object_set_new(x, "indistinguishable",
					    json_boolean(t->tried[t->winner].rate - r->rate <= load_half));
		if (r->error)
			json_object_set_new(x, "error", json_string(r->error));
		json_array_append_new(ru, x);
	}
	json_object_set_new(j, "runners_up", ru);
	return j;
}
