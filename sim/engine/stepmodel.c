/*
 * stepmodel: one forward pass on a device, or on a device and a CPU
 * sharing the layers (stepmodel.h).
 */
#include "stepmodel.h"

void step_model_on_device(struct step_model *sm)
{
	sm->dev_frac = 1;
	sm->dev_part = true;
	sm->cpu_part = false;
	sm->output_on_dev = true;
	sm->xfer_s_per_token = 0;
}

double step_model_ops(const struct step_model *sm, const struct perf_step *s, struct perf_op *ops)
{
	if (!sm->cpu_part)
		return perf_step_ops(&sm->dev, s, ops);
	if (!sm->dev_part)
		return perf_step_ops(&sm->cpu, s, ops);
	struct perf_op cpu[PERF_N_OPS];
	perf_step_ops(&sm->dev, s, ops);
	perf_step_ops(&sm->cpu, s, cpu);
	double f = sm->dev_frac;
	for (int i = 0; i < PERF_N_OPS; i++) {
		struct perf_op *o = &ops[i];
		const struct perf_op *c = &cpu[i];
		if (perf_op_per_layer(i)) {
			o->time_s = f * o->time_s + (1 - f) * c->time_s;
			o->flops = f * o->flops + (1 - f) * c->flops;
			o->bytes = f * o->bytes + (1 - f) * c->bytes;
		} else if (i == PERF_LM_HEAD) {
			if (!sm->output_on_dev)
				*o = *c;
		} else if (i == PERF_OVERHEAD) {
			o->time_s += c->time_s + sm->xfer_s_per_token * (double)s->tokens;
		} else {
			/* Weight offload and the pipeline are vLLM's: none here. */
			o->time_s = o->flops = o->bytes = 0;
		}
	}
	/* Summed as the engine always has: the layers, then the rest. */
	return ops[PERF_DENSE].time_s + ops[PERF_EXPERTS].time_s + ops[PERF_ATTN_PREFILL].time_s +
	       ops[PERF_ATTN_DECODE].time_s + ops[PERF_ELEMENTWISE].time_s + ops[PERF_LM_HEAD].time_s +
	       ops[PERF_ALLREDUCE].time_s + ops[PERF_OVERHEAD].time_s;
}

double step_model_time(const struct step_model *sm, const struct perf_step *s, struct perf_breakdown *b)
{
	struct perf_op ops[PERF_N_OPS];
	double total = step_model_ops(sm, s, ops);
	perf_ops_breakdown(ops, total, b);
	return total;
}
