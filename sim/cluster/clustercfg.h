/*
 * clustercfg: the [cluster] section, declared once here by its owner (the
 * cluster layer) and bound by scenario_load next to the other sections.
 *
 * replicas copies of [engine] (vLLM's --data-parallel-size, or N `vllm
 * serve` behind a router) and the router that spreads requests over them.
 * The default, one replica, is the single engine of a run without the
 * section: a cluster of one, with byte-identical output.
 */
#ifndef SERVESIM_CLUSTERCFG_H
#define SERVESIM_CLUSTERCFG_H

#include <stdbool.h>
#include <stdint.h>

#include "err.h"
#include "inidoc.h"
#include "router.h"

struct cluster_config {
	int64_t replicas;                  /* engines of [engine], >= 1 */
	char router_name[INI_VALUE_MAX];   /* as written */
	int router;                        /* its index into router_classes */
	char scorers_text[INI_VALUE_MAX];  /* "queue:1,kv:1,prefix:1" */
	double weights[N_SCORERS];         /* parsed scorers */
	bool given;                        /* the scenario has a [cluster] key */
};

/* One replica, round robin, llm-d's three scorers weighted alike. */
void clustercfg_default(struct cluster_config *c);

/* Binds the [cluster] entries of doc into *c (marking them used; other
 * sections are left alone). Returns 0 or -1 with e naming the file, line
 * and key. */
int clustercfg_bind(struct cluster_config *c, struct inidoc *doc, struct err *e);

#endif
