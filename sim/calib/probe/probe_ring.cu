/*
 * probe_ring: the allreduce family of servesim-probe: a ring all-reduce
 * over peer copies among every GPU of the box, for boxes without NCCL or
 * to see what the link gives with the simplest algorithm.
 *
 * N GPUs, a bf16 buffer of S bytes on each, cut in N chunks. Reduce-
 * scatter: N - 1 steps; in each, GPU r copies one chunk to GPU r+1's
 * scratch (cudaMemcpyPeerAsync on r's stream) and r+1 adds it into its own
 * chunk (a kernel on r+1's stream, after the copy's event); then
 * all-gather: N - 1 steps of copies straight into the next GPU's buffer.
 * Events order every cross-GPU dependency; nothing waits on the host
 * until the end. A row is the host wall time of the whole all-reduce (the
 * median of seven after one warm-up), shape ring_gN_SMiB, tokens = N,
 * bytes = S: the algorithm bandwidth is S / time, the bus bandwidth (what
 * nccl-tests report as busbw) 2 (N-1)/N times that.
 *
 * Runs only with two or more GPUs that reach their ring neighbours by peer
 * access; compiled, never run where it was written (one GPU or none).
 */
#include <string.h>

#include <algorithm>

#include "probe.h"

#define RING_MAX 16

__global__ void k_add_bf16(bf16 *dst, const bf16 *src, size_t n)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x)
		dst[i] = __float2bfloat16(__bfloat162float(dst[i]) + __bfloat162float(src[i]));
}

struct ring {
	int n;
	size_t chunk;                       /* elements a chunk */
	bf16 *buf[RING_MAX], *scratch[RING_MAX];
	cudaStream_t st[RING_MAX];
	cudaEvent_t sent[RING_MAX], added[RING_MAX];
};

static void ring_once(struct probe *p, struct ring *r)
{
	int n = r->n;
	size_t bytes = r->chunk * sizeof(bf16);
	for (int s = 0; s < n - 1; s++) {   /* reduce-scatter */
		for (int g = 0; g < n; g++) {
			int to = (g + 1) % n, c = (g - s + n) % n;
			CK(cudaSetDevice(g));
			if (s > 0)   /* the receiver's scratch is free again */
				CK(cudaStreamWaitEvent(r->st[g], r->added[to], 0));
			CK(cudaMemcpyPeerAsync(r->scratch[to], to, r->buf[g] + c * r->chunk, g, bytes, r->st[g]));
			CK(cudaEventRecord(r->sent[g], r->st[g]));
		}
		for (int g = 0; g < n; g++) {
			int to = (g + 1) % n, c = (g - s + n) % n;
			CK(cudaSetDevice(to));
			CK(cudaStreamWaitEvent(r->st[to], r->sent[g], 0));
			k_add_bf16<<<p->sms * 2, 256, 0, r->st[to]>>>(r->buf[to] + c * r->chunk, r->scratch[to],
								      r->chunk);
			CK(cudaGetLastError());
			CK(cudaEventRecord(r->added[to], r->st[to]));
		}
	}
	for (int s = 0; s < n - 1; s++) {   /* all-gather */
		for (int g = 0; g < n; g++) {
			int to = (g + 1) % n, c = (g + 1 - s + 2 * n) % n;
			CK(cudaSetDevice(g));
			CK(cudaMemcpyPeerAsync(r->buf[to] + c * r->chunk, to, r->buf[g] + c * r->chunk, g, bytes,
					       r->st[g]));
			CK(cudaEventRecord(r->sent[g], r->st[g]));
		}
		for (int g = 0; g < n; g++) {   /* what arrived is what goes on next */
			int to = (g + 1) % n;
			CK(cudaSetDevice(to));
			CK(cudaStreamWaitEvent(r->st[to], r->sent[g], 0));
		}
	}
	for (int g = 0; g < n; g++) {
		CK(cudaSetDevice(g));
		CK(cudaStreamSynchronize(r->st[g]));
	}
	CK(cudaSetDevice(p->device));
}

/* Errors ignored: this also runs after a failure. */
static void ring_destroy(struct probe *p, struct ring *r)
{
	for (int g = 0; g < r->n; g++) {
		(void)cudaSetDevice(g);
		if (r->st[g])
			(void)cudaStreamDestroy(r->st[g]);
		if (r->sent[g])
			(void)cudaEventDestroy(r->sent[g]);
		if (r->added[g])
			(void)cudaEventDestroy(r->added[g]);
		r->st[g] = NULL;
		r->sent[g] = r->added[g] = NULL;
	}
	(void)cudaSetDevice(p->device);
	(void)cudaGetLastError();
}

static void ring_rows(struct probe *p, struct ring *r)
{
	static const size_t mib[] = { 1, 16, 128 };
	for (int k = 0; k < (p->check ? 1 : 3); k++) {
		size_t bytes = mib[k] << 20;
		r->chunk = bytes / sizeof(bf16) / r->n;
		char shape[48];
		snprintf(shape, sizeof shape, "ring_g%d_%zuMiB", r->n, mib[k]);
		if (probe_over_budget(p)) {
			probe_skip(p, "allreduce %s (time)", shape);
			continue;
		}
		int ok = 1;
		for (int g = 0; g < r->n; g++) {
			CK(cudaSetDevice(g));
			r->buf[g] = (bf16 *)probe_alloc(p, r->chunk * r->n * sizeof(bf16));
			r->scratch[g] = (bf16 *)probe_alloc(p, r->chunk * sizeof(bf16));
			ok &= r->buf[g] && r->scratch[g];
			if (r->buf[g])
				CK(cudaMemset(r->buf[g], 0, r->chunk * r->n * sizeof(bf16)));
		}
		CK(cudaSetDevice(p->device));
		if (ok) {
			double t[8];
			ring_once(p, r);   /* warm-up */
			for (int i = 0; i < 7; i++) {
				double t0 = probe_now_s();
				ring_once(p, r);
				t[i] = (probe_now_s() - t0) * 1e6;
			}
			std::sort(t, t + 7);
			struct meas m;
			memset(&m, 0, sizeof m);
			m.med_us = t[3];
			m.p10_us = t[0];
			m.p90_us = t[6];
			m.reps = 7;
			probe_emit(p, "allreduce", shape, r->n, 0, "bf16", &m, (double)r->chunk * r->n * 2, 0,
				   "probe_ring_peer_v1");
		} else {
			probe_skip(p, "allreduce %s (cudaMalloc failed)", shape);
		}
		for (int g = 0; g < r->n; g++) {
			probe_free(p, r->buf[g]);
			probe_free(p, r->scratch[g]);
			r->buf[g] = r->scratch[g] = NULL;
		}
	}
}

void fam_allreduce(struct probe *p)
{
	struct ring r;
	memset(&r, 0, sizeof r);
	r.n = std::min(p->n_devices, RING_MAX);
	if (r.n < 2) {
		probe_skip(p, "allreduce (one GPU)");
		return;
	}
	for (int g = 0; g < r.n; g++) {
		int to = (g + 1) % r.n, can = 0;
		CK(cudaDeviceCanAccessPeer(&can, g, to));
		if (!can) {
			probe_skip(p, "allreduce (GPU %d cannot reach GPU %d by peer access)", g, to);
			return;
		}
	}
	try {
		for (int g = 0; g < r.n; g++) {
			CK(cudaSetDevice(g));
			cudaError_t rc = cudaDeviceEnablePeerAccess((g + 1) % r.n, 0);
			if (rc != cudaSuccess && rc != cudaErrorPeerAccessAlreadyEnabled)
				CK(rc);
			(void)cudaGetLastError();
			CK(cudaStreamCreateWithFlags(&r.st[g], cudaStreamNonBlocking));
			CK(cudaEventCreateWithFlags(&r.sent[g], cudaEventDisableTiming));
			CK(cudaEventCreateWithFlags(&r.added[g], cudaEventDisableTiming));
		}
		CK(cudaSetDevice(p->device));
		ring_rows(p, &r);
	} catch (...) {
		ring_destroy(p, &r);
		throw;
	}
	ring_destroy(p, &r);
}
