/*
 * The sweep's grid (--vary parsing, point order, shards), the measures it
 * takes and their confidence intervals: Student-t half-widths checked
 * against textbook values, and intervals that shrink as replications grow.
 */
#include "testutil.h"

#include "measure.h"
#include "resultdoc.h"
#include "sweep.h"

static void parse_ok(struct sweep_axis *ax, const char *spec)
{
	struct err e;
	if (sweep_axis_parse(ax, spec, &e))
		fail_msg("%s: %s", spec, e.msg);
}

static void parse_bad(const char *spec, const char *want)
{
	struct sweep_axis ax;
	struct err e;
	assert_int_equal(sweep_axis_parse(&ax, spec, &e), -1);
	assert_contains(e.msg, "--vary");
	assert_contains(e.msg, want);
	sweep_axis_free(&ax);
}

static void lists_ranges_and_short_names(void **state)
{
	(void)state;
	struct sweep_axis ax;
	parse_ok(&ax, "request_rate=1,2.5, inf");
	assert_string_equal(ax.key, "workload.request_rate");
	assert_int_equal(ax.n, 3);
	assert_string_equal(ax.values[2], "inf");
	assert_false(ax.numeric);   /* inf is not a finite number to plot */
	sweep_axis_free(&ax);

	/* 0.1 steps print as 0.3, not 0.30000000000000004; STOP included. */
	parse_ok(&ax, "tp=0.1:0.5:0.1");
	assert_string_equal(ax.key, "engine.tensor_parallel_size");
	assert_int_equal(ax.n, 5);
	assert_string_equal(ax.values[2], "0.3");
	assert_string_equal(ax.values[4], "0.5");
	assert_true(ax.numeric);
	sweep_axis_free(&ax);

	/* Lists and ranges mix; a range whose steps miss STOP stops before. */
	parse_ok(&ax, "engine.max_num_seqs=1,4:10:4");
	assert_int_equal(ax.n, 3);
	assert_string_equal(ax.values[1], "4");
	assert_string_equal(ax.values[2], "8");
	sweep_axis_free(&ax);

	parse_ok(&ax, "hardware=h100-sxm,l40s");
	assert_string_equal(ax.key, "run.hardware");
	assert_false(ax.numeric);
	sweep_axis_free(&ax);
}

static void bad_axes(void **state)
{
	(void)state;
	parse_bad("bogus=1,2", "unknown key 'bogus'");
	parse_bad("request_rate", "expected KEY=");
	parse_bad("request_rate=", "got nothing");
	parse_bad("request_rate=1,,2", "between commas");
	parse_bad("request_rate=10:1:1", "reversed range");
	parse_bad("request_rate=1:10:0", "STEP > 0");
	parse_bad("request_rate=1:10:-1", "STEP > 0");
	parse_bad("request_rate=1:10", "START:STOP:STEP");
	parse_bad("request_rate=a:10:1", "finite numbers");
	parse_bad("request_rate=1:1e9:1", "at most");
}

/* Point i: the first axis varies slowest; unknown section.keys and bad
 * values are caught when a point's scenario loads, naming --vary. */
static void points_and_scenarios(void **state)
{
	(void)state;
	struct sweep_axis ax[2];
	struct sweep sw;
	struct err e;
	parse_ok(&ax[0], "request_rate=1,2,3");
	parse_ok(&ax[1], "max_num_seqs=8,16");
	assert_int_equal(sweep_init(&sw, NULL, NULL, ax, 2, &e), 0);
	assert_int_equal(sw.n_points, 6);
	assert_int_equal(sweep_coord(&sw, 3, 0), 1);
	assert_int_equal(sweep_coord(&sw, 3, 1), 1);
	assert_int_equal(sweep_coord(&sw, 4, 0), 2);
	assert_int_equal(sweep_coord(&sw, 4, 1), 0);
	struct scenario sc;
	assert_int_equal(sweep_point_scenario(&sw, 5, &sc, &e), 0);
	assert_double_near(sc.request_rate, 3, 0);
	assert_int_equal(sc.engine.max_num_seqs, 16);
	sweep_axis_free(&ax[0]);
	sweep_axis_free(&ax[1]);

	parse_ok(&ax[0], "workload.bogus=1");
	assert_int_equal(sweep_init(&sw, NULL, NULL, ax, 1, &e), 0);
	assert_int_equal(sweep_point_scenario(&sw, 0, &sc, &e), -1);
	assert_contains(e.msg, "--vary workload.bogus=1: [workload] bogus: unknown key");
	sweep_axis_free(&ax[0]);

	parse_ok(&ax[0], "request_rate=-1");
	assert_int_equal(sweep_init(&sw, NULL, NULL, ax, 1, &e), 0);
	assert_int_equal(sweep_point_scenario(&sw, 0, &sc, &e), -1);
	assert_contains(e.msg, "--vary request_rate=-1:");
	assert_contains(e.msg, "expected requests per second > 0");
	sweep_axis_free(&ax[0]);

	parse_ok(&ax[0], "hardware=h100-sxm,no-such-gpu");
	assert_int_equal(sweep_init(&sw, NULL, NULL, ax, 1, &e), -1);
	assert_contains(e.msg, "--vary hardware=h100-sxm,no-such-gpu: unknown hardware 'no-such-gpu'");
	sweep_axis_free(&ax[0]);
}

static void shards(void **state)
{
	(void)state;
	struct shard sh;
	struct err e;
	assert_int_equal(resultdoc_shard_parse(&sh, "2/3", &e), 0);
	/* Round robin: 1, 4, 7 … */
	assert_false(resultdoc_in_shard(&sh, 0));
	assert_true(resultdoc_in_shard(&sh, 1));
	assert_true(resultdoc_in_shard(&sh, 4));
	assert_false(resultdoc_in_shard(&sh, 5));
	const char *bad[] = { "0/3", "4/3", "3", "a/b", "1/0", "-1/2", "1/2x" };
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		assert_int_equal(resultdoc_shard_parse(&sh, bad[i], &e), -1);
		assert_contains(e.msg, "--shard: expected K/N");
	}
}

/* x = {1, 2, 3}: mean 2, sd 1; t_{0.975, 2} = 4.302652729749464 and
 * t_{0.95, 2} = 2.919985580355516 (tables; GSL to 1e-12). */
static void student_t_intervals(void **state)
{
	(void)state;
	struct measure reps[3] = { 0 };
	for (int r = 0; r < 3; r++)
		reps[r].v[MEAS_TTFT_P99] = r + 1;
	reps[0].v[MEAS_GOODPUT] = NAN;
	struct measure_summary s;
	measure_summarize(&s, reps, 3);
	assert_double_near(s.mean[MEAS_TTFT_P99], 2, 1e-15);
	assert_double_near(s.sd[MEAS_TTFT_P99], 1, 1e-15);
	assert_double_near(measure_half_width(&s, MEAS_TTFT_P99, 0.95), 4.302652729749464 / sqrt(3), 1e-9);
	assert_double_near(measure_upper_bound(&s, MEAS_TTFT_P99, 0.95), 2 + 2.919985580355516 / sqrt(3),
			   1e-9);
	assert_true(isnan(s.mean[MEAS_GOODPUT]));
	/* One replication: no interval; the bound is the value. */
	measure_summarize(&s, reps, 1);
	assert_true(isnan(measure_half_width(&s, MEAS_TTFT_P99, 0.95)));
	assert_double_near(measure_upper_bound(&s, MEAS_TTFT_P99, 0.95), 1, 0);
}

static void run_point(struct sweep_point *p, int reps)
{
	struct sweep_axis ax;
	struct inidoc ov = { 0 };
	struct err e;
	struct sweep sw;
	struct shard whole = { 1, 1 };
	struct sweep_point *pts;
	size_t n;
	parse_ok(&ax, "request_rate=12");
	assert_int_equal(inidoc_add_override(&ov, "workload.num_prompts=60", &e), 0);
	assert_int_equal(sweep_init(&sw, NULL, &ov, &ax, 1, &e), 0);
	if (sweep_run(&sw, &whole, reps, 2, NULL, &pts, &n, &e))
		fail_msg("%s", e.msg);
	assert_int_equal(n, 1);
	assert_null(pts[0].error);
	*p = pts[0];
	free(pts);
	sweep_axis_free(&ax);
	inidoc_free(&ov);
}

/* The 95% half-width is t_{0.975, R-1} · sd / sqrt(R): from R = 3 to
 * R = 20 the factor t/sqrt(R) falls from 2.48 to 0.47, so unless the
 * sample sd grows fivefold the interval shrinks. Seeds are fixed, so this
 * is deterministic. Not ITL p99: near the prefill-stall cliff it is
 * bimodal across seeds (about 20 ms, or the length of a prefill step),
 * and three seeds can all land on one side. */
static void intervals_shrink_with_replications(void **state)
{
	(void)state;
	struct sweep_point few, many;
	run_point(&few, 3);
	run_point(&many, 20);
	const int ids[] = { MEAS_OUTPUT_THROUGHPUT, MEAS_TTFT_MEAN, MEAS_TTFT_P99, MEAS_TPOT_MEAN,
			    MEAS_E2EL_P99, MEAS_PEAK_KV_USAGE };
	for (size_t i = 0; i < sizeof ids / sizeof *ids; i++) {
		double a = measure_half_width(&few.s, ids[i], 0.95);
		double b = measure_half_width(&many.s, ids[i], 0.95);
		if (!(b < a && a > 0))
			fail_msg("%s: half-width %g with 3 replications, %g with 20", measure_descs[ids[i]].name, a,
				 b);
	}
}

/* Replication 0 is the scenario as `servesim run` runs it: one
 * replication gives that run's numbers exactly. */
static void one_replication_is_the_run(void **state)
{
	(void)state;
	struct sweep_point one;
	run_point(&one, 1);
	struct inidoc ov = { 0 };
	struct err e;
	struct scenario sc;
	struct measure m;
	assert_int_equal(inidoc_add_override(&ov, "workload.num_prompts=60", &e), 0);
	assert_int_equal(inidoc_add_override(&ov, "workload.request_rate=12", &e), 0);
	assert_int_equal(scenario_load(&sc, NULL, &ov, &e), 0);
	assert_int_equal(measure_run(&m, &sc, &e), 0);
	for (int k = 0; k < MEAS_N; k++)
		if (!isnan(m.v[k]))
			assert_double_near(one.s.mean[k], m.v[k], 0);
	inidoc_free(&ov);
}

/* --duration: each point sends rate × S requests (the scenario's 200 are a
 * floor), and a point the engine cannot keep up with is warned about. */
static void duration_scales_the_requests(void **state)
{
	(void)state;
	struct cmd_result r;
	run_cmd(&r, "'%s' sweep c13-bench-serve --vary request_rate=2,20,200 --duration 15 --format csv",
		SERVESIM_BIN);
	assert_int_equal(r.status, 0);
	/* 2 req/s × 15 s = 30 < 200: the floor; 20 × 15 = 300; 200 × 15 = 3000. */
	assert_contains(r.out, ",200.00,");   /* completed */
	assert_contains(r.out, ",300.00,");
	assert_contains(r.out, ",3000.00,");
	/* One H100 serves tens of req/s of this load (README plan example),
	 * not 200: that point, and only that one, falls short. */
	assert_contains(r.err, "warning: point 2 achieved");
	assert_null(strstr(r.err, "warning: point 1"));
	assert_null(strstr(r.err, "warning: point 0"));
	cmd_result_free(&r);
}

/* Past saturation every point falls short: the first three are named and
 * one line counts them all, not a line a point (a 1000-point sweep printed
 * 1000). 200 requests at 300-1000 req/s on one H100 each achieve a
 * fraction of the rate (README plan example: tens of req/s). */
static void short_points_are_counted_not_listed(void **state)
{
	(void)state;
	struct cmd_result r;
	run_cmd(&r, "'%s' sweep c13-bench-serve --vary request_rate=300:1000:100 --format csv", SERVESIM_BIN);
	assert_int_equal(r.status, 0);
	assert_contains(r.err, "warning: point 2 achieved");
	assert_null(strstr(r.err, "warning: point 3 achieved"));
	assert_contains(r.err, "warning: 8 of 8 points achieved under 90% of their offered rate (the first 3 named above)");
	size_t lines = 0;
	for (const char *c = r.err; *c; c++)
		lines += *c == '\n';
	assert_int_equal(lines, 4);
	cmd_result_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(lists_ranges_and_short_names),
		cmocka_unit_test(bad_axes),
		cmocka_unit_test(points_and_scenarios),
		cmocka_unit_test(shards),
		cmocka_unit_test(student_t_intervals),
		cmocka_unit_test(intervals_shrink_with_replications),
		cmocka_unit_test(one_replication_is_the_run),
		cmocka_unit_test(duration_scales_the_requests),
		cmocka_unit_test(short_points_are_counted_not_listed),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
