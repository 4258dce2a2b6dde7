/*
 * vllmver: the vLLM versions servesim knows, and what each one does by
 * default. The one place a version-dependent default is chosen: the
 * scenario's engine.vllm_version (newest when unset) picks a row, and each
 * behaviour's own key (engine.async_scheduling, engine.enforce_eager …)
 * overrides the row.
 *
 * Rows are ordered oldest first; a version between two rows takes the
 * older one, a version past the last row the newest. The 0.8-0.9 row is
 * servesim 1's timing: synchronous scheduling, one fitted per-step
 * overhead and request overhead from the hardware profile, no CUDA-graph
 * padding, blocks hittable once their step ends. The two rows before it
 * are V0's overheads (overhead.c "vllm-v0-sync", "vllm-v0") around V1's
 * scheduler rules.
 */
#ifndef SERVESIM_VLLMVER_H
#define SERVESIM_VLLMVER_H

#include <stdbool.h>

struct vllm_version {
	const char *name;            /* "0.15": the first release the row describes */
	int minor;                   /* 0.minor */
	bool async_scheduling;       /* --async-scheduling on by default */
	bool timing;                 /* CUDA graphs, split overheads, output path
				      * (sim/perf/overhead.c); false: servesim 1's */
	bool cache_at_alloc;         /* a block's hash is registered when it is
				      * allocated (same-step prefix hits) */
	const char *overhead;        /* overhead profile (overhead_profile_find);
				      * NULL without timing */
	bool piecewise_only;         /* cudagraph_mode PIECEWISE: a decode-only
				      * step replays the pieces too (no full graph) */
	bool capture_grid8;          /* CUDA-graph sizes every 8 up to 512
				      * (overhead_capture_sizes_grid8), not by 16
				      * from 256 */
	bool hybrid_kv;              /* the hybrid KV cache manager: sliding-window
				      * layers in KV cache groups of their own
				      * (engine/vllmpool.c) */
	bool shared_expert_stream;   /* shared experts on a second stream beside the
				      * routed ones (perf/moeshared.c) */
	const char *source;
};

/* The row for text ("0.15", "0.15.1", "v0.13.0"; "" = newest). NULL when
 * text is not a 0.MINOR[.PATCH] version at or after 0.5. */
const struct vllm_version *vllmver_find(const char *text);

/* The newest row. Cannot fail. */
const struct vllm_version *vllmver_newest(void);

#endif
