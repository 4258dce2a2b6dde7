/*
 * runobs_agg: aggregate measurements as observations (runobs_int.h).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "calibcsv.h"
#include "catalog.h"
#include "pathname.h"
#include "promscrape.h"
#include "runobs_int.h"

/* ---- Prometheus ------------------------------------------------------------------ */

/* vLLM's counters appear with and without `_total` across versions. */
static double counter(const struct promscrape *s, const char *name, bool *found)
{
	char total[160];
	snprintf(total, sizeof total, "%s_total", name);
	double v = promscrape_sum(s, total, found);
	return *found ? v : promscrape_sum(s, name, found);
}

/* Mean of a histogram in ms; NAN when absent or empty. */
static double hist_mean_ms(const struct promscrape *s, const char *name)
{
	char k[160];
	bool f1, f2;
	snprintf(k, sizeof k, "%s_sum", name);
	double sum = promscrape_sum(s, k, &f1);
	snprintf(k, sizeof k, "%s_count", name);
	double n = promscrape_sum(s, k, &f2);
	/* An empty histogram (count 0) measured nothing; a negative count or
	 * sum is measured nonsense, which push refuses. */
	return f1 && f2 && n != 0 ? sum / n * 1e3 : NAN;
}

static double hist_count(const struct promscrape *s, const char *name)
{
	char k[160];
	bool found;
	snprintf(k, sizeof k, "%s_count", name);
	double n = promscrape_sum(s, k, &found);
	return found ? n : 0;
}

int runobs_from_prometheus(struct runobs_set *set, const char *text, const char *path,
			   const struct runobs_opts *o, struct err *e)
{
	struct promscrape s;
	if (promscrape_parse(&s, text, path, e)) {
		promscrape_free(&s);
		return -1;
	}
	int rc = 0;
	bool found;
	double n_req = counter(&s, "vllm:request_success", &found);
	if (!found)
		n_req = hist_count(&s, "vllm:e2e_request_latency_seconds");
	double in = hist_count(&s, "vllm:request_prompt_tokens") > 0
			    ? hist_mean_ms(&s, "vllm:request_prompt_tokens") / 1e3
			    : counter(&s, "vllm:prompt_tokens", &found) / (n_req > 0 ? n_req : 1);
	double out = hist_count(&s, "vllm:request_generation_tokens") > 0
			     ? hist_mean_ms(&s, "vllm:request_generation_tokens") / 1e3
			     : counter(&s, "vllm:generation_tokens", &found) / (n_req > 0 ? n_req : 1);
	char model[INI_VALUE_MAX] = "", value[64];
	if (!o->model)
		promscrape_label(&s, "vllm:time_to_first_token_seconds_count", "model_name", model, sizeof model);
	struct runobs ob;
	runobs_init(&ob, "prometheus", OBS_CLOCK_ENGINE, OBS_ITL_GAPS);
	snprintf(ob.id, sizeof ob.id, "%s", pathname_base(path));
	struct runobs_point *p = runobs_add_point(&ob, -1);
	p->ms[OBS_TTFT] = hist_mean_ms(&s, "vllm:time_to_first_token_seconds");
	p->ms[OBS_ITL] = hist_mean_ms(&s, "vllm:inter_token_latency_seconds");
	if (isnan(p->ms[OBS_ITL]))
		p->ms[OBS_ITL] = hist_mean_ms(&s, "vllm:time_per_output_token_seconds");
	p->ms[OBS_E2E] = hist_mean_ms(&s, "vllm:e2e_request_latency_seconds");
	struct inidoc ov = { 0 };
	if (!(n_req >= 1))
		rc = err_set(e, "%s: vllm:request_success_total (or vllm:e2e_request_latency_seconds_count): no finished request in the scrape",
			     path);
	else if (!(n_req <= 9e15) || !(in <= 1e9) || !(out <= 1e9))
		rc = err_set(e, "%s: vllm:request_success_total, the token counters: expected counts below 9e15 requests and mean lengths below 1e9 tokens, got %g requests, %g and %g tokens",
			     path, n_req, in, out);
	else if (!(in >= 1) || !(out >= 1))
		rc = err_set(e, "%s: vllm:prompt_tokens_total, vllm:generation_tokens_total (or the request_prompt/generation_tokens histograms): missing or zero: the mean lengths are unknown",
			     path);
	else if (runobs_n_values(&ob) == 0)
		rc = err_set(e, "%s: vllm:time_to_first_token_seconds, vllm:inter_token_latency_seconds, vllm:e2e_request_latency_seconds: missing or empty: nothing measured",
			     path);
	else if (!o->model && !model[0])
		rc = err_set(e, "%s: no model_name label: pass --model", path);
	if (!rc) {
		long long n = llround(n_req);
		if (o->max_requests > 0 && n > o->max_requests)
			n = o->max_requests;
		rc = runobs_add_run(&ov, o->model ? o->model : model, o->weights, o, e) ||
		     inidoc_add_overridef(&ov, e, "workload.num_prompts=%lld", n) ||
		     inidoc_add_overridef(&ov, e, "workload.random_input_len=%lld", llround(in)) ||
		     inidoc_add_overridef(&ov, e, "workload.random_output_len=%lld", llround(out)) ||
		     inidoc_add_overridef(&ov, e, "workload.random_range_ratio=0") ||
		     inidoc_add_overridef(&ov, e, "workload.random_prefix_len=0");
		if (!rc && promscrape_label(&s, "vllm:cache_config_info", "num_gpu_blocks", value, sizeof value) &&
		    strcmp(value, "None"))
			rc = inidoc_add_overridef(&ov, e, "engine.num_gpu_blocks_override=%s", value);
		if (!rc && promscrape_label(&s, "vllm:cache_config_info", "block_size", value, sizeof value))
			rc = inidoc_add_overridef(&ov, e, "engine.block_size=%s", value);
		bool load_given = runobs_user_sets(o, "workload", "request_rate") ||
				  runobs_user_sets(o, "workload", "max_concurrency") ||
				  runobs_user_sets(o, "workload", "stages") || runobs_user_sets(o, "workload", "users");
		if (!rc && !load_given) {
			rc = inidoc_add_overridef(&ov, e, "workload.request_rate=inf") ||
			     inidoc_add_overridef(&ov, e, "workload.max_concurrency=1");
			runobs_note(set, "%s: a scrape has no arrival times: its %lld requests are replayed one at a time (pass --set workload.request_rate=R or workload.max_concurrency=N for the load it served)",
			     path, llround(n_req));
		}
		if (rc)
			err_prefix(e, "%s", path);
		else
			rc = runobs_finish(&ob, NULL, &ov, o, e);
		if (!rc)
			rc = runobs_push(set, &ob, path, e);
	}
	inidoc_free(&ov);
	promscrape_free(&s);
	return rc;
}


/* ---- calibration CSVs -------------------------------------------------------------- */

static bool already(const struct runobs_set *set, const char *id)
{
	for (size_t i = 0; i < set->len; i++)
		if (!strcmp(set->v[i].format, "calibration") && !strcmp(set->v[i].id, id))
			return true;
	return false;
}

int runobs_from_calibration(struct runobs_set *set, enum calibcsv_kind kind, const char *path,
			    const struct runobs_opts *o, struct err *e)
{
	char sibling[4096];
	if (!calibcsv_sibling(path, sibling, sizeof sibling))
		return err_set(e, "%s: a calibration %s table, but its name ends in neither _experiments.csv nor _measured.csv, so its other half cannot be found",
			       path, kind == CALIBCSV_MEASURED ? "measurements" : "experiments");
	const char *exp_path = kind == CALIBCSV_EXPERIMENTS ? path : sibling;
	const char *meas_path = kind == CALIBCSV_EXPERIMENTS ? sibling : path;
	struct calibcsv c;
	if (calibcsv_load(&c, exp_path, meas_path, e)) {
		calibcsv_free(&c);
		return -1;
	}
	char dirbuf[CATALOG_DIR_MAX];
	const char *dir = catalog_dir(CATALOG_SCENARIOS, dirbuf, sizeof dirbuf);
	if (!dir) {
		calibcsv_free(&c);
		return err_set(e, "%s: no scenarios folder found (set SERVESIM_DATA_DIR)", path);
	}
	static const char *const keys[OBS_N_METRICS] = { "ttft_mean", "itl_mean", "e2e_mean" };
	int rc = 0;
	for (size_t i = 0; i < c.n_exps && !rc; i++) {
		const struct calibcsv_experiment *x = &c.exps[i];
		if (already(set, x->id))
			continue;
		struct runobs ob;
		runobs_init(&ob, "calibration", OBS_CLOCK_CLIENT, OBS_ITL_DERIVED);
		snprintf(ob.id, sizeof ob.id, "%s", x->id);
		char ini[4096];
		struct stat st;
		snprintf(ini, sizeof ini, "%s/calibration/%s.ini", dir, x->id);
		if (stat(ini, &st) != 0) {
			rc = err_set(e, "%s:%d: experiment %s: no scenario %s", exp_path, x->line, x->id, ini);
			break;
		}
		for (int stage = 0; stage < SCENARIO_MAX_STAGES; stage++) {
			double v[OBS_N_METRICS];
			int n = 0;
			for (int m = 0; m < OBS_N_METRICS; m++)
				n += !isnan(v[m] = calibcsv_value(&c, x->id, stage, keys[m]));
			if (!n)
				continue;
			struct runobs_point *p = runobs_add_point(&ob, stage);
			memcpy(p->ms, v, sizeof v);
		}
		if (ob.n_pts == 0) {
			struct runobs_point *p = runobs_add_point(&ob, -1);
			for (int m = 0; m < OBS_N_METRICS; m++)
				p->ms[m] = calibcsv_value(&c, x->id, -1, keys[m]);
		}
		if (runobs_n_values(&ob) == 0) {
			runobs_note(set, "%s: experiment %s has no ttft_mean, itl_mean or e2e_mean: skipped", meas_path, x->id);
			continue;
		}
		struct inidoc ov = { 0 };
		rc = inidoc_add_overridef(&ov, e, "run.hardware=%s", o->hardware);
		if (rc)
			inidoc_free(&ov);
		else
			rc = runobs_finish(&ob, ini, &ov, o, e);
		if (!rc)
			rc = runobs_push(set, &ob, meas_path, e);
	}
	if (!rc && (o->model || o->weights))
		runobs_note(set, "%s: --model and --weights do not apply to the calibration experiments, which name their own",
		     path);
	calibcsv_free(&c);
	return rc;
}

