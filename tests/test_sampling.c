/*
 * The sampler's path from the sampling parameters and the models'
 * generation_config defaults (sim/perf/sampling.c), the cost of each path
 * (sim/perf/overhead.c) against its measurement, and a run's ITL under
 * each: vLLM V1's rules (sampler.py, topk_topp_sampler.py, v0.15).
 */
#include "simutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "model.h"
#include "overhead.h"
#include "sampling.h"

#define NS SAMPLING_NOT_SENT

/* The generation_config models/ ships for id (none: present false). */
static struct genconfig gen_of(const char *id)
{
	struct model m;
	struct err e;
	assert_int_equal(model_load_named(&m, id, &e), 0);
	return m.gen;
}

/* vLLM's order: greedy (temperature < 1e-5) skips everything; then any
 * top-p sorts; top-k alone takes torch.topk; neither samples plainly. A
 * parameter sent wins over the model's file; --generation-config vllm
 * drops the file; a top-k at or past the vocabulary is off. */
static void the_path_follows_vllms_sampler(void **state)
{
	(void)state;
	const double V = 152064;
	const struct sampling_params none = { NS, NS, NS, NS };
	const struct genconfig qwen = gen_of("qwen2.5-7b-instruct"), nemo = gen_of("mistral-nemo-12b"),
			       llama = gen_of("llama-3.1-8b"), gpt2 = gen_of("gpt2");
	/* Qwen2.5-7B-Instruct's file: temperature 0.7, top_p 0.8, top_k 20. */
	assert_int_equal(sampling_path(&none, true, &qwen, V), SAMPLER_TOP_P);
	assert_int_equal(sampling_path(&none, false, &qwen, V), SAMPLER_RANDOM);
	const struct sampling_params greedy = { 0, NS, NS, NS }, p1 = { NS, 1, NS, NS },
				     k0 = { NS, 1, 0, NS }, kv = { NS, 1, 152064, NS },
				     t_only = { 0.8, NS, NS, NS }, k50 = { NS, NS, 50, NS };
	assert_int_equal(sampling_path(&greedy, true, &qwen, V), SAMPLER_GREEDY);
	assert_int_equal(sampling_path(&p1, true, &qwen, V), SAMPLER_TOP_K);   /* the file's top_k 20 */
	assert_int_equal(sampling_path(&k0, true, &qwen, V), SAMPLER_RANDOM);
	assert_int_equal(sampling_path(&kv, true, &qwen, V), SAMPLER_RANDOM);
	assert_int_equal(sampling_path(&k50, false, &qwen, V), SAMPLER_TOP_K);
	/* Token ids only (Mistral-Nemo): vLLM's defaults, no filter. */
	assert_int_equal(sampling_path(&none, true, &nemo, 131072), SAMPLER_RANDOM);
	assert_int_equal(sampling_path(&k50, true, &nemo, 131072), SAMPLER_TOP_K);
	/* Meta's files set top_p 0.9. */
	assert_int_equal(sampling_path(&t_only, true, &llama, 128256), SAMPLER_TOP_P);
	/* A model without an entry is assumed to set a top_p: what servesim
	 * charged before; a top_p of 1 sent lifts it. */
	assert_int_equal(sampling_path(&none, true, &gpt2, 50257), SAMPLER_TOP_P);
	assert_int_equal(sampling_path(&p1, true, &gpt2, 50257), SAMPLER_RANDOM);
	assert_int_equal(sampling_path(&greedy, true, &gpt2, 50257), SAMPLER_GREEDY);
	assert_int_equal(sampling_path(&none, false, &gpt2, 50257), SAMPLER_RANDOM);
	/* Min-p runs when sent > 0, on every path but greedy (an argmax-
	 * invariant processor). */
	const struct sampling_params mp = { NS, NS, NS, 0.05 }, mp0 = { NS, NS, NS, 0 }, mpg = { 0, NS, NS, 0.05 };
	assert_true(sampling_min_p(&mp, true, &nemo, sampling_path(&mp, true, &nemo, 131072)));
	assert_false(sampling_min_p(&mp0, true, &nemo, SAMPLER_RANDOM));
	assert_false(sampling_min_p(&none, true, &qwen, SAMPLER_TOP_P));
	assert_false(sampling_min_p(&mpg, true, &nemo, sampling_path(&mpg, true, &nemo, 131072)));
	/* A file's min_p applies when none is sent, under auto only; a 0 sent
	 * turns it off (vLLM: the request's value wins). */
	struct genconfig with_min_p = nemo;
	with_min_p.min_p = 0.05;
	assert_true(sampling_min_p(&none, true, &with_min_p, SAMPLER_RANDOM));
	assert_false(sampling_min_p(&none, false, &with_min_p, SAMPLER_RANDOM));
	assert_false(sampling_min_p(&mp0, true, &with_min_p, SAMPLER_RANDOM));
	assert_false(sampling_min_p(&none, true, &with_min_p, SAMPLER_GREEDY));
	/* Penalties: only Qwen's file sets one (repetition_penalty 1.05). */
	assert_true(sampling_penalties(true, &qwen));
	assert_false(sampling_penalties(false, &qwen));
	assert_false(sampling_penalties(true, &llama));
	assert_false(sampling_penalties(true, &gpt2));
	for (int i = 0; i < SAMPLER_N_PATHS; i++)
		assert_true(strlen(sampling_path_name((enum sampler_path)i)) > 3);
}

/* The paths' costs. Plain random sampling contains the softmax that
 * vllm#51526 profiled at ~93 us a step for batch 16 of a 248,320-token
 * vocabulary, and its argmax and elementwise passes at most as much
 * again (the path is within [1, 2.5] x that softmax); greedy costs less
 * than random, random less than the sort, at every batch; top-k costs
 * the sort (vllm#40376: 2.06 against 2.32 ms at 128 x 131,072, within the
 * sort line's 15%). */
static void the_paths_cost_what_they_measured(void **state)
{
	(void)state;
	const struct overhead_profile *p = overhead_profile_find("vllm-v1");
	struct hw_profile hw = { 0 };
	struct overhead_model o;
	overhead_model_init(&o, p, &hw, true, false, 128, 8192, 40, 0, 248320);
	o.sampler = SAMPLER_RANDOM;
	double us = overhead_sampler_s(&o, 16) * 1e6;
	assert_true(us >= 93 && us <= 2.5 * 93);
	overhead_model_init(&o, p, &hw, true, false, 128, 8192, 32, 0, 131072);
	o.sampler = SAMPLER_TOP_K;
	double ms = overhead_sampler_s(&o, 128) * 1e3;
	assert_true(ms >= 0.85 * 2.06 && ms <= 1.15 * 2.06);
	for (double n = 1; n <= 512; n *= 2) {
		double c[SAMPLER_N_PATHS];
		for (int i = 0; i < SAMPLER_N_PATHS; i++) {
			o.sampler = (enum sampler_path)i;
			c[i] = overhead_sampler_s(&o, n);
		}
		assert_double_rel(c[SAMPLER_TOP_K], c[SAMPLER_TOP_P], 1e-12);
		assert_true(c[SAMPLER_GREEDY] < c[SAMPLER_RANDOM] && c[SAMPLER_RANDOM] < c[SAMPLER_TOP_P]);
	}
	o.sampler = SAMPLER_GREEDY;
	assert_double_near(overhead_sampler_s(&o, 0), 0, 0);
	/* Penalties add their byte estimate on any path: 40 us + 0.028 ns a
	 * logit, 82.6 us at 10 x 152,064 (overhead.c), and nothing at 0. */
	overhead_model_init(&o, p, &hw, true, false, 128, 8192, 28, 0, 152064);
	for (int i = 0; i < SAMPLER_N_PATHS; i++) {
		o.sampler = (enum sampler_path)i;
		o.penalties = false;
		double plain = overhead_sampler_s(&o, 10);
		o.penalties = true;
		assert_double_near((overhead_sampler_s(&o, 10) - plain) * 1e6, 40 + 0.028e-3 * 10 * 152064, 1e-6);
		assert_double_near(overhead_sampler_s(&o, 0), 0, 0);
	}
	/* Min-p adds 15 us + 0.04 ns a logit (overhead.c: the softmax of
	 * #51526 and a row max, compare and fill): 75.8 us at 10 x 152,064. */
	o.penalties = false;
	o.sampler = SAMPLER_RANDOM;
	double plain = overhead_sampler_s(&o, 10);
	o.min_p = true;
	assert_double_near((overhead_sampler_s(&o, 10) - plain) * 1e6, 15 + 0.04e-3 * 10 * 152064, 1e-6);
}

/* A run: Qwen2.5-7B-Instruct at the same load decodes fastest greedy, then
 * at random without its file's top-p/top-k and penalty (both with
 * --generation-config vllm), then as sent by default (the sort and the
 * penalty); sending the file's own values changes nothing, to the
 * nanosecond (the same path, the file's penalty still applied). */
static void a_runs_itl_follows_the_path(void **state)
{
	(void)state;
	const char *base[] = { "run.model=qwen2.5-7b-instruct", "workload.num_prompts=40",
			       "workload.request_rate=8", "workload.random_output_len=64" };
	struct run_result def, vllm_cfg, greedy, same;
	simulate(&def, NULL, base[0], base[1], base[2], base[3], NULL);
	simulate(&vllm_cfg, NULL, base[0], base[1], base[2], base[3], "engine.generation_config=vllm", NULL);
	simulate(&greedy, NULL, base[0], base[1], base[2], base[3], "workload.temperature=0",
		 "engine.generation_config=vllm", NULL);
	simulate(&same, NULL, base[0], base[1], base[2], base[3], "workload.temperature=0.7", "workload.top_p=0.8",
		 "workload.top_k=20", NULL);
	assert_true(mean_tpot(&greedy) < mean_tpot(&vllm_cfg));
	assert_true(mean_tpot(&vllm_cfg) < mean_tpot(&def));
	assert_int_equal(same.reqs.v[same.reqs.len - 1].finish_ns, def.reqs.v[def.reqs.len - 1].finish_ns);
	assert_double_rel(mean_tpot(&same), mean_tpot(&def), 1e-12);
	/* What explain prints: the path and the penalties. */
	assert_string_equal(def.engine.sampler, sampling_path_name(SAMPLER_TOP_P));
	assert_true(def.engine.sampler_penalties);
	assert_string_equal(vllm_cfg.engine.sampler, sampling_path_name(SAMPLER_RANDOM));
	assert_false(vllm_cfg.engine.sampler_penalties);
	assert_string_equal(greedy.engine.sampler, sampling_path_name(SAMPLER_GREEDY));
	/* Before vLLM 0.8 --generation-config defaulted to none (vllm#12622):
	 * engine.vllm_version 0.7 samples at random; given auto, it sorts. */
	struct run_result v07, v07_auto;
	simulate(&v07, NULL, base[0], base[1], base[2], base[3], "engine.vllm_version=0.7", NULL);
	simulate(&v07_auto, NULL, base[0], base[1], base[2], base[3], "engine.vllm_version=0.7",
		 "engine.generation_config=auto", NULL);
	assert_string_equal(v07.engine.sampler, sampling_path_name(SAMPLER_RANDOM));
	assert_false(v07.engine.sampler_penalties);
	assert_string_equal(v07_auto.engine.sampler, sampling_path_name(SAMPLER_TOP_P));
	assert_true(v07_auto.engine.sampler_penalties);
	run_result_free(&v07);
	run_result_free(&v07_auto);
	run_result_free(&def);
	run_result_free(&vllm_cfg);
	run_result_free(&greedy);
	run_result_free(&same);
}

/* The files models/generation_config/ ships hold what the publishers'
 * generation_config.json set (the values servesim's table held before
 * they moved there): Meta's 0.6/0.9, Qwen's 0.7/0.8/20 with its 1.05
 * repetition penalty, token ids only for Mistral-Nemo; a model without a
 * file has none (present false). */
static void the_shipped_files_hold_the_publishers_values(void **state)
{
	(void)state;
	const struct genconfig q = gen_of("qwen2.5-7b-instruct"), l = gen_of("llama-2-70b"),
			       n = gen_of("mistral-nemo-12b"), g = gen_of("gpt2");
	assert_true(q.present && l.present && n.present && !g.present);
	assert_double_near(q.temperature, 0.7, 0);
	assert_double_near(q.top_p, 0.8, 0);
	assert_int_equal(q.top_k, 20);
	assert_double_near(q.repetition_penalty, 1.05, 0);
	assert_double_near(q.min_p, GENCONFIG_UNSET, 0);
	assert_double_near(l.temperature, 0.6, 0);
	assert_double_near(l.top_p, 0.9, 0);
	assert_int_equal(l.top_k, GENCONFIG_UNSET);
	assert_false(genconfig_penalty(&l));
	assert_double_near(n.temperature, GENCONFIG_UNSET, 0);
	assert_double_near(n.top_p, GENCONFIG_UNSET, 0);
	/* An HF id through aliases.ini reads the same file. */
	struct genconfig a = gen_of("meta-llama/Llama-3.1-8B-Instruct");
	assert_true(a.present);
	assert_double_near(a.top_p, 0.9, 0);
}

/* A Hugging Face snapshot folder: generation_config.json beside
 * config.json is read, as transformers and vLLM read it; a bad value is
 * one line naming the file and the key, and the model does not load. */
static void a_snapshots_file_is_read_and_checked(void **state)
{
	(void)state;
	char dir[64], cfg[256], gen[256];
	test_tmpdir(dir, sizeof dir, "genconfig");
	snprintf(cfg, sizeof cfg, "%s/config.json", dir);
	snprintf(gen, sizeof gen, "%s/generation_config.json", dir);
	char want[320];
	assert_int_equal(genconfig_path(cfg, want, sizeof want), 0);
	assert_string_equal(want, gen);
	assert_int_equal(genconfig_path("models/yi-34b.json", want, sizeof want), 0);
	assert_string_equal(want, "models/generation_config/yi-34b.json");
	test_write_text(cfg, "{\"model_type\": \"llama\", \"num_hidden_layers\": 2, \"hidden_size\": 64, "
			"\"intermediate_size\": 128, \"num_attention_heads\": 4, \"vocab_size\": 1000}");
	struct model m;
	struct err e;
	assert_int_equal(model_load(&m, cfg, &e), 0);
	assert_false(m.gen.present);
	test_write_text(gen, "{\"top_k\": 40, \"temperature\": null, \"repetition_penalty\": 1.0}");
	assert_int_equal(model_load(&m, cfg, &e), 0);
	assert_true(m.gen.present);
	assert_int_equal(m.gen.top_k, 40);
	assert_double_near(m.gen.temperature, GENCONFIG_UNSET, 0); /* null: absent, as vLLM */
	assert_false(genconfig_penalty(&m.gen));                     /* 1.0: no penalty */
	const struct sampling_params none = { NS, NS, NS, NS };
	assert_int_equal(sampling_path(&none, true, &m.gen, 1000), SAMPLER_TOP_K);
	static const struct {
		const char *text, *key;
	} bad[] = {
		{ "{\"top_p\": 0}", "top_p" },
		{ "{\"top_p\": 1.5}", "top_p" },
		{ "{\"temperature\": -0.1}", "temperature" },
		{ "{\"temperature\": \"hot\"}", "temperature" },
		{ "{\"top_k\": 2.5}", "top_k" },
		{ "{\"top_k\": -2}", "top_k" },
		{ "{\"min_p\": 2}", "min_p" },
		{ "{\"repetition_penalty\": 0}", "repetition_penalty" },
	};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		test_write_text(gen, bad[i].text);
		assert_int_equal(model_load(&m, cfg, &e), -1);
		char head[300];
		snprintf(head, sizeof head, "%s: %s: expected ", gen, bad[i].key);
		assert_non_null(strstr(e.msg, head));
		assert_null(strchr(e.msg, '\n'));
	}
	test_write_text(gen, "{\"top_p\": 0.9,");
	assert_int_equal(model_load(&m, cfg, &e), -1);
	snprintf(want, sizeof want, "%s:1:", gen);
	assert_non_null(strstr(e.msg, want));
	test_write_text(gen, "[1]");
	assert_int_equal(model_load(&m, cfg, &e), -1);
	assert_non_null(strstr(e.msg, "expected a JSON object"));
	test_rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(the_path_follows_vllms_sampler),
		cmocka_unit_test(the_paths_cost_what_they_measured),
		cmocka_unit_test(a_runs_itl_follows_the_path),
		cmocka_unit_test(the_shipped_files_hold_the_publishers_values),
		cmocka_unit_test(a_snapshots_file_is_read_and_checked),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
