#include "hwprofile.h"

#include <float.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "catalog.h"

const char *const hw_class_names[] = {
	"datacenter-gpu", "workstation-gpu", "consumer-gpu", "cpu", "apple", NULL
};
const char *const hw_vendor_names[] = { "nvidia", "amd", "apple", "cpu", "intel", NULL };
const char *const hw_link_names[] = {
	"none", "pcie3", "pcie4", "pcie5", "nvlink3", "nvlink4", "nvlink5",
	"infinity-fabric", "nvlink-c2c", "unified", NULL
};

#define F(field) offsetof(struct hw_profile, field)
#define E(field) (offsetof(struct hw_profile, eff) + offsetof(struct hw_efficiency, field))
#define REQ INI_REQUIRED
#define POS INI_REQUIRED | INI_MIN_EXCLUSIVE

/* The profile's keys: one table drives parsing, checking and errors. */
static const struct inidoc_key keys[] = {
	{ "device", "name", INI_STRING, F(name), REQ, 0, 0, "the device's name", NULL },
	{ "device", "class", INI_ENUM, F(hw_class), REQ, 0, 0,
	  "one of datacenter-gpu, workstation-gpu, consumer-gpu, cpu, apple", hw_class_names },
	{ "device", "vendor", INI_ENUM, F(vendor), REQ, 0, 0, "one of nvidia, amd, apple, cpu, intel",
	  hw_vendor_names },
	{ "device", "source", INI_STRING, F(source_device), 0, 0, 0, "where the figures come from", NULL },
	{ "memory", "capacity_gb", INI_DOUBLE, F(capacity_gb), POS, 0, 1e6, "memory in GB, > 0", NULL },
	{ "memory", "usable_gib", INI_DOUBLE, F(usable_gib), INI_MIN_EXCLUSIVE, 0, 1e6,
	  "memory the runtime reports, in GiB, > 0", NULL },
	{ "memory", "bandwidth_gb_s", INI_DOUBLE, F(bandwidth_gb_s), POS, 0, 1e6,
	  "peak memory bandwidth in GB/s, > 0", NULL },
	{ "memory", "source", INI_STRING, F(source_memory), REQ, 0, 0, "where the memory figures come from", NULL },
	{ "compute", "fp32_tflops", INI_DOUBLE, F(fp32_tflops), INI_MIN_EXCLUSIVE, 0, 1e6, "dense TFLOP/s, > 0", NULL },
	{ "compute", "bf16_tflops", INI_DOUBLE, F(bf16_tflops), POS, 0, 1e6, "dense TFLOP/s, > 0", NULL },
	{ "compute", "fp16_tflops", INI_DOUBLE, F(fp16_tflops), INI_MIN_EXCLUSIVE, 0, 1e6, "dense TFLOP/s, > 0", NULL },
	{ "compute", "fp8_tflops", INI_DOUBLE, F(fp8_tflops), INI_MIN_EXCLUSIVE, 0, 1e6, "dense TFLOP/s, > 0", NULL },
	{ "compute", "int8_tops", INI_DOUBLE, F(int8_tops), INI_MIN_EXCLUSIVE, 0, 1e6, "dense TOPS, > 0", NULL },
	{ "compute", "fp4_tflops", INI_DOUBLE, F(fp4_tflops), INI_MIN_EXCLUSIVE, 0, 1e6, "dense TFLOP/s, > 0", NULL },
	{ "compute", "source", INI_STRING, F(source_compute), REQ, 0, 0, "where the compute figures come from", NULL },
	{ "interconnect", "kind", INI_ENUM, F(ic_kind), REQ, 0, 0,
	  "one of none, pcie3, pcie4, pcie5, nvlink3, nvlink4, nvlink5, infinity-fabric, nvlink-c2c, unified",
	  hw_link_names },
	{ "interconnect", "bandwidth_gb_s", INI_DOUBLE, F(ic_bandwidth_gb_s), POS, 0, 1e6,
	  "GPU-to-GPU bandwidth per direction in GB/s, > 0", NULL },
	{ "interconnect", "latency_us", INI_DOUBLE, F(ic_latency_us), REQ, 0, 1e6,
	  "latency per hop of a ring all-reduce in microseconds, >= 0", NULL },
	{ "interconnect", "host_link", INI_ENUM, F(host_link), REQ, 0, 0,
	  "one of none, pcie3, pcie4, pcie5, nvlink3, nvlink4, nvlink5, infinity-fabric, nvlink-c2c, unified",
	  hw_link_names },
	{ "interconnect", "host_bandwidth_gb_s", INI_DOUBLE, F(host_bandwidth_gb_s), POS, 0, 1e6,
	  "host link bandwidth per direction in GB/s, > 0", NULL },
	{ "interconnect", "source", INI_STRING, F(source_interconnect), 0, 0, 0, "a source", NULL },
	{ "price", "price_per_hour_usd", INI_DOUBLE, F(price_per_hour_usd), INI_MIN_EXCLUSIVE, 0, 1e6,
	  "a price in USD per hour, > 0", NULL },
	{ "price", "source", INI_STRING, F(source_price), 0, 0, 0, "a source", NULL },
	{ "efficiency", "bandwidth", INI_DOUBLE, E(bandwidth), INI_MIN_EXCLUSIVE, 0, 1,
	  "a fraction in (0, 1]", NULL },
	{ "efficiency", "attention_bandwidth", INI_DOUBLE, E(attention_bandwidth), INI_MIN_EXCLUSIVE, 0, 1,
	  "a fraction in (0, 1]", NULL },
	{ "efficiency", "attention_half_seqs", INI_DOUBLE, E(attention_half_seqs), 0, 0, 1e6,
	  "a sequence count >= 0", NULL },
	{ "efficiency", "compute_max", INI_DOUBLE, E(compute_max), INI_MIN_EXCLUSIVE, 0, 1,
	  "a fraction in (0, 1]", NULL },
	{ "efficiency", "compute_half_tokens", INI_DOUBLE, E(compute_half_tokens), 0, 0, 1e7,
	  "a token count >= 0", NULL },
	{ "efficiency", "attention_compute", INI_DOUBLE, E(attention_compute), INI_MIN_EXCLUSIVE, 0, 1,
	  "a fraction in (0, 1]", NULL },
	{ "efficiency", "low_precision_compute", INI_DOUBLE, E(low_precision_compute), INI_MIN_EXCLUSIVE, 0, 1,
	  "a fraction in (0, 1]", NULL },
	{ "efficiency", "moe_efficiency", INI_DOUBLE, E(moe_efficiency), INI_MIN_EXCLUSIVE, 0, 1,
	  "a fraction in (0, 1]", NULL },
	{ "efficiency", "step_overhead_us", INI_DOUBLE, E(step_overhead_us), 0, 0, 1e7,
	  "microseconds >= 0", NULL },
	{ "efficiency", "step_overhead_per_seq_us", INI_DOUBLE, E(step_overhead_per_seq_us), 0, 0, 1e7,
	  "microseconds >= 0", NULL },
	{ "efficiency", "request_overhead_ms", INI_DOUBLE, E(request_overhead_ms), 0, 0, 1e7,
	  "milliseconds >= 0", NULL },
	{ "efficiency", "source", INI_STRING, F(source_efficiency), 0, 0, 0, "a source", NULL },
};

enum { N_KEYS = sizeof keys / sizeof *keys };

void hw_default_efficiency(int hw_class, struct hw_efficiency *eff)
{
	/* Defaults per class. The datacenter-GPU row is fitted to the 15 real
	 * vLLM runs on H100 of ../shared/calibration by
	 * tests/accuracy/tune_h100.py (one set for all runs; README "Accuracy
	 * against real runs"); the other GPU rows reuse it with a lower compute
	 * ceiling, unverified; CPU and Apple rows follow llama.cpp's
	 * measurements (README "Step-time model"). */
#define OTHER_GPU                                                                    \
	{ .bandwidth = 0.87, .attention_bandwidth = 0.92, .attention_half_seqs = 16,       \
	  .compute_max = 0.70, .compute_half_tokens = 24, .attention_compute = 0.43,       \
	  .low_precision_compute = 0.7, .moe_efficiency = 0.84, .step_overhead_us = 1200, \
	  .step_overhead_per_seq_us = 8, .request_overhead_ms = 10 }
	static const struct hw_efficiency by_class[] = {
		[HW_DATACENTER_GPU] = { .bandwidth = 0.87, .attention_bandwidth = 0.92,
					.attention_half_seqs = 16, .compute_max = 0.79,
					.compute_half_tokens = 24, .attention_compute = 0.49,
					.low_precision_compute = 0.7, .moe_efficiency = 0.84,
					.step_overhead_us = 1200, .step_overhead_per_seq_us = 8,
					.request_overhead_ms = 10 },
		[HW_WORKSTATION_GPU] = OTHER_GPU,
		[HW_CONSUMER_GPU] = OTHER_GPU,
		[HW_CPU] = { .bandwidth = 0.70, .attention_bandwidth = 0.70, .compute_max = 0.50,
			     .compute_half_tokens = 8, .attention_compute = 0.40,
			     .low_precision_compute = 1, .moe_efficiency = 1, .step_overhead_us = 200,
			     .step_overhead_per_seq_us = 0, .request_overhead_ms = 5 },
		/* Fitted to llama-bench pp512/tg128 of Llama-2-7B F16/Q8_0/Q4_0 on
		 * eight chips (measured_public.md A; tests/accuracy/llamacpp_apple.py:
		 * MAPE 5.3% pp512, 4.4% tg128): Metal streams weights near the
		 * unified-memory peak, and each forward pass pays ~5.8 ms of
		 * graph dispatch (a 32-layer model), which is what makes
		 * quantized decode slower than bytes / bandwidth. */
		[HW_APPLE] = { .bandwidth = 0.94, .attention_bandwidth = 0.94, .compute_max = 0.72,
			       .compute_half_tokens = 2, .attention_compute = 0.40,
			       .low_precision_compute = 1, .moe_efficiency = 1, .step_overhead_us = 5800,
			       .step_overhead_per_seq_us = 0, .request_overhead_ms = 5 },
	};
#undef OTHER_GPU
	*eff = by_class[hw_class];
}

int hw_load(struct hw_profile *hw, const char *path, struct err *e)
{
	memset(hw, 0, sizeof *hw);
	catalog_id_of(path, hw->id, sizeof hw->id);
	struct inidoc doc;
	if (inidoc_load(&doc, path, e)) {
		inidoc_free(&doc);
		return -1;
	}
	bool seen[N_KEYS];
	int rc = inidoc_bind(&doc, keys, N_KEYS, hw, false, seen, e);
	inidoc_free(&doc);
	if (rc)
		return -1;
	/* [efficiency] overrides key by key on top of the class default. */
	struct hw_efficiency given = hw->eff;
	hw_default_efficiency(hw->hw_class, &hw->eff);
	for (size_t i = 0; i < N_KEYS; i++) {
		if (!seen[i] || strcmp(keys[i].section, "efficiency") || keys[i].type != INI_DOUBLE)
			continue;
		size_t off = keys[i].offset - offsetof(struct hw_profile, eff);
		*(double *)((char *)&hw->eff + off) = *(double *)((char *)&given + off);
		hw->calibrated = true;
		hw->overheads_given |= !strcmp(keys[i].key, "step_overhead_us") ? HW_GIVEN_STEP_OVERHEAD :
				       !strcmp(keys[i].key, "step_overhead_per_seq_us") ? HW_GIVEN_STEP_PER_SEQ :
				       !strcmp(keys[i].key, "request_overhead_ms") ? HW_GIVEN_REQUEST_OVERHEAD : 0;
	}
	for (size_t i = 0; i < N_KEYS; i++)
		if (seen[i] && !strcmp(keys[i].key, "price_per_hour_usd"))
			hw->has_price = true;
	if (hw->fp16_tflops == 0)
		hw->fp16_tflops = hw->bf16_tflops;
	return 0;
}

int hw_load_named(struct hw_profile *hw, const char *name, struct err *e)
{
	char path[4096];
	if (catalog_resolve(CATALOG_HARDWARE, name, path, sizeof path, e))
		return -1;
	return hw_load(hw, path, e);
}

double hw_memory_bytes(const struct hw_profile *hw)
{
	if (hw->usable_gib > 0)
		return hw->usable_gib * 1073741824.0;
	return hw->capacity_gb * 1e9;
}

double hw_peak_flops(const struct hw_profile *hw, enum matmul_dtype d)
{
	double tf = hw->bf16_tflops;
	switch (d) {
	case MATMUL_FP32:
		tf = hw->fp32_tflops > 0 ? hw->fp32_tflops : hw->bf16_tflops;
		break;
	case MATMUL_BF16:
		break;
	case MATMUL_FP8:
		tf = hw->fp8_tflops > 0 ? hw->fp8_tflops : hw->bf16_tflops;
		break;
	case MATMUL_INT8:
		tf = hw->int8_tops > 0 ? hw->int8_tops : hw->bf16_tflops;
		break;
	case MATMUL_FP4:
		tf = hw->fp4_tflops > 0 ? hw->fp4_tflops :
		     hw->fp8_tflops > 0 ? hw->fp8_tflops : hw->bf16_tflops;
		break;
	}
	return tf * 1e12;
}
