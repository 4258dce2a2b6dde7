#include "steptime.h"

#include <assert.h>
#include <math.h>
#include <string.h>

#include "num.h"
#include "overhead.h"
#include "stepcache.h"

/* The scalar model: every kernel field from p->eff (no backend). */
static void scalar_fields(const struct perf *p, struct perf *q)
{
	*q = *p;
	const struct hw_efficiency *e = &p->eff;
	q->k_gemm = q->k_gemm_low = q->k_moe = q->k_prefill = q->k_decode = NULL;
	q->gemm_cmax = e->compute_max;
	q->gemm_half = e->compute_half_tokens;
	q->gemm_tile = 0;
	q->gemm_vec_m = 0;
	q->gemm_bw = p->bw * e->bandwidth;
	q->gemm_vec_bw = q->gemm_bw;
	q->gemm_serial = false;
	q->gemv_curve = false;
	q->gemm_lp = e->low_precision_compute;
	q->moe_cmax = e->moe_efficiency * e->compute_max;
	q->moe_bw = e->moe_efficiency * q->gemm_bw;
	q->moe_curve = NULL;
	q->moe_bw_curve = NULL;
	q->moe_width_curve = NULL;
	q->moe_fixed_s = 0;
	q->moe_tile = 0;
	q->moe_own_peak = false;
	q->prefill_clock = 0;
	q->decode_bw = p->bw * e->attention_bandwidth;
	q->decode_half = e->attention_half_seqs;
	q->decode_fixed_s = 0;
	q->decode_unit_s = 0;
	q->sm_count = 0;
	q->gemm_fixed_s = q->attn_fixed_s = q->lm_fixed_s = 0;
}


/* Σ_{i=0}^{n-1} min(c + i + 1, w): the keys the chunk's queries see. */
double perf_causal_pairs(double n, double c, double w)
{
	double all = n * c + n * (n + 1) / 2;
	if (w <= 0 || c + n <= w)
		return all;
	/* Queries at positions p = c+i+1 above w see exactly w keys. */
	double uncapped = c + 1 > w ? 0 : w - c;   /* queries with c+i+1 <= w */
	if (uncapped > n)
		uncapped = n;
	return uncapped * c + uncapped * (uncapped + 1) / 2 + (n - uncapped) * w;
}

void perf_step_add_prefill(struct perf_step *s, const struct perf *p, double n, double c)
{
	s->pre_pairs_full += perf_causal_pairs(n, c, 0);
	s->pre_pairs_win += perf_causal_pairs(n, c, p->window);
	s->pre_ctx_full += c + n;
	s->pre_ctx_win += p->window > 0 ? fmin(c + n, p->window) : c + n;
}

/* What low-precision matmuls (a share of a group's time at peak) cost the
 * group's throughput when they reach lp of the 16-bit efficiency. */
static double low_factor(double share, double lp)
{
	assert(lp > 0);
	return 1 / (1 - share + share / lp);
}

/* One transfer of bytes between GPUs over the profile's interconnect. */
static double link_s(const struct perf *p, double bytes)
{
	return bytes / (p->hw->ic_bandwidth_gb_s * 1e9) + p->hw->ic_latency_us * 1e-6;
}

/* The share of a tile's rows that hold tokens: m rows padded to whole
 * tiles of tm. */
static double pad_eff(double m, double tm)
{
	return tm > 0 ? m / (ceil(m / tm) * tm) : 1;
}

/* The share of a GEMM's tile work that is useful: its rows padded to
 * whole tiles of tile_m and, for a kernel that is not persistent (sms >
 * 0), the share of its waves that has work, tiles / (ceil(tiles / SMs) ·
 * SMs), for 128-column tiles of 64 or 128 rows, whichever is better
 * (cuBLAS's heuristic picks among such CUTLASS threadblock shapes; a
 * kernel whose own row tile is finer, MMQ's, pads to that instead). More
 * SMs at the same rate each never lengthen a GEMM: ceil(tiles / SMs)
 * waves only fall. */
static double tile_eff(double m, double tile_m, double tiles_n, double sms)
{
	if (sms <= 0 || tiles_n <= 0)
		return pad_eff(m, tile_m);
	double best = 0;
	for (double tm = 64; tm <= 128; tm *= 2) {
		double tiles = ceil(m / tm) * tiles_n;
		double waves = tiles / (ceil(tiles / sms) * sms);
		best = fmax(best, waves * pad_eff(m, tile_m >= 64 ? tm : tile_m));
	}
	return best;
}

/* Achieved fraction of peak for a matmul of m rows (tokens): the
 * kernel's large-M fraction times its tile padding and waves, or the
 * scalar model's half curve M / (M + half) where the row has no tile;
 * up to gemm_vec_m rows, the backend's mat-vec kernel's own fraction. */
static double matmul_eff(const struct perf *q, double m, double tiles_n)
{
	if (q->gemm_vec_m > 0 && m <= q->gemm_vec_m)
		return q->gemm_vec_cmax;   /* the backend's mat-vec kernel (MMVQ) */
	if (q->gemm_tile > 0)
		return q->gemm_cmax * tile_eff(m, q->gemm_tile, tiles_n, q->sm_count);
	double e = q->gemm_cmax * m / (m + q->gemm_half);
	if (q->sm_count > 0 && tiles_n > 0)
		e *= tile_eff(m, 0, tiles_n, q->sm_count);
	return e;
}

/* The bytes/s a matmul of m rows reads its weights at: the mat-vec
 * kernel's up to gemm_vec_m rows, the tiled kernel's above. */
static double matmul_bw(const struct perf *q, double m)
{
	return q->gemm_vec_m > 0 && m <= q->gemm_vec_m ? q->gemm_vec_bw : q->gemm_bw;
}

/* Triton fused_moe's BLOCK_SIZE_M by batch tokens, as vLLM's tuned
 * configs pick it (E=8,N=3584 A100 config, vLLM PR #3389: 32 up to 96
 * tokens, 64 to 512, 128 above; 16 below 32 in the default config). */
static double moe_block_m(double tokens)
{
	return tokens <= 32 ? 16 : tokens <= 96 ? 32 : tokens <= 512 ? 64 : 128;
}

/* The roofline of one operator: max(FLOPs / achievable FLOP/s, bytes /
 * achievable bandwidth), plus its kernels' fixed cost. */
static void roofline(struct perf_op *op, const char *name, double flops, double peak,
		     double ceff, double bytes, double bw, double fixed_s)
{
	double tc = flops > 0 ? flops / (peak * ceff) : 0;
	double tm = bytes > 0 ? bytes / bw : 0;
	*op = (struct perf_op){ .name = name, .flops = flops, .bytes = bytes,
				.time_s = (tc > tm ? tc : tm) + fixed_s, .peak_flops = peak,
				.peak_bytes_s = bw, .compute_bound = tc > tm };
	op->eff = tc > tm ? ceff : 0;
}

/* A kernel that loads its operand tiles and then runs its MMAs on them
 * (llama.cpp's MMQ: each weight tile read and unpacked to int8 in shared
 * memory before the tile's mma.sync): the two times add. The row stays
 * compute-bound where the MMAs take longer than the reads. */
static void serial_load(struct perf_op *op, double ceff, double fixed_s)
{
	double tc = op->flops > 0 ? op->flops / (op->peak_flops * ceff) : 0;
	double tm = op->bytes > 0 ? op->bytes / op->peak_bytes_s : 0;
	op->time_s = tc + tm + fixed_s;
	op->compute_bound = tc > tm;
	op->eff = tc > tm ? ceff : 0;
}

static void cite(struct perf_op *op, const struct perf_kernel *k, const struct perf *p, double bw)
{
	if (!op->compute_bound && op->peak_bytes_s > 0)
		op->eff = bw / p->bw;
	op->peak_bytes_s = p->bw;
	if (!k) {
		/* The scalar model: a backend's fallback row when the device has
		 * no [arch] facts, or a perf without a backend (probe fits). */
		op->kernel = p->backend ? "roofline, no kernel data" : "profile [efficiency] scalars";
		op->source = p->hw->calibrated ? p->hw->source_efficiency
					       : "device-class defaults (hw_default_efficiency)";
		return;
	}
	op->kernel = k->kernel;
	op->source = k->source;
}

/* A dense GEMM row (low: its share of low-precision matmuls): the kernel
 * that runs most of it (the FP8/FP4 row when most of the group's matmuls
 * are low precision, as with --weights fp8); where the profile's measured
 * GEMM set its compute efficiency (perf_use_engine), that is its source,
 * not the kernel row's fraction. */
static void cite_gemm(struct perf_op *op, const struct perf *p, double low, double bw)
{
	const struct perf_kernel *kl = p->k_gemm_low;
	cite(op, low > 0.5 && kl && !kl->fallback ? kl : p->k_gemm, p, bw);
	if (low > 0 && op->peak_flops > 0) {
		/* The roofline ran at the 16-bit fraction of a peak lowered by
		 * the low rows' ratio; shown, the same time is the fraction of
		 * the device's own peak for those precisions (an FP8 GEMM's
		 * share of the FP8 datasheet, as its kernel row states it). */
		double f = low_factor(low, p->gemm_lp);
		op->peak_flops /= f;
		if (op->compute_bound)
			op->eff *= f;
	}
	if (p->k_gemm && p->gemv_curve && !op->compute_bound) {
		op->source = "the profile's measured mat-vec curve: [arch] gemv_floor_us a kernel + bytes at "
			     "gemv_bandwidth_gb_s (its [arch] comment names the table)";
		return;
	}
	if (!p->k_gemm || !p->gemm_measured || !op->compute_bound)
		return;
	op->source = low <= 0 ? "0.95 x the profile's measured best-shape BF16 GEMM ([arch] matmul_bf16_tflops)"
		     : p->gemm_lp_measured ? "0.95 x the profile's measured best-shape BF16 and FP8/FP4 GEMMs ([arch] matmul_bf16_tflops, matmul_fp8_tflops / matmul_fp4_tflops)"
					   : "the kernel row's low-precision ratio on 0.95 x the profile's measured BF16 GEMM ([arch] matmul_bf16_tflops)";
}

static const char *const op_names[PERF_N_OPS] = {
	"dense matmuls", "MoE experts", "LM head", "prefill attention",
	"decode attention", "norms, rotary, act", "all-reduce", "weight offload", "step overhead",
	"pipeline bubble"
};

/* The rows a microbatch of T tokens sets by T alone: the dense matmuls,
 * the routed experts, the small kernels, the all-reduces, the offloaded
 * weights. stepcache memoises them by (tokens, m), so nothing here may
 * read the step but T (hence no struct perf_step; test_stepcache checks
 * the cached and computed steps agree). */
static void ops_tokens(const struct perf *p0, const struct perf *q, bool kernels, double T,
		       struct perf_op *ops)
{
	const char *const *names = op_names;
	const struct perf *p = q;
	double L = (double)p->n_layers;
	double lp = q->gemm_lp;
	double dense_bw = q->gemv_curve ? hw_gemv_bandwidth(p->hw, p->dense_bytes, p->dense_kernels)
					: matmul_bw(q, T);
	double dense_eff = matmul_eff(q, T, q->tiles_n_dense);
	roofline(&ops[PERF_DENSE], names[PERF_DENSE], p->dense_flops_per_token * T,
		 p->peak_dense * low_factor(p->dense_low, lp), dense_eff,
		 p->dense_bytes, dense_bw, L * q->gemm_fixed_s);
	if (q->gemm_serial && !(q->gemm_vec_m > 0 && T <= q->gemm_vec_m))
		serial_load(&ops[PERF_DENSE], dense_eff, L * q->gemm_fixed_s);
	cite_gemm(&ops[PERF_DENSE], q, p->dense_low, dense_bw);
	if (p->n_moe_layers > 0) {
		double k = p->experts_per_token;
		double touched = perf_moe_touched(p, T, NULL), routed = T * k;
		if (p->ep > 1)
			touched = perf_moe_first_gpu(p, T, &routed);   /* the busiest GPU's */
		double tpe = routed / touched, bm = q->moe_tile > 0 ? q->moe_tile : moe_block_m(T);
		/* Each expert's rows pad to whole tiles (Triton's BLOCK_SIZE_M,
		 * or the row's own tile_m): the grouped GEMM's curve in tokens
		 * per expert (the scalar model: the dense matmul's curve at
		 * tpe). A row with 1-row tiles pads nothing: its curve was read
		 * off whole calls, their padding inside it (tpe is an expected,
		 * fractional count, so whole tokens would be an artefact). */
		double curve = !kernels ? tpe / (tpe + q->gemm_half) : bm <= 1 ? 1 : tpe / (ceil(tpe / bm) * bm);
		if (q->moe_curve)
			curve *= perf_curve_at(q->moe_curve, tpe);   /* the grouped GEMM's rate by tokens an expert */
		if (q->moe_width_curve)   /* … and by how wide an expert is on this GPU */
			curve *= perf_curve_at(q->moe_width_curve, p->expert_n);
		assert(q->moe_cmax > 0);
		roofline(&ops[PERF_EXPERTS], names[PERF_EXPERTS],
			 p->n_moe_layers * p->expert_flops_per_token * routed,
			 q->moe_own_peak ? p->peak_expert : p->peak_expert * low_factor(p->expert_low, lp),
			 q->moe_cmax * curve,
			 p->n_moe_layers * touched * p->expert_bytes, q->moe_bw, p->n_moe_layers * q->moe_fixed_s);
		cite(&ops[PERF_EXPERTS], q->k_moe, p, q->moe_bw);
		/* The shared experts' second stream hides the routed call's
		 * fixed part under their reads (moeshared.c). */
		if (kernels)
			ops[PERF_EXPERTS].time_s -= perf_moe_shared_hidden_s(p, q, T, ops[PERF_DENSE].time_s);
	}
	if (kernels && p->ew) {
		/* The small kernels between the matmuls and attention: a floor
		 * each plus their bytes (elementwise.h). */
		struct perf_op *op = &ops[PERF_ELEMENTWISE];
		double bw = p->ew->bw_frac * p->ew_stream;
		op->time_s = elementwise_step_s(p->ew, &p->ew_shape, T, p->ew_stream, p->ew_l2,
						&op->bytes);
		op->peak_bytes_s = p->bw;
		op->eff = bw / p->bw;
		op->kernel = p->ew->kernel;
		op->source = p->ew->source;
	}
	if (p->tp > 1) {
		double bytes = T * p->hidden_bytes_per_token;
		const struct perf_collective *alg = NULL;
		double one;
		if (kernels) {
			one = perf_allreduce_s(p0->backend, p->hw, p->tp, bytes, &alg);
		} else {
			/* Ring all-reduce: 2(t-1) hops, each moving 1/t of the data. */
			double t = p->tp;
			one = 2 * (t - 1) * link_s(p, bytes / t);
		}
		ops[PERF_ALLREDUCE].bytes = 2 * L * bytes;
		ops[PERF_ALLREDUCE].time_s = 2 * L * one;
		ops[PERF_ALLREDUCE].peak_bytes_s = p->hw->ic_bandwidth_gb_s * 1e9;
		ops[PERF_ALLREDUCE].kernel = alg ? alg->name : "ring all-reduce (scalar model)";
		ops[PERF_ALLREDUCE].eff = alg ? perf_allreduce_frac(alg, p->hw, p->tp, bytes) : 1;
		ops[PERF_ALLREDUCE].source =
			alg ? perf_allreduce_source(alg, p->hw) : "profile interconnect latency_us and bandwidth";
	}
	if (p->offload_bytes > 0) {
		/* The offloaded weights cross the host link each forward pass; the
		 * rest of the roofline above already counts them as device reads,
		 * which is the smaller cost. */
		double link = p->hw->host_bandwidth_gb_s * 1e9;
		ops[PERF_OFFLOAD].bytes = p->offload_bytes;
		ops[PERF_OFFLOAD].time_s = p->offload_bytes / link;
		ops[PERF_OFFLOAD].peak_bytes_s = link;
	}
}

/* The LM head: set by the sequences that sample alone (memoised by them). */
static void ops_lm_head(const struct perf *q, double sampled, struct perf_op *ops)
{
	const char *const *names = op_names;
	const struct perf *p = q;
	double lp = q->gemm_lp;
	if (sampled > 0) {
		double bw = q->gemv_curve ? hw_gemv_bandwidth(p->hw, p->lm_head_bytes, 1) : matmul_bw(q, sampled);
		roofline(&ops[PERF_LM_HEAD], names[PERF_LM_HEAD], p->lm_head_flops_per_token * sampled,
			 p->peak_lm_head * low_factor(p->lm_head_low, lp), matmul_eff(q, sampled, 0),
			 p->lm_head_bytes, bw, q->lm_fixed_s);
		cite_gemm(&ops[PERF_LM_HEAD], q, p->lm_head_low, bw);
	}
}

/* Attention: what the step's contexts set, 1/m of them (never memoised). */
static void ops_attention(const struct perf *q, const struct perf_step *s, double m,
			  struct perf_op *ops)
{
	const char *const *names = op_names;
	const struct perf *p = q;
	double L = (double)p->n_layers;
	double pairs = (p->full_layers * s->pre_pairs_full + p->sliding_layers * s->pre_pairs_win) / m;
	double pre_kv = (p->full_layers * s->pre_ctx_full + p->sliding_layers * s->pre_ctx_win) / m;
	if (pairs > 0) {
		double ac = p->eff.attention_compute;
		if (q->prefill_clock > 0) {
			/* The kernel's curve at the step's mean keys per query. */
			double queries = (double)(s->tokens - s->dec_seqs);
			double kpq = queries > 0 ? s->pre_pairs_full / queries : 1;
			ac = perf_curve_at(q->k_prefill->curve, kpq) * q->prefill_clock;
		}
		roofline(&ops[PERF_ATTN_PREFILL], names[PERF_ATTN_PREFILL], pairs * p->attn_flops_per_pair,
			 p->peak_attn, ac, pre_kv * p->kv_bytes_per_token_layer, q->gemm_bw, L * q->attn_fixed_s);
		cite(&ops[PERF_ATTN_PREFILL], q->k_prefill, p, q->gemm_bw);
	}
	double dec_kv = (p->full_layers * s->dec_ctx_full + p->sliding_layers * s->dec_ctx_win) / m;
	if (s->dec_seqs > 0) {
		/* A kernel row with a fixed cost: each layer's call takes
		 * decode_fixed_s plus its KV bytes at decode_bw, so the
		 * bandwidth reached rises with the bytes a call reads (split-KV
		 * keeps the SMs busy for a lone long context, C6).
		 * The scalar model instead: one thread block per (sequence, KV
		 * head), the bandwidth rising as S / (S + half), never under
		 * half of it (flash-decoding splits a small batch's contexts). */
		double h = q->decode_half;
		double S = fmax((double)s->dec_seqs / m, h);
		double bw = q->decode_bw * (S > 0 ? S / (S + h) : 1);
		/* Each (sequence, KV head) work unit has a latency floor
		 * (loading its query, its first pages, writing its output)
		 * that the SMs work through in parallel. With prefill in the
		 * step the attention kernels are launched once for both;
		 * otherwise decode pays them. */
		double units = (double)s->dec_seqs / m * p->kv_heads_rank;
		double unit = q->decode_sms > 0 ? q->decode_unit_s * units / q->decode_sms : 0;
		double fixed = L * (q->decode_fixed_s + unit) + (pairs > 0 ? 0 : L * q->attn_fixed_s);
		roofline(&ops[PERF_ATTN_DECODE], names[PERF_ATTN_DECODE],
			 dec_kv * p->attn_flops_per_pair, p->peak_attn, p->eff.attention_compute,
			 dec_kv * p->kv_bytes_per_token_layer, bw, fixed);
		cite(&ops[PERF_ATTN_DECODE], q->k_decode, p, bw);
	}
}

/* The rows of ops_tokens for T = tokens / m, from c when it holds them
 * (their times only: what perf_step_time reads), else computed (and
 * stored in c when there is one). */
static void tokens_part(const struct perf *p0, const struct perf *q, bool kernels, const struct perf_step *s,
			double m, struct perf_op *ops, struct stepcache *c)
{
	double T = (double)s->tokens / m;
	bool found = false;
	double *v = c ? stepcache_slot(c, STEPCACHE_TOKENS, s->tokens, (int)m, &found) : NULL;
	if (v && found) {
		for (int i = 0; i < PERF_N_OPS; i++)
			ops[i].time_s = v[i];
		ops[PERF_DENSE].compute_bound = v[PERF_N_OPS] != 0;
		return;
	}
	ops_tokens(p0, q, kernels, T, ops);   /* the first part: every other row is still 0 */
	if (!v)
		return;
	for (int i = 0; i < PERF_N_OPS; i++)
		v[i] = ops[i].time_s;
	v[PERF_N_OPS] = ops[PERF_DENSE].compute_bound;
}

static void lm_head_part(const struct perf *q, const struct perf_step *s, double m, struct perf_op *ops,
			 struct stepcache *c)
{
	double sampled = (double)s->sampled / m;
	bool found = false;
	double *v = c ? stepcache_slot(c, STEPCACHE_SAMPLED, s->sampled, (int)m, &found) : NULL;
	if (v && found) {
		ops[PERF_LM_HEAD].time_s = v[0];
		return;
	}
	ops_lm_head(q, sampled, ops);
	if (v)
		v[0] = ops[PERF_LM_HEAD].time_s;
}

/* The operator rows of one microbatch, 1/m of the step's batch (m = 1:
 * the whole step), through every layer. c: the perf's step cache, when
 * only the rows' times are wanted (NULL: every field of every row). */
static double ops_one(const struct perf *p0, const struct perf_step *s, double m, struct perf_op *ops,
		      struct stepcache *c)
{
	for (int i = 0; i < PERF_N_OPS; i++)
		ops[i] = (struct perf_op){ .name = op_names[i] };
	if (s->tokens <= 0)
		return 0;
	struct perf qs;
	const struct perf *q = p0;
	bool kernels = p0->backend && p0->hw->arch.present;   /* else the scalar model */
	if (!kernels) {
		scalar_fields(p0, &qs);
		q = &qs;
	}
	const struct perf *p = q;
	double T = (double)s->tokens / m;
	tokens_part(p0, q, kernels, s, m, ops, c);
	lm_head_part(q, s, m, ops, c);
	ops_attention(q, s, m, ops);
	double total = 0;
	for (int i = 0; i < PERF_N_OPS; i++)
		total += ops[i].time_s;
	const struct perf_op *dense = &ops[PERF_DENSE];
	ops[PERF_OVERHEAD].time_s =
		p->overhead ? overhead_step_s(p->overhead, T, (double)s->seqs / m, total,
					      dense->compute_bound ? dense->time_s / T : 0, NULL) :
		(p->eff.step_overhead_us + p->eff.step_overhead_per_seq_us * (double)s->seqs / m) * 1e-6;
	return total + ops[PERF_OVERHEAD].time_s;
}

/* perf_step_ops, through c when not NULL (the rows' times only). */
static double step_ops(const struct perf *p, const struct perf_step *s, struct perf_op *ops,
		       struct stepcache *c)
{
	if (p->pp <= 1 || s->tokens <= 0)
		return ops_one(p, s, 1, ops, c);
	/* vLLM keeps up to pp microbatches in flight: the running sequences,
	 * split m ways. Each of the pp stages holds stage_layers layers and
	 * its own share of offloaded weights; the first pp-1 stages send the
	 * microbatch's hidden states on, the last runs the LM head and the
	 * step's CPU work (scheduling, sampling). */
	double P = p->pp, m = fmin(P, (double)s->seqs);
	ops_one(p, s, m, ops, c);
	double frac = p->stage_layers / (double)p->n_layers;
	double work = ops[PERF_OFFLOAD].time_s;
	for (int i = 0; i < PERF_N_OPS; i++)
		if (perf_op_per_layer(i))
			work += frac * ops[i].time_s;
	double hop_bytes = (double)s->tokens / m * p->hidden_bytes_per_token;
	double hop = link_s(p, hop_bytes);
	double last = work + ops[PERF_LM_HEAD].time_s + ops[PERF_OVERHEAD].time_s;
	double trip = (P - 1) * (work + hop) + last;          /* one microbatch, first to last stage */
	double queued = m * fmax(work + hop, last);           /* m microbatches through the slowest */
	double step = fmax(trip, queued);
	/* Rows: one microbatch's trip, stage by stage; the rest is the pipeline's. */
	double rows = 0;
	for (int i = 0; i < PERF_N_OPS; i++) {
		if (perf_op_per_layer(i))
			ops[i].time_s *= frac * P;
		else if (i == PERF_OFFLOAD)
			ops[i].time_s *= P;
		rows += ops[i].time_s;
	}
	ops[PERF_PIPELINE].time_s = step - rows;
	ops[PERF_PIPELINE].bytes = (P - 1) * hop_bytes;
	return step;
}

void perf_ops_breakdown(const struct perf_op *ops, double total, struct perf_breakdown *b)
{
	*b = (struct perf_breakdown){
		.dense = ops[PERF_DENSE].time_s,
		.experts = ops[PERF_EXPERTS].time_s,
		.lm_head = ops[PERF_LM_HEAD].time_s,
		.attn_prefill = ops[PERF_ATTN_PREFILL].time_s,
		.attn_decode = ops[PERF_ATTN_DECODE].time_s,
		.elementwise = ops[PERF_ELEMENTWISE].time_s,
		.allreduce = ops[PERF_ALLREDUCE].time_s,
		.offload = ops[PERF_OFFLOAD].time_s,
		.overhead = ops[PERF_OVERHEAD].time_s,
		.pipeline = ops[PERF_PIPELINE].time_s,
		.total = total,
	};
}

double perf_step_ops(const struct perf *p, const struct perf_step *s, struct perf_op *ops)
{
	return step_ops(p, s, ops, NULL);
}

/* perf_step_time when the whole-step memo has no answer: out of line, so
 * a hit (most steps of a low-rate point) sets up no frame for the rows. */
__attribute__((noinline)) static double step_time_computed(const struct perf *p, const struct perf_step *s,
							   struct perf_breakdown *b, struct stepcache *c,
							   struct stepcache_answer *memo)
{
	struct perf_op ops[PERF_N_OPS];
	struct stepcache_answer a;
	a.total = step_ops(p, s, ops, c);
	if (b || memo) {
		perf_ops_breakdown(ops, a.total, &a.b);
		if (b)
			*b = a.b;
		if (memo)
			*memo = a;   /* step_ops made no other call on c's whole steps */
	}
	return a.total;
}

double perf_step_time(const struct perf *p, const struct perf_step *s, struct perf_breakdown *b)
{
	struct stepcache *c = stepcache_for(p->cache, p) ? p->cache : NULL;
	bool found = false;
	struct stepcache_answer *memo = c ? stepcache_step(c, s, &found) : NULL;
	if (found) {
		if (b)
			*b = memo->b;
		return memo->total;
	}
	return step_time_computed(p, s, b, c, memo);
}
