/*
 * promfam: one family over scrapes and series (promfam.h).
 */
#include "promfam.h"
#include "omsnap.h"
#include "promobs.h"
#include "report_int.h"

#include <assert.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "timeline.h"
#include "xalloc.h"

/* all with series s current, in tmp. */
const struct prom_out *promfam_pick(const struct prom_out *all, int s, struct prom_out *tmp)
{
	*tmp = *all;
	tmp->cur = &all->series[s];
	snprintf(tmp->labels, sizeof tmp->labels, "%s", tmp->cur->labels);
	tmp->replica = tmp->cur->replica;
	return tmp;
}

/* One observation of a request metric: its value and when vLLM records it. */
struct obs {
	int64_t t_ns;
	double v;
};

static int by_time(const void *a, const void *b)
{
	const struct obs *x = a, *y = b;
	return (x->t_ns > y->t_ns) - (x->t_ns < y->t_ns);
}


/* The observations of m over the completed requests o counts, by time
 * (caller frees). */
static struct obs *collect(const struct prom_out *o, enum req_metric m, size_t *n)
{
	const struct reqtab *reqs = &o->res->reqs;
	struct obs *v = xcalloc(reqs->len ? reqs->len : 1, sizeof *v);
	*n = 0;
	for (size_t i = 0; i < reqs->len; i++) {
		const struct request *r = &reqs->v[i];
		if (r->state == REQ_FINISHED && (o->replica < 0 || r->replica == o->replica) &&
		    promobs_value(r, m, &v[*n].t_ns, &v[*n].v))
			(*n)++;
	}
	qsort(v, *n, sizeof *v, by_time);
	return v;
}

static int64_t scrape_ns(const struct prom_out *o, size_t k)
{
	return o->openmetrics ? (int64_t)k * o->interval_ns : INT64_MAX;
}

/* " 12.000" (OpenMetrics) or "" into buf. */
const char *promfam_stamp(const struct prom_out *o, size_t k, char *buf, size_t cap)
{
	if (!o->openmetrics)
		return "";
	snprintf(buf, cap, " %.3f", o->epoch_s + (double)scrape_ns(o, k) / 1e9);
	return buf;
}

/* HELP and TYPE. A counter's family is `name` in OpenMetrics and
 * `name_total` in Prometheus text, as prometheus_client writes them. */
void promfam_family(const struct prom_out *o, const char *name, const char *type, const char *help)
{
	const char *suffix = !o->openmetrics && !strcmp(type, "counter") ? "_total" : "";
	fprintf(o->f, "# HELP %s%s %s\n# TYPE %s%s %s\n", name, suffix, help, name, suffix, type);
}



/* A gauge from the time series: the last sample at or before the scrape;
 * 0 once the run is over (nothing runs, waits or holds KV then). */
void promfam_gauge_ts(const struct prom_out *all, const char *name, const char *help,
		     enum gauge_src src)
{
	promfam_family(all, name, "gauge", help);
	FOR_SERIES(all, o) {
		const struct ts_row *rows = o->cur->ts;
		size_t j = 0;
		for (size_t k = 0; k < o->n_scrapes; k++) {
			int64_t t = scrape_ns(o, k);
			while (!o->snap && j < o->cur->n_ts && rows[j].t_s * 1e9 <= (double)t)
				j++;
			struct ts_row saved;
			bool has = o->snap ? omsnap_gauge(o->snap, t, &saved) : j > 0;
			double v = 0;
			if (has && t < o->res->end_ns) {
				const struct ts_row *r = o->snap ? &saved : &rows[j - 1];
				v = src == G_RUNNING   ? (double)r->running
				    : src == G_WAITING ? (double)r->waiting
						       : r->kv_usage;
			}
			char ts[48];
			fprintf(o->f, "%s{%s} %.6g%s\n", name, o->labels, v, promfam_stamp(o, k, ts, sizeof ts));
		}
	}
}

/* A counter: the sum of m's observations before each scrape, plus (for
 * generation tokens) the token gaps of the timeline. extra: more labels. */
void promfam_counter_obs(const struct prom_out *all, const char *name, const char *help,
			const char *extra, enum req_metric m, bool plus_gaps)
{
	promfam_family(all, name, "counter", help);
	FOR_SERIES(all, o) {
		size_t n = 0, j = 0, w = 0;
		struct obs *v = NULL;
		double acc = 0, gap_sum = 0;
		if (o->obs) {   /* summed as the run went, in the same order */
			assert(!o->openmetrics);
			int64_t counts[1];
			promobs_hist(o->obs, o->replica, m, NULL, 0, counts, &acc);
		} else if (!o->snap) {
			v = collect(o, m, &n);
		}
		int64_t gaps[TIMELINE_N_ITL + 1] = { 0 };
		const struct timeline *tl = o->cur->tl;
		for (size_t k = 0; k < o->n_scrapes; k++) {
			int64_t t = scrape_ns(o, k);
			for (; j < n && v[j].t_ns < t; j++)
				acc += v[j].v;
			if (o->snap) {
				int64_t one[1];
				omsnap_hist(o->snap, t, m, NULL, 0, one, &acc);
			}
			double total = acc;
			if (plus_gaps && o->snap) {
				int64_t g = 0;
				omsnap_timeline(o->snap, t, true, gaps, &gap_sum);
				for (size_t b = 0; b <= TIMELINE_N_ITL; b++)
					g += gaps[b];
				total += (double)g;
			} else if (plus_gaps && tl) {
				size_t upto = t == INT64_MAX ? tl->n_windows : (size_t)(t / TIMELINE_WINDOW_NS);
				timeline_accumulate(tl, &tl->itl, w, upto, gaps, &gap_sum);
				w = upto > w ? upto : w;
				int64_t g = 0;
				for (size_t b = 0; b <= TIMELINE_N_ITL; b++)
					g += gaps[b];
				total += (double)g;
			} else if (plus_gaps) {
				total += (double)o->cur->itl->n;
			}
			char ts[48];
			fprintf(o->f, "%s_total{%s%s} %.17g%s\n", name, o->labels, extra, total,
				promfam_stamp(o, k, ts, sizeof ts));
		}
		free(v);
	}
}

/* One histogram sample set: cumulative counts over edges, then +Inf. */
static void hist_point(const struct prom_out *o, const char *name, const double *edges,
		       size_t n_edges, const int64_t *counts, double sum, size_t k)
{
	char ts[48];
	promfam_stamp(o, k, ts, sizeof ts);
	const char *st = o->openmetrics ? ts : "";
	int64_t acc = 0;
	for (size_t b = 0; b < n_edges; b++) {
		acc += counts[b];
		fprintf(o->f, "%s_bucket{%s,le=\"%s\"} %lld%s\n", name, o->labels,
			report_le_text(edges[b]).s, (long long)acc, st);
	}
	acc += counts[n_edges];
	fprintf(o->f, "%s_bucket{%s,le=\"+Inf\"} %lld%s\n", name, o->labels, (long long)acc, st);
	if (o->openmetrics) /* OpenMetrics orders _count before _sum; either parses */
		fprintf(o->f, "%s_count{%s} %lld%s\n%s_sum{%s} %.9g%s\n", name, o->labels,
			(long long)acc, st, name, o->labels, sum, st);
	else
		fprintf(o->f, "%s_sum{%s} %.9g\n%s_count{%s} %lld\n", name, o->labels, sum, name,
			o->labels, (long long)acc);
}

/* The samples of a histogram of a request metric over the given bucket
 * edges, for the requests o's current series counts and under its labels. */
void promfam_hist_obs_series(const struct prom_out *o, const char *name, enum req_metric m,
			    const double *edges, size_t n_edges)
{
	int64_t *counts = xcalloc(n_edges + 1, sizeof *counts);
	double sum = 0;
	if (o->obs) {   /* summed as the run went, in the same order: one scrape */
		assert(!o->openmetrics);
		promobs_hist(o->obs, o->replica, m, edges, n_edges, counts, &sum);
		hist_point(o, name, edges, n_edges, counts, sum, 0);
		free(counts);
		return;
	}
	if (o->snap) {   /* saved at every scrape as the run went */
		for (size_t k = 0; k < o->n_scrapes; k++) {
			omsnap_hist(o->snap, scrape_ns(o, k), m, edges, n_edges, counts, &sum);
			hist_point(o, name, edges, n_edges, counts, sum, k);
		}
		free(counts);
		return;
	}
	size_t n, j = 0;
	struct obs *v = collect(o, m, &n);
	for (size_t k = 0; k < o->n_scrapes; k++) {
		int64_t t = scrape_ns(o, k);
		for (; j < n && v[j].t_ns < t; j++) {
			size_t b = 0;
			while (b < n_edges && v[j].v > edges[b])
				b++;
			counts[b]++;
			sum += v[j].v;
		}
		hist_point(o, name, edges, n_edges, counts, sum, k);
	}
	free(counts);
	free(v);
}

/* A histogram family of a request metric: HELP, TYPE and every series'. */
void promfam_hist_obs(const struct prom_out *all, const char *name, const char *help, enum req_metric m,
		     const double *edges, size_t n_edges)
{
	promfam_family(all, name, "histogram", help);
	FOR_SERIES(all, o)
		promfam_hist_obs_series(o, name, m, edges, n_edges);
}

/* A histogram of the timeline (token gaps, step sizes), per series; in
 * Prometheus text without a timeline, the token gaps come from the
 * series' ITL histogram (loghist_count_le) and the step sizes are left
 * out. */
void promfam_hist_timeline(const struct prom_out *all, const char *name, const char *help, bool gaps)
{
	const double *edges = gaps ? timeline_itl_edges : timeline_iter_edges;
	size_t n_edges = gaps ? TIMELINE_N_ITL : TIMELINE_N_ITER;
	if (!all->series[0].tl && !gaps)
		return;
	promfam_family(all, name, "histogram", help);
	FOR_SERIES(all, o) {
		const struct timeline *tl = o->cur->tl;
		int64_t counts[TIMELINE_N_ITL + 1] = { 0 };
		double sum = 0;
		if (!tl) {
			const struct loghist *h = o->cur->itl;
			int64_t prev = 0;
			for (size_t b = 0; b < n_edges; b++) {
				int64_t c = loghist_count_le(h, edges[b]);
				counts[b] = c - prev;
				prev = c;
			}
			counts[n_edges] = h->n - prev;
			hist_point(o, name, edges, n_edges, counts, h->sum, 0);
			continue;
		}
		const struct timeline_hist *h = gaps ? &tl->itl : &tl->iter;
		size_t w = 0;
		for (size_t k = 0; k < o->n_scrapes && o->snap; k++) {
			omsnap_timeline(o->snap, scrape_ns(o, k), gaps, counts, &sum);
			hist_point(o, name, edges, n_edges, counts, sum, k);
		}
		for (size_t k = 0; k < o->n_scrapes && !o->snap; k++) {
			int64_t t = scrape_ns(o, k);
			size_t upto = t == INT64_MAX ? tl->n_windows : (size_t)(t / TIMELINE_WINDOW_NS);
			timeline_accumulate(tl, h, w, upto, counts, &sum);
			w = upto > w ? upto : w;
			hist_point(o, name, edges, n_edges, counts, sum, k);
		}
	}
}

/* A gauge that is one number all run long (end-of-run peaks): the same
 * value at every scrape, per series. */
void promfam_gauge_const(const struct prom_out *all, const char *name, const char *help, bool kv)
{
	promfam_family(all, name, "gauge", help);
	FOR_SERIES(all, o) {
		double v = kv ? o->cur->es->peak_kv_usage : o->cur->peak_waiting;
		for (size_t k = 0; k < o->n_scrapes; k++) {
			char ts[48];
			fprintf(o->f, "%s{%s} %.6g%s\n", name, o->labels, v, promfam_stamp(o, k, ts, sizeof ts));
		}
	}
}

/* A counter known only as an end-of-run total (the prefix cache's):
 * Prometheus text only. */
void promfam_counter_total(const struct prom_out *all, const char *name, const char *help, bool hits)
{
	if (all->openmetrics)
		return;
	promfam_family(all, name, "counter", help);
	FOR_SERIES(all, o) {
		int64_t v = hits ? o->cur->es->prefix_hits : o->cur->es->prefix_queries;
		fprintf(o->f, "%s_total{%s} %lld\n", name, o->labels, (long long)v);
	}
}

void promfam_label_value(char *out, size_t cap, const char *v)
{
	size_t n = 0;
	for (; *v && n + 3 < cap; v++) {
		if (*v == '\\' || *v == '"' || *v == '\n') {
			out[n++] = '\\';
			out[n++] = *v == '\n' ? 'n' : *v;
		} else {
			out[n++] = *v;
		}
	}
	out[n] = '\0';
}

