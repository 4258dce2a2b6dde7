/*
 * servesim plan: per candidate configuration (hardware × tensor parallel
 * size × weight precision), the highest load within an SLO, the replicas
 * and GPUs a target rate needs, their cost, ranked, and what binds each.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "catalog.h"
#include "engine.h"
#include "cliplan.h"
#include "list.h"
#include "plandoc.h"
#include "planlayout.h"
#include "planreplicas.h"
#include "precision.h"
#include "xalloc.h"

static void help(void)
{
	printf("usage: servesim plan [SCENARIO] --slo METRIC=VALUE[,…] [--target-rate R]\n"
	       "                     [--hardware H,…] [--tp N,…] [--pp N,…] [--weights P,…]\n"
	       "                     [--by rate|concurrency] [--gpu-budget G]\n"
	       "                     [--confidence C] [--tolerance F] [--max-load X] [--duration S]\n"
	       "                     [--no-cost | --cost cloud|own [--years Y] [--power-usd-kwh P]\n"
	       "                     [--utilization U]] [--fixed] [--search K=V,…]… [--confirm B]\n"
	       "                     [--set S.K=V]… [--replications N] [--jobs N] [--shard K/N]\n"
	       "                     [--format text|csv|json] [--plot DIR] [--svg]\n\n"
	       "For each candidate (every combination of --hardware, --tp, --pp and --weights; each\n"
	       "defaults to the scenario's own), finds the highest request rate (or, with --by\n"
	       "concurrency, max_concurrency) whose SLO statistics stay within their limits,\n"
	       "then the replicas and GPUs for --target-rate and what they cost, ranked. Each\n"
	       "candidate is first tuned: its vLLM settings are searched for the highest rate\n"
	       "within the SLO (--fixed: the scenario's own settings), and the output names the\n"
	       "chosen setting as --set flags, with the runners-up.\n\n"
	       "  --slo M=V,…         limits: ttft, tpot, itl or e2el, then mean, p50, p90, p95 or\n"
	       "                      p99, then ms or s: e.g. ttft_p99_ms=2000,itl_p99_ms=50\n"
	       "                      (default: the scenario's [slo], read as p99 limits)\n"
	       "  --target-rate R     requests per second to serve (replicas = ceil(R / max rate))\n"
	       "  --simulate-replicas check the replicas by simulating the whole target through a\n"
	       "                      cluster of them ([cluster] router) instead of dividing rates\n"
	       "  --hardware H,…      device ids (servesim list)\n"
	       "  --tp N,…            tensor parallel sizes\n"
	       "  --pp N,…            pipeline parallel sizes\n"
	       "  --weights P,…       weight precisions (bf16, fp8, int4, …)\n"
	       "  --gpu-budget G      per configuration, every layout of G GPUs: its engines colocated\n"
	       "                      or split xPyD (x prefill, y decode; [cluster] kv_transfer), each\n"
	       "                      searched; the best layout and its runners-up are listed\n"
	       "  --no-cost           no prices: rank by GPUs (or rate per GPU)\n"
	       CLIPLAN_SEARCH_HELP
	       CLIPLAN_HELP
	       "\nDefault replications: 5. Example:\n"
	       "  servesim plan c13-bench-serve --slo ttft_p99_ms=2000,itl_p99_ms=50 --target-rate 40 \\\n"
	       "      --hardware h100-sxm,a100-80gb-sxm,l40s --tp 1,2\n");
}

#define MAX_LIST 64

/* A comma-separated list into out[] (strings into buf). */
static int split(const char *flag, const char *s, char out[][INI_VALUE_MAX], int *n, struct err *e)
{
	*n = 0;
	char tok[INI_VALUE_MAX];
	int rc;
	for (const char *cur = s; (rc = list_next(&cur, tok, sizeof tok)) != 0;) {
		if (rc < 0 || *n == MAX_LIST)
			return err_set(e, "%s: expected a comma-separated list of up to %d names, got '%s'", flag,
				       MAX_LIST, s);
		memcpy(out[(*n)++], tok, sizeof tok);
	}
	return 0;
}

struct lists {
	char hw[MAX_LIST][INI_VALUE_MAX], tp[MAX_LIST][INI_VALUE_MAX], pp[MAX_LIST][INI_VALUE_MAX];
	char w[MAX_LIST][INI_VALUE_MAX];
	int n_hw, n_tp, n_pp, n_w;
	bool hw_given, tp_given, pp_given, w_given;
};

static int check_lists(const struct lists *l, struct err *e)
{
	char path[4096];
	for (int i = 0; i < l->n_hw; i++)
		if (catalog_resolve(CATALOG_HARDWARE, l->hw[i], path, sizeof path, e))
			return err_prefix(e, "--hardware %s", l->hw[i]);
	for (int i = 0; i < l->n_tp; i++) {
		int64_t v;
		if (cliplan_int("--tp", l->tp[i], 1, 1024, "tensor parallel sizes >= 1 (e.g. 1,2,4,8)", &v, e))
			return -1;
	}
	for (int i = 0; i < l->n_pp; i++) {
		int64_t v;
		if (cliplan_int("--pp", l->pp[i], 1, 1024, "pipeline parallel sizes >= 1 (e.g. 1,2,4)", &v, e))
			return -1;
	}
	for (int i = 0; l->w_given && i < l->n_w; i++)
		if (!precision_find(l->w[i])) {
			char names[512];
			precision_names(names, sizeof names);
			return err_set(e, "--weights: expected precisions (%s), got '%s'", names, l->w[i]);
		}
	return 0;
}

/* With --gpu-budget, candidate i is layout k of configuration base
 * (engines engines of it); without, base = i and engines = 0. */
struct cand_map {
	int base, k;
	int64_t engines;
};

/* Configuration i's scenario: the base file, --set, then its hardware,
 * tp and weights, then (engines > 0) layout k; *ov gets those overrides
 * (the caller frees them). */
static int cand_scenario(const struct cliplan *cp, const struct lists *l, const struct cand_map *m,
			 struct scenario *sc, struct inidoc *ov, char *origin, size_t cap, struct err *e)
{
	int i = m->base;
	int ih = i / (l->n_tp * l->n_pp * l->n_w), it = i / (l->n_pp * l->n_w) % l->n_tp;
	int ip = i / l->n_w % l->n_pp, iw = i % l->n_w;
	memset(ov, 0, sizeof *ov);
	inidoc_add_overrides(ov, &cp->ov);
	int rc = inidoc_add_overridef(ov, e, "run.hardware=%s", l->hw[ih]) ||
		 inidoc_add_overridef(ov, e, "engine.tensor_parallel_size=%s", l->tp[it]) ||
		 (l->pp_given && inidoc_add_overridef(ov, e, "engine.pipeline_parallel_size=%s", l->pp[ip])) ||
		 (l->w_given && inidoc_add_overridef(ov, e, "run.weights=%s", l->w[iw])) ||
		 (m->engines && planlayout_overrides(ov, m->engines, m->k, e));
	rc = rc || scenario_load(sc, cp->scenario, ov, e);
	if (l->hw_given)
		snprintf(origin, cap, "--hardware %s", l->hw[ih]);
	else
		snprintf(origin, cap, "%s: [run] hardware = %s", cp->scenario ? cp->scenario : "built-in default",
			 l->hw[ih]);
	return rc;
}

int cmd_plan(int argc, char **argv)
{
	static const struct option opts[] = {
		CLIPLAN_OPTIONS,
		CLIPLAN_SEARCH_OPTIONS,
		{ "gpu-budget", required_argument, NULL, 'G' },
		{ "hardware", required_argument, NULL, 'H' },
		{ "help", no_argument, NULL, 'h' },
		{ "no-cost", no_argument, NULL, 'n' },
		{ "slo", required_argument, NULL, 's' },
		{ "simulate-replicas", no_argument, NULL, 'S' },
		{ "target-rate", required_argument, NULL, 'r' },
		{ "pp", required_argument, NULL, 'p' },
		{ "tp", required_argument, NULL, 't' },
		{ "weights", required_argument, NULL, 'w' },
		{ 0 },
	};
	struct cliplan cp;
	struct plan_opts po;
	struct plan_slo slo = { 0 };
	struct lists *l = xcalloc(1, sizeof *l);
	struct plan_cand *cands = NULL;
	struct tune_cand *tc = NULL;
	struct tune_space space = { 0 };
	size_t n_sel = 0;
	double target = NAN;
	int64_t budget = 0;
	struct cand_map *map = NULL;
	bool cost = true, slo_given = false, simulate = false;
	struct err e;
	int c, rc = EXIT_BAD_INPUT, bad;
	cliplan_init(&cp, "plan", 5);
	if (cliplan_args(&cp, opts, &argc, &argv, &e))
		goto fail;
	while ((c = cliplan_next(&cp, argc, argv, opts, &e)) != -1) {
		if (c == CLIPLAN_BAD)
			goto fail;
		bad = 0;
		switch (c) {
		case 'G':
			bad = cliplan_int("--gpu-budget", optarg, 2, 4096, "GPUs >= 2 to lay out", &budget, &e);
			break;
		case 'H': bad = split("--hardware", optarg, l->hw, &l->n_hw, &e); l->hw_given = true; break;
		case 'h': help(); rc = EXIT_OK; goto out;
		case 'n': cost = false; break;
		case 'S': simulate = true; break;
		case 's': bad = plan_slo_parse(&slo, optarg, &e); slo_given = true; break;
		case 'r':
			bad = cliplan_double("--target-rate", optarg, 1e-9, 1e9, "requests per second > 0",
					     &target, &e);
			break;
		case 't': bad = split("--tp", optarg, l->tp, &l->n_tp, &e); l->tp_given = true; break;
		case 'p': bad = split("--pp", optarg, l->pp, &l->n_pp, &e); l->pp_given = true; break;
		case 'w': bad = split("--weights", optarg, l->w, &l->n_w, &e); l->w_given = true; break;
		default: rc = cli_bad_option("plan", argv); goto out;
		}
		if (bad)
			goto fail;
	}
	cliplan_search(&cp, &po);
	if (cliplan_cost_check(&cp, &e))
		goto fail;
	struct scenario sc;
	if (cliplan_scenario(&cp, argc, argv, optind, &sc, &e) || plan_check_searchable(&sc, &e))
		goto fail;
	if (!slo_given && !plan_slo_from_scenario(&slo, &sc)) {
		rc = cli_misuse("plan", "--slo: missing; expected limits such as --slo ttft_p99_ms=2000,itl_p99_ms=50 (or an [slo] section in the scenario)");
		goto out;
	}
	if (!l->hw_given)
		snprintf(l->hw[l->n_hw++], INI_VALUE_MAX, "%s", sc.hardware);
	if (!l->tp_given)
		snprintf(l->tp[l->n_tp++], INI_VALUE_MAX, "%lld", (long long)sc.engine.tensor_parallel_size);
	if (!l->pp_given)
		snprintf(l->pp[l->n_pp++], INI_VALUE_MAX, "%lld", (long long)sc.engine.pipeline_parallel_size);
	if (!l->w_given)
		l->n_w = 1;
	if (check_lists(l, &e) || cliplan_tune_space(&cp, &sc, &cp.ov, &space, &e))
		goto fail;
	int n_base = l->n_hw * l->n_tp * l->n_pp * l->n_w, total = 0;
	if (budget && sc.engine.cls->family != ENGINE_FAMILY_VLLM) {
		err_set(&e, "--gpu-budget: xPyD layouts need engine kind vllm (its KV connectors), got %s",
			sc.engine.cls->name);
		goto fail;
	}
	map = xcalloc((size_t)n_base * (budget ? (size_t)budget : 1), sizeof *map);
	for (int b = 0; b < n_base; b++) {
		if (!budget) {
			map[total++] = (struct cand_map){ .base = b };
			continue;
		}
		int64_t tp, pp;
		cliplan_int("--tp", l->tp[b / (l->n_pp * l->n_w) % l->n_tp], 1, 1024, "", &tp, &e);
		cliplan_int("--pp", l->pp[b / l->n_w % l->n_pp], 1, 1024, "", &pp, &e);
		int64_t engines = budget / (tp * pp);
		if (engines < 2) {
			err_set(&e, "--gpu-budget %lld: expected room for two engines of tp %lld x pp %lld (%lld GPUs)",
				(long long)budget, (long long)tp, (long long)pp, (long long)(2 * tp * pp));
			goto fail;
		}
		for (int k = 0; k < planlayout_count(engines); k++)
			map[total++] = (struct cand_map){ .base = b, .k = k, .engines = engines };
	}
	cands = xcalloc((size_t)total, sizeof *cands);
	tc = xcalloc((size_t)total, sizeof *tc);
	for (int i = 0; i < total; i++) {
		char origin[INI_VALUE_MAX + 64];
		struct plan_cand cd;
		struct inidoc ov;
		/* Every candidate is checked (price included), not only the
		 * shard's, so that every shard fails alike on bad input. */
		if (cand_scenario(&cp, l, &map[i], &sc, &ov, origin, sizeof origin, &e) ||
		    plan_cand_init(&cd, (size_t)i, &sc, false, origin, &e) ||
		    (cost && plan_cand_price(&cd, &cp.cost, origin, &e))) {
			inidoc_free(&ov);
			goto fail;
		}
		if (resultdoc_in_shard(&cp.shard, (size_t)i)) {
			tc[n_sel] = (struct tune_cand){ .path = cp.scenario, .ov = ov };
			cands[n_sel++] = cd;
		} else {
			inidoc_free(&ov);
		}
	}
	for (size_t i = 0; i < n_sel; i++)
		tc[i].cand = &cands[i];
	if (space.n)
		tune_run(tc, n_sel, &space, &slo, &po);
	else
		plan_search(cands, n_sel, &slo, &po);
	if (simulate) {
		if (isnan(target)) {
			rc = cli_misuse("plan", "--simulate-replicas: expected --target-rate with it");
			goto out;
		}
		for (size_t i = 0; i < n_sel; i++)   /* planreplicas.h */
			plan_simulate_replicas(&cands[i], &slo, &po, target);
	}
	json_t *doc = plandoc_build(cp.scenario, &cp.ov, &slo, &po, target, cost, (size_t)total, &cp.shard, cands,
				    n_sel, space.n ? tc : NULL, &space);
	if (budget) {   /* planlayout.h: each candidate's layout */
		json_object_set_new(doc, "gpu_budget", json_integer(budget));
		json_t *items = json_object_get(doc, "candidates");
		for (size_t i = 0; i < n_sel; i++) {
			const struct cand_map *m = &map[cands[i].index];
			planlayout_put(json_array_get(items, i), m->engines, m->k);
		}
	}
	if (cost && cp.cost.own)
		json_object_set_new(doc, "cost_basis", cliplan_cost_json(&cp.cost));
	rc = cliplan_emit(&cp, doc);
	goto out;
fail:
	rc = cli_fail("plan", &e);
out:
	for (size_t i = 0; i < n_sel; i++) {
		plan_cand_free(&cands[i]);
		tune_cand_free(&tc[i]);
		inidoc_free(&tc[i].ov);
	}
	free(tc);
	free(cands);
	free(map);
	free(l);
	cliplan_free(&cp);
	return rc;
}
