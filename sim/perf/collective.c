/*
 * collective: how vLLM (and the other engines) all-reduce a message over a
 * tensor-parallel group, and how long it takes (perf_allreduce_s). The
 * rows are the backends' (backend_nvlink.c perf_nvlink_coll, backend_rocm.c); this file
 * is the selection: which rows may carry a message (link, NVSwitch, group
 * size, custom all-reduce's buffer, the nodes a group spans) and, in
 * vLLM's dispatch order, which one runs.
 *
 * Invariants: a backend's collectives include a ring row with no size or
 * group limit, so a choice always exists; time rises with the message and
 * falls with link and NIC bandwidth except at vLLM's own switches: a
 * message past custom all-reduce's buffer onto the cheaper multimem
 * kernel, and one past symmetric memory's two-shot buffer onto NCCL (tp 2:
 * 64 MiB on Hopper, 8 MiB on Blackwell).
 */
#include "backend.h"

#include <assert.h>
#include <math.h>
#include <string.h>

#include "num.h"

/* Bytes each GPU sends per byte of message. */
static double traffic(int kind, double tp)
{
	switch (kind) {
	case TRAFFIC_ONE_SHOT:
		return tp - 1;
	case TRAFFIC_MULTIMEM:
		return 1;
	case TRAFFIC_TWO_SHOT:
	case TRAFFIC_RING:
	default:
		return 2 * (tp - 1) / tp;
	}
}

/* The time a row's grid takes over its passes (perf_coll_grid: each GPU's
 * share, 1/tp of the message for two-shot, swept in whole passes, a
 * part-filled last one costing a full one); 0 for a row without one. */
static double grid_s(const struct perf_collective *c, const struct hw_profile *hw, double tp, double bytes)
{
	const struct perf_coll_grid *g = perf_coll_grid_for(c, hw);
	if (!g || g->pass_bytes <= 0)
		return 0;
	double share = c->traffic == TRAFFIC_TWO_SHOT ? bytes / tp : bytes;
	return ceil(share / g->pass_bytes) * g->pass_us * 1e-6;
}

/* Row c's fixed time on hw (us): its grid's for hw's generation where
 * that sets one, else the row's. */
static double row_latency_us(const struct perf_collective *c, const struct hw_profile *hw)
{
	const struct perf_coll_grid *g = perf_coll_grid_for(c, hw);
	return g && g->latency_us > 0 ? g->latency_us : c->latency_us;
}

/* Row c's link fraction on hw: its generation's where that sets one,
 * else the row's. */
static double row_frac(const struct perf_collective *c, const struct hw_profile *hw)
{
	const struct perf_coll_grid *g = perf_coll_grid_for(c, hw);
	return g && g->link_frac > 0 ? g->link_frac : c->link_frac;
}

/* Whether c is one of vLLM's custom all-reduce rows (one-shot or
 * two-shot), which run wherever they may and share its buffer. */
static bool custom_row(const struct perf_collective *c)
{
	return c->traffic == TRAFFIC_ONE_SHOT || c->traffic == TRAFFIC_TWO_SHOT;
}

/* Whether c is one of the symmetric-memory rows (vLLM's
 * SymmMemCommunicator: multimem, or its two-shot kernel), which run
 * wherever they may once custom all-reduce may not, before NCCL. */
static bool symm_row(const struct perf_collective *c)
{
	return c->traffic == TRAFFIC_MULTIMEM || c->traffic == TRAFFIC_SYMM_TWO_SHOT;
}

/* Whether the GPU-to-GPU link is NVLink (nvlink3/4/5; NVLink-C2C joins a
 * CPU and a GPU, not GPUs). */
static bool nvlink_kind(const struct hw_profile *hw)
{
	const char *k = hw_link_names[hw->ic_kind];
	return !strncmp(k, "nvlink", 6) && strcmp(k, "nvlink-c2c");
}

/* Where vLLM's symmetric-memory multimem all-reduce runs: Hopper over
 * NVLink through an NVSwitch (NVLink SHARP multicast; its size table's
 * sm90 rows; Blackwell's sizes and algorithms differ, not modelled: those
 * parts take the other rows). */
static bool hopper_multicast(const struct hw_profile *hw)
{
	return hw->arch.present && hw->arch.tensor_gen == HW_TC_HOPPER && nvlink_kind(hw) && hw->nvswitch;
}

/* Blackwell (sm100: B200, GB200) over NVLink through an NVSwitch, where
 * vLLM's symmetric-memory all-reduce runs with its sm100 sizes ("10.0" in
 * all_reduce_utils.py and _WORLD_SIZES_MULTIMEM). */
static bool sm100_multicast(const struct hw_profile *hw)
{
	return hw->arch.present && hw->arch.tensor_gen == HW_TC_BLACKWELL && nvlink_kind(hw) && hw->nvswitch;
}

/* Custom all-reduce's buffer: a message must fit in it. 8 MiB by
 * default; where symmetric memory runs (Hopper on an NVSwitch) vLLM takes
 * the smaller of that and CUSTOM_ALL_REDUCE_MAX_SIZES["9.0"] (64 / 32 MiB
 * at tp 2 / 4, 512 KiB at tp 6, 256 KiB at tp 8; all_reduce_utils.py),
 * the sizes where its two-shot kernel starts losing to the multimem one
 * (vLLM PR #20759; PR #24111's tp-6 table: two-shot 17 / 26 / 37 us
 * against multimem 16 / 21 / 31 at 1 / 2 / 4 MiB). Other devices have no
 * row there: 8 MiB. vLLM's test is strict (should_custom_ar: inp_size <
 * max_size), and so is this one: a message of exactly the buffer (1,024
 * tokens at hidden 4096, 512 at 8192) leaves custom all-reduce. Until
 * 2026-12-02 it stayed (a strict test once moved test_plan's
 * more_gpus_never_lower_the_rate: TP4 then sustained 27.5 req/s against
 * TP2's 31.5 although the step it changes got shorter; the cause is that
 * test's statistic, not the step: its ITL p99 steps from the decode
 * steps' gap, ~30 ms, to the mixed steps', ~38, as those pass 1% of the
 * gaps, just under its 40 ms limit, and with two replications the
 * search's confidence bound fails wherever the seeds straddle that
 * step; docs/step-model.md, Collectives). */
static double custom_ar_buffer(const struct hw_profile *hw, int tp)
{
	const double MIB_8 = 8.0 * MIB;
	/* vLLM on ROCm doubles it (custom_all_reduce.py: "crossover is at
	 * 16MB buffer size for ROCm"; backend_rocm.c's rows take 16 MiB). */
	if (!strcmp(hw_link_names[hw->ic_kind], "infinity-fabric"))
		return 2 * MIB_8;
	/* sm100: CUSTOM_ALL_REDUCE_MAX_SIZES["10.0"], 2 / 2 / 1 / 1 MiB. */
	if (sm100_multicast(hw))
		return tp >= 6 ? MIB : 2 * MIB;
	if (!hopper_multicast(hw))
		return MIB_8;
	return tp >= 8 ? MIB / 4 : tp >= 6 ? MIB / 2 : MIB_8;
}

/* vLLM's symmetric-memory all-reduce's buffer on Hopper with an NVSwitch
 * (SYMM_MEM_ALL_REDUCE_MAX_SIZES["9.0"], all_reduce_utils.py): 64 MiB at tp
 * 2, 32 at 4, 64 at 6 and 8; no other group size and no other device
 * (0). A message must be strictly smaller (should_use_symm_mem). */
static double symm_mem_cap(const struct hw_profile *hw, int tp)
{
	/* sm100 (SYMM_MEM_ALL_REDUCE_MAX_SIZES["10.0"]): 8 / 32 / 128 / 128 MiB. */
	if (sm100_multicast(hw))
		return tp == 2 ? 8 * MIB : tp == 4 ? 32 * MIB : tp == 6 || tp == 8 ? 128 * MIB : 0;
	if (!hopper_multicast(hw))
		return 0;
	switch (tp) {
	case 2:
	case 6:
	case 8:
		return 64 * MIB;
	case 4:
		return 32 * MIB;
	default:
		return 0;
	}
}

/* Whether every pair of a group of tp GPUs has its own GPU-to-GPU link:
 * NVLink through an NVSwitch and Infinity Fabric's mesh join the whole
 * node; an NVLink bridge (no NVSwitch) joins its nvlink_bridge_gpus cards
 * only. vLLM's custom all-reduce runs at tp > 2 only when every pair is
 * NVLinked (CustomAllreduce: fully_connected, from NVML's link status). */
static bool all_pairs_linked(const struct hw_profile *hw, int tp)
{
	if (!strcmp(hw_link_names[hw->ic_kind], "infinity-fabric"))
		return true;
	return nvlink_kind(hw) && (hw->nvswitch || tp <= hw->nvlink_bridge_gpus);
}

/* The per-direction bandwidth a group's ring moves at: the GPU link's,
 * but where bridged cards' group reaches past one bridge the ring crosses
 * the host link between bridges and goes at its rate (estimate: no
 * nccl-tests table of a mixed bridge/PCIe ring was found; the ring's
 * slowest hop sets a ring's rate). */
static double group_link(const struct hw_profile *hw, int tp)
{
	double link = hw->ic_bandwidth_gb_s * 1e9;
	if (nvlink_kind(hw) && !hw->nvswitch && tp > hw->nvlink_bridge_gpus)
		return fmin(link, hw->host_bandwidth_gb_s * 1e9);
	return link;
}

/* The bus bandwidth a row moves bytes at: the GPU link's share, or for a
 * scale-out row the node's NICs, capped by the in-node NVLink ring. */
static double row_busbw(const struct perf_collective *c, const struct perf_collective *ring,
			const struct hw_profile *hw, int tp)
{
	double link = group_link(hw, tp);
	if (!c->scale_out)
		return link * row_frac(c, hw);
	double nics = row_frac(c, hw) * hw->network_gbit_s / 8 * 1e9 * (double)hw->gpus_per_node;
	return ring ? fmin(nics, link * row_frac(ring, hw)) : nics;
}

/* The GPUs one GPU-to-GPU link domain joins: the node's, or more (an
 * NVL72 rack's NVLink Switch); a profile built by hand may leave it 0. */
static int64_t link_domain(const struct hw_profile *hw)
{
	return hw->link_domain_gpus > hw->gpus_per_node ? hw->link_domain_gpus : hw->gpus_per_node;
}

/* Infinity Fabric is a full mesh, one link per GPU pair, and a profile
 * gives the domain's figure over all of its peer links: a group of
 * tp inside the node uses tp - 1 links (vLLM PR #39080, MI355X: "peak
 * busbw = (N-1) x 76.8 GB/s"). NVLink through NVSwitch gives every GPU its
 * full link whatever the group. */
static double mesh_share(const struct perf_collective *c, const struct hw_profile *hw, double tp)
{
	double peers = (double)link_domain(hw) - 1;
	if (c->scale_out || peers <= 0 || strcmp(hw_link_names[hw->ic_kind], "infinity-fabric"))
		return 1;
	return fmin(1, (tp - 1) / peers);
}

/* Whether row c may carry a message of bytes over tp GPUs of hw. */
static bool coll_eligible(const struct perf_collective *c, const struct hw_profile *hw, int tp, double bytes,
			  bool has_scale_out)
{
	bool spans = tp > link_domain(hw);
	/* A group spanning nodes takes the scale-out rows (a backend without
	 * one: its ring), one inside a node the others. */
	if (has_scale_out && c->scale_out != spans)
		return false;
	if (c->nvlink_only && (!all_pairs_linked(hw, tp) || spans))
		return false;
	if ((c->max_bytes > 0 && bytes > c->max_bytes) || (c->tp_max > 0 && tp > c->tp_max))
		return false;
	bool custom = custom_row(c);
	if (custom && bytes >= custom_ar_buffer(hw, tp))
		return false;
	/* vLLM's CustomAllreduce disables itself outside world sizes 2, 4, 6
	 * and 8 (custom_all_reduce.py, _SUPPORTED_WORLD_SIZES): tp 3, 5, 7
	 * and past 8 go to NCCL. */
	if (custom && (tp % 2 || tp > 8))
		return false;
	/* vLLM's launcher (custom_all_reduce.cuh, allreduce; the HIP build
	 * shares it) runs one-shot at world size 2 whatever the size: no
	 * two-shot row runs there. */
	if (c->traffic == TRAFFIC_TWO_SHOT && tp <= 2)
		return false;
	/* vLLM's SymmMemCommunicator below its buffer: the multimem kernel at
	 * world sizes 4, 6 and 8 on sm90 (_WORLD_SIZES_MULTIMEM["9.0"]), its
	 * two-shot kernel at the one other size it takes, 2. */
	if (symm_row(c)) {
		/* sm100 takes multimem at 6 and 8 only, two-shot at 2 and 4. */
		int multimem_min = sm100_multicast(hw) ? 6 : 4;
		return bytes < symm_mem_cap(hw, tp) &&
		       (c->traffic == TRAFFIC_MULTIMEM ? tp >= multimem_min : tp < multimem_min);
	}
	return true;
}

/* The seconds row c takes to move its traffic for bytes at its bus
 * bandwidth (ring: the node's in-link ring row, for a scale-out row's cap). */
static double move_s(const struct perf_collective *c, const struct perf_collective *ring,
		     const struct hw_profile *hw, int tp, double bytes)
{
	double t = tp;
	return traffic(c->traffic, t) * bytes / (row_busbw(c, ring, hw, tp) * mesh_share(c, hw, t));
}

double perf_allreduce_frac(const struct perf_collective *c, const struct hw_profile *hw, int tp, double bytes)
{
	double frac = row_frac(c, hw);
	if (tp <= 1)
		return frac;
	double move = move_s(c, NULL, hw, tp, bytes), grid = grid_s(c, hw, tp, bytes);
	return grid > move ? frac * move / grid : frac;
}

const char *perf_allreduce_source(const struct perf_collective *c, const struct hw_profile *hw)
{
	const struct perf_coll_grid *g = perf_coll_grid_for(c, hw);
	return g && g->gen != HW_TC_NONE ? g->source : c->source;
}

double perf_allreduce_s(const struct perf_backend *b, const struct hw_profile *hw, int tp, double bytes,
			const struct perf_collective **alg)
{
	if (alg)
		*alg = NULL;
	if (tp <= 1)
		return 0;
	double t = tp, best = INFINITY;
	const struct perf_collective *ring = NULL;
	bool has_scale_out = false, custom = false, one_shot = false, symm = false;
	for (int i = 0; i < b->n_coll; i++) {
		has_scale_out |= b->coll[i].scale_out;
		if (!ring && b->coll[i].traffic == TRAFFIC_RING && !b->coll[i].scale_out)
			ring = &b->coll[i];
	}
	/* vLLM runs custom all-reduce wherever it may
	 * (CudaCommunicator.all_reduce tries it before symmetric memory and
	 * NCCL): then only its rows run, one-shot where its launcher picks it
	 * (coll_eligible), else two-shot. Where it may not, symmetric memory
	 * wherever that may, else NCCL. */
	for (int i = 0; i < b->n_coll; i++) {
		const struct perf_collective *c = &b->coll[i];
		bool ok = coll_eligible(c, hw, tp, bytes, has_scale_out);
		custom |= custom_row(c) && ok;
		one_shot |= c->traffic == TRAFFIC_ONE_SHOT && ok;
		symm |= symm_row(c) && ok;
	}
	for (int i = 0; i < b->n_coll; i++) {
		const struct perf_collective *c = &b->coll[i];
		if (!coll_eligible(c, hw, tp, bytes, has_scale_out) || (custom && !custom_row(c)) ||
		    (!custom && symm && !symm_row(c)) || (one_shot && c->traffic == TRAFFIC_TWO_SHOT))
			continue;
		double hops = c->ring_hops ? 2 * (t - 1) * hw->ic_latency_us : 0;
		double s = (row_latency_us(c, hw) + hops) * 1e-6 +
			   fmax(move_s(c, ring, hw, tp, bytes), grid_s(c, hw, t, bytes));
		if (s < best) {
			best = s;
			if (alg)
				*alg = c;
		}
	}
	assert(best < INFINITY && "collective table without a catch-all row");
	return best;
}
