/*
 * Robustness (issue 15, docs/robustness.md): each class of bad input the
 * attack on servesim's inputs found is an error at its root, one line on
 * stderr naming the file and key, exit 2; outputs are whole or absent; a
 * write error is one line and exit 1. Through the command, as a user hits
 * them. The parsers' crash-freedom on arbitrary bytes is tests/fuzz's.
 */
#include "testutil.h"

#include <stdbool.h>
#include <sys/stat.h>

static char tmpdir[] = "/tmp/servesim-robust-XXXXXX";

static int setup(void **state)
{
	(void)state;
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

/* tmpdir/name holding text; the path in out. */
static void write_file(char *out, size_t cap, const char *name, const char *text, size_t len)
{
	snprintf(out, cap, "%s/%s", tmpdir, name);
	FILE *f = fopen(out, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(text, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
}

static size_t count_lines(const char *s)
{
	size_t n = 0;
	for (; *s; s++)
		n += *s == '\n';
	return n;
}

/* The command exits with status, and says so in one line holding each of
 * the needles (NULL-terminated). */
static void one_line_error(const char *cmd, int status, ...)
{
	struct cmd_result r;
	run_cmd(&r, "%s", cmd);
	if (r.status != status)
		fail_msg("%s: exit %d, expected %d; stderr: %s", cmd, r.status, status, r.err);
	assert_int_equal(count_lines(r.err), 1);
	va_list ap;
	va_start(ap, status);
	const char *needle;
	while ((needle = va_arg(ap, const char *)))
		assert_contains(r.err, needle);
	va_end(ap);
	cmd_result_free(&r);
}

static void cmdf(char *out, size_t cap, const char *fmt, const char *arg)
{
	char tail[2048];
	snprintf(tail, sizeof tail, fmt, arg);
	snprintf(out, cap, "'%s' %s", SERVESIM_BIN, tail);
}

/* merge and plot read documents whose structure is not what servesim
 * wrote: every one an error naming the file and the key, not a crash. */
static void result_documents_are_checked(void **state)
{
	(void)state;
	static const struct {
		const char *doc, *needle;
	} bad[] = {
		{ "{\"kind\":\"plan\",\"candidates\":[]}", "scenario: missing; expected a string" },
		{ "{\"kind\":\"sweep\",\"points\":[{}]}", "scenario: missing" },
		{ "{\"kind\":\"compare\",\"rows\":[]}", "scenario: missing" },
		{ "{\"kind\":\"plan\",\"scenario\":\"s\",\"search\":{\"by\":\"rate\","
		  "\"replications\":1,"
		  "\"confidence\":0.95,\"tolerance\":0.02,\"max_load\":10},\"cost\":false,\"target_"
		  "rate\":null,"
		  "\"candidates_total\":1,\"candidates\":[{\"candidate\":0}]}",
		  "candidates[0].hardware: missing; expected a string" },
		{ "{\"kind\":\"plan\",\"scenario\":\"s\",\"search\":{\"by\":\"rate\","
		  "\"replications\":1,"
		  "\"confidence\":0.95,\"tolerance\":0.02,\"max_load\":10},\"cost\":false,\"target_"
		  "rate\":null,"
		  "\"candidates_total\":1,\"candidates\":[{\"candidate\":0,\"hardware\":\"h\","
		  "\"tensor_parallel_size\":1e300}]}",
		  "candidates[0].tensor_parallel_size: expected an integer, got a real number" },
		{ "{\"kind\":\"sweep\",\"scenario\":\"s\",\"vary\":[],\"replications\":0,\"points_"
		  "total\":0,"
		  "\"points\":[]}",
		  "replications: expected an integer from 1 to 2147483647, got 0" },
		{ "{\"kind\":\"sweep\",\"scenario\":\"s\",\"vary\":[{\"key\":7,\"values\":[]}],"
		  "\"replications\":1,\"points_total\":0,\"points\":[]}",
		  "vary[0].key: expected a string, got an integer" },
		/* A within_noise pair the sentences read: its block count was
		 * cast from NaN ("-9223372036854775808 confirmation blocks"). */
		{ "{\"kind\":\"plan\",\"scenario\":\"s\",\"search\":{\"by\":\"rate\","
		  "\"replications\":1,\"confidence\":0.95,\"tolerance\":0.02,\"max_load\":10},\"cost\":false,"
		  "\"target_rate\":null,\"candidates_total\":0,\"candidates\":[],"
		  "\"within_noise\":[{\"hardware\":[\"a\",\"b\"],\"ranks\":[1,2],\"basis\":\"rate per GPU\"}]}",
		  "within_noise[0].blocks: missing" },
		{ "{\"kind\":\"compare\",\"scenario\":\"s\",\"search\":{\"replications\":1},\"rows_total\":0,"
		  "\"rows\":[],\"within_noise\":[{\"ranks\":[1,2],\"blocks\":1e300,\"basis\":\"rate per GPU\","
		  "\"difference\":0,\"margin\":0}]}",
		  "within_noise[0].blocks: expected an integer" },
	};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		char path[512], cmd[4096];
		write_file(path, sizeof path, "doc.json", bad[i].doc, strlen(bad[i].doc));
		cmdf(cmd, sizeof cmd, "merge '%s'", path);
		one_line_error(cmd, 2, path, bad[i].needle, NULL);
		cmdf(cmd, sizeof cmd, "plot '%s'", path);
		one_line_error(cmd, 2, path, bad[i].needle, NULL);
	}
}

/* Every double that becomes an integer is range-checked: send times past
 * the horizon, request counts past the limit, are errors naming the key. */
static void times_and_counts_are_bounded(void **state)
{
	(void)state;
	static const struct {
		const char *set, *needle;
	} bad[] = {
		{ "workload.stages=1:6e66",
		  "[workload] stages: the stages send 6e+66 requests; expected at most 10000000" },
		{ "workload.stages=1:10,1e-9:2e8", "[workload] stages: the stages last" },
		{ "workload.request_rate=1e-8",
		  "[workload] request_rate, num_prompts: a request would be sent at" },
		{ "workload.request_rate=1e-7", "past the simulator's horizon of 1e+08 s" },
		{ "workload.num_prompts=1e9",
		  "[workload] num_prompts: expected an integer from 1 to 10^7" },
		{ "workload.num_prompts=1000000000", "[workload] num_prompts" },
		{ "workload.think_time_s=1e300", "[workload] think_time_s" },
	};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		char cmd[4096];
		cmdf(cmd, sizeof cmd, "run --set '%s'", bad[i].set);
		one_line_error(cmd, 2, bad[i].needle, NULL);
	}
	/* Trace times: a timestamp of 1e308 s, a scale of 1e12 on 100 s, a
	 * date typed twenty years after the first row. */
	char trace[512], cmd[4096], set[1024];
	const char *csv = "timestamp_s,input_tokens,output_tokens\n0,10,5\n1e308,10,5\n";
	write_file(trace, sizeof trace, "far.csv", csv, strlen(csv));
	snprintf(set, sizeof set, "run --set workload.trace=%s", trace);
	cmdf(cmd, sizeof cmd, "%s", set);
	one_line_error(cmd, 2, "far.csv: a row 1e+308 s after the first", "trace_time_scale = 1",
		       "horizon", NULL);
	csv = "timestamp_s,input_tokens,output_tokens\n0,10,5\n100,10,5\n";
	write_file(trace, sizeof trace, "near.csv", csv, strlen(csv));
	snprintf(set, sizeof set,
		 "run --set workload.trace=%s --set workload.trace_time_scale=1e12", trace);
	cmdf(cmd, sizeof cmd, "%s", set);
	one_line_error(cmd, 2, "near.csv: a row 100 s after the first", "trace_time_scale = 1e+12",
		       "1e+14 s", NULL);
	csv = "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46.6805900,374,44\n"
	      "2046-11-16 18:15:50.9951690,396,109\n";
	write_file(trace, sizeof trace, "azure2046.csv", csv, strlen(csv));
	snprintf(set, sizeof set, "run --set workload.trace=%s", trace);
	cmdf(cmd, sizeof cmd, "%s", set);
	one_line_error(cmd, 2, "azure2046.csv: a row 7.25846e+08 s after the first", "horizon",
		       NULL);
}

/* A device so slow that one step outlasts the horizon: an error naming the
 * profile, not a wrapped clock or a zero TPOT. */
static void steps_past_the_horizon(void **state)
{
	(void)state;
	char src[512], prof[512], cmd[4096], tail[2048], text[65536];
	snprintf(src, sizeof src, "%s/hardware_profiles/h100-sxm.ini", getenv("SERVESIM_DATA_DIR"));
	FILE *f = fopen(src, "r");
	assert_non_null(f);
	size_t n = fread(text, 1, sizeof text - 1, f);
	fclose(f);
	text[n] = '\0';
	/* Compute a trillion times too slow (the bandwidth is cross-checked
	 * against other keys; the peak FLOP/s is not). Same length in place. */
	char *at = strstr(text, "bf16_tflops = 989.4");
	assert_non_null(at);
	memcpy(at, "bf16_tflops = 1e-12", strlen("bf16_tflops = 1e-12"));
	write_file(prof, sizeof prof, "slow.ini", text, strlen(text));
	static const char *const engines[] = { "vllm", "ollama" };
	for (int i = 0; i < 2; i++) {
		snprintf(tail, sizeof tail, "run --set run.hardware=%s --set engine.kind=%s", prof,
			 engines[i]);
		cmdf(cmd, sizeof cmd, "%s", tail);
		one_line_error(cmd, 2, "[run] hardware, model: a step at",
			       "past the simulator's horizon", "slow.ini", NULL);
	}
}

/* A NUL byte in a trace row is an error at its line, not a dropped row. */
static void nul_in_a_trace_row(void **state)
{
	(void)state;
	static const char csv[] = "TIMESTAMP,ContextTokens,GeneratedTokens\n"
				  "2023-11-16 18:15:46.6805900,374,44\n"
				  "\0"
				  "2023-11-16 18:15:50.9951690,396,109\n";
	char trace[512], cmd[4096], set[1024];
	write_file(trace, sizeof trace, "nul.csv", csv, sizeof csv - 1);
	snprintf(set, sizeof set, "run --set workload.trace=%s", trace);
	cmdf(cmd, sizeof cmd, "%s", set);
	one_line_error(cmd, 2, "nul.csv:3: a NUL byte at column 1; expected text", NULL);
	/* And in an empirical length file: "12\0 34" is not 12. */
	static const char lengths[] = "512\n12\0 34\n";
	char file[512];
	write_file(file, sizeof file, "lengths.txt", lengths, sizeof lengths - 1);
	snprintf(set, sizeof set,
		 "run --set workload.input_distribution=empirical --set workload.input_file=%s",
		 file);
	cmdf(cmd, sizeof cmd, "%s", set);
	one_line_error(cmd, 2, "lengths.txt:2: input_file: a NUL byte; expected text", NULL);
}

/* A NUL byte in an INI file (scenario, hardware profile) or in a text
 * file read whole (a Prometheus scrape, calibrate runs' inputs) is an
 * error at its place: the line was read up to the NUL and the rest lost,
 * so a file starting with one read as empty (the default scenario). */
static void nul_in_an_ini_or_text_file(void **state)
{
	(void)state;
	static const char ini[] = "[workload]\nnum_prompts = 5\0garbage\n";
	static const char head[] = "\0\x01garbage";
	char path[512], cmd[4096];
	write_file(path, sizeof path, "nul.ini", ini, sizeof ini - 1);
	cmdf(cmd, sizeof cmd, "run '%s'", path);
	one_line_error(cmd, 2, "nul.ini:2: a NUL byte at column 16; expected text", NULL);
	cmdf(cmd, sizeof cmd, "run --hardware '%s'", path);
	one_line_error(cmd, 2, "nul.ini:2: a NUL byte at column 16", NULL);
	write_file(path, sizeof path, "head.ini", head, sizeof head - 1);
	cmdf(cmd, sizeof cmd, "run '%s'", path);
	one_line_error(cmd, 2, "head.ini:1: a NUL byte at column 1", NULL);
	static const char prom[] = "vllm:num_requests_waiting{model_name=\"m\"} 0\n\0\n";
	write_file(path, sizeof path, "nul.prom", prom, sizeof prom - 1);
	char tail[2048];
	snprintf(tail, sizeof tail, "advise --result '%s/calib/vllm_summary_only.json' --metrics '%s'",
		 TEST_DATA_DIR, path);
	cmdf(cmd, sizeof cmd, "%s", tail);
	one_line_error(cmd, 2, "nul.prom:2: a NUL byte at column 1; expected text", NULL);
	cmdf(cmd, sizeof cmd, "calibrate runs '%s' --hardware h100-sxm --out /nonexistent/p.ini", path);
	one_line_error(cmd, 2, "nul.prom:2: a NUL byte at column 1", NULL);
}

/* A model config's precision keys: an unknown dtype, a quantization
 * config that is no object, a quantization method servesim does not
 * know were read as bf16 weights without a word. */
static void model_precision_keys(void **state)
{
	(void)state;
	static const struct {
		const char *extra, *needle;
	} bad[] = {
		{ "\"torch_dtype\":\"float77\"", "torch_dtype: expected bfloat16, float16 or float32, got 'float77'" },
		{ "\"torch_dtype\":16", "torch_dtype: expected bfloat16, float16 or float32" },
		{ "\"quantization_config\":\"fp8\"", "quantization_config: expected an object" },
		{ "\"quantization_config\":{\"quant_method\":\"hqq\"}",
		  "quantization_config.quant_method: expected fp8, fbgemm_fp8, mxfp4, awq, gptq, compressed-tensors, "
		  "modelopt or bitsandbytes, got 'hqq'" },
	};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		char cfg[1024], path[512], cmd[4096];
		snprintf(cfg, sizeof cfg,
			 "{\"num_hidden_layers\":2,\"hidden_size\":64,\"vocab_size\":100,"
			 "\"intermediate_size\":128,\"num_attention_heads\":4,%s}",
			 bad[i].extra);
		write_file(path, sizeof path, "config.json", cfg, strlen(cfg));
		cmdf(cmd, sizeof cmd, "model '%s'", path);
		one_line_error(cmd, 2, path, bad[i].needle, NULL);
	}
}

/* Misuse of the command line is one line too: the hint to --help on it,
 * an unknown verb with the verbs named (the usage went to stderr). */
static void misuse_is_one_line(void **state)
{
	(void)state;
	char cmd[4096];
	cmdf(cmd, sizeof cmd, "%s", "run a.ini b.ini");
	one_line_error(cmd, 2, "servesim run: expected at most one scenario, got 'b.ini' too (servesim run --help)",
		       NULL);
	cmdf(cmd, sizeof cmd, "%s", "calibrate bogus");
	one_line_error(cmd, 2, "(servesim calibrate --help)", NULL);
	cmdf(cmd, sizeof cmd, "%s", "list models");   /* read as a filter, ignored */
	one_line_error(cmd, 2, "servesim list: expected no argument, got 'models'", NULL);
	/* An option getopt refuses: its own message is off, the verb's one
	 * line names it (it was two lines, getopt's and "unknown option"). */
	static const struct {
		const char *args, *needle;
	} refused[] = {
		{ "run --svg=x", "servesim run: option '--svg' takes no value, got '--svg=x'" },
		{ "run --out", "servesim run: option '--out' expects a value" },
		{ "report --format x", "servesim report: unknown option '--format'" },
		{ "explain --ideal=1", "servesim explain: option '--ideal' takes no value" },
		{ "plan --slo", "servesim plan: option '--slo' expects a value" },
		{ "merge --shard=1/2 a.json", "servesim merge: unknown option '--shard'" },
		{ "calibrate runs -x", "servesim calibrate runs: unknown option '-x'" },
	};
	for (size_t i = 0; i < sizeof refused / sizeof *refused; i++) {
		cmdf(cmd, sizeof cmd, "%s", refused[i].args);
		one_line_error(cmd, 2, refused[i].needle, NULL);
	}
	cmdf(cmd, sizeof cmd, "%s", "bogusverb");
	one_line_error(cmd, 2, "servesim: unknown verb 'bogusverb'; expected calibrate, ceiling, explain",
		       "vllm-flags (servesim --help)", NULL);
}

/* A context of 0 tokens is an error, not vLLM's 4096 fallback. */
static void zero_max_position_embeddings(void **state)
{
	(void)state;
	static const char cfg[] = "{\"num_hidden_layers\":2,\"hidden_size\":64,\"vocab_size\":100,"
				  "\"intermediate_size\":128,\"num_attention_heads\":4,"
				  "\"max_position_embeddings\":0}";
	char path[512], cmd[4096];
	write_file(path, sizeof path, "config.json", cfg, sizeof cfg - 1);
	cmdf(cmd, sizeof cmd, "model '%s'", path);
	one_line_error(cmd, 2, "max_position_embeddings: expected an integer from 1 to", NULL);
}

/* calibrate runs: a measured latency that cannot be is an error naming
 * the file and the key it came from, and no profile is written. */
static void impossible_measurements(void **state)
{
	(void)state;
	char src[512], text[65536];
	snprintf(src, sizeof src, "%s/calib/vllm_summary_only.json", TEST_DATA_DIR);
	FILE *f = fopen(src, "r");
	assert_non_null(f);
	size_t n = fread(text, 1, sizeof text - 1, f);
	fclose(f);
	text[n] = '\0';
	static const char *const values[] = { "-36.9", "0", "1e300" };
	for (size_t i = 0; i < sizeof values / sizeof *values; i++) {
		char doc[65536], path[512], out[512], cmd[4096], tail[2048];
		char *at = strstr(text, "\"mean_ttft_ms\": 36.9055");
		assert_non_null(at);
		snprintf(doc, sizeof doc, "%.*s\"mean_ttft_ms\": %s%s", (int)(at - text), text,
			 values[i], at + strlen("\"mean_ttft_ms\": 36.9055"));
		write_file(path, sizeof path, "bench.json", doc, strlen(doc));
		snprintf(out, sizeof out, "%s/fitted.ini", tmpdir);
		snprintf(tail, sizeof tail, "calibrate runs '%s' --hardware h100-sxm --out '%s'",
			 path, out);
		cmdf(cmd, sizeof cmd, "%s", tail);
		one_line_error(cmd, 2, path,
			       "mean_ttft_ms: expected a measured ttft latency in (0,", NULL);
		assert_int_not_equal(access(out, F_OK), 0);
	}
	/* Prometheus: a negative _sum. */
	static const char prom[] = "vllm:request_success_total{model_name=\"m\"} 10\n"
				   "vllm:prompt_tokens_total{model_name=\"m\"} 1000\n"
				   "vllm:generation_tokens_total{model_name=\"m\"} 500\n"
				   "vllm:time_to_first_token_seconds_sum{model_name=\"m\"} -6.4\n"
				   "vllm:time_to_first_token_seconds_count{model_name=\"m\"} 10\n";
	char path[512], cmd[4096], tail[2048];
	write_file(path, sizeof path, "metrics.prom", prom, sizeof prom - 1);
	snprintf(tail, sizeof tail,
		 "calibrate runs '%s' --hardware h100-sxm --model llama-3.1-8b --out '%s/p.ini'",
		 path, tmpdir);
	cmdf(cmd, sizeof cmd, "%s", tail);
	one_line_error(cmd, 2, path, "vllm:time_to_first_token_seconds_sum / _count", "got -640 ms",
		       NULL);
}

/* Quoted input stays on one line: control bytes are escaped. */
static void messages_escape_control_bytes(void **state)
{
	(void)state;
	static const char doc[] = "{\"kind\":\"a\\nb\\u001b[31m\"}";
	static const char ini[] = "[run]\nmodel = x\x1b[2Jy\n";
	char path[512], cmd[4096];
	write_file(path, sizeof path, "ctl.json", doc, sizeof doc - 1);
	cmdf(cmd, sizeof cmd, "merge '%s'", path);
	one_line_error(cmd, 2, "got a\\nb\\x1b[31m", NULL);
	write_file(path, sizeof path, "ctl.ini", ini, sizeof ini - 1);
	cmdf(cmd, sizeof cmd, "run '%s'", path);
	one_line_error(cmd, 2, "'x\\x1b[2Jy'", NULL);
}

/* A full stdout is one line and exit 1, for every verb that prints. */
static void full_stdout(void **state)
{
	(void)state;
	static const char *const verbs[] = {
		"run",
		"run --format json",
		"run --format prom",
		"ceiling",
		"model llama-3.1-8b",
		"list",
		"explain c13-bench-serve",
		"run --help",
	};
	for (size_t i = 0; i < sizeof verbs / sizeof *verbs; i++) {
		char cmd[4096];
		cmdf(cmd, sizeof cmd, "%s > /dev/full", verbs[i]);
		one_line_error(cmd, 1, "cannot write the output to stdout", NULL);
	}
}

/* run --out: parents are created; a write failing midway (the file size
 * limit standing in for a full disk) leaves no folder, no temporary. */
static void out_folder_whole_or_absent(void **state)
{
	(void)state;
	char dir[512], cmd[4096], check[1024];
	snprintf(dir, sizeof dir, "%s/a/b/c", tmpdir);
	cmdf(cmd, sizeof cmd, "run --out '%s' > /dev/null", dir);
	struct cmd_result r;
	run_cmd(&r, "%s", cmd);
	assert_int_equal(r.status, 0);
	cmd_result_free(&r);
	static const char *const files[] = { "requests.csv", "timeseries.csv",
					     "itl_histogram.csv" };
	for (size_t i = 0; i < 3; i++) {
		snprintf(check, sizeof check, "%s/%s", dir, files[i]);
		assert_int_equal(access(check, R_OK), 0);
	}
	/* 16 KiB: requests.csv (~32 KB for the default run) cannot be written,
	 * nor openmetrics.txt's scrapes saved as the lean run goes (omsnap.h),
	 * which fail first. */
	snprintf(dir, sizeof dir, "%s/full/out", tmpdir);
	char tail[2048];
	snprintf(tail, sizeof tail, "run --out '%s' > /dev/null", dir);
	snprintf(cmd, sizeof cmd, "trap '' XFSZ; ulimit -f 16; '%s' %s", SERVESIM_BIN, tail);
	one_line_error(cmd, 1, "cannot write", NULL);
	assert_int_not_equal(access(dir, F_OK), 0);
	snprintf(check, sizeof check, "%s/full", tmpdir);
	run_cmd(&r, "ls -A '%s'", check);
	assert_string_equal(r.out, ""); /* no temporary sibling left */
	cmd_result_free(&r);
	/* Into an existing folder: its old files stay as they were. */
	snprintf(dir, sizeof dir, "%s/a/b/c", tmpdir);
	snprintf(check, sizeof check, "%s/requests.csv", dir);
	struct stat before, after;
	assert_int_equal(stat(check, &before), 0);
	snprintf(tail, sizeof tail, "run --out '%s' --set workload.num_prompts=2000 > /dev/null",
		 dir);
	snprintf(cmd, sizeof cmd, "trap '' XFSZ; ulimit -f 64; '%s' %s", SERVESIM_BIN, tail);
	one_line_error(cmd, 1, "cannot write", NULL);
	assert_int_equal(stat(check, &after), 0);
	assert_int_equal(after.st_size, before.st_size);
	run_cmd(&r, "ls -A '%s'", dir);
	assert_string_equal(r.out, "itl_histogram.csv\nopenmetrics.txt\nrequests.csv\ntimeseries.csv\n");
	cmd_result_free(&r);
}

/* [engine] block_size: one of vLLM's BlockSize values (`vllm serve
 * --block-size 7` is argparse's invalid choice), whatever the kind: the
 * llama.cpp servers ignore it, as every kind ignores the others' keys, but
 * a value vLLM refuses is refused there too. */
static void block_size_is_vllms(void **state)
{
	(void)state;
	char path[512], cmd[4096], tail[2048];
	cmdf(cmd, sizeof cmd, "%s", "run --set engine.block_size=7");
	one_line_error(cmd, 2,
		       "--set engine.block_size: [engine] block_size: expected 1, 8, 16, 32, 64, "
		       "128 or 256",
		       "got 7", NULL);
	static const char ini[] = "[workload]\nnum_prompts = 4\n\n[engine]\nblock_size = 48\n";
	write_file(path, sizeof path, "bs.ini", ini, sizeof ini - 1);
	cmdf(cmd, sizeof cmd, "run '%s'", path);
	one_line_error(cmd, 2, "bs.ini:5: [engine] block_size: expected 1, 8, 16", "got 48", NULL);
	cmdf(cmd, sizeof cmd, "%s", "run --set engine.block_size=4096");
	one_line_error(cmd, 2, "[engine] block_size: expected tokens per KV block: 1, 8, 16", NULL);
	static const char *const llama[] = { "ollama", "llamacpp" };
	for (size_t i = 0; i < 2; i++) {
		snprintf(tail, sizeof tail, "run --set engine.kind=%s --set engine.block_size=12",
			 llama[i]);
		cmdf(cmd, sizeof cmd, "%s", tail);
		one_line_error(cmd, 2, "[engine] block_size: expected 1, 8, 16", NULL);
		struct cmd_result r;
		run_cmd(&r,
			"'%s' run --set engine.kind=%s --set engine.block_size=32 --set "
			"workload.num_prompts=4 "
			"--format json",
			SERVESIM_BIN, llama[i]);
		if (r.status != 0)
			fail_msg("%s, block_size=32: exit %d: %s", llama[i], r.status, r.err);
		cmd_result_free(&r);
	}
	/* A disaggregated pool's own block size is checked under its name. */
	cmdf(cmd, sizeof cmd, "%s", "run c25-disagg-small --set decode.block_size=24");
	one_line_error(cmd, 2, "[decode] block_size: expected 1, 8, 16", "got 24", NULL);
	/* vLLM's sizes at both ends run. */
	static const char *const good[] = { "1", "256" };
	for (size_t i = 0; i < 2; i++) {
		struct cmd_result r;
		run_cmd(&r,
			"'%s' run --set engine.block_size=%s --set workload.num_prompts=4 --format "
			"json",
			SERVESIM_BIN, good[i]);
		if (r.status != 0)
			fail_msg("block_size=%s: exit %d: %s", good[i], r.status, r.err);
		char want[64];
		snprintf(want, sizeof want, "\"block_size\": %s", good[i]);
		assert_contains(r.out, want);
		cmd_result_free(&r);
	}
}

/* A file of lengths given without its distribution was ignored (the
 * uniform default drew the lengths): it now implies empirical, so a
 * missing file is an error and a present one sets the lengths. */
static void a_lengths_file_is_read(void **state)
{
	(void)state;
	char path[512], cmd[4096], tail[2048];
	snprintf(tail, sizeof tail, "run --set workload.input_file=%s/missing.txt", tmpdir);
	cmdf(cmd, sizeof cmd, "%s", tail);
	one_line_error(cmd, 2, "missing.txt: cannot open (from [workload] input_file)", NULL);
	write_file(path, sizeof path, "lens.txt", "77\n77\n", 6);
	struct cmd_result r;
	run_cmd(&r,
		"'%s' run --set workload.input_file=%s --set workload.output_file=%s --set "
		"workload.num_prompts=5 "
		"--format json",
		SERVESIM_BIN, path, path);
	if (r.status != 0)
		fail_msg("exit %d: %s", r.status, r.err);
	assert_contains(r.out, "\"total_input_tokens\": 385,"); /* 5 × 77 */
	assert_contains(r.out, "\"total_output_tokens\": 385,");
	cmd_result_free(&r);
	/* A distribution given keeps it (a sweep over distributions). */
	run_cmd(&r,
		"'%s' run --set workload.input_file=%s --set workload.input_distribution=uniform "
		"--set workload.num_prompts=5 --format json",
		SERVESIM_BIN, path);
	assert_int_equal(r.status, 0);
	assert_contains(r.out, "\"total_input_tokens\": 5120,"); /* 5 × 1024 */
	cmd_result_free(&r);
}

/* The command exits with status 1, its last line on stderr (after the
 * notes calibrate prints as it reads) holding needle, and wrote nothing on
 * stdout: an output that cannot be written fails the verb before its table
 * is printed. */
static void absent_on_failure(const char *cmd, const char *needle)
{
	struct cmd_result r;
	run_cmd(&r, "%s", cmd);
	if (r.status != 1)
		fail_msg("%s: exit %d, expected 1; stderr: %s", cmd, r.status, r.err);
	size_t len = strlen(r.err);
	assert_true(len > 1 && r.err[len - 1] == '\n');
	r.err[len - 1] = '\0';
	const char *last = strrchr(r.err, '\n');
	assert_contains(last ? last + 1 : r.err, needle);
	if (r.out[0])
		fail_msg("%s: printed on stdout before failing: %.200s", cmd, r.out);
	cmd_result_free(&r);
}

/* sweep --plot, run --plot and calibrate runs --out into a folder that
 * cannot be made (a path through a regular file): exit 1, no table, no
 * file (calibrate fit: test_probecli). */
static void outputs_before_the_table(void **state)
{
	(void)state;
	char file[512], cmd[4096], tail[2048];
	write_file(file, sizeof file, "plain", "x", 1);
	snprintf(tail, sizeof tail,
		 "sweep --vary max_concurrency=1,2 --set workload.num_prompts=4 --no-progress "
		 "--plot '%s/plots'",
		 file);
	cmdf(cmd, sizeof cmd, "%s", tail);
	absent_on_failure(cmd, file);
	snprintf(tail, sizeof tail, "run --set workload.num_prompts=4 --plot '%s/plots'", file);
	cmdf(cmd, sizeof cmd, "%s", tail);
	absent_on_failure(cmd, file);
	snprintf(tail, sizeof tail,
		 "calibrate runs '%s/calib/ollama_generate.jsonl' '%s/calib/llama_bench.jsonl' "
		 "--hardware rtx-4090 "
		 "--model llama-3.1-8b --weights q4_k_m --max-evals 150 --tol 0.05 --no-progress "
		 "--out '%s/p.ini'",
		 TEST_DATA_DIR, TEST_DATA_DIR, file);
	cmdf(cmd, sizeof cmd, "%s", tail);
	absent_on_failure(cmd, file);
}

/* Each whole word name of s (cap bytes) replaced by value. */
static void replace_word(char *s, size_t cap, const char *name, const char *value)
{
	char out[4096] = "";
	size_t n = strlen(name);
	for (const char *p = s; *p;) {
		bool at_word = (p == s || p[-1] == ' ') && !strncmp(p, name, n) && (!p[n] || p[n] == ' ' || p[n] == '/');
		if (at_word) {
			strncat(out, value, sizeof out - strlen(out) - 1);
			p += n;
		} else {
			strncat(out, (char[]){ *p, '\0' }, sizeof out - strlen(out) - 1);
			p++;
		}
	}
	snprintf(s, cap, "%s", out);
}

/* Exit codes over the battery (docs/robustness.md "Exit codes"): 1 when an
 * output cannot be written (a path through a regular file, a full device,
 * a full stdout), 2 for bad input, every verb; one line on stderr last,
 * nothing on stdout. OUT is an output path that cannot be written, SWEEP a
 * sweep's result, RUN a run's --out folder, BAD a document that is not
 * servesim's, DATA the test data. */
static void exit_codes_io_and_input(void **state)
{
	(void)state;
	char plain[512], out[600], sweep[512], rundir[512], bad[512];
	write_file(plain, sizeof plain, "plain-exit", "x", 1);
	snprintf(out, sizeof out, "%s/x", plain);   /* through a regular file */
	write_file(bad, sizeof bad, "bad-exit.json", "{\"kind\":\"plan\",\"candidates\":[]}", 30);
	snprintf(sweep, sizeof sweep, "%s/sweep-exit.json", tmpdir);
	snprintf(rundir, sizeof rundir, "%s/run-exit", tmpdir);
	struct cmd_result r;
	run_cmd(&r, "'%s' sweep --vary max_concurrency=1,2 --set workload.num_prompts=8 --no-progress --format json > '%s' "
		    "&& '%s' run --set workload.num_prompts=8 --out '%s' > /dev/null",
		SERVESIM_BIN, sweep, SERVESIM_BIN, rundir);
	assert_int_equal(r.status, 0);
	cmd_result_free(&r);
	static const struct {
		const char *args;
		int status;
	} table[] = {
		{ "run --set workload.num_prompts=4 --out OUT", 1 },
		{ "run --set workload.num_prompts=4 --plot OUT", 1 },
		{ "run --set workload.num_prompts=4 --save-result --result-filename OUT", 1 },
		{ "run --set workload.num_prompts=4 --save-result --result-dir OUT", 1 },
		{ "run --set workload.num_prompts=4 --save-detailed --save-result --result-filename /dev/full", 1 },
		{ "sweep --vary max_concurrency=1,2 --set workload.num_prompts=8 --no-progress --plot OUT", 1 },
		{ "plot SWEEP --out OUT", 1 },
		{ "plot RUN --out OUT", 1 },
		{ "plot RUN --out /dev/full", 1 },
		{ "report SWEEP --out OUT", 1 },
		{ "report --set workload.num_prompts=4 --out /dev/full", 1 },
		{ "merge SWEEP > /dev/full", 1 },
		{ "list > /dev/full", 1 },
		{ "explain --batch decode:4 > /dev/full", 1 },
		{ "keys > /dev/full", 1 },
		{ "run --set engine.block_size=7", 2 },
		{ "run --bogus", 2 },
		{ "run --set workload.input_file=OUT", 2 },
		{ "plot BAD --out OUT", 2 },
		{ "plot RUN/requests.csv", 2 },
		{ "merge BAD", 2 },
		{ "report BAD --out OUT", 2 },
		{ "sweep --vary bogus=1,2", 2 },
		{ "plan --slo itl_p99_ms=0", 2 },
		{ "compare --hardware nope", 2 },
		{ "explain --batch nope", 2 },
		{ "ceiling --model nope", 2 },
		{ "model nope", 2 },
		{ "keys --format x", 2 },
		{ "list x", 2 },
		{ "validate BAD", 2 },
		{ "advise --result BAD", 2 },
		{ "calibrate fit --list --out OUT", 2 },
		{ "calibrate runs BAD --hardware h100-sxm --out OUT", 2 },
		{ "calibrate gpu --model nope", 2 },
		{ "vllm-flags --bogus", 2 },
	};
	for (size_t i = 0; i < sizeof table / sizeof *table; i++) {
		char args[4096];
		snprintf(args, sizeof args, "%s", table[i].args);
		const char *const names[] = { "OUT", "SWEEP", "RUN", "BAD" };
		const char *const values[] = { out, sweep, rundir, bad };
		for (size_t k = 0; k < 4; k++)
			replace_word(args, sizeof args, names[k], values[k]);
		run_cmd(&r, "'%s' %s", SERVESIM_BIN, args);
		if (r.status != table[i].status)
			fail_msg("servesim %s: exit %d, expected %d; stderr: %s", args, r.status, table[i].status, r.err);
		if (r.out[0] && !strstr(args, "/dev/full"))
			fail_msg("servesim %s: printed on stdout: %.200s", args, r.out);
		size_t len = strlen(r.err);
		if (len < 2 || r.err[len - 1] != '\n' || !strstr(r.err, "servesim"))
			fail_msg("servesim %s: expected a message on stderr, got '%s'", args, r.err);
		cmd_result_free(&r);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(result_documents_are_checked),
		cmocka_unit_test(times_and_counts_are_bounded),
		cmocka_unit_test(steps_past_the_horizon),
		cmocka_unit_test(nul_in_a_trace_row),
		cmocka_unit_test(nul_in_an_ini_or_text_file),
		cmocka_unit_test(model_precision_keys),
		cmocka_unit_test(misuse_is_one_line),
		cmocka_unit_test(zero_max_position_embeddings),
		cmocka_unit_test(impossible_measurements),
		cmocka_unit_test(messages_escape_control_bytes),
		cmocka_unit_test(full_stdout),
		cmocka_unit_test(out_folder_whole_or_absent),
		cmocka_unit_test(block_size_is_vllms),
		cmocka_unit_test(outputs_before_the_table),
		cmocka_unit_test(a_lengths_file_is_read),
		cmocka_unit_test(exit_codes_io_and_input),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
