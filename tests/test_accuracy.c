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
 * measurements are, (E2E - TTFT) / (mean output - 1), with the output
 * length the client counted (counted_len below) for both: the ITL error
 * is the error of the decode time E2E - TTFT. KV pool: the GPU
 * block count within 3% of vLLM's for every dense-model run. The four
 * Llama-4-Scout runs are held to 15% instead: about 1.7 GiB a GPU of what
 * vLLM keeps is not identified (docs/accuracy.md "KV pool"); the bound keeps the
 * known gap from growing unnoticed.
 *
 * Issue 11 tightens the in-sample goals to its 13 / 5 / 5 % and adds
 * leave-one-family-out cross-validation of the engine-level parameters, in
 * a lighter form than `vllm_h100.py --cross-validate` (which re-simulates
 * every fold on a grid): one more pass of the 15 runs with
 * step_overhead_us raised over the shipped remainder gives the Jacobian,
 * each fold solves the linearized least squares on the other families
 * (relative errors over the goals 15 / 7 / 7 %) for step_overhead_us, the
 * one engine-level term vLLM V1 ships (perf/overhead.c), and the family
 * left out is predicted by the same linearization. The goal is cv
 * ttft <= 15, itl <= 7, e2e <= 7 %. What the MAPE asserts check are
 * regression bounds at the figures measured now (each one's comment says
 * which), not the goals: a change that loses accuracy fails, one that
 * gains it tightens them.
 */
#include "simutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "calibcsv.h"
#include "overhead.h"

enum { N_EXPS = 15, STEP_BUMP_US = 200 };

/* One run's whole-run means, ms. */
struct obs {
	double ttft, itl, e2e;
};

/* One run's whole-run means, ms, its ITL derived with the client's
 * output length counted (counted_len). */
static struct obs run_obs(const char *id, const char *hardware_set, double counted)
{
	char path[4096], dir[CATALOG_DIR_MAX];
	snprintf(path, sizeof path, "%s/calibration/%s.ini", catalog_dir(CATALOG_SCENARIOS, dir, sizeof dir), id);
	struct run_result r;
	simulate(&r, path, hardware_set, NULL);
	assert_int_equal(r.all.failed, 0);
	double ttft = 1e3 * samples_mean(&r.all.ttft), e2e = 1e3 * samples_mean(&r.all.e2el);
	run_result_free(&r);
	return (struct obs){ ttft, (e2e - ttft) / (counted - 1), e2e };
}

/* The model family of an experiment: its model id without organisation
 * and size suffixes, as tests/accuracy/crossval.py groups them. */
static int family_of(const char *model)
{
	static const char *const fams[] = { "llama-4-scout", "llama-3.1-70b", "mistral-nemo",
					    "qwen2.5-7b", "yi-34b", "llama-2-7b" };
	const char *name = strrchr(model, '/') ? strrchr(model, '/') + 1 : model;
	for (int f = 0; f < 6; f++)
		if (!strncasecmp(name, fams[f], strlen(fams[f])))
			return f;
	fail_msg("no family for model %s", model);
	return -1;
}

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

/* The mean output length the client counted, the one the measured ITL was
 * derived with: (E2E - TTFT) / ITL + 1. inference-perf counts a streamed
 * completion by re-tokenizing its text (inference_perf/apis/completion.py:
 * output_len = tokenizer.count_tokens(output_text)), not the tokens vLLM
 * generated (max_tokens, under ignore_eos): 0.78-0.85 of them for
 * Llama-2-7B, 0.99-1.0 for the other models (tests/accuracy/simrun.py). */
static double counted_len(const struct calibcsv *c, const char *id)
{
	return (measured(c, id, "e2e_mean") - measured(c, id, "ttft_mean")) / measured(c, id, "itl_mean") + 1;
}

/* A copy of h100-sxm.ini whose [efficiency] raises step_overhead_us by
 * STEP_BUMP_US over vLLM's fitted remainder (overhead.c, "vllm-v1"); its
 * --set, in *set. */
static void bumped_profile(char *path, size_t n, char *set, size_t setn)
{
	char src[4096], dir[CATALOG_DIR_MAX];
	snprintf(src, sizeof src, "%s/h100-sxm.ini", catalog_dir(CATALOG_HARDWARE, dir, sizeof dir));
	snprintf(path, n, "/tmp/servesim-accuracy-XXXXXX.ini");
	int fd = mkstemps(path, 4);
	assert_true(fd >= 0);
	FILE *out = fdopen(fd, "w"), *in = fopen(src, "r");
	assert_non_null(out);
	assert_non_null(in);
	char line[512];
	while (fgets(line, sizeof line, in))
		fputs(line, out);
	fclose(in);
	const struct overhead_profile *v1 = overhead_profile_find("vllm-v1");
	assert_non_null(v1);
	fprintf(out, "\n[efficiency]\nstep_overhead_us = %g\nsource = test_accuracy Jacobian\n",
		v1->step_overhead_us + STEP_BUMP_US);
	assert_int_equal(fclose(out), 0);
	snprintf(set, setn, "run.hardware=%s", path);
}

/* Weighted residual rows of one run: relative error over goal of TTFT,
 * ITL, E2E, and their derivatives in step_overhead_us. */
static void rows_of(const struct obs *b, const struct obs *d_step, const struct obs *m, double res[3],
		    double jac[3])
{
	static const double goal[3] = { 0.15, 0.07, 0.07 };
	double sim[3] = { b->ttft, b->itl, b->e2e }, ms[3] = { m->ttft, m->itl, m->e2e };
	double ds[3] = { d_step->ttft, d_step->itl, d_step->e2e };
	for (int k = 0; k < 3; k++) {
		res[k] = (sim[k] / ms[k] - 1) / goal[k];
		jac[k] = ds[k] / ms[k] / goal[k];
	}
}

static void cross_validate(const struct calibcsv *c, const struct obs *base, const struct obs *meas)
{
	char path[64], set[128];
	bumped_profile(path, sizeof path, set, sizeof set);
	struct obs dstep[N_EXPS];
	for (size_t i = 0; i < c->n_exps; i++) {
		struct obs b = run_obs(c->exps[i].id, set, counted_len(c, c->exps[i].id));
		dstep[i] = (struct obs){ (b.ttft - base[i].ttft) / STEP_BUMP_US,
					 (b.itl - base[i].itl) / STEP_BUMP_US, (b.e2e - base[i].e2e) / STEP_BUMP_US };
		/* Each decode step pays the step overhead once: ITL rises with it. */
		assert_true(dstep[i].itl > 0);
	}
	unlink(path);
	double step0 = overhead_profile_find("vllm-v1")->step_overhead_us;
	int fam[N_EXPS];
	for (size_t i = 0; i < c->n_exps; i++)
		fam[i] = family_of(c->exps[i].model);
	double err[3] = { 0, 0, 0 };
	for (int f = 0; f < 6; f++) {
		/* Least squares of the training runs in the one shipped term,
		 * step_overhead_us, kept >= 0 (what crossval.py refits). */
		double a = 1e-12, b = 0;
		for (size_t i = 0; i < c->n_exps; i++) {
			if (fam[i] == f)
				continue;
			double res[3], jac[3];
			rows_of(&base[i], &dstep[i], &meas[i], res, jac);
			for (int k = 0; k < 3; k++) {
				a += jac[k] * jac[k];
				b -= jac[k] * res[k];
			}
		}
		double d_step = fmax(b / a, -step0);
		for (size_t i = 0; i < c->n_exps; i++) {
			if (fam[i] != f)
				continue;
			struct obs p = { base[i].ttft + dstep[i].ttft * d_step,
					 base[i].itl + dstep[i].itl * d_step,
					 base[i].e2e + dstep[i].e2e * d_step };
			err[0] += fabs(p.ttft / meas[i].ttft - 1);
			err[1] += fabs(p.itl / meas[i].itl - 1);
			err[2] += fabs(p.e2e / meas[i].e2e - 1);
		}
		print_message("fold %d: step_overhead_us %.0f\n", f, step0 + d_step);
	}
	double n = (double)c->n_exps;
	print_message("cv (linearized) ttft %.1f%%  itl %.1f%%  e2e %.1f%%\n", 100 * err[0] / n,
		      100 * err[1] / n, 100 * err[2] / n);
	/* The goals are 15 / 7 / 7 %. Measured 11.8 / 9.2 / 9.1 %
	 * here and by crossval.py's re-simulated folds (every fold refits 0
	 * us, the shipped value), since the Llama-2-7B runs simulate the
	 * tokens vLLM generated (10.6 / 8.1 / 8.1 % here before, 10.8 / 8.2 /
	 * 8.2 % re-simulated): TTFT meets its goal, ITL and E2E miss by what
	 * the over-charged mixed steps leave (docs/engine-vllm.md's residual
	 * anatomy and "The client's token count", with the A/B against a flat
	 * remainder in place of the small kernels). All three bounds are
	 * regression bounds, not goals: the measured figures plus 0.2 points
	 * of noise. 12.0 / 10.0 / 9.9 % since the merge of 2026-12-02 05:45
	 * UTC (see the in-sample bounds below: every fold refits 0 us);
	 * 11.9 / 10.0 / 9.9 % since the prompts are vLLM's re-tokenized
	 * count (below), crossval.py's re-simulated folds the same; 11.4 /
	 * 9.1 / 9.1 % (crossval.py) since the shared experts run on their
	 * own stream (perf/moeshared.c); 11.4 / 9.4 / 9.4 % on its own since
	 * the all-reduce rows' refit (2026-12-02, below); both (merged 16:45 UTC): 10.9 / 8.6 / 8.6 %;
	 * 10.6 / 7.6 / 7.6 % since the H100's stream is its measured 3.1 TB/s
	 * (2026-12-03, below); 10.5 / 7.4 / 7.4 % since Hopper's GQA decode
	 * attention is fitted to aiconfigurator's in-graph table (below). */
	assert_true(err[0] / n <= 0.1070);
	assert_true(err[1] / n <= 0.0762);
	assert_true(err[2] / n <= 0.0762);
}

static void h100_runs_meet_the_goals(void **state)
{
	(void)state;
	FILE *probe = fopen(EXPERIMENTS, "r");
	if (!probe) {
		/* Issue 15: a test that needs ../shared skips saying why. */
		fprintf(stderr, "skipped: %s is missing (../shared is not beside the source tree)\n",
			EXPERIMENTS);
		skip();
	}
	fclose(probe);
	struct calibcsv c;
	struct err e;
	if (calibcsv_load(&c, EXPERIMENTS, MEASURED, &e))
		fail_msg("%s", e.msg);
	assert_int_equal(c.n_exps, 15);
	double sum_ttft = 0, sum_itl = 0, sum_e2e = 0;
	struct obs base[N_EXPS], meas[N_EXPS];
	for (size_t i = 0; i < c.n_exps; i++) {
		const char *id = c.exps[i].id;
		char path[4096], dir[CATALOG_DIR_MAX];
		snprintf(path, sizeof path, "%s/calibration/%s.ini", catalog_dir(CATALOG_SCENARIOS, dir, sizeof dir), id);
		struct run_result r;
		simulate(&r, path, NULL);
		assert_int_equal(r.all.failed, 0);
		double ttft = 1e3 * samples_mean(&r.all.ttft), e2e = 1e3 * samples_mean(&r.all.e2el);
		double itl = (e2e - ttft) / (counted_len(&c, id) - 1);
		base[i] = (struct obs){ ttft, itl, e2e };
		meas[i] = (struct obs){ measured(&c, id, "ttft_mean"), measured(&c, id, "itl_mean"),
					measured(&c, id, "e2e_mean") };
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
	print_message("MAPE ttft %.3f%%  itl %.3f%%  e2e %.3f%%\n", 100 * sum_ttft / n, 100 * sum_itl / n,
		      100 * sum_e2e / n);
	/* In sample the issue asks 13 / 5 / 5 % (issue 18: TTFT <= 10 %).
	 * Measured 11.84 / 9.16 / 9.13 % since 2026-12-02 (10.52 / 7.94 /
	 * 7.91 % before), when the Llama-2-7B runs began simulating the
	 * tokens vLLM generated (max_tokens under ignore_eos; the client's
	 * re-tokenized count, which the measured ITL was derived with, is
	 * 0.78-0.85 of it: counted_len above) and the Hopper MHA decode row
	 * its component figures (flash-attention #1572 and PR #63) instead of
	 * an end-to-end fit to the inflated ITLs. Five of the six Llama-2
	 * stages are within 7.3 % on it; the sixth, general at 20 req/s, sits
	 * at the H100's capacity, where the over-charged mixed steps tip the
	 * simulated queue into growth (+33.5 % ITL, +11 % TTFT whole run:
	 * docs/engine-vllm.md "The client's token count"). Out of sample
	 * TensorRT-LLM's H100 FP8 Llama-2-7B throughput went 9.1 -> 4.2 %
	 * (tests/accuracy/trtllm_static.py). The small per-layer kernels at
	 * their in-graph floors (perf/elementwise.c) and no engine-level
	 * remainder (perf/overhead.c: crossval.py's "fit on all 15 runs"
	 * gives 0 us). All three bounds are regression bounds, not goals: the
	 * figures measured now plus 0.03 points for floating-point and
	 * platform noise. ITL and E2E miss 5 % by what the step model leaves:
	 * the mixed steps and Scout's mid-batch steps are over-charged (70B
	 * codegen, Scout roleplay +16 % ITL, Llama-2 general above); TTFT's
	 * misses are the own prefill step (docs/engine-vllm.md, "Residual
	 * anatomy").
	 * 2026-12-02 05:45 UTC, the four step-model branches merged (the
	 * client's count above, the H100 mat-vec curve for weight GEMVs,
	 * the padded decode all-reduce, the router skew): 11.99 / 9.96 /
	 * 9.95 %, the remainder still 0 us: every new component is charged
	 * and none pays it back while the mixed steps stay over-charged;
	 * Llama-2 general at 20/s alone is +34.7 % ITL.
	 * 11.91 / 9.96 / 9.94 % since the prompts are what vLLM counted:
	 * inference-perf (e8e0aa9, shared_prefix_datagen.py) sends random
	 * token ids decoded to text, which vLLM re-tokenizes into 1.047x
	 * as many plus BOS (the three Llama-2 runs' measured counts;
	 * scenarios/calibration/, docs/accuracy.md "Prompt lengths"), not
	 * system + question + ~27 template tokens. Reasoning-lite is 1,083
	 * tokens instead of 1,061 (TTFT -22.8 -> -20.5 % on Llama-2-7B,
	 * -40.1 -> -39.5 % on Scout); Llama-2 general, at capacity, goes
	 * +34.7 -> +35.7 % ITL on 2 more tokens (576, its measured 575.5).
	 * 2026-12-02 16:35 UTC, vLLM's shared experts on a second stream
	 * (perf/moeshared.c: Scout's 1.275 ms of shared-expert reads hide
	 * under the routed calls' fixed part in steps of <= 256 tokens):
	 * 11.41 / 9.12 / 9.11 %, Scout ITL +6.3 / +8.0 / +12.9 / -10.3 %
	 * (+13.7 / +13.0 / +18.9 / -4.5 % before); the other runs unchanged.
	 * 2026-12-02, the all-reduce rows refitted to aiconfigurator's table
	 * of vLLM 0.14's own all-reduce on H100 in a CUDA graph (custom
	 * all-reduce's two-shot 1.4x faster than PR #24111's forced kernel,
	 * tp 2 past 8 MiB on symmetric memory's two-shot): 11.45 / 9.43 /
	 * 9.41 % (70B TP4 TTFT +22.9 / +20.5 -> +16.3 / +18.4 %, run 61's ITL
	 * +17.6 -> +14.0 %; Yi TP2 TTFT +11.0 -> +12.9 %) on its own.
	 * Both, merged 16:45 UTC: 10.94 / 8.58 / 8.58 %.
	 * 2026-12-03, the H100's stream at its measured 3.1 TB/s (copy and
	 * triad medians, h100-sxm.ini; 3.0 a compromise with a serving-run
	 * Nsight reading before), the rows fitted on H100 as fractions of it
	 * re-expressed so that each still meets its table (Mixtral BF16
	 * Triton MoE refitted: 31.2 us + 1.0 of stream): 10.62 / 7.62 /
	 * 7.61 %; MHA decode attention (the Llama-2-7B runs, capped at the
	 * stream) is what moves.
	 * 2026-12-03, GQA decode attention on Hopper refitted to
	 * aiconfigurator's in-graph table of vLLM 0.14's own decode kernel on
	 * H100 (bytes at 0.985 of the stream, was PR #63's 0.887):
	 * 10.50 / 7.42 / 7.41 %; the GQA models' steps move (Llama-2-7B, MHA,
	 * does not). */
	assert_true(sum_ttft / n <= 0.1054);
	assert_true(sum_itl / n <= 0.0746);
	assert_true(sum_e2e / n <= 0.0745);
	cross_validate(&c, base, meas);
	calibcsv_free(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(h100_runs_meet_the_goals),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
