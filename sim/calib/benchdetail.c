#include "benchdetail.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* An array key, NULL when absent or null; -1 with e when of another type
 * or of another length than n. */
static int get_array(const json_t *top, const char *key, size_t n, const json_t **out, const char *path,
		     struct err *e)
{
	const json_t *v = json_object_get(top, key);
	*out = NULL;
	if (!v || json_is_null(v))
		return 0;
	if (!json_is_array(v))
		return err_set(e, "%s: %s: expected an array, one entry per request", path, key);
	if (json_array_size(v) != n)
		return err_set(e, "%s: %s: %zu entries, but input_lens has %zu", path, key, json_array_size(v), n);
	*out = v;
	return 0;
}

/* A number of seconds >= 0 (and > 0 when positive is set). */
static int get_seconds(const json_t *v, const char *key, size_t i, bool positive, double *out, const char *path,
		       struct err *e)
{
	double s = json_is_number(v) ? json_number_value(v) : NAN;
	if (!isfinite(s) || s < 0 || (positive && s == 0))
		return err_set(e, "%s: %s[%zu]: expected seconds %s 0 (a measured latency)", path, key, i,
			       positive ? ">" : ">=");
	*out = s;
	return 0;
}

int benchdetail_read(struct benchdetail *d, const json_t *top, const char *path, struct err *e)
{
	memset(d, 0, sizeof *d);
	for (int m = 0; m < N_LAT_METRICS; m++)
		d->mean_ms[m] = NAN;
	const json_t *in = json_object_get(top, "input_lens");
	if (!json_is_array(in))
		return 0;
	size_t n = json_array_size(in);
	const json_t *out, *ttfts, *itls, *lat;
	if (get_array(top, "output_lens", n, &out, path, e) || get_array(top, "ttfts", n, &ttfts, path, e) ||
	    get_array(top, "itls", n, &itls, path, e) || get_array(top, "latencies", n, &lat, path, e))
		return -1;
	if (!out)
		return 0;   /* the trace reader names what is missing */
	d->n = n;
	double sum_ttft = 0, sum_gap = 0, sum_lat = 0;
	for (size_t i = 0; i < n; i++) {
		const json_t *o = json_array_get(out, i);
		if (!json_is_integer(o) || json_integer_value(o) < 0)
			return err_set(e, "%s: output_lens[%zu]: expected a token count >= 0", path, i);
		bool ok = json_integer_value(o) > 0;
		d->n_ok += ok;
		double t;
		if (ttfts) {
			if (get_seconds(json_array_get(ttfts, i), "ttfts", i, ok, &t, path, e))
				return -1;
			sum_ttft += ok ? t : 0;
		}
		if (lat) {
			if (get_seconds(json_array_get(lat, i), "latencies", i, false, &t, path, e))
				return -1;
			sum_lat += ok ? t : 0;
		}
		if (itls) {
			const json_t *g = json_array_get(itls, i), *x;
			if (!json_is_array(g))
				return err_set(e, "%s: itls[%zu]: expected an array of token gaps in seconds", path, i);
			size_t k;
			json_array_foreach(g, k, x) {
				char key[48];
				snprintf(key, sizeof key, "itls[%zu]", i);
				if (get_seconds(x, key, k, false, &t, path, e))
					return -1;
				if (ok) {
					sum_gap += t;
					d->n_gaps++;
				}
			}
		}
	}
	if (d->n_ok && ttfts)
		d->mean_ms[LAT_TTFT] = 1e3 * sum_ttft / (double)d->n_ok;
	if (d->n_ok && lat)
		d->mean_ms[LAT_E2EL] = 1e3 * sum_lat / (double)d->n_ok;
	if (d->n_gaps)
		d->mean_ms[LAT_ITL] = 1e3 * sum_gap / (double)d->n_gaps;
	return 0;
}

int benchdetail_check(const struct benchdetail *d, struct benchres *b, const char *path, struct err *e)
{
	static const char *const arrays[] = { "ttfts", NULL, "itls", "latencies" };
	for (int m = 0; m < N_LAT_METRICS; m++) {
		double from = d->mean_ms[m], *have = &b->ms[m][BENCH_MEAN];
		if (isnan(from))
			continue;
		if (isnan(*have)) {
			*have = from;
			continue;
		}
		if (fabs(*have - from) > 0.005 * fabs(from) + 0.01)
			return err_set(e, "%s: mean_%s_ms is %.6g, but the %s of its %zu successful requests give a mean of %.6g ms: the summary and the per-request arrays disagree",
				       path, lat_metrics[m].key, *have, arrays[m], d->n_ok, from);
	}
	return 0;
}
