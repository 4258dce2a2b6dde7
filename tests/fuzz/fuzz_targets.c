#include "fuzz_targets.h"

#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "benchres.h"
#include "calibcsv.h"
#include "hwprofile.h"
#include "inidoc.h"
#include "llamabench.h"
#include "model.h"
#include "plan.h"
#include "ollamaresp.h"
#include "plot.h"
#include "probecsv.h"
#include "promscrape.h"
#include "resultdoc.h"
#include "run.h"
#include "runobs.h"
#include "scenario.h"
#include "sweep.h"
#include "trace.h"
#include "vllmflags.h"
#include "workload.h"
#include "xalloc.h"

/* The harness's scratch folder, made once per process: TMPDIR's, else
 * /dev/shm's (memory: creating, writing and deleting a file on a disk's
 * file system cost more than most parsers' work on it), else /tmp's. It
 * holds the one file of each suffix, rewritten for every input, and the
 * run_dir target's folder; it goes at exit. This is the harness's fixture,
 * not the product's state. */
static char scratch[160];

/* Removes path and, a folder, what is in it (two levels are all the
 * targets write). */
static void remove_tree(const char *path, int depth)
{
	DIR *d = depth > 0 ? opendir(path) : NULL;
	if (d) {
		struct dirent *de;
		char sub[512];
		while ((de = readdir(d)))
			if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..")) {
				snprintf(sub, sizeof sub, "%s/%s", path, de->d_name);
				remove_tree(sub, depth - 1);
			}
		closedir(d);
	}
	remove(path);
}

static void scratch_cleanup(void)
{
	if (scratch[0])
		remove_tree(scratch, 3);
}

static const char *scratch_dir(void)
{
	if (scratch[0])
		return scratch;
	const char *dir = getenv("TMPDIR");
	struct stat st;
	if (!dir || !dir[0])
		dir = stat("/dev/shm", &st) == 0 && S_ISDIR(st.st_mode) && access("/dev/shm", W_OK) == 0
			      ? "/dev/shm"
			      : "/tmp";
	int n = snprintf(scratch, sizeof scratch, "%s/servesim-fuzz-%ld", dir, (long)getpid());
	if (n < 0 || (size_t)n >= sizeof scratch) {
		fprintf(stderr, "fuzz: TMPDIR '%s' is too long\n", dir);
		abort();
	}
	if (mkdir(scratch, 0700) && errno != EEXIST) {
		perror(scratch);
		abort(); /* the harness cannot run: not a finding */
	}
	atexit(scratch_cleanup);
	return scratch;
}

/* The bytes in the scratch file named suffix (path in out, cap bytes):
 * the same file each input, truncated and rewritten. */
static void as_file(const uint8_t *data, size_t size, const char *suffix, char *out, size_t cap)
{
	snprintf(out, cap, "%s/%s", scratch_dir(), suffix);
	FILE *f = fopen(out, "wb");
	if (!f) {
		perror(out);
		abort(); /* the harness cannot run: not a finding */
	}
	if (size && fwrite(data, 1, size, f) != size) {
		perror(out);
		abort();
	}
	fclose(f);
}

/* The bytes as a NUL-terminated string (a NUL inside ends it early, as it
 * does for the readers that take text). */
static char *as_text(const uint8_t *data, size_t size)
{
	char *s = xmalloc(size + 1);
	memcpy(s, data, size);
	s[size] = '\0';
	return s;
}

static void scenario_ini(const uint8_t *data, size_t size)
{
	char path[256];
	struct err e;
	struct scenario sc;
	as_file(data, size, "scenario.ini", path, sizeof path);
	scenario_load(&sc, path, NULL, &e);
}

/* One --set SECTION.KEY=VALUE a line, applied to the built-in default. */
static void set_flags(const uint8_t *data, size_t size)
{
	char *text = as_text(data, size), *save = NULL;
	struct inidoc ov = { 0 };
	struct err e;
	int rc = 0;
	for (char *line = strtok_r(text, "\n", &save); line && !rc;
	     line = strtok_r(NULL, "\n", &save))
		rc = inidoc_add_override(&ov, line, &e);
	if (!rc) {
		struct scenario sc;
		scenario_load(&sc, NULL, &ov, &e);
	}
	inidoc_free(&ov);
	free(text);
}

/* A whole simulation from --set lines: what the engines do with any
 * settings that pass the checks. The load is cut to a few short requests
 * (a fuzzer's execution must take milliseconds); traces and length files,
 * which name files, are not followed. */
static void run_set(const uint8_t *data, size_t size)
{
	char *text = as_text(data, size), *save = NULL;
	struct inidoc ov = { 0 };
	struct err e;
	struct scenario sc;
	int rc = 0;
	for (char *line = strtok_r(text, "\n", &save); line && !rc;
	     line = strtok_r(NULL, "\n", &save))
		rc = inidoc_add_override(&ov, line, &e);
	if (!rc && scenario_load(&sc, NULL, &ov, &e) == 0 && !sc.trace[0] && !sc.input.file[0] &&
	    !sc.output.file[0] && sc.n_stages == 0) {
		sc.num_prompts = sc.num_prompts < 12 ? sc.num_prompts : 12;
		sc.users = sc.users < 3 ? sc.users : 3;
		sc.turns = sc.turns < 3 ? sc.turns : 3;
		sc.input.mean = sc.input.mean < 4096 ? sc.input.mean : 4096;
		sc.random_prefix_len = sc.random_prefix_len < 2048 ? sc.random_prefix_len : 2048;
		sc.output.mean = sc.output.mean < 48 ? sc.output.mean : 48;
		struct run_result *res = xcalloc(1, sizeof *res);
		run_simulate(&sc, res, &e);
		run_result_free(res);
		free(res);
	}
	inidoc_free(&ov);
	free(text);
}

/* The planning flags: --vary SPEC, --slo SPEC, --shard K/N, one value
 * per input. */
static void vary_flag(const uint8_t *data, size_t size)
{
	char *text = as_text(data, size);
	struct sweep_axis ax;
	struct err e;
	memset(&ax, 0, sizeof ax);
	sweep_axis_parse(&ax, text, &e);
	sweep_axis_free(&ax); /* also after a failure */
	free(text);
}

static void slo_flag(const uint8_t *data, size_t size)
{
	char *text = as_text(data, size);
	struct plan_slo slo;
	struct err e;
	plan_slo_parse(&slo, text, &e);
	struct shard sh;
	resultdoc_shard_parse(&sh, text, &e);
	free(text);
}

/* An empirical length file (input_file): the default scenario with its
 * input lengths drawn from the bytes, 8 requests made. */
static void lengths_file(const uint8_t *data, size_t size)
{
	char path[256], set[300];
	struct err e;
	struct inidoc ov = { 0 };
	struct scenario sc;
	as_file(data, size, "lengths.txt", path, sizeof path);
	snprintf(set, sizeof set, "workload.input_file=%s", path);
	if (inidoc_add_override(&ov, "workload.input_distribution=empirical", &e) == 0 &&
	    inidoc_add_override(&ov, set, &e) == 0 &&
	    inidoc_add_override(&ov, "workload.num_prompts=8", &e) == 0 &&
	    scenario_load(&sc, NULL, &ov, &e) == 0) {
		struct reqtab reqs = { 0 };
		workload_destroy(workload_create(&sc, &reqs, &e));
		reqtab_free(&reqs);
	}
	inidoc_free(&ov);
}

static void hw_ini(const uint8_t *data, size_t size)
{
	char path[256];
	struct err e;
	struct hw_profile hw;
	as_file(data, size, "hw.ini", path, sizeof path);
	hw_load(&hw, path, &e);
}

/* A model file: suffix config.json for a Hugging Face config, model.gguf
 * for a GGUF header (gguf.c): model_load goes by the suffix. */
static void model_file(const uint8_t *data, size_t size, const char *suffix)
{
	char path[256];
	struct err e;
	struct model m;
	as_file(data, size, suffix, path, sizeof path);
	model_load(&m, path, &e);
}

static void model_json(const uint8_t *data, size_t size)
{
	model_file(data, size, "config.json");
}

static void gguf_file(const uint8_t *data, size_t size)
{
	model_file(data, size, "model.gguf");
}

/* A generation_config.json alone (genconfig_load); the model target's
 * config.json reads none, since its scratch folder has no such file. */
static void gen_config(const uint8_t *data, size_t size)
{
	char path[256];
	struct err e;
	struct genconfig g;
	as_file(data, size, "generation_config.json", path, sizeof path);
	genconfig_load(&g, path, &e);
	remove(path);
}

static void trace_as(const uint8_t *data, size_t size, const char *format)
{
	char path[256];
	struct err e;
	struct trace t;
	as_file(data, size, "trace", path, sizeof path);
	if (trace_load(&t, path, format, &e) == 0)
		trace_free(&t);
}

static void trace_auto(const uint8_t *d, size_t n)
{
	trace_as(d, n, "auto");
}
static void trace_vllm(const uint8_t *d, size_t n)
{
	trace_as(d, n, "vllm");
}
static void trace_azure(const uint8_t *d, size_t n)
{
	trace_as(d, n, "azure");
}
static void trace_mooncake(const uint8_t *d, size_t n)
{
	trace_as(d, n, "mooncake");
}
static void trace_csv(const uint8_t *d, size_t n)
{
	trace_as(d, n, "csv");
}

static void vllm_bench(const uint8_t *data, size_t size)
{
	char path[256];
	struct err e;
	struct benchres *b = xcalloc(1, sizeof *b);
	as_file(data, size, "bench.json", path, sizeof path);
	benchres_load(b, path, &e);
	free(b);
}

static void ollama_jsonl(const uint8_t *data, size_t size)
{
	char *text = as_text(data, size);
	struct ollamaresp_list l;
	struct err e;
	ollamaresp_parse(&l, text, "fuzz.jsonl", &e);
	ollamaresp_free(&l); /* also after a failure */
	free(text);
}

static void llamabench_csv(const uint8_t *data, size_t size)
{
	char *text = as_text(data, size);
	struct llamabench_list l;
	struct err e;
	llamabench_parse_csv(&l, text, "fuzz.csv", &e);
	llamabench_free(&l); /* also after a failure */
	free(text);
}

static void llamabench_json(const uint8_t *data, size_t size)
{
	char *text = as_text(data, size);
	struct llamabench_list l;
	struct err e;
	json_t *top = json_loads(text, JSON_REJECT_DUPLICATES, NULL);
	if (json_is_array(top))
		llamabench_parse_json(&l, top, "fuzz.json", &e);
	else
		llamabench_parse_jsonl(&l, text, "fuzz.jsonl", &e);
	llamabench_free(&l); /* also after a failure */
	json_decref(top);
	free(text);
}

static void prometheus(const uint8_t *data, size_t size)
{
	char *text = as_text(data, size);
	struct promscrape s;
	struct err e;
	promscrape_parse(&s, text, "fuzz.prom", &e);
	promscrape_free(&s);
	free(text);
}

/* The calibration pair: the fuzzed file and the shipped other half. */
static void calib_pair(const uint8_t *data, size_t size, bool experiments)
{
	char path[256], other[1024];
	struct err e;
	struct calibcsv c;
	const char *dir = getenv("SERVESIM_DATA_DIR");
	snprintf(other, sizeof other, "%s/tests/data/calib/%s", dir,
		 experiments ? "mini_measured.csv" : "mini_experiments.csv");
	as_file(data, size, "calib.csv", path, sizeof path);
	calibcsv_load(&c, experiments ? path : other, experiments ? other : path, &e);
	calibcsv_free(&c); /* also after a failure */
}

static void calib_experiments(const uint8_t *d, size_t n)
{
	calib_pair(d, n, true);
}
static void calib_measured(const uint8_t *d, size_t n)
{
	calib_pair(d, n, false);
}

/* calibrate runs' reader: any of its formats, sniffed, observations
 * checked, scenarios built (not simulated). */
static void calibrate_runs(const uint8_t *data, size_t size)
{
	char path[256];
	struct err e;
	struct runobs_set set = { 0 };
	struct runobs_opts o = { .hardware = "h100-sxm" };
	as_file(data, size, "run.json", path, sizeof path);
	runobs_load(&set, path, &o, &e);
	runobs_set_free(&set);
}

static void probe_csv(const uint8_t *data, size_t size)
{
	char path[256];
	struct err e;
	struct probe_data *d = xcalloc(1, sizeof *d);
	as_file(data, size, "probe.csv", path, sizeof path);
	probecsv_load(d, path, &e);
	probecsv_free(d);
	free(d);
}

/* What merge and plot read: a document loaded, printed in each format and
 * merged as the one shard of itself. */
static void result_doc(const uint8_t *data, size_t size)
{
	char path[256];
	struct err e;
	as_file(data, size, "result.json", path, sizeof path);
	json_t *doc = resultdoc_load(path, &e);
	if (!doc)
		return;
	FILE *sink = fopen("/dev/null", "w");
	for (int fmt = 0; sink && fmt < 3; fmt++)
		resultdoc_print(sink, doc, fmt);
	const char *name = "fuzz.json";
	json_t *whole = resultdoc_merge(&doc, &name, 1, &e);
	if (whole && sink)
		resultdoc_print(sink, whole, 0);
	json_decref(whole);
	if (sink)
		fclose(sink);
	json_decref(doc);
}

/* What `plot DIR` reads of a run's --out folder: the bytes are
 * requests.csv, and what follows a line "#itl" is itl_histogram.csv. The
 * data files go to the scratch folder's rundir/; gnuplot is kept off PATH. */
static void run_dir(const uint8_t *data, size_t size)
{
	char dir[256], out[300], path[320];
	struct err e;
	snprintf(dir, sizeof dir, "%s/rundir", scratch_dir());
	snprintf(out, sizeof out, "%s/plots", dir);
	mkdir(dir, 0777);
	setenv("PATH", "/nonexistent", 1);
	const uint8_t *mark = NULL;
	for (size_t i = 0; i + 6 <= size && !mark; i++)
		if (!memcmp(data + i, "\n#itl\n", 6))
			mark = data + i;
	size_t n_req = mark ? (size_t)(mark - data) : size;
	static const char itl[] = "itl_s,tokens\n0.01,10\n0.02,5\n";
	const uint8_t *h = mark ? mark + 6 : (const uint8_t *)itl;
	size_t n_h = mark ? size - n_req - 6 : sizeof itl - 1;
	snprintf(path, sizeof path, "%s/requests.csv", dir);
	FILE *f = fopen(path, "wb");
	snprintf(path, sizeof path, "%s/itl_histogram.csv", dir);
	FILE *g = fopen(path, "wb");
	if (!f || !g) {
		perror(dir);
		abort();
	}
	fwrite(data, 1, n_req, f);
	fwrite(h, 1, n_h, g);
	fclose(f);
	fclose(g);
	struct plot_opts po = { 0 };
	plot_path(dir, out, &po, &e);
}

/* The options `servesim run` declares itself (cmd_run.c), which the
 * rewrite passes through untouched. */
static const struct option vllm_run_opts[] = {
	{ "model", required_argument, NULL, 'm' },   { "seed", required_argument, NULL, 's' },
	{ "set", required_argument, NULL, 'S' },     { "format", required_argument, NULL, 'f' },
	{ "hardware", required_argument, NULL, 'H' }, { "save-detailed", no_argument, NULL, 'd' },
	{ "metric-percentiles", required_argument, NULL, 'p' }, { 0, 0, NULL, 0 },
};

/* The rewrite's --set assignments loaded as the verb loads them (each
 * named by the flag it came from), on the built-in default. */
static void load_rewritten(const struct vllm_args *va)
{
	struct inidoc ov = { 0 };
	struct err e;
	int rc = 0;
	for (int i = 1; i + 1 < va->argc && !rc; i++)
		if (!strcmp(va->argv[i], "--set")) {
			rc = inidoc_add_override_from(&ov, va->argv[i + 1], vllmflags_origin(va, va->argv[i + 1]), &e);
			i++;
		}
	if (!rc) {
		struct scenario sc;
		scenario_load(&sc, NULL, &ov, &e);
	}
	inidoc_free(&ov);
}

/* A command line of `vllm serve` / `vllm bench serve` flags, one word a
 * line, through the rewrite (vllmflags_rewrite: the flag table, vLLM's
 * human-readable integers, --speculative-config's JSON, --goodput, the
 * dataset rules) and then the scenario. A word that names a file
 * (--config, which the vllm_config target reads) is not followed. */
static void vllm_flags(const uint8_t *data, size_t size)
{
	char *text = as_text(data, size), *save = NULL;
	char *argv[66] = { "run" };
	int argc = 1;
	bool names_file = false;
	for (char *w = strtok_r(text, "\n", &save); w && argc < 65; w = strtok_r(NULL, "\n", &save)) {
		names_file |= strstr(w, "config") != NULL && strstr(w, "speculative") == NULL;
		argv[argc++] = w;
	}
	argv[argc] = NULL;
	if (!names_file) {
		struct vllm_args va;
		struct err e;
		if (vllmflags_rewrite("run", vllm_run_opts, argc, argv, &va, &e) == 0)
			load_rewritten(&va);
		vllmflags_free(&va);   /* also after a failure */
	}
	free(text);
}

/* vllm serve's --config YAML (vllmconfig.c), then the scenario. */
static void vllm_config(const uint8_t *data, size_t size)
{
	char path[256];
	as_file(data, size, "config.yaml", path, sizeof path);
	char *argv[] = { "run", "--config", path, NULL };
	struct vllm_args va;
	struct err e;
	if (vllmflags_rewrite("run", vllm_run_opts, 3, argv, &va, &e) == 0)
		load_rewritten(&va);
	vllmflags_free(&va);
}

const struct fuzz_target fuzz_targets[] = {
	{ "scenario", scenario_ini, "scenario INI (scenario_load)" },
	{ "set", set_flags, "--set SECTION.KEY=VALUE on the built-in default" },
	{ "run", run_set, "--set lines, then a short simulation (run_simulate)" },
	{ "vary", vary_flag, "--vary SPEC (sweep_axis_parse)" },
	{ "slo", slo_flag, "--slo SPEC and --shard K/N (plan_slo_parse, resultdoc_shard_parse)" },
	{ "lengths", lengths_file, "an empirical length file (input_file)" },
	{ "hwprofile", hw_ini, "hardware profile INI (hw_load)" },
	{ "model", model_json, "Hugging Face config.json (model_load)" },
	{ "gguf", gguf_file, "GGUF header of a .gguf file (model_load, gguf.c)" },
	{ "genconfig", gen_config, "Hugging Face generation_config.json (genconfig_load)" },
	{ "trace_auto", trace_auto, "trace, format sniffed (trace_load auto)" },
	{ "trace_vllm", trace_vllm, "vllm bench serve result JSON as a trace" },
	{ "trace_azure", trace_azure, "Azure LLM trace CSV" },
	{ "trace_mooncake", trace_mooncake, "Mooncake JSONL" },
	{ "trace_csv", trace_csv, "plain CSV trace" },
	{ "vllm_bench", vllm_bench, "vllm bench serve result JSON (benchres_load)" },
	{ "ollama", ollama_jsonl, "Ollama /api/generate responses (ollamaresp_parse)" },
	{ "llamabench_csv", llamabench_csv, "llama-bench CSV (llamabench_parse_csv)" },
	{ "llamabench_json", llamabench_json, "llama-bench JSON and JSONL" },
	{ "prometheus", prometheus, "Prometheus exposition text (promscrape_parse)" },
	{ "calib_experiments", calib_experiments, "calibration experiments CSV (calibcsv_load)" },
	{ "calib_measured", calib_measured, "calibration measured CSV (calibcsv_load)" },
	{ "calibrate_runs", calibrate_runs, "calibrate runs' reader, every format (runobs_load)" },
	{ "probe_csv", probe_csv, "servesim-probe CSV (probecsv_load)" },
	{ "run_dir", run_dir,
	  "a run's --out folder as plot reads it (requests.csv, itl_histogram.csv)" },
	{ "result_doc", result_doc, "sweep/plan/compare JSON read by merge and plot" },
	{ "vllm_flags", vllm_flags, "vllm serve / vllm bench serve flags, one word a line (vllmflags_rewrite)" },
	{ "vllm_config", vllm_config, "vllm serve --config YAML (vllmflags_rewrite, vllmconfig.c)" },
	{ NULL, NULL, NULL },
};

const struct fuzz_target *fuzz_target_named(const char *name)
{
	for (const struct fuzz_target *t = fuzz_targets; t->name; t++)
		if (!strcmp(t->name, name))
			return t;
	return NULL;
}

void fuzz_targets_init(void)
{
	setenv("SERVESIM_DATA_DIR", SERVESIM_SOURCE_DIR, 0);
}
