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
#include "kvlink.h"
#include "router.h"

/* A disaggregated cluster's pools: [prefill] and [decode] override
 * [engine] keys and run's hardware for their replicas. */
enum pool_role { POOL_PREFILL, POOL_DECODE, N_POOLS };

struct cluster_config {
	int64_t replicas;                  /* engines of [engine], >= 1 */
	char router_name[INI_VALUE_MAX];   /* as written */
	int router;                        /* its index into router_classes */
	char scorers_text[INI_VALUE_MAX];  /* "queue:1,kv:1,prefix:1" */
	double weights[N_SCORERS];         /* parsed scorers */
	bool given;                        /* the scenario has a [cluster] key */
	/* Prefill/decode disaggregation: both > 0, replicas = their sum
	 * (replicas [0, P) prefill, [P, P + D) decode); both 0: colocated. */
	int64_t prefill_replicas, decode_replicas;
	char kv_transfer[INI_VALUE_MAX];   /* a kvlink row name */
	double kv_transfer_gbit_s;         /* 0 = the row's */
	double kv_transfer_latency_us;     /* < 0 = the row's */
	/* VLLM_NIXL_ABORT_REQUEST_TIMEOUT: the prefill side frees a finished
	 * request's blocks this long after it finished if no decode side has
	 * read them (vLLM's default, 480 s). */
	double kv_abort_request_timeout_s;
	char disagg_at[INI_VALUE_MAX + 32];/* where prefill_replicas was set, for errors */
};

static inline bool clustercfg_disaggregated(const struct cluster_config *c)
{
	return c->prefill_replicas > 0;
}

/* One replica, round robin, llm-d's three scorers weighted alike. */
void clustercfg_default(struct cluster_config *c);

/* The [cluster] key table, for the generated key reference. Sets *n to its
 * length. Cannot fail. */
const struct inidoc_key *clustercfg_keys(size_t *n);

/* Binds the [cluster] entries of doc into *c (marking them used; other
 * sections are left alone). Returns 0 or -1 with e naming the file, line
 * and key. */
int clustercfg_bind(struct cluster_config *c, struct inidoc *doc, struct err *e);

#endif
