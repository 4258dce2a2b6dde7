/*
 * probe_mem: the memory, link and launch families of servesim-probe.
 *   stream_read  a kernel streaming a buffer of 8, 32 and 128 times the L2
 *                cache (at least 256 MiB) with 16-byte loads: the probe's
 *                own bandwidth reference (frac_bw of every later row)
 *   d2d_copy     cudaMemcpyAsync device to device (bytes = read + write)
 *   h2d_copy     pinned host to device (the host link: offload, CPU KV)
 *   d2h_copy     device to pinned host
 *   peer_copy    cudaMemcpyPeerAsync to every GPU this one can reach
 *   launch       an empty kernel: eager launches, the same inside a CUDA
 *                graph, and one graph launch, each per kernel
 * The footprints are far above L2, so no flush is needed between calls.
 */
#include <string.h>

#include <algorithm>

#include "probe.h"

__global__ void k_stream_read(const uint4 *__restrict__ a, size_t n, unsigned *sink)
{
	size_t stride = (size_t)gridDim.x * blockDim.x;
	size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
	unsigned acc = 0;
	for (; i + 3 * stride < n; i += 4 * stride) {
		uint4 v0 = a[i], v1 = a[i + stride], v2 = a[i + 2 * stride], v3 = a[i + 3 * stride];
		acc ^= v0.x ^ v0.y ^ v0.z ^ v0.w ^ v1.x ^ v1.y ^ v1.z ^ v1.w;
		acc ^= v2.x ^ v2.y ^ v2.z ^ v2.w ^ v3.x ^ v3.y ^ v3.z ^ v3.w;
	}
	for (; i < n; i += stride) {
		uint4 v = a[i];
		acc ^= v.x ^ v.y ^ v.z ^ v.w;
	}
	if (acc == 0x9e3779b9u)   /* practically never: keeps the loads alive */
		*sink = acc;
}

__global__ void k_empty(void)
{
}

struct bw_run {
	void *a, *b;
	size_t bytes;
	unsigned *sink;
	int peer;
	enum cudaMemcpyKind kind;
};

static void read_once(struct probe *p, void *arg, int rep)
{
	struct bw_run *r = (struct bw_run *)arg;
	(void)rep;
	k_stream_read<<<p->sms * 4, 512, 0, p->stream>>>((const uint4 *)r->a, r->bytes / 16, r->sink);
	CK(cudaGetLastError());
}

static void copy_once(struct probe *p, void *arg, int rep)
{
	struct bw_run *r = (struct bw_run *)arg;
	(void)rep;
	CK(cudaMemcpyAsync(r->b, r->a, r->bytes, r->kind, p->stream));
}

static void peer_once(struct probe *p, void *arg, int rep)
{
	struct bw_run *r = (struct bw_run *)arg;
	(void)rep;
	CK(cudaMemcpyPeerAsync(r->b, r->peer, r->a, p->device, r->bytes, p->stream));
}

/* Device buffer sizes for bandwidth rows: far above L2. */
static int device_sizes(const struct probe *p, size_t *out)
{
	if (p->check) {
		out[0] = (size_t)4 << 20;
		return 1;
	}
	size_t base = 8 * p->l2_bytes;
	if (base < ((size_t)256 << 20))
		base = (size_t)256 << 20;
	base = (base + ((1 << 20) - 1)) & ~(size_t)((1 << 20) - 1);
	out[0] = base;
	out[1] = 4 * base;
	out[2] = 16 * base;
	return 3;
}

static void device_family(struct probe *p, int copy)
{
	size_t sizes[3];
	int n = device_sizes(p, sizes);
	const char *kind = copy ? "d2d_copy" : "stream_read";
	for (int s = 0; s < n; s++) {
		struct bw_run r;
		memset(&r, 0, sizeof r);
		r.bytes = sizes[s];
		r.kind = cudaMemcpyDeviceToDevice;
		char shape[48];
		snprintf(shape, sizeof shape, "buf_%zuMiB", r.bytes >> 20);
		if (probe_over_budget(p) || (copy ? 2 : 1) * r.bytes > probe_budget_bytes()) {
			probe_skip(p, "%s %s (memory or time)", kind, shape);
			continue;
		}
		r.a = probe_alloc(p, r.bytes);
		r.b = copy ? probe_alloc(p, r.bytes) : NULL;
		r.sink = (unsigned *)probe_alloc(p, sizeof(unsigned));
		if (!r.a || (copy && !r.b) || !r.sink) {
			probe_skip(p, "%s %s (cudaMalloc failed)", kind, shape);
		} else {
			probe_fill_bytes(p, r.a, r.bytes, 11);
			struct meas m = probe_time(p, copy ? copy_once : read_once, &r);
			probe_emit(p, kind, shape, 0, 0, "none", &m, (copy ? 2.0 : 1.0) * (double)r.bytes, 0,
				   copy ? "cudaMemcpyAsync" : "probe_stream_read_v1");
		}
		probe_free(p, r.a);
		probe_free(p, r.b);
		probe_free(p, r.sink);
	}
}

void fam_stream_read(struct probe *p)
{
	device_family(p, 0);
}

void fam_d2d_copy(struct probe *p)
{
	device_family(p, 1);
}

static void host_family(struct probe *p, int to_device)
{
	static const size_t mib[] = { 16, 64, 256 };
	const char *kind = to_device ? "h2d_copy" : "d2h_copy";
	int n = p->check ? 1 : 3;
	for (int s = 0; s < n; s++) {
		struct bw_run r;
		memset(&r, 0, sizeof r);
		r.bytes = (p->check ? 1 : mib[s]) << 20;
		r.kind = to_device ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost;
		char shape[48];
		snprintf(shape, sizeof shape, "pinned_%zuMiB", r.bytes >> 20);
		if (probe_over_budget(p)) {
			probe_skip(p, "%s %s (time)", kind, shape);
			continue;
		}
		void *host = probe_alloc_host(p, r.bytes), *dev = probe_alloc(p, r.bytes);
		if (!host || !dev) {
			probe_skip(p, "%s %s (allocation failed)", kind, shape);
		} else {
			memset(host, 0x5a, r.bytes);
			r.a = to_device ? host : dev;
			r.b = to_device ? dev : host;
			struct meas m = probe_time(p, copy_once, &r);
			probe_emit(p, kind, shape, 0, 0, "none", &m, (double)r.bytes, 0, "cudaMemcpyAsync");
		}
		probe_free_host(p, host);
		probe_free(p, dev);
	}
}

void fam_h2d_copy(struct probe *p)
{
	host_family(p, 1);
}

void fam_d2h_copy(struct probe *p)
{
	host_family(p, 0);
}

void fam_peer_copy(struct probe *p)
{
	if (p->n_devices < 2) {
		probe_skip(p, "peer_copy (one GPU)");
		return;
	}
	size_t bytes = p->check ? ((size_t)1 << 20) : ((size_t)256 << 20);
	for (int peer = 0; peer < p->n_devices; peer++) {
		if (peer == p->device)
			continue;
		int can = 0;
		CK(cudaDeviceCanAccessPeer(&can, p->device, peer));
		char shape[48];
		snprintf(shape, sizeof shape, "to_gpu%d_%zuMiB", peer, bytes >> 20);
		if (!can) {
			probe_skip(p, "peer_copy %s (no peer access)", shape);
			continue;
		}
		cudaError_t rc = cudaDeviceEnablePeerAccess(peer, 0);
		if (rc != cudaSuccess && rc != cudaErrorPeerAccessAlreadyEnabled)
			CK(rc);
		(void)cudaGetLastError();
		struct bw_run r;
		memset(&r, 0, sizeof r);
		r.bytes = bytes;
		r.peer = peer;
		r.a = probe_alloc(p, bytes);
		CK(cudaSetDevice(peer));
		r.b = probe_alloc(p, bytes);   /* on the peer; cudaFree finds it by address */
		CK(cudaSetDevice(p->device));
		if (!r.a || !r.b) {
			probe_skip(p, "peer_copy %s (cudaMalloc failed)", shape);
		} else {
			struct meas m = probe_time(p, peer_once, &r);
			probe_emit(p, "peer_copy", shape, 0, 0, "none", &m, (double)bytes, 0,
				   "cudaMemcpyPeerAsync");
		}
		probe_free(p, r.a);
		probe_free(p, r.b);
	}
}

/* Host time per launch of n empty kernels, eager or as one graph. */
static double launch_us(struct probe *p, int n, cudaGraphExec_t ge, int graphs)
{
	CK(cudaStreamSynchronize(p->stream));
	double t0 = probe_now_s();
	if (ge) {
		for (int i = 0; i < graphs; i++)
			CK(cudaGraphLaunch(ge, p->stream));
	} else {
		for (int i = 0; i < n; i++)
			k_empty<<<1, 32, 0, p->stream>>>();
		CK(cudaGetLastError());
	}
	CK(cudaStreamSynchronize(p->stream));
	return (probe_now_s() - t0) * 1e6;
}

static cudaGraphExec_t empty_graph(struct probe *p, int kernels)
{
	cudaGraph_t g = NULL;
	cudaGraphExec_t ge = NULL;
	CK(cudaStreamBeginCapture(p->stream, cudaStreamCaptureModeThreadLocal));
	for (int i = 0; i < kernels; i++)
		k_empty<<<1, 32, 0, p->stream>>>();
	CK(cudaStreamEndCapture(p->stream, &g));
	CK(cudaGraphInstantiate(&ge, g, 0));
	CK(cudaGraphDestroy(g));
	return ge;
}

static void put_launch(struct probe *p, const char *shape, int kernels, double us_each,
		       const char *kernel)
{
	struct meas m;
	memset(&m, 0, sizeof m);
	m.med_us = m.p10_us = m.p90_us = us_each;
	m.reps = 1;
	m.graph = strcmp(shape, "eager") != 0;
	probe_emit(p, "launch", shape, kernels, 0, "none", &m, 0, 0, kernel);
}

/* Median of five host-timed runs of each mode. Per kernel: eager launch,
 * a kernel inside a graph of 256, and a graph of one kernel. */
void fam_launch(struct probe *p)
{
	int n = p->check ? 32 : 256, reps = 5;
	cudaGraphExec_t big = empty_graph(p, n), one = empty_graph(p, 1);
	double eager[5], inside[5], single[5];
	launch_us(p, n, NULL, 0);   /* warm-up */
	launch_us(p, n, big, 1);
	for (int r = 0; r < reps; r++) {
		eager[r] = launch_us(p, n, NULL, 0) / n;
		inside[r] = launch_us(p, n, big, 1) / n;
		single[r] = launch_us(p, n, one, n) / n;
	}
	CK(cudaGraphExecDestroy(big));
	CK(cudaGraphExecDestroy(one));
	std::sort(eager, eager + reps);
	std::sort(inside, inside + reps);
	std::sort(single, single + reps);
	put_launch(p, "eager", 1, eager[2], "k_empty");
	put_launch(p, "in_graph", n, inside[2], "k_empty");
	put_launch(p, "graph_launch", 1, single[2], "cudaGraphLaunch");
}
