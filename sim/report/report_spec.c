/*
 * report_spec: speculative decoding's counters.
 */
#include "report_spec.h"

#include "num.h"

static bool on(const struct run_result *res)
{
	return res->sc.engine.vllm.speculative_method[0] != '\0';
}

static double rate(const struct engine_stats *es)
{
	return es->spec_draft_tokens ? (double)es->spec_accepted_tokens / (double)es->spec_draft_tokens : 0;
}

void report_spec_text(FILE *f, const struct run_result *res)
{
	if (!on(res))
		return;
	const struct engine_stats *es = &res->engine;
	fprintf(f, "%-40s %s, k = %lld\n", "Speculative decoding:", res->sc.engine.vllm.speculative_method,
		(long long)res->sc.engine.vllm.num_speculative_tokens);
	fprintf(f, "%-40s %-10.2f\n", "Draft acceptance rate (%):", 100 * rate(es));
	fprintf(f, "%-40s %-10.2f\n", "Drafter time (% of busy):", es->busy_s > 0 ? 100 * es->spec_draft_s / es->busy_s : 0);
	fprintf(f, "%-40s %-10.2f\n", "Drafter weights (GiB per GPU):", es->spec_weight_bytes / GIB);
	fprintf(f, "%-40s %-10.2f\n", "Drafter share of a KV block (%):",
		es->kv_bytes_per_block > 0 ? 100 * es->spec_kv_bytes_per_block / es->kv_bytes_per_block : 0);
}

json_t *report_spec_json(const struct run_result *res)
{
	if (!on(res))
		return NULL;
	const struct engine_stats *es = &res->engine;
	json_t *o = json_object();
	json_object_set_new(o, "method", json_string(res->sc.engine.vllm.speculative_method));
	json_object_set_new(o, "num_speculative_tokens", json_integer(res->sc.engine.vllm.num_speculative_tokens));
	json_object_set_new(o, "num_draft_tokens", json_integer(es->spec_draft_tokens));
	json_object_set_new(o, "num_accepted_tokens", json_integer(es->spec_accepted_tokens));
	json_object_set_new(o, "acceptance_rate", json_real(rate(es)));
	json_object_set_new(o, "drafter_s", json_real(es->spec_draft_s));
	json_object_set_new(o, "drafter_weight_bytes", json_real(es->spec_weight_bytes));
	json_object_set_new(o, "drafter_kv_bytes_per_block", json_real(es->spec_kv_bytes_per_block));
	return o;
}

void report_spec_prom(FILE *f, const struct run_result *res, const char *labels)
{
	if (!on(res))
		return;
	const struct engine_stats *es = &res->engine;
	fprintf(f, "# HELP vllm:spec_decode_num_draft_tokens_total Number of draft tokens.\n"
		   "# TYPE vllm:spec_decode_num_draft_tokens_total counter\n"
		   "vllm:spec_decode_num_draft_tokens_total{%s} %lld\n", labels, (long long)es->spec_draft_tokens);
	fprintf(f, "# HELP vllm:spec_decode_num_accepted_tokens_total Number of accepted tokens.\n"
		   "# TYPE vllm:spec_decode_num_accepted_tokens_total counter\n"
		   "vllm:spec_decode_num_accepted_tokens_total{%s} %lld\n", labels,
		(long long)es->spec_accepted_tokens);
}
