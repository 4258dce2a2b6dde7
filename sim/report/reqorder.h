/*
 * reqorder: per-request rows put in the order of the requests' ids while
 * a lean run's requests finish out of that order (requests.csv's rows,
 * reqcsv; the --save-detailed arrays, reqdetail). A row that is done
 * before an earlier id's is held until that one is put, so what is held is
 * the rows of requests done while an older one still ran (the reorder
 * window), not the run's.
 *
 * The window grows with the longest life of a request (near saturation,
 * with the run: 8k rows at 100k requests, 16k at 1M), so the rows held in
 * memory are bounded: past REQORDER_HELD_BYTES of them, every row held
 * is written, in id order, as one sorted run to an unlinked temporary
 * file and freed (while fewer than REQORDER_MAX_RUNS are open); a run is read back one row at a time as its ids come
 * due (a merge of the runs' heads). Memory is then at most that budget,
 * a head row and a stdio buffer per run not yet read back (the window
 * over the budget: a few), and the ring of 8 bytes a slot over the
 * window's span of ids.
 *
 * Invariants: every id below next was put, in order; held[id & (cap - 1)]
 * is the row of done id in (next, next + cap) held in memory, NULL for one
 * not done yet or spilled; each spilled run holds ids above next in
 * ascending order, its head (the smallest not yet put) loaded; n_held
 * counts both; cap is 0 or a power of two.
 */
#ifndef SERVESIM_REQORDER_H
#define SERVESIM_REQORDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Bytes of held rows kept in memory before they are spilled (about 1,300
 * rows of requests.csv): each row spilled costs a write and a read of a
 * temporary file, and each run open a file; past REQORDER_MAX_RUNS runs
 * not yet read back (a window of some 300,000 rows) rows stay in memory. */
#define REQORDER_HELD_BYTES (1u << 18)
#define REQORDER_MAX_RUNS 256

struct reqorder_run {      /* rows spilled at once, sorted by id */
	FILE *f;
	int64_t head_id;   /* the row loaded at head */
	char *head;
	int64_t left;      /* rows still in f after head */
};

struct reqorder {
	int64_t next;       /* the id whose row comes next */
	char **held;        /* ring of the rows done ahead of next, in memory */
	size_t cap;
	int64_t n_held;     /* held in memory or spilled */
	size_t held_bytes;  /* of the rows in memory */
	struct reqorder_run *runs;
	size_t n_runs, cap_runs;
	int64_t n_spilled;  /* rows ever spilled (for tests and figures) */
	bool failed;        /* a spill could not be written or read back */
};

/* True when id's row is due now: the caller puts it itself, then calls
 * reqorder_done. */
bool reqorder_due(const struct reqorder *o, int64_t id);

/* Holds row (owned from now on) for id > o->next. Cannot fail (a spill
 * that cannot be written sets o->failed). */
void reqorder_hold(struct reqorder *o, int64_t id, char *row);

/* The row due was put: put(ctx, row) each held row now due, in id
 * order, and free it. Cannot fail (see o->failed). */
void reqorder_done(struct reqorder *o, void (*put)(void *ctx, const char *row), void *ctx);

/* The held rows, the spilled runs and the ring; o is empty after it. */
void reqorder_free(struct reqorder *o);

#endif
