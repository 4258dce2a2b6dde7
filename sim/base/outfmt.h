/*
 * outfmt: the formats a result prints in (--format) and the JSON numbers
 * every writer shares. In base so the writers in plan/ and report/ need not
 * reach up into the command line (sim/cli): the arrows run one way.
 */
#ifndef SERVESIM_OUTFMT_H
#define SERVESIM_OUTFMT_H

#include <jansson.h>

enum out_format { FMT_TEXT, FMT_JSON, FMT_CSV, FMT_PROM, N_OUT_FORMATS };

/* --format's names, indexed by enum out_format. */
extern const char *const out_format_names[N_OUT_FORMATS];

/* A JSON real that prints as an integer when it is one (counts, ids). */
json_t *outfmt_num(double v);

/* Rounds v to `digits` decimals for JSON output (avoids 0.30000000000000004);
 * null when v is not finite. */
json_t *outfmt_real(double v, int digits);

#endif
