/*
 * report_prom_llama: llama-server's /metrics for Ollama and llama.cpp runs
 * (the vLLM families are report_prom.c's).
 */
#include "report_int.h"

#include <stdbool.h>
#include <string.h>

/* llama-server's /metrics (tools/server: handle_metrics; formats.md §4),
 * as scraped at the end of the run. Ollama exports no metrics of its own:
 * these are its llama-server's. */
void report_prom_llamacpp(FILE *f, const struct run_result *res, const char *stamp)
{
	const struct engine_stats *es = &res->engine;
	struct ollama_means m;
	report_ollama_means(res, &m);
	struct {
		const char *name, *type, *help;
		double v;
	} rows[] = {
		{ "prompt_tokens_total", "counter", "Number of prompt tokens processed.", (double)m.prompt_tokens },
		{ "prompt_seconds_total", "counter", "Prompt process time", m.prompt_s },
		{ "tokens_predicted_total", "counter", "Number of generation tokens processed.",
		  (double)m.predicted_tokens },
		{ "tokens_predicted_seconds_total", "counter", "Predict process time", m.predicted_s },
		{ "n_decode_total", "counter", "Total number of llama_decode() calls", (double)es->n_decode_total },
		{ "n_tokens_max", "counter", "Largest observed n_tokens.", (double)es->n_tokens_max },
		{ "n_busy_slots_per_decode", "counter", "Average number of busy slots per llama_decode() call",
		  es->n_decode_total ? (double)es->n_busy_slots_total / (double)es->n_decode_total : 0 },
		{ "prompt_tokens_seconds", "gauge", "Average prompt throughput in tokens/s.",
		  m.prompt_s > 0 ? (double)m.prompt_tokens / m.prompt_s : 0 },
		{ "predicted_tokens_seconds", "gauge", "Average generation throughput in tokens/s.",
		  m.predicted_s > 0 ? (double)m.predicted_tokens / m.predicted_s : 0 },
		{ "requests_processing", "gauge", "Number of requests processing.", 0 },
		{ "requests_deferred", "gauge", "Number of requests deferred.", 0 },
	};
	if (!stamp) {
		fprintf(f, "# servesim: the scrape llama-server's /metrics would give at the end of the run\n");
		for (size_t i = 0; i < sizeof rows / sizeof *rows; i++)
			fprintf(f, "# HELP llamacpp:%s %s\n# TYPE llamacpp:%s %s\nllamacpp:%s %.9g\n", rows[i].name,
				rows[i].help, rows[i].name, rows[i].type, rows[i].name, rows[i].v);
		return;
	}
	/* OpenMetrics: a counter's family drops _total; llama-server's two
	 * "counters" without it are gauges there. One scrape, at the end. */
	for (size_t i = 0; i < sizeof rows / sizeof *rows; i++) {
		size_t n = strlen(rows[i].name);
		bool total = n > 6 && !strcmp(rows[i].name + n - 6, "_total");
		fprintf(f, "# HELP llamacpp:%.*s %s\n# TYPE llamacpp:%.*s %s\nllamacpp:%s %.9g%s\n",
			(int)(total ? n - 6 : n), rows[i].name, rows[i].help, (int)(total ? n - 6 : n),
			rows[i].name, total ? "counter" : "gauge", rows[i].name, rows[i].v, stamp);
	}
}

