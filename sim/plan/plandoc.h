/*
 * plandoc: a plan's result document (resultdoc.h) and its forms: the
 * ranked table with each candidate's binding limit and the winner, CSV,
 * and the pictures of the search and of goodput against cost. Also the
 * JSON and text of the search that compare shares.
 *
 * Document: "scenario", "set", "search" (SLO limits, by, replications,
 * confidence, tolerance, max_load, duration_s, max_evaluations),
 * "target_rate", "cost", "candidates_total", then "candidates": per
 * candidate its index, hardware, tensor_parallel_size, weights, status,
 * max_rate (req/s per replica), first_failing_load, arrival_window_s,
 * at_limit (metrics at max_rate), limit and limit_detail, tried (load,
 * worst SLO ratio, pass for every load tried), replicas, gpus,
 * price_usd_per_gpu_hour, usd_per_hour, usd_per_1m_output_tokens; when
 * tuned (tune.h), "config" (the chosen engine settings), "set" (the --set
 * flags that reproduce them) and "tuning" (settings tried, simulations,
 * runners-up), and the search object carries "tune" (the space); a whole
 * document ends with "ranking" (candidate indices, best first),
 * "winner" and, tuned, "within_noise" (ranknoise.h: pairs of GPUs whose
 * order the confirmation blocks do not resolve).
 */
#ifndef SERVESIM_PLANDOC_H
#define SERVESIM_PLANDOC_H

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

#include "plan.h"
#include "resultdoc.h"
#include "tune.h"

struct plot_opts;

/* The "search" object: the SLO and the search's options. */
json_t *plandoc_search_json(const struct plan_slo *slo, const struct plan_opts *o);

/* A searched candidate's findings (status, max_rate, at_limit, limit,
 * tried …), to merge into an item. */
json_t *plandoc_cand_json(const struct plan_cand *c, const struct plan_slo *slo,
			  const struct plan_opts *o);

/* The whole plan document: header, one item per candidate with capacity
 * and cost for target_rate (NaN: none), ranking when whole (sh 1/1). The
 * caller's reference; cannot fail. */
json_t *plandoc_build(const char *scenario, const struct inidoc *overrides, const struct plan_slo *slo,
		      const struct plan_opts *o, double target_rate, bool cost, size_t total,
		      const struct shard *sh, const struct plan_cand *c, size_t n,
		      const struct tune_cand *tuned, const struct tune_space *space);

/* Prints the cost basis line of a document priced with --cost own
 * (nothing for cloud prices). */
void plandoc_cost_text(FILE *f, json_t *doc);

/* Adds a tuned candidate's "config", "set" and "tuning" (tune_item_json)
 * to item it; nothing when t is NULL. Cannot fail. */
void plandoc_put_tuning(json_t *it, const struct tune_cand *t, const struct tune_space *space,
			const struct plan_opts *o);

/* Prints, per item under items_key that was tuned, the chosen setting as
 * --set flags and its runners-up, then the simulations it took. label(it)
 * names the item. */
void plandoc_tuning_text(FILE *f, json_t *doc, const char *items_key,
			 void (*label)(json_t *it, char *out, size_t cap));

/* Prints the search method in words, from a document's "search" object. */
void plandoc_search_text(FILE *f, json_t *search);

/* Writes dir/cost.dat and the goodput-against-cost picture from the items
 * under items_key (hardware, tensor_parallel_size, price_usd_per_gpu_hour,
 * max_rate). Returns 0 or -1 with e. */
int plandoc_plot_cost(json_t *doc, const char *items_key, const char *dir, struct plot_opts *o,
		      struct err *e);

extern const struct resultdoc_kind plandoc_kind;

#endif
