/*
 * router: the policies that pick a replica for a request, chosen by name
 * from one const table (the Linux sched_class pattern, Lua's luaL_Reg).
 * The [cluster] router choices, their help and the error that lists the
 * valid ones all come from router_classes[].
 *
 * A router sees what a real one sees (vLLM's router, llm-d's endpoint
 * picker): per replica, the requests it sent there and that are not done,
 * the engine's waiting queue and KV usage (its /metrics), and the length of
 * the request's prompt already in that replica's prefix cache (llm-d's
 * precise prefix-cache scorer reads the engines' KV events). It never
 * changes the replicas. Its random draws come from its own named stream.
 *
 * Invariants: pick returns an index in [0, n); ties go to the lowest index.
 */
#ifndef SERVESIM_ROUTER_H
#define SERVESIM_ROUTER_H

#include <gsl/gsl_rng.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* llm-d's scorers, weighted: each scores a replica in [0, 1], higher is
 * better; the weighted sum picks. */
enum router_scorer { SCORER_QUEUE, SCORER_KV, SCORER_PREFIX, N_SCORERS };

struct router_view {
	size_t n;                        /* replicas to choose among */
	const int64_t *outstanding;      /* routed there, not done */
	const int64_t *waiting;          /* its engine's waiting queue */
	const double *kv_usage;          /* its KV pool, in [0, 1] */
	const int64_t *prefix_hit;       /* the request's prompt tokens it has cached */
	int64_t prompt_len;
	const double *weights;           /* N_SCORERS scorer weights */
	gsl_rng *rng;                    /* the "router" stream */
	size_t *rr_next;                 /* round robin's cursor */
};

struct router_class {
	const char *name;
	const char *help;
	size_t (*pick)(const struct router_view *v);
	bool reads_prefix;               /* needs prefix_hit (an O(prompt blocks) lookup
					  * per replica per request); the weighted router
					  * only with a prefix weight > 0 */
};

/* The table, NULL-name terminated. */
extern const struct router_class router_classes[];

/* The index of the router called name, or -1. */
int router_find(const char *name);

/* "round_robin, random, …" into buf (truncated to cap). */
void router_list(char *buf, size_t cap);

/* Index of the "weighted" router (the one that reads the scorers). */
int router_weighted_index(void);

/* Parses "queue:1,kv:1,prefix:2" into weights[N_SCORERS] (absent ones 0).
 * Returns 0, or -1 with a phrase of what was expected in why. */
int router_parse_scorers(const char *text, double *weights, const char **why);

/* Names of the scorers, for help and errors: "queue, kv, prefix". */
extern const char *const router_scorer_names[N_SCORERS];

#endif
