#include "ollamafields.h"

void ollama_fields_of(const struct request *r, struct ollama_fields *o)
{
	o->total_ns = r->finish_ns - r->send_ns;
	o->load_ns = r->load_ns;
	o->prompt_eval_count = r->prompt_eval_count > 0 ? r->prompt_eval_count : r->prompt_len;
	o->prompt_eval_ns = r->first_token_ns - r->first_scheduled_ns;
	o->eval_count = r->output_len;
	o->eval_ns = r->last_token_ns - r->first_token_ns;
}

double ollama_c10_rate(int64_t count, int64_t ns)
{
	return ns > 0 ? (double)count / (double)ns * 1e9 : 0;
}

void ollama_means_add(struct ollama_means *m, const struct request *r)
{
	struct ollama_fields o;
	ollama_fields_of(r, &o);
	m->n++;
	m->total_ms += (double)o.total_ns / 1e6;
	m->load_ms += (double)o.load_ns / 1e6;
	m->prompt_eval_count += (double)o.prompt_eval_count;
	m->prompt_eval_ms += (double)o.prompt_eval_ns / 1e6;
	m->eval_count += (double)o.eval_count;
	m->eval_ms += (double)o.eval_ns / 1e6;
	if (o.prompt_eval_ns > 0) {
		m->prefill_tok_s += ollama_c10_rate(o.prompt_eval_count, o.prompt_eval_ns);
		m->n_prefill++;
	}
	if (o.eval_ns > 0) {
		m->decode_tok_s += ollama_c10_rate(o.eval_count, o.eval_ns);
		m->n_decode++;
	}
	m->prompt_tokens += o.prompt_eval_count - r->cached_tokens;
	m->prompt_s += (double)o.prompt_eval_ns / 1e9;
	m->predicted_tokens += o.eval_count;
	m->predicted_s += (double)o.eval_ns / 1e9;
}

void ollama_means_finish(struct ollama_means *m)
{
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
