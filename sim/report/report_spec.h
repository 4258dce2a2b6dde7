/*
 * report_spec: speculative decoding's counters in the run's reports (the
 * vLLM engine with [engine] speculative_method set): a text line, the
 * servesim.speculative JSON object, and vLLM's spec_decode counters in
 * the Prometheus text. Nothing when speculative decoding is off.
 */
#ifndef SERVESIM_REPORT_SPEC_H
#define SERVESIM_REPORT_SPEC_H

#include <jansson.h>
#include <stdio.h>

#include "run.h"

void report_spec_text(FILE *f, const struct run_result *res);
json_t *report_spec_json(const struct run_result *res);   /* NULL when off */
void report_spec_prom(FILE *f, const struct run_result *res, const char *labels);

#endif
