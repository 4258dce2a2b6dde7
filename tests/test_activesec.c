/*
 * activesec: the per-second concurrency counted as requests come and go
 * equals the count over every request at the end (a brute force over each
 * second), and its ring stays the size of the longest request's life, not
 * the run's span.
 */
#include "testutil.h"

#include <stdbool.h>

#include <gsl/gsl_rng.h>

#include "activesec.h"

struct req {
	int64_t send, finish;
	bool ok, done;
};

/* The most successful requests active in one whole second, by brute force. */
static int64_t brute_peak(const struct req *v, size_t n, int64_t span)
{
	int64_t best = 0;
	for (int64_t s = 0; s <= span; s++) {
		int64_t k = 0;
		for (size_t i = 0; i < n; i++)
			k += v[i].ok && v[i].send <= s && s <= v[i].finish;
		if (k > best)
			best = k;
	}
	return best;
}

/* Requests sent in time order (an open loop), each living up to
 * max_life seconds, finished in the order of their finish times; the clock
 * at each finish is that time. Exact: integers. */
static void equals_brute_force(void **state)
{
	(void)state;
	gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
	for (int trial = 0; trial < 50; trial++) {
		gsl_rng_set(rng, (unsigned long)trial + 1);
		size_t n = 1 + gsl_rng_uniform_int(rng, 300);
		int64_t max_life = 1 + (int64_t)gsl_rng_uniform_int(rng, trial % 2 ? 5 : 200);
		struct req *v = calloc(n, sizeof *v);
		int64_t t = 0, span = 0;
		for (size_t i = 0; i < n; i++) {
			t += (int64_t)gsl_rng_uniform_int(rng, trial % 3 ? 3 : 400);  /* gaps, some idle */
			v[i].send = t;
			v[i].finish = t + (int64_t)gsl_rng_uniform_int(rng, (unsigned long)max_life);
			v[i].ok = gsl_rng_uniform(rng) < 0.9;
			if (v[i].finish > span)
				span = v[i].finish;
		}
		struct activesec a = { 0 };
		/* Events in time order: a send before a finish at the same second. */
		size_t next_send = 0, left = n;
		for (int64_t now = 0; left > 0; now++) {
			while (next_send < n && v[next_send].send == now)
				activesec_send(&a, v[next_send++].send);
			for (size_t i = 0; i < next_send; i++)
				if (!v[i].done && v[i].finish == now) {
					activesec_done(&a, v[i].send, v[i].finish, v[i].ok, now);
					v[i].done = true;
					left--;
				}
			/* The ring holds no more than the open seconds. */
			assert_true(a.cap <= 64 || a.cap < 2 * (size_t)(max_life + 2) + 64);
		}
		assert_int_equal(activesec_peak(&a), brute_peak(v, n, span));
		activesec_free(&a);
		free(v);
	}
	gsl_rng_free(rng);
}

/* A million seconds of one request at a time: the ring never grows past
 * its first size (a difference array over the span would be 8 MB). */
static void memory_follows_latency(void **state)
{
	(void)state;
	struct activesec a = { 0 };
	for (int64_t s = 0; s < 1000000; s += 2) {
		activesec_send(&a, s);
		activesec_done(&a, s, s + 1, 1, s + 1);
	}
	assert_int_equal(a.cap, 64);
	assert_int_equal(activesec_peak(&a), 1);
	activesec_free(&a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(equals_brute_force),
		cmocka_unit_test(memory_follows_latency),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
