/*
 * backend_cpu: llama.cpp on the CPU (ggml's CPU backend), the kernel rows
 * and the per-node floor of the "llama.cpp-cpu" backend (sim/perf/backend.h
 * describes what a row is and how it is looked up).
 *
 * What llama.cpp runs there: a ggml graph of ~21 nodes a layer, each node
 * split over the worker threads (one a physical core by default) and
 * closed by a barrier across all of them; the mat-muls quantize the
 * activations to Q8_0 and run ggml's vec_dot kernels, llamafile's
 * tinyBLAS or the repacked GEMMs by weight type; attention is ggml's CPU
 * flash-attention loop.
 *
 * What is measured at the component level, and taken: the barrier that
 * ends every node (ggml's test-barrier, below). What is not: the mat-mul
 * rates by quant type and thread count (the searches found llama-bench
 * tables, end-to-end, and test-backend-ops / test-quantize-perf runs that
 * name neither the CPU's clock nor its memory), so the kernel rows are
 * the named fallback, the CPU class scalars of hw_default_efficiency
 * (0.70 of the JEDEC stream, 0.50 of peak), and say so. The 7950X
 * llama-bench table (docs/backends.md) checks the composition.
 *
 * Invariants: the table ends with the fallback row; the collectives hold
 * one ring row with no limit. Const data only.
 */
#include "backend_tables.h"

#define N_OF(a) ((int)(sizeof(a) / sizeof *(a)))

static const struct perf_kernel llamacpp_cpu_rows[] = {
	{ .fallback = true, .kernel = "roofline, no kernel data",
	  .source = "device-class defaults (hw_default_efficiency): no CPU mat-mul table by quant type found" },
};

/* A CPU has no GPU-to-GPU link: llama.cpp splits layers over sockets or
 * hosts (RPC) and never all-reduces. uncertain: a ring over the
 * profile's placeholder link, for a tensor split. */
static const struct perf_collective llamacpp_cpu_coll[] = {
	{ "ring all-reduce (llama.cpp RPC)", TRAFFIC_RING, false, 0, 0, 0, true, 0.69, false,
	  "uncertain: llama.cpp splits layers and never all-reduces; ring at vLLM PR #24532's NCCL fraction" },
};

/* The floor of one graph node: every node ends with a barrier over the
 * worker threads, ggml_barrier, whose cost llama.cpp's test-barrier
 * measures: 0.47 / 0.72 / 1.04 us a node at 1 / 4 / 8 threads on a Core
 * i9-13900K (one ring bus; llama.cpp PR #9461) and 1.96 / 3.04 us at 4 /
 * 8 threads on an EPYC whose threads span its CCDs (PR #9598). 2.0 us:
 * estimate, for a 16-core desktop part at its default 16 threads, which
 * span its two CCDs (between the ring's 1.04 and the EPYC's 3.04 at 8
 * threads). Nodes a layer: 15 + 6 as llama.cpp's llama graph
 * (llm_build_llama: norms, projections, SiLU, adds; ropes, cache writes,
 * attention; estimate, as backend_metal.c). A 32-layer step: 1.3 ms.
 * The class's 200 us per step stays for the host work around the graph
 * (its build, the inputs, the sampler). */
#define CPU_LAUNCH                                                                                          \
	"2.0 us a node (estimate from ggml test-barrier: i9-13900K 1.04 us at 8 threads, PR #9461; EPYC 3.04 " \
	"us at 8 threads across CCDs, PR #9598); 21 nodes a layer (llm_build_llama's graph)"

const struct perf_backend perf_backend_llamacpp_cpu = {
	"llama.cpp-cpu", "llama.cpp", 2.0, 15, 6, CPU_LAUNCH, -1,
	llamacpp_cpu_rows, N_OF(llamacpp_cpu_rows), llamacpp_cpu_coll, N_OF(llamacpp_cpu_coll), NULL
};
