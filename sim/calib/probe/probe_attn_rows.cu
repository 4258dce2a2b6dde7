/*
 * probe_attn_rows: the attention and layer families of servesim-probe.
 *   attn_prefill  whole prompts of 128..max_context tokens, then 2048-token
 *                 chunks after a cached prefix, as chunked prefill runs them
 *   attn_prefill_swa  the same through the model's sliding window (--window),
 *                 shapes prompt_wW / chunk_wW
 *   attn_decode   B = 1..128 sequences each reading C = 128..max_context
 *                 tokens of a paged, shuffled KV pool
 *   layer         one synthetic decoder layer (QKV, attention, O, gate/up,
 *                 SiLU x up, down) at a few decode batches and prefill sizes
 * Each row names its kernel (probe_attn.h); frac_bw and frac_peak say what
 * it reached against this run's stream_read and bf16 GEMM.
 */
#include <string.h>

#include "probe_attn.h"

static int check_shape(const struct probe *p, int x)
{
	return p->check ? x / 16 : x;
}

struct prefill_run {
	int T, C, W, n_copies;
	size_t kv_elems;      /* one copy of K (or V) */
	bf16 *q, *k, *v, *o;
	struct probe *p;
};

static void prefill_once(struct probe *p, void *arg, int rep)
{
	struct prefill_run *r = (struct prefill_run *)arg;
	size_t off = (size_t)(rep % r->n_copies) * r->kv_elems;
	int hq = p->heads_r * p->d.head_dim, hk = p->kv_r * p->d.head_dim;
	launch_flash(p, r->q, hq, r->k + off, hk, r->v + off, hk, r->o, hq, r->T, r->C, p->heads_r,
		     p->kv_r, p->d.head_dim, r->W);
}

double attn_pairs(double n, double c, double w)
{
	double all = n * c + n * (n + 1) / 2;
	if (w <= 0 || c + n <= w)
		return all;
	double uncapped = c + 1 > w ? 0 : w - c;   /* queries that see fewer than w keys */
	if (uncapped > n)
		uncapped = n;
	return uncapped * c + uncapped * (uncapped + 1) / 2 + (n - uncapped) * w;
}

/* A chunk of T queries after C cached tokens; W > 0: a sliding window
 * (the shape then ends in _wW). */
static void prefill_row(struct probe *p, const char *base, int T, int C, int W)
{
	char shape[48];
	if (W > 0)
		snprintf(shape, sizeof shape, "%s_w%d", base, W);
	else
		snprintf(shape, sizeof shape, "%s", base);
	int hd = p->d.head_dim;
	size_t hq = (size_t)p->heads_r * hd, hk = (size_t)p->kv_r * hd;
	struct prefill_run r;
	memset(&r, 0, sizeof r);
	r.T = T;
	r.C = C;
	r.W = W;
	r.kv_elems = (size_t)(C + T) * hk;
	r.n_copies = probe_copies_for(p, 2.0 * r.kv_elems * 2, 16);
	size_t need = (2 * (size_t)T * hq + 2 * (size_t)r.n_copies * r.kv_elems) * 2;
	if (probe_over_budget(p) || need > probe_budget_bytes()) {
		probe_skip(p, "attn_prefill %s T=%d C=%d (memory or time)", shape, T, C);
		return;
	}
	r.q = (bf16 *)probe_alloc(p, (size_t)T * hq * 2);
	r.o = (bf16 *)probe_alloc(p, (size_t)T * hq * 2);
	r.k = (bf16 *)probe_alloc(p, r.n_copies * r.kv_elems * 2);
	r.v = (bf16 *)probe_alloc(p, r.n_copies * r.kv_elems * 2);
	if (r.q && r.o && r.k && r.v) {
		probe_fill_bf16(p, r.q, (size_t)T * hq, 41, 1.0f);
		probe_fill_bf16(p, r.k, r.n_copies * r.kv_elems, 42, 1.0f);
		probe_fill_bf16(p, r.v, r.n_copies * r.kv_elems, 43, 1.0f);
		struct meas t = probe_time(p, prefill_once, &r);
		double keys = W > 0 && C + T > W ? (double)(W + T - 1 < C + T ? W + T - 1 : C + T) : C + T;
		double bytes = 2.0 * T * (double)hq * 2 + 2.0 * keys * (double)hk * 2;
		double flops = 4.0 * hd * p->heads_r * attn_pairs(T, C, W);
		probe_emit(p, "attn_prefill", shape, T, C, "bf16", &t, bytes, flops, PREFILL_KERNEL);
	} else {
		probe_skip(p, "attn_prefill %s T=%d C=%d (cudaMalloc failed)", shape, T, C);
	}
	probe_free(p, r.q);
	probe_free(p, r.o);
	probe_free(p, r.k);
	probe_free(p, r.v);
}

struct decode_run {
	struct paged pg;
	bf16 *q, *o;
};

static void decode_once(struct probe *p, void *arg, int rep)
{
	struct decode_run *r = (struct decode_run *)arg;
	int ld = p->heads_r * p->d.head_dim;
	launch_decode(p, &r->pg, rep % r->pg.n_copies, r->q, ld, r->o, ld);
}

static void decode_row(struct probe *p, int B, int C)
{
	int hd = p->d.head_dim;
	double kv_bytes = 2.0 * B * (double)C * p->kv_r * hd * 2;
	int copies = probe_copies_for(p, kv_bytes, 32);
	char shape[32];
	snprintf(shape, sizeof shape, "paged_b%d", B);
	if (probe_over_budget(p) ||
	    paged_bytes(p, B, C, p->kv_r, hd, p->heads_r, copies) + (size_t)4 * B * p->heads_r * hd >
		    probe_budget_bytes()) {
		probe_skip(p, "attn_decode %s C=%d (memory or time)", shape, C);
		return;
	}
	struct decode_run r;
	memset(&r, 0, sizeof r);
	size_t qe = (size_t)B * p->heads_r * hd;
	r.q = (bf16 *)probe_alloc(p, qe * 2);
	r.o = (bf16 *)probe_alloc(p, qe * 2);
	if (r.q && r.o && paged_create(p, &r.pg, B, C, p->heads_r, p->kv_r, hd, copies)) {
		probe_fill_bf16(p, r.q, qe, 51, 1.0f);
		struct meas t = probe_time(p, decode_once, &r);
		double bytes = kv_bytes + 2.0 * qe * 2;
		double flops = 4.0 * hd * p->heads_r * (double)B * C;
		probe_emit(p, "attn_decode", shape, B, C, "bf16", &t, bytes, flops, DECODE_KERNEL);
		paged_destroy(p, &r.pg);
	} else {
		probe_skip(p, "attn_decode %s C=%d (cudaMalloc failed)", shape, C);
	}
	probe_free(p, r.q);
	probe_free(p, r.o);
}

/* Whole prompts (no cache), then 2048-token chunks after a cached prefix,
 * as chunked prefill runs them. */
void fam_attn_prefill(struct probe *p)
{
	int hd = p->d.head_dim;
	if (!prefill_supports(hd)) {
		probe_skip(p, "attn_prefill (the kernel supports head_dim 64, 80, 96, 128 and 256, not %d)", hd);
		return;
	}
	for (int ctx = 128; ctx <= p->max_context; ctx *= 2)
		prefill_row(p, "prompt", ctx, 0, 0);
	int chunk = check_shape(p, 2048);
	for (int ctx = 2 * chunk; ctx <= p->max_context; ctx *= 2)
		prefill_row(p, "chunk", chunk, ctx - chunk, 0);
}

/* The model's sliding-window layers (--window W): prompts and chunks long
 * enough for the window to cut them. */
void fam_attn_prefill_swa(struct probe *p)
{
	int W = p->check ? 128 : p->window;
	if (W <= 0) {
		probe_skip(p, "attn_prefill_swa (no sliding window: pass --window W for such a model)");
		return;
	}
	if (!prefill_supports(p->d.head_dim)) {
		probe_skip(p, "attn_prefill_swa (no prefill kernel for head_dim %d)", p->d.head_dim);
		return;
	}
	for (int ctx = 2 * W; ctx <= p->max_context; ctx *= 2)
		prefill_row(p, "prompt", ctx, 0, W);
	int chunk = check_shape(p, 2048);
	for (int ctx = 2 * W + chunk; ctx <= p->max_context; ctx *= 2)
		prefill_row(p, "chunk", chunk, ctx - chunk, W);
}

/* Enough batch sizes to fit how decode attention's bandwidth rises with
 * the sequences in a step (attention_half_seqs). */
void fam_attn_decode(struct probe *p)
{
	int hd = p->d.head_dim;
	if (!decode_supports(hd)) {
		probe_skip(p, "attn_decode (the kernel supports head_dim 64, 128 and 256, not %d)", hd);
		return;
	}
	static const int batches[] = { 1, 4, 8, 16, 32, 64, 128 };
	int nb = p->check ? 2 : (int)(sizeof batches / sizeof *batches);
	for (int b = 0; b < nb; b++)
		for (int ctx = 128; ctx <= p->max_context; ctx *= 2)
			decode_row(p, batches[b], ctx);
}

/* ---- one synthetic layer ------------------------------------------------------ */

struct layer_run {
	int T, C, decode, n_copies;
	int n_qkv, n_gu;
	size_t layer_elems;                  /* one copy of all four weights */
	bf16 *w;                             /* n_copies x [qkv | o | gate_up | down] */
	bf16 *x, *qkv, *attn, *y, *gu, *act, *z;
	struct paged pg;
};

static void layer_once(struct probe *p, void *arg, int rep)
{
	struct layer_run *r = (struct layer_run *)arg;
	int hd = p->d.head_dim, H = p->d.hidden, hq = p->heads_r * hd, hk = p->kv_r * hd;
	const bf16 *w_qkv = r->w + (size_t)(rep % r->n_copies) * r->layer_elems;
	const bf16 *w_o = w_qkv + (size_t)r->n_qkv * H;
	const bf16 *w_gu = w_o + (size_t)H * hq;
	const bf16 *w_d = w_gu + (size_t)r->n_gu * H;
	probe_gemm_bf16(p, w_qkv, r->x, r->qkv, r->T, r->n_qkv, H);
	if (r->decode)
		launch_decode(p, &r->pg, rep % r->pg.n_copies, r->qkv, r->n_qkv, r->attn, hq);
	else
		launch_flash(p, r->qkv, r->n_qkv, r->qkv + hq, r->n_qkv, r->qkv + hq + hk, r->n_qkv,
			     r->attn, hq, r->T, 0, p->heads_r, p->kv_r, hd, 0);
	probe_gemm_bf16(p, w_o, r->attn, r->y, r->T, H, hq);
	probe_gemm_bf16(p, w_gu, r->y, r->gu, r->T, r->n_gu, H);
	launch_silu_mul(p, r->gu, r->act, r->T, p->inter_r);
	probe_gemm_bf16(p, w_d, r->act, r->z, r->T, H, p->inter_r);
}

static void layer_row(struct probe *p, int decode, int T, int C)
{
	int hd = p->d.head_dim, H = p->d.hidden, hq = p->heads_r * hd, hk = p->kv_r * hd;
	struct layer_run r;
	memset(&r, 0, sizeof r);
	r.T = T;
	r.C = C;
	r.decode = decode;
	r.n_qkv = hq + 2 * hk;
	r.n_gu = 2 * p->inter_r;
	r.layer_elems = (size_t)r.n_qkv * H + (size_t)H * hq + (size_t)r.n_gu * H + (size_t)H * p->inter_r;
	r.n_copies = probe_copies_for(p, (double)r.layer_elems * 2, 8);
	if (r.n_copies < 2)
		r.n_copies = 2;
	size_t act = (size_t)T * ((size_t)H * 3 + r.n_qkv + hq + r.n_gu + p->inter_r);
	int kv_copies = decode ? probe_copies_for(p, 2.0 * T * (double)C * hk * 2, 8) : 0;
	size_t need = (r.n_copies * r.layer_elems + act) * 2 +
		      (decode ? paged_bytes(p, T, C, p->kv_r, hd, p->heads_r, kv_copies) : 0);
	const char *shape = decode ? "decode" : "prefill";
	if (probe_over_budget(p) || need > probe_budget_bytes()) {
		probe_skip(p, "layer %s tokens=%d C=%d (memory or time)", shape, T, C);
		return;
	}
	r.w = (bf16 *)probe_alloc(p, r.n_copies * r.layer_elems * 2);
	r.x = (bf16 *)probe_alloc(p, (size_t)T * H * 2);
	r.qkv = (bf16 *)probe_alloc(p, (size_t)T * r.n_qkv * 2);
	r.attn = (bf16 *)probe_alloc(p, (size_t)T * hq * 2);
	r.y = (bf16 *)probe_alloc(p, (size_t)T * H * 2);
	r.gu = (bf16 *)probe_alloc(p, (size_t)T * r.n_gu * 2);
	r.act = (bf16 *)probe_alloc(p, (size_t)T * p->inter_r * 2);
	r.z = (bf16 *)probe_alloc(p, (size_t)T * H * 2);
	int ok = r.w && r.x && r.qkv && r.attn && r.y && r.gu && r.act && r.z;
	if (ok && decode)
		ok = paged_create(p, &r.pg, T, C, p->heads_r, p->kv_r, hd, kv_copies);
	if (ok) {
		probe_fill_bf16(p, r.w, r.n_copies * r.layer_elems, 61, 0.05f);
		probe_fill_bf16(p, r.x, (size_t)T * H, 62, 1.0f);
		struct meas t = probe_time(p, layer_once, &r);
		double weights = (double)r.layer_elems * 2;
		double gemm_flops = 2.0 * T * (double)r.layer_elems;
		double kv = decode ? 2.0 * T * (double)C * hk * 2 : 2.0 * T * (double)hk * 2;
		double attn_flops = 4.0 * hd * p->heads_r * (decode ? (double)T * C : attn_pairs(T, 0, 0));
		probe_emit(p, "layer", shape, T, C, "bf16", &t, weights + kv + (double)act * 2,
			   gemm_flops + attn_flops, "cublas+" PREFILL_KERNEL "/" DECODE_KERNEL);
	} else {
		probe_skip(p, "layer %s tokens=%d C=%d (cudaMalloc failed)", shape, T, C);
	}
	if (decode)
		paged_destroy(p, &r.pg);
	probe_free(p, r.w);
	probe_free(p, r.x);
	probe_free(p, r.qkv);
	probe_free(p, r.attn);
	probe_free(p, r.y);
	probe_free(p, r.gu);
	probe_free(p, r.act);
	probe_free(p, r.z);
}

void fam_layer(struct probe *p)
{
	int hd = p->d.head_dim;
	if (!prefill_supports(hd) || !decode_supports(hd)) {
		probe_skip(p, "layer (no prefill and decode kernels for head_dim %d)", hd);
		return;
	}
	static const int decode_batches[] = { 1, 16, 64, 256 };
	static const int prefill_tokens[] = { 512, 2048, 8192 };
	int ctx = check_shape(p, 1024);
	for (size_t i = 0; i < sizeof decode_batches / sizeof *decode_batches; i++)
		layer_row(p, 1, check_shape(p, decode_batches[i]) ? check_shape(p, decode_batches[i]) : 1, ctx);
	for (size_t i = 0; i < sizeof prefill_tokens / sizeof *prefill_tokens; i++)
		if (check_shape(p, prefill_tokens[i]) <= p->max_tokens)
			layer_row(p, 0, check_shape(p, prefill_tokens[i]), 0);
}
