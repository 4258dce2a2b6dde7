/*
 * planlayout: the colocated and xPyD layouts of a GPU budget.
 */
#include "planlayout.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "resultdoc.h"
#include "xalloc.h"

#define RUNNERS_UP 2                 /* as many as plan's tuned rows show */

void planlayout_name(int64_t engines, int k, char *out, size_t cap)
{
	if (k == 0)
		snprintf(out, cap, "%lld coloc", (long long)engines);
	else
		snprintf(out, cap, "%dP%lldD", k, (long long)(engines - k));
}

int planlayout_overrides(struct inidoc *ov, int64_t engines, int k, struct err *e)
{
	return inidoc_add_overridef(ov, e, "cluster.replicas=%lld", (long long)engines) ||
	       inidoc_add_overridef(ov, e, "cluster.prefill_replicas=%d", k) ||
	       inidoc_add_overridef(ov, e, "cluster.decode_replicas=%lld", (long long)(k ? engines - k : 0));
}

void planlayout_put(json_t *it, int64_t engines, int k)
{
	char name[64], set[256];
	planlayout_name(engines, k, name, sizeof name);
	snprintf(set, sizeof set, "--set cluster.replicas=%lld --set cluster.prefill_replicas=%d --set cluster.decode_replicas=%lld",
		 (long long)engines, k, (long long)(k ? engines - k : 0));
	json_object_set_new(it, "layout", json_string(name));
	json_object_set_new(it, "engines", json_integer(engines));
	json_object_set_new(it, "prefill_replicas", json_integer(k));
	json_object_set_new(it, "decode_replicas", json_integer(k ? engines - k : 0));
	json_object_set_new(it, "layout_set", json_string(set));
}

/* The configuration a layout item belongs to, as its text names it. */
static void config_of(json_t *it, char *out, size_t cap)
{
	double pp = resultdoc_num(it, "pipeline_parallel_size");
	char pps[32] = "";
	if (pp > 1)
		snprintf(pps, sizeof pps, " pp %lld", (long long)pp);
	snprintf(out, cap, "%s tp %lld%s %s", resultdoc_str(it, "hardware"),
		 (long long)resultdoc_num(it, "tensor_parallel_size"), pps, resultdoc_str(it, "weights"));
}

/* Candidate `want`'s item. */
static json_t *item(json_t *items, json_int_t want)
{
	size_t j;
	json_t *it;
	json_array_foreach(items, j, it)
		if (json_integer_value(json_object_get(it, "candidate")) == want)
			return it;
	return NULL;
}

void planlayout_text(FILE *f, json_t *doc)
{
	double budget = resultdoc_num(doc, "gpu_budget");
	json_t *items = json_object_get(doc, "candidates"), *ranking = json_object_get(doc, "ranking");
	if (isnan(budget) || !ranking)
		return;
	size_t n = json_array_size(ranking);
	bool *done = xcalloc(n ? n : 1, sizeof *done);
	fprintf(f, "\nlayouts of %g GPUs (colocated or xPyD; best first, by the ranking):\n", budget);
	for (size_t i = 0; i < n; i++) {
		if (done[i])
			continue;
		json_t *best = item(items, json_integer_value(json_array_get(ranking, i)));
		if (!best)
			continue;
		char cfg[512];
		config_of(best, cfg, sizeof cfg);
		int shown = 0;
		for (size_t k = i; k < n; k++) {
			json_t *it = item(items, json_integer_value(json_array_get(ranking, k)));
			char other[512];
			if (!it || done[k])
				continue;
			config_of(it, other, sizeof other);
			if (strcmp(other, cfg))
				continue;
			done[k] = true;
			if (shown > RUNNERS_UP)
				continue;
			double rate = resultdoc_num(it, "max_rate");
			if (shown == 0)
				fprintf(f, "  %s: %s, %.4g req/s within the SLO (%s)\n", cfg, resultdoc_str(it, "layout"),
					rate, resultdoc_str(it, "layout_set"));
			else
				fprintf(f, "    runner-up: %s, %.4g req/s\n", resultdoc_str(it, "layout"), rate);
			shown++;
		}
	}
	free(done);
}
