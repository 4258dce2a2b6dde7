/*
 * report: the numbers every writer shares (report_int.h); the writers are
 * report_text.c, report_json.c, report_prom.c and report_csv.c.
 */
#include "report_int.h"

#include <math.h>
#include <string.h>

void report_summarize(struct group_metrics *g, int which, const struct report_opts *o,
		      struct summary *s)
{
	memset(s, 0, sizeof *s);
	if (which == 2) {
		s->mean = loghist_mean(&g->itl) * 1e3;
		s->std = loghist_std(&g->itl) * 1e3;
		s->median = loghist_percentile(&g->itl, 50) * 1e3;
		for (size_t i = 0; i < o->n_percentiles; i++)
			s->p[i] = loghist_percentile(&g->itl, o->percentiles[i]) * 1e3;
		return;
	}
	struct samples *v = which == 0 ? &g->ttft : which == 1 ? &g->tpot : &g->e2el;
	s->mean = samples_mean(v) * 1e3;
	s->std = samples_std(v) * 1e3;
	s->median = samples_percentile(v, 50) * 1e3;
	for (size_t i = 0; i < o->n_percentiles; i++)
		s->p[i] = samples_percentile(v, o->percentiles[i]) * 1e3;
}

/* "99" for 99, "99.9" for 99.9, as serve.py's p_word. */
void report_p_word(double p, char *out, size_t cap)
{
	if (p == floor(p))
		snprintf(out, cap, "%d", (int)p);
	else
		snprintf(out, cap, "%g", p);
}

double report_group_duration(const struct group_metrics *g)
{
	return (double)(g->last_done_ns - g->start_ns) / 1e9;
}

int64_t report_peak_tokens_per_s(const struct run_result *res)
{
	return res->peak_second_tokens;
}

void report_ollama_means(const struct run_result *res, struct ollama_means *m)
{
	*m = res->ollama;
	ollama_means_finish(m);
}

const char *report_sketch_note(const struct group_metrics *g)
{
	if (!samples_is_sketch(&g->ttft) && !samples_is_sketch(&g->tpot) && !samples_is_sketch(&g->e2el) &&
	    !samples_is_sketch(&g->queue))
		return NULL;
	return "sketched past 65536 requests: within 1/4096 (0.025%) relative; --exact-percentiles for exact";
}
