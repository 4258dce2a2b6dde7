/*
 * stepmodel: what an engine times one forward pass on, as its create
 * builds it: one device's step model (vLLM, or a llama.cpp server whose
 * layers all sit on one device), or a device and a CPU sharing the layers
 * (a llama.cpp server's partial offload, num_gpu). The engine times its
 * passes through step_model_time and explain --batch shows one through
 * step_model_ops (engine_class.step_model), so the two cannot drift.
 *
 * Partial offload, as llama.cpp runs it: both parts run every pass; the
 * per-layer work (matmuls, experts, attention, the small kernels) is
 * dev_frac of the device's and the rest of the CPU's; the LM head runs
 * where the output layer is; the overhead is both parts' plus the
 * activations crossing the host link once per token (f32).
 *
 * Invariants: dev_part or cpu_part; cpu is set when cpu_part; dev.overhead
 * is NULL or &ovh of the same struct (set it again after a copy: the hook
 * writes into the caller's struct); dev.hw and cpu.hw outlive the struct
 * (the engine setup's profiles).
 */
#ifndef SERVESIM_STEPMODEL_H
#define SERVESIM_STEPMODEL_H

#include <stdbool.h>

#include "overhead.h"
#include "steptime.h"

struct step_model {
	struct perf dev;           /* the device's; a batch is laid out on it (perf_step_add) */
	struct perf cpu;           /* the layers left on the CPU profile, when cpu_part */
	struct overhead_model ovh; /* the engine's own overhead model (vLLM): dev.overhead */
	double dev_frac;           /* share of the repeating layers on the device */
	bool dev_part, cpu_part;   /* which parts run a pass */
	bool output_on_dev;        /* the output layer (LM head) is on the device */
	double xfer_s_per_token;   /* activations over the host link, both parts running */
};

/* The whole pass on dev: dev_part only. Cannot fail. */
void step_model_on_device(struct step_model *sm);

/* The operator rows of one pass of s (perf_step_ops' rows: with both
 * parts, each per-layer row blends the two by dev_frac and takes the
 * device's kernel and peaks), and its seconds. Cannot fail. */
double step_model_ops(const struct step_model *sm, const struct perf_step *s, struct perf_op *ops);

/* The pass's seconds; its breakdown in *b (not NULL). Cannot fail. */
double step_model_time(const struct step_model *sm, const struct perf_step *s, struct perf_breakdown *b);

#endif
