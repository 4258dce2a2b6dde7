/*
 * report: vLLM's metrics as a scrape at the end (--format prom) and over
 * the run (--out DIR's openmetrics.txt), and the timeline they rest on.
 *
 * Properties, not golden numbers: every counter and bucket only grows from
 * scrape to scrape, timestamps only move forward, a histogram's +Inf bucket
 * is its count, the last scrape of openmetrics.txt equals the end-of-run
 * scrape series by series, and the totals equal the run's JSON. Where
 * promtool is installed (Debian: prometheus), it must turn the file into
 * TSDB blocks; without it that check says so and is skipped.
 */
#include "simutil.h"

#include "timeline.h"

#define MAX_SERIES 2048

struct series {
	char key[400]; /* name{labels} */
	double value, ts;
	int n;
};

struct scrape {
	struct series *v;
	size_t n;
	bool eof;
};

static struct series *find(struct scrape *s, const char *key)
{
	for (size_t i = 0; i < s->n; i++)
		if (!strcmp(s->v[i].key, key))
			return &s->v[i];
	assert_true(s->n < MAX_SERIES);
	struct series *r = &s->v[s->n++];
	snprintf(r->key, sizeof r->key, "%.399s", key);
	r->n = 0;
	return r;
}

static bool grows(const char *key)
{
	const char *brace = strchr(key, '{');
	size_t n = brace ? (size_t)(brace - key) : strlen(key);
	return (n > 6 && !strncmp(key + n - 6, "_total", 6)) ||
	       (n > 7 && !strncmp(key + n - 7, "_bucket", 7)) ||
	       (n > 6 && !strncmp(key + n - 6, "_count", 6)) ||
	       (n > 4 && !strncmp(key + n - 4, "_sum", 4));
}

/* The name of a histogram sample (before "_bucket", "_count"), into out. */
static void base_name(const char *key, const char *suffix, char *out, size_t cap)
{
	const char *at = strstr(key, suffix);
	snprintf(out, cap, "%.*s", at ? (int)(at - key) : 0, key);
}

/* Parses exposition text (with or without timestamps), checking as it goes
 * that each series' timestamps increase and its counters never fall, and
 * that within each histogram point the buckets grow with le and +Inf is
 * the count. */
static void parse(const char *text, struct scrape *s)
{
	s->v = calloc(MAX_SERIES, sizeof *s->v);
	s->n = 0;
	s->eof = false;
	const char *line = text;
	char hist[256] = "";
	double prev_bucket = -1;
	while (*line) {
		const char *end = strchr(line, '\n');
		size_t len = end ? (size_t)(end - line) : strlen(line);
		char buf[1024];
		assert_true(len < sizeof buf);
		memcpy(buf, line, len);
		buf[len] = '\0';
		line += len + (end ? 1 : 0);
		if (!strcmp(buf, "# EOF")) {
			s->eof = true;
			assert_int_equal(*line, '\0'); /* nothing after it */
			continue;
		}
		if (buf[0] == '#' || !buf[0])
			continue;
		char *close = strrchr(buf, '}');
		char *sp = strchr(close ? close : buf, ' ');
		assert_non_null(sp);
		*sp = '\0';
		double v, ts = 0;
		int got = sscanf(sp + 1, "%lf %lf", &v, &ts);
		assert_true(got >= 1);
		struct series *r = find(s, buf);
		if (r->n > 0) {
			if (!(ts > r->ts))
				fail_msg("%s: timestamp %g after %g", buf, ts, r->ts);
			if (grows(buf) && v < r->value)
				fail_msg("%s: a counter falls from %g to %g at %g", buf, r->value,
					 v, ts);
		}
		r->value = v;
		r->ts = ts;
		r->n++;
		char base[256];
		if (strstr(buf, "_bucket{")) {
			base_name(buf, "_bucket{", base, sizeof base);
			if (strcmp(base, hist))
				prev_bucket = -1;
			snprintf(hist, sizeof hist, "%s", base);
			if (v < prev_bucket)
				fail_msg("%s: %g below the bucket before it (%g)", buf, v,
					 prev_bucket);
			prev_bucket =
				strstr(buf, "le=\"+Inf\"") ? -v - 1 : v; /* -(+Inf)-1: marks it */
		} else if (strstr(buf, "_count{")) {
			base_name(buf, "_count{", base, sizeof base);
			if (strcmp(base, hist) || prev_bucket > -1)
				fail_msg("%s: no +Inf bucket just before it", buf);
			if (v != -prev_bucket - 1)
				fail_msg("%s = %g but its +Inf bucket is %g", buf, v,
					 -prev_bucket - 1);
		}
	}
}

static double value_of(struct scrape *s, const char *key)
{
	for (size_t i = 0; i < s->n; i++)
		if (!strcmp(s->v[i].key, key))
			return s->v[i].value;
	fail_msg("no series %s", key);
	return 0;
}

#define L "{model_name=\"llama-3.1-8b\",engine=\"0\""

static void test_openmetrics_matches_end_scrape(void **state)
{
	(void)state;
	char dir[64];
	test_tmpdir(dir, sizeof dir, "report");
	struct cmd_result prom, json;
	const char *set = "--set workload.num_prompts=120 --set workload.request_rate=12";
	run_cmd(&prom, "'%s' run %s --format prom --out '%s' --epoch 1700000000", SERVESIM_BIN, set,
		dir);
	assert_int_equal(prom.status, 0);
	run_cmd(&json, "'%s' run %s --format json", SERVESIM_BIN, set);
	assert_int_equal(json.status, 0);
	char path[512];
	snprintf(path, sizeof path, "%s/openmetrics.txt", dir);
	char *om_text = test_slurp_path(path);

	struct scrape end, om;
	parse(prom.out, &end);
	parse(om_text, &om);
	assert_false(end.eof);
	assert_true(om.eof); /* OpenMetrics ends with # EOF */

	/* Every series over time ends where the end-of-run scrape is. */
	for (size_t i = 0; i < om.n; i++) {
		double want = value_of(&end, om.v[i].key);
		/* sums: the same values added in another order */
		assert_double_near(om.v[i].value, want, 1e-9 * fabs(want) + 1e-12);
		assert_true(om.v[i].n >= 10); /* 120 requests at 12/s: over 10 s of scrapes */
	}
	/* Samples start at --epoch, one scrape a second for a short run. */
	assert_contains(om_text, "vllm:num_requests_running" L "} 0 1700000000.000\n");
	assert_contains(om_text, L "} 1 1700000001.000\n");

	/* The totals are the run's. */
	double completed = 0, out_tokens = 0, in_tokens = 0;
	const char *c = strstr(json.out, "\"completed\":");
	assert_non_null(c);
	completed = strtod(c + 12, NULL);
	out_tokens = strtod(strstr(json.out, "\"total_output_tokens\":") + 22, NULL);
	in_tokens = strtod(strstr(json.out, "\"total_input_tokens\":") + 21, NULL);
	assert_double_near(completed, 120, 0);
	assert_double_near(
		value_of(&om, "vllm:request_success_total" L ",finished_reason=\"length\"}"),
		completed, 0);
	assert_double_near(value_of(&om, "vllm:generation_tokens_total" L "}"), out_tokens, 0);
	assert_double_near(value_of(&om, "vllm:prompt_tokens_total" L "}"), in_tokens, 0);
	/* One gap between each two tokens of a request. */
	assert_double_near(value_of(&om, "vllm:inter_token_latency_seconds_count" L "}"),
			   out_tokens - completed, 0);
	assert_double_near(
		value_of(&om, "vllm:inter_token_latency_seconds_bucket" L ",le=\"+Inf\"}"),
		out_tokens - completed, 0);
	/* Each request once in each per-request histogram. */
	static const char *const per_request[] = {
		"vllm:time_to_first_token_seconds",
		"vllm:e2e_request_latency_seconds",
		"vllm:request_queue_time_seconds",
		"vllm:request_prefill_time_seconds",
		"vllm:request_decode_time_seconds",
		"vllm:request_inference_time_seconds",
		"vllm:request_prompt_tokens",
		"vllm:request_generation_tokens",
		"vllm:request_params_n",
	};
	for (size_t i = 0; i < sizeof per_request / sizeof *per_request; i++) {
		char key[256];
		snprintf(key, sizeof key, "%s_count" L "}", per_request[i]);
		assert_double_near(value_of(&om, key), completed, 0);
	}
	/* Steps: the sum of their tokens is every token computed at least
	 * (prompts + outputs, less cached prefixes, plus recomputation). */
	double iter_sum = value_of(&om, "vllm:iteration_tokens_total_sum" L "}");
	assert_true(iter_sum >= 0.5 * (in_tokens + out_tokens) &&
		    iter_sum <= 2 * (in_tokens + out_tokens));
	/* The gauges moved during the run and are back at 0 after it. */
	assert_double_near(value_of(&om, "vllm:num_requests_running" L "}"), 0, 0);
	assert_contains(om_text, "vllm:cache_config_info{block_size=\"16\"");
	free(om_text);
	free(end.v);
	free(om.v);

	/* promtool accepts it, where installed. */
	if (access("/usr/bin/promtool", X_OK) == 0) {
		struct cmd_result pt;
		run_cmd(&pt, "promtool tsdb create-blocks-from openmetrics '%s' '%s/tsdb'", path,
			dir);
		if (pt.status != 0)
			fail_msg("promtool: %s%s", pt.out, pt.err);
		assert_contains(pt.out, "BLOCK ULID");
		cmd_result_free(&pt);
	} else {
		print_message("promtool not found (Debian: apt-get install prometheus): format "
			      "check only\n");
	}
	test_rmdir(dir);
	cmd_result_free(&prom);
	cmd_result_free(&json);
}

/* A cluster run's scrape has, for each replica under vLLM's engine label,
 * the per-request histograms beyond C12's: each counts exactly the requests
 * that replica completed (its request_success_total), their token sums are
 * its token counters, the replicas' counts add up to the run's, and each
 * engine has its cache_config_info. */
static void test_replica_histograms(void **state)
{
	(void)state;
	struct cmd_result prom;
	run_cmd(&prom,
		"'%s' run --set cluster.replicas=2 --set workload.num_prompts=80 "
		"--set workload.request_rate=8 --format prom",
		SERVESIM_BIN);
	assert_int_equal(prom.status, 0);
	struct scrape s;
	parse(prom.out, &s); /* buckets grow with le, +Inf is the count */
	static const char *const per_request[] = {
		"vllm:request_queue_time_seconds",
		"vllm:request_prefill_time_seconds",
		"vllm:request_decode_time_seconds",
		"vllm:request_inference_time_seconds",
		"vllm:time_per_prefill_token_request_seconds",
		"vllm:request_prompt_tokens",
		"vllm:request_generation_tokens",
		"vllm:request_max_num_generation_tokens",
		"vllm:request_params_n",
		"vllm:request_params_max_tokens",
	};
	double total = 0;
	for (int e = 0; e < 2; e++) {
		char lab[128], key[256];
		snprintf(lab, sizeof lab, "{model_name=\"llama-3.1-8b\",engine=\"%d\"", e);
		snprintf(key, sizeof key, "vllm:request_success_total%s,finished_reason=\"length\"}", lab);
		double done = value_of(&s, key);
		assert_true(done >= 20); /* round robin: about half each */
		total += done;
		for (size_t i = 0; i < sizeof per_request / sizeof *per_request; i++) {
			snprintf(key, sizeof key, "%s_count%s}", per_request[i], lab);
			assert_double_near(value_of(&s, key), done, 0);
		}
		snprintf(key, sizeof key, "vllm:request_prompt_tokens_sum%s}", lab);
		double prompt_sum = value_of(&s, key);
		snprintf(key, sizeof key, "vllm:prompt_tokens_total%s}", lab);
		assert_double_near(prompt_sum, value_of(&s, key), 0);
		snprintf(key, sizeof key, "vllm:request_generation_tokens_sum%s}", lab);
		double gen_sum = value_of(&s, key);
		snprintf(key, sizeof key, "vllm:generation_tokens_total%s}", lab);
		assert_double_near(gen_sum, value_of(&s, key), 0);
		snprintf(key, sizeof key, "engine=\"%d\",gpu_memory_utilization=\"0.9\"", e);
		assert_contains(prom.out, key);
	}
	assert_double_near(total, 80, 0);
	assert_null(strstr(prom.out, "engine=\"2\""));
	free(s.v);
	cmd_result_free(&prom);
}

static double value_or_nan(struct scrape *s, const char *key)
{
	for (size_t i = 0; i < s->n; i++)
		if (!strcmp(s->v[i].key, key))
			return s->v[i].value;
	return NAN;
}

/* A cluster's metrics over time are one series per replica under vLLM's
 * engine label, as a data-parallel vLLM's are, under the same names: the
 * OpenMetrics file ends where the end-of-run scrape is, series by series;
 * each engine's step histogram counts that replica's engine steps (the
 * JSON's engine_steps), and its token-gap histogram from the timeline
 * (time_per_output_token_seconds) counts what its ITL histogram counts. */
static void test_cluster_series_per_engine(void **state)
{
	(void)state;
	char dir[64];
	test_tmpdir(dir, sizeof dir, "report");
	const char *set = "--set cluster.replicas=2 --set workload.num_prompts=80 --set workload.request_rate=8";
	struct cmd_result prom, json;
	run_cmd(&prom, "'%s' run %s --format prom --out '%s' --epoch 1700000000", SERVESIM_BIN, set, dir);
	assert_int_equal(prom.status, 0);
	run_cmd(&json, "'%s' run %s --format json", SERVESIM_BIN, set);
	assert_int_equal(json.status, 0);
	char path[512];
	snprintf(path, sizeof path, "%s/openmetrics.txt", dir);
	char *om_text = test_slurp_path(path);
	struct scrape end, om;
	parse(prom.out, &end);
	parse(om_text, &om);
	/* Every OpenMetrics series is one engine's, and ends at the scrape's
	 * value where the scrape has it (it lacks the deprecated
	 * gpu_cache_usage_perc gauge); most do. */
	size_t matched = 0;
	for (size_t i = 0; i < om.n; i++) {
		const char *k = om.v[i].key;
		assert_true(strstr(k, "engine=\"0\"") || strstr(k, "engine=\"1\""));
		double want = value_or_nan(&end, k);
		if (isnan(want))
			continue;
		assert_double_near(om.v[i].value, want, 1e-9 * fabs(want) + 1e-12);
		matched++;
	}
	assert_true(matched >= om.n * 9 / 10);
	json_error_t je;
	json_t *doc = json_loads(json.out, 0, &je);
	assert_non_null(doc);
	json_t *reps = json_object_get(json_object_get(doc, "servesim"), "replicas");
	assert_int_equal(json_array_size(reps), 2);
	static const char *const families[] = { "vllm:num_requests_running", "vllm:generation_tokens_total",
						"vllm:time_to_first_token_seconds_count",
						"vllm:iteration_tokens_total_count" };
	for (int e = 0; e < 2; e++) {
		char lab[128], key[256];
		snprintf(lab, sizeof lab, "{model_name=\"llama-3.1-8b\",engine=\"%d\"}", e);
		for (size_t f = 0; f < sizeof families / sizeof *families; f++) {
			snprintf(key, sizeof key, "%s%s", families[f], lab);
			assert_false(isnan(value_or_nan(&om, key)));
		}
		json_t *r = json_array_get(reps, (size_t)e);
		snprintf(key, sizeof key, "vllm:iteration_tokens_total_count%s", lab);
		assert_double_near(value_of(&end, key),
				   (double)json_integer_value(json_object_get(r, "engine_steps")), 0);
		snprintf(key, sizeof key, "vllm:time_per_output_token_seconds_count%s", lab);
		double gaps = value_of(&end, key);
		snprintf(key, sizeof key, "vllm:inter_token_latency_seconds_count%s", lab);
		assert_double_near(gaps, value_of(&end, key), 0);
		/* One gap between each two tokens of its requests. */
		double out = (double)json_integer_value(json_object_get(r, "total_output_tokens"));
		double done = (double)json_integer_value(json_object_get(r, "completed"));
		assert_double_near(gaps, out - done, 0);
	}
	json_decref(doc);
	free(om_text);
	free(end.v);
	free(om.v);
	if (access("/usr/bin/promtool", X_OK) == 0) {
		struct cmd_result pt;
		run_cmd(&pt, "promtool tsdb create-blocks-from openmetrics '%s' '%s/tsdb'", path, dir);
		if (pt.status != 0)
			fail_msg("promtool: %s%s", pt.out, pt.err);
		cmd_result_free(&pt);
	}
	test_rmdir(dir);
	cmd_result_free(&prom);
	cmd_result_free(&json);
}

/* The timeline counts what it is given, in the window it falls in, and
 * the bucket a value goes to is the first edge at or above it. */
static void test_timeline_windows(void **state)
{
	(void)state;
	struct timeline *t = timeline_create();
	timeline_gap(t, 0, 0.01);	       /* le 0.01: an edge counts itself */
	timeline_gap(t, 999999999, 0.0100001); /* le 0.025, still window 0 */
	timeline_gap(t, 1000000000, 100);      /* above 80: +Inf, window 1 */
	timeline_step(t, 5500000000LL, 300);   /* le 512, window 5 */
	int64_t c[TIMELINE_N_ITL + 1] = { 0 };
	double sum = 0;
	timeline_accumulate(t, &t->itl, 0, 1, c, &sum);
	assert_int_equal(c[0], 1);
	assert_int_equal(c[1], 1);
	assert_double_near(sum, 0.0200001, 1e-12);
	timeline_accumulate(t, &t->itl, 1, 1000, c, &sum); /* past the end adds nothing more */
	assert_int_equal(c[TIMELINE_N_ITL], 1);
	int64_t s[TIMELINE_N_ITER + 1] = { 0 };
	double ssum = 0;
	timeline_accumulate(t, &t->iter, 0, 5, s, &ssum);
	assert_double_near(ssum, 0, 0);
	timeline_accumulate(t, &t->iter, 5, 6, s, &ssum);
	assert_int_equal(s[7], 1); /* edges 1 8 16 32 64 128 256 512 */
	assert_double_near(ssum, 300, 0);
	timeline_destroy(t);
	timeline_destroy(NULL);
}

/* timeline_gaps(n) is n timeline_gap calls, bit for bit: the same counts
 * and sums in every window, on a plain timeline and a totals-only one
 * whose ring folds as time moves on (a late value lands in the total),
 * over random runs of equal gaps at increasing times. The gaps are not
 * exact in binary, so a sum made as n * v or in another order differs. */
static void test_timeline_gaps_match_one_by_one(void **state)
{
	(void)state;
	for (int totals = 0; totals < 2; totals++) {
		struct timeline *a = totals ? timeline_create_totals() : timeline_create();
		struct timeline *b = totals ? timeline_create_totals() : timeline_create();
		uint64_t seed = 14;
		int64_t t_ns = 0;
		for (int k = 0; k < 3000; k++) {
			seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
			t_ns += (int64_t)((seed >> 34) % 1000000000);   /* up to 1 s on */
			double gap = 0.001 * (double)(1 + (seed >> 20) % 997) / 7;
			size_t n = (size_t)((seed >> 8) % 300);
			int64_t at = totals && k % 500 == 499 ? 0 : t_ns;   /* now and then a late one */
			timeline_gaps(a, at, gap, n);
			for (size_t j = 0; j < n; j++)
				timeline_gap(b, at, gap);
		}
		if (totals) {
			timeline_fold_rest(a);
			timeline_fold_rest(b);
			assert_true(a->n_late > 0);
			assert_int_equal(a->n_late, b->n_late);
		}
		size_t upto = totals ? a->n_windows : 1;
		for (size_t w = 0; w < upto || (!totals && w < a->n_windows); w++) {
			int64_t ca[TIMELINE_N_ITL + 1] = { 0 }, cb[TIMELINE_N_ITL + 1] = { 0 };
			double sa = 0, sb = 0;
			size_t from = totals ? 0 : w, to = totals ? a->n_windows : w + 1;
			timeline_accumulate(a, &a->itl, from, to, ca, &sa);
			timeline_accumulate(b, &b->itl, from, to, cb, &sb);
			assert_memory_equal(ca, cb, sizeof ca);
			assert_memory_equal(&sa, &sb, sizeof sa);
			if (totals)
				break;
		}
		timeline_destroy(a);
		timeline_destroy(b);
	}
}

/* Ollama and llama.cpp: llama-server's metrics, one scrape at the end,
 * still a file promtool takes (its "counters" without _total are gauges). */
static void test_openmetrics_llamacpp(void **state)
{
	(void)state;
	char dir[64];
	test_tmpdir(dir, sizeof dir, "report");
	struct cmd_result r;
	run_cmd(&r, "'%s' run c28-ollama-vs-vllm --set workload.num_prompts=8 --out '%s'",
		SERVESIM_BIN, dir);
	assert_int_equal(r.status, 0);
	cmd_result_free(&r);
	char path[512];
	snprintf(path, sizeof path, "%s/openmetrics.txt", dir);
	char *text = test_slurp_path(path);
	struct scrape om;
	parse(text, &om);
	assert_true(om.eof);
	assert_contains(text,
			"# TYPE llamacpp:prompt_tokens counter\nllamacpp:prompt_tokens_total ");
	assert_contains(text, "# TYPE llamacpp:n_tokens_max gauge\n");
	assert_true(value_of(&om, "llamacpp:tokens_predicted_total") > 0);
	free(text);
	free(om.v);
	if (access("/usr/bin/promtool", X_OK) == 0) {
		run_cmd(&r, "promtool tsdb create-blocks-from openmetrics '%s' '%s/tsdb'", path,
			dir);
		if (r.status != 0)
			fail_msg("promtool: %s%s", r.out, r.err);
		cmd_result_free(&r);
	}
	test_rmdir(dir);
}

/* A bad --epoch is refused with exit 2 before anything is written. */
static void test_bad_epoch(void **state)
{
	(void)state;
	struct cmd_result r;
	run_cmd(&r, "'%s' run --epoch soon --out /tmp/servesim-never-written", SERVESIM_BIN);
	assert_int_equal(r.status, 2);
	assert_contains(r.err, "--epoch");
	assert_int_equal(access("/tmp/servesim-never-written", F_OK), -1);
	cmd_result_free(&r);
}

/* run --plot DIR --svg: SVG pictures whose subtitle says what ran (not
 * the folder), with TTFT and ITL on log axes. Needs gnuplot. */
static void test_run_plot_svg(void **state)
{
	(void)state;
	struct cmd_result r;
	run_cmd(&r, "command -v gnuplot");
	bool have = r.status == 0;
	cmd_result_free(&r);
	if (!have) {
		print_message("gnuplot not found: run --plot --svg check skipped\n");
		skip();
	}
	char dir[64];
	test_tmpdir(dir, sizeof dir, "plot");
	run_cmd(&r,
		"'%s' run c17-kv-pressure --set workload.num_prompts=60 --plot '%s' --svg --format "
		"json",
		SERVESIM_BIN, dir);
	assert_int_equal(r.status, 0);
	assert_contains(r.err, "(SVG)");
	cmd_result_free(&r);
	char path[512];
	snprintf(path, sizeof path, "%s/latency_cdf.svg", dir);
	char *svg = test_slurp_path(path);
	assert_contains(svg, "<svg");
	assert_contains(svg, "llama-3.1-8b on h100-sxm, c17-kv-pressure.ini, 60 requests");
	assert_null(strstr(svg, dir));
	assert_contains(svg, "Inter-token latency (ms, log scale)");
	assert_contains(svg, "Time to first token (ms, log scale)");
	free(svg);
	snprintf(path, sizeof path, "%s/timeseries.svg", dir);
	assert_int_equal(access(path, R_OK), 0);
	test_rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_timeline_windows),
		cmocka_unit_test(test_openmetrics_matches_end_scrape),
		cmocka_unit_test(test_openmetrics_llamacpp),
		cmocka_unit_test(test_cluster_series_per_engine),
		cmocka_unit_test(test_replica_histograms),
		cmocka_unit_test(test_bad_epoch),
		cmocka_unit_test(test_timeline_gaps_match_one_by_one),
		cmocka_unit_test(test_run_plot_svg),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
