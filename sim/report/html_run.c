/*
 * html_run: the report's section for one simulated run: the workload as a
 * question, the answer (throughput, latency percentiles, SLO, cost), the
 * vllm bench serve table, the engine, the plots (running / waiting / KV
 * usage over time, output throughput over time, TTFT and ITL CDFs on log
 * axes), the configuration and what the numbers rest on.
 */
#include "html_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "num.h"
#include "pathname.h"
#include "report.h"
#include "resultdoc.h"
#include "run.h"
#include "timeline.h"
#include "xalloc.h"

/* At most this many points a line: enough for a smooth curve, small for a
 * mailed page. */
#define MAX_POINTS 600

#define num resultdoc_num

/* "200 prompts at 4 req/s (Poisson)", "…all at once", "…in 3 stages". */
static void workload_words(char *out, size_t cap, const struct run_result *res)
{
	const struct scenario *sc = &res->sc;
	size_t n = res->reqs.len;
	if (sc->trace[0])
		snprintf(out, cap, "%zu requests replayed from the trace %s", n,
			 pathname_base(sc->trace));
	else if (sc->users > 0)
		snprintf(out, cap, "%zu requests from %lld closed-loop users", n,
			 (long long)sc->users);
	else if (sc->n_stages > 1)
		snprintf(out, cap, "%zu prompts in %d load stages", n, sc->n_stages);
	else if (isinf(sc->request_rate))
		snprintf(out, cap, "%zu prompts sent at once", n);
	else
		snprintf(out, cap, "%zu prompts at %g req/s", n, sc->request_rate);
	if (sc->max_concurrency > 0) {
		size_t len = strlen(out);
		snprintf(out + len, cap - len, ", at most %lld in flight",
			 (long long)sc->max_concurrency);
	}
}

static void question(char *out, size_t cap, const struct run_result *res)
{
	char w[256];
	workload_words(w, sizeof w, res);
	char par[64] = "";
	if (res->sc.engine.tensor_parallel_size > 1 || res->sc.engine.pipeline_parallel_size > 1)
		snprintf(par, sizeof par, ", TP %lld × PP %lld",
			 (long long)res->sc.engine.tensor_parallel_size,
			 (long long)res->sc.engine.pipeline_parallel_size);
	snprintf(out, cap, "How does %s (%s) on %s%s serve %s?", res->model.id, res->weights->name,
		 res->hw.id, par, w);
}

static void answer(FILE *f, const struct run_result *res, json_t *j)
{
	char a[512], b[64], c[64];
	double thr = num(j, "output_throughput"), rps = num(j, "request_throughput");
	snprintf(a, sizeof a, "%s req/s, %s output tokens/s", html_num(b, sizeof b, rps, 2),
		 html_num(c, sizeof c, thr, 0));
	html_answer_begin(f, a);
	char t50[32], t99[32], i50[32], i99[32];
	fputs("<p>", f);
	html_text(f,
		  "TTFT p50 %s ms, p99 %s ms · ITL p50 %s ms, p99 %s ms · %lld of %zu requests "
		  "completed.",
		  html_num(t50, sizeof t50, num(j, "median_ttft_ms"), 1),
		  html_num(t99, sizeof t99, num(j, "p99_ttft_ms"), 1),
		  html_num(i50, sizeof i50, num(j, "median_itl_ms"), 2),
		  html_num(i99, sizeof i99, num(j, "p99_itl_ms"), 2), (long long)res->all.completed,
		  res->reqs.len);
	fputs("</p>\n<p>", f);
	const struct scenario *sc = &res->sc;
	if (sc->slo_ttft_ms || sc->slo_tpot_ms || sc->slo_e2el_ms) {
		double good =
			res->all.completed ? (double)res->all.good / (double)res->all.completed : 0;
		char lim[160] = "";
		size_t n = 0;
		if (sc->slo_ttft_ms)
			n += (size_t)snprintf(lim + n, sizeof lim - n, "TTFT ≤ %g ms ",
					      sc->slo_ttft_ms);
		if (sc->slo_tpot_ms && n < sizeof lim)
			n += (size_t)snprintf(lim + n, sizeof lim - n, "TPOT ≤ %g ms ",
					      sc->slo_tpot_ms);
		if (sc->slo_e2el_ms && n < sizeof lim)
			snprintf(lim + n, sizeof lim - n, "E2E ≤ %g ms ", sc->slo_e2el_ms);
		html_text(f,
			  "SLO (each request: %s): %.1f%% of requests meet it; goodput %s req/s. ",
			  lim, 100 * good, html_num(b, sizeof b, num(j, "request_goodput"), 2));
	}
	int64_t gpus = sc->engine.tensor_parallel_size * sc->engine.pipeline_parallel_size;
	if (res->hw.has_price && thr > 0) {
		double usd_h = res->hw.price_per_hour_usd * (double)gpus;
		html_text(f,
			  "Cost: %lld × %s at %.2f USD/GPU-hour = %.2f USD/hour; at this load %.3f "
			  "USD per million "
			  "output tokens.",
			  (long long)gpus, res->hw.id, res->hw.price_per_hour_usd, usd_h,
			  usd_h / (thr * 3600 / 1e6));
	} else {
		html_text(f, "%lld × %s; the profile has no price.", (long long)gpus, res->hw.id);
	}
	fputs("</p>\n", f);
	html_answer_end(f);
}

static void latency_table(FILE *f, json_t *j)
{
	static const char *const heads[] = { "metric (ms)", "mean", "median", "p90", "p99" };
	static const char *const keys[][2] = {
		{ "ttft", "Time to first token (TTFT)" },
		{ "tpot", "Time per output token (TPOT)" },
		{ "itl", "Inter-token latency (ITL)" },
		{ "e2el", "End-to-end latency (E2EL)" },
	};
	html_table(f, "Latency, as vllm bench serve reports it", heads, 5);
	for (size_t m = 0; m < 4; m++) {
		char v[4][40], k[64];
		static const char *const stat[] = { "mean", "median", "p90", "p99" };
		const char *cells[5] = { keys[m][1] };
		for (int s = 0; s < 4; s++) {
			snprintf(k, sizeof k, "%s_%s_ms", stat[s], keys[m][0]);
			v[s][0] = '\t';
			html_num(v[s] + 1, sizeof v[s] - 1, num(j, k), 2);
			cells[s + 1] = v[s];
		}
		html_row(f, cells, 5);
	}
	html_table_end(f);
}

/* Rows of (label, number) from a JSON object's keys, in the table. */
static void kv_row(FILE *f, const char *label, double v, int dec)
{
	char b[64];
	b[0] = '\t';
	html_num(b + 1, sizeof b - 1, v, dec);
	const char *cells[2] = { label, b };
	html_row(f, cells, 2);
}

static void run_tables(FILE *f, const struct run_result *res, json_t *j)
{
	static const char *const heads[] = { "", "" };
	fputs("<div class=\"tables\">\n", f);
	html_table(f, "Run", heads, 2);
	kv_row(f, "Benchmark duration (s)", num(j, "duration"), 2);
	kv_row(f, "Successful requests", num(j, "completed"), 0);
	kv_row(f, "Failed requests", num(j, "failed"), 0);
	kv_row(f, "Request throughput (req/s)", num(j, "request_throughput"), 2);
	kv_row(f, "Output token throughput (tok/s)", num(j, "output_throughput"), 2);
	kv_row(f, "Total token throughput (tok/s)", num(j, "total_token_throughput"), 2);
	kv_row(f, "Peak output token throughput (tok/s)", num(j, "max_output_tokens_per_s"), 0);
	html_table_end(f);
	latency_table(f, j);
	fputs("</div>\n<div class=\"tables\">\n", f);
	const struct engine_stats *es = &res->engine;
	html_table(f, "Engine", heads, 2);
	if (res->sc.engine.cls->family == ENGINE_FAMILY_VLLM) {
		kv_row(f, "GPU KV blocks", (double)es->num_gpu_blocks, 0);
		kv_row(f, "Block size (tokens)", (double)es->block_size, 0);
		kv_row(f, "KV pool (GiB per GPU)",
		       (double)es->num_gpu_blocks * es->kv_bytes_per_block / GIB, 2);
		kv_row(f, "max_num_batched_tokens", (double)es->max_num_batched_tokens, 0);
		kv_row(f, "max_num_seqs", (double)es->max_num_seqs, 0);
		kv_row(f, "Peak KV cache usage (%)", 100 * es->peak_kv_usage, 1);
		kv_row(f, "Preemptions", (double)es->preemptions, 0);
	} else {
		kv_row(f, "Parallel slots (num_parallel)", (double)es->num_parallel, 0);
		kv_row(f, "Context per slot (num_ctx)", (double)es->num_ctx, 0);
		kv_row(f, "Rejected, queue full", (double)es->rejected, 0);
	}
	kv_row(f, "Peak requests waiting", (double)res->peak_waiting, 0);
	kv_row(f, "Prefix cache hit rate (%)",
	       es->prefix_queries ? 100.0 * (double)es->prefix_hits / (double)es->prefix_queries
				  : 0,
	       1);
	kv_row(f, "Engine busy (%)",
	       res->end_ns ? 100 * es->busy_s / ((double)res->end_ns / 1e9) : 0, 1);
	html_table_end(f);
	json_t *ss = json_object_get(j, "servesim");
	static const struct {
		const char *key, *caption;
	} parts[] = {
		{ "mean_ttft_breakdown", "Where TTFT went (mean, ms)" },
		{ "mean_itl_breakdown", "Where ITL went (mean per decode token, ms)" },
	};
	for (size_t p = 0; p < 2; p++) {
		json_t *o = json_object_get(ss, parts[p].key);
		html_table(f, parts[p].caption, heads, 2);
		const char *k;
		json_t *v;
		json_object_foreach(o, k, v)
		{
			char label[64];
			snprintf(label, sizeof label, "%s", k);
			char *ms = strstr(label, "_ms");
			if (ms)
				*ms = '\0';
			for (char *c = label; *c; c++)
				if (*c == '_')
					*c = ' ';
			kv_row(f, label, json_number_value(v), 3);
		}
		html_table_end(f);
	}
	fputs("</div>\n", f);
}

/* ---- plots ---- */

struct xy {
	double *x, *y;
	size_t n;
};

static void xy_alloc(struct xy *v, size_t cap)
{
	v->x = xcalloc(cap ? cap : 1, sizeof *v->x);
	v->y = xcalloc(cap ? cap : 1, sizeof *v->y);
	v->n = 0;
}

static void xy_free(struct xy *v)
{
	free(v->x);
	free(v->y);
}

static void timeseries_plots(FILE *f, const struct run_result *res)
{
	size_t stride = res->n_ts > MAX_POINTS ? (res->n_ts + MAX_POINTS - 1) / MAX_POINTS : 1;
	struct xy run, wait, kv;
	xy_alloc(&run, res->n_ts / stride + 2);
	xy_alloc(&wait, res->n_ts / stride + 2);
	xy_alloc(&kv, res->n_ts / stride + 2);
	for (size_t i = 0; i < res->n_ts; i += stride) {
		/* The busiest sample of each stride, so a spike is not thinned away. */
		const struct ts_row *t = &res->ts[i];
		int64_t r = t->running, w = t->waiting;
		double k = t->kv_usage;
		for (size_t j = i; j < i + stride && j < res->n_ts; j++) {
			r = res->ts[j].running > r ? res->ts[j].running : r;
			w = res->ts[j].waiting > w ? res->ts[j].waiting : w;
			k = res->ts[j].kv_usage > k ? res->ts[j].kv_usage : k;
		}
		run.x[run.n] = wait.x[wait.n] = kv.x[kv.n] = t->t_s;
		run.y[run.n++] = (double)r;
		wait.y[wait.n++] = (double)w;
		kv.y[kv.n++] = 100 * k;
	}
	bool vllm = res->sc.engine.cls->family == ENGINE_FAMILY_VLLM;
	struct svg_series rw[] = {
		{ vllm ? "running (vllm:num_requests_running)" : "running (busy slots)",
		  html_colors[0], run.x, run.y, NULL, run.n, SVG_LINE },
		{ vllm ? "waiting (vllm:num_requests_waiting)" : "waiting (queued for a slot)",
		  html_colors[1], wait.x, wait.y, NULL, wait.n, SVG_LINE },
	};
	struct svg_plot p1 = { .title = "Requests running and waiting",
			       .xlabel = "simulated time (s)",
			       .ylabel = "requests",
			       .y_from_zero = true,
			       .series = rw,
			       .n_series = 2 };
	svg_plot(f, &p1);
	struct svg_series ks[] = {
		{ vllm ? "KV cache usage (vllm:kv_cache_usage_perc)" : "KV cells in use",
		  html_colors[2], kv.x, kv.y, NULL, kv.n, SVG_LINE },
	};
	struct svg_plot p2 = { .title = "KV pool usage",
			       .xlabel = "simulated time (s)",
			       .ylabel = "KV cache used (%)",
			       .y_from_zero = true,
			       .series = ks,
			       .n_series = 1 };
	svg_plot(f, &p2);
	xy_free(&run);
	xy_free(&wait);
	xy_free(&kv);

	/* Output tokens in each simulated second: the token gaps the timeline
	 * counted there plus the first tokens of the requests (a run without a
	 * timeline gets no throughput plot). */
	if (!res->timeline)
		return;
	const struct timeline *tl = res->timeline;
	size_t secs = (size_t)(res->end_ns / TIMELINE_WINDOW_NS) + 1;
	double *tok = xcalloc(secs, sizeof *tok);
	for (size_t w = 0; w < secs; w++) {
		int64_t c[TIMELINE_N_ITL + 1] = { 0 };
		double sum = 0;
		timeline_accumulate(tl, &tl->itl, w, w + 1, c, &sum);
		for (size_t k = 0; k <= TIMELINE_N_ITL; k++)
			tok[w] += (double)c[k];
	}
	for (size_t i = 0; i < res->reqs.len; i++) {
		const struct request *r = &res->reqs.v[i];
		if (r->state == REQ_FINISHED && r->first_token_ns >= 0 &&
		    (size_t)(r->first_token_ns / TIMELINE_WINDOW_NS) < secs)
			tok[r->first_token_ns / TIMELINE_WINDOW_NS]++;
	}
	/* Long runs: the mean of each group of `per` seconds, still tokens/s. */
	size_t per = secs > MAX_POINTS ? (secs + MAX_POINTS - 1) / MAX_POINTS : 1;
	struct xy thr;
	xy_alloc(&thr, secs / per + 1);
	for (size_t i = 0; i < secs; i += per) {
		double sum = 0;
		size_t n = 0;
		for (; n < per && i + n < secs; n++)
			sum += tok[i + n];
		thr.x[thr.n] = (double)i + (double)n / 2;
		thr.y[thr.n++] = sum / (double)n;
	}
	free(tok);
	struct svg_series ts[] = {
		{ per > 1 ? "output tokens/s (mean of each few seconds)"
			  : "output tokens in each second",
		  html_colors[3], thr.x, thr.y, NULL, thr.n, SVG_LINE },
	};
	struct svg_plot p3 = { .title = "Output throughput over time",
			       .xlabel = "simulated time (s)",
			       .ylabel = "output tokens/s",
			       .y_from_zero = true,
			       .series = ts,
			       .n_series = 1 };
	svg_plot(f, &p3);
	xy_free(&thr);
}

/* The empirical CDF of sorted values (s) in ms, thinned to MAX_POINTS. */
static void cdf_of(const double *v, size_t n, struct xy *out)
{
	xy_alloc(out, MAX_POINTS + 2);
	/* Rounded up: at most MAX_POINTS points, and the last one. */
	size_t step = n > MAX_POINTS ? (n + MAX_POINTS - 1) / MAX_POINTS : 1;
	for (size_t i = 0; i < n; i += step) {
		out->x[out->n] = v[i] * 1e3;
		out->y[out->n++] = (double)(i + 1) / (double)n;
	}
	if (n && (n - 1) % step) {
		out->x[out->n] = v[n - 1] * 1e3;
		out->y[out->n++] = 1;
	}
}

struct itl_acc {
	struct xy *out;
	double total, acc, last_frac;
	double last_mid;
};

static void itl_point(void *ctx, double mid, int64_t count)
{
	struct itl_acc *a = ctx;
	a->acc += (double)count;
	double frac = a->acc / a->total;
	a->last_mid = mid;
	if (frac - a->last_frac >= 1.0 / MAX_POINTS || frac >= 1) {
		if (a->out->n < MAX_POINTS + 1) {
			a->out->x[a->out->n] = mid * 1e3;
			a->out->y[a->out->n++] = frac;
		}
		a->last_frac = frac;
	}
}

static void cdf_plots(FILE *f, struct run_result *res, json_t *j)
{
	struct samples *tt = &res->all.ttft;
	samples_sort(tt);
	struct xy ttft;
	cdf_of(tt->v, tt->n, &ttft);
	struct svg_mark tm[3];
	char l50[64], l99[64], lslo[64];
	snprintf(l50, sizeof l50, "p50 %.1f ms", num(j, "median_ttft_ms"));
	snprintf(l99, sizeof l99, "p99 %.1f ms", num(j, "p99_ttft_ms"));
	tm[0] = (struct svg_mark){ num(j, "median_ttft_ms"), l50, "#555555" };
	tm[1] = (struct svg_mark){ num(j, "p99_ttft_ms"), l99, "#d62728" };
	size_t n_tm = 2;
	if (res->sc.slo_ttft_ms) {
		snprintf(lslo, sizeof lslo, "SLO %g ms", res->sc.slo_ttft_ms);
		tm[n_tm++] = (struct svg_mark){ res->sc.slo_ttft_ms, lslo, "#9467bd" };
	}
	struct svg_series ts[] = { { "TTFT per request", html_colors[0], ttft.x, ttft.y, NULL,
				     ttft.n, SVG_STEP } };
	struct svg_plot p1 = { .title = "TTFT distribution (CDF, log axis)",
			       .xlabel = "time to first token (ms)",
			       .ylabel = "fraction of requests at or below",
			       .xlog = true,
			       .y_fixed = true,
			       .ymin = 0,
			       .ymax = 1,
			       .series = ts,
			       .n_series = 1,
			       .marks = tm,
			       .n_marks = n_tm };
	svg_plot(f, &p1);
	xy_free(&ttft);

	/* Every token gap, from the ITL histogram (values within 1/4096). */
	struct xy itl;
	xy_alloc(&itl, MAX_POINTS + 2);
	struct itl_acc acc = { &itl, (double)res->all.itl.n, 0, 0, 0 };
	if (res->all.itl.n)
		loghist_each(&res->all.itl, itl_point, &acc);
	char i50[64], i99[64];
	snprintf(i50, sizeof i50, "p50 %.2f ms", num(j, "median_itl_ms"));
	snprintf(i99, sizeof i99, "p99 %.2f ms", num(j, "p99_itl_ms"));
	struct svg_mark im[] = {
		{ num(j, "median_itl_ms"), i50, "#555555" },
		{ num(j, "p99_itl_ms"), i99, "#d62728" },
	};
	struct svg_series is[] = { { "every gap between two tokens", html_colors[2], itl.x, itl.y,
				     NULL, itl.n, SVG_STEP } };
	struct svg_plot p2 = { .title = "ITL distribution (CDF, log axis)",
			       .xlabel = "inter-token latency (ms)",
			       .ylabel = "fraction of output tokens at or below",
			       .xlog = true,
			       .y_fixed = true,
			       .ymin = 0,
			       .ymax = 1,
			       .series = is,
			       .n_series = 1,
			       .marks = im,
			       .n_marks = 2 };
	svg_plot(f, &p2);
	xy_free(&itl);
}

/* The scenario file as written, and what the engine resolved. */
static void configuration(FILE *f, const struct html_source *s)
{
	const struct run_result *res = s->run;
	fputs("<h3>Configuration</h3>\n<p>", f);
	html_text(f, "Scenario: %s; seed %lld.",
		  s->scenario_path ? pathname_base(s->scenario_path) : "the built-in default",
		  (long long)res->sc.seed);
	fputs("</p>\n", f);
	if (s->overrides && s->overrides->len) {
		fputs("<p>Overrides (--set):</p>\n<pre>", f);
		for (size_t i = 0; i < s->overrides->len; i++) {
			const struct inidoc_entry *o = &s->overrides->entries[i];
			html_text(f, "%s.%s=%s", o->section, o->key, o->value);
			fputc('\n', f);
		}
		fputs("</pre>\n", f);
	}
	if (s->scenario_path) {
		FILE *in = fopen(s->scenario_path, "r");
		if (in) {
			fputs("<pre>", f);
			char line[1024];
			while (fgets(line, sizeof line, in))
				svg_escape(f, line);
			fclose(in);
			fputs("</pre>\n", f);
		}
	}
}

int html_run_section(FILE *f, struct html_source *s, struct err *e)
{
	(void)e;
	struct run_result *res = s->run;
	static const double pct[] = { 50, 90, 99 };
	struct report_opts ro = { .percentiles = pct, .n_percentiles = 3 };
	json_t *j = report_json(res, &ro);
	char q[768];
	question(q, sizeof q, res);
	html_question(f, q);
	answer(f, res, j);
	run_tables(f, res, j);
	fputs("<h3>Over time</h3>\n<div class=\"plots\">\n", f);
	timeseries_plots(f, res);
	fputs("</div>\n<h3>Distributions</h3>\n<div class=\"plots\">\n", f);
	cdf_plots(f, res, j);
	fputs("</div>\n", f);
	configuration(f, s);
	fputs("<h3>What the numbers rest on</h3>\n<p>", f);
	struct model_params mp;
	model_params(&res->model, &mp);
	html_text(f,
		  "Model %s (%s config: %.2f B parameters, weights %s). Step times come from the "
		  "hardware "
		  "profile below through the roofline step model (docs/step-model.md).",
		  res->model.id, res->model.model_type, mp.total / 1e9, res->weights->name);
	fputs("</p>\n", f);
	html_basis_model(f, res->model.id);
	html_basis_hardware(f, res->hw.id);
	json_decref(j);
	return 0;
}
