#include "effparam.h"

#include <assert.h>
#include <math.h>

#define F(field) offsetof(struct hw_efficiency, field)

static const struct effparam table[EFF_N_PARAMS] = {
	[EFF_BANDWIDTH] = { "bandwidth", F(bandwidth), true, 0, "" },
	[EFF_ATTENTION_BANDWIDTH] = { "attention_bandwidth", F(attention_bandwidth), true, 0, "" },
	[EFF_ATTENTION_HALF_SEQS] = { "attention_half_seqs", F(attention_half_seqs), false, 1, "seqs" },
	[EFF_COMPUTE_MAX] = { "compute_max", F(compute_max), true, 0, "" },
	[EFF_COMPUTE_HALF_TOKENS] = { "compute_half_tokens", F(compute_half_tokens), false, 0.1, "tokens" },
	[EFF_ATTENTION_COMPUTE] = { "attention_compute", F(attention_compute), true, 0, "" },
	[EFF_LOW_PRECISION_COMPUTE] = { "low_precision_compute", F(low_precision_compute), true, 0, "" },
	[EFF_MOE_EFFICIENCY] = { "moe_efficiency", F(moe_efficiency), true, 0, "" },
	[EFF_STEP_OVERHEAD_US] = { "step_overhead_us", F(step_overhead_us), false, 1, "us" },
	[EFF_STEP_OVERHEAD_PER_SEQ_US] = { "step_overhead_per_seq_us", F(step_overhead_per_seq_us), false,
					   0.01, "us" },
	[EFF_REQUEST_OVERHEAD_MS] = { "request_overhead_ms", F(request_overhead_ms), false, 0.01, "ms" },
};

/* Fractions stay strictly inside (0, 1) in the search space; 1 - 1e-6 is
 * written back as itself, which the loader accepts. */
#define FRACTION_LO 1e-6
#define FRACTION_HI (1 - 1e-6)

const struct effparam *effparam_get(enum effparam_id id)
{
	assert(id >= 0 && id < EFF_N_PARAMS);
	return &table[id];
}

double effparam_value(const struct hw_efficiency *eff, enum effparam_id id)
{
	return *(const double *)((const char *)eff + effparam_get(id)->offset);
}

void effparam_set(struct hw_efficiency *eff, enum effparam_id id, double v)
{
	*(double *)((char *)eff + effparam_get(id)->offset) = v;
}

double effparam_to_x(enum effparam_id id, double v)
{
	const struct effparam *p = effparam_get(id);
	if (p->fraction) {
		double f = fmin(fmax(v, FRACTION_LO), FRACTION_HI);
		return log(f / (1 - f));
	}
	return log(fmax(v, p->floor));
}

double effparam_from_x(enum effparam_id id, double x)
{
	const struct effparam *p = effparam_get(id);
	if (p->fraction) {
		double f = 1 / (1 + exp(-x));
		return fmin(fmax(f, FRACTION_LO), FRACTION_HI);
	}
	return fmax(exp(fmin(x, 700)), p->floor);
}
