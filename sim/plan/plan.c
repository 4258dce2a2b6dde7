#include "plan.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hwprofile.h"
#include "latmetric.h"
#include "list.h"
#include "model.h"
#include "num.h"
#include "par.h"
#include "xalloc.h"

const char *const plan_status_names[] = { "ok", "not-reached", "unreachable", "infeasible" };

/* ---- SLO ---- */

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
	if (n != 3 || lat_metric_find(parts[0]) < 0)
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
	if (strlen(spec) >= 512)
		return err_set(e, "--slo: expected at most %d characters", 511);
	char item[512];
	int rc;
	for (const char *cur = spec; (rc = list_next(&cur, item, sizeof item)) != 0;) {
		if (rc < 0)
			return err_set(e, "--slo: expected METRIC=VALUE[,METRIC=VALUE…] (e.g. ttft_p99_ms=2000,itl_p99_ms=50), got '%s'",
				       spec);
		if (slo_item(slo, item, e))
			return -1;
	}
	return 0;
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
				 .step = 2, .confirm_blocks = 3, .jobs = par_default_jobs() };
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
	struct plan_cost cloud;
	plan_cost_default(&cloud);
	return plan_cand_price(c, &cloud, origin, e);
}

void plan_cost_default(struct plan_cost *pc)
{
	*pc = (struct plan_cost){ .own = false, .years = 3, .usd_per_kwh = 0.12, .utilization = 0.6 };
}

/* One GPU of device id's hour (plan_cost). */
static int gpu_price(const char *id, const struct plan_cost *pc, const char *origin, double *out, struct err *e)
{
	struct hw_profile hw;
	if (hw_load_named(&hw, id, e))
		return err_prefix(e, "%s", origin);
	if (!pc->own) {
		if (!hw.has_price)
			return err_set(e, "%s: hardware '%s' has no [price] price_per_hour_usd; expected a profile with a price to compute cost (add one, pass --cost own to price owning it, or --no-cost)",
				       origin, hw.id);
		*out = hw.price_per_hour_usd;
		return 0;
	}
	if (!hw.has_ownership || !(hw.board_power_w > 0))
		return err_set(e, "%s: hardware '%s' has no [ownership] purchase_usd and board_power_w; expected both to price owning it (add them, or pass --cost cloud or --no-cost)",
			       origin, hw.id);
	double capex_h = hw.purchase_usd / (pc->years * 8760);
	double power_h = (hw.board_power_w + hw.server_overhead_w) / 1000 * pc->usd_per_kwh;
	*out = capex_h / pc->utilization + power_h;
	return 0;
}

int plan_cand_price(struct plan_cand *c, const struct plan_cost *pc, const char *origin, struct err *e)
{
	const struct cluster_config *cc = &c->sc.cluster;
	if (!clustercfg_disaggregated(cc))
		return gpu_price(c->sc.hardware, pc, origin, &c->price_usd_per_gpu_hour, e);
	/* Pools on their own devices ([prefill], [decode] hardware): the mean
	 * over the deployment's GPUs, so that GPUs × price is its hour. */
	double usd = 0, gpus = 0;
	for (int p = 0; p < N_POOLS; p++) {
		struct scenario ps;
		double price = 0;
		if (scenario_pool(&c->sc, p, &ps, e) || gpu_price(ps.hardware, pc, origin, &price, e))
			return -1;
		double n = (double)(p == POOL_PREFILL ? cc->prefill_replicas : cc->decode_replicas) *
			   (double)scenario_gpus(&ps);
		usd += n * price;
		gpus += n;
	}
	c->price_usd_per_gpu_hour = usd / gpus;
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
	measure_replica(out, &c->sc, (int)(c->seed_offset + rep));
	if (o->by == PLAN_BY_CONCURRENCY) {
		out->max_concurrency = (int64_t)load;
		out->request_rate = INFINITY;
	} else {
		out->request_rate = load;
		double n = ceil(load * o->duration_s);
		if (n > (double)out->num_prompts)
			out->num_prompts = n < SCENARIO_MAX_PROMPTS ? (int64_t)n : SCENARIO_MAX_PROMPTS;
	}
}

int64_t plan_requests_at(const struct plan_cand *c, const struct plan_opts *o, double load)
{
	struct scenario sc;
	at_load(&sc, c, o, load, 0);
	return sc.num_prompts;
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
double plan_worst_ratio(const struct measure_summary *s, const struct plan_slo *slo, double conf, int *which)
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
	double x = c->next, step = o->step > 1 ? o->step : 2;
	if (pass) {
		c->lo = x;
		c->at_lo = *s;
	} else {
		c->hi = x;
		c->at_hi = *s;
	}
	c->next = NAN;
	if (isnan(c->lo)) {
		double down = conc ? fmin(floor(x / step), x - 1) : x / step;
		if (down < (conc ? 1 : MIN_RATE))
			c->status = PLAN_UNREACHABLE;
		else
			c->next = down;
	} else if (isnan(c->hi)) {
		if (x >= o->max_rate)
			c->status = PLAN_NOT_REACHED;
		else
			c->next = fmin(conc ? fmax(ceil(x * step), x + 1) : x * step, o->max_rate);
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
		par_for_progress(nt, o->jobs, run_task, tasks, o->progress);
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
			double w = plan_worst_ratio(&s, slo, o->confidence, &which);
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
		plan_worst_ratio(s, slo, o->confidence, &which);
		if (s->mean[MEAS_COMPLETED] <= 0)
			snprintf(detail, cap, "no request completes even at %g %s", c->hi, load_unit(o));
		else
			snprintf(detail, cap, "even at %g %s, %s is %.4g (limit %g): the SLO is below one request's own latency",
				 c->hi, load_unit(o), measure_descs[slo->metric[which]].name,
				 s->mean[slo->metric[which]], slo->limit[which]);
		return "latency-floor";
	}
	plan_worst_ratio(s, slo, o->confidence, &which);
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
