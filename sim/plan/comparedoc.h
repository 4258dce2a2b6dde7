/*
 * comparedoc: a comparison's result document (resultdoc.h) and its forms:
 * the side-by-side table, CSV, and the pictures (bars per device; goodput
 * against cost when an SLO was searched and prices are known).
 *
 * Document: "scenario", "set", "model", "search" (plandoc's, or only the
 * replications without an SLO), "cost", "rows_total", then "rows": per
 * device its index, hardware id, device name, tensor_parallel_size,
 * mem_bandwidth_gb_s, decode_ceiling_tok_s, at_load (metrics at the
 * scenario's load, with NAME_ci95 when replicated), the SLO search's
 * findings (as plandoc_cand_json), price_usd_per_gpu_hour, usd_per_hour,
 * usd_per_1m_output_tokens (at load), usd_per_1m_output_tokens_at_slo,
 * usd_per_1k_requests_at_slo (both at the SLO limit: tuned, the confirmed
 * rate, tune.h), output_tok_s_per_usd_hour; with an SLO and a target
 * ("target_rate", NaN: none), replicas (copies of the deployment:
 * divided, or simulated with "replicas_simulated": true), gpus,
 * usd_per_hour_at_target; or "error" for a device that cannot run it.
 * A whole document with an SLO ends with "ranking" (row indices, best
 * first: the lowest $ per 1M output tokens at the SLO, unpriced the
 * highest rate per GPU), "winner" and, tuned, "within_noise"
 * (ranknoise.h).
 */
#ifndef SERVESIM_COMPAREDOC_H
#define SERVESIM_COMPAREDOC_H

#include <jansson.h>
#include <stdbool.h>

#include "compare.h"
#include "resultdoc.h"

/* The document of rows[0..n) (after compare_run); the caller's reference.
 * Cannot fail. */
json_t *comparedoc_build(const char *scenario, const struct inidoc *overrides, const struct plan_slo *slo,
			 const struct plan_opts *o, double target_rate, bool cost, size_t total, const struct shard *sh,
			 const struct compare_row *rows, size_t n, const struct tune_cand *tuned,
			 const struct tune_space *space);

extern const struct resultdoc_kind comparedoc_kind;

#endif
