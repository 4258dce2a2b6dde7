#include "runobs.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calibcsv.h"
#include "jsonvals.h"
#include "llamabench.h"
#include "llamabenchtext.h"
#include "obscheck.h"
#include "ollamaverbose.h"
#include "promscrape.h"
#include "runobs_int.h"
#include "sglangmetrics.h"
#include "textfile.h"
#include "vllmlog.h"
#include "xalloc.h"

const char *const runobs_metric_names[] = { "ttft", "itl", "e2e", NULL };

#define TRIED "vllm bench serve result JSON (one or --append-result's several), SGLang bench_serving JSON lines, " \
	      "Ollama /api/generate or /api/chat JSON, `ollama run --verbose` text, llama-server responses, llama-bench Markdown/CSV/JSON/JSONL/SQL, " \
	      "LLMPerf, trtllm-bench, GenAI-Perf or GuideLLM summary JSON, " \
	      "Prometheus text of vLLM's or SGLang's /metrics, servesim calibration CSVs (*_experiments.csv, *_measured.csv)"

void runobs_note(struct runobs_set *set, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void runobs_note(struct runobs_set *set, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	xgrow(&set->notes, &set->cap_notes, set->n_notes + 1, sizeof *set->notes);
	set->notes[set->n_notes++] = xstrdup(buf);
}

char *runobs_read_text(const char *path, struct err *e)
{
	return textfile_read(path, RUNOBS_MAX_FILE_BYTES, e);
}

/* ---- building a scenario ----------------------------------------------- */


bool runobs_user_sets(const struct runobs_opts *o, const char *section, const char *key)
{
	return o->overrides && inidoc_find(o->overrides, section, key);
}

/* Loads ob->sc from ini_path (NULL: the built-in default) with ov, the
 * user's overrides last, then subsamples a staged run. Frees ov. */
int runobs_finish(struct runobs *ob, const char *ini_path, struct inidoc *ov, const struct runobs_opts *o,
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

void runobs_init(struct runobs *ob, const char *format, int clock, int itl)
{
	memset(ob, 0, sizeof *ob);
	ob->format = format;
	ob->clock = clock;
	ob->itl = itl;
}

struct runobs_point *runobs_add_point(struct runobs *ob, int stage)
{
	struct runobs_point *p = &ob->pts[ob->n_pts++];
	p->stage = stage;
	for (int m = 0; m < OBS_N_METRICS; m++)
		p->ms[m] = NAN;
	return p;
}

/* Adds ob to set once obscheck_values accepts it; otherwise -1 with e
 * and nothing is added. */
int runobs_push(struct runobs_set *set, const struct runobs *ob, const char *path, struct err *e)
{
	if (obscheck_values(ob, path, e))
		return -1;
	xgrow(&set->v, &set->cap, set->len + 1, sizeof *set->v);
	set->v[set->len++] = *ob;
	return 0;
}

/* The run.* settings of a one-model observation. */
int runobs_add_run(struct inidoc *ov, const char *model, const char *weights, const struct runobs_opts *o,
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
int runobs_add_single_request(struct inidoc *ov, long long in, long long out, struct err *e)
{
	return inidoc_add_overridef(ov, e, "engine.max_model_len=%lld", in + out < 2 ? 2 : in + out) ||
	       inidoc_add_overridef(ov, e, "workload.num_prompts=1") || inidoc_add_overridef(ov, e, "workload.request_rate=inf") ||
	       inidoc_add_overridef(ov, e, "workload.max_concurrency=1") ||
	       inidoc_add_overridef(ov, e, "workload.random_input_len=%lld", in) ||
	       inidoc_add_overridef(ov, e, "workload.random_output_len=%lld", out) ||
	       inidoc_add_overridef(ov, e, "workload.random_range_ratio=0") || inidoc_add_overridef(ov, e, "workload.random_prefix_len=0");
}


/* ---- detection -------------------------------------------------------------------- */

int runobs_load(struct runobs_set *set, const char *path, const struct runobs_opts *o, struct err *e)
{
	char *text = runobs_read_text(path, e);
	if (!text)
		return -1;
	const char *p = text;
	while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n')
		p++;
	int rc = 0;
	bool handled = false;
	if (*p == '{' || *p == '[') {
		char *clean = jsonvals_sanitize(text);   /* Python's Infinity (SGLang) */
		rc = runobs_from_json_text(set, clean, path, o, e, &handled);
		free(clean);
	} else if (*p) {
		char first[1024];
		size_t n = strcspn(p, "\r\n");
		snprintf(first, sizeof first, "%.*s", (int)(n < sizeof first ? n : sizeof first - 1), p);
		enum calibcsv_kind ck = calibcsv_sniff(first);
		handled = true;
		if (ck != CALIBCSV_NONE) {
			rc = runobs_from_calibration(set, ck, path, o, e);
		} else if (llamabench_sniff_header(first)) {
			struct llamabench_list l;
			rc = llamabench_parse_csv(&l, text, path, e);
			if (!rc)
				rc = runobs_from_llamabench(set, &l, path, o, e);
			llamabench_free(&l);
		} else if (promscrape_sniff(text, "vllm:")) {
			rc = runobs_from_prometheus(set, text, path, o, e);
		} else if (sglangmetrics_sniff(text)) {
			char *as_vllm = sglangmetrics_as_vllm(text);
			rc = runobs_from_prometheus(set, as_vllm, path, o, e);
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
				rc = runobs_from_ollama(set, conv, path, o, e);
			else if (!(rc = llamabench_parse_csv(&l, conv, path, e)))
				rc = runobs_from_llamabench(set, &l, path, o, e);
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

