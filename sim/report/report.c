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

void report_ollama_fields(const struct request *r, struct ollama_fields *o)
{
	o->total_ns = r->finish_ns - r->send_ns;
	o->load_ns = r->load_ns;
	o->prompt_eval_count = r->prompt_eval_count > 0 ? r->prompt_eval_count : r->prompt_len;
	o->prompt_eval_ns = r->first_token_ns - r->first_scheduled_ns;
	o->eval_count = r->output_len;
	o->eval_ns = r->last_token_ns - r->first_token_ns;
}

/* SEED C10: count / duration × 1e9; 0 when the duration is 0. */
double report_c10_rate(int64_t count, int64_t ns)
{
	return ns > 0 ? (double)count / (double)ns * 1e9 : 0;
}

void report_ollama_means(const struct run_result *res, struct ollama_means *m)
{
	memset(m, 0, sizeof *m);
	for (size_t i = 0; i < res->reqs.len; i++) {
		const struct request *r = &res->reqs.v[i];
		if (r->state != REQ_FINISHED)
			continue;
		struct ollama_fields o;
		report_ollama_fields(r, &o);
		m->n++;
		m->total_ms += (double)o.total_ns / 1e6;
		m->load_ms += (double)o.load_ns / 1e6;
		m->prompt_eval_count += (double)o.prompt_eval_count;
		m->prompt_eval_ms += (double)o.prompt_eval_ns / 1e6;
		m->eval_count += (double)o.eval_count;
		m->eval_ms += (double)o.eval_ns / 1e6;
		if (o.prompt_eval_ns > 0) {
			m->prefill_tok_s += report_c10_rate(o.prompt_eval_count, o.prompt_eval_ns);
			m->n_prefill++;
		}
		if (o.eval_ns > 0) {
			m->decode_tok_s += report_c10_rate(o.eval_count, o.eval_ns);
			m->n_decode++;
		}
		m->prompt_tokens += o.prompt_eval_count - r->cached_tokens;
		m->prompt_s += (double)o.prompt_eval_ns / 1e9;
		m->predicted_tokens += o.eval_count;
		m->predicted_s += (double)o.eval_ns / 1e9;
	}
	double n = m->n ? (double)m->n : 1;
	m->total_ms /= n;
	m->load_ms /= n;
	m->prompt_eval_count /= n;
	m->prompt_eval_ms /= n;
	m->eval_count /= n;
	m->eval_ms /= n;
	m->prefill_tok_s /= m->n_prefill ? (double)m->n_prefill : 1;
	m->decode_tok_s /= m->n_decode ? (double)m->n_decode : 1;
}
