/*
 * backend_nvlink: vLLM on CUDA's collectives: the all-reduce rows (custom
 * all-reduce one-shot / two-shot, PyTorch symmetric memory, multimem, NCCL
 * rings over NVLink, PCIe and the network) and the two-shot rows' grids by
 * device generation (perf_coll_grid_of / _for), each with the table it
 * was fitted to. backend.c's vllm-cuda backend points at them; the
 * algorithm that times a row is collective.c's.
 */
#include "backend.h"

#include "backend_tables.h"
#include "num.h"

#define N_OF(a) ((int)(sizeof(a) / sizeof *(a)))

/* vLLM's all-reduce algorithms and where each may run (custom all-reduce,
 * csrc/custom_all_reduce.cuh: one-shot at tp 2, or below 512 KiB at tp <= 4
 * and 256 KiB at tp <= 8; two-shot otherwise; both within its 8 MiB
 * buffer and on fully NVLinked GPUs; PyTorch symmetric memory on Hopper,
 * below; NCCL always). vLLM's CudaCommunicator.all_reduce takes custom
 * all-reduce wherever it may, then symmetric memory wherever that may,
 * then NCCL, and perf_allreduce_s follows that order (collective.c): time
 * then rises with message size and falls with link bandwidth, except
 * where a message outgrows one of those buffers (vLLM's own switches).
 *
 * Fitted (2026-12-02) to ai-dynamo/aiconfigurator's H100 SXM table of
 * vLLM's own all-reduce (systems/data/h100_sxm/comm/vllm/0.14.0/
 * custom_allreduce_perf.parquet; collector/network/collect_all_reduce.py
 * calls vLLM's tensor_model_parallel_all_reduce, vLLM's dispatch included,
 * 5 all-reduces captured in a CUDA graph inside vLLM's graph_capture, bf16,
 * tp 2 / 4 / 8, 256 B to 1 GiB): the closest version to the calibration
 * runs' 0.15.1, and its 0.19.0 and 0.24.0 collections agree within 2%
 * wherever custom all-reduce runs. One-shot: 4.4 us + (tp - 1) x bytes at
 * 0.595 of the 450 GB/s link, least squares over its 45 points at 32 KiB up
 * to vLLM's one-shot limits (tp 2 to 4 MiB, tp 4 to 256 KiB, tp 8 to 128
 * KiB, three collections), residuals <= 5.8% (tp 2: 4.5 / 6.3 / 8.4 / 12.5 /
 * 20.3 us at 32 KiB / 0.5 / 1 / 2 / 4 MiB). Two-shot: by grid passes,
 * below. The older vLLM PR #24532 / #24111 tables (benchmark_device_
 * communicators.py, each kernel forced, ~v0.10) meet the one-shot line at
 * their tp-4 0.5 MB point (10 us) but put every two-shot point 1.3-1.45x
 * above aiconfigurator's (17 / 18 / 27 / 43 us at 0.5 / 1 / 2 / 4 MiB
 * against 11.4 / 12.8 / 18.6 / 30.5): the rows took those until
 * 2026-12-02 (6 us + bytes at 0.87; 9.3 us + 8.4 us a pass), kept as the
 * check that disagrees (test_collective). NCCL's ring: 6 hops x 3.07 us +
 * 1.5 x bytes at 0.69 (PR #24532's pynccl column); check: aiconfigurator's
 * NCCL points past symmetric memory's caps (tp 4: 173 / 322 us at 32 / 64
 * MiB, tp 2: 465 at 128 MiB) within 7%; at tp 8 its NCCL is 15-43% faster
 * from 64 MiB (uncertain there: NCCL's NVLS or tree, not modelled). vLLM on ROCm has its own rows,
 * fitted to MI300X tables (backend_rocm.c). */
#define CA_SRC "aiconfigurator H100 SXM vLLM 0.14.0 all-reduce table (CUDA graph), one-shot points"
#define CA_TWO_SHOT 3 /* perf_nvlink_coll's two-shot row */
#define NET_SRC "nccl-tests #290 (46-48 GB/s per NDR NIC) and #119 (A100 HDR busbw); 30 us: dgx-spark-playbooks PR #103"
const struct perf_collective perf_nvlink_coll[] = {
	{ "custom all-reduce, one-shot", TRAFFIC_ONE_SHOT, true, 8 * MIB, 2, 4.4, false, 0.595, false, CA_SRC },
	/* vLLM's launcher runs one-shot at tp 3-8 only strictly below 512 /
	 * 256 KiB (custom_all_reduce.cuh; messages are multiples of 16 bytes,
	 * should_custom_ar): 16 bytes under, the largest it takes. 32 tokens of
	 * hidden 8192 at tp 4 (a full CUDA graph of 25-32 sequences) take
	 * two-shot. */
	{ "custom all-reduce, one-shot", TRAFFIC_ONE_SHOT, true, 512 * 1024 - 16, 4, 4.4, false, 0.595, false, CA_SRC },
	{ "custom all-reduce, one-shot", TRAFFIC_ONE_SHOT, true, 256 * 1024 - 16, 8, 4.4, false, 0.595, false, CA_SRC },
	/* Two-shot: time by grid passes (nvlink_grids, below). */
	{ "custom all-reduce, two-shot", TRAFFIC_TWO_SHOT, true, 8 * MIB, 8, 6.02, false, 0.69, false,
	  "aiconfigurator H100 SXM vLLM 0.14.0 all-reduce table, tp 4 at 0.5-4 MiB, by 288 KiB grid passes "
	  "(custom_all_reduce.cuh)" },
	/* PyTorch symmetric-memory multimem all-reduce (NVLink SHARP: the
	 * NVSwitch reduces and multicasts, so each GPU moves the message about
	 * once whatever the group): vLLM's SymmMemCommunicator, on by default
	 * since vLLM PR #24111 (VLLM_ALLREDUCE_USE_SYMM_MEM), multimem at tp 4,
	 * 6 and 8 on sm90 (_WORLD_SIZES_MULTIMEM), below
	 * SYMM_MEM_ALL_REDUCE_MAX_SIZES' 32 MiB at tp 4 and 64 MiB at 6 and 8
	 * (all_reduce_utils.py; collective.c's symm_mem_cap). It is what
	 * carries a prefill step's all-reduces past custom all-reduce's 8 MiB
	 * buffer at tp 4 (533 tokens of a hidden 8192 are 8.3 MiB). Fitted to
	 * PR #24111's H100 tables (benchmark_device_communicators.py,
	 * symm_mem_multimem column, tp 4: 16, 18, 21, 23, 28, 33 us and tp 6:
	 * 13, 16, 18, 21, 25, 31 us at 0.5, 1, 1.5, 2, 3, 4 MiB), least squares
	 * over both: 12.0 us + bytes at 212 GB/s (0.472 of the 450 GB/s link),
	 * residuals <= 1.6 us; the slope is the same at tp 4 and 6, as one copy
	 * a GPU implies. Checks, not fitted: PR #24532's H100 tp-4 multimem
	 * column (15-28 us at 0.5-3 MiB) within 1.6 us; aiconfigurator's vLLM
	 * 0.19.0 and 0.24.0 tables where vLLM runs it (tp 4: 53 / 99 us at 8 /
	 * 16 MiB; tp 8: 10.7 / 11.9 / 14.8 / 19.4 / 30.6 us at 0.25-4 MiB, 51 /
	 * 92 / 178 us at 8 / 16 / 32 MiB) within 8% from 4 MiB, 13-24% over at
	 * tp 8 below it (its 0.14.0 collection is 19-33% slower than both at
	 * 8-16 MiB, the one place the versions disagree).
	 * vLLM tries custom all-reduce first, so this row runs only where no
	 * custom all-reduce row may (past its 8 MiB buffer at tp 4, past 512 /
	 * 256 KiB at tp 6 / 8, where vLLM caps custom all-reduce when symmetric
	 * memory is on: custom_ar_buffer). So at tp 4 a step's all-reduce falls
	 * from the two-shot kernel's 55 us (eight passes) to 52 us as the
	 * message reaches 8 MiB, as vLLM's switch does. Only on an NVSwitch
	 * ([interconnect] nvswitch): an NVLink bridge (H100/H200 NVL) has no
	 * multicast, so vLLM's SymmMemCommunicator stays off there, and custom
	 * all-reduce keeps its 8 MiB buffer. */
	{ "symmetric-memory multimem all-reduce", TRAFFIC_MULTIMEM, true, 0, 0, 12.0, false, 0.472, false,
	  "vLLM PR #24111 H100 tp 4/6 symm_mem_multimem table (check: PR #24532; aiconfigurator vLLM 0.19.0)" },
	/* The same communicator at tp 2 (not a multimem world size on sm90)
	 * runs PyTorch's two-shot symmetric-memory kernel, from custom
	 * all-reduce's 8 MiB buffer to its own 64 MiB: a Yi-34B prefill step of
	 * 586 tokens or more. Fitted to aiconfigurator's H100 tp-2 points there
	 * (vLLM 0.14.0 / 0.19.0 / 0.24.0: 50 / 45 / 45 us at 8 MiB, 78 / 82 / 81
	 * at 16, 138 / 158 / 156 at 32): 11.7 us + bytes at 0.536 of the link
	 * (its traffic, 2(tp - 1)/tp, is 1 at tp 2), residuals <= 13 us (9%).
	 * Above NCCL's ring there (33 us at 8 MiB): vLLM runs it anyway. */
	{ "symmetric-memory two-shot all-reduce", TRAFFIC_SYMM_TWO_SHOT, true, 0, 0, 11.7, false, 0.536, false,
	  "aiconfigurator H100 SXM vLLM 0.14/0.19/0.24 all-reduce tables, tp 2 at 8-32 MiB" },
	{ "NCCL (RCCL on ROCm) ring all-reduce", TRAFFIC_RING, false, 0, 0, 0, true, 0.69, false,
	  "vLLM PR #24532 H100 TP4 pynccl column (check: aiconfigurator vLLM 0.14.0 NCCL points)" },
	/* A tensor-parallel group spanning nodes: NCCL's rings leave each
	 * node through its NICs, one channel a NIC, so the bus bandwidth is
	 * the node's NIC rate at 0.94 (NDR 400 Gb/s gives 46-48 GB/s per NIC
	 * in all_reduce_perf: NVIDIA/nccl-tests #290, an NCCL maintainer;
	 * check: 3 DGX-class A100 servers with 4 HDR NICs each, 0.94 x 100
	 * GB/s = 94 against 96 GB/s peak busbw, nccl-tests #119), capped by
	 * the NVLink ring inside the node (0.69 of the link, as above). 30
	 * us fixed: a 2-node all_reduce_perf at 8-32 KiB takes 30-40 us
	 * (NVIDIA/dgx-spark-playbooks PR #103, 200 Gb/s RoCE; uncertain for
	 * NDR InfiniBand). */
	{ "NCCL ring all-reduce over InfiniBand / RoCE", TRAFFIC_RING, false, 0, 0, 30.0, false, 0.94, true, NET_SRC },
};
/* Custom all-reduce's two-shot kernel: a reduce-scatter and an
 * all-gather, each on a grid of defaultBlockLimit 36 blocks x 512 threads
 * x 16 bytes (csrc/custom_all_reduce.cuh: 512 threads, 8 bf16 a packed
 * load), 288 KiB of a GPU's 1/tp share a pass. Its time goes by passes,
 * not bytes: aiconfigurator's H100 tp-4 points (vLLM 0.14.0 / 0.19.0 /
 * 0.24.0, in a CUDA graph) are 11.2-11.4 and 12.6-12.8 us at 0.5 and 1 MiB
 * (one pass), 18.5-18.6 at 2 (two), 30.3-30.5 at 4 (four): least squares
 * over the three, 6.02 us (the row's latency) + 6.11 us a pass, residuals
 * <= 0.95 us. The same grid in PR #24111's and #24532's forced ca_2stage
 * columns (17-18 us for one pass, 25-27 for two, 42-43 for four: 9.3 +
 * 8.4 us a pass, the fit until 2026-12-02) is 1.3-1.45x slower at every
 * point, as are their tp-6 points (15 / 17 / 20 / 26 / 29 / 37 us at 0.5-4
 * MiB; aiconfigurator has no tp 6). The row's bytes at 0.69 of the link
 * are a floor (estimate: no faster than NCCL's ring moves the same bytes,
 * PR #24532's pynccl column; at 4 MiB the kernel reaches 0.57 of H100's
 * link, so the floor binds only on slower links, A100's NVLink 3 at
 * several MiB). Other NVLink parts take H100's pass time (uncertain: no
 * table of theirs by size was found). */
static const struct perf_coll_grid nvlink_grids[] = {
	{ &perf_nvlink_coll[CA_TWO_SHOT], 36.0 * 512 * 16, 6.11,
	  "aiconfigurator H100 SXM vLLM 0.14.0 all-reduce table, tp 4: 6.02 us + 6.11 us a 288 KiB pass "
	  "(custom_all_reduce.cuh grid)",
	  HW_TC_NONE, 0, 0 },
	/* Ampere: the same grid, slower passes. aiconfigurator's A100 SXM 80GB
	 * table of vLLM 0.14.0's all-reduce (comm/vllm/0.14.0, CUDA graph), tp
	 * 4: 14.6 / 18.3 / 26.1 / 41.5 us at 0.5 / 1 / 2 / 4 MiB (one, one, two,
	 * four passes): least squares 8.4 us + 8.35 us a pass, residuals <= 2.2
	 * us (the two one-pass points straddle the line); H100's line was 12-26%
	 * under them. Check: its tp-8 points (17.1 / 18.9 / 21.7 / 27.9 / 45.4 us
	 * at 0.25-4 MiB, where the 0.69 link floor binds from 2 MiB) within 21%,
	 * 7% from 2 MiB. The ratio to H100, 1.3-1.4 at every size, is about
	 * their clocks' (1,830 against 1,410 MHz): a grid sweep bound by
	 * latency, not the link. Ada and older parts on NVLink bridges take
	 * the first row (uncertain: no table of theirs). */
	{ &perf_nvlink_coll[CA_TWO_SHOT], 36.0 * 512 * 16, 8.35,
	  "aiconfigurator A100 SXM vLLM 0.14.0 all-reduce table, tp 4: 8.4 us + 8.35 us a 288 KiB pass",
	  HW_TC_AMPERE, 8.4, 0 },
	/* Ampere's one-shot, from the same A100 table: 5.4 us + (tp - 1) x
	 * bytes at 0.655 of NVLink 3 (15 points from 32 KiB to vLLM's one-shot
	 * limits at tp 2 / 4 / 8, residuals <= 11%; H100's line was 10-17%
	 * under the small ones). */
	{ &perf_nvlink_coll[0], 0, 0, "aiconfigurator A100 SXM vLLM 0.14.0 all-reduce table, one-shot points", HW_TC_AMPERE,
	  5.4, 0.655 },
	{ &perf_nvlink_coll[1], 0, 0, "aiconfigurator A100 SXM vLLM 0.14.0 all-reduce table, one-shot points", HW_TC_AMPERE,
	  5.4, 0.655 },
	{ &perf_nvlink_coll[2], 0, 0, "aiconfigurator A100 SXM vLLM 0.14.0 all-reduce table, one-shot points", HW_TC_AMPERE,
	  5.4, 0.655 },
	/* Blackwell (sm100, NVLink 5 at 900 GB/s): vLLM gives it its own sizes
	 * (collective.c: custom all-reduce below 2 / 2 / 1 / 1 MiB at tp 2 / 4 /
	 * 6 / 8, symmetric memory below 8 / 32 / 128 / 128 MiB, multimem at 6
	 * and 8 only, two-shot at 2 and 4), and its kernels run slower than the
	 * link would say. Fitted to aiconfigurator's B200 table of vLLM's
	 * all-reduce (comm/vllm/0.19.0 and 0.24.0, CUDA graph, within 5% of each
	 * other; no 0.14 collection): one-shot 7.0 us + (tp - 1) x bytes at
	 * 0.325 of the link (26 points at 32 KiB to each one-shot limit, <= 19%;
	 * tp 2 is the slow side: 13.1 us at 1 MiB against H100's 8.4);
	 * symmetric memory's two-shot at tp 2 and 4, 20.5 us + 2(tp - 1)/tp x
	 * bytes at 0.605 (12 points, 2-16 MiB, <= 19%); multimem at tp 8, 14.1 us
	 * + bytes at 0.375 (14 points, 1-64 MiB, <= 4.4%); custom two-shot's
	 * one-pass points (18.0-19.0 us at tp 4, 25.8-26.2 at tp 8) by 16.1 us +
	 * H100's 6.11 us a pass (within 21%: the table has no two-pass point
	 * below the 2 MiB cap); NCCL's ring past the caps, 28 us + its hops +
	 * 2(tp - 1)/tp x bytes at 0.705 (24 points at tp 2 / 4 / 8 and 8-256 MiB,
	 * -14..+13%; H100's ring row was 61% under B200's tp-2 points). B300
	 * (sm103) takes these (uncertain: vLLM 0.15 has no "10.3" sizes). */
	{ &perf_nvlink_coll[0], 0, 0, "aiconfigurator B200 vLLM 0.19/0.24 all-reduce tables, one-shot points", HW_TC_BLACKWELL,
	  7.0, 0.325 },
	{ &perf_nvlink_coll[1], 0, 0, "aiconfigurator B200 vLLM 0.19/0.24 all-reduce tables, one-shot points", HW_TC_BLACKWELL,
	  7.0, 0.325 },
	{ &perf_nvlink_coll[2], 0, 0, "aiconfigurator B200 vLLM 0.19/0.24 all-reduce tables, one-shot points", HW_TC_BLACKWELL,
	  7.0, 0.325 },
	{ &perf_nvlink_coll[CA_TWO_SHOT], 36.0 * 512 * 16, 6.11,
	  "aiconfigurator B200 vLLM 0.19/0.24 all-reduce tables, one-pass two-shot points: 16.1 us + H100's pass",
	  HW_TC_BLACKWELL, 16.1, 0 },
	{ &perf_nvlink_coll[CA_TWO_SHOT + 1], 0, 0, "aiconfigurator B200 vLLM 0.19/0.24 all-reduce tables, tp-8 multimem points",
	  HW_TC_BLACKWELL, 14.1, 0.375 },
	{ &perf_nvlink_coll[CA_TWO_SHOT + 2], 0, 0,
	  "aiconfigurator B200 vLLM 0.19/0.24 all-reduce tables, tp 2 / 4 symmetric-memory two-shot points", HW_TC_BLACKWELL,
	  20.5, 0.605 },
	{ &perf_nvlink_coll[CA_TWO_SHOT + 3], 0, 0, "aiconfigurator B200 vLLM 0.19/0.24 all-reduce tables, NCCL points past the caps",
	  HW_TC_BLACKWELL, 28.0, 0.705 },
};

const struct perf_coll_grid *perf_coll_grid_of(const struct perf_collective *c)
{
	for (int i = 0; i < N_OF(nvlink_grids); i++)
		if (nvlink_grids[i].row == c && nvlink_grids[i].gen == HW_TC_NONE)
			return &nvlink_grids[i];
	return NULL;
}

const struct perf_coll_grid *perf_coll_grid_for(const struct perf_collective *c, const struct hw_profile *hw)
{
	for (int i = 0; i < N_OF(nvlink_grids); i++)
		if (nvlink_grids[i].row == c && nvlink_grids[i].gen != HW_TC_NONE && hw->arch.present &&
		    (int)hw->arch.tensor_gen == nvlink_grids[i].gen)
			return &nvlink_grids[i];
	return perf_coll_grid_of(c);
}
