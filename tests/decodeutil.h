/*
 * decodeutil: one paged decode-attention call as a vLLM decode kernel row
 * (sim/perf/backend.c) states it, for the tests that hold the rows to
 * kernel tables (test_attention.c, test_aic_tables.c). Header-only,
 * static inline: each test is its own executable.
 */
#ifndef SERVESIM_DECODEUTIL_H
#define SERVESIM_DECODEUTIL_H

#include "backend.h"
#include "hwprofile.h"

/* Seconds: the row's call floor, its (sequence, KV head) units' latency
 * over the profile's SMs, and bytes of K and V at frac of the profile's
 * stream (the row's own bw_frac unless a fit tries another). */
static inline double decode_call_s(const struct perf_kernel *k, const struct hw_profile *hw, double frac,
				   double units, double bytes)
{
	return (k->fixed_us + k->unit_us * units / hw->arch.sm_count) * 1e-6 +
	       bytes / (frac * hw_stream_bandwidth(hw));
}

#endif
