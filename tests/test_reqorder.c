/*
 * reqorder: rows done in any order come out in id order, each once; past
 * REQORDER_HELD_BYTES of held rows they are spilled to sorted runs and
 * read back, so what is held in memory stays within the budget however
 * wide the window (here 60,000 rows, about 3 MB, behind one late id).
 */
#include "simutil.h"
#include "reqorder.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct sink {
	int64_t next; /* the id the next row must carry */
	int64_t bad;  /* rows out of order */
};

static void put(void *ctx, const char *row)
{
	struct sink *s = ctx;
	if (atoll(row) != s->next)
		s->bad++;
	s->next++;
}

static char *row_of(int64_t id)
{
	char buf[128];
	snprintf(buf, sizeof buf, "%lld,%s\n", (long long)id,
		 "a row about as long as one of requests.csv");
	return strdup(buf);
}

/* Rows of the ids in order[0..n), done in that order; peak: the most
 * bytes held in memory at once. */
static void feed(struct reqorder *o, struct sink *s, const int64_t *order, int64_t n, size_t *peak)
{
	for (int64_t k = 0; k < n; k++) {
		int64_t id = order[k];
		char *row = row_of(id);
		if (!reqorder_due(o, id)) {
			reqorder_hold(o, id, row);
		} else {
			put(s, row);
			free(row);
			reqorder_done(o, put, s);
		}
		if (o->held_bytes > *peak)
			*peak = o->held_bytes;
	}
}

struct done_at {
	double t;
	int64_t id;
};

static int by_t(const void *a, const void *b)
{
	const struct done_at *x = a, *y = b;
	return (x->t > y->t) - (x->t < y->t);
}

static void spills_past_the_budget_in_order(void **state)
{
	(void)state;
	const int64_t n = 200000;
	/* Ids done in bursts of eight reversed; every 1,000th 3,000 rows after
	 * its turn, and id 0 after 60,000. */
	struct done_at *d = malloc((size_t)n * sizeof *d);
	for (int64_t id = 0; id < n; id++) {
		double t = (double)(id / 8 * 8 + (7 - id % 8));
		if (id % 1000 == 0)
			t = id ? (double)id + 3000.5 : 60000.5;
		d[id] = (struct done_at){ t, id };
	}
	qsort(d, (size_t)n, sizeof *d, by_t);
	int64_t *mixed = malloc((size_t)n * sizeof *mixed);
	for (int64_t i = 0; i < n; i++)
		mixed[i] = d[i].id;
	free(d);
	struct reqorder o = { 0 };
	struct sink s = { 0 };
	size_t peak = 0;
	feed(&o, &s, mixed, n, &peak);
	assert_int_equal(s.next, n); /* every row once */
	assert_int_equal(s.bad, 0);  /* in id order */
	assert_int_equal(o.n_held, 0);
	assert_false(o.failed);
	/* Id 0's window is 60,000 rows of about 52 bytes (3.1 MB): all but
	 * the last budget's worth (about 20,000 rows) went to disk. */
	assert_true(o.n_spilled > 35000);
	assert_true(peak <= REQORDER_HELD_BYTES + 128); /* the budget and one row */
	assert_int_equal(o.n_runs, 0);			/* every run read back and closed */
	reqorder_free(&o);
	free(mixed);
}

/* Within the budget nothing is spilled: the rows go as they always did. */
static void small_window_stays_in_memory(void **state)
{
	(void)state;
	int64_t order[] = { 3, 1, 2, 0, 5, 4, 7, 6 };
	struct reqorder o = { 0 };
	struct sink s = { 0 };
	size_t peak = 0;
	feed(&o, &s, order, 8, &peak);
	assert_int_equal(s.next, 8);
	assert_int_equal(s.bad, 0);
	assert_int_equal(o.n_spilled, 0);
	reqorder_free(&o);
}

/* Memory follows the rows held, not the ids between them: two rows a
 * million ids apart hold two heap slots (a ring over the ids held a
 * million). */
static void memory_follows_the_rows_held(void **state)
{
	(void)state;
	struct reqorder o = { 0 };
	reqorder_hold(&o, 1, row_of(1));
	reqorder_hold(&o, 1000000, row_of(1000000));
	assert_int_equal(o.n_held, 2);
	assert_true(o.cap_heap < 64);
	reqorder_free(&o);
}

/* Rows held behind an id never put are named by reqorder_missing (the
 * writers assert there is none), come out once it is put, and are
 * dropped, not leaked, by reqorder_free (ASan). */
static void a_missing_id_is_named(void **state)
{
	(void)state;
	struct reqorder o = { 0 };
	struct sink s = { 0 };
	size_t peak = 0;
	assert_int_equal(reqorder_missing(&o), -1);
	const int64_t first[] = { 0, 2, 3, 5 };
	feed(&o, &s, first, 4, &peak);
	assert_int_equal(s.next, 1);   /* 0 put; 2, 3 and 5 wait for 1 */
	assert_int_equal(reqorder_missing(&o), 1);
	const int64_t one[] = { 1 };
	feed(&o, &s, one, 1, &peak);
	assert_int_equal(s.next, 4);   /* 1, 2, 3 put; 5 waits for 4 */
	assert_int_equal(s.bad, 0);
	assert_int_equal(reqorder_missing(&o), 4);
	reqorder_free(&o);   /* 5's row dropped */
	assert_int_equal(o.n_held, 0);
	assert_int_equal(reqorder_missing(&o), -1);
}

static uint64_t xorshift(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

/* The property over random orders: ids done at id + a heavy-tailed delay
 * (Pareto, shape 1.1, so most rows wait a little and a few wait for
 * thousands), rows of 16 to 1,200 bytes, 40 seeds of up to 20,000 ids.
 * Every row comes out once, in id order; what is held is the ids done less
 * the ids put at every step; the memory held stays within the budget and
 * one row; every spilled run is read back and closed. Some seeds spill
 * several runs that interleave with rows held in memory. */
static void random_orders_come_out_in_order(void **state)
{
	(void)state;
	int spilled_seeds = 0;
	size_t most_runs = 0;
	for (uint64_t seed = 1; seed <= 40; seed++) {
		uint64_t x = seed * 0x9E3779B97F4A7C15ull;
		int64_t n = 2000 + (int64_t)(xorshift(&x) % 18000);
		struct done_at *d = malloc((size_t)n * sizeof *d);
		for (int64_t id = 0; id < n; id++) {
			double u = ((double)(xorshift(&x) >> 11) + 1) / 9007199254740993.0;   /* (0, 1] */
			d[id] = (struct done_at){ (double)id + 0.5 * pow(u, -1 / 1.1), id };
		}
		qsort(d, (size_t)n, sizeof *d, by_t);
		struct reqorder o = { 0 };
		struct sink s = { 0 };
		size_t peak = 0, longest = 0;
		for (int64_t k = 0; k < n; k++) {
			int64_t id = d[k].id;
			size_t len = 16 + xorshift(&x) % 1184;
			longest = len > longest ? len : longest;
			char *row = malloc(len + 1);
			int head = snprintf(row, len + 1, "%lld,", (long long)id);
			memset(row + head, 'x', len - (size_t)head);
			row[len] = '\0';
			if (!reqorder_due(&o, id)) {
				reqorder_hold(&o, id, row);
			} else {
				put(&s, row);
				free(row);
				reqorder_done(&o, put, &s);
			}
			if (o.n_held != k + 1 - s.next)
				fail_msg("seed %llu, step %lld: %lld held, %lld done, %lld put", (unsigned long long)seed,
					 (long long)k, (long long)o.n_held, (long long)(k + 1), (long long)s.next);
			peak = o.held_bytes > peak ? o.held_bytes : peak;
			most_runs = o.n_runs > most_runs ? o.n_runs : most_runs;
		}
		assert_int_equal(s.next, n);
		assert_int_equal(s.bad, 0);
		assert_int_equal(o.n_held, 0);
		assert_int_equal(o.n_runs, 0);
		assert_false(o.failed);
		assert_true(peak <= REQORDER_HELD_BYTES + longest + 1);
		spilled_seeds += o.n_spilled > 0;
		reqorder_free(&o);
		free(d);
	}
	print_message("%d of 40 seeds spilled; at most %zu runs open at once\n", spilled_seeds, most_runs);
	assert_true(spilled_seeds >= 5);   /* the spill path was exercised, not only the heap */
	assert_true(most_runs >= 2);       /* runs merged with each other and the heap */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(spills_past_the_budget_in_order),
		cmocka_unit_test(small_window_stays_in_memory),
		cmocka_unit_test(memory_follows_the_rows_held),
		cmocka_unit_test(a_missing_id_is_named),
		cmocka_unit_test(random_orders_come_out_in_order),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
