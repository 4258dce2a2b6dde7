/*
 * Per-request arrays of benchmark results (benchdetail.h): SGLang
 * bench_serving saved with --output-details replays request by request, as
 * vllm bench serve --save-detailed does, and every request's numbers are
 * checked. tests/data/readers/README.md says how each sample follows
 * sglang's bench_serving.py.
 */
#include "testutil.h"

#include <math.h>
#include <string.h>

#include "runobs.h"

#define RD TEST_DATA_DIR "/readers/"

/* The means of the first run's arrays, as the sample's generator (and
 * calculate_metrics) computed them; the file stores the same doubles. */
#define RUN1_TTFT_MS 58.637199999999986
#define RUN1_ITL_MS 7.473413669064749

static int load(struct runobs_set *set, const char *file, struct err *e)
{
	struct runobs_opts o = { .hardware = "h100-sxm", .model = "llama-3.1-8b" };
	memset(set, 0, sizeof *set);
	return runobs_load(set, file, &o, e);
}

/* Two runs in one file, each an observation replaying its own requests:
 * the trace is the file, trace_result the run's line; the second run's
 * failed request is left out of the replay (test_trace.c) and of its means. */
static void sglang_details_replay_per_request(void **state)
{
	(void)state;
	struct runobs_set set;
	struct err e = { { 0 } };
	if (load(&set, RD "sglang_bench_details.jsonl", &e))
		fail_msg("%s", e.msg);
	assert_int_equal(set.len, 2);
	for (int i = 0; i < 2; i++) {
		assert_string_equal(set.v[i].format, "sglang-bench");
		assert_contains(set.v[i].sc.trace, "sglang_bench_details.jsonl");
		assert_int_equal(set.v[i].sc.trace_result, i + 1);
	}
	assert_true(isinf(set.v[0].sc.request_rate));
	assert_double_near(set.v[1].sc.request_rate, 4.0, 0);
	assert_double_near(set.v[0].pts[0].ms[OBS_TTFT], RUN1_TTFT_MS, 1e-9);
	assert_double_near(set.v[0].pts[0].ms[OBS_ITL], RUN1_ITL_MS, 1e-9);
	runobs_set_free(&set);
}

/* A summary key the file lacks comes from the arrays (the mean of every
 * successful request's token gaps: 556 here); one the file has must
 * agree with them. */
static void arrays_fill_and_check_the_summary(void **state)
{
	(void)state;
	struct err e = { { 0 } };
	struct runobs_set set;
	if (load(&set, RD "sglang_details_no_itl_mean.jsonl", &e))
		fail_msg("%s", e.msg);
	assert_double_near(set.v[0].pts[0].ms[OBS_ITL], RUN1_ITL_MS, 1e-9);
	runobs_set_free(&set);

	assert_int_equal(load(&set, RD "sglang_details_summary_off.jsonl", &e), -1);
	assert_contains(e.msg, "sglang_details_summary_off.jsonl");
	assert_contains(e.msg, "mean_ttft_ms is 70.3646");
	assert_contains(e.msg, "ttfts of its 5 successful requests give a mean of 58.6372 ms");
	runobs_set_free(&set);
}

/* Each request's numbers: a negative TTFT, arrays of unequal length. */
static void requests_are_checked_one_by_one(void **state)
{
	(void)state;
	struct runobs_set set;
	struct err e = { { 0 } };
	assert_int_equal(load(&set, RD "sglang_details_bad_ttft.jsonl", &e), -1);
	assert_contains(e.msg, "sglang_details_bad_ttft.jsonl");
	assert_contains(e.msg, "ttfts[1]: expected seconds > 0");
	runobs_set_free(&set);
	assert_int_equal(load(&set, RD "sglang_details_short_itls.jsonl", &e), -1);
	assert_contains(e.msg, "itls: 4 entries, but input_lens has 5");
	runobs_set_free(&set);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(sglang_details_replay_per_request),
		cmocka_unit_test(arrays_fill_and_check_the_summary),
		cmocka_unit_test(requests_are_checked_one_by_one),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
