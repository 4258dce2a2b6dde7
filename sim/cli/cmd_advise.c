/*
 * servesim advise: what limits a run and which of the seed's remedies help
 * it, each simulated (advise.h). On a scenario, or on a real run: a `vllm
 * bench serve` result (as validate reads it) and optionally a Prometheus
 * scrape of the server taken during the run.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "advise.h"
#include "catalog.h"
#include "cliplan.h"
#include "progress.h"
#include "promscrape.h"
#include "textfile.h"
#include "validate.h"
#include "xalloc.h"

/* A Prometheus scrape is kilobytes; a gigabyte is not one. */
#define ADVISE_MAX_SCRAPE_BYTES ((size_t)1 << 30)

static void help(void)
{
	printf("usage: servesim advise [SCENARIO] [--slo METRIC=VALUE,…] [--set S.K=V]…\n"
	       "                       [--replications N] [--jobs N] [--format text|json]\n"
	       "       servesim advise --result BENCH.json [--metrics SCRAPE.prom] [--hardware H]\n"
	       "                       [--model M] [--weights P] [--slo …] [--set S.K=V]…\n\n"
	       "Diagnoses what limits the run (SEED C26, C27, C29-C32): queueing before the first\n"
	       "step, prefill compute, a system prompt paid on every request, prefill chunks\n"
	       "interfering with decode, KV-pool pressure and preemption, weight-bandwidth-bound\n"
	       "decode, long-context KV reads. Then proposes the remedies that apply (shorten the\n"
	       "system prompt, prefix caching, raise or lower max_num_batched_tokens, fp8 weights,\n"
	       "fp8 KV cache, more KV memory, more tensor parallelism, a second replica, a\n"
	       "bandwidth- or compute-richer shipped GPU), simulates every one with the same\n"
	       "seeds, and ranks them by the gain on the failing metric (the SLO's worst, else\n"
	       "TTFT p99 or ITL p99), with the --set lines that apply each.\n\n"
	       "  --slo M=V,…         limits as servesim plan (default: the scenario's [slo])\n"
	       "  --result FILE       advise on a real run: a vllm bench serve --save-result JSON,\n"
	       "                      replayed as servesim validate replays it\n"
	       "  --metrics FILE      with --result: a Prometheus scrape of the server (reads\n"
	       "                      vllm:num_requests_waiting and vllm:num_preemptions)\n"
	       "  --hardware H, --model M, --weights P   with --result: as servesim validate\n"
	       "  --set S.K=V         override a scenario key first (repeatable)\n"
	       "  --replications N    seeds per simulation (default 3)\n"
	       "  --jobs N            simulations on N threads (default: all processors)\n"
	       "  --progress, --no-progress  the progress line on stderr (default: when it is a\n"
	       "                      terminal)\n"
	       "  --format F          text (default) or json\n\n"
	       "Example:\n"
	       "  servesim advise c17-kv-pressure\n");
}

/* The measured side of a real run into a->meas. */
static int measured(struct advise *a, const struct validate_result *r, const char *metrics, struct err *e)
{
	struct advise_measured *m = &a->meas;
	m->have = true;
	for (int k = 0; k < MEAS_N; k++)
		m->v[k] = NAN;
	m->waiting = NAN;
	const struct benchres *b = &r->meas;
	m->v[MEAS_REQUEST_THROUGHPUT] = b->request_throughput;
	m->v[MEAS_OUTPUT_THROUGHPUT] = b->output_throughput;
	m->v[MEAS_TTFT_P50] = b->ms[LAT_TTFT][BENCH_MEDIAN];
	m->v[MEAS_TTFT_P99] = b->ms[LAT_TTFT][BENCH_P99];
	m->v[MEAS_TPOT_P99] = b->ms[LAT_TPOT][BENCH_P99];
	m->v[MEAS_ITL_P50] = b->ms[LAT_ITL][BENCH_MEDIAN];
	m->v[MEAS_ITL_P99] = b->ms[LAT_ITL][BENCH_P99];
	m->v[MEAS_E2EL_P99] = b->ms[LAT_E2EL][BENCH_P99];
	if (!metrics)
		return 0;
	char *text = textfile_read(metrics, ADVISE_MAX_SCRAPE_BYTES, e);
	if (!text)
		return -1;
	struct promscrape s;
	int rc = promscrape_parse(&s, text, metrics, e);
	free(text);
	if (!rc) {
		bool found;
		double w = promscrape_sum(&s, "vllm:num_requests_waiting", &found);
		if (found)
			m->waiting = w;
		double p = promscrape_sum(&s, "vllm:num_preemptions_total", &found);
		if (!found)
			p = promscrape_sum(&s, "vllm:num_preemptions", &found);
		if (found)
			m->v[MEAS_PREEMPTIONS] = p;
	}
	promscrape_free(&s);
	return rc;
}

int cmd_advise(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "format", required_argument, NULL, 'f' },
		{ "hardware", required_argument, NULL, 'H' },
		{ "help", no_argument, NULL, 'h' },
		{ "jobs", required_argument, NULL, 'j' },
		{ "metrics", required_argument, NULL, 'M' },
		{ "model", required_argument, NULL, 'm' },
		{ "no-progress", no_argument, NULL, 1008 },
		{ "progress", no_argument, NULL, 1007 },
		{ "replications", required_argument, NULL, 'r' },
		{ "result", required_argument, NULL, 'R' },
		{ "set", required_argument, NULL, 'S' },
		{ "slo", required_argument, NULL, 's' },
		{ "weights", required_argument, NULL, 'w' },
		{ 0 },
	};
	struct cliplan cp;
	struct advise *a = xcalloc(1, sizeof *a);
	struct validate_opts vo = { 0 };
	const char *result = NULL, *metrics = NULL;
	bool slo_given = false;
	struct err e;
	int c, rc = EXIT_BAD_INPUT;
	int64_t v;
	cliplan_init(&cp, "advise", 3);
	if (cliplan_args(&cp, opts, &argc, &argv, &e))   /* vLLM's flags (vllmflags.h) */
		goto fail;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		int bad = 0;
		switch (c) {
		case 'f': bad = cli_parse_format(optarg, 1u << FMT_TEXT | 1u << FMT_JSON, &cp.fmt, &e); break;
		case 'H': vo.hardware = optarg; break;
		case 'h': help(); rc = EXIT_OK; goto out;
		case 'j':
			bad = cliplan_int("--jobs", optarg, 1, 4096, "a thread count >= 1", &v, &e);
			cp.jobs = (int)v;
			break;
		case 'M': metrics = optarg; break;
		case 'm': vo.model = optarg; break;
		case 'r':
			bad = cliplan_int("--replications", optarg, 1, 10000, "a count of seeds >= 1", &v, &e);
			cp.replications = (int)v;
			break;
		case 'R': result = optarg; break;
		case 'S': bad = inidoc_add_override(&cp.ov, optarg, &e); break;
		case 's': bad = plan_slo_parse(&a->slo, optarg, &e); slo_given = true; break;
		case 'w': vo.weights = optarg; break;
		case 1007:
		case 1008: bad = cliplan_option(&cp, c, optarg, &e) < 0; break;
		default: rc = cli_bad_option("advise", argv); goto out;
		}
		if (bad)
			goto fail;
	}
	if (!result && (metrics || vo.hardware || vo.model || vo.weights)) {
		rc = cli_misuse("advise", "--metrics, --hardware, --model, --weights: expected --result with them (on a scenario, use --set run.hardware=… instead)");
		goto out;
	}
	if (result) {
		if (optind < argc) {
			rc = cli_misuse("advise", "expected a SCENARIO or --result, not both");
			goto out;
		}
		struct validate_result *vr = xcalloc(1, sizeof *vr);
		vo.overrides = &cp.ov;
		int bad = validate_run(vr, result, &vo, &e) || measured(a, vr, metrics, &e);
		if (!bad)
			a->sc = vr->sc;
		free(vr);
		if (bad)
			goto fail;
	} else if (cliplan_scenario(&cp, argc, argv, optind, &a->sc, &e)) {
		goto fail;
	}
	if (!slo_given)
		plan_slo_from_scenario(&a->slo, &a->sc);
	a->replications = cp.replications;
	a->jobs = cp.jobs;
	a->progress = cp.progress;
	if (advise_run(a, &e))
		goto fail;
	progress_destroy(cp.progress);   /* its line off the terminal before the result */
	cp.progress = NULL;
	json_t *doc = advise_json(a);
	if (result)
		json_object_set_new(doc, "scenario", json_string(result));
	if (cp.fmt == FMT_JSON) {
		rc = cli_print_json(doc);   /* servesim.version, as every JSON result; frees doc */
		goto out;
	}
	advise_text(stdout, doc);
	json_decref(doc);
	rc = fflush(stdout) || ferror(stdout) ? EXIT_FAIL : EXIT_OK;
	goto out;
fail:
	rc = cli_fail("advise", &e);
out:
	advise_free(a);
	free(a);
	cliplan_free(&cp);
	return rc;
}
