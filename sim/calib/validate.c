#include "validate.h"

#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "report.h"
#include "run.h"

static void add_note(struct validate_result *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void add_note(struct validate_result *r, const char *fmt, ...)
{
	if (r->n_notes == (int)(sizeof r->notes / sizeof *r->notes))
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(r->notes[r->n_notes++], sizeof r->notes[0], fmt, ap);
	va_end(ap);
}


/* The overrides that rebuild the run; also describes the replay. */
static int build(struct validate_result *r, const char *path, const struct validate_opts *o,
		 struct inidoc *doc, struct err *e)
{
	const struct benchres *b = &r->meas;
	if (inidoc_add_overridef(doc, e, "run.model=%s", r->model) || inidoc_add_overridef(doc, e, "run.hardware=%s", r->hardware) ||
	    (o->weights && inidoc_add_overridef(doc, e, "run.weights=%s", o->weights)))
		return -1;
	char rate[64];
	if (isnan(b->request_rate) || isinf(b->request_rate))
		snprintf(rate, sizeof rate, "inf");
	else
		snprintf(rate, sizeof rate, "%.17g", b->request_rate);
	if (inidoc_add_overridef(doc, e, "workload.request_rate=%s", rate) ||
	    (!isnan(b->burstiness) && inidoc_add_overridef(doc, e, "workload.burstiness=%.17g", b->burstiness)) ||
	    (b->max_concurrency > 0 && inidoc_add_overridef(doc, e, "workload.max_concurrency=%lld", (long long)b->max_concurrency)))
		return -1;
	char conc[48] = "no max_concurrency";
	if (b->max_concurrency > 0)
		snprintf(conc, sizeof conc, "max_concurrency %lld", (long long)b->max_concurrency);
	if (b->has_input_lens && b->has_output_lens) {
		if (strlen(path) >= INI_VALUE_MAX)
			return err_set(e, "%s: path longer than %d characters", path, INI_VALUE_MAX - 1);
		if (inidoc_add_overridef(doc, e, "workload.trace=%s", path) || inidoc_add_overridef(doc, e, "workload.trace_format=vllm"))
			return -1;
		if (b->has_start_times)
			snprintf(r->replay, sizeof r->replay,
				 "the run's requests (input_lens, output_lens) at their start_times, %s", conc);
		else {
			snprintf(r->replay, sizeof r->replay,
				 "the run's requests (input_lens, output_lens), sent at request_rate %s (burstiness %g), %s",
				 rate, isnan(b->burstiness) ? 1.0 : b->burstiness, conc);
			add_note(r, "start_times: missing (%s): send times are redrawn from request_rate, so per-request timing differs from the run",
				 b->version);
		}
		return 0;
	}
	if (b->completed < 1 || b->total_input < 0 || b->total_output < 0)
		return err_set(e, "%s: input_lens, output_lens: missing, and completed, total_input_tokens, total_output_tokens do not give mean lengths: the requests cannot be rebuilt",
			       path);
	long long in = llround((double)b->total_input / (double)b->completed);
	long long out = llround((double)b->total_output / (double)b->completed);
	if (inidoc_add_overridef(doc, e, "workload.num_prompts=%lld", (long long)b->completed) ||
	    inidoc_add_overridef(doc, e, "workload.random_input_len=%lld", in < 1 ? 1 : in) ||
	    inidoc_add_overridef(doc, e, "workload.random_output_len=%lld", out < 1 ? 1 : out) ||
	    inidoc_add_overridef(doc, e, "workload.random_range_ratio=0") || inidoc_add_overridef(doc, e, "workload.random_prefix_len=0"))
		return -1;
	snprintf(r->replay, sizeof r->replay,
		 "%lld requests of the mean lengths (%lld in, %lld out) at request_rate %s, %s",
		 (long long)b->completed, in, out, rate, conc);
	add_note(r, "input_lens, output_lens%s: missing (saved without --save-detailed): replayed with the mean lengths, so length spread and per-request timing are not those of the run",
		 b->has_start_times ? "" : ", start_times");
	return 0;
}

static double json_get(const json_t *o, const char *key)
{
	const json_t *v = json_object_get(o, key);
	return json_is_number(v) ? json_number_value(v) : NAN;
}

/* The rows, in vllm bench serve's order and labels. */
static const char *const row_labels[N_LAT_METRICS][BENCH_N_STATS] = {
	{ "Mean TTFT (ms)", "Median TTFT (ms)", "P99 TTFT (ms)" },
	{ "Mean TPOT (ms)", "Median TPOT (ms)", "P99 TPOT (ms)" },
	{ "Mean ITL (ms)", "Median ITL (ms)", "P99 ITL (ms)" },
	{ "Mean E2EL (ms)", "Median E2EL (ms)", "P99 E2EL (ms)" },
};
static const char *const row_keys[N_LAT_METRICS][BENCH_N_STATS] = {
	{ "mean_ttft_ms", "median_ttft_ms", "p99_ttft_ms" },
	{ "mean_tpot_ms", "median_tpot_ms", "p99_tpot_ms" },
	{ "mean_itl_ms", "median_itl_ms", "p99_itl_ms" },
	{ "mean_e2el_ms", "median_e2el_ms", "p99_e2el_ms" },
};

static void fill_rows(struct validate_result *r, const json_t *pred)
{
	int k = 0;
	for (int m = 0; m < N_LAT_METRICS; m++)
		for (int s = 0; s < BENCH_N_STATS; s++)
			r->rows[k++] = (struct validate_row){ row_keys[m][s], row_labels[m][s], r->meas.ms[m][s],
							      json_get(pred, row_keys[m][s]), NAN };
	r->rows[k++] = (struct validate_row){ "request_throughput", "Request throughput (req/s)",
					      r->meas.request_throughput, json_get(pred, "request_throughput"), NAN };
	r->rows[k++] = (struct validate_row){ "output_throughput", "Output token throughput (tok/s)",
					      r->meas.output_throughput, json_get(pred, "output_throughput"), NAN };
	r->rows[k++] = (struct validate_row){ "total_token_throughput", "Total token throughput (tok/s)",
					      r->meas.total_token_throughput, json_get(pred, "total_token_throughput"),
					      NAN };
	for (int i = 0; i < k; i++) {
		struct validate_row *row = &r->rows[i];
		if (row->measured > 0 && isfinite(row->predicted))
			row->error_pct = 100 * (row->predicted - row->measured) / row->measured;
	}
}

int validate_run(struct validate_result *r, const char *path, const struct validate_opts *o,
		 struct err *e)
{
	memset(r, 0, sizeof *r);
	if (benchres_load(&r->meas, path, e))
		return -1;
	const char *model = o->model ? o->model : r->meas.model_id[0] ? r->meas.model_id : NULL;
	if (!model)
		return err_set(e, "%s: model_id: missing; pass --model", path);
	snprintf(r->model, sizeof r->model, "%s", model);
	snprintf(r->hardware, sizeof r->hardware, "%s", o->hardware ? o->hardware : VALIDATE_DEFAULT_HARDWARE);
	if (!o->hardware)
		add_note(r, "the result does not name its GPU: simulated on %s (pass --hardware)",
			 VALIDATE_DEFAULT_HARDWARE);
	if (benchres_n_means(&r->meas) == 0 && isnan(r->meas.ms[LAT_TPOT][BENCH_MEAN]))
		return err_set(e, "%s: mean_ttft_ms, mean_tpot_ms, mean_itl_ms, mean_e2el_ms: missing: nothing measured to compare with",
			       path);
	struct inidoc doc = { 0 };
	int rc = build(r, path, o, &doc, e);
	for (size_t i = 0; !rc && o->overrides && i < o->overrides->len; i++) {
		const struct inidoc_entry *en = &o->overrides->entries[i];
		rc = inidoc_add_overridef(&doc, e, "%s.%s=%s", en->section, en->key, en->value);
	}
	struct scenario sc;
	if (!rc)
		rc = scenario_load(&sc, NULL, &doc, e);
	inidoc_free(&doc);
	if (rc)
		return err_prefix(e, "%s", path);
	r->sc = sc;
	struct run_result res;
	if (run_simulate(&sc, &res, e)) {
		run_result_free(&res);
		return err_prefix(e, "%s", path);
	}
	r->n_requests = (long long)res.reqs.len;
	double pct[] = { 99 };
	struct report_opts ro = { pct, 1, false, 0 };
	json_t *pred = report_json(&res, &ro);
	fill_rows(r, pred);
	json_decref(pred);
	run_result_free(&res);
	return 0;
}
