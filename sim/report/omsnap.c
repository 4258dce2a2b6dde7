/*
 * omsnap: openmetrics.txt's scrapes of a lean run, saved at every
 * candidate scrape time as the run goes (omsnap.h).
 */
#include "omsnap.h"
#include "promobs.h"
#include "report.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "timeline.h"
#include "xalloc.h"

/* The scrape intervals, s: the first that keeps a run to
 * REPORT_OM_MAX_SCRAPES scrapes is used (the last one past that). */
static const int64_t steps_s[] = { 1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 1800, 3600 };
#define N_STEPS (sizeof steps_s / sizeof *steps_s)

int64_t omsnap_interval_ns(int64_t end_ns)
{
	for (size_t i = 0; i < N_STEPS; i++)
		if (end_ns / (steps_s[i] * TIMELINE_WINDOW_NS) + 2 <= REPORT_OM_MAX_SCRAPES)
			return steps_s[i] * TIMELINE_WINDOW_NS;
	return steps_s[N_STEPS - 1] * TIMELINE_WINDOW_NS;
}

/* The first candidate scrape time after `after` (ns): a multiple j·s of
 * an interval s with j < REPORT_OM_MAX_SCRAPES (any j for the last one).
 * A run scraped every s has at most REPORT_OM_MAX_SCRAPES scrapes, so a
 * later multiple is never one of its scrapes. */
static int64_t next_candidate(int64_t after)
{
	if (after < 0)
		return 0;
	int64_t best = INT64_MAX;
	for (size_t i = 0; i < N_STEPS; i++) {
		int64_t s = steps_s[i] * TIMELINE_WINDOW_NS, j = after / s + 1;
		if ((j < REPORT_OM_MAX_SCRAPES || i == N_STEPS - 1) && j * s < best)
			best = j * s;
	}
	return best;
}

/* One source's records, one per candidate time up to `covered`, in an
 * unlinked temporary file (record k at k·rec bytes). */
struct track {
	FILE *f;
	size_t rec;
	int64_t *at; /* the candidate times saved, ascending */
	size_t n, cap;
	int64_t covered; /* every candidate <= it is saved; -1: none yet */
};

struct gauge_rec {
	int64_t has; /* a sample at or before the time */
	struct ts_row row;
};

/* The folded token gaps and step sizes of a totals-only timeline. */
struct tl_rec {
	int64_t itl[TIMELINE_N_ITL + 1], iter[TIMELINE_N_ITER + 1];
	double itl_sum, iter_sum;
};

struct omsnap {
	struct promobs *obs;
	struct track t_obs, t_gauge, t_tl;
	void *buf;		   /* one obs record */
	struct gauge_rec last;	   /* the newest sample */
	const struct timeline *tl; /* after omsnap_finish: the final totals */
	bool write_failed;
	bool *read_failed; /* set by the readers (which take s const) */
};

static int track_open(struct track *k, size_t rec, struct err *e)
{
	*k = (struct track){ .rec = rec, .covered = -1 };
	if (!(k->f = tmpfile()))
		return err_set(e, "openmetrics.txt: cannot make a temporary file: %s",
			       strerror(errno));
	return 0;
}

static void track_close(struct track *k)
{
	if (k->f)
		fclose(k->f);
	free(k->at);
}

static void track_save(struct omsnap *s, struct track *k, int64_t t, const void *rec)
{
	xgrow(&k->at, &k->cap, k->n + 1, sizeof *k->at);
	k->at[k->n++] = t;
	k->covered = t;
	if (fwrite(rec, k->rec, 1, k->f) != 1)
		s->write_failed = true;
}

/* The record saved for t into rec: true; false when t is past every one
 * saved (the source's final state holds). */
static bool track_find(const struct omsnap *s, const struct track *k, int64_t t, void *rec)
{
	if (t > k->covered)
		return false;
	size_t lo = 0, hi = k->n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (k->at[mid] < t)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == k->n || k->at[lo] != t || fseek(k->f, (long)(lo * k->rec), SEEK_SET) ||
	    fread(rec, k->rec, 1, k->f) != 1) {
		*s->read_failed = true;
		memset(rec, 0, k->rec);
	}
	return true;
}

/* promobs_on_settle: the sums hold the observations before t_ns, so they
 * are every candidate's from the last one saved up to t_ns. */
static void on_settle(void *ctx, const struct promobs *p, int64_t t_ns)
{
	struct omsnap *s = ctx;
	int64_t b = next_candidate(s->t_obs.covered);
	if (b > t_ns)
		return;
	promobs_save(p, -1, s->buf);
	for (; b <= t_ns; b = next_candidate(b))
		track_save(s, &s->t_obs, b, s->buf);
}

struct omsnap *omsnap_create(struct promobs *obs, struct err *e)
{
	struct omsnap *s = xcalloc(1, sizeof *s);
	s->obs = obs;
	s->read_failed = xcalloc(1, sizeof *s->read_failed);
	if (track_open(&s->t_obs, promobs_state_size(obs), e) ||
	    track_open(&s->t_gauge, sizeof(struct gauge_rec), e) ||
	    track_open(&s->t_tl, sizeof(struct tl_rec), e)) {
		omsnap_destroy(s);
		return NULL;
	}
	s->buf = xcalloc(1, s->t_obs.rec);
	promobs_on_settle(obs, on_settle, s);
	return s;
}

void omsnap_destroy(struct omsnap *s)
{
	if (!s)
		return;
	track_close(&s->t_obs);
	track_close(&s->t_gauge);
	track_close(&s->t_tl);
	free(s->buf);
	free(s->read_failed);
	free(s);
}

static void tl_state(const struct timeline *t, struct tl_rec *r)
{
	memcpy(r->itl, t->itl.folded, sizeof r->itl);
	memcpy(r->iter, t->iter.folded, sizeof r->iter);
	r->itl_sum = t->itl.folded_sum;
	r->iter_sum = t->iter.folded_sum;
}

void omsnap_fold(void *ctx, const struct timeline *t, size_t lo, size_t hi)
{
	struct omsnap *s = ctx;
	int64_t b = next_candidate(s->t_tl.covered);
	if (b > (int64_t)hi * TIMELINE_WINDOW_NS)
		return;
	if (b < (int64_t)lo * TIMELINE_WINDOW_NS)
		s->write_failed = true; /* a window boundary was passed untold: cannot happen */
	struct tl_rec r;
	tl_state(t, &r);
	for (; b <= (int64_t)hi * TIMELINE_WINDOW_NS; b = next_candidate(b))
		track_save(s, &s->t_tl, b, &r);
}

void omsnap_sample(struct omsnap *s, const struct ts_row *row)
{
	/* As report_prom's gauges: the last sample with t_s·1e9 <= t. */
	double x = row->t_s * 1e9;
	for (int64_t b = next_candidate(s->t_gauge.covered); (double)b < x; b = next_candidate(b))
		track_save(s, &s->t_gauge, b, &s->last);
	s->last.has = 1;
	s->last.row = *row;
}

int omsnap_finish(struct omsnap *s, struct timeline *tl, struct err *e)
{
	timeline_fold_rest(tl);
	s->tl = tl;
	if (s->write_failed || fflush(s->t_obs.f) || fflush(s->t_gauge.f) || fflush(s->t_tl.f))
		return err_set(e, "openmetrics.txt: cannot write its scrapes to a temporary file");
	return 0;
}

bool omsnap_gauge(const struct omsnap *s, int64_t t_ns, struct ts_row *row)
{
	struct gauge_rec r;
	if (!track_find(s, &s->t_gauge, t_ns, &r))
		r = s->last;
	*row = r.row;
	return r.has != 0;
}

void omsnap_hist(const struct omsnap *s, int64_t t_ns, enum req_metric m, const double *edges,
		 size_t n_edges, int64_t *counts, double *sum)
{
	void *buf = xmalloc(s->t_obs.rec);
	if (!track_find(s, &s->t_obs, t_ns, buf))
		promobs_save(s->obs, -1, buf);
	promobs_hist_saved(s->obs, buf, m, edges, n_edges, counts, sum);
	free(buf);
}

void omsnap_timeline(const struct omsnap *s, int64_t t_ns, bool gaps, int64_t *counts, double *sum)
{
	struct tl_rec r;
	if (!track_find(s, &s->t_tl, t_ns, &r))
		tl_state(s->tl, &r);
	if (gaps)
		memcpy(counts, r.itl, sizeof r.itl);
	else
		memcpy(counts, r.iter, sizeof r.iter);
	*sum = gaps ? r.itl_sum : r.iter_sum;
}

int omsnap_failed(const struct omsnap *s, struct err *e)
{
	if (*s->read_failed)
		return err_set(
			e, "openmetrics.txt: cannot read its scrapes back from a temporary file");
	return 0;
}
