/*
 * runobs_bench: benchmark-client results as observations (runobs_int.h).
 */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "benchres.h"
#include "jsonvals.h"
#include "llamabench.h"
#include "llamaserver.h"
#include "ollamaresp.h"
#include "otherbench.h"
#include "pathname.h"
#include "runobs_int.h"

/* ---- vllm bench serve ---------------------------------------------------- */

/* One result: the whole file (result 0) or the result-th of several. Its
 * per-request arrays, when saved (vLLM --save-detailed, SGLang
 * --output-details), are the replay's requests (the trace reader reads
 * that result again); without them, `completed` requests of the mean
 * lengths. */
int runobs_from_vllm(struct runobs_set *set, const json_t *top, const char *path, int result,
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
	bool sglang = !strcmp(b.version, "sglang bench_serving");
	runobs_init(&ob, sglang ? "sglang-bench" : "vllm-bench", OBS_CLOCK_CLIENT, OBS_ITL_GAPS);
	snprintf(ob.id, sizeof ob.id, "%s", pathname_base(path));
	struct inidoc ov = { 0 };
	int rc = runobs_add_run(&ov, model, o->weights, o, e);
	bool arrays = b.has_input_lens && b.has_output_lens;
	if (!rc && arrays) {
		if (strlen(path) >= INI_VALUE_MAX)
			rc = err_set(e, "%s: path longer than %d characters", path, INI_VALUE_MAX - 1);
		else
			rc = inidoc_add_overridef(&ov, e, "workload.trace=%s", path) || inidoc_add_overridef(&ov, e, "workload.trace_format=vllm") ||
			     inidoc_add_overridef(&ov, e, "workload.trace_result=%d", result);
		if (!rc && o->max_requests > 0)
			rc = inidoc_add_overridef(&ov, e, "workload.num_prompts=%lld", (long long)o->max_requests);
		if (!b.has_start_times) {
			char at[32] = "";
			if (result > 0)
				snprintf(at, sizeof at, " (result %d)", result);
			runobs_note(set, "%s%s: start_times: missing (%s): its %zu successful requests (input_lens, output_lens) sent at times redrawn from request_rate and burstiness",
				    path, at, b.version, b.n_detailed_ok);
		}
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
		runobs_note(set, "%s: %s: missing (saved without --save-detailed): replayed as %lld requests of the mean lengths (total_input_tokens/completed = %lld in, total_output_tokens/completed = %lld out) at its request_rate and max_concurrency",
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
	if (runobs_finish(&ob, NULL, &ov, o, e))
		return -1;
	struct runobs_point *p = runobs_add_point(&ob, -1);
	p->ms[OBS_TTFT] = b.ms[LAT_TTFT][BENCH_MEAN];
	p->ms[OBS_ITL] = b.ms[LAT_ITL][BENCH_MEAN];
	p->ms[OBS_E2E] = b.ms[LAT_E2EL][BENCH_MEAN];
	return runobs_push(set, &ob, path, e);
}


/* ---- any JSON text ----------------------------------------------------------------- */

int runobs_from_json_text(struct runobs_set *set, const char *text, const char *path,
			  const struct runobs_opts *o, struct err *e, bool *handled)
{
	json_error_t je;
	json_t *top = json_loads(text, JSON_REJECT_DUPLICATES, &je);
	*handled = true;
	if (top) {
		int rc;
		if (benchres_sniff(top)) {
			rc = runobs_from_vllm(set, top, path, 0, o, e);
		} else if (json_is_array(top) && llamabench_sniff_json(json_array_get(top, 0))) {
			struct llamabench_list l;
			rc = llamabench_parse_json(&l, top, path, e);
			if (!rc)
				rc = runobs_from_llamabench(set, &l, path, o, e);
			llamabench_free(&l);
		} else if (ollamaresp_sniff(top)) {
			rc = runobs_from_ollama(set, text, path, o, e);
		} else if (llamaserver_sniff(top)) {
			rc = runobs_from_llamaserver(set, text, path, o, e);
		} else if (otherbench_sniff(top)) {
			/* LLMPerf, trtllm-bench, GenAI-Perf, GuideLLM: as vllm results. */
			json_t *runs = otherbench_as_vllm(top, path, e), *run;
			size_t k;
			rc = runs ? 0 : -1;
			json_array_foreach(runs, k, run) {
				if (rc || (rc = runobs_from_vllm(set, run, path, 0, o, e)))
					break;
				struct runobs *ob = &set->v[set->len - 1];
				ob->format = otherbench_sniff(top);
				if (set->n_notes) {   /* from_vllm's note speaks of vLLM's --save-detailed */
					free(set->notes[--set->n_notes]);
					runobs_note(set, "%s: a %s summary: replayed as %lld requests of its mean lengths (%lld in, %lld out)",
					     path, ob->format, (long long)ob->sc.num_prompts, (long long)ob->sc.input.mean,
					     (long long)ob->sc.output.mean);
				}
				if (json_array_size(runs) > 1)
					snprintf(set->v[set->len - 1].id, sizeof set->v->id, "%s#%zu", pathname_base(path), k);
			}
			json_decref(runs);
		} else if (llamabench_sniff_json(top)) {
			struct llamabench_list l;
			rc = llamabench_parse_jsonl(&l, text, path, e);
			if (!rc)
				rc = runobs_from_llamabench(set, &l, path, o, e);
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
		rc = runobs_from_ollama(set, text, path, o, e);
	} else if (llamaserver_sniff(first)) {
		rc = runobs_from_llamaserver(set, text, path, o, e);
	} else if (llamabench_sniff_json(first)) {
		struct llamabench_list l;
		rc = llamabench_parse_jsonl(&l, text, path, e);
		if (!rc)
			rc = runobs_from_llamabench(set, &l, path, o, e);
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
			/* Each result with its per-request arrays replays them
			 * (workload.trace_result picks it out of the file). */
			rc = runobs_from_vllm(set, vals.v[i], path, (int)i + 1, o, e);
			if (rc)
				err_prefix(e, "%s:%d: result %zu of %zu", path, vals.line[i], i + 1, vals.len);
			if (!rc)
				snprintf(set->v[set->len - 1].id, sizeof set->v->id, "%s:%d", pathname_base(path), vals.line[i]);
		}
	} else {
		*handled = false;
	}
	jsonvals_free(&vals);
	return rc;
}

