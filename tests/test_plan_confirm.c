/*
 * Tuning's winner's curse (tune.h, step 3): the rate plan and compare
 * report for a tuned candidate is its chosen setting searched again on
 * fresh seeds, not the best of the noisy rates that chose it.
 *
 *   - the confirmation blocks are plan searches of the winner on the seed
 *     blocks tune.h names (seed + R(b+1) + r), and the answer is the
 *     median block's, exactly;
 *   - the reported rate, re-simulated with `--fixed` and the printed --set
 *     line on independent seeds (1000 and more away), is not above the
 *     re-simulations beyond the search's tolerance;
 *   - two GPUs whose true gap exceeds the noise rank the same on two
 *     seed sets.
 * Runs are short (one replication, 8 s of arrivals) so the group takes
 * seconds; each tolerance says where it comes from.
 */
#include "testutil.h"

#include <jansson.h>
#include <math.h>

#include "catalog.h"
#include "plan.h"
#include "testjson.h"
#include "tune.h"

#define SLO_SPEC "ttft_p99_ms=2000,itl_p99_ms=50"

/* The blocks are what tune.h says: plan_search of the winning setting
 * with seed_offset R(b+1), from the selection rate, stepping by
 * 1 + 4 × tolerance; the candidate's answer is the median block. */
static void confirmation_blocks_are_fresh_seed_searches(void **state)
{
	(void)state;
	char path[4096];
	struct err e;
	if (catalog_resolve(CATALOG_SCENARIOS, "c13-bench-serve", path, sizeof path, &e))
		fail_msg("%s", e.msg);
	struct tune_cand t = { .path = path };
	struct scenario sc;
	struct plan_cand c;
	struct plan_slo slo;
	struct plan_opts o;
	if (inidoc_add_override(&t.ov, "run.hardware=a100-80gb-sxm", &e) ||
	    scenario_load(&sc, path, &t.ov, &e) || plan_cand_init(&c, 0, &sc, false, "test", &e) ||
	    plan_slo_parse(&slo, SLO_SPEC, &e))
		fail_msg("%s", e.msg);
	struct tune_space s;
	memset(&s, 0, sizeof s);
	if (tune_space_add(&s, "max_num_batched_tokens=512,1024", &e))
		fail_msg("%s", e.msg);
	plan_opts_default(&o);
	o.replications = 2;
	o.duration_s = 8;
	o.jobs = 2;
	assert_int_equal(o.confirm_blocks, 3);   /* the default */
	t.cand = &c;
	tune_run(&t, 1, &s, &slo, &o);
	assert_int_equal(t.n_confirmed, 3);
	assert_int_equal(t.confirm_seed_offset, 2);
	double sorted[3];
	for (int b = 0; b < 3; b++) {
		struct plan_cand again = c;
		again.evals = NULL;
		again.n_evals = again.cap_evals = 0;
		again.error = NULL;
		again.sc.request_rate = t.selection_rate;
		again.seed_offset = 2 * (b + 1);
		struct plan_opts co = o;
		co.step = 1 + 4 * o.tolerance;
		plan_search(&again, 1, &slo, &co);
		/* Deterministic: the same searches give the same bytes. */
		assert_true(plan_sustained_rate(&again, &o) == t.confirmed[b]);
		plan_cand_free(&again);
		sorted[b] = t.confirmed[b];
	}
	for (int i = 1; i < 3; i++)
		for (int j = i; j > 0 && sorted[j] < sorted[j - 1]; j--) {
			double x = sorted[j];
			sorted[j] = sorted[j - 1];
			sorted[j - 1] = x;
		}
	assert_true(plan_sustained_rate(&c, &o) == sorted[1]);
	/* Fresh seeds see other arrivals: the three blocks do not all land
	 * on one rate (on seeds 2..7 of c13 they differ by 1-4%). */
	assert_true(sorted[0] != sorted[2]);
	assert_true(t.selection_rate > 0);
	plan_cand_free(&c);
	tune_cand_free(&t);
	inidoc_free(&t.ov);
}

#define NOISY " --replications 1 --duration 8 --no-cost --format json --jobs 2 --slo " SLO_SPEC

/* Per GPU and base seed: the reported rate against the mean of two
 * --fixed re-simulations of its printed setting on seeds 1000 and 2000
 * away. Then the ranking on both seed sets. */
static void reported_rate_holds_on_independent_seeds(void **state)
{
	(void)state;
	static const char *const gpus[2] = { "h100-sxm", "l40s" };
	static const int seeds[2] = { 0, 100 };
	double reported[2][2], resim[2][2], half[2][2];
	double ratio_sum = 0;
	for (int k = 0; k < 2; k++) {
		char args[4096];
		snprintf(args, sizeof args,
			 "compare c13-bench-serve --hardware %s,%s" NOISY " --set run.seed=%d", gpus[0], gpus[1],
			 seeds[k]);
		json_t *doc = servesim_json(args);
		for (int g = 0; g < 2; g++) {
			json_t *it = json_array_get(json_object_get(doc, "rows"), (size_t)g);
			json_t *cf = json_object_get(json_object_get(it, "tuning"), "confirmation");
			assert_non_null(cf);
			reported[k][g] = num(it, "max_rate");
			half[k][g] = num(cf, "ci95");
			assert_true(reported[k][g] > 0);
			assert_int_equal(json_array_size(json_object_get(cf, "rates")), 3);
			double sum = 0;
			for (int j = 1; j <= 2; j++) {
				snprintf(args, sizeof args,
					 "compare c13-bench-serve --hardware %s" NOISY
					 " --fixed --set run.seed=%d --set workload.request_rate=%g %s",
					 gpus[g], 1000 * j + seeds[k], reported[k][g],
					 json_string_value(json_object_get(it, "set")));
				json_t *again = servesim_json(args);
				sum += num(json_array_get(json_object_get(again, "rows"), 0), "max_rate");
				json_decref(again);
			}
			resim[k][g] = sum / 2;
			/* One pair: each search lands up to its 2% bisection
			 * tolerance below the crossing, and one 8 s run's
			 * p99 moves the crossing by about ±2% (the blocks'
			 * spread on these settings): 5% either way. */
			assert_true(reported[k][g] <= 1.05 * resim[k][g]);
			assert_true(reported[k][g] >= 0.95 * resim[k][g]);
			ratio_sum += reported[k][g] / resim[k][g];
			print_message("%s seed %d: reported %.4g, re-simulated %.4g, half-width %.3g\n", gpus[g], seeds[k],
				      reported[k][g], resim[k][g], half[k][g]);
		}
		json_decref(doc);
	}
	/* No upward bias beyond the tolerance: over the four pairs the mean
	 * ratio is at most 1.025 (the 2% bisection grid plus a little seed
	 * noise; a best-of-three on the seeds that chose the setting, with
	 * no confirmation, is what this guards against). Downward, 5%: the
	 * pairs share seeds across GPUs (common random numbers), so they are
	 * two independent draws, not four (measured here: 0.985 with the H100 SXM and L40S). */
	assert_true(ratio_sum / 4 <= 1.025);
	assert_true(ratio_sum / 4 >= 0.95);
	/* The H100 SXM (3350 GB/s, 989 TFLOP/s bf16) is ahead of the L40S
	 * (864 GB/s, 362 TFLOP/s) on this load by more than the noise, on
	 * both seed sets: the gap exceeds the two blocks' half-widths. */
	for (int k = 0; k < 2; k++) {
		assert_true(reported[k][0] > reported[k][1]);
		assert_true(reported[k][0] - reported[k][1] > half[k][0] + half[k][1]);
	}
}

/* --confirm 0 reports the selection's rate (the fine search's); --confirm
 * with --fixed, or out of range, is an error naming the flag. */
static void confirm_flag(void **state)
{
	(void)state;
	json_t *doc = servesim_json("plan c13-bench-serve --hardware a100-80gb-sxm --search max_num_batched_tokens=512"
				    " --confirm 0" NOISY);
	json_t *it = json_array_get(json_object_get(doc, "candidates"), 0);
	json_t *t = json_object_get(it, "tuning");
	assert_null(json_object_get(t, "confirmation"));
	assert_double_rel(num(it, "max_rate"), num(t, "selection_rate"), 1e-9);
	assert_int_equal(json_integer_value(json_object_get(json_object_get(doc, "search"), "confirm_blocks")), 0);
	json_decref(doc);
	/* --by concurrency: the blocks search concurrency (one request at
	 * least a step) and report the throughput there, as max_rate is; the
	 * row's rate is the middle of the three. The SLO sits where the
	 * tuned setting reaches it below --max-load (at 50 ms, since the
	 * small per-layer kernels, perf/elementwise.c, the tuner meets it
	 * at 64 and nothing is confirmed). */
	doc = servesim_json("plan c19-batching --by concurrency --slo itl_p99_ms=13 --hardware h100-sxm --max-load 64"
			    " --replications 2 --duration 10 --no-cost --format json --jobs 2");
	it = json_array_get(json_object_get(doc, "candidates"), 0);
	json_t *cf = json_object_get(json_object_get(it, "tuning"), "confirmation");
	assert_non_null(cf);
	json_t *rates = json_object_get(cf, "rates");
	assert_int_equal(json_array_size(rates), 3);
	double lo = INFINITY, hi = -INFINITY, sum = 0;
	for (size_t b = 0; b < 3; b++) {
		double v = json_number_value(json_array_get(rates, b));
		lo = fmin(lo, v);
		hi = fmax(hi, v);
		sum += v;
	}
	assert_double_rel(num(it, "max_rate"), sum - lo - hi, 1e-3);   /* rates are rounded to 4 decimals */
	json_decref(doc);
	/* A target the spread could miss gets a note: 36 req/s on an A100
	 * whose rate is 12.02 ± 2.0 over the blocks (2 replications, 10 s)
	 * takes 3 replicas at 12.02 and 4 at 10.02. */
	struct cmd_result r;
	run_cmd(&r, "'%s' plan c13-bench-serve --slo " SLO_SPEC " --target-rate 36 --hardware a100-80gb-sxm"
		" --replications 2 --duration 10 --jobs 2", SERVESIM_BIN);
	assert_int_equal(r.status, 0);
	assert_contains(r.out, "3 replicas = 3 GPUs for 36 req/s");
	assert_contains(r.out, "at its low end 36 req/s takes 4 replicas, not 3");
	cmd_result_free(&r);
	run_cmd(&r, "'%s' plan c13-bench-serve --slo " SLO_SPEC " --fixed --confirm 2", SERVESIM_BIN);
	assert_int_equal(r.status, 2);
	assert_contains(r.err, "--confirm: expected no --confirm with --fixed");
	cmd_result_free(&r);
	run_cmd(&r, "'%s' compare --hardware h100-sxm --slo " SLO_SPEC " --confirm 17", SERVESIM_BIN);
	assert_int_equal(r.status, 2);
	assert_contains(r.err, "--confirm");
	cmd_result_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(confirmation_blocks_are_fresh_seed_searches),
		cmocka_unit_test(reported_rate_holds_on_independent_seeds),
		cmocka_unit_test(confirm_flag),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
