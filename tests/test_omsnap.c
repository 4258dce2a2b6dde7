/*
 * omsnap: the scrapes run --out saves as a lean run goes equal, at every
 * candidate scrape time t, a count over everything by brute force: the
 * request metrics recorded before t (their sum in (time, id) order, bit
 * for bit), the token gaps of the whole seconds before t, and the last
 * time-series sample at or before t; with observations, gaps and samples
 * that fall exactly on whole seconds, where "before" and "at or before"
 * part.
 */
#include "testutil.h"

#include <stdlib.h>
#include <string.h>

#include "omsnap.h"
#include "promobs.h"
#include "report.h"
#include "timeline.h"

#define N_REQ  600
#define N_GAPS 4000
#define SPAN_S 300 /* scraped every second: every whole second a candidate */

/* Request i's first token at i/2 s (every other one on a whole second),
 * its finish 1.5 s later plus i % 7 ms. */
static void request_of(int i, struct request *r)
{
	memset(r, 0, sizeof *r);
	r->id = i;
	r->state = REQ_FINISHED;
	r->replica = 0;
	r->prompt_len = 100 + i % 13;
	r->output_len = 20 + i % 5;
	r->send_ns = (int64_t)i * 500000000 - 250000000 + (int64_t)(i % 3) * 1000;
	if (r->send_ns < 0)
		r->send_ns = 0;
	r->enqueue_ns = r->first_scheduled_ns = r->send_ns;
	r->first_token_ns = (int64_t)i * 500000000;
	r->last_token_ns = r->finish_ns =
		r->first_token_ns + 1500000000 + (int64_t)(i % 7) * 1000000;
}

static void omsnap_equals_brute_force(void **state)
{
	(void)state;
	struct err e;
	struct promobs *obs = promobs_create();
	struct omsnap *s = omsnap_create(obs, &e);
	assert_non_null(s);
	struct timeline *tl = timeline_create_totals();
	tl->on_fold = omsnap_fold;
	tl->fold_ctx = s;
	/* Samples every 0.25 s (whole seconds among them) and token gaps
	 * every 75 ms (some on whole seconds), fed with the requests in
	 * time order, as a run would. */
	int next_gap = 0, next_sample = 0;
	for (int i = 0; i < N_REQ; i++) {
		struct request r;
		request_of(i, &r);
		int64_t now = r.first_token_ns;
		for (; next_gap < N_GAPS && (int64_t)next_gap * 75000000 <= now; next_gap++)
			timeline_gap(tl, (int64_t)next_gap * 75000000, 0.001 * (1 + next_gap % 97));
		for (; next_sample * 0.25 * 1e9 <= (double)now; next_sample++) {
			struct ts_row row = { .t_s = next_sample * 0.25,
					      .running = next_sample,
					      .waiting = next_sample % 5,
					      .kv_usage = 0.001 * next_sample };
			omsnap_sample(s, &row);
		}
		/* what is not done yet records at or after now */
		promobs_row(obs, &r, now);
	}
	for (; next_gap < N_GAPS; next_gap++) /* the last tokens, after the last first token */
		timeline_gap(tl, (int64_t)next_gap * 75000000, 0.001 * (1 + next_gap % 97));
	promobs_finish(obs);
	assert_int_equal(omsnap_finish(s, tl, &e), 0);
	assert_true(tl->n_windows > TIMELINE_RING); /* the ring folded as it went, then the rest */
	/* each window's gaps, summed in the order recorded */
	double wsum[SPAN_S + 1] = { 0 };
	int64_t wcount[SPAN_S + 1] = { 0 };
	for (int j = 0; j < N_GAPS; j++) {
		int64_t w = (int64_t)j * 75000000 / TIMELINE_WINDOW_NS;
		wsum[w] += 0.001 * (1 + j % 97);
		wcount[w]++;
	}
	for (int64_t k = 0; k <= SPAN_S + 2; k++) {
		int64_t t = k * TIMELINE_WINDOW_NS;
		/* TTFT: recorded at the first token, summed in (time, id) order */
		int64_t counts[64], n = 0;
		double sum, want = 0;
		omsnap_hist(s, t, RM_TTFT, NULL, 0, counts, &sum);
		for (int i = 0; i < N_REQ; i++) {
			struct request r;
			request_of(i, &r);
			if (r.first_token_ns < t) {
				want += (double)(r.first_token_ns - r.send_ns) / 1e9;
				n++;
			}
		}
		assert_int_equal(counts[0], n);
		assert_memory_equal(&sum, &want, sizeof sum);
		/* E2E at the finish: (time, id) order is the id order here */
		omsnap_hist(s, t, RM_E2E, NULL, 0, counts, &sum);
		want = 0;
		n = 0;
		for (int i = 0; i < N_REQ; i++) {
			struct request r;
			request_of(i, &r);
			if (r.finish_ns < t) {
				want += (double)(r.finish_ns - r.send_ns) / 1e9;
				n++;
			}
		}
		assert_int_equal(counts[0], n);
		assert_memory_equal(&sum, &want, sizeof sum);
		/* token gaps of the windows before t, summed window by window */
		omsnap_timeline(s, t, true, counts, &sum);
		int64_t g = 0;
		for (int b = 0; b <= TIMELINE_N_ITL; b++)
			g += counts[b];
		double total = 0;
		int64_t wn = 0;
		for (int64_t w = 0; w < k && w <= SPAN_S; w++) {
			total += wsum[w];
			wn += wcount[w];
		}
		assert_int_equal(g, wn);
		assert_memory_equal(&sum, &total, sizeof sum);
		/* the gauge: the last sample with t_s·1e9 <= t */
		struct ts_row row;
		int last = -1;
		for (int j = 0; j < next_sample; j++)
			if (j * 0.25 * 1e9 <= (double)t)
				last = j;
		bool has = omsnap_gauge(s, t, &row);
		assert_int_equal(has, last >= 0);
		if (has)
			assert_int_equal(row.running, last);
	}
	assert_int_equal(omsnap_failed(s, &e), 0);
	omsnap_destroy(s);
	promobs_destroy(obs);
	timeline_destroy(tl);
}

/* The scrape interval: the first of 1, 2, 5 … 3600 s that keeps a run to
 * REPORT_OM_MAX_SCRAPES scrapes. */
static void interval_keeps_the_scrapes(void **state)
{
	(void)state;
	assert_int_equal(omsnap_interval_ns(0), TIMELINE_WINDOW_NS);
	assert_int_equal(omsnap_interval_ns(357 * TIMELINE_WINDOW_NS), TIMELINE_WINDOW_NS);
	assert_int_equal(omsnap_interval_ns(358 * TIMELINE_WINDOW_NS),
			 TIMELINE_WINDOW_NS); /* 360 scrapes */
	assert_int_equal(omsnap_interval_ns(359 * TIMELINE_WINDOW_NS), 2 * TIMELINE_WINDOW_NS);
	assert_int_equal(omsnap_interval_ns(800 * TIMELINE_WINDOW_NS), 5 * TIMELINE_WINDOW_NS);
	assert_int_equal(omsnap_interval_ns(INT64_C(1) << 62), 3600 * TIMELINE_WINDOW_NS);
}

/* A request counts once in every request's series and once in its
 * replica's; one no replica took (replica -1) once in all, not twice. */
static void each_request_counts_once(void **state)
{
	(void)state;
	struct promobs *obs = promobs_create();
	const int replicas[] = { -1, 2, 2 };
	for (int i = 0; i < 3; i++) {
		struct request r;
		request_of(i, &r);
		r.replica = replicas[i];
		promobs_row(obs, &r, 0);
	}
	promobs_finish(obs);
	int64_t counts[1];
	double sum;
	promobs_hist(obs, -1, RM_ONE, NULL, 0, counts, &sum);
	assert_int_equal(counts[0], 3);
	assert_true(sum == 3);   /* exact: a sum of ones */
	promobs_hist(obs, 2, RM_ONE, NULL, 0, counts, &sum);
	assert_int_equal(counts[0], 2);
	promobs_hist(obs, 0, RM_ONE, NULL, 0, counts, &sum);
	assert_int_equal(counts[0], 0);
	promobs_destroy(obs);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(omsnap_equals_brute_force),
		cmocka_unit_test(interval_keeps_the_scrapes),
		cmocka_unit_test(each_request_counts_once),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
