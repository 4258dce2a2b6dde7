/*
 * leanout: the streams of a lean run's outputs (leanout.h).
 */
#include "leanout.h"
#include "omsnap.h"
#include "promobs.h"
#include "report.h"

#include <string.h>

static void leanout_row(void *ctx, const struct request *r, int64_t settled_ns)
{
	struct leanout *lo = ctx;
	if (lo->rows)
		reqcsv_row(lo->rows, r, settled_ns);
	if (lo->detail)
		reqdetail_row(lo->detail, r, settled_ns);
	if (lo->obs)
		promobs_row(lo->obs, r, settled_ns);
	if (lo->rep_hist)
		replhist_row(lo->rep_hist, r, settled_ns);
}

static void leanout_sample(void *ctx, const struct ts_row *row)
{
	struct leanout *lo = ctx;
	if (lo->ts_rows)
		tsrows_row(lo->ts_rows, row);
	if (lo->snap)
		omsnap_sample(lo->snap, row);
}

int leanout_open(struct leanout *lo, const struct leanout_want *w, struct run_opts *o,
		 struct err *e)
{
	memset(lo, 0, sizeof *lo);
	if (w->csv && (!(lo->rows = reqcsv_create(e)) || !(lo->ts_rows = tsrows_create(e))))
		goto fail;
	if (w->detail && !(lo->detail = reqdetail_create(e)))
		goto fail;
	if (w->prom || w->openmetrics) {
		lo->obs = promobs_create();
		o->timeline_totals = true;
	}
	if (w->replicas)
		lo->rep_hist = replhist_create();
	if (w->openmetrics) {
		if (!(lo->snap = omsnap_create(lo->obs, e)))
			goto fail;
		o->on_fold = omsnap_fold;
		o->fold_ctx = lo->snap;
	}
	if (lo->rows || lo->detail || lo->obs) {
		o->on_record = leanout_row;
		o->record_ctx = lo;
	}
	if (lo->ts_rows || lo->snap) {
		o->timeseries = true;
		o->on_sample = leanout_sample;
		o->sample_ctx = lo;
	}
	return 0;
fail:
	leanout_close(lo);
	return -1;
}

int leanout_finish(struct leanout *lo, struct run_result *res, struct err *e)
{
	res->rows = lo->rows;
	res->ts_rows = lo->ts_rows;
	res->detail = lo->detail;
	if (lo->obs)
		promobs_finish(lo->obs);
	res->prom_obs = lo->obs;
	res->om_snap = lo->snap;
	res->rep_hist = lo->rep_hist;
	if (lo->snap && res->timeline)
		return omsnap_finish(lo->snap, res->timeline, e);
	return 0;
}

void leanout_close(struct leanout *lo)
{
	reqcsv_destroy(lo->rows);
	tsrows_destroy(lo->ts_rows);
	reqdetail_destroy(lo->detail);
	omsnap_destroy(lo->snap);
	promobs_destroy(lo->obs);
	replhist_destroy(lo->rep_hist);
	memset(lo, 0, sizeof *lo);
}
