/*
 * evq: events pop in (time, seq) order, first in first out among equal
 * times; the clock follows the popped events and never goes back; length
 * and next_time track the heap (and its front slot, against a scanning
 * queue); a step duration rounds as llround. A property test drives 10,000 random pushes
 * interleaved with pops against those rules.
 */
#include "testutil.h"

#include "evq.h"
#include "iround.h"

/* A 64-bit LCG (Knuth's MMIX constants), high bits out: deterministic and
 * independent of the library's RNGs. */
static uint64_t lcg_next(uint64_t *s)
{
	*s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
	return *s >> 33;
}

static void empty_queue(void **state)
{
	(void)state;
	struct evq *q = evq_create();
	struct event ev;
	assert_int_equal(evq_len(q), 0);
	assert_int_equal(evq_now(q), 0);
	assert_true(evq_next_time(q) == INT64_MAX);
	assert_false(evq_pop(q, &ev));
	assert_int_equal(evq_now(q), 0);
	evq_destroy(q);
	evq_destroy(NULL);   /* a no-op */
}

static void pops_by_time(void **state)
{
	(void)state;
	struct evq *q = evq_create();
	static const int64_t times[] = { 50, 10, 40, 30, 20, 60, 0 };
	enum { N = sizeof times / sizeof *times };
	for (int i = 0; i < N; i++) {
		evq_push(q, times[i], 7, i);
		assert_int_equal(evq_len(q), (size_t)i + 1);
	}
	assert_int_equal(evq_next_time(q), 0);
	struct event ev;
	for (int64_t want = 0; want <= 60; want += 10) {
		assert_int_equal(evq_next_time(q), want);
		assert_true(evq_pop(q, &ev));
		assert_int_equal(ev.time_ns, want);
		assert_int_equal(ev.kind, 7);
		/* arg is the push index: times[arg] is the popped time. */
		assert_int_equal(times[ev.arg], want);
		assert_int_equal(evq_now(q), want);
	}
	assert_int_equal(evq_len(q), 0);
	assert_true(evq_next_time(q) == INT64_MAX);
	assert_false(evq_pop(q, &ev));
	assert_int_equal(evq_now(q), 60);   /* an empty pop leaves the clock */
	evq_destroy(q);
}

/* Equal times pop in push order, including events pushed at the current
 * instant after the clock reached it. */
static void fifo_among_equal_times(void **state)
{
	(void)state;
	struct evq *q = evq_create();
	for (int i = 0; i < 20; i++)
		evq_push(q, i % 2 ? 100 : 200, i % 2, i);
	struct event ev, prev = { 0 };
	int64_t last_arg[2] = { -1, -1 };
	for (int i = 0; i < 20; i++) {
		assert_true(evq_pop(q, &ev));
		assert_int_equal(ev.time_ns, i < 10 ? 100 : 200);
		assert_true(ev.arg > last_arg[ev.kind]);
		last_arg[ev.kind] = ev.arg;
		if (i > 0 && ev.time_ns == prev.time_ns)
			assert_true(ev.seq > prev.seq);
		prev = ev;
	}
	/* Now at t=200: three more at 200 and one at 200 pushed first. */
	evq_push(q, 300, 0, 99);
	evq_push(q, 200, 0, 1);
	evq_push(q, 200, 0, 2);
	evq_push(q, 200, 0, 3);
	for (int64_t want = 1; want <= 3; want++) {
		assert_true(evq_pop(q, &ev));
		assert_int_equal(ev.time_ns, 200);
		assert_int_equal(ev.arg, want);
	}
	assert_true(evq_pop(q, &ev));
	assert_int_equal(ev.arg, 99);
	evq_destroy(q);
}

/* 10,000 pushes at now + a random delay (often 0, to exercise ties),
 * interleaved with random pops, then a drain. Every pop is the queue's
 * next_time, is not before the previous pop in (time, seq) order, and sets
 * the clock to its time; every pushed event pops exactly once. */
static void property_random_interleaving(void **state)
{
	(void)state;
	enum { PUSHES = 10000 };
	struct evq *q = evq_create();
	static bool popped[PUSHES];
	memset(popped, 0, sizeof popped);
	uint64_t rng = 12345;
	int pushed = 0, n_popped = 0;
	struct event ev, prev = { .time_ns = -1 };
	bool have_prev = false;
	size_t len = 0;
	while (pushed < PUSHES || len > 0) {
		bool push = pushed < PUSHES && (len == 0 || lcg_next(&rng) % 3 != 0);
		if (push) {
			uint64_t r = lcg_next(&rng);
			/* One push in four is due now; the rest within 1 ms. */
			int64_t delay = r % 4 == 0 ? 0 : (int64_t)(r >> 2) % 1000000;
			evq_push(q, evq_now(q) + delay, (int)(r % 5), pushed++);
			len++;
		} else {
			int64_t next = evq_next_time(q);
			int64_t before_now = evq_now(q);
			assert_true(evq_pop(q, &ev));
			len--;
			assert_int_equal(ev.time_ns, next);
			assert_true(ev.time_ns >= before_now);
			assert_int_equal(evq_now(q), ev.time_ns);
			if (have_prev)
				assert_true(ev.time_ns > prev.time_ns ||
					    (ev.time_ns == prev.time_ns && ev.seq > prev.seq));
			assert_true(ev.arg >= 0 && ev.arg < PUSHES);
			assert_false(popped[ev.arg]);
			popped[ev.arg] = true;
			n_popped++;
			prev = ev;
			have_prev = true;
		}
		assert_int_equal(evq_len(q), len);
	}
	assert_int_equal(n_popped, PUSHES);
	assert_false(evq_pop(q, &ev));
	evq_destroy(q);
}

/* Seqs reserved early order their events as if pushed then: an event
 * pushed later at the same time with a plain push comes after them. */
static void reserved_seqs_order_as_pushed_early(void **state)
{
	(void)state;
	struct evq *q = evq_create();
	evq_push(q, 10, 0, 100);
	uint64_t first = evq_reserve(q, 3);
	evq_push(q, 10, 0, 101);
	evq_push_seq(q, 10, first + 1, 0, 1);
	evq_push_seq(q, 10, first, 0, 0);
	struct event ev;
	int64_t want[] = { 100, 0 };
	for (int i = 0; i < 2; i++) {
		assert_true(evq_pop(q, &ev));
		assert_int_equal(ev.arg, want[i]);
	}
	evq_push_seq(q, 10, first + 2, 0, 2);   /* pushed while its peers pop */
	int64_t rest[] = { 1, 2, 101 };
	for (int i = 0; i < 3; i++) {
		assert_true(evq_pop(q, &ev));
		assert_int_equal(ev.arg, rest[i]);
	}
	assert_false(evq_pop(q, &ev));
	evq_destroy(q);
}

/* An event handled at once instead of pushed (evq_advance, the cluster's
 * run-on steps) leaves the queue as pushing and popping it would have: the
 * clock at its time, the queued events popped after it in their order,
 * and a push after the advance ordered as it would be after the pop. */
static void advance_is_push_then_pop(void **state)
{
	(void)state;
	struct evq *a = evq_create(), *b = evq_create();
	struct evq *qs[2] = { a, b };
	for (int k = 0; k < 2; k++) {
		evq_push(qs[k], 50, 0, 7);
		evq_push(qs[k], 50, 0, 8);
	}
	struct event ev;
	evq_push(a, 20, 0, 1);   /* a pushes and pops the step end at 20 */
	assert_true(evq_pop(a, &ev));
	assert_int_equal(ev.time_ns, 20);
	evq_advance(b, 20);      /* b handles it at once */
	assert_int_equal(evq_now(a), evq_now(b));
	assert_int_equal(evq_len(b), 2);
	assert_int_equal(evq_next_time(b), 50);
	for (int k = 0; k < 2; k++)
		evq_push(qs[k], 50, 0, 9);   /* after the two queued at the same time */
	for (int64_t want = 7; want <= 9; want++) {
		struct event x, y;
		assert_true(evq_pop(a, &x));
		assert_true(evq_pop(b, &y));
		assert_int_equal(x.arg, want);
		assert_int_equal(y.arg, want);
		assert_int_equal(x.time_ns, y.time_ns);
	}
	assert_false(evq_pop(b, &ev));
	evq_destroy(a);
	evq_destroy(b);
}

/* The front slot (an event pushed before all the heap holds pops without
 * the heap): a run's pattern, a chain of step ends each pushed when the
 * one before pops, mostly before the next arrival, sometimes after it, with
 * ties and reserved seqs pushed under the front, against a reference queue
 * that scans every pending event for the least (time, seq). Every pop is
 * the reference's, field by field. */
static void front_slot_matches_scanning_queue(void **state)
{
	(void)state;
	enum { N = 4000 };
	static struct event ref[N];
	size_t n_ref = 0;
	struct evq *q = evq_create();
	uint64_t rng = 99, seq = 0;
	uint64_t res = evq_reserve(q, N);   /* arrivals' seqs, taken early */
	seq = N;
	int64_t next_arrival = 0;
	int pushed = 0;
	evq_push_seq(q, next_arrival, res, 0, pushed);
	ref[n_ref++] = (struct event){ next_arrival, res++, 0, pushed++ };
	struct event ev;
	while (evq_pop(q, &ev)) {
		size_t m = 0;
		for (size_t i = 1; i < n_ref; i++)
			if (ref[i].time_ns < ref[m].time_ns ||
			    (ref[i].time_ns == ref[m].time_ns && ref[i].seq < ref[m].seq))
				m = i;
		assert_true(n_ref > 0);
		assert_int_equal(ev.time_ns, ref[m].time_ns);
		assert_int_equal(ev.seq, ref[m].seq);
		assert_int_equal(ev.kind, ref[m].kind);
		assert_int_equal(ev.arg, ref[m].arg);
		ref[m] = ref[--n_ref];
		if (pushed >= N - 2)
			continue;
		uint64_t r = lcg_next(&rng);
		if (ev.kind == 0) {
			/* An arrival: the next one, and a step end (one in
			 * eight at the same instant as the arrival). */
			next_arrival += (int64_t)(r % 50000);
			evq_push_seq(q, next_arrival, res, 0, pushed);
			ref[n_ref++] = (struct event){ next_arrival, res++, 0, pushed++ };
		}
		int64_t d = r % 8 == 0 ? 0 : (int64_t)((r >> 3) % 3000);
		if (ev.kind == 0 || r % 16 != 0) {   /* the chain goes on, or stops */
			evq_push(q, ev.time_ns + d, 1, pushed);
			ref[n_ref++] = (struct event){ ev.time_ns + d, seq++, 1, pushed++ };
		}
	}
	assert_int_equal(n_ref, 0);
	assert_int_equal(evq_len(q), 0);
	evq_destroy(q);
}

/* evq_duration_ns rounds as llround of s x 1e9 (its own rounding, not
 * libm's): step times of every scale from 1e-12 to 1e8 s, values whose
 * nanoseconds are a half or one ulp either side of it, negative ones (at
 * least 1 ns) and the horizon's edge. Exact equality: a step 1 ns off
 * would move every later event. */
static void duration_rounds_as_llround(void **state)
{
	(void)state;
	uint64_t rng = 7;
	for (int i = 0; i < 200000; i++) {
		uint64_t r = lcg_next(&rng);
		double ns;
		if (i % 3 == 0)
			ns = (double)(r >> 11) * 0x1p-53 * pow(10.0, (double)(r % 21));
		else if (i % 3 == 1)
			ns = (double)((r >> 16) % 100000000) + 0.5;
		else
			ns = nextafter((double)((r >> 16) % 100000000) + 0.5, (r & 1) ? 0.0 : 1e18);
		if (r & 2)
			ns = -ns;
		double s = ns / 1e9;
		int64_t want = (int64_t)llround(s * 1e9);
		assert_int_equal(evq_duration_ns(s), want > 0 ? want : 1);
	}
	assert_int_equal(evq_duration_ns(EVQ_HORIZON_S), EVQ_HORIZON_NS);
	assert_int_equal(evq_duration_ns(nextafter(EVQ_HORIZON_S, 1e9)), EVQ_HORIZON_NS + 1);
	assert_int_equal(evq_duration_ns(NAN), EVQ_HORIZON_NS + 1);
	assert_int_equal(evq_duration_ns(-INFINITY), 1);
	assert_int_equal(evq_duration_ns(0.5e-9), 1);
	assert_int_equal(evq_duration_ns(2.5e-9), 3);
}

/* iround (sim/base/iround.h) against llround over every scale, both signs,
 * exact halves and their neighbours, and the values past 2^52 and
 * non-finite ones it hands to llround. Fails if the fraction's test is
 * > 0.5 (a half would round down) or the sign's half is left out. */
static void iround_is_llround(void **state)
{
	(void)state;
	uint64_t rng = 11;
	int halves = 0;
	for (int i = 0; i < 300000; i++) {
		uint64_t r = lcg_next(&rng);
		double x;
		switch (i % 4) {
		case 0: x = (double)(r >> 11) * 0x1p-53 * pow(2.0, (double)(r % 70)); break;
		case 1: x = (double)((r >> 16) % 100000000) + 0.5; break;
		case 2: x = nextafter((double)((r >> 16) % 100000000) + 0.5, (r & 1) ? 0.0 : 1e18); break;
		default: x = (double)(r >> 12) * 1.25; break;   /* around and past 2^52 */
		}
		if (r & 2)
			x = -x;
		halves += x - floor(x) == 0.5;
		assert_int_equal(iround(x), (int64_t)llround(x));
	}
	assert_true(halves > 50000);   /* the ties were tried */
	const double edge[] = { 0.0, -0.0, 0.5, -0.5, 0.49999999999999994, -0.49999999999999994,
				0x1p52 - 0.5, -0x1p52 + 0.5, 0x1p52, -0x1p52, 0x1p62, -0x1p62 };
	for (size_t i = 0; i < sizeof edge / sizeof edge[0]; i++)
		assert_int_equal(iround(edge[i]), (int64_t)llround(edge[i]));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(empty_queue),
		cmocka_unit_test(pops_by_time),
		cmocka_unit_test(fifo_among_equal_times),
		cmocka_unit_test(property_random_interleaving),
		cmocka_unit_test(reserved_seqs_order_as_pushed_early),
		cmocka_unit_test(advance_is_push_then_pop),
		cmocka_unit_test(front_slot_matches_scanning_queue),
		cmocka_unit_test(duration_rounds_as_llround),
		cmocka_unit_test(iround_is_llround),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
