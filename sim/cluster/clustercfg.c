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
};

enum { N_KEYS = sizeof keys / sizeof *keys };

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
}

static void where(const struct inidoc *doc, const struct inidoc_entry *en, char *at, size_t cap)
{
	if (en->line > 0)
		snprintf(at, cap, "%s:%d", doc->path, en->line);
	else
		snprintf(at, cap, "--set %s.%s", en->section, en->key);
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
		where(doc, en, at, sizeof at);
		int r = router_find(c->router_name);
		if (r < 0) {
			char names[512];
			router_list(names, sizeof names);
			return err_set(e, "%s: [cluster] router: expected one of %s, got '%s'", at, names,
				       c->router_name);
		}
		c->router = r;
	}
	if ((en = inidoc_find(doc, "cluster", "scorers"))) {
		const char *why;
		char at[INI_VALUE_MAX + 32];
		where(doc, en, at, sizeof at);
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
