/*
 * simutil: runs a scenario through the library, for the tests that assert
 * what a simulation shows. Header-only, like testutil.h.
 *
 * simulate(&res, "c06-prompt-length", "workload.random_input_len=2000", NULL)
 * loads scenarios/<id>.ini (or the built-in default for NULL), applies the
 * --set style overrides and runs it; any error fails the test with the
 * message. Free with run_result_free.
 */
#ifndef SERVESIM_SIMUTIL_H
#define SERVESIM_SIMUTIL_H

#include "testutil.h"

#include "catalog.h"
#include "report.h"
#include "run.h"
#include "scenario.h"

static inline void simulate_with(int (*runner)(const struct scenario *, struct run_result *,
						struct err *),
				 struct run_result *res, const char *scenario, va_list ap)
{
	struct inidoc ov = { 0 };
	struct err e;
	const char *set;
	while ((set = va_arg(ap, const char *)))
		if (inidoc_add_override(&ov, set, &e))
			fail_msg("%s", e.msg);
	char path[4096];
	if (scenario && catalog_resolve(CATALOG_SCENARIOS, scenario, path, sizeof path, &e))
		fail_msg("%s", e.msg);
	struct scenario sc;
	if (scenario_load(&sc, scenario ? path : NULL, &ov, &e) || runner(&sc, res, &e))
		fail_msg("%s", e.msg);
	inidoc_free(&ov);
}

static inline void simulate_v(struct run_result *res, const char *scenario, va_list ap)
{
	simulate_with(run_simulate, res, scenario, ap);
}

static inline void simulate(struct run_result *res, const char *scenario, ...)
{
	va_list ap;
	va_start(ap, scenario);
	simulate_v(res, scenario, ap);
	va_end(ap);
}

/* Mean TTFT, TPOT and the ITL percentiles in seconds. */
static inline double mean_ttft(struct run_result *r) { return samples_mean(&r->all.ttft); }
static inline double mean_tpot(struct run_result *r) { return samples_mean(&r->all.tpot); }
static inline double itl_p(struct run_result *r, double p) { return loghist_percentile(&r->all.itl, p); }
static inline double output_throughput(struct run_result *r)
{
	return (double)r->all.total_output / ((double)(r->all.last_done_ns - r->all.start_ns) / 1e9);
}

#endif
