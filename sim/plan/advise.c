#include "advise.h"

#include <assert.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog.h"
#include "hwprofile.h"
#include "model.h"
#include "num.h"
#include "resultdoc.h"
#include "run.h"
#include "xalloc.h"

/* ---- diagnosis ---- */

enum {
	F_QUEUE = 1 << 0,
	F_PREFILL = 1 << 1,
	F_SYSPROMPT = 1 << 2,
	F_INTERF = 1 << 3,
	F_KV = 1 << 4,
	F_WBW = 1 << 5,
	F_KVREAD = 1 << 6,
};

/* What one run of the scenario says about where the time goes. */
struct detail {
	double ttft_ms, queue_ms, prefill_ms;   /* means over finished requests */
	double sys_share;                       /* shared prefix / prompt */
	double itl_ms, itl_weights_ms, itl_kv_ms, itl_prefill_ms;   /* per decode token */
	int64_t mnbt, max_seqs;                 /* as the engine resolved them */
	int64_t gpus_per_node, link_domain_gpus, heads;
	double bandwidth_gb_s, bf16_tflops;
};

static int details(const struct scenario *sc, struct detail *d, struct err *e)
{
	struct run_result res;
	memset(d, 0, sizeof *d);
	if (run_simulate(sc, &res, e)) {
		run_result_free(&res);
		return -1;
	}
	double q = 0, p = 0, t = 0;
	int64_t n = 0;
	for (size_t i = 0; i < res.reqs.len; i++) {
		const struct request *r = &res.reqs.v[i];
		if (r->state != REQ_FINISHED)
			continue;
		q += (double)(r->first_scheduled_ns - r->enqueue_ns) / 1e6;
		p += (double)(r->first_token_ns - r->first_scheduled_ns) / 1e6;
		t += (double)(r->first_token_ns - r->send_ns) / 1e6;
		n++;
	}
	if (n) {
		d->queue_ms = q / (double)n;
		d->prefill_ms = p / (double)n;
		d->ttft_ms = t / (double)n;
	}
	double in = (double)sc->random_prefix_len + (double)sc->input.mean;
	d->sys_share = in > 0 ? (double)sc->random_prefix_len / in : 0;
	const struct engine_stats *st = &res.engine;
	double tok = st->itl_tokens > 0 ? (double)st->itl_tokens : 1;
	d->itl_weights_ms = st->itl_weights_s / tok * 1e3;
	d->itl_kv_ms = st->itl_kv_s / tok * 1e3;
	d->itl_prefill_ms = st->itl_prefill_s / tok * 1e3;
	d->itl_ms = (st->itl_weights_s + st->itl_kv_s + st->itl_overhead_s + st->itl_pipeline_s + st->itl_prefill_s) /
		    tok * 1e3;
	d->mnbt = st->max_num_batched_tokens;
	d->max_seqs = st->max_num_seqs;
	d->gpus_per_node = res.hw.gpus_per_node;
	d->link_domain_gpus = res.hw.link_domain_gpus;
	d->heads = res.model.n_heads;
	d->bandwidth_gb_s = res.hw.bandwidth_gb_s;
	d->bf16_tflops = res.hw.bf16_tflops;
	run_result_free(&res);
	return 0;
}

static void add_finding(struct advise *a, const char *id, const char *claim, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void add_finding(struct advise *a, const char *id, const char *claim, const char *fmt, ...)
{
	if (a->n_find == ADVISE_MAX_FINDINGS)
		return;
	struct advise_finding *f = &a->find[a->n_find++];
	f->id = id;
	f->claim = claim;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(f->detail, sizeof f->detail, fmt, ap);
	va_end(ap);
}

static unsigned diagnose(struct advise *a, const struct detail *d)
{
	const struct measure_summary *s = &a->before;
	unsigned f = 0;
	bool waiting = a->meas.have && a->meas.waiting > 0;
	if ((d->queue_ms > 0.5 * d->ttft_ms && d->queue_ms > 20) || waiting) {
		f |= F_QUEUE;
		if (waiting)
			add_finding(a, "queue", "C26, C29", "the scrape shows %.4g requests waiting (vllm:num_requests_waiting > 0): they have not started; a capacity problem, not the model",
				    a->meas.waiting);
		else
			add_finding(a, "queue", "C26, C29", "requests wait %.4g ms on average for their first step, %.0f%% of the mean TTFT (%.4g ms): they have not started (vllm:num_requests_waiting > 0); a capacity problem, not the model",
				    d->queue_ms, 100 * d->queue_ms / d->ttft_ms, d->ttft_ms);
	}
	if (d->prefill_ms > 0.5 * d->ttft_ms && d->prefill_ms > 0) {
		f |= F_PREFILL;
		add_finding(a, "prefill", "C26, C29", "the prefill itself takes %.4g ms of the mean TTFT (%.4g ms): the wait is prefill compute, counted in prompt tokens",
			    d->prefill_ms, d->ttft_ms);
	}
	if (d->sys_share >= 0.3 && (f & (F_QUEUE | F_PREFILL))) {
		f |= F_SYSPROMPT;
		add_finding(a, "system-prompt", "C26, C29", "a shared system prompt of %lld tokens is %.0f%% of every prompt and is prefilled again on every request%s",
			    (long long)a->sc.random_prefix_len, 100 * d->sys_share,
			    a->sc.engine.enable_prefix_caching ? " that misses the prefix cache" : " (prefix caching is off)");
	}
	double ratio = s->mean[MEAS_ITL_P50] > 0 ? s->mean[MEAS_ITL_P99] / s->mean[MEAS_ITL_P50] : 0;
	if (d->itl_ms > 0 && (d->itl_prefill_ms > 0.3 * d->itl_ms || ratio > 2)) {
		f |= F_INTERF;
		add_finding(a, "prefill-interference", "C27, C20, C21", "prefill chunks sharing the decode steps add %.3g ms of the mean %.3g ms ITL; ITL p99 / p50 = %.2f",
			    d->itl_prefill_ms, d->itl_ms, ratio);
	}
	if (s->mean[MEAS_PREEMPTIONS] > 0 || s->mean[MEAS_PEAK_KV_USAGE] >= 0.95) {
		f |= F_KV;
		add_finding(a, "kv-pressure", "C17", "the KV pool peaks at %.0f%% with %.4g preemptions per run: requests are recomputed or wait for blocks",
			    100 * s->mean[MEAS_PEAK_KV_USAGE], s->mean[MEAS_PREEMPTIONS]);
	}
	if (d->itl_ms > 0 && d->itl_weights_ms > 0.5 * d->itl_ms) {
		f |= F_WBW;
		add_finding(a, "weight-bandwidth", "C31, C32", "reading the weights is %.3g ms of the mean %.3g ms per decode token: decode is bound by memory bandwidth (%.0f GB/s)",
			    d->itl_weights_ms, d->itl_ms, d->bandwidth_gb_s);
	}
	if (d->itl_ms > 0 && d->itl_kv_ms > 0.3 * d->itl_ms) {
		f |= F_KVREAD;
		add_finding(a, "kv-reads", "C30, C16", "reading the KV cache is %.3g ms of the mean %.3g ms per decode token: long contexts are read every step",
			    d->itl_kv_ms, d->itl_ms);
	}
	return f;
}

/* The failing metric: the SLO's worst ratio, else by the findings. */
static int failing_metric(const struct advise *a, unsigned f)
{
	if (a->slo.n) {
		int best = 0;
		double w = -1;
		for (int i = 0; i < a->slo.n; i++) {
			double r = a->before.mean[a->slo.metric[i]] / a->slo.limit[i];
			if (r > w) {
				w = r;
				best = i;
			}
		}
		return a->slo.metric[best];
	}
	return f & (F_QUEUE | F_PREFILL | F_KV | F_SYSPROMPT) ? MEAS_TTFT_P99 : MEAS_ITL_P99;
}

/* ---- remedies ---- */

static struct advise_remedy *remedy(struct advise *a, const char *name, const char *why)
{
	if (a->n_rem == ADVISE_MAX_REMEDIES)
		return NULL;
	struct advise_remedy *r = &a->rem[a->n_rem++];
	memset(r, 0, sizeof *r);
	r->name = name;
	snprintf(r->why, sizeof r->why, "%s", why);
	return r;
}

static void set(struct advise_remedy *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void set(struct advise_remedy *r, const char *fmt, ...)
{
	if (!r || r->n_set == ADVISE_MAX_SETS)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(r->set[r->n_set++], sizeof r->set[0], fmt, ap);
	va_end(ap);
}

/* The shipped datacenter GPU that improves on the scenario's by the most
 * modest step (> 10%) in bandwidth (or bf16 compute), "" when none. */
static void richer_gpu(const struct detail *d, bool compute, char *out, size_t cap)
{
	char **ids = NULL;
	size_t n = catalog_list(CATALOG_HARDWARE, &ids);
	double mine = compute ? d->bf16_tflops : d->bandwidth_gb_s, best = INFINITY;
	out[0] = '\0';
	for (size_t i = 0; i < n; i++) {
		struct hw_profile hw;
		struct err e;
		if (!hw_load_named(&hw, ids[i], &e) && hw.hw_class == HW_DATACENTER_GPU) {
			double v = compute ? hw.bf16_tflops : hw.bandwidth_gb_s;
			if (v > 1.1 * mine && v < best) {
				best = v;
				snprintf(out, cap, "%s", hw.id);
			}
		}
		free(ids[i]);
	}
	free(ids);
}

static void propose(struct advise *a, unsigned f, const struct detail *d)
{
	const struct scenario *sc = &a->sc;
	bool vllm = sc->engine.cls->family == ENGINE_FAMILY_VLLM;
	bool shared = sc->random_prefix_len > 0 || sc->turns > 1;
	struct advise_remedy *r;
	if ((f & F_SYSPROMPT) && sc->random_prefix_len >= 2) {
		r = remedy(a, "shorten the system prompt", "it is prefilled on every request: half the tokens, half their prefill (C26)");
		set(r, "workload.random_prefix_len=%lld", (long long)sc->random_prefix_len / 2);
	}
	if (vllm && shared && !sc->engine.enable_prefix_caching &&
	    (f & (F_QUEUE | F_PREFILL | F_SYSPROMPT))) {
		r = remedy(a, "enable prefix caching", "the shared prefix is computed once and its blocks reused (C26, C29)");
		set(r, "engine.enable_prefix_caching=true");
	}
	if (vllm && (f & (F_QUEUE | F_PREFILL)) && d->mnbt < 65536) {
		r = remedy(a, "raise max_num_batched_tokens", "a larger token budget prefills more of the waiting prompts per step (C26)");
		set(r, "engine.max_num_batched_tokens=%lld", (long long)(d->mnbt * 2));
	}
	if (vllm && (f & F_INTERF)) {
		int64_t lo = d->mnbt / 4 < 256 ? 256 : d->mnbt / 4;
		if (lo < d->mnbt) {
			r = remedy(a, "lower max_num_batched_tokens", "smaller prefill chunks interrupt decode less (C27, C20)");
			set(r, "engine.max_num_batched_tokens=%lld", (long long)lo);
			if (d->max_seqs > lo)
				set(r, "engine.max_num_seqs=%lld", (long long)lo);
			if (!sc->engine.enable_chunked_prefill)
				set(r, "engine.enable_chunked_prefill=true");
		}
	}
	struct model m;
	struct err e;
	const char *w = sc->weights[0] ? sc->weights : NULL;
	if (!w && !model_load_named(&m, sc->model, &e))
		w = m.weights;
	bool wide = w && (!strcmp(w, "bf16") || !strcmp(w, "fp16") || !strcmp(w, "f16"));
	if (vllm && wide && (f & (F_WBW | F_KV | F_QUEUE))) {
		r = remedy(a, "quantize the weights to fp8", "half the weight bytes read per step and more room for KV (C27, C31)");
		set(r, "run.weights=fp8");
	}
	if (vllm && sc->engine.kv_cache_dtype == 0 && (f & (F_KV | F_KVREAD))) {
		r = remedy(a, "fp8 KV cache", "half the bytes per cached token: twice the pool, half the KV reads (C16, C30)");
		set(r, "engine.kv_cache_dtype=fp8");
		/* A pool fixed by block count holds twice the tokens in the same bytes. */
		if (sc->engine.num_gpu_blocks_override > 0)
			set(r, "engine.num_gpu_blocks_override=%lld", (long long)sc->engine.num_gpu_blocks_override * 2);
	}
	if (vllm && (f & F_KV) && sc->engine.gpu_memory_utilization < 0.95 &&
	    sc->engine.num_gpu_blocks_override <= 0) {
		r = remedy(a, "more memory for the KV pool", "a larger gpu_memory_utilization grows the pool (C17)");
		set(r, "engine.gpu_memory_utilization=0.95");
	}
	int64_t tp2 = sc->engine.tensor_parallel_size * 2;
	if (vllm && (f & (F_KV | F_WBW | F_PREFILL | F_QUEUE)) && d->heads % tp2 == 0 &&
	    (tp2 * sc->engine.pipeline_parallel_size <= d->gpus_per_node * sc->engine.nnodes ||
	     tp2 * sc->engine.pipeline_parallel_size <= d->link_domain_gpus)) {   /* startup.c's rule */
		r = remedy(a, "twice the tensor parallelism", "each GPU reads half the weights and holds half the KV per token (C22)");
		set(r, "engine.tensor_parallel_size=%lld", (long long)tp2);
		if (sc->engine.num_gpu_blocks_override > 0)   /* each GPU's blocks hold half a token's KV */
			set(r, "engine.num_gpu_blocks_override=%lld", (long long)sc->engine.num_gpu_blocks_override * 2);
	}
	if (f & (F_QUEUE | F_KV)) {
		bool open = !sc->trace[0] && !sc->n_stages && sc->users == 0;
		r = NULL;
		if (open && isfinite(sc->request_rate)) {
			r = remedy(a, "a second replica", "each of two replicas takes half the load (C26: a capacity problem)");
			set(r, "workload.request_rate=%.6g", sc->request_rate / 2);
		} else if (open && sc->max_concurrency > 1) {
			r = remedy(a, "a second replica", "each of two replicas takes half the concurrent requests (C26)");
			set(r, "workload.max_concurrency=%lld", (long long)sc->max_concurrency / 2);
		} else if (sc->users > 1) {
			r = remedy(a, "a second replica", "each of two replicas serves half the users (C26)");
			set(r, "workload.users=%lld", (long long)sc->users / 2);
		}
	}
	char id[INI_VALUE_MAX];
	if (f & (F_WBW | F_KVREAD)) {
		richer_gpu(d, false, id, sizeof id);
		if (id[0]) {
			r = remedy(a, "a bandwidth-richer GPU", "decode speed is bandwidth ÷ bytes read per step (C31)");
			set(r, "run.hardware=%s", id);
		}
	}
	if (f & (F_PREFILL | F_QUEUE | F_INTERF)) {
		richer_gpu(d, true, id, sizeof id);
		if (id[0]) {
			r = remedy(a, "a compute-richer GPU", "prefill is compute-bound: more FLOP/s, shorter prefills (C26)");
			set(r, "run.hardware=%s", id);
		}
	}
}

/* The scenario keys a remedy sets, and where they live in the struct. */
enum { K_INT, K_DOUBLE, K_BOOL, K_STRING, K_KV_DTYPE };
#define F(field) offsetof(struct scenario, field)
static const struct remedy_key {
	const char *key;
	int type;
	size_t offset;
} remedy_keys[] = {
	{ "workload.random_prefix_len", K_INT, F(random_prefix_len) },
	{ "workload.request_rate", K_DOUBLE, F(request_rate) },
	{ "workload.max_concurrency", K_INT, F(max_concurrency) },
	{ "workload.users", K_INT, F(users) },
	{ "engine.enable_prefix_caching", K_BOOL, F(engine.enable_prefix_caching) },
	{ "engine.enable_chunked_prefill", K_BOOL, F(engine.enable_chunked_prefill) },
	{ "engine.max_num_batched_tokens", K_INT, F(engine.max_num_batched_tokens) },
	{ "engine.max_num_seqs", K_INT, F(engine.max_num_seqs) },
	{ "engine.kv_cache_dtype", K_KV_DTYPE, F(engine.kv_cache_dtype) },
	{ "engine.gpu_memory_utilization", K_DOUBLE, F(engine.gpu_memory_utilization) },
	{ "engine.tensor_parallel_size", K_INT, F(engine.tensor_parallel_size) },
	{ "engine.num_gpu_blocks_override", K_INT, F(engine.num_gpu_blocks_override) },
	{ "run.weights", K_STRING, F(weights) },
	{ "run.hardware", K_STRING, F(hardware) },
};
#undef F

/* Applies one section.key=value of a remedy to sc. The assignments are
 * propose's own, so one that does not parse is a bug (asserted). */
static void apply(struct scenario *sc, const char *kv)
{
	const char *eq = strchr(kv, '=');
	assert(eq);
	size_t klen = (size_t)(eq - kv);
	for (size_t i = 0; i < sizeof remedy_keys / sizeof *remedy_keys; i++) {
		const struct remedy_key *k = &remedy_keys[i];
		if (strlen(k->key) != klen || strncmp(kv, k->key, klen))
			continue;
		void *p = (char *)sc + k->offset;
		int bad = 0;
		switch (k->type) {
		case K_INT: bad = num_parse_int64(eq + 1, p); break;
		case K_DOUBLE: bad = num_parse_double(eq + 1, p); break;
		case K_BOOL: bad = num_parse_bool(eq + 1, p); break;
		case K_STRING: snprintf(p, INI_VALUE_MAX, "%s", eq + 1); break;
		case K_KV_DTYPE: *(int *)p = !strcmp(eq + 1, "fp8"); break;
		}
		assert(!bad);
		(void)bad;
		return;
	}
	assert(!"a remedy sets a key remedy_keys does not list");
}

static double price(const struct scenario *sc, double replicas)
{
	struct hw_profile hw;
	struct err e;
	if (hw_load_named(&hw, sc->hardware, &e) || !hw.has_price)
		return NAN;
	return hw.price_per_hour_usd * (double)scenario_gpus(sc) * replicas;
}

/* Simulates the base (when base) or every remedy, R replications each. */
static int simulate_all(struct advise *a, bool base, struct err *e)
{
	size_t n = base ? 1 : (size_t)a->n_rem;
	struct scenario *scs = xcalloc(n + 1, sizeof *scs);
	struct measure_summary *out = xcalloc(n + 1, sizeof *out);
	char **errors = xcalloc(n + 1, sizeof *errors);
	for (size_t k = 0; k < n; k++) {
		scs[k] = a->sc;
		for (int s = 0; !base && s < a->rem[k].n_set; s++)
			apply(&scs[k], a->rem[k].set[s]);
	}
	measure_many(scs, n, a->replications, a->jobs, a->progress, out, errors);
	int rc = 0;
	for (size_t k = 0; k < n; k++) {
		if (base) {
			a->before = out[0];
			if (errors[0])
				rc = err_set(e, "%s", errors[0]);
			free(errors[0]);
			continue;
		}
		struct advise_remedy *rm = &a->rem[k];
		rm->error = errors[k];
		rm->after = out[k];
		bool replica = !strcmp(rm->name, "a second replica");
		rm->usd_per_hour = price(&scs[k], replica ? 2 : 1);
	}
	free(errors);
	free(out);
	free(scs);
	return rc;
}

static void rank(struct advise *a)
{
	double b = a->before.mean[a->metric];
	for (int k = 0; k < a->n_rem; k++) {
		struct advise_remedy *r = &a->rem[k];
		r->gain = r->error || !(b > 0) ? NAN : (b - r->after.mean[a->metric]) / b;
		a->order[k] = k;
	}
	/* Insertion sort: gain (NaN last), then $/hour, then proposal order. */
	for (int i = 1; i < a->n_rem; i++)
		for (int j = i; j > 0; j--) {
			const struct advise_remedy *x = &a->rem[a->order[j]], *y = &a->rem[a->order[j - 1]];
			double gx = isnan(x->gain) ? -INFINITY : x->gain, gy = isnan(y->gain) ? -INFINITY : y->gain;
			bool before = gx > gy ||
				      (gx == gy && !isnan(x->usd_per_hour) && !isnan(y->usd_per_hour) &&
				       x->usd_per_hour < y->usd_per_hour);
			if (!before)
				break;
			int z = a->order[j];
			a->order[j] = a->order[j - 1];
			a->order[j - 1] = z;
		}
}

int advise_run(struct advise *a, struct err *e)
{
	a->n_find = a->n_rem = 0;
	struct detail d;
	/* The base runs first on its own: a scenario that cannot run is the
	 * user's error, reported as it is. */
	if (details(&a->sc, &d, e))
		return -1;
	/* The base's summaries first: the diagnosis reads them. */
	if (simulate_all(a, true, e))
		return -1;
	unsigned f = diagnose(a, &d);
	a->metric = failing_metric(a, f);
	a->usd_per_hour = price(&a->sc, 1);
	propose(a, f, &d);
	simulate_all(a, false, e);   /* a remedy that cannot run keeps its error */
	rank(a);
	return 0;
}

void advise_free(struct advise *a)
{
	for (int k = 0; k < a->n_rem; k++) {
		free(a->rem[k].error);
		a->rem[k].error = NULL;
	}
}

/* ---- output ---- */

static const int shown[] = {
	MEAS_REQUEST_THROUGHPUT, MEAS_OUTPUT_THROUGHPUT, MEAS_TTFT_P50, MEAS_TTFT_P99, MEAS_TPOT_P99,
	MEAS_ITL_P50, MEAS_ITL_P99, MEAS_E2EL_P99, MEAS_PEAK_KV_USAGE, MEAS_PREEMPTIONS,
};

static json_t *metrics_json(const double *v, int metric)
{
	json_t *j = json_object();
	for (size_t k = 0; k < sizeof shown / sizeof *shown; k++)
		resultdoc_put(j, measure_descs[shown[k]].name, v[shown[k]], measure_descs[shown[k]].decimals);
	resultdoc_put(j, measure_descs[metric].name, v[metric], measure_descs[metric].decimals);
	return j;
}

json_t *advise_json(const struct advise *a)
{
	json_t *doc = json_object();
	json_object_set_new(doc, "kind", json_string("advise"));
	json_object_set_new(doc, "scenario", json_string(a->sc.path));
	json_object_set_new(doc, "model", json_string(a->sc.model));
	json_object_set_new(doc, "hardware", json_string(a->sc.hardware));
	json_object_set_new(doc, "replications", json_integer(a->replications));
	json_t *slo = json_object();
	for (int i = 0; i < a->slo.n; i++)
		resultdoc_put(slo, measure_descs[a->slo.metric[i]].name, a->slo.limit[i], 6);
	json_object_set_new(doc, "slo", slo);
	json_object_set_new(doc, "metric", json_string(measure_descs[a->metric].name));
	json_object_set_new(doc, "before", metrics_json(a->before.mean, a->metric));
	resultdoc_put(doc, "usd_per_hour", a->usd_per_hour, 4);
	if (a->meas.have)
		json_object_set_new(doc, "measured", metrics_json(a->meas.v, a->metric));
	json_t *diag = json_array();
	for (int i = 0; i < a->n_find; i++)
		json_array_append_new(diag, json_pack("{ss ss ss}", "id", a->find[i].id, "claim", a->find[i].claim,
						      "detail", a->find[i].detail));
	json_object_set_new(doc, "diagnosis", diag);
	json_t *rems = json_array();
	for (int i = 0; i < a->n_rem; i++) {
		const struct advise_remedy *r = &a->rem[a->order[i]];
		json_t *j = json_object(), *sets = json_array();
		json_object_set_new(j, "remedy", json_string(r->name));
		json_object_set_new(j, "why", json_string(r->why));
		for (int s = 0; s < r->n_set; s++)
			json_array_append_new(sets, json_string(r->set[s]));
		json_object_set_new(j, "set", sets);
		json_object_set_new(j, "before", metrics_json(a->before.mean, a->metric));
		if (r->error)
			json_object_set_new(j, "error", json_string(r->error));
		else
			json_object_set_new(j, "after", metrics_json(r->after.mean, a->metric));
		resultdoc_put(j, "gain", r->gain, 4);
		resultdoc_put(j, "usd_per_hour", r->usd_per_hour, 4);
		json_array_append_new(rems, j);
	}
	json_object_set_new(doc, "remedies", rems);
	return doc;
}

void advise_text(FILE *f, json_t *doc)
{
	const char *metric = resultdoc_str(doc, "metric");
	json_t *before = json_object_get(doc, "before");
	fprintf(f, "servesim advise: %s (%s on %s), %lld replication%s\n", resultdoc_str(doc, "scenario"),
		resultdoc_str(doc, "model"), resultdoc_str(doc, "hardware"),
		(long long)resultdoc_num(doc, "replications"), resultdoc_num(doc, "replications") == 1 ? "" : "s");
	fprintf(f, "now: TTFT p99 %.1f ms, ITL p99 %.2f ms, %.1f output tok/s, peak KV %.0f%%, %.4g preemptions\n",
		resultdoc_num(before, "ttft_p99_ms"), resultdoc_num(before, "itl_p99_ms"),
		resultdoc_num(before, "output_throughput"), 100 * resultdoc_num(before, "peak_kv_usage"),
		resultdoc_num(before, "preemptions"));
	json_t *meas = json_object_get(doc, "measured");
	if (meas)
		fprintf(f, "measured: TTFT p99 %.1f ms, ITL p99 %.2f ms, %.1f output tok/s\n",
			resultdoc_num(meas, "ttft_p99_ms"), resultdoc_num(meas, "itl_p99_ms"),
			resultdoc_num(meas, "output_throughput"));
	fprintf(f, "\ndiagnosis:\n");
	json_t *it;
	size_t i;
	json_array_foreach(json_object_get(doc, "diagnosis"), i, it)
		fprintf(f, "  %s (%s): %s\n", resultdoc_str(it, "id"), resultdoc_str(it, "claim"),
			resultdoc_str(it, "detail"));
	if (!json_array_size(json_object_get(doc, "diagnosis")))
		fprintf(f, "  nothing found that limits the run\n");
	fprintf(f, "\nremedies, best first by %s (each simulated with the same seeds):\n", metric);
	json_array_foreach(json_object_get(doc, "remedies"), i, it) {
		json_t *after = json_object_get(it, "after");
		fprintf(f, "%2zu. %s: %s\n", i + 1, resultdoc_str(it, "remedy"), resultdoc_str(it, "why"));
		if (after)
			fprintf(f, "    %s %.2f -> %.2f (%+.0f%%); TTFT p99 %.1f -> %.1f ms, ITL p99 %.2f -> %.2f ms, tok/s %.1f -> %.1f",
				metric, resultdoc_num(before, metric), resultdoc_num(after, metric),
				-100 * resultdoc_num(it, "gain"), resultdoc_num(before, "ttft_p99_ms"),
				resultdoc_num(after, "ttft_p99_ms"), resultdoc_num(before, "itl_p99_ms"),
				resultdoc_num(after, "itl_p99_ms"), resultdoc_num(before, "output_throughput"),
				resultdoc_num(after, "output_throughput"));
		else
			fprintf(f, "    refused: %s", resultdoc_str(it, "error"));
		double usd = resultdoc_num(it, "usd_per_hour");
		if (!isnan(usd))
			fprintf(f, "; %.2f $/hour (now %.2f)", usd, resultdoc_num(doc, "usd_per_hour"));
		fprintf(f, "\n   ");
		json_t *s;
		size_t k;
		json_array_foreach(json_object_get(it, "set"), k, s)
			fprintf(f, " --set %s", json_string_value(s));
		fputc('\n', f);
	}
	if (!json_array_size(json_object_get(doc, "remedies")))
		fprintf(f, "  none applies\n");
}
