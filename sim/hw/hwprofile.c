#include "hwprofile.h"

#include <float.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "catalog.h"
#include "num.h"

const char *const hw_class_names[] = {
	"datacenter-gpu", "workstation-gpu", "consumer-gpu", "cpu", "apple", NULL
};
const char *const hw_vendor_names[] = { "nvidia", "amd", "apple", "cpu", "intel", NULL };
const char *const hw_link_names[] = {
	"none", "pcie3", "pcie4", "pcie5", "nvlink3", "nvlink4", "nvlink5",
	"infinity-fabric", "nvlink-c2c", "unified", NULL
};
const char *const hw_tensor_gen_names[] = {
	"none", "volta", "ampere", "ada", "hopper", "blackwell", "blackwell-sm120", "cdna2", "cdna3", "apple", NULL
};
const char *const hw_memory_type_names[] = {
	"unknown", "hbm2", "hbm2e", "hbm3", "hbm3e", "gddr6", "gddr6x", "gddr7", "lpddr5", "lpddr5x",
	"ddr5", NULL
};

#define F(field) offsetof(struct hw_profile, field)
#define E(field) (offsetof(struct hw_profile, eff) + offsetof(struct hw_efficiency, field))
#define A(field) (offsetof(struct hw_profile, arch) + offsetof(struct hw_arch, field))
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
	{ "device", "vllm_small_defaults", INI_BOOL, F(vllm_small_defaults), 0, 0, 0, "true or false", NULL },
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
	{ "compute", "fp16_acc16_tflops", INI_DOUBLE, F(fp16_acc16_tflops), INI_MIN_EXCLUSIVE, 0, 1e6,
	  "dense TFLOP/s with FP16 accumulate, > 0", NULL },
	{ "compute", "source", INI_STRING, F(source_compute), REQ, 0, 0, "where the compute figures come from", NULL },
	{ "arch", "sm_count", INI_DOUBLE, A(sm_count), INI_MIN_EXCLUSIVE, 0, 1e6,
	  "SMs / CUs / GPU cores / CPU cores, > 0", NULL },
	{ "arch", "boost_clock_mhz", INI_DOUBLE, A(boost_clock_mhz), INI_MIN_EXCLUSIVE, 0, 1e5,
	  "MHz, > 0", NULL },
	{ "arch", "sustained_clock_mhz", INI_DOUBLE, A(sustained_clock_mhz), INI_MIN_EXCLUSIVE, 0, 1e5,
	  "MHz, > 0 and at most boost_clock_mhz", NULL },
	{ "arch", "tensor_cores", INI_ENUM, A(tensor_gen), 0, 0, 0,
	  "one of none, volta, ampere, ada, hopper, blackwell, blackwell-sm120, cdna2, cdna3, apple",
	  hw_tensor_gen_names },
	{ "arch", "l2_mb", INI_DOUBLE, A(l2_mb), 0, 0, 1e6, "MB >= 0", NULL },
	{ "arch", "memory_type", INI_ENUM, A(memory_type), 0, 0, 0,
	  "one of unknown, hbm2, hbm2e, hbm3, hbm3e, gddr6, gddr6x, gddr7, lpddr5, lpddr5x, ddr5",
	  hw_memory_type_names },
	{ "arch", "stream_bandwidth_gb_s", INI_DOUBLE, A(stream_bandwidth_gb_s), INI_MIN_EXCLUSIVE, 0, 1e6,
	  "measured streaming bandwidth in GB/s, > 0 and at most bandwidth_gb_s", NULL },
	{ "arch", "matmul_bf16_tflops", INI_DOUBLE, A(matmul_bf16_tflops), INI_MIN_EXCLUSIVE, 0, 1e6,
	  "measured dense BF16 GEMM TFLOP/s, > 0", NULL },
	{ "arch", "matmul_fp8_tflops", INI_DOUBLE, A(matmul_fp8_tflops), INI_MIN_EXCLUSIVE, 0, 1e6,
	  "measured dense FP8 GEMM TFLOP/s, > 0", NULL },
	{ "arch", "matmul_fp4_tflops", INI_DOUBLE, A(matmul_fp4_tflops), INI_MIN_EXCLUSIVE, 0, 1e6,
	  "measured dense FP4 GEMM TFLOP/s, > 0", NULL },
	{ "arch", "gemv_floor_us", INI_DOUBLE, A(gemv_floor_us), 0, 0, 1e4,
	  "microseconds >= 0 (a measured mat-vec kernel's fixed time), with gemv_bandwidth_gb_s", NULL },
	{ "arch", "gemv_bandwidth_gb_s", INI_DOUBLE, A(gemv_bandwidth_gb_s), INI_MIN_EXCLUSIVE, 0, 1e6,
	  "measured mat-vec streaming rate in GB/s, > 0 and at most bandwidth_gb_s", NULL },
	{ "arch", "source", INI_STRING, F(source_arch), 0, 0, 0, "where the architecture facts come from", NULL },
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
	{ "interconnect", "link_domain_gpus", INI_INT, F(link_domain_gpus), 0, 1, 1 << 20,
	  "the GPUs one GPU-to-GPU link domain joins, at least [ownership] gpus_per_node", NULL },
	{ "interconnect", "nvswitch", INI_BOOL, F(nvswitch), 0, 0, 0,
	  "true or false (whether the NVLinks meet in an NVSwitch; default true for an nvlink kind)", NULL },
	{ "interconnect", "nvlink_bridge_gpus", INI_INT, F(nvlink_bridge_gpus), 0, 2, 8,
	  "2 to 8 (the cards one NVLink bridge joins, where nvswitch is false; default 2)", NULL },
	{ "interconnect", "network_gbit_s", INI_DOUBLE, F(network_gbit_s), INI_MIN_EXCLUSIVE, 0, 1e6,
	  "the scale-out NIC rate per GPU in Gb/s (InfiniBand / RoCE), > 0", NULL },
	{ "interconnect", "source", INI_STRING, F(source_interconnect), 0, 0, 0, "a source", NULL },
	{ "price", "price_per_hour_usd", INI_DOUBLE, F(price_per_hour_usd), INI_MIN_EXCLUSIVE, 0, 1e6,
	  "a price in USD per hour, > 0", NULL },
	{ "price", "source", INI_STRING, F(source_price), 0, 0, 0, "a source", NULL },
	{ "ownership", "purchase_usd", INI_DOUBLE, F(purchase_usd), INI_MIN_EXCLUSIVE, 0, 1e8,
	  "a purchase price in USD, > 0", NULL },
	{ "ownership", "board_power_w", INI_DOUBLE, F(board_power_w), INI_MIN_EXCLUSIVE, 0, 1e5,
	  "watts, > 0", NULL },
	{ "ownership", "server_overhead_w", INI_DOUBLE, F(server_overhead_w), 0, 0, 1e5,
	  "watts per device, >= 0", NULL },
	{ "ownership", "gpus_per_node", INI_INT, F(gpus_per_node), 0, 1, 1024, "a device count >= 1", NULL },
	{ "ownership", "source", INI_STRING, F(source_ownership), 0, 0, 0, "a source", NULL },
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

const struct inidoc_key *hw_profile_keys(size_t *n)
{
	*n = N_KEYS;
	return keys;
}

void hw_default_efficiency(int hw_class, struct hw_efficiency *eff)
{
	/* Defaults per class: the documented fallback. A device with [arch]
	 * facts takes its kernel-level efficiencies from the backend tables
	 * (sim/perf/backend.c) instead; these rows then set only the
	 * kernel-level numbers of the "roofline, no kernel data" row and the
	 * engine-level overheads of engines without their own overhead
	 * profile (vLLM's are sim/perf/overhead.c's, refitted on the backend
	 * tables by `vllm_h100.py --cross-validate`, docs/accuracy.md; these
	 * rows keep servesim 1's values, which issue 18's legacy timing
	 * reproduces). The datacenter-GPU row was fitted to the 15 real vLLM
	 * runs on H100 of ../shared/calibration by tests/accuracy/tune_h100.py;
	 * the other GPU rows reuse it with a lower compute ceiling,
	 * unverified; CPU and Apple rows follow llama.cpp's measurements
	 * (docs/step-model.md). */
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
		 * quantized decode slower than bytes / bandwidth. Only a profile
		 * without [arch] facts uses it: the shipped M-series profiles run
		 * the Metal kernel rows (sim/perf/backend_metal.c), and this table
		 * is their check. */
		[HW_APPLE] = { .bandwidth = 0.94, .attention_bandwidth = 0.94, .compute_max = 0.72,
			       .compute_half_tokens = 2, .attention_compute = 0.40,
			       .low_precision_compute = 1, .moe_efficiency = 1, .step_overhead_us = 5800,
			       .step_overhead_per_seq_us = 0, .request_overhead_ms = 5 },
	};
#undef OTHER_GPU
	*eff = by_class[hw_class];
}

/* The facts of [arch] that depend on each other: all or none of the
 * ones the step model needs, sustained <= boost, stream <= peak. */
static int check_arch(struct hw_profile *hw, const char *path, struct err *e)
{
	struct hw_arch *a = &hw->arch;
	bool any = a->sm_count > 0 || a->boost_clock_mhz > 0 || a->sustained_clock_mhz > 0;
	if (!any) {
		if (a->stream_bandwidth_gb_s > 0 || a->tensor_gen || a->memory_type || a->l2_mb > 0 ||
		    a->matmul_bf16_tflops > 0 || a->matmul_fp8_tflops > 0 || a->matmul_fp4_tflops > 0 ||
		    a->gemv_floor_us > 0 || a->gemv_bandwidth_gb_s > 0) {
			err_set(e, "%s: [arch] sm_count: expected sm_count, boost_clock_mhz and "
				   "sustained_clock_mhz with the other [arch] keys", path);
			return -1;
		}
		return 0;
	}
	if (a->sm_count <= 0 || a->boost_clock_mhz <= 0 || a->sustained_clock_mhz <= 0) {
		err_set(e, "%s: [arch]: expected sm_count, boost_clock_mhz and sustained_clock_mhz together",
			path);
		return -1;
	}
	if (a->sustained_clock_mhz > a->boost_clock_mhz) {
		err_set(e, "%s: [arch] sustained_clock_mhz: expected at most boost_clock_mhz (%g), got '%g'",
			path, a->boost_clock_mhz, a->sustained_clock_mhz);
		return -1;
	}
	if (a->stream_bandwidth_gb_s > hw->bandwidth_gb_s) {
		err_set(e, "%s: [arch] stream_bandwidth_gb_s: expected at most [memory] bandwidth_gb_s (%g), got '%g'",
			path, hw->bandwidth_gb_s, a->stream_bandwidth_gb_s);
		return -1;
	}
	if (a->gemv_bandwidth_gb_s > hw->bandwidth_gb_s) {
		err_set(e, "%s: [arch] gemv_bandwidth_gb_s: expected at most [memory] bandwidth_gb_s (%g), got '%g'",
			path, hw->bandwidth_gb_s, a->gemv_bandwidth_gb_s);
		return -1;
	}
	if (a->gemv_floor_us > 0 && a->gemv_bandwidth_gb_s <= 0) {
		err_set(e, "%s: [arch] gemv_floor_us: expected gemv_bandwidth_gb_s with it (the curve's slope)", path);
		return -1;
	}
	a->present = true;
	return 0;
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
		hw->eff_given |= 1u << (off / sizeof(double));
		hw->calibrated = true;
		hw->overheads_given |= !strcmp(keys[i].key, "step_overhead_us") ? HW_GIVEN_STEP_OVERHEAD :
				       !strcmp(keys[i].key, "step_overhead_per_seq_us") ? HW_GIVEN_STEP_PER_SEQ :
				       !strcmp(keys[i].key, "request_overhead_ms") ? HW_GIVEN_REQUEST_OVERHEAD : 0;
	}
	for (size_t i = 0; i < N_KEYS; i++)
		if (seen[i] && !strcmp(keys[i].key, "price_per_hour_usd"))
			hw->has_price = true;
		else if (seen[i] && !strcmp(keys[i].key, "purchase_usd"))
			hw->has_ownership = true;
	bool nvswitch_given = false;
	for (size_t i = 0; i < N_KEYS; i++)
		nvswitch_given |= seen[i] && !strcmp(keys[i].key, "nvswitch");
	if (!nvswitch_given)   /* SXM parts sit on NVSwitch boards; bridged cards say so */
		hw->nvswitch = !strncmp(hw_link_names[hw->ic_kind], "nvlink", 6) &&
			       strcmp(hw_link_names[hw->ic_kind], "nvlink-c2c");
	if (hw->nvswitch && hw->nvlink_bridge_gpus > 0) {
		err_set(e, "%s: [interconnect] nvlink_bridge_gpus: expected only with nvswitch = false (a bridge "
			   "joins cards without an NVSwitch), got '%lld'", path, (long long)hw->nvlink_bridge_gpus);
		return -1;
	}
	if (!hw->nvswitch && hw->nvlink_bridge_gpus == 0)   /* the common 2-way bridge */
		hw->nvlink_bridge_gpus = 2;
	if (hw->gpus_per_node == 0)   /* an HGX/DGX-style 8-GPU server; 1 for a Mac or a CPU */
		hw->gpus_per_node = hw->hw_class == HW_APPLE || hw->hw_class == HW_CPU ? 1 : 8;
	if (hw->link_domain_gpus == 0)   /* the link joins the node's GPUs */
		hw->link_domain_gpus = hw->gpus_per_node;
	if (hw->link_domain_gpus < hw->gpus_per_node) {
		err_set(e, "%s: [interconnect] link_domain_gpus: expected at least [ownership] gpus_per_node "
			   "(%lld), got '%lld'", path, (long long)hw->gpus_per_node, (long long)hw->link_domain_gpus);
		return -1;
	}
	if (hw->fp16_tflops == 0)
		hw->fp16_tflops = hw->bf16_tflops;
	if (check_arch(hw, path, e))
		return -1;
	/* The class's streaming fraction is of the datasheet; a device whose
	 * own measured stream is lower (MI300X: 3911 of 5300 GB/s, 0.74
	 * against the class's 0.87) streams at that where no kernel table
	 * runs (the named roofline, the scalar model), unless the profile
	 * gives [efficiency] bandwidth itself. */
	if (hw->arch.stream_bandwidth_gb_s > 0 && !(hw->eff_given & HW_EFF_BIT(bandwidth)))
		hw->eff.bandwidth = fmin(hw->eff.bandwidth, hw->arch.stream_bandwidth_gb_s / hw->bandwidth_gb_s);
	/* Estimate: an HGX/DGX server carries one 400 Gb/s ConnectX-7 NIC per
	 * GPU (NDR InfiniBand or 400G RoCE) for Hopper, Blackwell and MI300X
	 * platforms, one 200 Gb/s HDR NIC per GPU for Ampere (DGX A100) and
	 * MI250X; anything else a 100 GbE port. */
	if (hw->network_gbit_s == 0) {
		int gen = hw->arch.present ? hw->arch.tensor_gen : HW_TC_NONE;
		hw->network_gbit_s = hw->hw_class != HW_DATACENTER_GPU ? 100 :
				     gen == HW_TC_HOPPER || gen == HW_TC_BLACKWELL || gen == HW_TC_CDNA3 ? 400 :
				     gen == HW_TC_AMPERE || gen == HW_TC_CDNA2 ? 200 : 100;
	}
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
		return hw->usable_gib * GIB;
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

double hw_peak_flops_acc16(const struct hw_profile *hw)
{
	double tf = hw->fp16_acc16_tflops > 0 ? hw->fp16_acc16_tflops : hw->fp16_tflops;
	return (tf > 0 ? tf : hw->bf16_tflops) * 1e12;
}

double hw_clock_ratio(const struct hw_profile *hw)
{
	if (!hw->arch.present)
		return 1;
	return hw->arch.sustained_clock_mhz / hw->arch.boost_clock_mhz;
}

/* What a streaming kernel (copy, STREAM triad, a large GEMV) reaches of
 * the datasheet peak, by memory type, where a device publishes no
 * measurement of its own. Each row names the measurement it stands on. */
static double memory_type_stream_fraction(int type)
{
	static const double frac[HW_MEM_N] = {
		[HW_MEM_UNKNOWN] = 0.87,  /* the H100 fit (hw_default_efficiency), no component data */
		/* HBM: H100 SXM HBM3 copies/triads at 3.07-3.12 of 3.35 TB/s
		 * (0.92-0.93, D2D copy + STREAM triad, CUDA events); Nsight
		 * shows 2.8 TB/s (0.84) for coalesced weight loads in serving.
		 * 0.90 sits between; HBM2/2e/3e take the same (uncertain). */
		[HW_MEM_HBM2] = 0.90, [HW_MEM_HBM2E] = 0.90, [HW_MEM_HBM3] = 0.90, [HW_MEM_HBM3E] = 0.90,
		/* GDDR: llama.cpp test-backend-ops MUL_MAT bf16 m=4096 n=1
		 * k=14336 on an RTX 3090 Ti (GDDR6X, 1008 GB/s): 0.96 TFLOPS
		 * = 962 GB/s, 0.95 of peak (llama.cpp PR #15131). GDDR6: the
		 * read kernel of te42kyfo/gpu-benches gpu-stream (1 GiB of
		 * doubles, full occupancy; gpu-stream/l40.txt, a40.txt): an L40
		 * reads at 844 of 864 GB/s, an A40 at 679 of 696 (0.977, 0.976;
		 * their triads 0.93, 0.95): 0.97. GDDR7 takes 0.92
		 * (uncertain: no published figure here). */
		[HW_MEM_GDDR6] = 0.97, [HW_MEM_GDDR6X] = 0.95, [HW_MEM_GDDR7] = 0.92,
		/* Apple unified memory, read by the GPU: an M2 Ultra GPU copy
		 * at 636 of 800 GB/s (chsasank/device-benchmarks README,
		 * PyTorch MPS), and llama.cpp's q4_K / q6_K mat-vecs on an M3
		 * Pro at a 121.5 GB/s slope of 150 (test-backend-ops, llama.cpp
		 * PR #27776): 0.795 and 0.81. (It was the Apple class fit's 0.94,
		 * llama-bench tg128, end-to-end.) LPDDR5X takes the same
		 * (uncertain: no M4 copy figure here). */
		[HW_MEM_LPDDR5] = 0.795, [HW_MEM_LPDDR5X] = 0.795,
		/* Desktop DDR5: STREAM-class figures reach about 0.7 of the
		 * JEDEC peak (the CPU class default; uncertain). */
		[HW_MEM_DDR5] = 0.70,
	};
	return type >= 0 && type < HW_MEM_N ? frac[type] : frac[HW_MEM_UNKNOWN];
}

double hw_stream_bandwidth(const struct hw_profile *hw)
{
	double peak = hw->bandwidth_gb_s * 1e9;
	if (!hw->arch.present) {
		struct hw_efficiency d;
		hw_default_efficiency(hw->hw_class, &d);
		return peak * d.bandwidth;
	}
	if (hw->arch.stream_bandwidth_gb_s > 0)
		return hw->arch.stream_bandwidth_gb_s * 1e9;
	return peak * memory_type_stream_fraction(hw->arch.memory_type);
}

double hw_gemv_bandwidth(const struct hw_profile *hw, double bytes, double kernels)
{
	const struct hw_arch *a = &hw->arch;
	if (!a->present || a->gemv_bandwidth_gb_s <= 0 || bytes <= 0)
		return 0;
	double t = fmax(kernels, 0) * a->gemv_floor_us * 1e-6 + bytes / (a->gemv_bandwidth_gb_s * 1e9);
	return bytes / t;
}
