/*
 * sweepdoc: a sweep's result document (resultdoc.h) and its forms: the
 * text table (a row per point, a "±" row of 95% half-widths under it when
 * replicated), CSV (a column per metric, and per half-width), and the
 * pictures of latency and throughput against the varied key.
 *
 * Document: "scenario", "set" (the --set overrides), "vary" (each axis's
 * key and values), "replications", "confidence" (0.95), "points_total",
 * then "points": per point its index, its "values" (key → value), the
 * metrics of measure.h by name (means) and NAME_ci95 (half-widths, when
 * replicated), or "error" for a point that could not run.
 */
#ifndef SERVESIM_SWEEPDOC_H
#define SERVESIM_SWEEPDOC_H

#include <jansson.h>

#include "resultdoc.h"
#include "sweep.h"

/* The document of the shard's points pts[0..n) (from sweep_run); the
 * caller's reference. Cannot fail. */
json_t *sweepdoc_build(const struct sweep *sw, const struct shard *sh, int replications,
		       const struct sweep_point *pts, size_t n);

extern const struct resultdoc_kind sweepdoc_kind;

#endif
