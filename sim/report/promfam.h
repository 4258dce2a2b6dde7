/*
 * promfam: how one Prometheus / OpenMetrics family is rendered (the
 * renderings and series of report_prom.c): HELP and TYPE once, then for
 * every series (engine="i") its samples at every scrape. Gauges come from
 * the series' time series, counters and request histograms from the
 * request records it counts (a request's metrics count when vLLM records
 * them: TTFT and prompt tokens at its first token, the rest when it
 * finishes), token-gap and step histograms from its timeline. A scrape at
 * time t counts what happened before t. Internal to sim/report.
 */
#ifndef SERVESIM_PROMFAM_H
#define SERVESIM_PROMFAM_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "run.h"

struct promobs;
struct omsnap;

/* What a request metric is, from its record (completed requests only). */
enum req_metric {
	RM_TTFT,
	RM_E2E,
	RM_QUEUE,
	RM_INFERENCE,
	RM_PREFILL,
	RM_DECODE,
	RM_PREFILL_PER_TOKEN,
	RM_REQUEST_TPOT,
	RM_PROMPT_TOKENS,
	RM_GENERATION_TOKENS,
	RM_ONE,
	RM_PREEMPTIONS,
};

/* One engine's series: vLLM labels each engine core of a data-parallel
 * deployment engine="i" under the same metric names, so a cluster's
 * replicas are engines 0…n-1 and a single engine is engine="0". */
struct prom_series {
	char labels[512];            /* model_name="…",engine="i" */
	int replica;                 /* the requests counted: -1 every one, else those routed to it */
	const struct ts_row *ts;     /* its gauges over time */
	size_t n_ts;
	const struct timeline *tl;   /* its token gaps and steps; NULL: none recorded */
	const struct loghist *itl;   /* its token gaps, without a timeline */
	const struct engine_stats *es;
	double peak_waiting;
	int engine;
};

/* A rendering: Prometheus text with one scrape at the end (no
 * timestamps), or OpenMetrics with scrapes at k·interval, k = 0..n-1,
 * stamped epoch_s + k·interval. Each family has a sample set per series;
 * the emitters below see one series at a time through promfam_pick(). */
struct prom_out {
	FILE *f;
	const struct run_result *res;
	bool openmetrics;
	const struct prom_series *series;
	int n_series;
	const struct prom_series *cur;
	char labels[512];            /* cur's */
	int replica;                 /* cur's */
	size_t n_scrapes;
	int64_t interval_ns;
	double epoch_s;
	/* A lean run's request metrics, summed as it went (promobs.h; one
	 * scrape only), or NULL: from res's request records. */
	const struct promobs *obs;
	/* OpenMetrics of a lean run: every family's scrapes as saved while it
	 * went (omsnap.h; one series), or NULL: from res's records, time
	 * series and timeline. */
	const struct omsnap *snap;
};

enum gauge_src { G_RUNNING, G_WAITING, G_KV };

/* Each emitter below writes one family: HELP and TYPE, then the samples of
 * every series (FOR_SERIES makes `o` the current one). */
#define FOR_SERIES(all, o)                                                                       \
	struct prom_out tmp_;                                                                    \
	for (int s_ = 0; s_ < (all)->n_series; s_++)                                             \
		for (const struct prom_out *o = promfam_pick(all, s_, &tmp_); o; o = NULL)

/* all with series s current, in tmp (returned). */
const struct prom_out *promfam_pick(const struct prom_out *all, int s, struct prom_out *tmp);

/* HELP and TYPE. A counter's family is `name` in OpenMetrics and
 * `name_total` in Prometheus text, as prometheus_client writes them. */
void promfam_family(const struct prom_out *o, const char *name, const char *type, const char *help);

/* " 12.000" (OpenMetrics: scrape k's time) or "" into buf. */
const char *promfam_stamp(const struct prom_out *o, size_t k, char *buf, size_t cap);

/* The families, each HELP, TYPE and the samples of every series at every
 * scrape (promfam.c says what each counts). */
void promfam_gauge_ts(const struct prom_out *all, const char *name, const char *help, enum gauge_src src);
void promfam_counter_obs(const struct prom_out *all, const char *name, const char *help, const char *extra,
			 enum req_metric m, bool plus_gaps);
void promfam_hist_obs(const struct prom_out *all, const char *name, const char *help, enum req_metric m,
		      const double *edges, size_t n_edges);
void promfam_hist_timeline(const struct prom_out *all, const char *name, const char *help, bool gaps);
void promfam_gauge_const(const struct prom_out *all, const char *name, const char *help, bool kv);
void promfam_counter_total(const struct prom_out *all, const char *name, const char *help, bool hits);

/* The samples of one series (o's current) of a request-metric histogram. */
void promfam_hist_obs_series(const struct prom_out *o, const char *name, enum req_metric m,
			     const double *edges, size_t n_edges);

/* A label value with \\, " and newline escaped (exposition formats). */
void promfam_label_value(char *out, size_t cap, const char *v);

#endif
