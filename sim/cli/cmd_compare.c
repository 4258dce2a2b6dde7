/*
 * servesim compare: one workload on several devices side by side (SEED
 * C22, C23, C31): decode ceiling, throughput and latency at the scenario's
 * load, the highest rate within the SLO, and cost.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "catalog.h"
#include "cliplan.h"
#include "comparedoc.h"
#include "list.h"
#include "planreplicas.h"
#include "xalloc.h"

static void help(void)
{
	printf("usage: servesim compare [SCENARIO] --hardware H1,H2,…|all [--slo METRIC=VALUE,…]\n"
	       "                        [--no-cost | --cost cloud|own [--years Y] [--power-usd-kwh P]\n"
	       "                        [--utilization U]] [--fixed] [--search K=V,…]… [--confirm B] [--set S.K=V]…\n"
	       "                        [--target-rate R [--simulate-replicas]] [--replications N] [--jobs N]\n"
	       "                        [--shard K/N] [--format text|csv|json] [--plot DIR] [--svg]\n\n"
	       "Runs the scenario on each device: the single-stream decode ceiling (bandwidth ÷\n"
	       "weight bytes, SEED C8), throughput and TTFT/ITL/E2EL percentiles at the scenario's\n"
	       "load, the highest request rate within the SLO (as servesim plan searches it),\n"
	       "$/hour, $ per 1M output tokens and output tok/s per $/hour. With an SLO, each\n"
	       "device is first tuned: its vLLM settings are searched for the highest rate within\n"
	       "the SLO, so devices are compared at their best (--fixed: the scenario's settings).\n\n"
	       "  --hardware H,…      device ids (servesim list), or 'all'\n"
	       "  --slo M=V,…         as servesim plan (default: the scenario's [slo] as p99 limits;\n"
	       "                      without either, no SLO search)\n"
	       "  --no-cost           no prices (devices without one can then be compared)\n"
	       "  --target-rate R     with an SLO: the replicas (copies of the scenario's deployment),\n"
	       "                      GPUs and $/hour each device needs for R req/s\n"
	       "  --simulate-replicas check those replicas by simulating the whole target through a\n"
	       "                      cluster of them ([cluster] router) instead of dividing rates\n"
	       CLIPLAN_SEARCH_HELP
	       CLIPLAN_HELP
	       "\nDefault replications: 3. Example:\n"
	       "  servesim compare c13-bench-serve --hardware a10g,l40s,a100-80gb-sxm,h100-sxm \\\n"
	       "      --slo ttft_p99_ms=2000,itl_p99_ms=50 --plot out/compare\n");
}

int cmd_compare(int argc, char **argv)
{
	static const struct option opts[] = {
		CLIPLAN_OPTIONS,
		CLIPLAN_SEARCH_OPTIONS,
		{ "hardware", required_argument, NULL, 'H' },
		{ "help", no_argument, NULL, 'h' },
		{ "no-cost", no_argument, NULL, 'n' },
		{ "simulate-replicas", no_argument, NULL, 'S' },
		{ "slo", required_argument, NULL, 's' },
		{ "target-rate", required_argument, NULL, 'r' },
		{ 0 },
	};
	struct cliplan cp;
	struct plan_opts po;
	struct plan_slo slo = { 0 };
	const char *hw_list = NULL;
	char **ids = NULL;
	size_t n_ids = 0, n_sel = 0;
	struct compare_row *rows = NULL;
	struct tune_cand *tc = NULL;
	struct tune_space space = { 0 };
	bool cost = true, slo_given = false, simulate = false;
	double target = NAN;
	struct err e;
	int c, rc = EXIT_BAD_INPUT;
	cliplan_init(&cp, "compare", 3);
	if (cliplan_args(&cp, opts, &argc, &argv, &e))
		goto fail;
	while ((c = cliplan_next(&cp, argc, argv, opts, &e)) != -1) {
		if (c == CLIPLAN_BAD)
			goto fail;
		if (c == 'h') {
			help();
			rc = EXIT_OK;
			goto out;
		} else if (c == 'H') {
			hw_list = optarg;
		} else if (c == 'n') {
			cost = false;
		} else if (c == 'S') {
			simulate = true;
		} else if (c == 'r') {
			if (cliplan_double("--target-rate", optarg, 1e-9, 1e9, "requests per second > 0", &target, &e))
				goto fail;
		} else if (c == 's') {
			if (plan_slo_parse(&slo, optarg, &e))
				goto fail;
			slo_given = true;
		} else {
			rc = cli_bad_option("compare", argv);
			goto out;
		}
	}
	if (!hw_list) {
		rc = cli_misuse("compare", "--hardware: expected device ids to compare, e.g. --hardware l40s,a100-80gb-sxm,h100-sxm");
		goto out;
	}
	cliplan_search(&cp, &po);
	if (cliplan_cost_check(&cp, &e))
		goto fail;
	struct scenario base;
	if (cliplan_scenario(&cp, argc, argv, optind, &base, &e))
		goto fail;
	if (!slo_given)
		plan_slo_from_scenario(&slo, &base);
	if (slo.n && plan_check_searchable(&base, &e))
		goto fail;
	if (!slo.n && !isnan(target)) {
		rc = cli_misuse("compare", "--target-rate: expected an SLO (--slo or the scenario's [slo]) to size replicas by");
		goto out;
	}
	if (simulate && isnan(target)) {
		rc = cli_misuse("compare", "--simulate-replicas: expected --target-rate with it");
		goto out;
	}
	if (!slo.n && cp.n_search) {
		rc = cli_misuse("compare", "--search: expected an SLO (--slo or the scenario's [slo]) to tune for");
		goto out;
	}
	if (slo.n && cliplan_tune_space(&cp, &base, &cp.ov, &space, &e))
		goto fail;
	if (!strcmp(hw_list, "all")) {
		n_ids = catalog_list(CATALOG_HARDWARE, &ids);
	} else {
		char tok[INI_VALUE_MAX];
		int got;
		for (const char *cur = hw_list; (got = list_next(&cur, tok, sizeof tok)) != 0;) {
			if (got < 0) {
				err_set(&e, "--hardware: expected comma-separated device ids, got '%s'", hw_list);
				goto fail;
			}
			ids = xrealloc(ids, (n_ids + 1) * sizeof *ids);
			ids[n_ids++] = xstrdup(tok);
		}
	}
	rows = xcalloc(n_ids + 1, sizeof *rows);
	tc = xcalloc(n_ids + 1, sizeof *tc);
	for (size_t i = 0; i < n_ids; i++) {
		char origin[INI_VALUE_MAX + 16], path[4096];
		struct scenario sc = base;
		struct compare_row row;
		snprintf(origin, sizeof origin, "--hardware %s", ids[i]);
		if (catalog_resolve(CATALOG_HARDWARE, ids[i], path, sizeof path, &e)) {
			err_prefix(&e, "%s", origin);
			goto fail;
		}
		snprintf(sc.hardware, sizeof sc.hardware, "%s", ids[i]);
		if (compare_row_init(&row, i, &sc, false, origin, &e))
			goto fail;
		if (cost && plan_cand_price(&row.cand, &cp.cost, origin, &e)) {
			compare_row_free(&row);
			goto fail;
		}
		if (resultdoc_in_shard(&cp.shard, i)) {
			struct inidoc *ov = &tc[n_sel].ov;
			inidoc_add_overrides(ov, &cp.ov);
			if (inidoc_add_overridef(ov, &e, "run.hardware=%s", ids[i])) {
				compare_row_free(&row);
				goto fail;
			}
			tc[n_sel].path = cp.scenario;
			rows[n_sel++] = row;
		}
	}
	for (size_t i = 0; i < n_sel; i++)
		tc[i].cand = &rows[i].cand;
	bool tune = slo.n && space.n;
	compare_run(rows, n_sel, &slo, &po, tune ? tc : NULL, &space);
	for (size_t i = 0; simulate && i < n_sel; i++)   /* planreplicas.h */
		plan_simulate_replicas(&rows[i].cand, &slo, &po, target);
	json_t *doc = comparedoc_build(cp.scenario, &cp.ov, &slo, &po, target, cost, n_ids, &cp.shard, rows, n_sel,
				       tune ? tc : NULL, &space);
	if (cost && cp.cost.own)
		json_object_set_new(doc, "cost_basis", cliplan_cost_json(&cp.cost));
	rc = cliplan_emit(&cp, doc);
	goto out;
fail:
	rc = cli_fail("compare", &e);
out:
	for (size_t i = 0; i < n_sel; i++) {
		compare_row_free(&rows[i]);
		tune_cand_free(&tc[i]);
	}
	for (size_t i = 0; tc && i <= n_sel && i < n_ids; i++)
		inidoc_free(&tc[i].ov);
	free(tc);
	free(rows);
	for (size_t i = 0; i < n_ids; i++)
		free(ids[i]);
	free(ids);
	cliplan_free(&cp);
	return rc;
}
