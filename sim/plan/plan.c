#include "plan.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "hwprofile.h"
#include "model.h"
#include "num.h"
#include "par.h"
#include "plot.h"
#include "xalloc.h"

const char *const plan_status_names[] = { "ok", "not-reached", "unreachable", "infeasible" };

/* ---- SLO ---- */

static const char *const slo_metrics[] = { "ttft", "tpot", "itl", "e2el" };
static const char *const slo_stats[] = { "mean", "p50", "p90", "p95", "p99" };

static int index_of(const char *const *v, size_t n, const char *s)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(v[i], s))
			return (int)i;
	return -1;
}

static int slo_item(struct plan_slo *slo, const char *item, struct err *e)
{
	char name[64], parts[3][64];
	const char *eq = strchr(item, '=');
	if (!eq || (size_t)(eq - item) >= sizeof name)
		return err_set(e, "--slo: expected METRIC=VALUE (e.g. itl_p99_ms=50), got '%s'", item);
	memcpy(name, item, (size_t)(eq - item));
	name[eq - item] = '\0';
	int n = 0;
	char *save = NULL;
	for (char *tok = strtok_r(name, "_", &save); tok; tok = strtok_r(NULL, "_", &save)) {
		if (n < 3)
			snprintf(parts[n], sizeof parts[n], "%s", tok);
		n++;
	}
	memcpy(name, item, (size_t)(eq - item));
	name[eq - item] = '\0';
	if (n != 3 || index_of(slo_metrics, 4, parts[0]) < 0)
		return err_set(e, "--slo: unknown metric '%s'; expected ttft, tpot, itl or e2el, then a statistic (mean, p50, p90, p95, p99) and a unit (ms or s), e.g. itl_p99_ms=50",
			       name);
	if (index_of(slo_stats, 5, parts[1]) < 0)
		return err_set(e, "--slo: unknown statistic '%s' in '%s'; expected mean, p50, p90, p95 or p99",
			       parts[1], name);
	double scale;
	if (!strcmp(parts[2], "ms"))
		scale = 1;
	else if (!strcmp(parts[2], "s"))
		scale = 1e3;
	else
		return err_set(e, "--slo: unknown unit '%s' in '%s'; expected ms or s", parts[2], name);
	double v;
	if (num_parse_double(eq + 1, &v) || !(v > 0) || isinf(v))
		return err_set(e, "--slo: %s: expected a limit > 0 in %s, got '%s'", name, parts[2], eq + 1);
	char key[160];
	snprintf(key, sizeof key, "%s_%s_ms", parts[0], parts[1]);
	int id = measure_find(key);
	for (int i = 0; i < slo->n; i++)
		if (slo->metric[i] == id)
			return err_set(e, "--slo: %s given twice; expected each metric once", key);
	if (slo->n == PLAN_MAX_SLO)
		return err_set(e, "--slo: expected at most %d limits", PLAN_MAX_SLO);
	slo->metric[slo->n] = id;
	slo->limit[slo->n++] = v * scale;
	return 0;
}

int plan_slo_parse(struct plan_slo *slo, const char *spec, struct err *e)
{
	memset(slo, 0, sizeof *slo);
	char buf[512];
	if (strlen(spec) >= sizeof buf)
		return err_set(e, "--slo: expected at most %zu characters", sizeof buf - 1);
	snprintf(buf, sizeof buf, "%s", spec);
	char *s = buf;
	for (;;) {
		char *comma = strchr(s, ',');
		if (comma)
			*comma = '\0';
		while (*s == ' ')
			s++;
		if (!*s)
			return err_set(e, "--slo: expected METRIC=VALUE[,METRIC=VALUE…] (e.g. ttft_p99_ms=2000,itl_p99_ms=50), got '%s'",
				       spec);
		if (slo_item(slo, s, e))
			return -1;
		if (!comma)
			return 0;
		s = comma + 1;
	}
}

int plan_slo_from_scenario(struct plan_slo *slo, const struct scenario *sc)
{
	memset(slo, 0, sizeof *slo);
	const struct {
		double ms;
		int id;
	} v[] = { { sc->slo_ttft_ms, MEAS_TTFT_P99 }, { sc->slo_tpot_ms, MEAS_TPOT_P99 },
		  { sc->slo_e2el_ms, MEAS_E2EL_P99 } };
	for (int i = 0; i < 3; i++)
		if (v[i].ms > 0) {
			slo->metric[slo->n] = v[i].id;
			slo->limit[slo->n++] = v[i].ms;
		}
	return slo->n;
}

void plan_slo_text(const struct plan_slo *slo, char *out, size_t cap)
{
	out[0] = '\0';
	for (int i = 0; i < slo->n; i++) {
		size_t len = strlen(out);
		snprintf(out + len, cap - len, "%s%s <= %g", i ? ", " : "", measure_descs[slo->metric[i]].name,
			 slo->limit[i]);
	}
}

void plan_opts_default(struct plan_opts *o)
{
	*o = (struct plan_opts){ .by = PLAN_BY_RATE, .replications = 5, .confidence = 0.95,
				 .tolerance = 0.02, .max_rate = 1000, .max_evals = 40, .duration_s = 60,
				 .jobs = par_default_jobs() };
}

/* ---- candidates ---- */

int plan_cand_init(struct plan_cand *c, size_t index, const struct scenario *sc, bool cost,
		   const char *origin, struct err *e)
{
	memset(c, 0, sizeof *c);
	c->index = index;
	c->sc = *sc;
	c->price_usd_per_gpu_hour = NAN;
	c->lo = c->hi = NAN;
	struct model m;
	if (!sc->weights[0] && model_load_named(&m, sc->model, e))
		return err_prefix(e, "%s", sc->path);
	snprintf(c->weights, sizeof c->weights, "%.15s", sc->weights[0] ? sc->weights : m.weights);
	if (!cost)
		return 0;
	struct hw_profile hw;
	if (hw_load_named(&hw, sc->hardware, e))
		return err_prefix(e, "%s", origin);
	if (!hw.has_price)
		return err_set(e, "%s: hardware '%s' has no [price] price_per_hour_usd; expected a profile with a price to compute cost (add one, or pass --no-cost)",
			       origin, hw.id);
	c->price_usd_per_gpu_hour = hw.price_per_hour_usd;
	return 0;
}

int plan_check_searchable(const struct scenario *sc, struct err *e)
{
	if (sc->trace[0] || sc->n_stages || sc->users > 0)
		return err_set(e, "%s: [workload] %s: the SLO search varies the request rate (or concurrency) of an open-loop workload; expected a scenario without trace, stages or users",
			       sc->path, sc->trace[0] ? "trace" : sc->n_stages ? "stages" : "users");
	return 0;
}

void plan_cand_free(struct plan_cand *c)
{
	free(c->evals);
	free(c->error);
	c->evals = NULL;
	c->error = NULL;
}

/* ---- search ---- */

#define MIN_RATE 0.001          /* req/s: below this the SLO counts as unreachable */

static void at_load(struct scenario *out, const struct plan_cand *c, const struct plan_opts *o,
		    double load, int rep)
{
	measure_replica(out, &c->sc, rep);
	if (o->by == PLAN_BY_CONCURRENCY) {
		out->max_concurrency = (int64_t)load;
		out->request_rate = INFINITY;
	} else {
		out->request_rate = load;
		double n = ceil(load * o->duration_s);
		if (n > (double)out->num_prompts)
			out->num_prompts = n < 1e9 ? (int64_t)n : 1000000000;
	}
}

static double start_load(const struct plan_cand *c, const struct plan_opts *o)
{
	if (o->by == PLAN_BY_CONCURRENCY)
		return fmin(c->sc.max_concurrency > 0 ? (double)c->sc.max_concurrency : 8, o->max_rate);
	double r = c->sc.request_rate;
	return fmin(isfinite(r) && r > 0 ? r : 1, o->max_rate);
}

/* The largest bound / limit over the SLO (1 = exactly at a limit); +inf
 * when no request completed. */
static double worst_ratio(const struct measure_summary *s, const struct plan_slo *slo, double conf,
			  int *which)
{
	double w = 0;
	*which = slo->n ? 0 : -1;
	for (int i = 0; i < slo->n; i++) {
		double r = measure_upper_bound(s, slo->metric[i], conf) / slo->limit[i];
		if (r > w || isnan(r)) {
			w = isnan(r) ? INFINITY : r;
			*which = i;
		}
	}
	return s->mean[MEAS_COMPLETED] > 0 ? w : INFINITY;
}

/* Moves a candidate's search on after the load c->next was judged. */
static void advance(struct plan_cand *c, bool pass, const struct measure_summary *s,
		    const struct plan_opts *o)
{
	bool conc = o->by == PLAN_BY_CONCURRENCY;
	double x = c->next;
	if (pass) {
		c->lo = x;
		c->at_lo = *s;
	} else {
		c->hi = x;
		c->at_hi = *s;
	}
	c->next = NAN;
	if (isnan(c->lo)) {
		double down = conc ? floor(x / 2) : x / 2;
		if (down < (conc ? 1 : MIN_RATE))
			c->status = PLAN_UNREACHABLE;
		else
			c->next = down;
	} else if (isnan(c->hi)) {
		if (x >= o->max_rate)
			c->status = PLAN_NOT_REACHED;
		else
			c->next = fmin(2 * x, o->max_rate);
	} else if (conc ? c->hi - c->lo > 1 : c->hi - c->lo > o->tolerance * c->hi) {
		c->next = conc ? floor((c->lo + c->hi) / 2) : (c->lo + c->hi) / 2;
	}
	if (!isnan(c->next) && c->n_evals >= (size_t)o->max_evals) {
		c->next = NAN;   /* out of evaluations: report the bracket as it is */
		c->status = isnan(c->lo) ? PLAN_UNREACHABLE : isnan(c->hi) ? PLAN_NOT_REACHED : PLAN_OK;
	}
}

struct task {
	struct plan_cand *c;
	int rep;
	struct measure m;
	char *error;
	const struct plan_opts *o;
};

static void run_task(void *ctx, size_t i)
{
	struct task *t = &((struct task *)ctx)[i];
	struct scenario sc;
	struct err e;
	at_load(&sc, t->c, t->o, t->c->next, t->rep);
	if (measure_run(&t->m, &sc, &e))
		t->error = xstrdup(e.msg);
}

void plan_search(struct plan_cand *c, size_t n, const struct plan_slo *slo,
		 const struct plan_opts *o)
{
	int R = o->replications;
	for (size_t i = 0; i < n; i++) {
		c[i].status = PLAN_OK;
		c[i].lo = c[i].hi = NAN;
		c[i].next = start_load(&c[i], o);
	}
	struct task *tasks = xcalloc(n * (size_t)R + 1, sizeof *tasks);
	struct measure *reps = xcalloc((size_t)R, sizeof *reps);
	for (;;) {
		/* One round: the next load of every candidate still searching,
		 * all replications, in parallel. */
		size_t nt = 0;
		for (size_t i = 0; i < n; i++)
			for (int r = 0; !isnan(c[i].next) && r < R; r++)
				tasks[nt++] = (struct task){ .c = &c[i], .rep = r, .o = o };
		if (nt == 0)
			break;
		par_for(nt, o->jobs, run_task, tasks);
		for (size_t t = 0; t < nt; t += (size_t)R) {
			struct plan_cand *cd = tasks[t].c;
			for (int r = 0; r < R; r++) {
				reps[r] = tasks[t + (size_t)r].m;
				if (tasks[t + (size_t)r].error && !cd->error)
					cd->error = tasks[t + (size_t)r].error;
				else
					free(tasks[t + (size_t)r].error);
			}
			if (cd->error) {
				cd->status = PLAN_INFEASIBLE;
				cd->next = NAN;
				continue;
			}
			struct measure_summary s;
			measure_summarize(&s, reps, R);
			int which;
			double w = worst_ratio(&s, slo, o->confidence, &which);
			xgrow(&cd->evals, &cd->cap_evals, cd->n_evals + 1, sizeof *cd->evals);
			cd->evals[cd->n_evals++] = (struct plan_eval){ cd->next, w, w <= 1 };
			advance(cd, w <= 1, &s, o);
		}
	}
	free(reps);
	free(tasks);
}

double plan_sustained_rate(const struct plan_cand *c, const struct plan_opts *o)
{
	if (isnan(c->lo))
		return 0;
	return o->by == PLAN_BY_CONCURRENCY ? c->at_lo.mean[MEAS_REQUEST_THROUGHPUT] : c->lo;
}

double plan_tokens_per_s(const struct plan_cand *c, const struct plan_opts *o)
{
	double rate = plan_sustained_rate(c, o), req_s = c->at_lo.mean[MEAS_REQUEST_THROUGHPUT];
	if (!(rate > 0) || !(req_s > 0))
		return NAN;
	return rate * c->at_lo.mean[MEAS_OUTPUT_THROUGHPUT] / req_s;
}

static const char *load_unit(const struct plan_opts *o)
{
	return o->by == PLAN_BY_CONCURRENCY ? "concurrent requests" : "req/s";
}

const char *plan_limit(const struct plan_cand *c, const struct plan_slo *slo, const struct plan_opts *o,
		       char *detail, size_t cap)
{
	const struct measure_summary *s = &c->at_hi;
	int which = -1;
	switch (c->status) {
	case PLAN_INFEASIBLE:
		snprintf(detail, cap, "%s", c->error ? c->error : "cannot run");
		return "infeasible";
	case PLAN_NOT_REACHED:
		snprintf(detail, cap, "meets the SLO at %g %s, the search's upper end (--max-rate)", c->lo,
			 load_unit(o));
		return "none";
	case PLAN_UNREACHABLE:
		worst_ratio(s, slo, o->confidence, &which);
		if (s->mean[MEAS_COMPLETED] <= 0)
			snprintf(detail, cap, "no request completes even at %g %s", c->hi, load_unit(o));
		else
			snprintf(detail, cap, "even at %g %s, %s is %.4g (limit %g): the SLO is below one request's own latency",
				 c->hi, load_unit(o), measure_descs[slo->metric[which]].name,
				 s->mean[slo->metric[which]], slo->limit[which]);
		return "latency-floor";
	}
	worst_ratio(s, slo, o->confidence, &which);
	int m = slo->metric[which];
	char at[96];
	snprintf(at, sizeof at, "at %g %s (the lowest load that fails)", c->hi, load_unit(o));
	if (s->mean[MEAS_PEAK_KV_USAGE] >= 0.95 || s->mean[MEAS_PREEMPTIONS] > 0) {
		snprintf(detail, cap, "%s: peak KV usage %.0f%%, %.4g preemptions per run; %s breaks first",
			 at, 100 * s->mean[MEAS_PEAK_KV_USAGE], s->mean[MEAS_PREEMPTIONS],
			 measure_descs[m].name);
		return "kv-pool";
	}
	/* The p99 as the pass rule reads it: its upper confidence bound. */
	double p99 = measure_upper_bound(s, MEAS_ITL_P99, o->confidence);
	double ratio = s->mean[MEAS_ITL_P50] > 0 ? p99 / s->mean[MEAS_ITL_P50] : 0;
	if (m >= MEAS_TPOT_MEAN && m <= MEAS_ITL_P99 && ratio > 2) {
		snprintf(detail, cap, "%s: %s breaks first and ITL p99/p50 = %.2f: prefill chunks stretch the decode steps they share (C20, C21)",
			 at, measure_descs[m].name, ratio);
		return "prefill-interference";
	}
	static const struct {
		int id;
		const char *name;
	} res[] = { { MEAS_COMPUTE_S, "compute" }, { MEAS_BANDWIDTH_S, "bandwidth" },
		    { MEAS_OVERHEAD_S, "step-overhead" }, { MEAS_ALLREDUCE_S, "interconnect" } };
	double total = 0;
	int best = 0;
	for (int i = 0; i < 4; i++) {
		total += s->mean[res[i].id];
		if (s->mean[res[i].id] > s->mean[res[best].id])
			best = i;
	}
	if (total <= 0)
		total = 1;
	snprintf(detail, cap, "%s: %s breaks first; step time %.0f%% compute, %.0f%% bandwidth, %.0f%% overhead, %.0f%% all-reduce",
		 at, measure_descs[m].name, 100 * s->mean[MEAS_COMPUTE_S] / total,
		 100 * s->mean[MEAS_BANDWIDTH_S] / total, 100 * s->mean[MEAS_OVERHEAD_S] / total,
		 100 * s->mean[MEAS_ALLREDUCE_S] / total);
	return res[best].name;
}

/* ---- documents ---- */

static void put(json_t *o, const char *key, double v, int decimals)
{
	json_object_set_new(o, key, resultdoc_real(v, decimals));
}

json_t *plan_search_json(const struct plan_slo *slo, const struct plan_opts *o)
{
	json_t *j = json_object(), *limits = json_object();
	for (int i = 0; i < slo->n; i++)
		put(limits, measure_descs[slo->metric[i]].name, slo->limit[i], 6);
	json_object_set_new(j, "slo", limits);
	json_object_set_new(j, "by", json_string(o->by == PLAN_BY_CONCURRENCY ? "concurrency" : "rate"));
	json_object_set_new(j, "replications", json_integer(o->replications));
	put(j, "confidence", o->confidence, 6);
	put(j, "tolerance", o->tolerance, 6);
	put(j, "max_load", o->max_rate, 6);
	put(j, "duration_s", o->duration_s, 3);
	json_object_set_new(j, "max_evaluations", json_integer(o->max_evals));
	return j;
}

/* The metrics kept for a candidate at its limit. */
static const int limit_metrics[] = {
	MEAS_REQUEST_THROUGHPUT, MEAS_OUTPUT_THROUGHPUT, MEAS_TTFT_P50, MEAS_TTFT_P99, MEAS_TPOT_P99,
	MEAS_ITL_P50, MEAS_ITL_P99, MEAS_E2EL_P99, MEAS_PEAK_KV_USAGE, MEAS_PREEMPTIONS,
};

json_t *plan_cand_json(const struct plan_cand *c, const struct plan_slo *slo, const struct plan_opts *o)
{
	json_t *j = json_object();
	json_object_set_new(j, "status", json_string(plan_status_names[c->status]));
	put(j, "max_rate", plan_sustained_rate(c, o), 4);
	if (o->by == PLAN_BY_CONCURRENCY)
		put(j, "max_concurrency", isnan(c->lo) ? 0 : c->lo, 0);
	put(j, "first_failing_load", c->hi, 4);
	if (o->by == PLAN_BY_RATE && c->lo > 0) {
		/* How long the run at the limit sends requests: a run much
		 * shorter than its latencies never reaches a steady state. */
		struct scenario sc;
		at_load(&sc, c, o, c->lo, 0);
		put(j, "arrival_window_s", (double)sc.num_prompts / c->lo, 3);
	}
	json_object_set_new(j, "evaluations", json_integer((json_int_t)c->n_evals));
	json_t *at = json_object();
	if (!isnan(c->lo)) {
		for (size_t k = 0; k < sizeof limit_metrics / sizeof *limit_metrics; k++) {
			const struct measure_desc *d = &measure_descs[limit_metrics[k]];
			put(at, d->name, c->at_lo.mean[limit_metrics[k]], d->decimals);
		}
		for (int i = 0; i < slo->n; i++) {
			const struct measure_desc *d = &measure_descs[slo->metric[i]];
			put(at, d->name, c->at_lo.mean[slo->metric[i]], d->decimals);
		}
	}
	json_object_set_new(j, "at_limit", at);
	char detail[ERR_MSG_MAX + 256];
	const char *lim = plan_limit(c, slo, o, detail, sizeof detail);
	json_object_set_new(j, "limit", json_string(lim));
	json_object_set_new(j, "limit_detail", json_string(detail));
	json_t *trace = json_array();
	for (size_t i = 0; i < c->n_evals; i++)
		json_array_append_new(trace, json_pack("[ooo]", resultdoc_real(c->evals[i].load, 4),
						       resultdoc_real(c->evals[i].worst, 4),
						       json_boolean(c->evals[i].pass)));
	json_object_set_new(j, "search", trace);
	return j;
}

static void header(json_t *doc, const char *scenario, const struct inidoc *ov)
{
	json_object_set_new(doc, "scenario", json_string(scenario ? scenario : "built-in default"));
	json_t *set = json_array();
	for (size_t k = 0; ov && k < ov->len; k++)
		json_array_append_new(set, json_sprintf("%s.%s=%s", ov->entries[k].section, ov->entries[k].key,
							ov->entries[k].value));
	json_object_set_new(doc, "set", set);
}

json_t *plan_doc(const char *scenario, const struct inidoc *overrides, const struct plan_slo *slo,
		 const struct plan_opts *o, double target_rate, bool cost, size_t total,
		 const struct shard *sh, const struct plan_cand *c, size_t n)
{
	json_t *doc = resultdoc_new(&plan_doc_kind);
	header(doc, scenario, overrides);
	json_object_set_new(doc, "search", plan_search_json(slo, o));
	put(doc, "target_rate", target_rate, 6);
	json_object_set_new(doc, "cost", json_boolean(cost));
	json_t *items = json_array();
	for (size_t i = 0; i < n; i++) {
		json_t *it = json_object();
		const struct scenario *sc = &c[i].sc;
		json_object_set_new(it, "candidate", json_integer((json_int_t)c[i].index));
		json_object_set_new(it, "hardware", json_string(sc->hardware));
		json_object_set_new(it, "tensor_parallel_size", json_integer(sc->tensor_parallel_size));
		json_object_set_new(it, "weights", json_string(c[i].weights));
		json_t *sj = plan_cand_json(&c[i], slo, o);
		json_object_update(it, sj);
		json_decref(sj);
		/* Capacity and cost: replicas for the target (one without it). */
		double rate = plan_sustained_rate(&c[i], o);
		double tp = (double)sc->tensor_parallel_size;
		double replicas = isnan(target_rate) ? 1 : rate > 0 ? ceil(target_rate / rate - 1e-9) : NAN;
		double gpus = replicas * tp;
		double tok_s = plan_tokens_per_s(&c[i], o) * (isnan(target_rate) ? 1 : target_rate / rate);
		double usd_h = gpus * c[i].price_usd_per_gpu_hour;
		put(it, "replicas", replicas, 0);
		put(it, "gpus", gpus, 0);
		put(it, "price_usd_per_gpu_hour", c[i].price_usd_per_gpu_hour, 4);
		put(it, "usd_per_hour", rate > 0 ? usd_h : NAN, 4);
		put(it, "usd_per_1m_output_tokens", tok_s > 0 ? usd_h / (tok_s * 3600) * 1e6 : NAN, 4);
		if (c[i].error)
			json_object_set_new(it, "error", json_string(c[i].error));
		json_array_append_new(items, it);
	}
	resultdoc_close(doc, &plan_doc_kind, total, sh, items);
	return doc;
}

/* Ranking: candidates that sustain some load first; then, with cost, the
 * cheapest per hour for the target (without a target: per 1M output
 * tokens at the limit); without cost, the fewest GPUs for the target
 * (without a target: the highest rate per GPU). Ties: the lower index. */
struct rank_key {
	size_t pos;
	int usable;
	double k1, k2;
};

static int by_rank(const void *a, const void *b)
{
	const struct rank_key *x = a, *y = b;
	if (x->usable != y->usable)
		return y->usable - x->usable;
	if (x->usable) {
		if (x->k1 != y->k1)
			return x->k1 < y->k1 ? -1 : 1;
		if (x->k2 != y->k2)
			return x->k2 < y->k2 ? -1 : 1;
	}
	return (x->pos > y->pos) - (x->pos < y->pos);
}

static void plan_finish(json_t *doc)
{
	json_t *items = json_object_get(doc, "candidates");
	bool cost = json_is_true(json_object_get(doc, "cost"));
	bool target = !isnan(resultdoc_num(doc, "target_rate"));
	size_t n = json_array_size(items);
	struct rank_key *k = xcalloc(n ? n : 1, sizeof *k);
	for (size_t i = 0; i < n; i++) {
		json_t *it = json_array_get(items, i);
		double rate = resultdoc_num(it, "max_rate"), gpus = resultdoc_num(it, "gpus");
		double tp = resultdoc_num(it, "tensor_parallel_size");
		k[i].pos = i;
		k[i].usable = rate > 0;
		if (cost) {
			k[i].k1 = target ? resultdoc_num(it, "usd_per_hour") :
					   resultdoc_num(it, "usd_per_1m_output_tokens");
			k[i].k2 = target ? resultdoc_num(it, "usd_per_1m_output_tokens") : -rate;
		} else {
			k[i].k1 = target ? gpus : -rate / tp;
			k[i].k2 = -rate;
		}
		if (isnan(k[i].k1) || isnan(k[i].k2))
			k[i].usable = 0;
	}
	qsort(k, n, sizeof *k, by_rank);
	json_t *ranking = json_array();
	for (size_t i = 0; i < n; i++)
		json_array_append_new(ranking, json_integer(resultdoc_num(json_array_get(items, k[i].pos),
									  "candidate")));
	json_object_set_new(doc, "ranking", ranking);
	json_object_set_new(doc, "winner", n && k[0].usable ?
						   json_integer(resultdoc_num(json_array_get(items, k[0].pos),
									      "candidate")) :
						   json_null());
	free(k);
}

/* The items in rank order when ranked, else in index order. */
static json_t *in_order(json_t *doc, size_t i)
{
	json_t *items = json_object_get(doc, "candidates");
	json_t *ranking = json_object_get(doc, "ranking");
	if (!ranking)
		return json_array_get(items, i);
	json_int_t want = json_integer_value(json_array_get(ranking, i));
	size_t j;
	json_t *it;
	json_array_foreach(items, j, it)
		if ((json_int_t)resultdoc_num(it, "candidate") == want)
			return it;
	return NULL;
}

/* "ttft_p99_ms <= 2000, …" from a document's search object. */
static void slo_line(json_t *search, char *out, size_t cap)
{
	const char *key;
	json_t *v;
	out[0] = '\0';
	json_object_foreach(json_object_get(search, "slo"), key, v) {
		size_t len = strlen(out);
		snprintf(out + len, cap - len, "%s%s <= %g", len ? ", " : "", key, json_number_value(v));
	}
}

void plan_search_text(FILE *f, json_t *search)
{
	int reps = (int)resultdoc_num(search, "replications");
	double conf = resultdoc_num(search, "confidence");
	bool conc = !strcmp(resultdoc_str(search, "by"), "concurrency");
	fprintf(f, "search: %s by doubling/halving then bisection", conc ? "max_concurrency" : "request rate");
	if (conc)
		fprintf(f, " to one request");
	else
		fprintf(f, " to %g%%", 100 * resultdoc_num(search, "tolerance"));
	fprintf(f, ", up to %g; %d replication%s per load (the same seeds at every load)\n",
		resultdoc_num(search, "max_load"), reps, reps == 1 ? "" : "s");
	if (reps > 1)
		fprintf(f, "a load passes when the one-sided %g%% upper confidence bound (Student t, %d dof) of the mean of every SLO statistic is within its limit\n",
			100 * conf, reps - 1);
	else
		fprintf(f, "a load passes when every SLO statistic of its one run is within its limit (no confidence: 1 replication)\n");
}

static void plan_text(FILE *f, json_t *doc)
{
	json_t *search = json_object_get(doc, "search");
	bool cost = json_is_true(json_object_get(doc, "cost"));
	double target = resultdoc_num(doc, "target_rate");
	bool conc = !strcmp(resultdoc_str(search, "by"), "concurrency");
	size_t n = json_array_size(json_object_get(doc, "candidates"));
	char slo[512];
	slo_line(search, slo, sizeof slo);
	fprintf(f, "servesim plan: %s; SLO %s", resultdoc_str(doc, "scenario"), slo);
	if (!isnan(target))
		fprintf(f, "; target %g req/s", target);
	if (resultdoc_str(doc, "shard"))
		fprintf(f, "; shard %s (%zu of %lld candidates)", resultdoc_str(doc, "shard"), n,
			(long long)resultdoc_num(doc, "candidates_total"));
	fputc('\n', f);
	plan_search_text(f, search);
	fprintf(f, "latencies in ms at the highest load that passes\n\n");
	fprintf(f, "%4s %-16s %3s %-7s %9s %s %8s %8s %8s %8s %-20s %8s %5s", "rank", "hardware", "tp",
		"weights", "max req/s", conc ? "max conc" : "", "tok/s", "TTFT p99", "ITL p99", "E2EL p99",
		"limit", "replicas", "GPUs");
	if (cost)
		fprintf(f, " %9s %9s", "$/hour", "$/1M tok");
	fputc('\n', f);
	json_t *ranking = json_object_get(doc, "ranking");
	for (size_t i = 0; i < n; i++) {
		json_t *it = in_order(doc, i), *at = json_object_get(it, "at_limit");
		char rank[24];
		snprintf(rank, sizeof rank, "%zu", i + 1);
		fprintf(f, "%4s %-16s %3lld %-7s", ranking ? rank : "-", resultdoc_str(it, "hardware"),
			(long long)resultdoc_num(it, "tensor_parallel_size"), resultdoc_str(it, "weights"));
		resultdoc_cell(f, resultdoc_num(it, "max_rate"), 3, 9);
		if (conc)
			resultdoc_cell(f, resultdoc_num(it, "max_concurrency"), 0, 8);
		resultdoc_cell(f, resultdoc_num(at, "output_throughput"), 1, 8);
		resultdoc_cell(f, resultdoc_num(at, "ttft_p99_ms"), 1, 8);
		resultdoc_cell(f, resultdoc_num(at, "itl_p99_ms"), 2, 8);
		resultdoc_cell(f, resultdoc_num(at, "e2el_p99_ms"), 1, 8);
		fprintf(f, " %-20s", resultdoc_str(it, "limit"));
		resultdoc_cell(f, resultdoc_num(it, "replicas"), 0, 8);
		resultdoc_cell(f, resultdoc_num(it, "gpus"), 0, 5);
		if (cost) {
			resultdoc_cell(f, resultdoc_num(it, "usd_per_hour"), 2, 9);
			resultdoc_cell(f, resultdoc_num(it, "usd_per_1m_output_tokens"), 3, 9);
		}
		fputc('\n', f);
	}
	fprintf(f, "\nlimits:\n");
	for (size_t i = 0; i < n; i++) {
		json_t *it = in_order(doc, i);
		fprintf(f, "  %s tp %lld %s: %s: %s\n", resultdoc_str(it, "hardware"),
			(long long)resultdoc_num(it, "tensor_parallel_size"), resultdoc_str(it, "weights"),
			resultdoc_str(it, "limit"), resultdoc_str(it, "limit_detail"));
	}
	for (size_t i = 0; i < n; i++) {
		json_t *it = in_order(doc, i);
		double win = resultdoc_num(it, "arrival_window_s");
		double e2el = resultdoc_num(json_object_get(it, "at_limit"), "e2el_p99_ms") / 1e3;
		if (win < 10 * e2el)
			fprintf(f, "note: %s tp %lld %s: at its limit the requests arrive over only %.3g s, less than 10× its p99 E2EL (%.3g s): the run may end before a queue builds; a longer run (--duration, workload.num_prompts) may lower the limit\n",
				resultdoc_str(it, "hardware"), (long long)resultdoc_num(it, "tensor_parallel_size"),
				resultdoc_str(it, "weights"), win, e2el);
	}
	json_t *winner = json_object_get(doc, "winner");
	if (!ranking)
		return;
	if (!json_is_integer(winner)) {
		fprintf(f, "\nno candidate meets the SLO\n");
		return;
	}
	json_t *w = in_order(doc, 0);
	fprintf(f, "\nwinner: %s, tp %lld, weights %s: %g req/s per replica within the SLO",
		resultdoc_str(w, "hardware"), (long long)resultdoc_num(w, "tensor_parallel_size"),
		resultdoc_str(w, "weights"), resultdoc_num(w, "max_rate"));
	if (!isnan(target))
		fprintf(f, "; %lld replica%s = %lld GPU%s for %g req/s", (long long)resultdoc_num(w, "replicas"),
			resultdoc_num(w, "replicas") == 1 ? "" : "s", (long long)resultdoc_num(w, "gpus"),
			resultdoc_num(w, "gpus") == 1 ? "" : "s", target);
	if (cost)
		fprintf(f, "; %.2f $/hour, %.3f $ per 1M output tokens", resultdoc_num(w, "usd_per_hour"),
			resultdoc_num(w, "usd_per_1m_output_tokens"));
	fprintf(f, "; bound by %s\n", resultdoc_str(w, "limit"));
}

static void plan_csv(FILE *f, json_t *doc)
{
	static const char *const cols[] = { "max_rate", "max_concurrency", "first_failing_load",
					     "evaluations", "replicas", "gpus", "price_usd_per_gpu_hour",
					     "usd_per_hour", "usd_per_1m_output_tokens" };
	static const int cols_dec[] = { 4, 0, 4, 0, 0, 0, 4, 4, 4 };
	fprintf(f, "rank,candidate,hardware,tensor_parallel_size,weights,status");
	for (size_t c = 0; c < sizeof cols / sizeof *cols; c++)
		fprintf(f, ",%s", cols[c]);
	for (size_t k = 0; k < sizeof limit_metrics / sizeof *limit_metrics; k++)
		fprintf(f, ",%s", measure_descs[limit_metrics[k]].name);
	fprintf(f, ",limit,limit_detail\n");
	bool ranked = json_object_get(doc, "ranking") != NULL;
	size_t n = json_array_size(json_object_get(doc, "candidates"));
	for (size_t i = 0; i < n; i++) {
		json_t *it = in_order(doc, i), *at = json_object_get(it, "at_limit");
		if (ranked)
			fprintf(f, "%zu", i + 1);
		fprintf(f, ",%lld,", (long long)resultdoc_num(it, "candidate"));
		resultdoc_csv_str(f, resultdoc_str(it, "hardware"));
		fprintf(f, ",%lld,", (long long)resultdoc_num(it, "tensor_parallel_size"));
		resultdoc_csv_str(f, resultdoc_str(it, "weights"));
		fprintf(f, ",%s", resultdoc_str(it, "status"));
		for (size_t c = 0; c < sizeof cols / sizeof *cols; c++) {
			fputc(',', f);
			resultdoc_csv_num(f, resultdoc_num(it, cols[c]), cols_dec[c]);
		}
		for (size_t k = 0; k < sizeof limit_metrics / sizeof *limit_metrics; k++) {
			const struct measure_desc *d = &measure_descs[limit_metrics[k]];
			fputc(',', f);
			resultdoc_csv_num(f, resultdoc_num(at, d->name), d->decimals);
		}
		fprintf(f, ",%s,", resultdoc_str(it, "limit"));
		resultdoc_csv_str(f, resultdoc_str(it, "limit_detail"));
		fputc('\n', f);
	}
}

/* A candidate's name for legends: hardware/tpN/weights. */
static void cand_label(json_t *it, char *out, size_t cap)
{
	const char *w = resultdoc_str(it, "weights");
	snprintf(out, cap, "%s/tp%lld%s%s", resultdoc_str(it, "hardware"),
		 (long long)resultdoc_num(it, "tensor_parallel_size"), w ? "/" : "", w ? w : "");
	for (char *s = out; *s; s++)
		if (*s == ' ' || *s == '\'' || *s == '"')
			*s = '_';
}

int plan_plot_cost(json_t *doc, const char *items_key, const char *dir, struct plot_opts *o,
		   struct err *e)
{
	json_t *items = json_object_get(doc, items_key), *it;
	size_t i;
	FILE *f = plot_data_open(dir, "cost.dat", e);
	if (!f)
		return -1;
	fprintf(f, "# usd_per_hour_per_replica\tmax_rate_req_s\tusd_per_1m_output_tokens\tlabel\n");
	json_array_foreach(items, i, it) {
		double tp = resultdoc_num(it, "tensor_parallel_size");
		double price = resultdoc_num(it, "price_usd_per_gpu_hour"), rate = resultdoc_num(it, "max_rate");
		if (isnan(tp))
			tp = 1;
		if (isnan(price) || !(rate > 0))
			continue;
		char lab[256];
		cand_label(it, lab, sizeof lab);
		double per1m = resultdoc_num(it, "usd_per_1m_output_tokens_at_slo");
		if (isnan(per1m))
			per1m = resultdoc_num(it, "usd_per_1m_output_tokens");
		fprintf(f, "%.10g\t%.10g\t%.10g\t%s\n", price * tp, rate, isnan(per1m) ? 0 : per1m, lab);
	}
	if (plot_data_close(f, dir, "cost.dat", o, e))
		return -1;
	char vars[8192] = "", path[4200], slo[512];
	snprintf(path, sizeof path, "%s/cost.dat", dir);
	json_t *search = json_object_get(doc, "search");
	slo_line(search, slo, sizeof slo);
	if (plot_var(vars, sizeof vars, "data", path) || plot_text(vars, sizeof vars, "subtitle", slo))
		return err_set(e, "--plot %s: the plot's variables are too long", dir);
	return plot_gnuplot("cost", dir, "goodput_vs_cost", vars, o, e);
}

static int plan_plot(json_t *doc, const char *dir, struct plot_opts *o, struct err *e)
{
	json_t *items = json_object_get(doc, "candidates"), *it;
	size_t i;
	bool cost = json_is_true(json_object_get(doc, "cost"));
	if (cost && plan_plot_cost(doc, "candidates", dir, o, e))
		return -1;
	/* The search trace: every load tried, its worst SLO ratio. */
	FILE *f = plot_data_open(dir, "search.dat", e);
	if (!f)
		return -1;
	char series[4096] = "";
	fprintf(f, "# load\tworst_slo_ratio\tpass  (one block per candidate, in the order tried)\n");
	size_t nb = 0;
	json_array_foreach(items, i, it) {
		json_t *trace = json_object_get(it, "search"), *ev;
		if (!json_array_size(trace))
			continue;
		char lab[256];
		cand_label(it, lab, sizeof lab);
		size_t len = strlen(series);
		snprintf(series + len, sizeof series - len, "%s%s", nb ? " " : "", lab);
		fprintf(f, "%s# %s\n", nb++ ? "\n\n" : "", lab);
		size_t k;
		json_array_foreach(trace, k, ev) {
			double w = json_number_value(json_array_get(ev, 1));
			fprintf(f, "%.10g\t%.10g\t%d\n", json_number_value(json_array_get(ev, 0)),
				isnan(w) || w > 1e6 ? 1e6 : w, json_is_true(json_array_get(ev, 2)));
		}
	}
	if (plot_data_close(f, dir, "search.dat", o, e))
		return -1;
	if (!nb)
		return 0;
	char vars[8192] = "", path[4200], slo[512];
	snprintf(path, sizeof path, "%s/search.dat", dir);
	json_t *search = json_object_get(doc, "search");
	slo_line(search, slo, sizeof slo);
	bool conc = !strcmp(resultdoc_str(search, "by"), "concurrency");
	if (plot_var(vars, sizeof vars, "data", path) || plot_text(vars, sizeof vars, "series", series) ||
	    plot_text(vars, sizeof vars, "subtitle", slo) ||
	    plot_text(vars, sizeof vars, "xlabel", conc ? "Max concurrency (requests)" : "Request rate (req/s)"))
		return err_set(e, "--plot %s: the plot's variables are too long", dir);
	return plot_gnuplot("plan_search", dir, "plan_search", vars, o, e);
}

const struct resultdoc_kind plan_doc_kind = {
	.name = "plan",
	.items = "candidates",
	.index = "candidate",
	.total = "candidates_total",
	.finish = plan_finish,
	.text = plan_text,
	.csv = plan_csv,
	.plot = plan_plot,
};
