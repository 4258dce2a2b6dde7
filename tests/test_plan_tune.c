/*
 * plan and compare tune each candidate (tune.h): on the seed's bench-serve
 * load (SEED C13) the A100 and the H100 are compared at their best vLLM
 * settings, each row names them, --fixed prints today's answer, and tuning
 * never ends below the scenario's own setting.
 *
 * Runs are short (--duration 15, 2 replications) so the group stays within
 * seconds; the rates asserted are ratios with tolerances that hold across
 * step-model changes (see each assertion).
 */
#include "testutil.h"

#include <jansson.h>
#include <math.h>

#include "catalog.h"
#include "plan.h"
#include "testjson.h"

#define SLO "--slo ttft_p99_ms=2000,itl_p99_ms=50"
#define COMPARE "compare c13-bench-serve --hardware a100-80gb-sxm,h100-sxm " SLO \
		" --replications 2 --duration 15 --no-cost --format json"

static json_t *row(json_t *doc, size_t i)
{
	return json_array_get(json_object_get(doc, "rows"), i);
}

static void tuned_a100_holds_a_quarter_of_the_h100(void **state)
{
	(void)state;
	json_t *tuned = servesim_json(COMPARE);
	json_t *fixed = servesim_json(COMPARE " --fixed");
	json_t *a = row(tuned, 0), *h = row(tuned, 1);
	assert_string_equal(json_string_value(json_object_get(a, "hardware")), "a100-80gb-sxm");
	double ra = num(a, "max_rate"), rh = num(h, "max_rate");
	/* Bandwidth 2039 vs 3350 GB/s, bf16 compute 312 vs ~990 TFLOP/s:
	 * at their best settings the A100 is within a factor of 4 of the
	 * H100 (issue 12: 0.77 against 20.75 req/s was the default token
	 * budget's prefill interference on the A100, not the device). */
	assert_true(ra > 0 && rh > 0);
	assert_true(ra >= 0.25 * rh);
	/* Each row names its setting: a config object and the --set line. */
	for (size_t i = 0; i < 2; i++) {
		json_t *it = row(tuned, i), *cfg = json_object_get(it, "config");
		assert_true(json_is_object(cfg));
		assert_true(json_is_integer(json_object_get(cfg, "max_num_batched_tokens")) ||
			    json_is_string(json_object_get(cfg, "max_num_batched_tokens")));
		assert_non_null(json_string_value(json_object_get(it, "set")));
		json_t *t = json_object_get(it, "tuning");
		assert_true(num(t, "simulations") > num(t, "settings_tried"));
		assert_true(json_array_size(json_object_get(t, "runners_up")) >= 1);
	}
	/* The A100's setting reproduces: the --set line it prints, searched
	 * with --fixed, gives its selection rate again (the same search, seeds
	 * and tolerance: within the 2% bisection tolerance, doubled). The
	 * reported max_rate is the confirmation on fresh seeds
	 * (test_plan_confirm.c). */
	char args[2048];
	snprintf(args, sizeof args,
		 "compare c13-bench-serve --hardware a100-80gb-sxm " SLO
		 " --replications 2 --duration 15 --no-cost --format json --fixed %s",
		 json_string_value(json_object_get(a, "set")));
	json_t *again = servesim_json(args);
	assert_double_rel(num(row(again, 0), "max_rate"), num(json_object_get(a, "tuning"), "selection_rate"), 0.04);
	/* --fixed: no tuning keys, and the default setting is far below the
	 * tuned one on the A100 (the factor of 13; asserted: 2). */
	assert_null(json_object_get(row(fixed, 0), "config"));
	assert_null(json_object_get(json_object_get(fixed, "search"), "tune"));
	assert_true(ra > 2 * num(row(fixed, 0), "max_rate"));
	/* Tuning starts from the scenario's own setting and keeps the best:
	 * on the same seeds, never below --fixed beyond the fine search's
	 * tolerance. */
	for (size_t i = 0; i < 2; i++)
		assert_true(num(json_object_get(row(tuned, i), "tuning"), "selection_rate") >=
			    0.97 * num(row(fixed, i), "max_rate"));
	json_decref(again);
	json_decref(tuned);
	json_decref(fixed);
}

/* --fixed prints what plan printed before tuning: the search of the
 * scenario's own setting, the same as plan_search on it. */
static void fixed_is_the_plain_search(void **state)
{
	(void)state;
	json_t *doc = servesim_json("plan c13-bench-serve " SLO " --replications 2 --duration 10 --no-cost "
				    "--format json --fixed");
	struct scenario sc;
	struct err e;
	char path[4096];
	if (catalog_resolve(CATALOG_SCENARIOS, "c13-bench-serve", path, sizeof path, &e) ||
	    scenario_load(&sc, path, NULL, &e))
		fail_msg("%s", e.msg);
	struct plan_cand c;
	struct plan_slo slo;
	struct plan_opts o;
	if (plan_cand_init(&c, 0, &sc, false, "test", &e) ||
	    plan_slo_parse(&slo, "ttft_p99_ms=2000,itl_p99_ms=50", &e))
		fail_msg("%s", e.msg);
	plan_opts_default(&o);
	o.replications = 2;
	o.duration_s = 10;
	o.jobs = 2;
	plan_search(&c, 1, &slo, &o);
	json_t *it = json_array_get(json_object_get(doc, "candidates"), 0);
	assert_double_rel(num(it, "max_rate"), plan_sustained_rate(&c, &o), 1e-4);
	assert_null(json_object_get(it, "config"));
	plan_cand_free(&c);
	json_decref(doc);
}

/* --search narrows an axis; its values are checked against the scenario. */
static void search_narrows_and_checks(void **state)
{
	(void)state;
	json_t *doc = servesim_json("plan c13-bench-serve " SLO " --replications 1 --duration 10 --no-cost "
				    "--format json --search max_num_batched_tokens=1024 "
				    "--search engine.max_num_seqs=128");
	json_t *it = json_array_get(json_object_get(doc, "candidates"), 0);
	json_t *cfg = json_object_get(it, "config");
	/* One value per axis: the descent may keep the scenario's own (unset:
	 * "default") or move to the one value. */
	json_t *mnbt = json_object_get(cfg, "max_num_batched_tokens");
	assert_true(json_is_string(mnbt) ? !strcmp(json_string_value(mnbt), "default") :
					   json_integer_value(mnbt) == 1024);
	json_t *axes = json_object_get(json_object_get(doc, "search"), "tune");
	assert_int_equal(json_array_size(json_object_get(axes, "max_num_seqs")), 1);
	json_decref(doc);
	struct cmd_result r;
	run_cmd(&r, "'%s' plan c13-bench-serve " SLO " --search max_num_seqs=0", SERVESIM_BIN);
	assert_int_equal(r.status, 2);
	assert_contains(r.err, "--search max_num_seqs");
	assert_contains(r.err, "an integer >= 1");
	cmd_result_free(&r);
	run_cmd(&r, "'%s' plan c13-bench-serve " SLO " --search run.model=x", SERVESIM_BIN);
	assert_int_equal(r.status, 2);
	assert_contains(r.err, "--search: expected [engine.]KEY=V1,V2");
	cmd_result_free(&r);
	run_cmd(&r, "'%s' plan c13-bench-serve " SLO " --fixed --search max_num_seqs=8", SERVESIM_BIN);
	assert_int_equal(r.status, 2);
	cmd_result_free(&r);
	run_cmd(&r, "'%s' compare --hardware h100-sxm --search max_num_seqs=8", SERVESIM_BIN);
	assert_int_equal(r.status, 2);
	assert_contains(r.err, "--search: expected an SLO");
	cmd_result_free(&r);
}

/* --cost own prices every shipped profile (purchase over years at a
 * utilization, plus power), so compare runs across all of them. */
static void owning_prices_every_profile(void **state)
{
	(void)state;
	json_t *doc = servesim_json("compare --hardware all --cost own --years 3 --power-usd-kwh 0.12 "
				    "--utilization 0.6 --set engine.kind=llamacpp --set run.weights=q4_k_m "
				    "--set workload.num_prompts=6 --replications 1 --format json");
	json_t *it;
	size_t i, n = 0;
	json_array_foreach(json_object_get(doc, "rows"), i, it) {
		assert_null(json_object_get(it, "error"));
		assert_true(num(it, "price_usd_per_gpu_hour") > 0);
		assert_true(num(it, "usd_per_1m_output_tokens") > 0);
		if (!strcmp(json_string_value(json_object_get(it, "hardware")), "h100-sxm")) {
			/* [ownership]: 30,000 USD over 3 × 8760 h at 60%, plus
			 * (700 + 575) W at 0.12 $/kWh. */
			double want = 30000.0 / (3 * 8760) / 0.6 + 1.275 * 0.12;
			assert_double_rel(num(it, "price_usd_per_gpu_hour"), want, 1e-3);
		}
		n++;
	}
	assert_true(n >= 27);   /* the shipped profiles */
	assert_string_equal(json_string_value(json_object_get(json_object_get(doc, "cost_basis"), "kind")), "own");
	json_decref(doc);
	struct cmd_result r;
	run_cmd(&r, "'%s' compare --hardware h100-sxm --years 5", SERVESIM_BIN);
	assert_int_equal(r.status, 2);
	assert_contains(r.err, "expected --cost own with them");
	cmd_result_free(&r);
	run_cmd(&r, "'%s' compare --hardware m2-ultra --cost cloud --set engine.kind=llamacpp --set run.weights=q4_k_m",
		SERVESIM_BIN);
	assert_int_equal(r.status, 2);
	assert_contains(r.err, "pass --cost own to price owning it");
	cmd_result_free(&r);
}

/* A 24 GB A10G cannot hold the KV of one 131072-token request beside 16
 * GB of weights, so vLLM refuses the model's default max_model_len there
 * (--fixed: infeasible); tuning tries the length the workload needs
 * (1024 + 128 tokens, rounded up to 2048) and the candidate runs. */
static void tuning_finds_a_max_model_len_that_fits(void **state)
{
	(void)state;
	json_t *doc = servesim_json("plan c13-bench-serve --hardware a10g --slo ttft_p99_ms=4000 --replications 1 "
				    "--duration 5 --no-cost --format json");
	json_t *it = json_array_get(json_object_get(doc, "candidates"), 0);
	assert_string_equal(json_string_value(json_object_get(it, "status")), "ok");
	assert_int_equal(json_integer_value(json_object_get(json_object_get(it, "config"), "max_model_len")), 2048);
	assert_contains(json_string_value(json_object_get(it, "set")), "--set engine.max_model_len=2048");
	json_decref(doc);
	doc = servesim_json("plan c13-bench-serve --hardware a10g --slo ttft_p99_ms=4000 --replications 1 "
			    "--duration 5 --no-cost --format json --fixed");
	it = json_array_get(json_object_get(doc, "candidates"), 0);
	assert_string_equal(json_string_value(json_object_get(it, "status")), "infeasible");
	json_decref(doc);
}

/* A tuned plan prints the same bytes on one thread as on two, and its
 * shards, merged, print what the whole run prints: each candidate is
 * tuned on its own. */
static void tuned_shards_merge(void **state)
{
	(void)state;
	char dir[64];
	test_tmpdir(dir, sizeof dir, "tune");
	const char *plan = "plan c13-bench-serve --hardware a100-80gb-sxm,h100-sxm " SLO
			   " --replications 1 --duration 10 --no-cost";
	struct cmd_result whole, r;
	run_cmd(&whole, "'%s' %s --jobs 2", SERVESIM_BIN, plan);
	assert_int_equal(whole.status, 0);
	assert_contains(whole.out, "tuning took");
	/* One thread prints the same bytes as two. */
	run_cmd(&r, "'%s' %s --jobs 1", SERVESIM_BIN, plan);
	assert_string_equal(r.out, whole.out);
	cmd_result_free(&r);
	for (int k = 1; k <= 2; k++) {
		run_cmd(&r, "'%s' %s --shard %d/2 --format json > '%s/s%d.json'", SERVESIM_BIN, plan, k, dir, k);
		assert_int_equal(r.status, 0);
		cmd_result_free(&r);
	}
	run_cmd(&r, "'%s' merge '%s/s2.json' '%s/s1.json'", SERVESIM_BIN, dir, dir);
	assert_int_equal(r.status, 0);
	assert_string_equal(r.out, whole.out);
	cmd_result_free(&r);
	cmd_result_free(&whole);
	test_rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(tuned_a100_holds_a_quarter_of_the_h100),
		cmocka_unit_test(fixed_is_the_plain_search),
		cmocka_unit_test(search_narrows_and_checks),
		cmocka_unit_test(owning_prices_every_profile),
		cmocka_unit_test(tuning_finds_a_max_model_len_that_fits),
		cmocka_unit_test(tuned_shards_merge),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
