/*
 * Rankings the noise may not decide (ranknoise.h) and the cost compare
 * ranks by:
 *   - the paired rule on constructed block rates: a gap under the
 *     search's tolerance, or one whose sign the blocks do not agree on, is
 *     not resolved; a clear one is, by rate and by rate per dollar;
 *   - compare of the A100 80GB, a copy of its profile at a spot price and
 *     the L40S on two seed sets: the A100 and its copy (as fast by
 *     construction) are flagged within noise on both in JSON, text
 *     (compare and plan) and HTML, the cheaper named; the A100 80GB and
 *     the L40S (14-24% apart: a modest gap) rank the same on both seed
 *     sets and are not flagged;
 *   - compare's cost ranking: $ per 1M output tokens and per 1k requests
 *     at the SLO come from the tuned, confirmed rate (the median block)
 *     and the profile's cited [price], and the ranking orders by them.
 * Runs are short (one replication, 8 s of arrivals).
 */
#include "testutil.h"

#include <jansson.h>
#include <math.h>

#include "hwprofile.h"
#include "ranknoise.h"
#include "testjson.h"

static void paired_rule(void **state)
{
	(void)state;
	double diff, half;
	const double a[3] = { 13.0, 13.4, 12.7 };
	double same[3], near[3], far[3], swing[3] = { 12.1, 13.9, 12.0 };
	for (int b = 0; b < 3; b++) {
		same[b] = a[b];
		near[b] = a[b] * 0.99;   /* 1% slower in every block: under the 2% bracket */
		far[b] = a[b] * 0.85;    /* 15% slower in every block */
	}
	assert_false(ranknoise_resolved(a, same, 3, 1, 1, 0.02, &diff, &half));
	assert_false(ranknoise_resolved(a, near, 3, 1, 1, 0.02, &diff, &half));
	assert_double_rel(half, -log(0.98), 1e-9);   /* no spread: the bracket alone */
	assert_true(ranknoise_resolved(a, far, 3, 1, 1, 0.02, &diff, &half));
	assert_double_rel(diff, -log(0.85), 1e-9);
	/* The blocks disagree on the sign (+7%, -4%, +6%): not resolved. */
	assert_false(ranknoise_resolved(a, swing, 3, 1, 1, 0.02, &diff, &half));
	/* The same rates at half the price per replica: resolved by cost,
	 * the cheaper one ahead (negative: A has less per dollar). */
	assert_true(ranknoise_resolved(a, same, 3, 2, 1, 0.02, &diff, &half));
	assert_double_rel(diff, -log(2), 1e-9);
	/* One block: no claim. */
	assert_false(ranknoise_resolved(a, far, 1, 1, 1, 0.02, &diff, &half));
	/* An infinite cost or rate (read back from a document: a huge GPU
	 * count times a huge price) has no ratio: no claim, and no difference
	 * of -1 with a NaN margin. */
	assert_false(ranknoise_resolved(a, far, 3, INFINITY, 1, 0.02, &diff, &half));
	assert_true(isnan(diff));
	const double inf_rate[3] = { INFINITY, 13.4, 12.7 };
	assert_false(ranknoise_resolved(inf_rate, far, 3, 1, 1, 0.02, &diff, &half));
	assert_true(isnan(diff));
}

#define SLO_SPEC "ttft_p99_ms=2000,itl_p99_ms=50"
#define NOISY " --replications 1 --duration 8 --jobs 2 --slo " SLO_SPEC

/* The row of doc with hardware hw. */
static json_t *row_of(json_t *doc, const char *hw)
{
	return item_with(json_object_get(doc, "rows"), "hardware", hw);
}

/* The within_noise pair of hardware x and y (either order), or NULL. */
static json_t *pair_of(json_t *doc, const char *x, const char *y)
{
	size_t i;
	json_t *p;
	json_array_foreach(json_object_get(doc, "within_noise"), i, p) {
		const char *a = json_string_value(json_array_get(json_object_get(p, "hardware"), 0));
		const char *b = json_string_value(json_array_get(json_object_get(p, "hardware"), 1));
		if ((!strcmp(a, x) && !strcmp(b, y)) || (!strcmp(a, y) && !strcmp(b, x)))
			return p;
	}
	return NULL;
}

/* Where hw ranks in doc (0 first). */
static int rank_of(json_t *doc, const char *hw)
{
	json_int_t want = (json_int_t)num(row_of(doc, hw), "row");
	json_t *ranking = json_object_get(doc, "ranking");
	for (size_t i = 0; i < json_array_size(ranking); i++)
		if (json_integer_value(json_array_get(ranking, i)) == want)
			return (int)i;
	fail_msg("%s not ranked", hw);
	return -1;
}

static void a100s_within_noise_l40s_apart(void **state)
{
	(void)state;
	/* The pair: the A100 80GB's own profile under another name at a
	 * spot price (1.49 against 1.79 $/hour), so the two are as fast in
	 * every block by construction, whatever the step model says. */
	char dir[64], spot[256];
	test_tmpdir(dir, sizeof dir, "noise");
	snprintf(spot, sizeof spot, "%s/a100-spot.ini", dir);
	struct cmd_result r;
	const char *data = getenv("SERVESIM_DATA_DIR");
	run_cmd(&r, "sed 's/^price_per_hour_usd = 1.79$/price_per_hour_usd = 1.49/' '%s/hardware_profiles/a100-80gb-sxm.ini' > '%s'"
		" && grep -q '^price_per_hour_usd = 1.49$' '%s'", data ? data : ".", spot, spot);
	assert_int_equal(r.status, 0);
	cmd_result_free(&r);
	static const int seeds[2] = { 0, 100 };
	for (int k = 0; k < 2; k++) {
		char args[1024];
		snprintf(args, sizeof args,
			 "compare c13-bench-serve --hardware a100-80gb-sxm,%s,l40s" NOISY " --no-cost --format json --set run.seed=%d",
			 spot, seeds[k]);
		json_t *doc = servesim_json(args);
		double ra = num(row_of(doc, "a100-80gb-sxm"), "max_rate"), rs = num(row_of(doc, spot), "max_rate");
		double rl = num(row_of(doc, "l40s"), "max_rate");
		print_message("seed %d: A100 80GB %.4g (and %.4g as the copy), L40S %.4g req/s\n", seeds[k], ra, rs, rl);
		/* Within noise: the same GPU under two names. */
		json_t *p = pair_of(doc, "a100-80gb-sxm", spot);
		assert_non_null(p);
		assert_string_equal(json_string_value(json_object_get(p, "basis")), "rate per GPU");
		assert_true(num(p, "difference") == 0);
		assert_true(num(p, "margin") >= 0.02);   /* at least the 2% bracket */
		assert_int_equal((int)num(p, "blocks"), 3);
		/* A modest gap (measured 14-24% on earlier step models; 6% since
		 * the L40S profile carries its measured GEMMs, 2026-12-02):
		 * resolved, the same order on both seed sets. */
		assert_true(ra > 1.03 * rl);
		assert_null(pair_of(doc, "a100-80gb-sxm", "l40s"));
		assert_null(pair_of(doc, spot, "l40s"));
		assert_true(rank_of(doc, "a100-80gb-sxm") < rank_of(doc, "l40s"));
		json_decref(doc);
	}
	/* Priced, the text (also of a merged document) and the HTML say so
	 * and name the cheaper. */
	run_cmd(&r, "'%s' compare c13-bench-serve --hardware a100-80gb-sxm,'%s'" NOISY
		" --format json > '%s/cmp.json' && '%s' report '%s/cmp.json' --out '%s/cmp.html' && "
		"'%s' merge '%s/cmp.json' --format text && cat '%s/cmp.html'",
		SERVESIM_BIN, spot, dir, SERVESIM_BIN, dir, dir, SERVESIM_BIN, dir, dir);
	assert_int_equal(r.status, 0);
	char want[1024];
	snprintf(want, sizeof want, "within noise: %s and a100-80gb-sxm (ranks 1 and 2) are within noise at this SLO", spot);
	assert_contains(r.out, want);
	snprintf(want, sizeof want, "they are as fast, and the cheaper one is %s (1.49 against 1.79 $/hour)", spot);
	assert_contains(r.out, want);
	snprintf(want, sizeof want, "<p>Within noise: %s and a100-80gb-sxm (ranks 1 and 2)", spot);
	assert_contains(r.out, want);
	snprintf(want, sizeof want, "ranking (the lowest $ per 1M output tokens at the SLO first): 1 %s, 2 a100-80gb-sxm (within noise of 1)",
		 spot);
	assert_contains(r.out, want);
	cmd_result_free(&r);
	/* plan says the same after its winner, with the $/hour for the
	 * target (the same replicas of either). */
	run_cmd(&r, "'%s' plan c13-bench-serve --hardware a100-80gb-sxm,'%s'" NOISY " --target-rate 30", SERVESIM_BIN, spot);
	assert_int_equal(r.status, 0);
	snprintf(want, sizeof want, "within noise: %s and a100-80gb-sxm (ranks 1 and 2)", spot);
	assert_contains(r.out, want);
	snprintf(want, sizeof want, "the cheaper one is %s (", spot);
	assert_contains(r.out, want);
	assert_contains(r.out, "\n 2~1 a100-80gb-sxm ");   /* the table's rank: within noise of rank 1 */
	assert_contains(r.out, "(rank N~M: within noise of rank M");
	cmd_result_free(&r);
	/* --fixed (nothing confirmed): no within_noise. */
	char args[1024];
	snprintf(args, sizeof args, "compare c13-bench-serve --hardware a100-80gb-sxm,%s" NOISY " --fixed --format json", spot);
	json_t *doc = servesim_json(args);
	assert_null(json_object_get(doc, "within_noise"));
	json_decref(doc);
	test_rmdir(dir);
}

/* compare's cost ranking reads the tuned, confirmed rate and the
 * profile's cited price. */
static void cost_at_the_slo_is_the_confirmed_rate_at_the_cited_price(void **state)
{
	(void)state;
	json_t *doc = servesim_json("compare c13-bench-serve --hardware l40s,a100-80gb-sxm" NOISY " --format json");
	json_t *rows = json_object_get(doc, "rows"), *it;
	size_t i;
	double prev = -INFINITY;
	json_array_foreach(rows, i, it) {
		const char *id = json_string_value(json_object_get(it, "hardware"));
		struct hw_profile hw;
		struct err e;
		if (hw_load_named(&hw, id, &e))
			fail_msg("%s", e.msg);
		/* The profile's price, with its source. */
		assert_true(hw.has_price);
		assert_true(hw.source_price[0] != '\0');
		assert_double_rel(num(it, "price_usd_per_gpu_hour"), hw.price_per_hour_usd, 1e-9);
		/* max_rate is the median confirmation block (not the
		 * selection's rate that chose the setting). */
		json_t *rates = json_object_get(json_object_get(json_object_get(it, "tuning"), "confirmation"), "rates");
		assert_int_equal(json_array_size(rates), 3);
		double v[3];
		for (size_t b = 0; b < 3; b++)
			v[b] = json_number_value(json_array_get(rates, b));
		double med = fmax(fmin(v[0], v[1]), fmin(fmax(v[0], v[1]), v[2]));
		double rate = num(it, "max_rate");
		assert_double_rel(rate, med, 1e-3);   /* rates are rounded to 4 decimals */
		/* $ per 1M output tokens and per 1k requests at that rate:
		 * price ÷ (rate × output tokens a request × 3600); the output
		 * tokens a request from the run at the limit. */
		json_t *at = json_object_get(it, "at_limit");
		double tok_per_req = num(at, "output_throughput") / num(at, "request_throughput");
		double usd_h = hw.price_per_hour_usd * num(it, "tensor_parallel_size");
		assert_double_rel(num(it, "usd_per_1m_output_tokens_at_slo"), usd_h / (rate * tok_per_req * 3600) * 1e6, 2e-3);
		assert_double_rel(num(it, "usd_per_1k_requests_at_slo"), usd_h / (rate * 3600) * 1e3, 2e-3);
		print_message("%s: %.4g req/s, %.4g $/1M tok, %.4g $/1k req at %.2f $/h\n", id, rate,
			      num(it, "usd_per_1m_output_tokens_at_slo"), num(it, "usd_per_1k_requests_at_slo"), usd_h);
	}
	/* The ranking orders by $ per 1M tokens at the SLO. */
	json_t *ranking = json_object_get(doc, "ranking");
	assert_int_equal(json_array_size(ranking), 2);
	for (size_t k = 0; k < 2; k++) {
		json_t *r = json_array_get(rows, (size_t)json_integer_value(json_array_get(ranking, k)));
		assert_true(num(r, "usd_per_1m_output_tokens_at_slo") >= prev);
		prev = num(r, "usd_per_1m_output_tokens_at_slo");
	}
	assert_int_equal(json_integer_value(json_object_get(doc, "winner")), json_integer_value(json_array_get(ranking, 0)));
	json_decref(doc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(paired_rule),
		cmocka_unit_test(a100s_within_noise_l40s_apart),
		cmocka_unit_test(cost_at_the_slo_is_the_confirmed_rate_at_the_cited_price),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
