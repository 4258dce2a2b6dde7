#include "measure.h"

#include <gsl/gsl_cdf.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "par.h"
#include "run.h"
#include "steptime.h"
#include "xalloc.h"

#define LAT(m, M)                                                                                  \
	{ #m "_mean_ms", M " mean", 3 }, { #m "_p50_ms", M " p50", 3 }, { #m "_p90_ms", M " p90", 3 }, \
		{ #m "_p95_ms", M " p95", 3 }, { #m "_p99_ms", M " p99", 3 }

const struct measure_desc measure_descs[MEAS_N] = {
	{ "request_throughput", "req/s", 4 },
	{ "output_throughput", "tok/s", 2 },
	{ "request_goodput", "goodput", 4 },
	LAT(ttft, "TTFT"),
	LAT(tpot, "TPOT"),
	LAT(itl, "ITL"),
	LAT(e2el, "E2EL"),
	{ "peak_kv_usage", "KV peak", 4 },
	{ "preemptions", "preempt", 2 },
	{ "completed", "done", 2 },
	{ "failed", "failed", 2 },
	{ "duration_s", "dur s", 3 },
	{ "compute_s", "compute s", 4 },
	{ "bandwidth_s", "bandwidth s", 4 },
	{ "overhead_s", "overhead s", 4 },
	{ "allreduce_s", "allreduce s", 4 },
};

int measure_find(const char *name)
{
	for (int i = 0; i < MEAS_N; i++)
		if (!strcmp(measure_descs[i].name, name))
			return i;
	return -1;
}

void measure_replica(struct scenario *out, const struct scenario *base, int r)
{
	*out = *base;
	out->seed = (int64_t)(((uint64_t)base->seed + (uint64_t)r) % 4294967296u);
}

static const double pcts[4] = { 50, 90, 95, 99 };

static void latency(double *v, struct samples *s)
{
	v[0] = samples_mean(s) * 1e3;
	for (int i = 0; i < 4; i++)
		v[1 + i] = s->n ? samples_percentile(s, pcts[i]) * 1e3 : 0;
}

/* The step-time attribution of MEAS_COMPUTE_S … MEAS_ALLREDUCE_S. Every
 * step reads the weights once (the weight-read floor: a batch-1 decode's
 * matmul time, which is bandwidth-bound on every device); matmul time above
 * that floor is time the matmuls spent compute-bound. Prefill attention is
 * counted as compute, decode attention (KV-cache reads, C16) as bandwidth. */
static void attribute(struct measure *m, const struct run_result *res)
{
	const struct scenario *sc = &res->sc;
	struct perf p;
	perf_init(&p, &res->model, &res->hw, res->weights, (int)sc->engine.tensor_parallel_size,
		  kv_dtypes[sc->engine.kv_cache_dtype].bytes_per_elem);
	perf_pipeline(&p, (int)sc->engine.pipeline_parallel_size);
	perf_use_engine(&p, sc->engine.cls->perf_engine);
	struct perf_step one;
	struct perf_breakdown b;
	perf_step_clear(&one);
	perf_step_add(&one, &p, 1, 0, true);
	perf_step_time(&p, &one, &b);
	const struct perf_breakdown *t = &res->engine.time;
	double floor_s = (double)res->engine.steps * (b.dense + b.lm_head + b.experts);
	double matmul_s = t->dense + t->lm_head + t->experts;
	m->v[MEAS_COMPUTE_S] = t->attn_prefill + fmax(0, matmul_s - floor_s);
	m->v[MEAS_BANDWIDTH_S] = t->attn_decode + fmin(matmul_s, floor_s);
	m->v[MEAS_OVERHEAD_S] = t->overhead + t->pipeline;   /* a pipeline bubble is idle time too */
	m->v[MEAS_ALLREDUCE_S] = t->allreduce;
}

int measure_run(struct measure *m, const struct scenario *sc, struct err *e)
{
	struct run_result res;
	memset(m, 0, sizeof *m);
	if (run_simulate_lean(sc, &res, e)) {   /* no request is read one by one */
		run_result_free(&res);
		return -1;
	}
	struct group_metrics *g = &res.all;
	double dur = (double)(g->last_done_ns - g->start_ns) / 1e9;
	bool slo = sc->slo_ttft_ms || sc->slo_tpot_ms || sc->slo_e2el_ms;
	m->v[MEAS_REQUEST_THROUGHPUT] = dur > 0 ? (double)g->completed / dur : 0;
	m->v[MEAS_OUTPUT_THROUGHPUT] = dur > 0 ? (double)g->total_output / dur : 0;
	m->v[MEAS_GOODPUT] = !slo ? NAN : dur > 0 ? (double)g->good / dur : 0;
	latency(&m->v[MEAS_TTFT_MEAN], &g->ttft);
	latency(&m->v[MEAS_TPOT_MEAN], &g->tpot);
	latency(&m->v[MEAS_E2EL_MEAN], &g->e2el);
	m->v[MEAS_ITL_MEAN] = loghist_mean(&g->itl) * 1e3;
	for (int i = 0; i < 4; i++)
		m->v[MEAS_ITL_P50 + i] = g->itl.n ? loghist_percentile(&g->itl, pcts[i]) * 1e3 : 0;
	m->v[MEAS_PEAK_KV_USAGE] = res.engine.peak_kv_usage;
	m->v[MEAS_PREEMPTIONS] = (double)res.engine.preemptions;
	m->v[MEAS_COMPLETED] = (double)g->completed;
	m->v[MEAS_FAILED] = (double)g->failed;
	m->v[MEAS_DURATION_S] = dur;
	attribute(m, &res);
	run_result_free(&res);
	return 0;
}

struct many_task {
	const struct scenario *sc;
	int rep;
	struct measure m;
	char *error;
};

static void many_task(void *ctx, size_t i)
{
	struct many_task *t = &((struct many_task *)ctx)[i];
	struct scenario sc;
	struct err e;
	measure_replica(&sc, t->sc, t->rep);
	if (measure_run(&t->m, &sc, &e))
		t->error = xstrdup(e.msg);
}

void measure_many(const struct scenario *scs, size_t n, int R, int jobs, struct progress *progress,
		  struct measure_summary *out, char **errors)
{
	size_t nt = n * (size_t)R;
	struct many_task *t = xcalloc(nt + 1, sizeof *t);
	for (size_t k = 0; k < nt; k++)
		t[k] = (struct many_task){ .sc = &scs[k / (size_t)R], .rep = (int)(k % (size_t)R) };
	par_for_progress(nt, jobs, many_task, t, progress);
	struct measure *reps = xcalloc((size_t)R, sizeof *reps);
	for (size_t i = 0; i < n; i++) {
		errors[i] = NULL;
		for (int r = 0; r < R; r++) {
			struct many_task *x = &t[i * (size_t)R + (size_t)r];
			reps[r] = x->m;
			if (x->error && !errors[i])
				errors[i] = x->error;
			else
				free(x->error);
		}
		if (!errors[i])
			measure_summarize(&out[i], reps, R);
	}
	free(reps);
	free(t);
}

void measure_summarize(struct measure_summary *s, const struct measure *reps, int n)
{
	s->n = n;
	for (int k = 0; k < MEAS_N; k++) {
		double sum = 0;
		for (int r = 0; r < n; r++)
			sum += reps[r].v[k];
		double mean = sum / n, ss = 0;
		for (int r = 0; r < n; r++)
			ss += (reps[r].v[k] - mean) * (reps[r].v[k] - mean);
		s->mean[k] = mean;
		s->sd[k] = n >= 2 ? sqrt(ss / (n - 1)) : NAN;
	}
}

double measure_half_width(const struct measure_summary *s, int id, double confidence)
{
	if (s->n < 2)
		return NAN;
	double t = gsl_cdf_tdist_Pinv((1 + confidence) / 2, s->n - 1);
	return t * s->sd[id] / sqrt(s->n);
}

double measure_upper_bound(const struct measure_summary *s, int id, double confidence)
{
	if (s->n < 2)
		return s->mean[id];
	return s->mean[id] + gsl_cdf_tdist_Pinv(confidence, s->n - 1) * s->sd[id] / sqrt(s->n);
}
