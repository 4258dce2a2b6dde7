/*
 * runobs_local: local engines' own timings as observations (runobs_int.h).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "llamabench.h"
#include "llamaserver.h"
#include "ollamaresp.h"
#include "pathname.h"
#include "runobs_int.h"

/* ---- Ollama ------------------------------------------------------------------ */

int runobs_from_ollama(struct runobs_set *set, const char *text, const char *path,
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
		runobs_init(&ob, "ollama", OBS_CLOCK_ENGINE, OBS_ITL_GAPS);
		snprintf(ob.id, sizeof ob.id, "%s:%d", pathname_base(path), r->line);
		struct inidoc ov = { 0 };
		if (runobs_add_run(&ov, o->model, o->weights, o, e) ||
		    runobs_add_single_request(&ov, r->prompt_eval_count, r->eval_count, e) ||
		    runobs_finish(&ob, NULL, &ov, o, e)) {
			inidoc_free(&ov);
			ollamaresp_free(&l);
			return err_prefix(e, "%s:%d", path, r->line);
		}
		struct runobs_point *p = runobs_add_point(&ob, -1);
		/* 0 is "not reported"; anything else is measured, and push
		 * refuses what cannot be (a negative duration). */
		if (r->prompt_eval_duration_ns != 0)
			p->ms[OBS_TTFT] = (double)r->prompt_eval_duration_ns / 1e6;
		if (r->eval_count >= 2 && r->eval_duration_ns != 0)
			p->ms[OBS_ITL] = (double)r->eval_duration_ns / (double)r->eval_count / 1e6;
		if (r->prompt_eval_duration_ns != 0 && r->eval_duration_ns != 0)
			p->ms[OBS_E2E] = ((double)r->prompt_eval_duration_ns + (double)r->eval_duration_ns) / 1e6;
		if (runobs_push(set, &ob, path, e)) {
			ollamaresp_free(&l);
			return -1;
		}
	}
	if (skipped)
		runobs_note(set, "%s: %zu responses without prompt_eval_count/eval_count or durations skipped", path, skipped);
	runobs_note(set, "%s: prompt_eval_count includes prompt-cache hits in newer Ollama while prompt_eval_duration counts only computed tokens; the replay assumes no cache hit",
	     path);
	ollamaresp_free(&l);
	return 0;
}


/* ---- llama-bench ----------------------------------------------------------------- */

int runobs_from_llamabench(struct runobs_set *set, struct llamabench_list *l, const char *path,
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
			runobs_note(set, "%s:%d: model_type '%s': quantization not recognised; the model's own precision is used (pass --weights)",
			     path, t->line, t->model_type);
		struct runobs ob;
		runobs_init(&ob, "llama-bench", OBS_CLOCK_ENGINE, OBS_ITL_GAPS);
		char test[48];
		if (t->n_gen == 0)
			snprintf(test, sizeof test, "pp%lld", (long long)t->n_prompt);
		else if (t->n_prompt == 0)
			snprintf(test, sizeof test, "tg%lld", (long long)t->n_gen);
		else
			snprintf(test, sizeof test, "pp%lld+tg%lld", (long long)t->n_prompt, (long long)t->n_gen);
		snprintf(ob.id, sizeof ob.id, "%s:%d (%s)", pathname_base(path), t->line, test);
		long long in = t->n_prompt > 0 ? t->n_prompt : 1, out = t->n_gen + 1;
		struct inidoc ov = { 0 };
		if (runobs_add_run(&ov, o->model, weights, o, e) || runobs_add_single_request(&ov, in, out, e) ||
		    inidoc_add_overridef(&ov, e, "engine.max_num_batched_tokens=%lld", (long long)t->n_ubatch) ||
		    runobs_finish(&ob, NULL, &ov, o, e)) {
			inidoc_free(&ov);
			return err_prefix(e, "%s:%d", path, t->line);
		}
		struct runobs_point *p = runobs_add_point(&ob, -1);
		if (t->n_gen == 0)
			p->ms[OBS_TTFT] = t->avg_ns / 1e6;
		else if (t->n_prompt == 0)
			p->ms[OBS_ITL] = t->avg_ns / (double)t->n_gen / 1e6;
		else
			p->ms[OBS_E2E] = t->avg_ns / 1e6;
		if (runobs_push(set, &ob, path, e))
			return -1;
	}
	if (depth)
		runobs_note(set, "%s: %zu tests with n_depth > 0 skipped (a simulation starts with an empty KV cache)",
		     path, depth);
	return 0;
}


/* ---- llama-server ---------------------------------------------------------------- */

/* llama-server responses: as the Ollama lines its runner would write. */
int runobs_from_llamaserver(struct runobs_set *set, const char *text, const char *path,
			    const struct runobs_opts *o, struct err *e)
{
	char *lines = llamaserver_to_ollama(text, path, e);
	if (!lines)
		return -1;
	size_t first = set->len;
	int rc = runobs_from_ollama(set, lines, path, o, e);
	for (size_t i = first; i < set->len; i++)
		set->v[i].format = "llama-server";
	free(lines);
	return rc;
}

