/*
 * validate: replays a real `vllm bench serve` result through the simulator
 * and sets what the run measured beside what servesim predicts.
 *
 * The replay: the result's own requests (input_lens, output_lens and
 * start_times: trace.h) when it has them; without start_times (the
 * about-v0.11 and old writers) the send times are redrawn from its
 * request_rate and burstiness; without the arrays (saved without
 * --save-detailed) `completed` requests of the mean lengths
 * (total_input_tokens / completed, total_output_tokens / completed).
 * max_concurrency is the run's. The model is opts->model, else the
 * result's model_id; the device opts->hardware, else h100-sxm (the result
 * does not say; a note says so).
 *
 * Measured values come from the result's own keys (mean_ttft_ms, …,
 * request_throughput …; E2EL from `latencies` when its keys are absent);
 * predicted ones from the simulated run's report_json, the same keys, so
 * both sides mean the same thing. error_pct = 100 (predicted - measured)
 * / measured, NAN when the run did not measure the value.
 */
#ifndef SERVESIM_VALIDATE_H
#define SERVESIM_VALIDATE_H

#include <stddef.h>

#include "benchres.h"
#include "err.h"
#include "inidoc.h"
#include "scenario.h"

#define VALIDATE_N_ROWS (N_LAT_METRICS * BENCH_N_STATS + 3)
#define VALIDATE_DEFAULT_HARDWARE "h100-sxm"

struct validate_opts {
	const char *model;               /* NULL: the result's model_id */
	const char *hardware;            /* NULL: VALIDATE_DEFAULT_HARDWARE */
	const char *weights;             /* NULL: the model's */
	const struct inidoc *overrides;  /* --set, applied last; may be NULL */
};

struct validate_row {
	const char *key;                 /* "mean_ttft_ms", "request_throughput" … (static) */
	const char *label;               /* "Mean TTFT (ms)" (static) */
	double measured, predicted, error_pct;
};

struct validate_result {
	struct benchres meas;
	char model[256], hardware[256];
	char replay[320];                /* how the requests were rebuilt */
	long long n_requests;            /* simulated requests */
	struct validate_row rows[VALIDATE_N_ROWS];
	char notes[4][512];
	int n_notes;
	struct scenario sc;              /* the replay as simulated (advise starts from it) */
};

/* Replays path. Returns 0, or -1 with e naming the file (and what is
 * missing, or the simulator's own error). */
int validate_run(struct validate_result *r, const char *path, const struct validate_opts *opts,
		 struct err *e);

#endif
