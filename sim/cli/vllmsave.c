/*
 * vllmsave: `servesim run --save-result`, written as vllm bench serve
 * writes it (vllm/benchmarks/serve.py, main: file_name, --append-result,
 * --metadata, --label; formats.md §1 "Saved JSON").
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "catalog.h"
#include "report.h"
#include "scenario.h"
#include "textfile.h"
#include "vllmflags.h"
#include "wholefile.h"
#include "xalloc.h"

/* Python's str(float): 4.0, 2.5, inf. */
static void py_float(double v, char *out, size_t cap)
{
	if (isinf(v))
		snprintf(out, cap, "inf");
	else if (v == floor(v) && fabs(v) < 1e15)
		snprintf(out, cap, "%.1f", v);
	else
		snprintf(out, cap, "%.17g", v);
}

int vllmflags_save_result(const struct vllm_out *o, json_t *result, const struct scenario *sc,
			  const char *model_id, const struct run_result *run, struct err *e)
{
	const char *label = o->label ? o->label : "servesim";
	if (o->label)
		json_object_set_new(result, "label", json_string(o->label));
	for (size_t i = 0; i < o->n_metadata; i++) {
		const char *eq = strchr(o->metadata[i], '=');
		char key[256];
		snprintf(key, sizeof key, "%.*s", (int)(eq - o->metadata[i]), o->metadata[i]);
		json_object_set_new(result, key, json_string(eq + 1));
	}
	char name[1024];
	if (o->result_filename) {
		snprintf(name, sizeof name, "%s", o->result_filename);
	} else {
		char rate[64], conc[64] = "", dt[32];
		py_float(sc->request_rate, rate, sizeof rate);
		if (sc->max_concurrency > 0)
			snprintf(conc, sizeof conc, "-concurrency%lld", (long long)sc->max_concurrency);
		time_t now = time(NULL);
		struct tm tm;
		localtime_r(&now, &tm);
		strftime(dt, sizeof dt, "%Y%m%d-%H%M%S", &tm);
		const char *base = strrchr(model_id, '/');
		snprintf(name, sizeof name, "%s-%sqps%s-%s-%s.json", label, rate, conc, base ? base + 1 : model_id, dt);
	}
	char path[2048];
	/* vLLM: os.makedirs(result_dir, exist_ok=True). */
	if (o->result_dir && wholefile_mkdirs(o->result_dir, e))
		return -1;
	if (o->result_dir)
		snprintf(path, sizeof path, "%s/%s", o->result_dir, name);
	else
		snprintf(path, sizeof path, "%s", name);
	/* --append-result: the file so far (none yet: empty). */
	char *before = o->append_result && catalog_is_file(path) ? textfile_read(path, (size_t)1 << 30, e) : xstrdup("");
	FILE *f = before ? wholefile_open(path, e) : NULL;
	int rc = -1;
	if (f) {
		/* vLLM: "a+" mode, a newline between results when the file is not empty. */
		fputs(before, f);
		if (before[0])
			fputc('\n', f);
		if (report_json_dumpf(result, f, JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(12), run, e)) {
			wholefile_abort(f, path);
		} else {
			rc = wholefile_commit(f, path, e);
		}
	}
	if (rc == 0)
		fprintf(stderr, "servesim run: result %s %s\n", o->append_result ? "appended to" : "saved to", path);
	free(before);
	return rc;
}
