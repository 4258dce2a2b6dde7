/*
 * scenlists: the [workload] keys that hold lists of A:B pairs (scenlists.h).
 */
#include "scenlists.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "list.h"
#include "num.h"

/* A [workload] list "LEFT:RIGHT, …" (key, given at en in path), read as
 * list.h reads every list (commas; blanks around an entry dropped; an
 * empty entry an error, never skipped): calls pair(sc, left, right, at, e)
 * for each entry, at naming where the key was given; an entry without ':'
 * or an empty one is an error naming form. */
static int parse_pairs(struct scenario *sc, const char *text, const struct inidoc_entry *en,
		       const char *path, const char *key, const char *form,
		       int (*pair)(struct scenario *sc, char *left, char *right, const char *at,
				   struct err *e),
		       struct err *e)
{
	char tok[INI_VALUE_MAX], at[INI_VALUE_MAX + 32];
	if (en && en->line > 0)
		snprintf(at, sizeof at, "%s:%d", path, en->line);
	else
		snprintf(at, sizeof at, "--set workload.%s", key);
	int rc;
	for (const char *cur = text; (rc = list_next(&cur, tok, sizeof tok)) != 0;) {
		if (rc < 0)
			return err_set(e, "%s: [workload] %s: expected %s, … with no empty entry, got '%s'", at, key, form,
				       text);
		char *colon = strchr(tok, ':');
		if (!colon)
			return err_set(e, "%s: [workload] %s: expected %s, got '%s'", at, key, form, tok);
		*colon = '\0';
		if (pair(sc, tok, colon + 1, at, e))
			return -1;
	}
	return 0;
}

/* One stage, RATE:DURATION_S. */
static int stage_pair(struct scenario *sc, char *left, char *right, const char *at, struct err *e)
{
	struct stage st;
	if (num_parse_double(left, &st.rate) || !(st.rate > 0) || isinf(st.rate))
		return err_set(e, "%s: [workload] stages: expected a rate > 0 before ':', got '%s'", at, left);
	if (num_parse_double(right, &st.duration_s) || !(st.duration_s > 0) || isinf(st.duration_s))
		return err_set(e, "%s: [workload] stages: expected a duration in seconds > 0 after ':', got '%s'",
			       at, right);
	if (sc->n_stages == SCENARIO_MAX_STAGES)
		return err_set(e, "%s: [workload] stages: at most %d stages", at, SCENARIO_MAX_STAGES);
	sc->stages[sc->n_stages++] = st;
	return 0;
}

int scenario_parse_stages(struct scenario *sc, const struct inidoc_entry *en, const char *path,
			  struct err *e)
{
	sc->n_stages = 0;
	return parse_pairs(sc, sc->stages_text, en, path, "stages", "RATE:DURATION_S", stage_pair, e);
}

/* One priority class, PRIORITY:WEIGHT: an integer priority (vLLM's
 * request priority, lower first) and a relative weight > 0. */
static int priority_pair(struct scenario *sc, char *left, char *right, const char *at, struct err *e)
{
	double prio, weight;
	if (num_parse_double(left, &prio) || prio != floor(prio) || !(fabs(prio) <= 1e9))
		return err_set(e, "%s: [workload] priorities: expected an integer priority before ':', got '%s'",
			       at, left);
	if (num_parse_double(right, &weight) || !(weight > 0) || isinf(weight))
		return err_set(e, "%s: [workload] priorities: expected a weight > 0 after ':', got '%s'", at,
			       right);
	if (sc->n_priorities == SCENARIO_MAX_PRIORITIES)
		return err_set(e, "%s: [workload] priorities: at most %d classes", at, SCENARIO_MAX_PRIORITIES);
	sc->priorities[sc->n_priorities++] = (struct priority_class){ .priority = (int32_t)prio,
								       .weight = weight };
	return 0;
}

int scenario_parse_priorities(struct scenario *sc, const struct inidoc_entry *en, const char *path,
			      struct err *e)
{
	sc->n_priorities = 0;
	if (parse_pairs(sc, sc->priorities_text, en, path, "priorities", "PRIORITY:WEIGHT", priority_pair,
			e))
		return -1;
	if (sc->trace[0])
		return err_set(e, "%s: [workload] priorities: applies to synthetic workloads; a trace carries each request's own \"priority\"",
			       en && en->line > 0 ? path : "--set workload.priorities");
	return 0;
}
