#include "validateany.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "benchres.h"
#include "jsonvals.h"
#include "num.h"
#include "run.h"
#include "runfit.h"
#include "runobs.h"
#include "vllmlog.h"
#include "xalloc.h"

bool validateany_is_vllm_result(const char *path)
{
	struct err e;
	char *text = runobs_read_text(path, &e);
	if (!text)
		return true;   /* validate_run reports it */
	struct jsonvals v;
	bool one = jsonvals_parse(&v, text, path, &e) == 0 && v.len == 1 && benchres_sniff(v.v[0]);
	jsonvals_free(&v);
	free(text);
	return one;
}

static json_t *row(const char *obs, const char *metric, double measured, double predicted)
{
	json_t *r = json_object();
	json_object_set_new(r, "observation", json_string(obs));
	json_object_set_new(r, "metric", json_string(metric));
	json_object_set_new(r, "measured", isfinite(measured) ? json_real(measured) : json_null());
	json_object_set_new(r, "predicted", isfinite(predicted) ? json_real(predicted) : json_null());
	double err = 100 * (predicted - measured) / measured;
	json_object_set_new(r, "error_pct", isfinite(err) ? json_real(err) : json_null());
	return r;
}

static json_t *doc(const char *path, const char *format, const char *model, const char *hardware)
{
	json_t *d = json_object();
	json_object_set_new(d, "file", json_string(path));
	json_object_set_new(d, "format", json_string(format));
	json_object_set_new(d, "model", json_string(model ? model : ""));
	json_object_set_new(d, "hardware", json_string(hardware));
	json_object_set_new(d, "rows", json_array());
	json_object_set_new(d, "notes", json_array());
	return d;
}

/* The start-up log against the simulated engine's memory plan. */
static json_t *startup_log(const char *path, const char *text, const struct validate_opts *o, struct err *e)
{
	struct vllmlog l;
	if (vllmlog_parse(&l, text, path, e))
		return NULL;
	if (!o->model) {
		err_set(e, "%s: a vLLM start-up log: pass --model (and --hardware) for the simulated pool", path);
		return NULL;
	}
	const char *hw = o->hardware ? o->hardware : VALIDATE_DEFAULT_HARDWARE;
	struct inidoc ov = { 0 };
	int rc = inidoc_add_overridef(&ov, e, "run.model=%s", o->model) ||
		 inidoc_add_overridef(&ov, e, "run.hardware=%s", hw) ||
		 inidoc_add_overridef(&ov, e, "workload.num_prompts=1") ||
		 inidoc_add_overridef(&ov, e, "workload.random_output_len=2");
	if (!rc && o->weights)
		rc = inidoc_add_overridef(&ov, e, "run.weights=%s", o->weights);
	bool util_given = o->overrides && inidoc_find(o->overrides, "engine", "gpu_memory_utilization");
	if (!rc && !util_given && isfinite(l.gpu_memory_utilization))
		rc = inidoc_add_overridef(&ov, e, "engine.gpu_memory_utilization=%.17g", l.gpu_memory_utilization);
	if (!rc && o->overrides)
		inidoc_add_overrides(&ov, o->overrides);
	struct scenario sc;
	struct run_result res;
	memset(&res, 0, sizeof res);
	if (!rc)
		rc = scenario_load(&sc, NULL, &ov, e) || run_simulate(&sc, &res, e);
	inidoc_free(&ov);
	if (rc) {
		run_result_free(&res);
		err_prefix(e, "%s", path);
		return NULL;
	}
	const struct engine_stats *es = &res.engine;
	json_t *d = doc(path, "vllm start-up log", o->model, hw);
	json_t *rows = json_object_get(d, "rows");
	double kv_bytes = (double)es->num_gpu_blocks * es->kv_bytes_per_block;
	json_array_append_new(rows, row("KV pool", "weights_gib", l.weights_gib, es->weight_bytes_per_gpu / GIB));
	json_array_append_new(rows, row("KV pool", "activation_peak_gib", l.activation_gib, es->activation_bytes / GIB));
	json_array_append_new(rows, row("KV pool", "non_torch_gib", l.non_torch_gib, es->non_torch_bytes / GIB));
	json_array_append_new(rows, row("KV pool", "kv_cache_gib", l.kv_gib, kv_bytes / GIB));
	json_array_append_new(rows, row("KV pool", "kv_cache_tokens", l.kv_tokens,
					(double)es->num_gpu_blocks * (double)res.sc.engine.block_size));
	if (isfinite(l.gpu_blocks))
		json_array_append_new(rows, row("KV pool", "num_gpu_blocks", l.gpu_blocks, (double)es->num_gpu_blocks));
	char note[512];
	snprintf(note, sizeof note,
		 "simulated at gpu_memory_utilization %.2f%s; device memory: the log's total_gpu_memory %.2f GiB, the profile's %.2f GiB",
		 res.sc.engine.gpu_memory_utilization, util_given ? " (--set)" : isfinite(l.gpu_memory_utilization) ? " (the log's)" : "",
		 l.total_gpu_gib, hw_memory_bytes(&res.hw) / GIB);
	json_array_append_new(json_object_get(d, "notes"), json_string(note));
	run_result_free(&res);
	return d;
}

/* Every observation runobs reads, simulated, on its own clock. */
static json_t *observations(const char *path, const struct validate_opts *o, struct err *e)
{
	const char *hw = o->hardware ? o->hardware : VALIDATE_DEFAULT_HARDWARE;
	struct runobs_opts ro = { .hardware = hw, .model = o->model, .weights = o->weights, .overrides = o->overrides };
	struct runobs_set set = { 0 };
	if (runobs_load(&set, path, &ro, e)) {
		runobs_set_free(&set);
		return NULL;
	}
	json_t *d = doc(path, set.len ? set.v[0].format : "", o->model, hw);
	json_t *rows = json_object_get(d, "rows");
	static const char *const keys[OBS_N_METRICS] = { "mean_ttft_ms", "mean_itl_ms", "mean_e2el_ms" };
	for (size_t i = 0; i < set.len; i++) {
		const struct runobs *ob = &set.v[i];
		struct run_result res;
		memset(&res, 0, sizeof res);
		if (run_simulate(&ob->sc, &res, e)) {
			run_result_free(&res);
			runobs_set_free(&set);
			json_decref(d);
			err_prefix(e, "%s", ob->id);
			return NULL;
		}
		for (int p = 0; p < ob->n_pts; p++) {
			double ms[OBS_N_METRICS];
			runfit_measure(&res, ob, &ob->pts[p], ms);
			char id[200];
			if (ob->pts[p].stage >= 0)
				snprintf(id, sizeof id, "%s stage %d", ob->id, ob->pts[p].stage);
			else
				snprintf(id, sizeof id, "%s", ob->id);
			for (int m = 0; m < OBS_N_METRICS; m++)
				if (!isnan(ob->pts[p].ms[m]))
					json_array_append_new(rows, row(id, keys[m], ob->pts[p].ms[m], ms[m]));
		}
		run_result_free(&res);
	}
	json_t *notes = json_object_get(d, "notes");
	json_array_append_new(notes, json_string("times on each measurement's clock: engine (Ollama, llama-bench, /metrics) "
						 "from arrival at the engine, client (benchmark results) from the send"));
	for (size_t i = 0; i < set.n_notes; i++)
		json_array_append_new(notes, json_string(set.notes[i]));
	runobs_set_free(&set);
	return d;
}

json_t *validateany_run(const char *path, const struct validate_opts *o, struct err *e)
{
	char *text = runobs_read_text(path, e);
	if (!text)
		return NULL;
	json_t *d = vllmlog_sniff(text) ? startup_log(path, text, o, e) : observations(path, o, e);
	free(text);
	return d;
}

void validateany_print(FILE *f, const json_t *r)
{
	fprintf(f, "%s\n", "================= servesim validate =================");
	fprintf(f, "%-12s %s (%s)\n", "File:", json_string_value(json_object_get(r, "file")),
		json_string_value(json_object_get(r, "format")));
	fprintf(f, "%-12s %s\n", "Model:", json_string_value(json_object_get(r, "model")));
	fprintf(f, "%-12s %s\n", "Hardware:", json_string_value(json_object_get(r, "hardware")));
	fprintf(f, "%-30s %-20s %12s %12s %9s\n", "", "", "measured", "predicted", "error");
	size_t i;
	json_t *x;
	json_array_foreach(json_object_get(r, "rows"), i, x) {
		fprintf(f, "%-30.30s %-20s", json_string_value(json_object_get(x, "observation")),
			json_string_value(json_object_get(x, "metric")));
		static const char *const cols[] = { "measured", "predicted" };
		for (int c = 0; c < 2; c++) {
			json_t *v = json_object_get(x, cols[c]);
			if (json_is_number(v))
				fprintf(f, " %12.2f", json_number_value(v));
			else
				fprintf(f, " %12s", "-");
		}
		json_t *err = json_object_get(x, "error_pct");
		if (json_is_number(err))
			fprintf(f, " %+8.1f%%\n", json_number_value(err));
		else
			fprintf(f, " %9s\n", "-");
	}
	json_array_foreach(json_object_get(r, "notes"), i, x)
		fprintf(f, "note: %s\n", json_string_value(x));
	fprintf(f, "%s\n", "=====================================================");
}
