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
 * file and freed (while fewer than REQORDER_MAX_RUNS are open); a run is
 * read back one row at a time as its ids come due (a merge of the runs'
 * heads). The rows in memory wait in a min-heap by id (sim/base/heap.h),
 * so memory follows the rows held, not the distance between their ids:
 * at most that budget and 16 bytes a row, a head row and a stdio buffer
 * per run not yet read back (the window over the budget: a few).
 *
 * Every id from 0 up must be put once: a row held behind an id never
 * put is never written. reqorder_missing names such an id; the writers
 * check it is none before they write their rows out (every request of a
 * run is done once, failed ones included), and reqorder_free, which may
 * end a run cut short, drops what is held.
 *
 * Invariants: every id below next was put, in order; heap holds the rows
 * kept in memory, each of an id above next, once; each spilled run holds
 * ids above next in ascending order, its head (the smallest not yet put)
 * loaded; n_held counts both.
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

struct reqorder_row {
	int64_t id;
	char *row;
};

struct reqorder {
	int64_t next;       /* the id whose row comes next */
	struct reqorder_row *heap;   /* the rows done ahead of next in memory, by id */
	size_t n_heap, cap_heap;
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

/* The first id not yet put while rows wait behind it, or -1 when none
 * waits. Cannot fail. */
int64_t reqorder_missing(const struct reqorder *o);

/* The held rows (dropped: see above), the spilled runs; o is empty after
 * it. */
void reqorder_free(struct reqorder *o);

#endif
