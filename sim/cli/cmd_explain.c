/*
 * servesim explain: why a step takes what it takes (per operator: FLOPs,
 * bytes, time, the bound and the fraction of peak achieved), and, for a
 * whole run, where TTFT and ITL went.
 */
#include <getopt.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "catalog.h"
#include "cli.h"
#include "list.h"
#include "num.h"
#include "overhead.h"
#include "report.h"
#include "run.h"
#include "steptime.h"

static void help(void)
{
	printf("usage: servesim explain --batch SPEC [--model M] [--hardware H] [--weights P]\n"
	       "                        [--tp N] [--kv-cache-dtype auto|fp8] [--ideal] [--format text|json]\n"
	       "       servesim explain SCENARIO [--set S.K=V]… [--format text|json]\n\n"
	       "One step: SPEC is a comma list of prefill:TOKENS[@CACHED] (a chunk of TOKENS\n"
	       "after CACHED tokens already in the KV cache) and decode:[COUNTx]CONTEXT\n"
	       "(COUNT sequences each reading CONTEXT tokens of KV), e.g.\n"
	       "  --batch prefill:2000,decode:64x1000\n"
	       "Prints each operator's FLOPs, bytes, time, whether compute or memory bounds\n"
	       "it and the fraction of the device's peak it achieves. --ideal sets every\n"
	       "efficiency to 1 and the overheads to 0 (the datasheet line).\n\n"
	       "A scenario: simulates it and prints where the mean TTFT went (API path,\n"
	       "queue, own prefill, steps shared with other requests, waiting between\n"
	       "chunks) and the mean ITL (weights, KV reads, prefill chunks sharing the\n"
	       "step, overhead).\n");
}

/* The most sequences one decode item may name, and the most tokens of a
 * prompt, a cached prefix or a context (a config's integers stop at
 * 2^31 - 1 too): a count of 10^12 looped for hours, and token sums past
 * int64 overflowed. vLLM batches hold thousands of sequences at most. */
#define BATCH_MAX_COUNT 1000000
#define BATCH_MAX_TOKENS INT32_MAX

/* Adds the items of spec to step; -1 with e on a malformed item. */
static int parse_batch(const char *spec, const struct perf *p, struct perf_step *step,
		       int64_t *n_prefill, int64_t *n_decode, struct err *e)
{
	char tok[256];
	int got;
	for (const char *cur = spec; (got = list_next(&cur, tok, sizeof tok)) != 0;) {
		char *colon = got > 0 ? strchr(tok, ':') : NULL;
		int64_t a = 1, b = 0;
		if (colon && !strncmp(tok, "prefill:", 8)) {
			char *at = strchr(colon + 1, '@');
			if (at)
				*at = '\0';
			if (num_parse_int64(colon + 1, &a) || a < 1 || a > BATCH_MAX_TOKENS ||
			    (at && (num_parse_int64(at + 1, &b) || b < 0 || b > BATCH_MAX_TOKENS)))
				goto bad;
			perf_step_add(step, p, a, b, true);
			(*n_prefill)++;
		} else if (colon && !strncmp(tok, "decode:", 7)) {
			char *x = strchr(colon + 1, 'x');
			if (x) {
				*x = '\0';
				if (num_parse_int64(colon + 1, &a) || a < 1 || a > BATCH_MAX_COUNT ||
				    num_parse_int64(x + 1, &b))
					goto bad;
			} else if (num_parse_int64(colon + 1, &b)) {
				goto bad;
			}
			if (b < 1 || b > BATCH_MAX_TOKENS)
				goto bad;
			for (int64_t i = 0; i < a; i++)
				perf_step_add(step, p, 1, b, true);
			*n_decode += a;
		} else {
			goto bad;
		}
	}
	if (step->seqs == 0)
		return err_set(e, "--batch: expected at least one item");
	return 0;
bad:
	return err_set(e, "--batch: expected prefill:TOKENS[@CACHED] or decode:[COUNTx]CONTEXT (TOKENS and CONTEXT from 1, CACHED from 0, each to %d; COUNT from 1 to %d), got '%s'",
		       BATCH_MAX_TOKENS, BATCH_MAX_COUNT, spec);
}

/* Whether operator row i's compute efficiency came from the profile's
 * measured GEMM (steptime.c's cite_gemm): the GEMM rows, compute-bound,
 * with [arch] matmul_bf16_tflops. Then "measured" gets the figures and
 * the profile's [arch] source. */
static bool measured_gemm(const struct perf *p, int i, const struct perf_op *op, char *measured, size_t cap)
{
	if (!p->gemm_measured || !op->compute_bound || (i != PERF_DENSE && i != PERF_LM_HEAD))
		return false;
	const struct hw_arch *a = &p->hw->arch;
	int len = snprintf(measured, cap, "measured: matmul_bf16_tflops = %g", a->matmul_bf16_tflops);
	double low = i == PERF_DENSE ? p->dense_low : p->lm_head_low;   /* its low-precision share */
	if (len > 0 && (size_t)len < cap && p->gemm_lp_measured && low > 0)
		len += snprintf(measured + len, cap - (size_t)len, ", matmul_fp8_tflops = %g, matmul_fp4_tflops = %g",
				a->matmul_fp8_tflops, a->matmul_fp4_tflops);
	if (len > 0 && (size_t)len < cap)
		snprintf(measured + len, cap - (size_t)len, " (%s [arch] source: %s)", p->hw->id,
			 p->hw->source_arch[0] ? p->hw->source_arch : "none given");
	return true;
}

/* Which kernel each operator row ran, the efficiency applied to its
 * bounding resource's peak, and where that number comes from (the
 * profile's measured GEMM where it set the number). */
static void print_kernels(const struct perf *p, const struct perf_op *ops)
{
	if (!p->backend)
		return;
	printf("\nkernels (backend %s; efficiency of the bounding peak, its source):\n", p->backend->name);
	for (int i = 0; i < PERF_N_OPS; i++) {
		const struct perf_op *op = &ops[i];
		if (op->time_s <= 0 || !op->kernel)
			continue;
		printf("  %-18s %s, %.2f\n  %-18s   %s\n", op->name, op->kernel, op->eff, "",
		       op->source ? op->source : "");
		char measured[INI_VALUE_MAX + 256];
		if (measured_gemm(p, i, op, measured, sizeof measured))
			printf("  %-18s   %s\n", "", measured);
		if (i == PERF_EXPERTS && p->shared_stream && p->shared_bytes > 0)
			printf("  %-18s   %s\n", "",
			       "less the shared experts' time on their second stream, up to the calls' fixed part, in steps of <= 256 tokens (perf/moeshared.c: vllm-project/vllm#26440, #28406; estimate)");
	}
	if (p->backend->kernel_us > 0)
		printf("  %-18s %.0f + %.0f kernels a layer at %.1f us each\n  %-18s   %s\n", "launch floor",
		       p->backend->gemm_kernels, p->backend->attn_kernels, p->backend->kernel_us, "",
		       p->backend->launch_source);
}

/* The config fields the model file left out (model.h): a line of text, or
 * a JSON object under "model_defaulted"; nothing when the config gave them
 * all (fields derived as transformers derives them, such as head_dim, are
 * left to `servesim model`). */
static void print_model_defaults(const struct model *m)
{
	char text[1024];
	model_defaults_text(m, false, text, sizeof text);
	if (text[0])
		printf("%s: not in its config, %s's defaults (transformers): %s\n", m->id,
		       m->defaults_from ? m->defaults_from : "the architecture", text);
}

static void json_model_defaults(json_t *o, const struct model *m)
{
	json_t *d = json_object();
	for (int i = 0; i < m->n_defaulted; i++) {
		if (m->defaulted[i].derived)
			continue;
		json_t *v = json_loads(m->defaulted[i].value, JSON_DECODE_ANY, NULL);
		json_object_set_new(d, m->defaulted[i].key, v ? v : json_string(m->defaulted[i].value));
	}
	if (json_object_size(d))
		json_object_set_new(o, "model_defaulted", d);
	else
		json_decref(d);
}

/* What bounds an operator row: "none" (no time), "fixed" (no peak to run
 * against, or no FLOPs and no device-memory bytes, e.g. small kernels
 * whose tensors stay in the L2 and whose time is their launch floors),
 * else the roofline side its time came from. */
static const char *op_bound(const struct perf_op *op)
{
	if (op->time_s <= 0)
		return "none";
	if ((op->peak_flops == 0 && op->peak_bytes_s == 0) || (op->flops == 0 && op->bytes == 0))
		return "fixed";
	return op->compute_bound ? "compute" : "memory";
}

static int explain_step(const struct scenario *sc, const char *batch, bool ideal,
			enum out_format fmt)
{
	struct err e;
	struct model m;
	struct hw_profile hw;
	if (model_load_named(&m, sc->model, &e) || hw_load_named(&hw, sc->hardware, &e))
		return cli_fail("explain", &e);
	const struct precision *w = precision_find(sc->weights[0] ? sc->weights : m.weights);
	if (!w) {
		err_set(&e, "--weights: expected a precision (see servesim ceiling --help), got '%s'", sc->weights);
		return cli_fail("explain", &e);
	}
	/* The step model the scenario's engine would build (its own builder,
	 * so the overheads are the run's: vLLM's async scheduling, graphs,
	 * the sampler; a llama.cpp server's layers split with the CPU). */
	struct hw_profile cpu_hw;
	if (sc->engine.cls->cpu_offload && hw_load_named(&cpu_hw, sc->engine.llama.cpu_hardware, &e))
		return cli_fail("explain", &e);
	struct engine_setup su = { .cfg = &sc->engine, .path = sc->path, .model = &m, .hw = &hw, .weights = w,
				   .cpu_hw = sc->engine.cls->cpu_offload ? &cpu_hw : NULL };
	struct step_model sm;
	if (sc->engine.cls->step_model(&su, &sm, &e))
		return cli_fail("explain", &e);
	struct perf *p = &sm.dev;   /* the batch is laid out on the device's */
	if (ideal) {
		p->overhead = NULL;
		perf_ideal(p);
		if (sm.cpu_part)
			perf_ideal(&sm.cpu);
		sm.xfer_s_per_token = 0;
	}
	struct perf_step step;
	perf_step_clear(&step);
	int64_t n_pre = 0, n_dec = 0;
	if (parse_batch(batch, p, &step, &n_pre, &n_dec, &e))
		return cli_fail("explain", &e);
	struct perf_op ops[PERF_N_OPS];
	double total = step_model_ops(&sm, &step, ops);
	if (fmt == FMT_JSON) {
		json_t *o = json_object(), *arr = json_array();
		json_object_set_new(o, "model", json_string(m.id));
		json_object_set_new(o, "hardware", json_string(hw.id));
		json_object_set_new(o, "weights", json_string(w->name));
		json_object_set_new(o, "tensor_parallel_size", json_integer(sc->engine.tensor_parallel_size));
		json_object_set_new(o, "pipeline_parallel_size", json_integer(sc->engine.pipeline_parallel_size));
		json_object_set_new(o, "tokens", json_integer(step.tokens));
		json_object_set_new(o, "prefill_chunks", json_integer(n_pre));
		json_object_set_new(o, "decodes", json_integer(n_dec));
		for (int i = 0; i < PERF_N_OPS; i++) {
			const struct perf_op *op = &ops[i];
			json_t *r = json_object();
			json_object_set_new(r, "operator", json_string(op->name));
			json_object_set_new(r, "flops", json_real(op->flops));
			json_object_set_new(r, "bytes", json_real(op->bytes));
			json_object_set_new(r, "time_ms", json_real(op->time_s * 1e3));
			json_object_set_new(r, "bound", json_string(op_bound(op)));
			double frac = op->time_s <= 0 ? 0 : op->compute_bound ?
				      op->flops / op->time_s / op->peak_flops :
				      op->peak_bytes_s > 0 ? op->bytes / op->time_s / op->peak_bytes_s : 0;
			json_object_set_new(r, "fraction_of_peak", json_real(frac));
			if (op->kernel) {
				json_object_set_new(r, "kernel", json_string(op->kernel));
				json_object_set_new(r, "efficiency", json_real(op->eff));
				json_object_set_new(r, "source", json_string(op->source ? op->source : ""));
				char measured[INI_VALUE_MAX + 256];
				if (measured_gemm(p, i, op, measured, sizeof measured))
					json_object_set_new(r, "measured", json_string(measured));
			}
			json_array_append_new(arr, r);
		}
		json_object_set_new(o, "operators", arr);
		json_object_set_new(o, "backend", json_string(p->backend ? p->backend->name : "ideal"));
		json_object_set_new(o, "step_ms", json_real(total * 1e3));
		json_model_defaults(o, &m);
		if (sm.cpu_part) {   /* a llama.cpp server's num_gpu split */
			json_object_set_new(o, "device_layer_share", json_real(sm.dev_part ? sm.dev_frac : 0));
			json_object_set_new(o, "cpu_hardware", json_string(sm.cpu.hw->id));
		}
		return cli_print_json(o);
	}
	printf("One step of %s on %s (%s weights, tensor parallel %lld, pipeline parallel %lld): %lld tokens, %lld prefill chunk%s, %lld decode%s\n",
	       m.id, hw.name, w->name, (long long)sc->engine.tensor_parallel_size,
	       (long long)sc->engine.pipeline_parallel_size, (long long)step.tokens,
	       (long long)n_pre, n_pre == 1 ? "" : "s", (long long)n_dec, n_dec == 1 ? "" : "s");
	printf("%s\n", ideal ? "datasheet peaks, efficiencies 1, no overhead" :
			       "achievable efficiencies of the profile");
	print_model_defaults(&m);
	if (sm.cpu_part)
		printf("layers split (num_gpu): %.0f%% of the repeating layers on %s, the rest on %s, the LM head on %s;\n"
		       "each per-layer row blends the two parts, its bound and fraction of peak the device's\n",
		       100 * (sm.dev_part ? sm.dev_frac : 0), hw.id, sm.cpu.hw->id, sm.output_on_dev ? hw.id : sm.cpu.hw->id);
	if (sc->engine.pipeline_parallel_size > 1) {
		double mb = fmin((double)sc->engine.pipeline_parallel_size, (double)step.seqs);
		printf("pipeline: rows are one microbatch (1/%.0f of the batch) through all %lld stages, each stage's GPU doing 1/%lld of them;\n"
		       "the bubble is the rest of the step (stage hops, microbatches waiting)\n",
		       mb, (long long)sc->engine.pipeline_parallel_size,
		       (long long)sc->engine.pipeline_parallel_size);
	}
	putchar('\n');
	printf("%-18s %12s %10s %10s %8s %9s\n", "operator (per GPU)", "GFLOP", "GB", "time ms", "bound",
	       "of peak");
	for (int i = 0; i < PERF_N_OPS; i++) {
		const struct perf_op *op = &ops[i];
		if (op->time_s <= 0)
			continue;
		bool fixed = !strcmp(op_bound(op), "fixed");
		double frac = op->compute_bound ? op->flops / op->time_s / op->peak_flops :
			      op->peak_bytes_s > 0 ? op->bytes / op->time_s / op->peak_bytes_s : 0;
		if (fixed)
			printf("%-18s %12s %10s %10.3f %8s %9s\n", op->name, "-", "-", op->time_s * 1e3, "fixed", "-");
		else
			printf("%-18s %12.1f %10.3f %10.3f %8s %8.0f%%\n", op->name, op->flops / 1e9,
			       op->bytes / 1e9, op->time_s * 1e3, op->compute_bound ? "compute" : "memory",
			       100 * frac);
	}
	printf("%-18s %12s %10s %10.3f\n", "step", "", "", total * 1e3);
	print_kernels(p, ops);
	return EXIT_OK;
}

static int explain_run(const struct scenario *sc, enum out_format fmt)
{
	struct err e;
	struct run_result res;
	if (run_simulate(sc, &res, &e)) {
		run_result_free(&res);
		return cli_fail("explain", &e);
	}
	struct group_metrics *g = &res.all;
	const struct engine_stats *es = &res.engine;
	int rc = EXIT_OK;
	if (fmt == FMT_JSON) {
		json_t *o = json_object();
		json_object_set_new(o, "scenario", json_string(sc->path));
		json_object_set_new(o, "mean_ttft_ms", json_real(1e3 * samples_mean(&g->ttft)));
		json_object_set_new(o, "mean_ttft_breakdown", report_ttft_breakdown(g));
		json_object_set_new(o, "mean_itl_ms", json_real(1e3 * loghist_mean(&g->itl)));
		json_object_set_new(o, "mean_itl_breakdown", report_itl_breakdown(es));
		json_model_defaults(o, &res.model);
		rc = cli_print_json(o);
	} else {
		double n = g->completed ? (double)g->completed : 1;
		double nd = es->itl_tokens ? (double)es->itl_tokens : 1;
		double ttft = 1e3 * samples_mean(&g->ttft);
		printf("%s: %s on %s, %lld requests\n", sc->path, res.model.id, res.hw.id,
		       (long long)g->completed);
		print_model_defaults(&res.model);
		putchar('\n');
		printf("Mean TTFT %.2f ms:\n", ttft);
		const struct {
			const char *what;
			double ms;
		} t[] = {
			{ "API and tokenizer path", 1e3 * g->sum_ttft_overhead_s / n },
			{ "  of which queued on the API server", 1e3 * g->sum_ttft_api_queue_s / n },
			{ "queue (before first scheduled)", 1e3 * g->sum_ttft_queue_s / n },
			{ "waiting for the batch queue", 1e3 * g->sum_ttft_batch_queue_s / n },
			{ "own prefill compute", 1e3 * g->sum_ttft_own_s / n },
			{ "steps shared with other requests", 1e3 * g->sum_ttft_shared_s / n },
			{ "CUDA-graph padding", 1e3 * g->sum_ttft_graph_pad_s / n },
			{ "waiting between chunks", 1e3 * g->sum_ttft_between_s / n },
			{ "output path (detokenize, SSE)", 1e3 * g->sum_ttft_output_s / n },
		};
		/* The rows of vLLM's newer timing show where it is on (issue 18). */
		for (size_t i = 0; i < sizeof t / sizeof *t; i++)
			if ((i != 1 && i != 3 && i != 6 && i != 8) || es->timing)
				printf("  %-36s %9.2f ms  %5.1f%%\n", t[i].what, t[i].ms,
				       ttft > 0 ? 100 * t[i].ms / ttft : 0);
		if (es->vllm_version)
			printf("  (vLLM %s timing: async scheduling %s; %lld steps replayed a CUDA graph, %lld ran eager, largest capture size %lld)\n",
			       es->vllm_version, es->async_scheduling ? "on" : "off",
			       (long long)es->graph_steps, (long long)es->eager_steps,
			       (long long)es->max_capture_size);
		if (es->sampler)
			printf("  (sampler path: %s%s; from the workload's sampling parameters and the model's generation_config)\n",
			       es->sampler, es->sampler_penalties ? ", with penalties" : "");
		double itl = 1e3 * (es->itl_weights_s + es->itl_kv_s + es->itl_prefill_s + es->itl_overhead_s +
				    es->itl_pipeline_s) / nd;
		printf("\nMean step seen by a decode token %.2f ms (mean ITL %.2f ms):\n", itl,
		       1e3 * loghist_mean(&g->itl));
		const struct {
			const char *what;
			double ms;
		} d[] = {
			{ "reading weights", 1e3 * es->itl_weights_s / nd },
			{ "reading the KV cache", 1e3 * es->itl_kv_s / nd },
			{ "prefill chunks sharing the step", 1e3 * es->itl_prefill_s / nd },
			{ "step overhead", 1e3 * es->itl_overhead_s / nd },
			{ "pipeline bubble (hops, waits)", 1e3 * es->itl_pipeline_s / nd },
		};
		for (size_t i = 0; i < sizeof d / sizeof *d; i++)
			if (i + 1 < sizeof d / sizeof *d || es->itl_pipeline_s > 0)
				printf("  %-36s %9.2f ms  %5.1f%%\n", d[i].what, d[i].ms, itl > 0 ? 100 * d[i].ms / itl : 0);
	}
	run_result_free(&res);
	return rc;
}

int cmd_explain(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "batch", required_argument, NULL, 'b' },
		{ "format", required_argument, NULL, 'f' },
		{ "hardware", required_argument, NULL, 'H' },
		{ "help", no_argument, NULL, 'h' },
		{ "ideal", no_argument, NULL, 'i' },
		{ "kv-cache-dtype", required_argument, NULL, 'k' },
		{ "model", required_argument, NULL, 'm' },
		{ "set", required_argument, NULL, 'S' },
		{ "tp", required_argument, NULL, 't' },
		{ "weights", required_argument, NULL, 'w' },
		{ 0 },
	};
	const char *batch = NULL;
	bool ideal = false;
	enum out_format fmt = FMT_TEXT;
	struct inidoc ov = { 0 };
	struct err e;
	int c, bad = 0;
	optind = 1;
	int li = -1;
	while ((c = getopt_long(argc, argv, "", opts, &li)) != -1 && !bad) {
		const char *key = NULL;
		switch (c) {
		case 'b': batch = optarg; break;
		case 'f':
			bad = cli_parse_format(optarg, 1u << FMT_TEXT | 1u << FMT_JSON, &fmt, &e);
			break;
		case 'H': key = "run.hardware"; break;
		case 'h': help(); inidoc_free(&ov); return EXIT_OK;
		case 'i': ideal = true; break;
		case 'k': key = "engine.kv_cache_dtype"; break;
		case 'm': key = "run.model"; break;
		case 'S': bad = inidoc_add_override(&ov, optarg, &e); break;
		case 't': key = "engine.tensor_parallel_size"; break;
		case 'w': key = "run.weights"; break;
		default: inidoc_free(&ov); return cli_bad_option("explain", argv);
		}
		if (key) {   /* named in errors as the option typed (--tp 0, not --set) */
			char option[64];
			snprintf(option, sizeof option, "--%s", li >= 0 ? opts[li].name : key);
			bad = inidoc_add_option(&ov, option, key, optarg, &e);
		}
		li = -1;
	}
	if (bad) {
		inidoc_free(&ov);
		return cli_fail("explain", &e);
	}
	if (optind < argc - 1 || (batch && optind < argc) || (!batch && optind != argc - 1)) {
		inidoc_free(&ov);
		return cli_misuse("explain", "expected --batch SPEC or one scenario");
	}
	char path[4096];
	if (!batch && catalog_resolve(CATALOG_SCENARIOS, argv[optind], path, sizeof path, &e)) {
		inidoc_free(&ov);
		return cli_fail("explain", &e);
	}
	struct scenario sc;
	int rc = scenario_load(&sc, batch ? NULL : path, &ov, &e);
	inidoc_free(&ov);
	if (rc)
		return cli_fail("explain", &e);
	return batch ? explain_step(&sc, batch, ideal, fmt) : explain_run(&sc, fmt);
}
