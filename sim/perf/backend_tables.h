/*
 * backend_tables: the backends defined in their own files
 * (sim/perf/backend_*.c), one per engine and device family, which
 * perf_backend_find looks up after backend.c's own table. Each is a
 * complete const struct perf_backend (sim/perf/backend.h): kernel rows
 * ending with the fallback row, and collectives including a ring row
 * with no size or group limit.
 */
#ifndef SERVESIM_BACKEND_TABLES_H
#define SERVESIM_BACKEND_TABLES_H

#include "backend.h"

/* vLLM on CUDA's all-reduce rows, the vllm-cuda backend's collectives
 * (backend.c): sim/perf/backend_nvlink.c. The size is part of the type, so
 * backend.c can count them and a row added without it fails to build. */
#define PERF_NVLINK_COLL_N 8
extern const struct perf_collective perf_nvlink_coll[PERF_NVLINK_COLL_N];

/* The paged-decode attention rows' per-call floor and per-unit latency
 * (backend.c's decode rows, which derive them; ROCm's row borrows the
 * floor): 13.7 us a layer's call, the intercept of vllm-project/
 * flash-attention PR #63's H100 batch-1 decode timings; 0.933 us a
 * (sequence, KV head) unit per SM, microsoft/onnxruntime PR #21414's A100
 * FA2 batch-decode table less that floor. */
#define PERF_FA_DECODE_CALL_US 13.7
#define PERF_FA_DECODE_UNIT_US 0.933

/* vLLM on ROCm (AMD Instinct CDNA2 / CDNA3): sim/perf/backend_rocm.c. */
extern const struct perf_backend perf_backend_vllm_rocm;

/* llama.cpp on NVIDIA GPUs (CUDA: MMQ / MMVQ / cuBLAS, ggml flash
 * attention): sim/perf/backend_llamacpp_cuda.c. */
extern const struct perf_backend perf_backend_llamacpp_cuda;

/* llama.cpp on Apple Silicon GPUs (Metal): sim/perf/backend_metal.c. */
extern const struct perf_backend perf_backend_llamacpp_metal;

/* llama.cpp on the CPU: sim/perf/backend_cpu.c. */
extern const struct perf_backend perf_backend_llamacpp_cpu;

#endif
