/*
 * Accuracy against the 15 real vLLM runs on H100 of ../shared/calibration
 * (issue 4), with the shipped defaults: each experiment's scenario
 * (scenarios/calibration/<id>.ini) simulated whole, compared with what was
 * measured over the whole run (stage -1). The same comparison as
 * tests/accuracy/vllm_h100.py, kept here so a change that loses the
 * accuracy fails CI. Skipped when ../shared/calibration is absent.
 *
 * The goals are the issue's: MAPE over the 15 runs <= 15% on mean TTFT,
 * <= 8% on mean ITL and on mean E2E, where ITL is derived as the
 * measurements are, (E2E - TTFT) / (mean output - 1). KV pool: the GPU
 * block count within 3% of vLLM's for every dense-model run. The four
 * Llama-4-Scout runs are held to 15% instead: about 1.7 GiB a GPU of what
 * vLLM keeps is not identified (README "Accuracy"); the bound keeps the
 * known gap from growing unnoticed.
 */
#include "simutil.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "calibcsv.h"

#define EXPERIMENTS CALIB_SHARED_DIR "/vllm_h100_experiments.csv"
#define MEASURED CALIB_SHARED_DIR "/vllm_h100_measured.csv"

static double measured(const struct calibcsv *c, const char *id, const char *metric)
{
	for (size_t i = 0; i < c->n_vals; i++)
		if (c->vals[i].stage == -1 && !strcmp(c->vals[i].id, id) && !strcmp(c->vals[i].metric, metric))
			return c->vals[i].ms;
	fail_msg("%s: no whole-run %s in %s", id, metric, MEASURED);
	return NAN;
}

static void h100_runs_meet_the_goals(void **state)
{
	(void)state;
	FILE *probe = fopen(EXPERIMENTS, "r");
	if (!probe)
		skip();
	fclose(probe);
	struct calibcsv c;
	struct err e;
	if (calibcsv_load(&c, EXPERIMENTS, MEASURED, &e))
		fail_msg("%s", e.msg);
	assert_int_equal(c.n_exps, 15);
	double sum_ttft = 0, sum_itl = 0, sum_e2e = 0;
	for (size_t i = 0; i < c.n_exps; i++) {
		const char *id = c.exps[i].id;
		char path[4096];
		snprintf(path, sizeof path, "%s/calibration/%s.ini", catalog_dir(CATALOG_SCENARIOS), id);
		struct run_result r;
		simulate(&r, path, NULL);
		assert_int_equal(r.all.failed, 0);
		double ttft = 1e3 * samples_mean(&r.all.ttft), e2e = 1e3 * samples_mean(&r.all.e2el);
		double out = (double)r.all.total_output / (double)r.all.completed;
		double itl = (e2e - ttft) / (out - 1);
		double et = fabs(ttft / measured(&c, id, "ttft_mean") - 1);
		double ei = fabs(itl / measured(&c, id, "itl_mean") - 1);
		double ee = fabs(e2e / measured(&c, id, "e2e_mean") - 1);
		sum_ttft += et;
		sum_itl += ei;
		sum_e2e += ee;
		double vllm = (double)c.exps[i].gpu_kv_blocks;
		assert_true(vllm > 0);
		double kv = fabs((double)r.engine.num_gpu_blocks / vllm - 1);
		bool scout = strstr(id, "llama-4-scout") != NULL;
		print_message("%-48s ttft %+6.1f%%  itl %+6.1f%%  e2e %+6.1f%%  kv %+6.2f%%\n", id,
			      100 * (ttft / measured(&c, id, "ttft_mean") - 1),
			      100 * (itl / measured(&c, id, "itl_mean") - 1),
			      100 * (e2e / measured(&c, id, "e2e_mean") - 1),
			      100 * ((double)r.engine.num_gpu_blocks / vllm - 1));
		assert_true(kv <= (scout ? 0.15 : 0.03));
		run_result_free(&r);
	}
	double n = (double)c.n_exps;
	print_message("MAPE ttft %.2f%%  itl %.2f%%  e2e %.2f%%\n", 100 * sum_ttft / n, 100 * sum_itl / n,
		      100 * sum_e2e / n);
	assert_true(sum_ttft / n <= 0.15);
	assert_true(sum_itl / n <= 0.08);
	assert_true(sum_e2e / n <= 0.08);
	calibcsv_free(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(h100_runs_meet_the_goals),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
