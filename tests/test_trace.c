/*
 * trace: the two real traces in ../shared/traces load with the row counts
 * their README states and the values their first lines hold; each format
 * reads a small fixture (tests/data/traces/), and each kind of bad input is
 * refused with a message naming the file, the line and the field.
 *
 * Times are compared to 1e-9 s: every expected time is a short decimal
 * (milliseconds or 0.1 µs steps) that a double holds to about 1e-12 at the
 * magnitudes here, so 1e-9 only absorbs the rounding of one division.
 */
#include "testutil.h"

#include <stdbool.h>
#include <sys/stat.h>

#include "trace.h"

#define TRACES TEST_DATA_DIR "/traces/"
#define TIME_TOL_S 1e-9

static void load_ok(struct trace *t, const char *path, const char *format)
{
	struct err e = { { 0 } };
	if (trace_load(t, path, format, &e)) {
		print_error("%s: %s\n", path, e.msg);
		fail();
	}
}

static void check_row(const struct trace_row *r, double time_s, int32_t in, int32_t out)
{
	assert_double_near(r->time_s, time_s, TIME_TOL_S);
	assert_int_equal(r->input_len, in);
	assert_int_equal(r->output_len, out);
}

static void assert_monotone(const struct trace *t)
{
	for (size_t i = 1; i < t->len; i++)
		if (!(t->rows[i - 1].time_s <= t->rows[i].time_s)) {
			print_error("row %zu at %.9f s follows one at %.9f s\n", i,
				    t->rows[i].time_s, t->rows[i - 1].time_s);
			fail();
		}
}

/* The Azure code trace: 8,819 rows (README), no trailing newline, CRLF. */
static void azure_real(void **state)
{
	(void)state;
	skip_without_dir(TRACE_SHARED_DIR);
	struct trace t;
	load_ok(&t, TRACE_SHARED_DIR "/azure_llm_2023_code.csv", "auto");
	assert_string_equal(t.format, "azure");
	assert_int_equal(t.len, 8819);
	check_row(&t.rows[0], 0.0, 4808, 10);
	assert_int_equal(t.rows[0].n_hash_ids, 0);
	assert_null(t.rows[0].hash_ids);
	/* 18:17:04.0319600 - 18:17:03.9799600 */
	check_row(&t.rows[1], 0.052, 3180, 8);
	/* Last row 19:14:19.9280160: 57 min 15.9480560 s after the first. */
	check_row(&t.rows[t.len - 1], 57 * 60 + 15.948056, 549, 173);
	assert_monotone(&t);
	trace_free(&t);
}

/* The Mooncake synthetic trace: 3,993 lines, timestamps in ms. */
static void mooncake_real(void **state)
{
	(void)state;
	skip_without_dir(TRACE_SHARED_DIR);
	struct trace t;
	load_ok(&t, TRACE_SHARED_DIR "/mooncake_synthetic.jsonl", "auto");
	assert_string_equal(t.format, "mooncake");
	assert_int_equal(t.len, 3993);
	/* The first two lines share timestamp 0: the sort must keep them. */
	check_row(&t.rows[0], 0.0, 40160, 6);
	assert_int_equal(t.rows[0].n_hash_ids, 79);
	for (int32_t i = 0; i < 79; i++)
		assert_int_equal(t.rows[0].hash_ids[i], i);
	check_row(&t.rows[1], 0.0, 36640, 4);
	assert_int_equal(t.rows[1].hash_ids[0], 79);
	const struct trace_row *last = &t.rows[t.len - 1];
	check_row(last, 1022.025, 18440, 83);
	assert_int_equal(last->n_hash_ids, 37);
	assert_int_equal(last->hash_ids[36], 43923);
	/* In this file every prompt has one id per started 512-token block. */
	for (size_t i = 0; i < t.len; i++)
		assert_int_equal(t.rows[i].n_hash_ids,
				 (t.rows[i].input_len + TRACE_BLOCK_TOKENS - 1) / TRACE_BLOCK_TOKENS);
	assert_monotone(&t);
	trace_free(&t);
}

/* CRLF, no trailing newline, one row out of order, a tie kept in file order,
 * a row on the next day. */
static void azure_fixture(void **state)
{
	(void)state;
	struct trace t;
	load_ok(&t, TRACES "azure_ok.csv", "auto");
	assert_string_equal(t.format, "azure");
	assert_int_equal(t.len, 5);
	check_row(&t.rows[0], 0.0, 4808, 10);
	check_row(&t.rows[1], 0.02, 100, 1);
	check_row(&t.rows[2], 0.052, 3180, 8);
	check_row(&t.rows[3], 0.052, 7, 2);
	/* 2023-11-17 00:00:00 - 2023-11-16 18:17:03.97996 */
	check_row(&t.rows[4], 5 * 3600 + 42 * 60 + 56.02004, 5, 5);
	trace_free(&t);
}

/* The 2024 traces' "+00:00" suffix, 'T', "Z" and a negative offset that
 * moves a time across midnight. */
static void azure_offsets(void **state)
{
	(void)state;
	struct trace t;
	load_ok(&t, TRACES "azure_offsets.csv", "azure");
	assert_int_equal(t.len, 3);
	check_row(&t.rows[0], 0.0, 10, 1);
	check_row(&t.rows[1], 0.5, 20, 2);
	check_row(&t.rows[2], 1.0, 30, 3);
	trace_free(&t);
}

/* A blank line, a CRLF line, an unknown key, an empty hash_ids, ms → s. */
static void mooncake_fixture(void **state)
{
	(void)state;
	struct trace t;
	load_ok(&t, TRACES "mooncake_ok.jsonl", "auto");
	assert_string_equal(t.format, "mooncake");
	assert_int_equal(t.len, 3);
	check_row(&t.rows[0], 0.0, 1030, 6);
	assert_int_equal(t.rows[0].n_hash_ids, 3);
	assert_int_equal(t.rows[0].hash_ids[2], 2);
	check_row(&t.rows[1], 0.1005, 12, 1);
	assert_int_equal(t.rows[1].n_hash_ids, 0);
	assert_null(t.rows[1].hash_ids);
	check_row(&t.rows[2], 0.25, 600, 4);
	assert_int_equal(t.rows[2].n_hash_ids, 2);
	assert_int_equal(t.rows[2].hash_ids[0], 0);
	assert_int_equal(t.rows[2].hash_ids[1], 3);
	trace_free(&t);
}

/* Columns in another order with an extra one; times made relative to the
 * earliest (0.5 s) and sorted, the tie at 2.5 s kept in file order. */
static void csv_fixture(void **state)
{
	(void)state;
	struct trace t;
	load_ok(&t, TRACES "csv_ok.csv", "auto");
	assert_string_equal(t.format, "csv");
	assert_int_equal(t.len, 4);
	check_row(&t.rows[0], 0.0, 400, 11);
	check_row(&t.rows[1], 0.5, 200, 7);
	check_row(&t.rows[2], 2.0, 100, 5);
	check_row(&t.rows[3], 2.0, 300, 9);
	trace_free(&t);
}

/* The newest result layout, pretty-printed; start_times are perf_counter
 * readings, made relative to the earliest. */
static void vllm_with_times(void **state)
{
	(void)state;
	struct trace t;
	load_ok(&t, TRACES "vllm_ok.json", "auto");
	assert_string_equal(t.format, "vllm");
	assert_int_equal(t.len, 4);
	check_row(&t.rows[0], 0.0, 200, 20);
	check_row(&t.rows[1], 0.25, 100, 10);
	check_row(&t.rows[2], 0.25, 400, 5);
	check_row(&t.rows[3], 1.0, 300, 5);
	trace_free(&t);
}

/* The old benchmark_serving.py layout on one line ("request_goodput:"
 * typo, no start_times): rows in file order, times NaN. */
static void vllm_without_times(void **state)
{
	(void)state;
	struct trace t;
	load_ok(&t, TRACES "vllm_no_times.json", "auto");
	assert_string_equal(t.format, "vllm");
	assert_int_equal(t.len, 3);
	for (size_t i = 0; i < t.len; i++) {
		assert_true(isnan(t.rows[i].time_s));
		assert_int_equal(t.rows[i].input_len, 10 * (int32_t)(i + 1));
		assert_int_equal(t.rows[i].output_len, 3);
	}
	trace_free(&t);
}

/* A request that failed in the measured run (output 0, error set) is left
 * out of the replay and counted; the others keep their times. */
static void vllm_failed_rows_skipped(void **state)
{
	(void)state;
	struct trace t;
	load_ok(&t, TEST_DATA_DIR "/traces/vllm_failed.json", "auto");
	assert_int_equal(t.len, 3);
	assert_int_equal(t.skipped_failed, 1);
	assert_int_equal(t.rows[0].input_len, 100);   /* sent at 81234.75 - 81234.75 */
	assert_int_equal(t.rows[2].input_len, 300);   /* sent last */
	trace_free(&t);
}

/* A file of several results: vllm bench serve --append-result (a result a
 * line) and SGLang's bench_serving lines saved with --output-details
 * (tests/data/readers/sglang_bench_details.jsonl, README there; Python's
 * bare Infinity on its first line). trace_result picks one; its failed
 * request (output_lens 0, an error) is left out; past the last, an error. */
static void one_result_of_several(void **state)
{
	(void)state;
	struct trace t;
	struct err e = { { 0 } };
	assert_int_equal(trace_load_result(&t, TRACES "vllm_appended.json", "vllm", 1, &e), 0);
	assert_int_equal(t.len, 3);
	assert_int_equal(t.rows[2].input_len, 30);
	assert_int_equal(t.rows[2].output_len, 3);
	trace_free(&t);

	const char *sg = TEST_DATA_DIR "/readers/sglang_bench_details.jsonl";
	assert_int_equal(trace_load_result(&t, sg, "auto", 1, &e), 0);
	assert_string_equal(t.format, "vllm");
	assert_int_equal(t.len, 5);
	assert_int_equal(t.rows[0].input_len, 992);
	assert_int_equal(t.rows[0].output_len, 107);
	trace_free(&t);
	assert_int_equal(trace_load_result(&t, sg, "vllm", 2, &e), 0);
	assert_int_equal(t.len, 4);
	assert_int_equal(t.skipped_failed, 1);
	trace_free(&t);
	assert_int_equal(trace_load_result(&t, sg, "vllm", 3, &e), -1);
	assert_contains(e.msg, "trace_result = 3, but the file holds 2 results");
	assert_int_equal(trace_load_result(&t, TRACES "csv_ok.csv", "auto", 1, &e), -1);
	assert_contains(e.msg, "expected 0 for a csv trace");
}

static void free_zeroed_is_safe(void **state)
{
	(void)state;
	struct trace t = { 0 };
	trace_free(&t);
	trace_free(&t);
	assert_null(t.rows);
}

struct bad_case {
	const char *file;       /* under tests/data/traces/ */
	const char *format;
	const char *where;      /* "file:line" or "file" */
	const char *what;       /* the field, or the gist */
};

static const struct bad_case bad_cases[] = {
	{ "azure_bad_count.csv", "auto", "azure_bad_count.csv:3: ", "ContextTokens: expected a positive integer, got 'x'" },
	{ "azure_negative.csv", "azure", "azure_negative.csv:4: ", "GeneratedTokens: expected a positive integer, got '-5'" },
	{ "azure_missing_field.csv", "auto", "azure_missing_field.csv:2: ", "GeneratedTokens: expected a positive integer, got ''" },
	{ "azure_bad_time.csv", "auto", "azure_bad_time.csv:3: ", "TIMESTAMP: expected" },
	{ "azure_zero_output.csv", "auto", "azure_zero_output.csv:2: ", "GeneratedTokens: expected a positive integer, got '0'" },
	{ "azure_missing_column.csv", "azure", "azure_missing_column.csv:1: ", "GeneratedTokens: missing column" },
	{ "azure_ok.csv", "csv", "azure_ok.csv:1: ", "timestamp_s: missing column" },
	{ "mooncake_bad_json.jsonl", "auto", "mooncake_bad_json.jsonl:3:", "invalid JSON" },
	{ "mooncake_missing.jsonl", "mooncake", "mooncake_missing.jsonl:2: ", "input_length: missing; expected" },
	{ "mooncake_bad_hash.jsonl", "auto", "mooncake_bad_hash.jsonl:1: ", "hash_ids[1]: expected a non-negative integer, got -1" },
	{ "mooncake_zero_input.jsonl", "auto", "mooncake_zero_input.jsonl:1: ", "input_length: expected a positive integer, got 0" },
	{ "csv_missing_column.csv", "auto", "csv_missing_column.csv:1: ", "output_tokens: missing column" },
	{ "csv_bad_time.csv", "csv", "csv_bad_time.csv:4: ", "timestamp_s: expected seconds >= 0, got '-1'" },
	{ "csv_header_only.csv", "auto", "csv_header_only.csv: ", "no requests" },
	{ "vllm_no_output_lens.json", "auto", "vllm_no_output_lens.json: ", ": output_lens: missing; expected the per-request arrays that results saved with --save-detailed carry" },
	{ "vllm_summary_only.json", "vllm", "vllm_summary_only.json: ", "input_lens, output_lens: missing" },
	{ "vllm_mismatch.json", "auto", "vllm_mismatch.json: ", "output_lens: 3 entries, but input_lens has 4" },
	{ "vllm_bad_syntax.json", "auto", "vllm_bad_syntax.json:3:", "invalid JSON" },
	{ "vllm_appended.json", "vllm", "vllm_appended.json: 2 results", "trace_result" },
	{ "no_such_file.csv", "auto", "no_such_file.csv: ", "cannot open" },
	{ "csv_ok.csv", "parquet", "csv_ok.csv: ", "format: expected one of auto, vllm, azure, mooncake, csv, burstgpt, got 'parquet'" },
};

/* Each bad file fails with its place and field named, and leaves the
 * trace empty (nothing to free). */
static void bad_inputs(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof bad_cases / sizeof bad_cases[0]; i++) {
		const struct bad_case *c = &bad_cases[i];
		struct trace t;
		struct err e = { { 0 } };
		char path[512];
		snprintf(path, sizeof path, "%s%s", TRACES, c->file);
		/* Garbage in *t: the load must not read or free it. */
		memset(&t, 0xa5, sizeof t);
		assert_int_equal(trace_load(&t, path, c->format, &e), -1);
		assert_null(t.rows);
		assert_int_equal(t.len, 0);
		assert_contains(e.msg, c->where);
		assert_contains(e.msg, c->what);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(azure_real),
		cmocka_unit_test(one_result_of_several),
		cmocka_unit_test(mooncake_real),
		cmocka_unit_test(azure_fixture),
		cmocka_unit_test(azure_offsets),
		cmocka_unit_test(mooncake_fixture),
		cmocka_unit_test(csv_fixture),
		cmocka_unit_test(vllm_with_times),
		cmocka_unit_test(vllm_without_times),
		cmocka_unit_test(vllm_failed_rows_skipped),
		cmocka_unit_test(free_zeroed_is_safe),
		cmocka_unit_test(bad_inputs),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
