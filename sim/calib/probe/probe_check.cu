/*
 * probe_check: `servesim-probe --check`, the probe's self-test on a new
 * GPU. First each kernel against a naive reference on small shapes: the
 * prefill kernel for every head dim it supports and with a sliding window, the decode kernel for
 * head dims 64, 128, 256 and 1, 4, 8 and 12 query heads per KV head
 * (12 takes the chunked path), cuBLAS bf16, cuBLASLt fp8 with fast
 * accumulation, the W4A16 GEMV. Then probe_main runs every family on tiny
 * shapes, so every path (fp8, graphs, copies, layers) has run once before
 * a long measurement relies on it.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "probe_attn.h"


/* One thread per (query, head): two passes over the visible keys. */
__global__ void k_ref_attention(const bf16 *q, int q_ld, const bf16 *k, int k_ld, const bf16 *v,
				int v_ld, float *o, int T, int C, int heads, int kv_heads, int hd, int window)
{
	int t = blockIdx.x * blockDim.x + threadIdx.x, h = blockIdx.y;
	if (t >= T)
		return;
	int g = h / (heads / kv_heads), last = C + t;
	int first = window > 0 && last - window + 1 > 0 ? last - window + 1 : 0;
	float scale = rsqrtf((float)hd), mx = -INFINITY, sum = 0.0f;
	for (int j = first; j <= last; j++) {
		float s = 0.0f;
		for (int d = 0; d < hd; d++)
			s += __bfloat162float(q[(size_t)t * q_ld + h * hd + d]) *
			     __bfloat162float(k[(size_t)j * k_ld + g * hd + d]);
		mx = fmaxf(mx, s * scale);
	}
	for (int d = 0; d < hd; d++)
		o[((size_t)t * heads + h) * hd + d] = 0.0f;
	for (int j = first; j <= last; j++) {
		float s = 0.0f;
		for (int d = 0; d < hd; d++)
			s += __bfloat162float(q[(size_t)t * q_ld + h * hd + d]) *
			     __bfloat162float(k[(size_t)j * k_ld + g * hd + d]);
		float w = __expf(s * scale - mx);
		sum += w;
		for (int d = 0; d < hd; d++)
			o[((size_t)t * heads + h) * hd + d] += w * __bfloat162float(v[(size_t)j * v_ld + g * hd + d]);
	}
	for (int d = 0; d < hd; d++)
		o[((size_t)t * heads + h) * hd + d] /= sum;
}

/* Gathers sequence b's KV through its block table into contiguous rows. */
__global__ void k_gather_kv(const bf16 *cache, const int *bt, int max_blocks, int ctx, int kv_heads,
			    int hd, bf16 *out)
{
	size_t n = (size_t)ctx * kv_heads * hd;
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x) {
		size_t t = i / ((size_t)kv_heads * hd), rest = i % ((size_t)kv_heads * hd);
		out[i] = cache[((size_t)bt[t / PD_BLOCK] * PD_BLOCK + t % PD_BLOCK) * kv_heads * hd + rest];
	}
}

__global__ void k_ref_gemm(const bf16 *w, const bf16 *x, float *y, int m, int n, int k)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= m * n)
		return;
	int r = i / n, c = i % n;
	float s = 0.0f;
	for (int j = 0; j < k; j++)
		s += __bfloat162float(x[(size_t)r * k + j]) * __bfloat162float(w[(size_t)c * k + j]);
	y[i] = s;
}

double probe_max_abs_diff(const bf16 *dev_a, const float *dev_ref, size_t n)
{
	bf16 *a = (bf16 *)malloc(n * sizeof *a);
	float *b = (float *)malloc(n * sizeof *b);
	if (!a || !b)
		probe_throw(__FILE__, __LINE__, "malloc", "out of memory");
	CK(cudaMemcpy(a, dev_a, n * sizeof *a, cudaMemcpyDeviceToHost));
	CK(cudaMemcpy(b, dev_ref, n * sizeof *b, cudaMemcpyDeviceToHost));
	double worst = 0;
	for (size_t i = 0; i < n; i++) {
		double d = fabs((double)__bfloat162float(a[i]) - (double)b[i]);
		if (!(d <= worst))   /* NaN counts as worst */
			worst = isnan(d) ? INFINITY : d;
	}
	free(a);
	free(b);
	return worst;
}

int probe_check_one(const char *what, double err, double tol)
{
	int ok = err <= tol;
	printf("check: %-44s max|error| %.4g (tolerance %.3g) %s\n", what, err, tol, ok ? "ok" : "FAILED");
	return ok;
}

/* window > 0: a sliding window shorter than the context. */
static int check_prefill(struct probe *p, int hd, int window)
{
	int heads = 8, kvh = 2, T = 100, C = 37;
	size_t qe = (size_t)T * heads * hd, ke = (size_t)(C + T) * kvh * hd;
	bf16 *q = (bf16 *)probe_alloc(p, qe * 2), *k = (bf16 *)probe_alloc(p, ke * 2);
	bf16 *v = (bf16 *)probe_alloc(p, ke * 2), *o = (bf16 *)probe_alloc(p, qe * 2);
	float *ref = (float *)probe_alloc(p, qe * 4);
	if (!q || !k || !v || !o || !ref)
		probe_throw(__FILE__, __LINE__, "cudaMalloc", "cannot allocate the check buffers");
	probe_fill_bf16(p, q, qe, 1, 1.0f);
	probe_fill_bf16(p, k, ke, 2, 1.0f);
	probe_fill_bf16(p, v, ke, 3, 1.0f);
	launch_flash(p, q, heads * hd, k, kvh * hd, v, kvh * hd, o, heads * hd, T, C, heads, kvh, hd, window);
	k_ref_attention<<<dim3((T + 63) / 64, heads), 64, 0, p->stream>>>(
		q, heads * hd, k, kvh * hd, v, kvh * hd, ref, T, C, heads, kvh, hd, window);
	CK(cudaGetLastError());
	CK(cudaStreamSynchronize(p->stream));
	char what[64];
	snprintf(what, sizeof what, "%s hd=%d T=%d C=%d window=%d", PREFILL_KERNEL, hd, T, C, window);
	int ok = probe_check_one(what, probe_max_abs_diff(o, ref, qe), 3e-2);
	probe_free(p, q);
	probe_free(p, k);
	probe_free(p, v);
	probe_free(p, o);
	probe_free(p, ref);
	return ok;
}

/* 3 sequences of 700 tokens (several partitions), G query heads per KV
 * head, two KV heads. */
static int check_decode(struct probe *p, int hd, int G)
{
	int B = 3, ctx = 700, kvh = 2, heads = G * kvh;
	struct paged pg;
	if (!paged_create(p, &pg, B, ctx, heads, kvh, hd, 1))
		probe_throw(__FILE__, __LINE__, "cudaMalloc", "cannot allocate the check buffers");
	bf16 *qd = (bf16 *)probe_alloc(p, (size_t)B * heads * hd * 2);
	bf16 *od = (bf16 *)probe_alloc(p, (size_t)B * heads * hd * 2);
	bf16 *kc = (bf16 *)probe_alloc(p, (size_t)ctx * kvh * hd * 2);
	bf16 *vc = (bf16 *)probe_alloc(p, (size_t)ctx * kvh * hd * 2);
	float *rd = (float *)probe_alloc(p, (size_t)heads * hd * 4);
	if (!qd || !od || !kc || !vc || !rd)
		probe_throw(__FILE__, __LINE__, "cudaMalloc", "cannot allocate the check buffers");
	probe_fill_bf16(p, qd, (size_t)B * heads * hd, 4, 1.0f);
	launch_decode(p, &pg, 0, qd, heads * hd, od, heads * hd);
	double worst = 0;
	for (int b = 0; b < B; b++) {
		const int *bt = pg.block_tables + (size_t)b * pg.max_blocks;
		k_gather_kv<<<64, 256, 0, p->stream>>>(pg.k_cache, bt, pg.max_blocks, ctx, kvh, hd, kc);
		k_gather_kv<<<64, 256, 0, p->stream>>>(pg.v_cache, bt, pg.max_blocks, ctx, kvh, hd, vc);
		/* A decode is a one-query prefill at position ctx - 1. */
		k_ref_attention<<<dim3(1, heads), 64, 0, p->stream>>>(qd + (size_t)b * heads * hd,
								      heads * hd, kc, kvh * hd, vc, kvh * hd,
								      rd, 1, ctx - 1, heads, kvh, hd, 0);
		CK(cudaGetLastError());
		CK(cudaStreamSynchronize(p->stream));
		double e = probe_max_abs_diff(od + (size_t)b * heads * hd, rd, (size_t)heads * hd);
		worst = e > worst ? e : worst;
	}
	char what[80];
	snprintf(what, sizeof what, "%s hd=%d G=%d B=%d C=%d (%d parts)", DECODE_KERNEL, hd, G, B, ctx,
		 pg.max_parts);
	int ok = probe_check_one(what, worst, 2e-2);
	paged_destroy(p, &pg);
	probe_free(p, qd);
	probe_free(p, od);
	probe_free(p, kc);
	probe_free(p, vc);
	probe_free(p, rd);
	return ok;
}

static int check_gemm_bf16(struct probe *p)
{
	int m = 37, n = 96, k = 128;
	bf16 *w = (bf16 *)probe_alloc(p, (size_t)n * k * 2), *x = (bf16 *)probe_alloc(p, (size_t)m * k * 2);
	bf16 *y = (bf16 *)probe_alloc(p, (size_t)m * n * 2);
	float *ref = (float *)probe_alloc(p, (size_t)m * n * 4);
	if (!w || !x || !y || !ref)
		probe_throw(__FILE__, __LINE__, "cudaMalloc", "cannot allocate the check buffers");
	probe_fill_bf16(p, w, (size_t)n * k, 5, 0.1f);
	probe_fill_bf16(p, x, (size_t)m * k, 6, 1.0f);
	probe_gemm_bf16(p, w, x, y, m, n, k);
	k_ref_gemm<<<(m * n + 255) / 256, 256, 0, p->stream>>>(w, x, ref, m, n, k);
	CK(cudaGetLastError());
	CK(cudaStreamSynchronize(p->stream));
	int ok = probe_check_one("cuBLAS bf16 GEMM 37x96x128 (Y = X W^T)",
				 probe_max_abs_diff(y, ref, (size_t)m * n), 2e-2);
	probe_free(p, w);
	probe_free(p, x);
	probe_free(p, y);
	probe_free(p, ref);
	return ok;
}

int probe_attn_check(struct probe *p)
{
	static const int prefill_hds[] = { 64, 80, 96, 128, 256 };
	static const int decode_hds[] = { 64, 128, 256 }, groups[] = { 1, 4, 8, 12 };
	int ok = 1;
	for (size_t i = 0; i < sizeof prefill_hds / sizeof *prefill_hds; i++)
		ok &= check_prefill(p, prefill_hds[i], 0);
	ok &= check_prefill(p, 128, 70);   /* a window that cuts tiles and rows mid-way */
	for (size_t i = 0; i < sizeof decode_hds / sizeof *decode_hds; i++)
		for (size_t g = 0; g < sizeof groups / sizeof *groups; g++)
			ok &= check_decode(p, decode_hds[i], groups[g]);
	ok &= check_gemm_bf16(p);
	return ok;
}
