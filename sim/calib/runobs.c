#include "runobs.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "benchres.h"
#include "calibcsv.h"
#include "catalog.h"
#include "jsonvals.h"
#include "llamabench.h"
#include "llamabenchtext.h"
#include "llamaserver.h"
#include "ollamaverbose.h"
#include "otherbench.h"
#include "obscheck.h"
#include "ollamaresp.h"
#include "promscrape.h"
#include "sglangmetrics.h"
#include "textfile.h"
#include "vllmlog.h"
#include "xalloc.h"

const char *const runobs_metric_names[] = { "ttft", "itl", "e2e", NULL };

#define MAX_FILE_BYTES ((size_t)1 << 30)
#define TRIED "vllm bench serve result JSON (one or --append-result's several), SGLang bench_serving JSON lines, " \
	      "Ollama /api/generate or /api/chat JSON, `ollama run --verbose` text, llama-server responses, llama-bench Markdown/CSV/JSON/JSONL/SQL, " \
	      "LLMPerf, trtllm-bench, GenAI-Perf or GuideLLM summary JSON, " \
	      "Prometheus text of vLLM's or SGLang's /metrics, servesim calibration CSVs (*_experiments.csv, *_measured.csv)"

static void note(struct runobs_set *set, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note(struct runobs_set *set, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	xgrow(&set->notes, &set->cap_notes, set->n_notes + 1, sizeof *set->notes);
	set->notes[set->n_notes++] = xstrdup(buf);
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');
	return s ? s + 1 : path;
}

static char *slurp(const char *path, struct err *e)
{
	return textfile_read(path, MAX_FILE_BYTES, e);
}

/* ---- building a scenario ----------------------------------------------- */


static bool user_sets(const struct runobs_opts *o, const char *section, const char *key)
{
	return o->overrides && inidoc_find(o->overrides, section, key);
}

/* Loads ob->sc from ini_path (NULL: the built-in default) with ov, the
 * user's overrides last, then subsamples a staged run. Frees ov. */
static int finish(struct runobs *ob, const char *ini_path, struct inidoc *ov, const struct runobs_opts *o,
		  struct err *e)
{
	if (o->overrides)
		inidoc_add_overrides(ov, o->overrides);
	int rc = scenario_load(&ob->sc, ini_path, ov, e);
	if (!rc && o->max_requests > 0 && ob->sc.n_stages > 0 && ob->sc.num_prompts > o->max_requests) {
		double scale = (double)o->max_requests / (double)ob->sc.num_prompts;
		char stages[INI_VALUE_MAX] = "";
		size_t len = 0;
		for (int s = 0; s < ob->sc.n_stages && len < sizeof stages; s++)
			len += (size_t)snprintf(stages + len, sizeof stages - len, "%s%.6g:%.6g", s ? ", " : "",
						ob->sc.stages[s].rate, ob->sc.stages[s].duration_s * scale);
		rc = len >= sizeof stages ? err_set(e, "too many stages to subsample") :
		     inidoc_add_overridef(ov, e, "workload.stages=%s", stages);
		if (!rc)
			rc = scenario_load(&ob->sc, ini_path, ov, e);
	}
	inidoc_free(ov);
	if (rc)
		return err_prefix(e, "%s", ob->id);
	return 0;
}

static void init_obs(struct runobs *ob, const char *format, int clock, int itl)
{
	memset(ob, 0, sizeof *ob);
	ob->format = format;
	ob->clock = clock;
	ob->itl = itl;
}

static struct runobs_point *add_point(struct runobs *ob, int stage)
{
	struct runobs_point *p = &ob->pts[ob->n_pts++];
	p->stage = stage;
	for (int m = 0; m < OBS_N_METRICS; m++)
		p->ms[m] = NAN;
	return p;
}

/* Adds ob to set once obscheck_values accepts it; otherwise -1 with e
 * and nothing is added. */
static int push(struct runobs_set *set, const struct runobs *ob, const char *path, struct err *e)
{
	if (obscheck_values(ob, path, e))
		return -1;
	xgrow(&set->v, &set->cap, set->len + 1, sizeof *set->v);
	set->v[set->len++] = *ob;
	return 0;
}

/* The run.* settings of a one-model observation. */
static int add_run(struct inidoc *ov, const char *model, const char *weights, const struct runobs_opts *o,
		   struct err *e)
{
	if (inidoc_add_overridef(ov, e, "run.model=%s", model) || inidoc_add_overridef(ov, e, "run.hardware=%s", o->hardware))
		return -1;
	if (weights && inidoc_add_overridef(ov, e, "run.weights=%s", weights))
		return -1;
	return 0;
}

/* One request alone: in prompt tokens, out generated, no shared prefix,
 * and a max_model_len that holds it (the model's full context may not fit
 * the device's KV pool, which vLLM refuses at start-up: startup.h). */
static int add_single_request(struct inidoc *ov, long long in, long long out, struct err *e)
{
	return inidoc_add_overridef(ov, e, "engine.max_model_len=%lld", in + out < 2 ? 2 : in + out) ||
	       inidoc_add_overridef(ov, e, "workload.num_prompts=1") || inidoc_add_overridef(ov, e, "workload.request_rate=inf") ||
	       inidoc_add_overridef(ov, e, "workload.max_concurrency=1") ||
	       inidoc_add_overridef(ov, e, "workload.random_input_len=%lld", in) ||
	       inidoc_add_overridef(ov, e, "workload.random_output_len=%lld", out) ||
	       inidoc_add_overridef(ov, e, "workload.random_range_ratio=0") || inidoc_add_overridef(ov, e, "workload.random_prefix_len=0");
}

/* ---- vllm bench serve ---------------------------------------------------- */

static int from_vllm(struct runobs_set *set, const json_t *top, const char *path,
		     const struct runobs_opts *o, struct err *e)
{
	struct benchres b;
	if (benchres_from_json(&b, top, path, e))
		return -1;
	if (benchres_n_means(&b) == 0)
		return err_set(e, "%s: mean_ttft_ms, mean_itl_ms, mean_e2el_ms: missing (and no latencies): a vllm bench serve result with nothing measured to fit against",
			       path);
	const char *model = o->model ? o->model : b.model_id[0] ? b.model_id : NULL;
	if (!model)
		return err_set(e, "%s: model_id: missing; pass --model", path);
	struct runobs ob;
	init_obs(&ob, "vllm-bench", OBS_CLOCK_CLIENT, OBS_ITL_GAPS);
	snprintf(ob.id, sizeof ob.id, "%s", base_name(path));
	struct inidoc ov = { 0 };
	int rc = add_run(&ov, model, o->weights, o, e);
	bool arrays = b.has_input_lens && b.has_output_lens;
	if (!rc && arrays) {
		if (strlen(path) >= INI_VALUE_MAX)
			rc = err_set(e, "%s: path longer than %d characters", path, INI_VALUE_MAX - 1);
		else
			rc = inidoc_add_overridef(&ov, e, "workload.trace=%s", path) || inidoc_add_overridef(&ov, e, "workload.trace_format=vllm");
		if (!rc && o->max_requests > 0)
			rc = inidoc_add_overridef(&ov, e, "workload.num_prompts=%lld", (long long)o->max_requests);
		if (!b.has_start_times)
			note(set, "%s: start_times: missing (%s): send times redrawn from request_rate and burstiness",
			     path, b.version);
	} else if (!rc) {
		if (b.completed < 1 || b.total_input < 0 || b.total_output < 0) {
			inidoc_free(&ov);
			return err_set(e, "%s: input_lens, output_lens: missing, and completed, total_input_tokens, total_output_tokens do not give mean lengths either: the requests cannot be rebuilt",
				       path);
		}
		long long n = b.completed, in = llround((double)b.total_input / (double)b.completed);
		long long out = llround((double)b.total_output / (double)b.completed);
		if (o->max_requests > 0 && n > o->max_requests)
			n = o->max_requests;
		char missing[64] = "";
		if (!b.has_input_lens)
			strcat(missing, "input_lens");
		if (!b.has_output_lens)
			strcat(strcat(missing, missing[0] ? ", " : ""), "output_lens");
		if (!b.has_start_times)
			strcat(strcat(missing, ", "), "start_times");
		note(set, "%s: %s: missing (saved without --save-detailed): replayed as %lld requests of the mean lengths (total_input_tokens/completed = %lld in, total_output_tokens/completed = %lld out) at its request_rate and max_concurrency",
		     path, missing, n, in, out);
		rc = inidoc_add_overridef(&ov, e, "workload.num_prompts=%lld", n) ||
		     inidoc_add_overridef(&ov, e, "workload.random_input_len=%lld", in < 1 ? 1 : in) ||
		     inidoc_add_overridef(&ov, e, "workload.random_output_len=%lld", out < 1 ? 1 : out) ||
		     inidoc_add_overridef(&ov, e, "workload.random_range_ratio=0") || inidoc_add_overridef(&ov, e, "workload.random_prefix_len=0");
	}
	if (!rc)
		rc = isinf(b.request_rate) || isnan(b.request_rate)
			     ? inidoc_add_overridef(&ov, e, "workload.request_rate=inf")
			     : inidoc_add_overridef(&ov, e, "workload.request_rate=%.17g", b.request_rate);
	if (!rc && !isnan(b.burstiness))
		rc = inidoc_add_overridef(&ov, e, "workload.burstiness=%.17g", b.burstiness);
	if (!rc && b.max_concurrency > 0)
		rc = inidoc_add_overridef(&ov, e, "workload.max_concurrency=%lld", (long long)b.max_concurrency);
	if (rc) {
		inidoc_free(&ov);
		return err_prefix(e, "%s", path);
	}
	if (finish(&ob, NULL, &ov, o, e))
		return -1;
	struct runobs_point *p = add_point(&ob, -1);
	p->ms[OBS_TTFT] = b.ms[LAT_TTFT][BENCH_MEAN];
	p->ms[OBS_ITL] = b.ms[LAT_ITL][BENCH_MEAN];
	p->ms[OBS_E2E] = b.ms[LAT_E2EL][BENCH_MEAN];
	return push(set, &ob, path, e);
}

/* ---- Ollama ------------------------------------------------------------------ */

static int from_ollama(struct runobs_set *set, const char *text, const char *path,
		       const struct runobs_opts *o, struct err *e)
{
	struct ollamaresp_list l;
	if (ollamaresp_parse(&l, text, path, e)) {
		ollamaresp_free(&l);
		return -1;
	}
	if (!o->model) {
		err_set(e, "%s: Ollama responses name an Ollama model ('%s'), not a servesim one: pass --model",
			path, l.v[0].model);
		ollamaresp_free(&l);
		return -1;
	}
	size_t skipped = 0;
	for (size_t i = 0; i < l.len; i++) {
		const struct ollamaresp *r = &l.v[i];
		if (r->prompt_eval_count < 1 || r->eval_count < 1 ||
		    (r->prompt_eval_duration_ns == 0 && r->eval_duration_ns == 0)) {
			skipped++;
			continue;
		}
		struct runobs ob;
		init_obs(&ob, "ollama", OBS_CLOCK_ENGINE, OBS_ITL_GAPS);
		snprintf(ob.id, sizeof ob.id, "%s:%d", base_name(path), r->line);
		struct inidoc ov = { 0 };
		if (add_run(&ov, o->model, o->weights, o, e) ||
		    add_single_request(&ov, r->prompt_eval_count, r->eval_count, e) ||
		    finish(&ob, NULL, &ov, o, e)) {
			inidoc_free(&ov);
			ollamaresp_free(&l);
			return err_prefix(e, "%s:%d", path, r->line);
		}
		struct runobs_point *p = add_point(&ob, -1);
		/* 0 is "not reported"; anything else is measured, and push
		 * refuses what cannot be (a negative duration). */
		if (r->prompt_eval_duration_ns != 0)
			p->ms[OBS_TTFT] = (double)r->prompt_eval_duration_ns / 1e6;
		if (r->eval_count >= 2 && r->eval_duration_ns != 0)
			p->ms[OBS_ITL] = (double)r->eval_duration_ns / (double)r->eval_count / 1e6;
		if (r->prompt_eval_duration_ns != 0 && r->eval_duration_ns != 0)
			p->ms[OBS_E2E] = ((double)r->prompt_eval_duration_ns + (double)r->eval_duration_ns) / 1e6;
		if (push(set, &ob, path, e)) {
			ollamaresp_free(&l);
			return -1;
		}
	}
	if (skipped)
		note(set, "%s: %zu responses without prompt_eval_count/eval_count or durations skipped", path, skipped);
	note(set, "%s: prompt_eval_count includes prompt-cache hits in newer Ollama while prompt_eval_duration counts only computed tokens; the replay assumes no cache hit",
	     path);
	ollamaresp_free(&l);
	return 0;
}

/* ---- llama-bench ----------------------------------------------------------------- */

static int from_llamabench(struct runobs_set *set, struct llamabench_list *l, const char *path,
			   const struct runobs_opts *o, struct err *e)
{
	if (!o->model)
		return err_set(e, "%s: llama-bench names a GGUF file ('%s'), not a servesim model: pass --model",
			       path, l->v[0].model_filename);
	size_t depth = 0;
	for (size_t i = 0; i < l->len; i++) {
		const struct llamabench_test *t = &l->v[i];
		if (t->n_depth > 0) {
			depth++;
			continue;
		}
		const char *weights = o->weights ? o->weights : llamabench_weights(t->model_type);
		if (!o->weights && !weights && t->model_type[0])
			note(set, "%s:%d: model_type '%s': quantization not recognised; the model's own precision is used (pass --weights)",
			     path, t->line, t->model_type);
		struct runobs ob;
		init_obs(&ob, "llama-bench", OBS_CLOCK_ENGINE, OBS_ITL_GAPS);
		char test[48];
		if (t->n_gen == 0)
			snprintf(test, sizeof test, "pp%lld", (long long)t->n_prompt);
		else if (t->n_prompt == 0)
			snprintf(test, sizeof test, "tg%lld", (long long)t->n_gen);
		else
			snprintf(test, sizeof test, "pp%lld+tg%lld", (long long)t->n_prompt, (long long)t->n_gen);
		snprintf(ob.id, sizeof ob.id, "%s:%d (%s)", base_name(path), t->line, test);
		long long in = t->n_prompt > 0 ? t->n_prompt : 1, out = t->n_gen + 1;
		struct inidoc ov = { 0 };
		if (add_run(&ov, o->model, weights, o, e) || add_single_request(&ov, in, out, e) ||
		    inidoc_add_overridef(&ov, e, "engine.max_num_batched_tokens=%lld", (long long)t->n_ubatch) ||
		    finish(&ob, NULL, &ov, o, e)) {
			inidoc_free(&ov);
			return err_prefix(e, "%s:%d", path, t->line);
		}
		struct runobs_point *p = add_point(&ob, -1);
		if (t->n_gen == 0)
			p->ms[OBS_TTFT] = t->avg_ns / 1e6;
		else if (t->n_prompt == 0)
			p->ms[OBS_ITL] = t->avg_ns / (double)t->n_gen / 1e6;
		else
			p->ms[OBS_E2E] = t->avg_ns / 1e6;
		if (push(set, &ob, path, e))
			return -1;
	}
	if (depth)
		note(set, "%s: %zu tests with n_depth > 0 skipped (a simulation starts with an empty KV cache)",
		     path, depth);
	return 0;
}

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

static int from_prometheus(struct runobs_set *set, const char *text, const char *path,
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
	init_obs(&ob, "prometheus", OBS_CLOCK_ENGINE, OBS_ITL_GAPS);
	snprintf(ob.id, sizeof ob.id, "%s", base_name(path));
	struct runobs_point *p = add_point(&ob, -1);
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
		rc = add_run(&ov, o->model ? o->model : model, o->weights, o, e) ||
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
		bool load_given = user_sets(o, "workload", "request_rate") ||
				  user_sets(o, "workload", "max_concurrency") ||
				  user_sets(o, "workload", "stages") || user_sets(o, "workload", "users");
		if (!rc && !load_given) {
			rc = inidoc_add_overridef(&ov, e, "workload.request_rate=inf") ||
			     inidoc_add_overridef(&ov, e, "workload.max_concurrency=1");
			note(set, "%s: a scrape has no arrival times: its %lld requests are replayed one at a time (pass --set workload.request_rate=R or workload.max_concurrency=N for the load it served)",
			     path, llround(n_req));
		}
		if (rc)
			err_prefix(e, "%s", path);
		else
			rc = finish(&ob, NULL, &ov, o, e);
		if (!rc)
			rc = push(set, &ob, path, e);
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

static int from_calibration(struct runobs_set *set, enum calibcsv_kind kind, const char *path,
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
	const char *dir = catalog_dir(CATALOG_SCENARIOS);
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
		init_obs(&ob, "calibration", OBS_CLOCK_CLIENT, OBS_ITL_DERIVED);
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
			struct runobs_point *p = add_point(&ob, stage);
			memcpy(p->ms, v, sizeof v);
		}
		if (ob.n_pts == 0) {
			struct runobs_point *p = add_point(&ob, -1);
			for (int m = 0; m < OBS_N_METRICS; m++)
				p->ms[m] = calibcsv_value(&c, x->id, -1, keys[m]);
		}
		if (runobs_n_values(&ob) == 0) {
			note(set, "%s: experiment %s has no ttft_mean, itl_mean or e2e_mean: skipped", meas_path, x->id);
			continue;
		}
		struct inidoc ov = { 0 };
		rc = inidoc_add_overridef(&ov, e, "run.hardware=%s", o->hardware);
		if (rc)
			inidoc_free(&ov);
		else
			rc = finish(&ob, ini, &ov, o, e);
		if (!rc)
			rc = push(set, &ob, meas_path, e);
	}
	if (!rc && (o->model || o->weights))
		note(set, "%s: --model and --weights do not apply to the calibration experiments, which name their own",
		     path);
	calibcsv_free(&c);
	return rc;
}

/* ---- detection -------------------------------------------------------------------- */

/* llama-server responses: as the Ollama lines its runner would write. */
static int from_llamaserver(struct runobs_set *set, const char *text, const char *path,
			    const struct runobs_opts *o, struct err *e)
{
	char *lines = llamaserver_to_ollama(text, path, e);
	if (!lines)
		return -1;
	size_t first = set->len;
	int rc = from_ollama(set, lines, path, o, e);
	for (size_t i = first; i < set->len; i++)
		set->v[i].format = "llama-server";
	free(lines);
	return rc;
}

static int from_json_text(struct runobs_set *set, const char *text, const char *path,
			  const struct runobs_opts *o, struct err *e, bool *handled)
{
	json_error_t je;
	json_t *top = json_loads(text, JSON_REJECT_DUPLICATES, &je);
	*handled = true;
	if (top) {
		int rc;
		if (benchres_sniff(top)) {
			rc = from_vllm(set, top, path, o, e);
		} else if (json_is_array(top) && llamabench_sniff_json(json_array_get(top, 0))) {
			struct llamabench_list l;
			rc = llamabench_parse_json(&l, top, path, e);
			if (!rc)
				rc = from_llamabench(set, &l, path, o, e);
			llamabench_free(&l);
		} else if (ollamaresp_sniff(top)) {
			rc = from_ollama(set, text, path, o, e);
		} else if (llamaserver_sniff(top)) {
			rc = from_llamaserver(set, text, path, o, e);
		} else if (otherbench_sniff(top)) {
			/* LLMPerf, trtllm-bench, GenAI-Perf, GuideLLM: as vllm results. */
			json_t *runs = otherbench_as_vllm(top, path, e), *run;
			size_t k;
			rc = runs ? 0 : -1;
			json_array_foreach(runs, k, run) {
				if (rc || (rc = from_vllm(set, run, path, o, e)))
					break;
				struct runobs *ob = &set->v[set->len - 1];
				ob->format = otherbench_sniff(top);
				if (set->n_notes) {   /* from_vllm's note speaks of vLLM's --save-detailed */
					free(set->notes[--set->n_notes]);
					note(set, "%s: a %s summary: replayed as %lld requests of its mean lengths (%lld in, %lld out)",
					     path, ob->format, (long long)ob->sc.num_prompts, (long long)ob->sc.input.mean,
					     (long long)ob->sc.output.mean);
				}
				if (json_array_size(runs) > 1)
					snprintf(set->v[set->len - 1].id, sizeof set->v->id, "%s#%zu", base_name(path), k);
			}
			json_decref(runs);
		} else if (llamabench_sniff_json(top)) {
			struct llamabench_list l;
			rc = llamabench_parse_jsonl(&l, text, path, e);
			if (!rc)
				rc = from_llamabench(set, &l, path, o, e);
			llamabench_free(&l);
		} else {
			*handled = false;
			rc = 0;
		}
		json_decref(top);
		return rc;
	}
	/* Several JSON values (JSON lines, --append-result, pretty objects one
	 * after another): decide by the first. */
	struct jsonvals vals;
	int bad = jsonvals_parse(&vals, text, path, e);
	if (bad && vals.len == 0) {
		jsonvals_free(&vals);
		*handled = false;
		return 0;
	}
	json_t *first = vals.v[0];
	int rc = 0;
	if (ollamaresp_sniff(first)) {
		rc = from_ollama(set, text, path, o, e);
	} else if (llamaserver_sniff(first)) {
		rc = from_llamaserver(set, text, path, o, e);
	} else if (llamabench_sniff_json(first)) {
		struct llamabench_list l;
		rc = llamabench_parse_jsonl(&l, text, path, e);
		if (!rc)
			rc = from_llamabench(set, &l, path, o, e);
		llamabench_free(&l);
	} else if (benchres_sniff(first)) {
		/* vllm bench serve --append-result, or SGLang's appended lines:
		 * one observation per result. A value that does not parse is the
		 * file's error (e says where), not the end of it. */
		rc = bad;
		for (size_t i = 0; i < vals.len && !rc; i++) {
			if (!benchres_sniff(vals.v[i])) {
				rc = err_set(e, "%s:%d: expected another benchmark result like the first", path, vals.line[i]);
				break;
			}
			/* The per-request arrays of one result among several cannot be
			 * a trace of the file: each replays at its mean lengths. */
			json_t *one = json_deep_copy(vals.v[i]);
			static const char *const arrays[] = { "input_lens", "output_lens", "start_times", NULL };
			for (const char *const *a = arrays; *a; a++)
				json_object_del(one, *a);
			rc = from_vllm(set, one, path, o, e);
			json_decref(one);
			if (!rc && json_object_get(vals.v[i], "input_lens") && set->n_notes) {
				free(set->notes[--set->n_notes]);
				note(set, "%s:%d: one of several results in the file: its input_lens/output_lens are not a trace of it, so it replays at its mean lengths",
				     path, vals.line[i]);
			}
			if (!rc)
				snprintf(set->v[set->len - 1].id, sizeof set->v->id, "%s:%d", base_name(path), vals.line[i]);
		}
	} else {
		*handled = false;
	}
	jsonvals_free(&vals);
	return rc;
}

int runobs_load(struct runobs_set *set, const char *path, const struct runobs_opts *o, struct err *e)
{
	char *text = slurp(path, e);
	if (!text)
		return -1;
	const char *p = text;
	while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n')
		p++;
	int rc = 0;
	bool handled = false;
	if (*p == '{' || *p == '[') {
		char *clean = jsonvals_sanitize(text);   /* Python's Infinity (SGLang) */
		rc = from_json_text(set, clean, path, o, e, &handled);
		free(clean);
	} else if (*p) {
		char first[1024];
		size_t n = strcspn(p, "\r\n");
		snprintf(first, sizeof first, "%.*s", (int)(n < sizeof first ? n : sizeof first - 1), p);
		enum calibcsv_kind ck = calibcsv_sniff(first);
		handled = true;
		if (ck != CALIBCSV_NONE) {
			rc = from_calibration(set, ck, path, o, e);
		} else if (llamabench_sniff_header(first)) {
			struct llamabench_list l;
			rc = llamabench_parse_csv(&l, text, path, e);
			if (!rc)
				rc = from_llamabench(set, &l, path, o, e);
			llamabench_free(&l);
		} else if (promscrape_sniff(text, "vllm:")) {
			rc = from_prometheus(set, text, path, o, e);
		} else if (sglangmetrics_sniff(text)) {
			char *as_vllm = sglangmetrics_as_vllm(text);
			rc = from_prometheus(set, as_vllm, path, o, e);
			free(as_vllm);
		} else if (ollamaverbose_sniff(text) || llamabenchtext_sniff_md(text) || llamabenchtext_sniff_sql(text)) {
			bool ollama = ollamaverbose_sniff(text);
			char *conv = ollama ? ollamaverbose_to_jsonl(text, path, e) :
				     llamabenchtext_sniff_md(text) ? llamabenchtext_md_to_csv(text, path, e) :
								     llamabenchtext_sql_to_csv(text, path, e);
			struct llamabench_list l = { 0 };
			if (!conv)
				rc = -1;
			else if (ollama)
				rc = from_ollama(set, conv, path, o, e);
			else if (!(rc = llamabench_parse_csv(&l, conv, path, e)))
				rc = from_llamabench(set, &l, path, o, e);
			llamabench_free(&l);
			free(conv);
		} else if (vllmlog_sniff(text)) {
			rc = err_set(e, "%s: a vllm serve start-up log: it has memory figures, no latencies; "
					"servesim validate checks its KV pool against the simulated one",
				     path);
		} else if (promscrape_sniff(text, "llamacpp:")) {
			rc = err_set(e, "%s: a llama-server /metrics scrape: only vLLM's /metrics (vllm:…) is read; use llama-bench or the responses' timings instead",
				     path);
		} else {
			handled = false;
		}
	}
	free(text);
	if (!rc && !handled)
		rc = err_set(e, "%s: not a known format; tried: %s", path, TRIED);
	return rc ? -1 : 0;
}

void runobs_set_free(struct runobs_set *set)
{
	for (size_t i = 0; i < set->n_notes; i++)
		free(set->notes[i]);
	free(set->notes);
	free(set->v);
	memset(set, 0, sizeof *set);
}

int runobs_n_values(const struct runobs *o)
{
	int n = 0;
	for (int i = 0; i < o->n_pts; i++)
		for (int m = 0; m < OBS_N_METRICS; m++)
			n += !isnan(o->pts[i].ms[m]);
	return n;
}
