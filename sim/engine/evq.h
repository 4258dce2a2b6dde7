/*
 * evq: the event queue. A binary min-heap ordered by (time_ns, seq), where
 * seq is a counter taken at push time: events at the same instant pop in
 * the order they were pushed (first in, first out). evq_pop asserts the
 * clock never goes back: an event can never be due before the last one
 * popped. Time is simulated nanoseconds since the run's start. The heap
 * code is sim/base/heap.h's, shared with the Prometheus settle heap
 * (promobs.c); its push and pop inline here (the same instructions as the
 * hand-written heap it replaced: tests/bench, docs/robustness.md).
 */
#ifndef SERVESIM_EVQ_H
#define SERVESIM_EVQ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "num.h"

/* The simulator's horizon: no event is due later than 10^8 simulated
 * seconds (about 3.2 years) after the start. Inputs whose times would reach
 * past it are bad input (evq_ns_of_s says so); int64_t nanoseconds reach
 * 92 times further, headroom for the steps that follow the last send. */
#define EVQ_HORIZON_S 1e8
#define EVQ_HORIZON_NS ((int64_t)100000000 * NS_PER_S)

/* Simulated seconds s as nanoseconds in *ns, rounded. Returns 0, or -1
 * (leaving *ns alone) when s is not a number in [0, EVQ_HORIZON_S]. */
int evq_ns_of_s(double s, int64_t *ns);

/* A duration of s seconds (a step) in nanoseconds, at least 1; a duration
 * past the horizon (or not finite) is EVQ_HORIZON_NS + 1, so that the caller
 * sees it cannot be scheduled instead of an overflowed integer. */
int64_t evq_duration_ns(double s);

struct event {
	int64_t time_ns;
	uint64_t seq;
	int kind;          /* the owner's enum */
	int64_t arg;       /* e.g. a request index */
};

struct evq;

/* Creates an empty queue at time 0. Cannot fail (aborts on OOM). */
struct evq *evq_create(void);
void evq_destroy(struct evq *q);   /* NULL is a no-op */

/* Schedules an event; time_ns must not be before evq_now (asserted). */
void evq_push(struct evq *q, int64_t time_ns, int kind, int64_t arg);

/* Takes n seq numbers now for events to be pushed later with
 * evq_push_seq, and returns the first: they order among the others as if
 * pushed now, in the order of their numbers (a run pushes each arrival
 * only when the one before is due, in the order pushing them all at the
 * start would give). Cannot fail. */
uint64_t evq_reserve(struct evq *q, uint64_t n);

/* evq_push with a seq from evq_reserve (each used once). */
void evq_push_seq(struct evq *q, int64_t time_ns, uint64_t seq, int kind, int64_t arg);

/* Pops the earliest event into *ev and advances the clock to its time.
 * Returns false when the queue is empty. */
bool evq_pop(struct evq *q, struct event *ev);

/* Advances the clock to time_ns without an event: for a caller that
 * handles at once what it would have pushed and popped next (time_ns
 * not before evq_now, and before every queued event: asserted). */
void evq_advance(struct evq *q, int64_t time_ns);

/* The earliest event's time, or INT64_MAX when empty. */
int64_t evq_next_time(const struct evq *q);

int64_t evq_now(const struct evq *q);
size_t evq_len(const struct evq *q);

#endif
