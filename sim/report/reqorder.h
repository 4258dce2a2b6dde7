/*
 * reqorder: per-request rows put in the order of the requests' ids while
 * a lean run's requests finish out of that order (requests.csv's rows,
 * reqcsv; the --save-detailed arrays, reqdetail). A row that is done
 * before an earlier id's is held until that one is put, so what is held is
 * the rows of requests done while an older one still ran (the reorder
 * window), not the run's.
 *
 * Invariants: every id below next was put, in order; held[id & (cap - 1)]
 * is the row of done id in (next, next + cap), NULL for one not done yet;
 * cap is 0 or a power of two.
 */
#ifndef SERVESIM_REQORDER_H
#define SERVESIM_REQORDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct reqorder {
	int64_t next;       /* the id whose row comes next */
	char **held;        /* ring of the rows done ahead of next */
	size_t cap;
	int64_t n_held;
};

/* True when id's row is due now: the caller puts it itself, then calls
 * reqorder_done. */
bool reqorder_due(const struct reqorder *o, int64_t id);

/* Holds row (owned from now on) for id > o->next. Cannot fail. */
void reqorder_hold(struct reqorder *o, int64_t id, char *row);

/* The row due was put: put(ctx, row) each held row now due, in id
 * order, and free it. Cannot fail. */
void reqorder_done(struct reqorder *o, void (*put)(void *ctx, const char *row), void *ctx);

/* The held rows and the ring; o is empty after it. */
void reqorder_free(struct reqorder *o);

#endif
