/*
 * plan and compare sized by a simulated cluster (sim/plan/planreplicas.c):
 * `--simulate-replicas` finds the fewest copies of the deployment that
 * carry the target within the SLO (n passes, n - 1 fails, checked here
 * independently of the search), compare gives the same answer as plan for
 * the same device, and a deployment's GPUs count every engine of it.
 * `plan --gpu-budget` searches every colocated and xPyD layout of a budget.
 */
#include "simutil.h"

#include <jansson.h>

#include "testjson.h"
#include "hwprofile.h"
#include "measure.h"
#include "plan.h"
#include "planreplicas.h"

/* Whether n replicas carry rate within slo, by plan's rule, checked here
 * independently of planreplicas.c's search. */
static bool cluster_passes(const struct scenario *base, const struct plan_slo *slo, const struct plan_opts *o,
			   double rate, int64_t n, int64_t prompts)
{
	struct measure reps[2];
	for (int r = 0; r < o->replications; r++) {
		struct scenario sc;
		measure_replica(&sc, base, r);
		sc.cluster.replicas = n;
		sc.request_rate = rate;
		sc.num_prompts = prompts;
		struct err e;
		if (measure_run(&reps[r], &sc, &e))
			fail_msg("%s", e.msg);
	}
	struct measure_summary s;
	measure_summarize(&s, reps, o->replications);
	int which;
	return plan_worst_ratio(&s, slo, o->confidence, &which) <= 1;
}

static void plan_simulates_the_cluster_for_its_replicas(void **state)
{
	(void)state;
	/* The default scenario, SLO TTFT p99 2 s and ITL p99 50 ms: one
	 * replica holds about 22 req/s. For 65 req/s division says 3; the
	 * simulated cluster needs the fewest n that passes while n - 1 fails,
	 * whatever the router (measured: 3 with round robin and with
	 * least_requests, which evens out bursts). */
	struct err e;
	struct plan_slo slo;
	assert_int_equal(plan_slo_parse(&slo, "ttft_p99_ms=2000,itl_p99_ms=50", &e), 0);
	struct plan_opts o;
	plan_opts_default(&o);
	o.replications = 2;
	o.jobs = 2;
	static const char *const routers[] = { "cluster.router=round_robin", "cluster.router=least_requests" };
	int64_t got[2];
	for (int k = 0; k < 2; k++) {
		struct inidoc ov = { 0 };
		assert_int_equal(inidoc_add_override(&ov, routers[k], &e), 0);
		struct scenario sc;
		assert_int_equal(scenario_load(&sc, NULL, &ov, &e), 0);
		inidoc_free(&ov);
		struct plan_cand c;
		assert_int_equal(plan_cand_init(&c, 0, &sc, false, "test", &e), 0);
		plan_search(&c, 1, &slo, &o);
		plan_simulate_replicas(&c, &slo, &o, 65);
		int64_t n = c.sim_replicas, prompts = plan_requests_at(&c, &o, 65);
		assert_true(n >= 2 && n <= 6);
		assert_true(cluster_passes(&c.sc, &slo, &o, 65, n, prompts));
		assert_false(cluster_passes(&c.sc, &slo, &o, 65, n - 1, prompts));
		got[k] = n;
		plan_cand_free(&c);
	}
	assert_true(got[1] <= got[0]);   /* least_requests never needs more here */
}

/* servesim ARGS exits 2 with msg on stderr. */
static void expect_bad(const char *args, const char *msg)
{
	struct cmd_result r;
	run_cmd(&r, "'%s' %s", SERVESIM_BIN, args);
	assert_int_equal(r.status, 2);
	assert_contains(r.err, msg);
	free(r.out);
	free(r.err);
}

#define SIZING "--slo ttft_p99_ms=2000,itl_p99_ms=50 --fixed --no-cost --replications 1 --format json"

static void compare_simulates_the_cluster_as_plan_does(void **state)
{
	(void)state;
	/* The same device, settings and target: compare's replicas are plan's,
	 * simulated or divided; divided they are ceil(target / max_rate). */
	json_t *plan = servesim_json("plan " SIZING " --target-rate 65 --simulate-replicas");
	json_t *cmp = servesim_json("compare --hardware h100-sxm " SIZING " --target-rate 65 --simulate-replicas");
	json_t *div = servesim_json("compare --hardware h100-sxm " SIZING " --target-rate 65");
	json_t *p = json_array_get(json_object_get(plan, "candidates"), 0);
	json_t *c = json_array_get(json_object_get(cmp, "rows"), 0);
	json_t *d = json_array_get(json_object_get(div, "rows"), 0);
	assert_true(json_is_true(json_object_get(p, "replicas_simulated")));
	assert_true(json_is_true(json_object_get(c, "replicas_simulated")));
	assert_null(json_object_get(d, "replicas_simulated"));
	double n = json_number_value(json_object_get(c, "replicas"));
	assert_double_near(n, json_number_value(json_object_get(p, "replicas")), 0);
	assert_true(n >= 2 && n <= 6);
	assert_double_near(json_number_value(json_object_get(c, "gpus")), n, 0);   /* tp 1 */
	double rate = json_number_value(json_object_get(d, "max_rate"));
	assert_true(rate > 10);
	assert_double_near(json_number_value(json_object_get(d, "replicas")), ceil(65 / rate - 1e-9), 0);
	assert_double_near(json_number_value(json_object_get(cmp, "target_rate")), 65, 0);
	json_decref(plan);
	json_decref(cmp);
	json_decref(div);
}

static void compare_sizing_needs_a_target_and_an_slo(void **state)
{
	(void)state;
	static const struct {
		const char *args, *msg;
	} bad[] = {
		{ "compare --hardware h100-sxm --slo ttft_p99_ms=2000 --simulate-replicas",
		  "--simulate-replicas: expected --target-rate" },
		{ "compare --hardware h100-sxm --target-rate 10", "--target-rate: expected an SLO" },
		{ "compare --hardware h100-sxm --slo ttft_p99_ms=2000 --target-rate 0",
		  "--target-rate" },
	};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
		expect_bad(bad[i].args, bad[i].msg);
}

static void deployment_gpus_count_every_engine(void **state)
{
	(void)state;
	/* A copy of the deployment is every engine in it: 3 colocated at tp 2
	 * is 6 GPUs; 2 prefill at tp 2 plus 3 decode at tp 1 is 7. Scaled by
	 * 2 the layout keeps its ratio. */
	struct err e;
	struct inidoc ov = { 0 };
	struct scenario sc, two;
	assert_int_equal(inidoc_add_override(&ov, "cluster.replicas=3", &e), 0);
	assert_int_equal(inidoc_add_override(&ov, "engine.tensor_parallel_size=2", &e), 0);
	assert_int_equal(scenario_load(&sc, NULL, &ov, &e), 0);
	inidoc_free(&ov);
	assert_int_equal(plan_unit_gpus(&sc), 6);
	plan_scale_cluster(&two, &sc, 2);
	assert_int_equal(two.cluster.replicas, 6);
	assert_int_equal(plan_unit_gpus(&two), 12);
	memset(&ov, 0, sizeof ov);
	static const char *const disagg[] = { "cluster.prefill_replicas=2", "cluster.decode_replicas=3",
					      "engine.tensor_parallel_size=2", "decode.tensor_parallel_size=1",
					      NULL };
	for (int i = 0; disagg[i]; i++)
		assert_int_equal(inidoc_add_override(&ov, disagg[i], &e), 0);
	assert_int_equal(scenario_load(&sc, NULL, &ov, &e), 0);
	inidoc_free(&ov);
	assert_int_equal(plan_unit_gpus(&sc), 7);
	plan_scale_cluster(&two, &sc, 2);
	assert_int_equal(two.cluster.prefill_replicas, 4);
	assert_int_equal(two.cluster.decode_replicas, 6);
	assert_int_equal(two.cluster.replicas, 10);
	assert_int_equal(plan_unit_gpus(&two), 14);
}

static void plan_lays_out_a_gpu_budget(void **state)
{
	(void)state;
	/* Four H100s of c25-disagg-small: 4 colocated, 1P3D, 2P2D, 3P1D, each
	 * a candidate of four GPUs, ranked by the rate it holds within the
	 * SLO (no cost, no target: rate per GPU, the same four GPUs each).
	 * Measured, 20 s runs: 2P2D 56, colocated 47, 3P1D 32, 1P3D 28
	 * req/s (step model of 2026-12-01 15:30). */
	json_t *doc = servesim_json("plan c25-disagg-small " SIZING " --gpu-budget 4 --duration 20");
	json_t *items = json_object_get(doc, "candidates"), *ranking = json_object_get(doc, "ranking");
	assert_int_equal(json_array_size(items), 4);
	assert_double_near(json_number_value(json_object_get(doc, "gpu_budget")), 4, 0);
	static const char *const names[] = { "4 coloc", "1P3D", "2P2D", "3P1D" };
	for (size_t i = 0; i < 4; i++) {
		json_t *it = json_array_get(items, i);
		assert_string_equal(json_string_value(json_object_get(it, "layout")), names[i]);
		assert_int_equal(json_integer_value(json_object_get(it, "gpus_per_replica")), 4);
		assert_int_equal(json_integer_value(json_object_get(it, "prefill_replicas")), (json_int_t)i);
	}
	double prev = INFINITY;
	for (size_t k = 0; k < 4; k++) {
		json_t *it = json_array_get(items, (size_t)json_integer_value(json_array_get(ranking, k)));
		double rate = json_number_value(json_object_get(it, "max_rate"));
		assert_true(rate > 0 && rate <= prev);
		prev = rate;
	}
	json_decref(doc);
	/* The text names the best layout, how to reproduce it, and two
	 * runners-up (short runs: only its form is checked). */
	char *text = test_servesim(0, "plan c25-disagg-small --slo ttft_p99_ms=2000,itl_p99_ms=50 --fixed --no-cost "
				 "--replications 1 --gpu-budget 4 --duration 3");
	assert_contains(text, "layouts of 4 GPUs");
	const char *sec = strstr(text, "layouts of 4 GPUs");
	int runners = 0;
	for (const char *p = sec; (p = strstr(p, "runner-up:")); p++)
		runners++;
	assert_int_equal(runners, 2);
	assert_contains(text, "reproduce it with: --set cluster.replicas=4 --set cluster.prefill_replicas=");
	free(text);
}

static void gpu_budget_bad_input(void **state)
{
	(void)state;
	static const struct {
		const char *args, *msg;
	} bad[] = {
		{ "plan --slo ttft_p99_ms=2000 --gpu-budget 1", "--gpu-budget: expected GPUs >= 2" },
		{ "plan --slo ttft_p99_ms=2000 --gpu-budget 3 --tp 2",
		  "--gpu-budget 3: expected room for two engines of tp 2" },
		{ "plan --set engine.kind=ollama --slo ttft_p99_ms=2000 --gpu-budget 4",
		  "--gpu-budget: xPyD layouts need engine kind vllm" },
	};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
		expect_bad(bad[i].args, bad[i].msg);
}

static void pools_on_other_devices_are_priced_each(void **state)
{
	(void)state;
	/* 1 H100 prefill + 3 H200 decode: the deployment's hour is 1 × the
	 * H100's price + 3 × the H200's, so its mean price per GPU is that / 4. */
	struct err e;
	struct inidoc ov = { 0 };
	static const char *const sets[] = { "cluster.prefill_replicas=1", "cluster.decode_replicas=3",
					    "decode.hardware=h200-sxm", NULL };
	for (int i = 0; sets[i]; i++)
		assert_int_equal(inidoc_add_override(&ov, sets[i], &e), 0);
	struct scenario sc;
	assert_int_equal(scenario_load(&sc, NULL, &ov, &e), 0);
	inidoc_free(&ov);
	struct plan_cand c;
	assert_int_equal(plan_cand_init(&c, 0, &sc, true, "test", &e), 0);
	struct hw_profile h100, h200;
	assert_int_equal(hw_load_named(&h100, "h100-sxm", &e), 0);
	assert_int_equal(hw_load_named(&h200, "h200-sxm", &e), 0);
	assert_true(h200.price_per_hour_usd != h100.price_per_hour_usd);
	assert_double_near(c.price_usd_per_gpu_hour, (h100.price_per_hour_usd + 3 * h200.price_per_hour_usd) / 4, 1e-9);
	assert_int_equal(plan_unit_gpus(&c.sc), 4);
	plan_cand_free(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(plan_simulates_the_cluster_for_its_replicas),
		cmocka_unit_test(compare_simulates_the_cluster_as_plan_does),
		cmocka_unit_test(compare_sizing_needs_a_target_and_an_slo),
		cmocka_unit_test(deployment_gpus_count_every_engine),
		cmocka_unit_test(plan_lays_out_a_gpu_budget),
		cmocka_unit_test(gpu_budget_bad_input),
		cmocka_unit_test(pools_on_other_devices_are_priced_each),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
