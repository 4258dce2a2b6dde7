/*
 * run: one simulation, from a scenario to its metrics.
 *
 * The event loop (`while (next event) dispatch`) owns the clock; the client
 * (send times, the max_concurrency semaphore, the API overhead), the engine
 * and the workload are driven from it. Metrics are gathered as vllm bench
 * serve gathers them, for the whole run and for each load stage (a stage's
 * requests are those sent during it).
 */
#ifndef SERVESIM_RUN_H
#define SERVESIM_RUN_H

#include <stdint.h>

#include "cluster.h"
#include "engine.h"
#include "hwprofile.h"
#include "model.h"
#include "ollamafields.h"
#include "request.h"
#include "scenario.h"
#include "stats.h"

struct timeline;
struct progress;
struct reqcsv;
struct reqdetail;
struct tsrows;
struct omsnap;
struct replhist;

/* Metrics of a set of requests (the whole run, or one stage). Seconds. */
struct group_metrics {
	int64_t completed, failed, good;
	int64_t total_input, total_output;
	int64_t start_ns, last_done_ns;
	struct samples ttft, tpot, e2el, queue, prefill_wait;
	struct loghist itl;
	int64_t preemptions, cached_tokens;
	/* Where TTFT went, summed over completed requests (seconds): the API
	 * path, the engine queue, the request's own share of its prefill steps,
	 * the rest of those steps (other requests' work), and the time between
	 * its chunks (scheduled, not yet finished, not in a step). */
	double sum_ttft_overhead_s, sum_ttft_queue_s, sum_ttft_own_s, sum_ttft_shared_s,
		sum_ttft_between_s;
	/* vLLM's timing (issue 18): waiting in the batch queue (scheduled, the
	 * step before still running), CUDA-graph padding of its steps, the
	 * first token's output path (detokenize, SSE), and of the API path
	 * the time queued on the API server's event loop. */
	double sum_ttft_batch_queue_s, sum_ttft_graph_pad_s, sum_ttft_output_s, sum_ttft_api_queue_s;
};

#define RUN_TOKEN_WINDOW 64

struct ts_row {            /* one time-series sample, at a step's start */
	double t_s;
	int64_t running, waiting;
	double kv_usage;
	int64_t step_tokens;
	double step_s;
};

/* One replica of a cluster (sim/cluster): its role, the requests routed
 * to it, its requests' TTFT and ITL, and its engine's statistics. */
struct replica_result {
	const char *role;              /* static: "replica", "prefill" or "decode" */
	char hardware[64];             /* its device's profile id */
	int64_t tensor_parallel_size;
	int64_t requests;              /* routed to it */
	int64_t completed;
	int64_t input_tokens, output_tokens;
	int64_t peak_waiting;          /* its engine's waiting queue, at its steps */
	struct samples ttft, e2el;     /* seconds, completed requests */
	struct loghist itl;            /* seconds, every gap of its requests */
	struct engine_stats engine;
	/* With the run's timeline only (Prometheus and OpenMetrics output):
	 * its own token gaps and step sizes, and its gauges at each of the
	 * run's time-series samples (ts[k] at the run's ts[k].t_s). */
	struct timeline *timeline;
	struct ts_row *ts;
	size_t n_ts, cap_ts;
};

struct run_result {
	struct scenario sc;
	struct model model;
	struct hw_profile hw;
	const struct precision *weights;
	struct reqtab reqs;            /* every request; none after a lean run */
	int64_t n_requests;            /* made over the run (lean or not) */
	struct engine_stats engine;
	struct group_metrics all;
	struct ollama_means ollama;    /* sums over the completed requests, as they finished */
	struct group_metrics *stages;
	int n_stages;
	int64_t *stage_starts_ns;      /* n_stages + 1 */
	/* Output tokens per whole second from token_origin_ns, counted as
	 * they come in a ring of the last RUN_TOKEN_WINDOW seconds (token
	 * times can go back a little: each API server and replica streams
	 * after its own output queue), and the peak of any second. Memory does
	 * not grow with simulated time. */
	int64_t last_token_ns;         /* count_token's cache: last time seen */
	int64_t last_second;           /* and its second */
	int64_t newest_second;         /* the ring holds (newest - WINDOW, newest] */
	int64_t second_tokens[RUN_TOKEN_WINDOW];
	int64_t peak_second_tokens;    /* the most in one second: vLLM's max_output_tokens_per_s */
	int64_t max_concurrent;        /* in flight at once, client side (instantaneous) */
	int64_t max_concurrent_per_second;  /* vLLM's max_concurrent_requests: the most
					     * successful requests active in one second */
	int64_t token_origin_ns;       /* seconds of the token count start here:
					* the first send, as vLLM counts from it */
	int64_t peak_waiting;
	struct ts_row *ts;
	size_t n_ts, cap_ts;
	struct timeline *timeline;     /* NULL unless run_simulate_timeline */
	int64_t end_ns;
	/* A cluster of more than one replica: one entry each; a single engine
	 * has none (n_replicas 0), its output unchanged. */
	struct replica_result *replicas;
	int n_replicas;
	struct cluster_kv_stats kv;    /* disaggregated: the KV transfers */
	/* Not the run's: requests.csv's rows a caller streamed while the run
	 * went (report.h: reqcsv), for the report to copy; NULL: none. */
	struct reqcsv *rows;
	struct reqdetail *detail;      /* the same for --save-detailed's arrays (report.h) */
	struct promobs *prom_obs;      /* and for the Prometheus scrape's request metrics */
	struct tsrows *ts_rows;        /* and timeseries.csv's rows, in place of ts */
	struct omsnap *om_snap;        /* and openmetrics.txt's scrapes (omsnap.h) */
	struct replhist *rep_hist;     /* and a cluster's TTFT and E2E histograms (report.h) */
};

/* Loads the model and hardware the scenario names, simulates, and fills
 * *res (which the caller frees with run_result_free, also on failure).
 * Returns 0, or -1 with e set for bad input. */
int run_simulate(const struct scenario *sc, struct run_result *res, struct err *e);

/* run_simulate that also records res->timeline (timeline.h): every token
 * gap and step size by simulated second, for metrics over time. */
int run_simulate_timeline(const struct scenario *sc, struct run_result *res, struct err *e);

/* How a run keeps what it measures. */
struct run_opts {
	/* Keep no finished request (each record is reused for a later one,
	 * once the cluster no longer reads it), so memory follows the
	 * requests in flight, not the run's: res->reqs is empty after it.
	 * Every metric of res is the same. What reads the requests one by
	 * one after the run (--out's openmetrics.txt, Prometheus histograms,
	 * advise) needs a full run; requests.csv and the --save-detailed
	 * arrays can be streamed instead (on_record, report.h's reqcsv and
	 * reqdetail). Every engine and cluster shape runs lean. */
	bool lean;
	/* Lean runs only: keep every TTFT, TPOT, E2EL and queue time exactly
	 * (--exact-percentiles); else past RUN_EXACT_SAMPLES values of one
	 * group they fold into a sketch (stats.h: percentiles within 1/4096
	 * relative, means and counts exact), and memory stops growing. */
	bool exact_percentiles;
	bool timeline;                 /* as run_simulate_timeline */
	/* With timeline: for totals over the whole run only (the end-of-run
	 * Prometheus scrape), kept in bounded memory (timeline.h:
	 * timeline_create_totals). */
	bool timeline_totals;
	/* With timeline_totals, optional: told as the totals fold (timeline.h's
	 * on_fold; omsnap_fold saves them for run --out's scrapes). */
	void (*on_fold)(void *ctx, const struct timeline *t, size_t lo, size_t hi);
	void *fold_ctx;
	/* Step every decode one by one (--no-fast-forward): the reference
	 * the vLLM engine's fast-forward (engine/vllmff.c) equals byte for
	 * byte. */
	bool no_fast_forward;
	/* Lean runs only: keep res->ts too (a sample per timeseries interval
	 * of simulated time, for timeseries.csv); a full run always does.
	 * With on_sample set, each sample goes to it instead (report.h's
	 * tsrows) and res->ts stays empty: memory does not grow with
	 * simulated time. */
	bool timeseries;
	void (*on_sample)(void *ctx, const struct ts_row *row);
	void *sample_ctx;
	/* Optional: called with each request as it is done (finished or
	 * failed), before a lean run reuses its record; r->id is its place
	 * in the order requests were made. settled_ns: every time a request
	 * not done yet will record (its first token, its finish) is at or
	 * after it (the earliest send in flight, or the clock), so what was
	 * recorded before it is final in time order. */
	void (*on_record)(void *ctx, const struct request *r, int64_t settled_ns);
	void *record_ctx;
	struct progress *progress;     /* shown while it runs (progress.h); NULL: none */
};

/* Values of one metric a lean run keeps exactly before its sketch. */
#define RUN_EXACT_SAMPLES 65536

/* run_simulate with opts (NULL: a full run). */
int run_simulate_opts(const struct scenario *sc, struct run_result *res, const struct run_opts *opts,
		      struct err *e);

/* run_simulate_opts with lean set (percentiles sketched past
 * RUN_EXACT_SAMPLES requests). */
int run_simulate_lean(const struct scenario *sc, struct run_result *res, struct err *e);

void run_result_free(struct run_result *res);

/* The metrics of one load stage (for a one-stage run, the whole run's). */
struct group_metrics *run_stage_metrics(struct run_result *res, int stage);

#endif
