/*
 * clustercfg: the [cluster] keys, one table, and their checks.
 */
#include "clustercfg.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

#define F(field) offsetof(struct cluster_config, field)

static const struct inidoc_key keys[] = {
	{ "cluster", "replicas", INI_INT, F(replicas), 0, 1, 4096, "a replica count >= 1", NULL },
	/* Checked against router_classes after binding, so the choices and
	 * the error come from that table. */
	{ "cluster", "router", INI_STRING, F(router_name), 0, 0, 0, "a router name", NULL },
	{ "cluster", "scorers", INI_STRING, F(scorers_text), 0, 0, 0,
	  "NAME:WEIGHT, … with NAME queue, kv or prefix", NULL },
	{ "cluster", "prefill_replicas", INI_INT, F(prefill_replicas), 0, 0, 4096,
	  "a replica count >= 0 (0 = colocated)", NULL },
	{ "cluster", "decode_replicas", INI_INT, F(decode_replicas), 0, 0, 4096,
	  "a replica count >= 0 (0 = colocated)", NULL },
	/* Checked against kvlink_table after binding. */
	{ "cluster", "kv_transfer", INI_STRING, F(kv_transfer), 0, 0, 0, "a link name", NULL },
	{ "cluster", "kv_transfer_gbit_s", INI_DOUBLE, F(kv_transfer_gbit_s), INI_MIN_EXCLUSIVE, 0, 1e7,
	  "a bandwidth in Gb/s > 0", NULL },
	{ "cluster", "kv_transfer_latency_us", INI_DOUBLE, F(kv_transfer_latency_us), 0, 0, 1e9,
	  "microseconds >= 0", NULL },
	{ "cluster", "kv_abort_request_timeout_s", INI_DOUBLE, F(kv_abort_request_timeout_s), INI_MIN_EXCLUSIVE,
	  0, 1e7, "seconds > 0", NULL },
};

enum { N_KEYS = sizeof keys / sizeof *keys };

const struct inidoc_key *clustercfg_keys(size_t *n)
{
	*n = N_KEYS;
	return keys;
}

void clustercfg_default(struct cluster_config *c)
{
	memset(c, 0, sizeof *c);
	c->replicas = 1;
	snprintf(c->router_name, sizeof c->router_name, "%s", router_classes[0].name);
	c->router = 0;                          /* round_robin */
	/* No component measurement sets these: llm-d composes its scorers
	 * with weights the operator chooses; equal weights are the neutral
	 * start. */
	snprintf(c->scorers_text, sizeof c->scorers_text, "queue:1,kv:1,prefix:1");
	for (int s = 0; s < N_SCORERS; s++)
		c->weights[s] = 1;
	/* vLLM's P/D examples pair nodes over RDMA (NIXL/UCX). */
	snprintf(c->kv_transfer, sizeof c->kv_transfer, "infiniband");
	c->kv_transfer_latency_us = -1;
	/* vLLM's envs.py: VLLM_NIXL_ABORT_REQUEST_TIMEOUT defaults to 480 s. */
	c->kv_abort_request_timeout_s = 480;
}

int clustercfg_bind(struct cluster_config *c, struct inidoc *doc, struct err *e)
{
	bool seen[N_KEYS];
	if (inidoc_bind(doc, keys, N_KEYS, c, true, seen, e))
		return -1;
	for (size_t i = 0; i < N_KEYS; i++)
		c->given |= seen[i];
	const struct inidoc_entry *en = inidoc_find(doc, "cluster", "router");
	if (en) {
		char at[INI_VALUE_MAX + 32];
		inidoc_entry_at(doc, en, at, sizeof at);
		int r = router_find(c->router_name);
		if (r < 0) {
			char names[512];
			router_list(names, sizeof names);
			return err_set(e, "%s: [cluster] router: expected one of %s, got '%s'", at, names,
				       c->router_name);
		}
		c->router = r;
	}
	if ((en = inidoc_find(doc, "cluster", "kv_transfer")) && !kvlink_find(c->kv_transfer)) {
		char at[INI_VALUE_MAX + 32], names[256];
		inidoc_entry_at(doc, en, at, sizeof at);
		kvlink_list(names, sizeof names);
		return err_set(e, "%s: [cluster] kv_transfer: expected one of %s, got '%s'", at, names,
			       c->kv_transfer);
	}
	const struct inidoc_entry *pe = inidoc_find(doc, "cluster", "prefill_replicas");
	const struct inidoc_entry *de = inidoc_find(doc, "cluster", "decode_replicas");
	if (pe || de) {
		const struct inidoc_entry *at_en = pe ? pe : de;
		inidoc_entry_at(doc, at_en, c->disagg_at, sizeof c->disagg_at);
		if ((c->prefill_replicas > 0) != (c->decode_replicas > 0))
			return err_set(e, "%s: [cluster] %s: expected prefill_replicas and decode_replicas both > 0 (disaggregated) or both 0, got %lld and %lld",
				       c->disagg_at, at_en->key, (long long)c->prefill_replicas,
				       (long long)c->decode_replicas);
		int64_t sum = c->prefill_replicas + c->decode_replicas;
		if (sum > 0) {
			if (inidoc_find(doc, "cluster", "replicas") && c->replicas != sum)
				return err_set(e, "%s: [cluster] replicas: expected prefill_replicas + decode_replicas = %lld with them, got %lld",
					       c->disagg_at, (long long)sum, (long long)c->replicas);
			c->replicas = sum;
		}
	}
	if ((en = inidoc_find(doc, "cluster", "scorers"))) {
		const char *why;
		char at[INI_VALUE_MAX + 32];
		inidoc_entry_at(doc, en, at, sizeof at);
		if (router_parse_scorers(c->scorers_text, c->weights, &why))
			return err_set(e, "%s: [cluster] scorers: expected %s, got '%s'", at, why,
				       c->scorers_text);
		/* Scorers name the weighted router; another router with them
		 * would silently ignore them. */
		if (!inidoc_find(doc, "cluster", "router"))
			c->router = router_weighted_index();
		else if (c->router != router_weighted_index())
			return err_set(e, "%s: [cluster] scorers: only the weighted router reads scorers, but router = %s",
				       at, router_classes[c->router].name);
	}
	return 0;
}
