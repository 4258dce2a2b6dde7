#include "evq.h"

#include <math.h>
#include <stdlib.h>

#include "heap.h"
#include "iround.h"
#include "simassert.h"
#include "xalloc.h"

/* The earliest event may wait in front of the heap (has_front): an event
 * pushed before every one the heap holds goes there, and pops from there,
 * without a sift either way. Most pushes of a run are a step's end that is
 * also the next event (a lone replica decoding between arrivals): the
 * heap then holds only the next arrival and is not touched. Invariant:
 * front, when there, is before every event in the heap. */
struct evq {
	struct event *heap;
	size_t len, cap;
	uint64_t next_seq;
	int64_t now_ns;
	bool has_front;
	struct event front;
};

static bool before(const struct event *a, const struct event *b)
{
	return a->time_ns < b->time_ns || (a->time_ns == b->time_ns && a->seq < b->seq);
}

HEAP_DEFINE(evheap, struct event, before)

struct evq *evq_create(void)
{
	return xcalloc(1, sizeof(struct evq));
}

void evq_destroy(struct evq *q)
{
	if (!q)
		return;
	free(q->heap);
	free(q);
}

uint64_t evq_reserve(struct evq *q, uint64_t n)
{
	uint64_t first = q->next_seq;
	q->next_seq += n;
	return first;
}

void evq_push(struct evq *q, int64_t time_ns, int kind, int64_t arg)
{
	evq_push_seq(q, time_ns, q->next_seq++, kind, arg);
}

void evq_push_seq(struct evq *q, int64_t time_ns, uint64_t seq, int kind, int64_t arg)
{
	SIM_ASSERT(time_ns >= q->now_ns && "event scheduled in the past", q->now_ns, SIM_NO_REQ);
	SIM_ASSERT(seq < q->next_seq && "a seq not taken", q->now_ns, SIM_NO_REQ);
	struct event ev = { time_ns, seq, kind, arg };
	if (q->has_front) {
		if (before(&ev, &q->front)) {
			/* The old front is before the heap's events: it joins
			 * them, and the new one leads. */
			evheap_push(&q->heap, &q->len, &q->cap, &q->front);
			q->front = ev;
		} else {
			evheap_push(&q->heap, &q->len, &q->cap, &ev);
		}
	} else if (q->len == 0 || before(&ev, &q->heap[0])) {
		q->front = ev;
		q->has_front = true;
	} else {
		evheap_push(&q->heap, &q->len, &q->cap, &ev);
	}
}

bool evq_pop(struct evq *q, struct event *ev)
{
	if (q->has_front) {
		*ev = q->front;
		q->has_front = false;
	} else if (q->len) {
		*ev = q->heap[0];
		evheap_pop(q->heap, &q->len);
	} else {
		return false;
	}
	SIM_ASSERT(ev->time_ns >= q->now_ns && "simulated clock went backwards", q->now_ns, SIM_NO_REQ);
	q->now_ns = ev->time_ns;
	return true;
}

void evq_advance(struct evq *q, int64_t time_ns)
{
	SIM_ASSERT(time_ns >= q->now_ns && "simulated clock went backwards", q->now_ns, SIM_NO_REQ);
	SIM_ASSERT(time_ns < evq_next_time(q) && "advanced past a queued event", q->now_ns, SIM_NO_REQ);
	q->now_ns = time_ns;
}

int64_t evq_next_time(const struct evq *q)
{
	return q->has_front ? q->front.time_ns : q->len ? q->heap[0].time_ns : INT64_MAX;
}

int64_t evq_now(const struct evq *q)
{
	return q->now_ns;
}

size_t evq_len(const struct evq *q)
{
	return q->len + q->has_front;
}

int evq_ns_of_s(double s, int64_t *ns)
{
	if (!(s >= 0 && s <= EVQ_HORIZON_S))   /* NaN fails too */
		return -1;
	*ns = iround(s * 1e9);
	return 0;
}

int64_t evq_duration_ns(double s)
{
	if (!(s <= EVQ_HORIZON_S))   /* NaN too */
		return EVQ_HORIZON_NS + 1;
	int64_t ns = iround(s * 1e9);
	return ns > 0 ? ns : 1;
}
