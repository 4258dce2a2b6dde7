/*
 * leanout: what a lean run streams for the outputs asked of it, as its
 * requests are done and as it samples: requests.csv's rows and
 * timeseries.csv's (--plot, --out: reqcsv, tsrows), --save-detailed's
 * arrays (reqdetail), the Prometheus scrape's request metrics (promobs,
 * and a cluster's per-replica TTFT and E2E: replhist) and openmetrics.txt's scrapes over time (omsnap: --out of one vLLM
 * engine). leanout_open makes what is asked and sets a run's callbacks;
 * leanout_finish, after the run, settles what waits and hands each to
 * the run's result, whose writers then give a full run's bytes.
 *
 * Invariant: every stream made is fed by the run's one callback of its
 * kind (leanout_row, leanout_sample, omsnap_fold), and res's pointers to
 * them stay the caller's: leanout_close frees them after the report.
 */
#ifndef SERVESIM_LEANOUT_H
#define SERVESIM_LEANOUT_H

#include <stdbool.h>

#include "err.h"
#include "run.h"

/* What the outputs need streamed. */
struct leanout_want {
	bool csv;	  /* requests.csv and timeseries.csv (--plot, --out) */
	bool detail;	  /* --save-detailed */
	bool prom;	  /* the end-of-run scrape (promobs; with the totals timeline) */
	bool openmetrics; /* --out's scrapes over time (one vLLM engine; needs prom) */
	bool replicas;	  /* prom of a vLLM cluster: its replicas' TTFT and E2E (replhist) */
};

struct leanout {
	struct reqcsv *rows;
	struct tsrows *ts_rows;
	struct reqdetail *detail;
	struct promobs *obs;
	struct omsnap *snap;
	struct replhist *rep_hist;
};

/* Makes what w asks and sets o's callbacks (o->lean is the caller's).
 * Returns 0, or -1 with e (a temporary file cannot be made). */
int leanout_open(struct leanout *lo, const struct leanout_want *w, struct run_opts *o,
		 struct err *e);

/* After the run: the request metrics settled, the scrapes saved, and
 * each stream handed to res (rows, ts_rows, detail, prom_obs, om_snap,
 * rep_hist).
 * Returns 0, or -1 with e. */
int leanout_finish(struct leanout *lo, struct run_result *res, struct err *e);

/* Frees every stream (after the report; res's pointers are then stale). */
void leanout_close(struct leanout *lo);

#endif
