/*
 * hwprofile: one device, read from hardware_profiles/<id>.ini.
 *
 * A plain record of datasheet peaks (memory, bandwidth, dense FLOP/s per
 * precision, interconnect, price) and of the achievable fractions the
 * step-time model applies to them ([efficiency]). Every figure in the file
 * carries a `source`; hardware_profiles/README.md documents each key.
 * The [arch] section holds the micro-architecture facts the step model
 * derives its kernel efficiencies from (sim/perf/backend.c): SM count,
 * clocks, tensor-core generation, L2, memory type, measured streaming
 * bandwidth. Keys a profile's [efficiency] section gives override what is
 * derived, key by key (eff_given); the device-class row of
 * hw_default_efficiency is the documented fallback for a device without
 * facts and sets the engine-level overheads.
 */
#ifndef SERVESIM_HWPROFILE_H
#define SERVESIM_HWPROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "inidoc.h"
#include "precision.h"

enum hw_class {
	HW_DATACENTER_GPU,
	HW_WORKSTATION_GPU,
	HW_CONSUMER_GPU,
	HW_CPU,
	HW_APPLE,
};

/* Achievable fractions of peak and fixed costs (issue: step-time model). */
struct hw_efficiency {
	double bandwidth;            /* fraction of peak bandwidth streaming weights */
	double attention_bandwidth;  /* fraction of peak bandwidth reading KV in decode, at many sequences */
	double attention_half_seqs;  /* decode sequences in a step at which decode attention
				      * reaches half of attention_bandwidth (few sequences
				      * leave the GPU's SMs idle); 0: no dependence */
	double compute_max;          /* fraction of peak matmul FLOP/s at large M */
	double compute_half_tokens;  /* M (tokens) at which half of compute_max is reached */
	double attention_compute;    /* fraction of peak for prefill attention */
	double low_precision_compute; /* what 8- and 4-bit matmuls (fp8, int8, fp4) reach,
				       * against their own peak, as a fraction of the
				       * 16-bit efficiency */
	double moe_efficiency;       /* what the fused-MoE kernels reach, as a fraction of
				      * the dense matmuls' compute and bandwidth efficiency
				      * at the same shape */
	double step_overhead_us;     /* per engine step: scheduling, launches */
	double step_overhead_per_seq_us; /* per sequence in the step (input prep, sampling) */
	double request_overhead_ms;  /* per request: API, tokenizer, detokenizer; lands in TTFT */
};

/* Tensor-core generations: which kernels an engine runs (FlashAttention-3
 * needs Hopper, FP8 needs Ada or later, FP4 Blackwell). HW_TC_BLACKWELL is
 * datacenter Blackwell (sm_100/103: tcgen05 MMAs from tensor memory, the
 * kernels CUTLASS and TRT-LLM build for sm100); HW_TC_BLACKWELL_SM120 the
 * RTX / GeForce Blackwell parts (compute capability 12.x: no tcgen05 or
 * tensor memory, warp-level mma.sync as on Ampere / Ada, with block-scaled
 * FP8 / FP6 / FP4 forms; CUTLASS's sm120 kernels, PTX ISA "mma" for
 * sm_120a), which run their own rows. */
enum hw_tensor_gen {
	HW_TC_NONE, HW_TC_VOLTA, HW_TC_AMPERE, HW_TC_ADA, HW_TC_HOPPER, HW_TC_BLACKWELL,
	HW_TC_BLACKWELL_SM120, HW_TC_CDNA2, HW_TC_CDNA3, HW_TC_APPLE, HW_TC_N
};

enum hw_memory_type {
	HW_MEM_UNKNOWN, HW_MEM_HBM2, HW_MEM_HBM2E, HW_MEM_HBM3, HW_MEM_HBM3E, HW_MEM_GDDR6,
	HW_MEM_GDDR6X, HW_MEM_GDDR7, HW_MEM_LPDDR5, HW_MEM_LPDDR5X, HW_MEM_DDR5, HW_MEM_N
};

/* Micro-architecture facts ([arch]); every number has a source in the file. */
struct hw_arch {
	bool present;                /* the profile has an [arch] section with sm_count */
	double sm_count;             /* SMs (NVIDIA), CUs (AMD), GPU cores (Apple), cores (CPU) */
	double boost_clock_mhz;      /* the clock the datasheet's tensor peaks are quoted at */
	double sustained_clock_mhz;  /* what the clock settles at under a long matmul load */
	int tensor_gen;              /* enum hw_tensor_gen */
	double l2_mb;                /* last-level on-chip cache, MB */
	int memory_type;             /* enum hw_memory_type */
	double stream_bandwidth_gb_s; /* measured streaming read/copy, GB/s; 0: not published */
	double matmul_bf16_tflops;   /* measured best-shape dense BF16 GEMM (FP32 accumulate); 0: none */
	double matmul_fp8_tflops;    /* … and FP8; 0: none */
	double matmul_fp4_tflops;    /* … and FP4 (NVFP4); 0: none */
	/* A weight-streaming mat-vec kernel (M = 1, the decode GEMV) as a
	 * curve of its bytes: gemv_floor_us + bytes / gemv_bandwidth_gb_s a
	 * kernel, least squares over a published table of such kernels by size
	 * (the profile's comment names it); 0: not published (the backend's
	 * rows stream at their fraction of hw_stream_bandwidth, no floor). */
	double gemv_floor_us;        /* fixed time of one kernel beyond its bytes, us */
	double gemv_bandwidth_gb_s;  /* the slope: bytes a second past the floor, GB/s */
};

/* Which of [efficiency]'s overhead keys a profile sets itself (an engine
 * with its own fitted defaults keeps those for the others). */
enum { HW_GIVEN_STEP_OVERHEAD = 1, HW_GIVEN_STEP_PER_SEQ = 2, HW_GIVEN_REQUEST_OVERHEAD = 4 };

struct hw_profile {
	char id[64];
	unsigned overheads_given;    /* HW_GIVEN_* bits */
	char name[INI_VALUE_MAX];
	int hw_class;                /* enum hw_class */
	int vendor;                  /* index into hw_vendor_names */
	bool vllm_small_defaults;    /* [device]: vLLM keeps its small engine defaults here
				      * despite >= 70 GiB (A100s, vllm/engine/arg_utils.py) */
	double capacity_gb;          /* datasheet, decimal GB */
	double usable_gib;           /* what the runtime reports; 0 when unknown */
	double bandwidth_gb_s;       /* peak memory bandwidth, decimal GB/s */
	double fp32_tflops, bf16_tflops, fp16_tflops, fp8_tflops, int8_tops, fp4_tflops;
	double fp16_acc16_tflops;    /* fp16 matmul with fp16 accumulate; 0: the fp16 rate
				      * (bf16/fp16 are FP32-accumulate rates) */
	struct hw_arch arch;
	int ic_kind;                 /* index into hw_link_names */
	double ic_bandwidth_gb_s;    /* GPU-to-GPU, per direction */
	double ic_latency_us;
	int host_link;               /* index into hw_link_names */
	double host_bandwidth_gb_s;  /* per direction */
	double network_gbit_s;       /* scale-out NIC rate per GPU (IB / RoCE), Gb/s; 0: the default */
	int64_t link_domain_gpus;    /* GPUs one GPU-to-GPU link domain joins (NVL72's NVLink Switch:
				      * 72), at least gpus_per_node (the default); a tensor-parallel
				      * group beyond it goes over the network */
	bool nvswitch;               /* the NVLinks meet in an NVSwitch (HGX/DGX boards, NVL racks:
				      * NVLink SHARP multicast); false for bridged cards (H100/H200
				      * NVL). Default: true for an nvlink3/4/5 kind, else false */
	int64_t nvlink_bridge_gpus;  /* without an NVSwitch: the cards one NVLink bridge joins (2 or
				      * 4; default 2); 0 with an NVSwitch */
	double price_per_hour_usd;   /* 0 when the profile has none */
	bool has_price;
	/* [ownership]: what owning the device costs (plan's and compare's
	 * --cost own). 0 when the profile has none. */
	double purchase_usd;         /* one device, street price */
	double board_power_w;        /* the device's board power (TDP/TBP) */
	double server_overhead_w;    /* the server's draw per device besides the board (CPU, fans, PSU loss) */
	int64_t gpus_per_node;       /* devices one typical server holds */
	bool has_ownership;
	bool calibrated;             /* the profile had its own [efficiency] */
	unsigned eff_given;          /* HW_EFF_BIT(field) for each [efficiency] key the file gave */
	struct hw_efficiency eff;
	char source_device[INI_VALUE_MAX], source_memory[INI_VALUE_MAX];
	char source_compute[INI_VALUE_MAX], source_interconnect[INI_VALUE_MAX];
	char source_price[INI_VALUE_MAX], source_efficiency[INI_VALUE_MAX];
	char source_arch[INI_VALUE_MAX];
	char source_ownership[INI_VALUE_MAX];
};

/* The bit of eff_given for the hw_efficiency field at byte offset off. */
#define HW_EFF_BIT(field) (1u << (offsetof(struct hw_efficiency, field) / sizeof(double)))

extern const char *const hw_class_names[];
extern const char *const hw_vendor_names[];
extern const char *const hw_link_names[];
extern const char *const hw_tensor_gen_names[];
extern const char *const hw_memory_type_names[];

/* Reads path into *hw. Returns 0, or -1 with e as `path:line: [section]
 * key: expected …, got '…'` (or the missing key). */
int hw_load(struct hw_profile *hw, const char *path, struct err *e);

/* The profile's key table, for the generated key reference. Sets *n to its
 * length. Cannot fail. */
const struct inidoc_key *hw_profile_keys(size_t *n);

/* Resolves name (an id or a path) and loads it. */
int hw_load_named(struct hw_profile *hw, const char *name, struct err *e);

/* The efficiency defaults of a device class. */
void hw_default_efficiency(int hw_class, struct hw_efficiency *eff);

/* Device memory the runtime sees, bytes. */
double hw_memory_bytes(const struct hw_profile *hw);

/* Dense peak FLOP/s for matmuls in dtype d; falls back to the nearest
 * wider dtype the device has (no fp8 on A100: bf16 rate). The 16-bit
 * rate is the FP32-accumulate one. */
double hw_peak_flops(const struct hw_profile *hw, enum matmul_dtype d);

/* FP16 matmuls with FP16 accumulate (llama.cpp's cuBLAS path): twice
 * the FP32-accumulate rate on GeForce parts, the same elsewhere. */
double hw_peak_flops_acc16(const struct hw_profile *hw);

/* The fraction of the datasheet clock a long matmul load holds:
 * sustained / boost, 1 without [arch] facts. In (0, 1]. */
double hw_clock_ratio(const struct hw_profile *hw);

/* Achievable streaming bandwidth, bytes/s: the measured figure of [arch]
 * when published, else the datasheet peak times the typical fraction of
 * its memory type (sim/hw/hwprofile.c, each with its source); without
 * [arch], peak × the class default's bandwidth fraction. */
double hw_stream_bandwidth(const struct hw_profile *hw);

/* The bytes/s a step's weight-streaming matmuls reach when they read
 * bytes in `kernels` kernels: bytes / (kernels · gemv_floor_us + bytes /
 * gemv_bandwidth_gb_s), from the profile's measured mat-vec curve ([arch]
 * gemv_*), so it falls with bytes per kernel and rises toward the slope as
 * kernels grow. 0 when the profile publishes no curve, or bytes <= 0.
 * Cannot fail. */
double hw_gemv_bandwidth(const struct hw_profile *hw, double bytes, double kernels);

#endif
