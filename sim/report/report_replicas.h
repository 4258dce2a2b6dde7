/*
 * report_replicas: a cluster's replicas in each format (sim/cluster): the
 * text lines, the JSON servesim.replicas array, and the Prometheus
 * exposition as a set of series, one per vLLM engine (the engine label
 * vLLM's data-parallel deployments give each engine core). A run with one
 * engine has no replicas (run_result.n_replicas 0) and one series.
 */
#ifndef SERVESIM_REPORT_REPLICAS_H
#define SERVESIM_REPORT_REPLICAS_H

#include <jansson.h>
#include <stdio.h>

#include "run.h"

/* "Replicas" section: one line per replica. Nothing without replicas. */
void report_replicas_text(FILE *f, struct run_result *res);

/* The servesim.replicas array (caller owns it); NULL without replicas. */
json_t *report_replicas_json(struct run_result *res);

/* The servesim.kv_transfer object of a disaggregated run (caller owns
 * it); NULL when colocated. */
json_t *report_kv_transfer_json(const struct run_result *res);

/* vLLM's /metrics for the run: one series per engine (engine="i"), the
 * single engine's as engine="0". Cannot fail. */
void report_replicas_prom(FILE *f, struct run_result *res);

#endif
