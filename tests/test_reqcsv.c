/*
 * reqcsv: requests.csv streamed while a lean run goes (rows held until
 * every earlier id's is written) gives the same bytes as the full run's
 * requests.csv, and so do its timeseries.csv (streamed too: tsrows) and
 * itl_histogram.csv, for
 * workloads whose requests finish out of id order: preemption under FCFS
 * and priority, failures, multi-turn and closed-loop users, a cluster, P/D
 * disaggregation, Ollama. A folder that cannot be made leaves nothing.
 * The --save-detailed arrays streamed the same way (reqdetail) give the
 * same JSON, byte for byte, as json_dumpf of the full run's object, in
 * both layouts the CLI writes (indented on stdout, one line for
 * --save-result). The end-of-run Prometheus scrape of a lean run (request
 * metrics summed as requests are done, promobs; a totals-only timeline)
 * gives the full run's bytes, and a totals-only timeline the same totals,
 * bit for bit, as a full one. run --out's folder of a lean run (its
 * scrapes over time saved as it went: leanout, omsnap) is the full run's,
 * file by file.
 */
#include "simutil.h"
#include "leanout.h"
#include "omsnap.h"
#include "promobs.h"
#include "timeline.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

/* Loads scenario id with the NULL-terminated overrides and runs it with o. */
static void run_case(const char *const *c, struct run_result *res, const struct run_opts *o)
{
	struct inidoc ov = { 0 };
	struct err e;
	for (size_t i = 1; c[i]; i++)
		if (inidoc_add_override(&ov, c[i], &e))
			fail_msg("%s", e.msg);
	char path[4096];
	if (catalog_resolve(CATALOG_SCENARIOS, c[0], path, sizeof path, &e))
		fail_msg("%s", e.msg);
	struct scenario sc;
	if (scenario_load(&sc, path, &ov, &e) || run_simulate_opts(&sc, res, o, &e))
		fail_msg("%s", e.msg);
	inidoc_free(&ov);
}

static char *slurp(const char *dir, const char *name)
{
	char path[4200];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	return test_slurp_path(path);
}

/* Some request finished before one made earlier: the rows must be held. */
static bool out_of_order(const struct run_result *r)
{
	int64_t latest = INT64_MIN;
	for (size_t i = 0; i < r->reqs.len; i++) {
		if (r->reqs.v[i].finish_ns < latest)
			return true;
		if (r->reqs.v[i].finish_ns > latest)
			latest = r->reqs.v[i].finish_ns;
	}
	return false;
}

static const char *const cases[][5] = {
		{ "c17-kv-pressure", "engine.num_gpu_blocks_override=300", "workload.num_prompts=150", NULL },
		{ "c17-kv-pressure", "engine.num_gpu_blocks_override=300", "engine.scheduling_policy=priority", NULL },
		{ "c13-bench-serve", "workload.input_distribution=normal", "workload.input_stddev=300",
		  "engine.max_model_len=1400", NULL },   /* about a fifth fail */
		{ "c13-bench-serve", "workload.turns=3", "workload.max_concurrency=8", NULL },
		{ "c13-bench-serve", "workload.users=10", "workload.num_prompts=120", NULL },
		{ "c13-bench-serve", "cluster.replicas=3", "workload.num_prompts=150", NULL },
		{ "c25-disagg-small", "workload.num_prompts=60", NULL },
		{ "c28-ollama-vs-vllm", "workload.users=0", "workload.request_rate=1", "engine.num_parallel=4" },
};

static void streamed_equals_full(void **state)
{
	(void)state;
	static const char *const files[] = { "requests.csv", "timeseries.csv", "itl_histogram.csv" };
	char tmp[64];
	test_tmpdir(tmp, sizeof tmp, "reqcsv");
	int unordered = 0;
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		const char *const c[6] = { cases[i][0], cases[i][1], cases[i][2], cases[i][3], cases[i][4], NULL };
		struct run_result full, lean;
		struct err e;
		run_case(c, &full, NULL);
		unordered += out_of_order(&full);
		struct reqcsv *w = reqcsv_create(&e);
		struct tsrows *ts = tsrows_create(&e);
		assert_non_null(w);
		assert_non_null(ts);
		struct run_opts o = { .lean = true, .timeseries = true, .on_record = reqcsv_row, .record_ctx = w,
				      .on_sample = tsrows_row, .sample_ctx = ts };
		run_case(c, &lean, &o);
		assert_int_equal(lean.reqs.len, 0);   /* lean: no record kept */
		assert_int_equal(lean.n_ts, 0);       /* nor a sample: they went to ts */
		assert_true(full.n_ts > 10);
		lean.rows = w;
		lean.ts_rows = ts;
		char a[300], b[300];
		snprintf(a, sizeof a, "%s/full%zu", tmp, i);
		snprintf(b, sizeof b, "%s/lean%zu", tmp, i);
		if (report_csv(a, &full, &e) || report_csv(b, &lean, &e))
			fail_msg("%s", e.msg);
		for (size_t k = 0; k < sizeof files / sizeof *files; k++) {
			char *x = slurp(a, files[k]), *y = slurp(b, files[k]);
			if (strcmp(x, y))
				fail_msg("%s %s: the streamed %s differs", c[0], c[1], files[k]);
			if (k == 0)   /* a header and a row per request */
				assert_int_equal(strlen(x) > 0, 1);
			free(x);
			free(y);
		}
		run_result_free(&full);
		run_result_free(&lean);
		reqcsv_destroy(w);
		tsrows_destroy(ts);
	}
	assert_true(unordered >= 3);   /* the holding was exercised */	test_rmdir(tmp);
}

/* json written with flags: of the full run (json_dumps) or spliced
 * (report_json_dumpf, res->detail set). Caller frees. */
static char *json_text_forged(struct run_result *res, size_t flags, bool forge)
{
	double p99 = 99;
	struct report_opts ro = { &p99, 1, true, 0 };
	json_t *j = report_json(res, &ro);
	if (forge) {
		/* Strings that read as the splice's markers but are not
		 * reqdetail_marks' (a model folder can be named so). */
		json_object_set_new(j, "model_id", json_string("\001servesim-detail:ttfts"));
		json_object_set_new(j, "forged", json_pack("{s:s, s:s}", "x", "\001servesim-detail:nope", "y",
							   "a\"\001servesim-detail:errors"));
	}
	char *text = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&text, &n);
	struct err e;
	if (report_json_dumpf(j, f, flags, res, &e))
		fail_msg("%s", e.msg);
	fclose(f);
	json_decref(j);
	return text;
}

static char *json_text(struct run_result *res, size_t flags)
{
	return json_text_forged(res, flags, false);
}

/* Case i of cases run twice: in full, and lean with its --save-detailed
 * arrays streamed into a reqdetail as the run goes (lean.detail). */
struct detailed_pair {
	struct run_result full, lean;
	struct reqdetail *d;
};

static void detailed_pair_run(size_t i, struct detailed_pair *p)
{
	const char *const c[6] = { cases[i][0], cases[i][1], cases[i][2], cases[i][3], cases[i][4], NULL };
	struct err e;
	run_case(c, &p->full, NULL);
	p->d = reqdetail_create(&e);
	assert_non_null(p->d);
	struct run_opts o = { .lean = true, .on_record = reqdetail_row, .record_ctx = p->d };
	run_case(c, &p->lean, &o);
	assert_int_equal(p->lean.reqs.len, 0);
	p->lean.detail = p->d;
}

static void detailed_pair_free(struct detailed_pair *p)
{
	run_result_free(&p->full);
	run_result_free(&p->lean);
	reqdetail_destroy(p->d);
}

/* The lean run's JSON text y is the full run's x, byte for byte. */
static void same_text(const char *x, const char *y, const char *what)
{
	if (!strcmp(x, y))
		return;
	size_t i = 0;
	while (x[i] == y[i])
		i++;
	fail_msg("%s: the spliced JSON differs at byte %zu: '%.80s' against the full run's '%.80s'", what, i,
		 y + (i > 40 ? i - 40 : 0), x + (i > 40 ? i - 40 : 0));
}

/* A string elsewhere in the document that reads like a marker stays
 * text: the bytes still equal the full run's (it once took the ttfts
 * array in model_id's place, and a marker of no array's name read past
 * the arrays). */
static void forged_markers_stay_text(void **state)
{
	(void)state;
	struct detailed_pair p;
	detailed_pair_run(0, &p);
	const size_t flags = JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(12);
	char *x = json_text_forged(&p.full, flags, true), *y = json_text_forged(&p.lean, flags, true);
	same_text(x, y, "forged markers");
	assert_non_null(strstr(y, "\"model_id\": \"\\u0001servesim-detail:ttfts\""));
	free(x);
	free(y);
	detailed_pair_free(&p);
}

static void detailed_streamed_equals_full(void **state)
{
	(void)state;
	static const size_t layouts[] = { JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(12),
					  JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(12) };
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		struct detailed_pair p;
		detailed_pair_run(i, &p);
		for (size_t k = 0; k < sizeof layouts / sizeof *layouts; k++) {
			/* Twice: --save-result and stdout read the same rows. */
			for (int twice = 0; twice < 2; twice++) {
				char *x = json_text(&p.full, layouts[k]), *y = json_text(&p.lean, layouts[k]);
				same_text(x, y, cases[i][1]);
				assert_non_null(strstr(x, "\"ollama_metrics\""));
				free(x);
				free(y);
			}
		}
		detailed_pair_free(&p);
	}
}

struct tobs {
	int64_t t_ns, id;
	double v;
};

static int by_time_id(const void *a, const void *b)
{
	const struct tobs *x = a, *y = b;
	if (x->t_ns != y->t_ns)
		return (x->t_ns > y->t_ns) - (x->t_ns < y->t_ns);
	return (x->id > y->id) - (x->id < y->id);
}

/* Every request metric's sum in obs equals, bit for bit, the sum of the
 * full run's values in (time, id) order, and the text at 9 digits hides
 * a sum in another order, so the bits are compared here. Returns the
 * number of metrics whose order mattered (the done order was not it). */
static int sums_in_time_order(const struct run_result *full, const struct promobs *obs)
{
	int mattered = 0;
	struct tobs *v = calloc(full->reqs.len + 1, sizeof *v);
	for (int m = 0; m <= RM_PREEMPTIONS; m++) {
		size_t n = 0;
		double done_order = 0;
		for (size_t i = 0; i < full->reqs.len; i++) {
			const struct request *r = &full->reqs.v[i];
			if (r->state == REQ_FINISHED && promobs_value(r, (enum req_metric)m, &v[n].t_ns, &v[n].v)) {
				v[n].id = (int64_t)i;
				n++;
			}
		}
		qsort(v, n, sizeof *v, by_time_id);
		double want = 0;
		for (size_t k = 0; k < n; k++)
			want += v[k].v;
		for (size_t k = n; k-- > 0;)   /* another order, to see that order shows in the bits */
			done_order += v[k].v;
		int64_t counts[1];
		double got;
		promobs_hist(obs, -1, (enum req_metric)m, NULL, 0, counts, &got);
		assert_memory_equal(&got, &want, sizeof got);
		assert_int_equal(counts[0], (int64_t)n);
		mattered += memcmp(&done_order, &want, sizeof want) != 0;
	}
	free(v);
	return mattered;
}

/* promobs against a sort, on requests done far out of first-token order
 * (long and short answers mixed): each settled time is the earliest
 * send still in flight, as the run gives it. Every metric's sum equals
 * the (time, id)-ordered sum bit for bit, where the done order's sum of
 * TTFT does not (one TTFT in eight is 500 s, so the sum's rounding shows
 * its order; sums of whole nanoseconds of like size rarely do). */
static void promobs_sums_in_time_order(void **state)
{
	(void)state;
	enum { N = 4000 };
	struct request *r = calloc(N, sizeof *r);
	size_t *done = calloc(N, sizeof *done);
	uint64_t x = 0x9E3779B97F4A7C15u;
	for (size_t i = 0; i < N; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		r[i].id = (int64_t)i;
		r[i].state = REQ_FINISHED;
		r[i].send_ns = (int64_t)i * 10000000 + (int64_t)(x % 1000);
		r[i].enqueue_ns = r[i].first_scheduled_ns = r[i].send_ns + 1000;
		r[i].first_token_ns = r[i].send_ns + 20000000 + (int64_t)(x % 400000000) +
				      (x % 8 == 0 ? 500 * INT64_C(1000000000) : 0);
		r[i].last_token_ns = r[i].finish_ns = r[i].first_token_ns + (int64_t)((x >> 20) % 3000000000u);
		r[i].prompt_len = 100 + (int)(x % 900);
		r[i].output_len = 2 + (int)((x >> 30) % 500);
		done[i] = i;
	}
	/* Done in finish order (ties by id). */
	for (size_t i = 1; i < N; i++)
		for (size_t k = i; k > 0 && (r[done[k]].finish_ns < r[done[k - 1]].finish_ns); k--) {
			size_t t = done[k];
			done[k] = done[k - 1];
			done[k - 1] = t;
		}
	struct promobs *obs = promobs_create();
	bool *is_done = calloc(N, sizeof *is_done);
	size_t oldest = 0;
	double naive[1] = { 0 };
	for (size_t k = 0; k < N; k++) {
		const struct request *q = &r[done[k]];
		is_done[done[k]] = true;
		while (oldest < N && is_done[oldest])
			oldest++;
		int64_t settled = oldest < N && r[oldest].send_ns < q->finish_ns ? r[oldest].send_ns : q->finish_ns;
		promobs_row(obs, q, settled);
		naive[0] += (double)(q->first_token_ns - q->send_ns) / 1e9;
	}
	promobs_finish(obs);
	struct run_result full = { .reqs = { .v = r, .len = N } };
	sums_in_time_order(&full, obs);
	int64_t counts[1];
	double got;
	promobs_hist(obs, -1, RM_TTFT, NULL, 0, counts, &got);
	assert_memory_not_equal(&got, &naive[0], sizeof got);   /* the done order would show */
	promobs_destroy(obs);
	free(is_done);
	free(done);
	free(r);
}

/* report_prom of res into a string (caller frees). */
static char *prom_text(struct run_result *res)
{
	char *text = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&text, &n);
	report_prom(f, res);
	fclose(f);
	return text;
}

static void prom_streamed_equals_full(void **state)
{
	(void)state;
	/* The cases above (Ollama's scrape is llama-server's, made of sums
	 * kept as requests finish; a vLLM cluster's replicas' TTFT and E2E
	 * are replhist's), and a run of about 500 simulated seconds, past
	 * the totals-only timeline's ring. */
	static const char *const long_run[] = { "c13-bench-serve", "workload.request_rate=1",
						"workload.num_prompts=500", NULL };
	int n_cases = 0, order_mattered = 0, n_clusters = 0;
	for (size_t i = 0; i <= sizeof cases / sizeof *cases; i++) {
		const char *const *c = long_run;
		const char *cc[6];
		if (i < sizeof cases / sizeof *cases) {
			for (int k = 0; k < 5; k++)
				cc[k] = cases[i][k];
			cc[5] = NULL;
			c = cc;
		}
		bool cluster = strstr(c[0], "disagg") || (c[1] && strstr(c[1], "cluster.replicas"));
		struct run_result full, lean;
		struct err e;
		run_case(c, &full, &(struct run_opts){ .timeline = true });
		struct leanout lo;
		struct run_opts o = { .lean = true, .timeline = true };
		if (leanout_open(&lo, &(struct leanout_want){ .prom = true, .replicas = cluster }, &o, &e))
			fail_msg("%s", e.msg);
		assert_true(o.timeline_totals);
		run_case(c, &lean, &o);
		assert_int_equal(lean.reqs.len, 0);
		if (leanout_finish(&lo, &lean, &e))
			fail_msg("%s", e.msg);
		struct promobs *obs = lo.obs;
		n_clusters += cluster;
		if (i == sizeof cases / sizeof *cases) {   /* the ring folded windows, none late */
			assert_true(lean.timeline->base > 0);
			assert_int_equal(lean.timeline->n_late, 0);
		}
		order_mattered += sums_in_time_order(&full, obs);
		char *x = prom_text(&full), *y = prom_text(&lean);
		if (strcmp(x, y))
			fail_msg("%s %s: the streamed Prometheus scrape differs", c[0], c[1] ? c[1] : "");
		assert_true(strstr(x, "vllm:request_queue_time_seconds_sum") || strstr(x, "llamacpp:n_decode_total"));
		free(x);
		free(y);
		run_result_free(&full);
		run_result_free(&lean);
		leanout_close(&lo);
		n_cases++;
	}
	assert_true(n_cases >= 9);
	assert_int_equal(n_clusters, 2);
	assert_true(order_mattered > 0);
}

/* A totals-only timeline (a ring of TIMELINE_RING windows folded in
 * order) against a full one: the same counts and bit-identical sums over
 * every window, for values spread over ten rings with times that go back
 * by up to a few windows, and over an idle gap far past the ring. */
static void timeline_totals_equal_full(void **state)
{
	(void)state;
	struct timeline *full = timeline_create(), *tot = timeline_create_totals();
	uint64_t x = 88172645463325252u;
	int64_t t = 0;
	for (int i = 0; i < 200000; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		t += (int64_t)(x % 30000000);   /* about 66 values a second */
		int64_t at = t - (int64_t)(x >> 40) % (3 * TIMELINE_WINDOW_NS);
		if (i == 150000)
			t += 100000 * TIMELINE_WINDOW_NS;   /* an idle stretch */
		double gap = (double)(x >> 11) / 9007199254740992.0 * 0.2;
		timeline_gap(full, at, gap);
		timeline_gap(tot, at, gap);
		timeline_step(full, at, (int64_t)(x % 3000));
		timeline_step(tot, at, (int64_t)(x % 3000));
	}
	assert_int_equal(tot->n_late, 0);
	const struct timeline_hist *hf[] = { &full->itl, &full->iter }, *ht[] = { &tot->itl, &tot->iter };
	for (int h = 0; h < 2; h++) {
		int64_t cf[TIMELINE_N_ITL + 1] = { 0 }, ct[TIMELINE_N_ITL + 1] = { 0 };
		double sf = 0, st = 0;
		timeline_accumulate(full, hf[h], 0, full->n_windows, cf, &sf);
		timeline_accumulate(tot, ht[h], 0, tot->n_windows, ct, &st);
		assert_memory_equal(cf, ct, sizeof cf);
		assert_memory_equal(&sf, &st, sizeof sf);
		assert_true(sf > 0);
	}
	timeline_destroy(full);
	timeline_destroy(tot);
}

/* run --out of a lean run (leanout.h: requests.csv, timeseries.csv and
 * the scrapes over time saved as it went, omsnap.h) against a full run's
 * folder, file by file, byte for byte: the single-engine cases above
 * (Ollama's openmetrics.txt is llama-server's end-of-run sums) and two
 * long runs: 500 simulated seconds (the timeline's ring folds; scraped
 * every 2 s) and about 800 (every 5 s): most candidate scrapes saved go
 * unused. */
static void out_streamed_equals_full(void **state)
{
	(void)state;
	static const char *const files[] = { "requests.csv", "timeseries.csv", "itl_histogram.csv",
					     "openmetrics.txt" };
	static const char *const long_runs[][5] = {
		{ "c13-bench-serve", "workload.request_rate=1", "workload.num_prompts=500", NULL },
		{ "c13-bench-serve", "workload.request_rate=0.5", "workload.num_prompts=400", NULL },
	};
	size_t n_cases = sizeof cases / sizeof *cases, n_long = sizeof long_runs / sizeof *long_runs;
	char tmp[64];
	test_tmpdir(tmp, sizeof tmp, "reqcsv");
	int compared = 0, coarse = 0;
	for (size_t i = 0; i < n_cases + n_long; i++) {
		const char *c[6] = { 0 };
		for (int k = 0; k < 5 && (i < n_cases ? cases[i][k] : long_runs[i - n_cases][k]); k++)
			c[k] = i < n_cases ? cases[i][k] : long_runs[i - n_cases][k];
		if (strstr(c[0], "disagg") || (c[1] && strstr(c[1], "cluster.replicas")))
			continue;   /* one engine only: a vLLM cluster keeps its records */
		bool vllm = !strstr(c[0], "ollama");
		struct run_result full, lean;
		struct err e;
		run_case(c, &full, &(struct run_opts){ .timeline = true });
		struct leanout lo;
		struct run_opts o = { .lean = true, .timeline = true };
		struct leanout_want w = { .csv = true, .prom = true, .openmetrics = vllm };
		if (leanout_open(&lo, &w, &o, &e))
			fail_msg("%s", e.msg);
		run_case(c, &lean, &o);
		assert_int_equal(lean.reqs.len, 0);
		assert_int_equal(lean.n_ts, 0);
		if (leanout_finish(&lo, &lean, &e))
			fail_msg("%s", e.msg);
		assert_int_equal(lean.timeline->n_late, 0);
		coarse += vllm && omsnap_interval_ns(lean.end_ns) > TIMELINE_WINDOW_NS;
		char a[300], b[300];
		snprintf(a, sizeof a, "%s/full%zu", tmp, i);
		snprintf(b, sizeof b, "%s/lean%zu", tmp, i);
		if (report_out(a, &full, 1.7e9, &e) || report_out(b, &lean, 1.7e9, &e))
			fail_msg("%s", e.msg);
		for (size_t k = 0; k < sizeof files / sizeof *files; k++) {
			char *x = slurp(a, files[k]), *y = slurp(b, files[k]);
			if (strcmp(x, y))
				fail_msg("%s %s: the streamed %s differs", c[0], c[1] ? c[1] : "", files[k]);
			free(x);
			free(y);
		}
		run_result_free(&full);
		run_result_free(&lean);
		leanout_close(&lo);
		compared++;
	}
	assert_true(compared >= 7);
	assert_true(coarse >= 2);   /* scraped every 2 s and every 5 s at least */	test_rmdir(tmp);
}

/* A folder that cannot be made: an error, and nothing written. */
static void unwritable_leaves_nothing(void **state)
{
	(void)state;
	const char *const c[] = { "c13-bench-serve", "workload.num_prompts=20", NULL };
	struct run_result lean;
	struct err e;
	struct reqcsv *w = reqcsv_create(&e);
	struct run_opts o = { .lean = true, .on_record = reqcsv_row, .record_ctx = w };
	run_case(c, &lean, &o);
	lean.rows = w;
	char tmp[64];
	test_tmpdir(tmp, sizeof tmp, "reqcsv");
	char file[300], dir[400];
	snprintf(file, sizeof file, "%s/a-file", tmp);
	test_write_text(file, "");
	snprintf(dir, sizeof dir, "%s/out", file);   /* under a file: cannot be made */
	assert_int_equal(report_csv(dir, &lean, &e), -1);
	struct stat st;
	assert_int_not_equal(stat(dir, &st), 0);
	run_result_free(&lean);
	reqcsv_destroy(w);	test_rmdir(tmp);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(streamed_equals_full),
		cmocka_unit_test(detailed_streamed_equals_full),
		cmocka_unit_test(forged_markers_stay_text),
		cmocka_unit_test(prom_streamed_equals_full),
		cmocka_unit_test(out_streamed_equals_full),
		cmocka_unit_test(promobs_sums_in_time_order),
		cmocka_unit_test(timeline_totals_equal_full),
		cmocka_unit_test(unwritable_leaves_nothing),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
