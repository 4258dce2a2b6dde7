/*
 * probe_core: what every family of servesim-probe uses: errors that a
 * family survives, tracked allocations, the CSV writer (one flushed row at
 * a time), the timing method and the clocks.
 *
 * Timing (probe_time): one warm-up call, one timed call to size a batch
 * (about 2 ms of work, 1 to 1000 calls), then PROBE_BATCHES batches; each
 * row reports the median of the batch means with their 10th and 90th
 * percentiles. A call under GRAPH_BELOW_US is measured as a CUDA graph of
 * the whole batch, so the host's launch time (3-6 us a launch) does not
 * stand in for the kernel's; if the work cannot be captured it is timed
 * eagerly and the row says graph=0. `rep` counts up across calls so work
 * can rotate over copies of its data (a captured graph holds the rotation
 * it was captured with).
 *
 * Clocks: libnvidia-ml.so.1 is opened with dlopen when present, so the
 * binary neither links nor needs it; without it the clock lines say
 * "unavailable".
 */
#include <dlfcn.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <algorithm>

#include "probe.h"

#define GRAPH_BELOW_US 20.0
#define PROBE_BATCHES 15
#define CHECK_BATCHES 3

/* ---- errors ---------------------------------------------------------------- */

void probe_throw(const char *file, int line, const char *what, const char *why)
{
	probe_error e;
	const char *base = strrchr(file, '/');
	snprintf(e.msg, sizeof e.msg, "%s:%d: %s: %s", base ? base + 1 : file, line, what, why);
	e.sticky = 0;
	throw e;
}

void probe_throw_cuda(const char *file, int line, const char *what, cudaError_t rc)
{
	char why[256];
	snprintf(why, sizeof why, "%s (%s)", cudaGetErrorString(rc), cudaGetErrorName(rc));
	probe_throw(file, line, what, why);
}

void probe_throw_blas(const char *file, int line, const char *what, cublasStatus_t rc)
{
	probe_throw(file, line, what, cublasGetStatusString(rc));
}

/* ---- time, notes, rows ---------------------------------------------------------- */

double probe_now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int probe_over_budget(const struct probe *p)
{
	return probe_now_s() - p->t_start_s > p->budget_s;
}

void probe_note(struct probe *p, const char *key, const char *fmt, ...)
{
	va_list ap;
	fprintf(p->out, "# %s: ", key);
	va_start(ap, fmt);
	vfprintf(p->out, fmt, ap);
	va_end(ap);
	fprintf(p->out, "\n");
	fflush(p->out);
}

void probe_skip(struct probe *p, const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	probe_note(p, "skipped", "%s", buf);
}

void probe_emit(struct probe *p, const char *kind, const char *shape, long long tokens,
		long long context, const char *dtype, const struct meas *m, double bytes, double flops,
		const char *kernel)
{
	double s = m->med_us * 1e-6;
	double gb_s = bytes / s / 1e9, tflops = flops / s / 1e12;
	int fp8 = !strcmp(dtype, "fp8");
	if (!strcmp(kind, "stream_read"))
		p->stream_gb_s = std::max(p->stream_gb_s, gb_s);
	else if (!strcmp(kind, "gemm") && !strcmp(dtype, "bf16"))
		p->gemm_bf16_tflops = std::max(p->gemm_bf16_tflops, tflops);
	else if (!strcmp(kind, "gemm") && fp8)
		p->gemm_fp8_tflops = std::max(p->gemm_fp8_tflops, tflops);
	double peak = fp8 ? p->gemm_fp8_tflops : p->gemm_bf16_tflops;
	double frac_bw = p->stream_gb_s > 0 ? gb_s / p->stream_gb_s : 0;
	double frac_peak = peak > 0 ? tflops / peak : 0;
	fprintf(p->out, "%s,%s,%lld,%lld,%s,%.3f,%.0f,%.0f,%s,%d,%lld,%.3f,%.3f,%.4f,%.4f\n", kind, shape,
		tokens, context, dtype, m->med_us, bytes, flops, kernel, m->graph, m->reps, m->p10_us,
		m->p90_us, frac_bw, frac_peak);
	fflush(p->out);
	p->rows++;
}

/* ---- memory ------------------------------------------------------------------------ */

/* Free device memory one experiment may take: what is free, less 1 GiB
 * and 10% for cuBLAS workspaces and fragmentation. */
size_t probe_budget_bytes(void)
{
	size_t free_b = 0, total_b = 0;
	CK(cudaMemGetInfo(&free_b, &total_b));
	double b = (double)free_b * 0.9 - 1073741824.0;
	return b > 0 ? (size_t)b : 0;
}

void *probe_alloc(struct probe *p, size_t bytes)
{
	void *ptr = NULL;
	if (cudaMalloc(&ptr, bytes ? bytes : 1) != cudaSuccess) {
		(void)cudaGetLastError();
		return NULL;
	}
	p->allocs.push_back(ptr);
	return ptr;
}

static void untrack(std::vector<void *> &v, void *ptr)
{
	std::vector<void *>::iterator it = std::find(v.begin(), v.end(), ptr);
	if (it != v.end())
		v.erase(it);
}

void probe_free(struct probe *p, void *ptr)
{
	if (!ptr)
		return;
	untrack(p->allocs, ptr);
	CK(cudaFree(ptr));
}

void *probe_alloc_host(struct probe *p, size_t bytes)
{
	void *ptr = NULL;
	if (cudaMallocHost(&ptr, bytes ? bytes : 1) != cudaSuccess) {
		(void)cudaGetLastError();
		return NULL;
	}
	p->host_allocs.push_back(ptr);
	return ptr;
}

void probe_free_host(struct probe *p, void *ptr)
{
	if (!ptr)
		return;
	untrack(p->host_allocs, ptr);
	CK(cudaFreeHost(ptr));
}

/* Errors ignored: this runs after a failure, or after a device reset that
 * already released everything. */
void probe_free_all(struct probe *p)
{
	for (size_t i = 0; i < p->allocs.size(); i++)
		(void)cudaFree(p->allocs[i]);
	for (size_t i = 0; i < p->host_allocs.size(); i++)
		(void)cudaFreeHost(p->host_allocs[i]);
	p->allocs.clear();
	p->host_allocs.clear();
	(void)cudaGetLastError();
}

/* ---- fills ------------------------------------------------------------------------------ */

__device__ static float hash_unit(size_t i, uint32_t seed)
{
	uint32_t h = (uint32_t)i * 2654435761u ^ (uint32_t)(i >> 32) * 40503u ^ seed;
	h ^= h >> 16;
	h *= 0x7feb352du;
	h ^= h >> 15;
	h *= 0x846ca68bu;
	h ^= h >> 16;
	return (float)(h >> 8) * (2.0f / 16777216.0f) - 1.0f;   /* [-1, 1) */
}

__global__ void k_fill_bf16(bf16 *ptr, size_t n, uint32_t seed, float scale)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x)
		ptr[i] = __float2bfloat16(hash_unit(i, seed) * scale);
}

__global__ void k_fill_fp8(__nv_fp8_storage_t *ptr, size_t n, uint32_t seed, float scale)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x)
		ptr[i] = __nv_cvt_float_to_fp8(hash_unit(i, seed) * scale, __NV_SATFINITE, __NV_E4M3);
}

__global__ void k_fill_bytes(uint8_t *ptr, size_t n, uint32_t seed)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x)
		ptr[i] = (uint8_t)((hash_unit(i, seed) + 1.0f) * 127.5f);
}

void probe_fill_bf16(struct probe *p, void *ptr, size_t n, uint32_t seed, float scale)
{
	k_fill_bf16<<<p->sms * 8, 256, 0, p->stream>>>((bf16 *)ptr, n, seed, scale);
	CK(cudaGetLastError());
}

void probe_fill_fp8(struct probe *p, void *ptr, size_t n, uint32_t seed, float scale)
{
	k_fill_fp8<<<p->sms * 8, 256, 0, p->stream>>>((__nv_fp8_storage_t *)ptr, n, seed, scale);
	CK(cudaGetLastError());
}

void probe_fill_bytes(struct probe *p, void *ptr, size_t n, uint32_t seed)
{
	k_fill_bytes<<<p->sms * 8, 256, 0, p->stream>>>((uint8_t *)ptr, n, seed);
	CK(cudaGetLastError());
}

/* ---- timing ------------------------------------------------------------------------------- */

static float elapsed_ms(struct probe *p)
{
	float ms = 0;
	CK(cudaEventSynchronize(p->ev1));
	CK(cudaEventElapsedTime(&ms, p->ev0, p->ev1));
	return ms;
}

/* Captures n calls of fn into an executable graph; NULL when the work
 * cannot be captured (the capture is ended and its error cleared). */
static cudaGraphExec_t capture(struct probe *p, work_fn fn, void *arg, int n, int *rep)
{
	cudaGraph_t g = NULL;
	cudaGraphExec_t ge = NULL;
	if (cudaStreamBeginCapture(p->stream, cudaStreamCaptureModeThreadLocal) != cudaSuccess) {
		(void)cudaGetLastError();
		return NULL;
	}
	try {
		for (int i = 0; i < n; i++)
			fn(p, arg, (*rep)++);
	} catch (const probe_error &) {
		(void)cudaStreamEndCapture(p->stream, &g);
		if (g)
			(void)cudaGraphDestroy(g);
		(void)cudaGetLastError();
		return NULL;
	}
	if (cudaStreamEndCapture(p->stream, &g) != cudaSuccess || !g) {
		(void)cudaGetLastError();
		return NULL;
	}
	if (cudaGraphInstantiate(&ge, g, 0) != cudaSuccess)
		ge = NULL;
	(void)cudaGraphDestroy(g);
	(void)cudaGetLastError();
	return ge;
}

struct meas probe_time(struct probe *p, work_fn fn, void *arg)
{
	int rep = 0;
	fn(p, arg, rep++);
	CK(cudaStreamSynchronize(p->stream));
	CK(cudaEventRecord(p->ev0, p->stream));
	fn(p, arg, rep++);
	CK(cudaEventRecord(p->ev1, p->stream));
	double one_us = elapsed_ms(p) * 1e3;
	double target_us = p->check ? 200.0 : 2000.0;
	int n = (int)(target_us / (one_us > 0.5 ? one_us : 0.5));
	n = n < 1 ? 1 : n > 1000 ? 1000 : n;
	int nb = p->check ? CHECK_BATCHES : PROBE_BATCHES;
	/* Long calls: fewer batches, so no row takes more than ~2 s. */
	while (nb > 5 && one_us * n * nb > 2e6)
		nb--;
	struct meas m;
	memset(&m, 0, sizeof m);
	cudaGraphExec_t ge = one_us < GRAPH_BELOW_US ? capture(p, fn, arg, n, &rep) : NULL;
	if (ge) {
		m.graph = 1;
		CK(cudaGraphLaunch(ge, p->stream));   /* the graph's own warm-up */
		CK(cudaStreamSynchronize(p->stream));
	}
	double batch[PROBE_BATCHES];
	for (int b = 0; b < nb; b++) {
		CK(cudaEventRecord(p->ev0, p->stream));
		if (ge)
			CK(cudaGraphLaunch(ge, p->stream));
		else
			for (int i = 0; i < n; i++)
				fn(p, arg, rep++);
		CK(cudaEventRecord(p->ev1, p->stream));
		batch[b] = elapsed_ms(p) * 1e3 / n;
	}
	if (ge)
		CK(cudaGraphExecDestroy(ge));
	std::sort(batch, batch + nb);
	m.med_us = nb % 2 ? batch[nb / 2] : 0.5 * (batch[nb / 2 - 1] + batch[nb / 2]);
	m.p10_us = batch[(int)floor(0.1 * (nb - 1))];
	m.p90_us = batch[(int)ceil(0.9 * (nb - 1))];
	m.reps = (long long)n * nb;
	return m;
}

/* How many copies of `bytes` make four times the L2 cache (1..max). */
int probe_copies_for(const struct probe *p, double bytes, int max)
{
	int n = (int)ceil(4.0 * (double)p->l2_bytes / (bytes > 1 ? bytes : 1));
	return n < 1 ? 1 : n > max ? max : n;
}

/* ---- handles and warm-up ---------------------------------------------------------------------- */

void probe_handles_create(struct probe *p)
{
	CK(cudaSetDevice(p->device));
	CK(cudaStreamCreateWithFlags(&p->stream, cudaStreamNonBlocking));
	CK(cudaEventCreate(&p->ev0));
	CK(cudaEventCreate(&p->ev1));
	BK(cublasCreate(&p->blas));
	BK(cublasSetStream(p->blas, p->stream));
	BK(cublasLtCreate(&p->lt));
	p->lt_ws_bytes = (size_t)32 << 20;
	CK(cudaMalloc(&p->lt_ws, p->lt_ws_bytes));
	/* cuBLAS under graph capture must not allocate: give it a workspace. */
	BK(cublasSetWorkspace(p->blas, p->lt_ws, p->lt_ws_bytes));
}

/* Errors ignored: this also runs on a context that failed. */
void probe_handles_destroy(struct probe *p)
{
	if (p->lt_ws)
		(void)cudaFree(p->lt_ws);
	if (p->lt)
		(void)cublasLtDestroy(p->lt);
	if (p->blas)
		(void)cublasDestroy(p->blas);
	if (p->ev0)
		(void)cudaEventDestroy(p->ev0);
	if (p->ev1)
		(void)cudaEventDestroy(p->ev1);
	if (p->stream)
		(void)cudaStreamDestroy(p->stream);
	p->lt_ws = NULL;
	p->lt = NULL;
	p->blas = NULL;
	p->ev0 = p->ev1 = NULL;
	p->stream = NULL;
	(void)cudaGetLastError();
}

/* Busy GEMMs for about a second (50 ms under --check) so clocks and power
 * settle before the first row, whatever family runs first. */
void probe_warmup(struct probe *p)
{
	int n = p->check ? 256 : 4096;
	size_t elems = (size_t)n * n;
	bf16 *a = (bf16 *)probe_alloc(p, elems * 2), *c = (bf16 *)probe_alloc(p, elems * 2);
	if (!a || !c) {
		probe_free(p, a);
		probe_free(p, c);
		probe_skip(p, "warm-up (cudaMalloc failed)");
		return;
	}
	probe_fill_bf16(p, a, elems, 7, 0.05f);
	double t0 = probe_now_s(), secs = p->check ? 0.05 : 1.0;
	int calls = 0;
	while (probe_now_s() - t0 < secs) {
		for (int i = 0; i < 10; i++)
			probe_gemm_bf16(p, a, a, c, n, n, n);
		CK(cudaStreamSynchronize(p->stream));
		calls += 10;
	}
	probe_note(p, "warmup", "%d GEMMs %dx%dx%d in %.2f s", calls, n, n, n, probe_now_s() - t0);
	probe_free(p, a);
	probe_free(p, c);
}

/* ---- NVML, opened at run time ------------------------------------------------------------------ */

typedef int (*nvml_void_fn)(void);
typedef int (*nvml_handle_fn)(const char *, void **);
typedef int (*nvml_clock_fn)(void *, int, unsigned *);
typedef int (*nvml_ull_fn)(void *, unsigned long long *);
typedef int (*nvml_uint_fn)(void *, unsigned *);
typedef int (*nvml_temp_fn)(void *, int, unsigned *);
typedef int (*nvml_str_fn)(char *, unsigned);

struct nvml {
	void *lib, *dev;
	nvml_clock_fn clock;          /* nvmlDeviceGetClockInfo */
	nvml_ull_fn reasons;          /* ...GetCurrentClocksEventReasons (or Throttle) */
	nvml_uint_fn power_limit;     /* nvmlDeviceGetPowerManagementLimit, mW */
	nvml_uint_fn power;           /* nvmlDeviceGetPowerUsage, mW */
	nvml_temp_fn temp;            /* nvmlDeviceGetTemperature */
	nvml_str_fn driver;           /* nvmlSystemGetDriverVersion */
	nvml_void_fn shutdown;
};

enum { NVML_OK = 0, NVML_CLOCK_SM = 1, NVML_CLOCK_MEM = 2, NVML_TEMPERATURE_GPU = 0 };

void probe_nvml_open(struct probe *p)
{
	void *lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!lib) {
		probe_note(p, "nvml", "unavailable (libnvidia-ml.so.1 not found): no clocks recorded");
		return;
	}
	nvml_void_fn init = (nvml_void_fn)dlsym(lib, "nvmlInit_v2");
	nvml_handle_fn by_bus = (nvml_handle_fn)dlsym(lib, "nvmlDeviceGetHandleByPciBusId_v2");
	struct nvml *n = (struct nvml *)calloc(1, sizeof *n);
	char bus[32] = "";
	if (!n || !init || !by_bus || init() != NVML_OK) {
		probe_note(p, "nvml", "unavailable (nvmlInit_v2 failed): no clocks recorded");
		free(n);
		dlclose(lib);
		return;
	}
	n->lib = lib;
	n->shutdown = (nvml_void_fn)dlsym(lib, "nvmlShutdown");
	/* NVML numbers devices by PCI order, CUDA by speed: match by bus id. */
	if (cudaDeviceGetPCIBusId(bus, sizeof bus, p->device) != cudaSuccess ||
	    by_bus(bus, &n->dev) != NVML_OK) {
		(void)cudaGetLastError();
		probe_note(p, "nvml", "unavailable (no NVML device for PCI bus '%s')", bus);
		if (n->shutdown)
			n->shutdown();
		dlclose(lib);
		free(n);
		return;
	}
	n->clock = (nvml_clock_fn)dlsym(lib, "nvmlDeviceGetClockInfo");
	n->reasons = (nvml_ull_fn)dlsym(lib, "nvmlDeviceGetCurrentClocksEventReasons");
	if (!n->reasons)
		n->reasons = (nvml_ull_fn)dlsym(lib, "nvmlDeviceGetCurrentClocksThrottleReasons");
	n->power_limit = (nvml_uint_fn)dlsym(lib, "nvmlDeviceGetPowerManagementLimit");
	n->power = (nvml_uint_fn)dlsym(lib, "nvmlDeviceGetPowerUsage");
	n->temp = (nvml_temp_fn)dlsym(lib, "nvmlDeviceGetTemperature");
	n->driver = (nvml_str_fn)dlsym(lib, "nvmlSystemGetDriverVersion");
	p->nvml = n;
}

void probe_nvml_close(struct probe *p)
{
	if (!p->nvml)
		return;
	if (p->nvml->shutdown)
		p->nvml->shutdown();
	dlclose(p->nvml->lib);
	free(p->nvml);
	p->nvml = NULL;
}

/* Throttle (clock event) reason bits as nvml.h defines them. */
static void reasons_text(unsigned long long r, char *out, size_t cap)
{
	static const struct {
		unsigned long long bit;
		const char *name;
	} names[] = {
		{ 0x1ULL, "gpu_idle" },        { 0x2ULL, "app_clocks" },     { 0x4ULL, "sw_power_cap" },
		{ 0x8ULL, "hw_slowdown" },     { 0x10ULL, "sync_boost" },    { 0x20ULL, "sw_thermal" },
		{ 0x40ULL, "hw_thermal" },     { 0x80ULL, "hw_power_brake" }, { 0x100ULL, "display_clocks" },
	};
	out[0] = '\0';
	for (size_t i = 0; i < sizeof names / sizeof *names; i++)
		if (r & names[i].bit)
			snprintf(out + strlen(out), cap - strlen(out), "%s%s", out[0] ? "|" : "", names[i].name);
	if (!out[0])
		snprintf(out, cap, "none");
}

void probe_note_clocks(struct probe *p)
{
	struct nvml *n = p->nvml;
	if (!n)
		return;
	unsigned sm = 0, mem = 0, mw = 0, temp = 0;
	unsigned long long r = 0;
	char why[160] = "unknown";
	int have_sm = n->clock && n->clock(n->dev, NVML_CLOCK_SM, &sm) == NVML_OK;
	int have_mem = n->clock && n->clock(n->dev, NVML_CLOCK_MEM, &mem) == NVML_OK;
	if (n->reasons && n->reasons(n->dev, &r) == NVML_OK)
		reasons_text(r, why, sizeof why);
	int have_w = n->power && n->power(n->dev, &mw) == NVML_OK;
	int have_t = n->temp && n->temp(n->dev, NVML_TEMPERATURE_GPU, &temp) == NVML_OK;
	probe_note(p, "clocks", "family=%s sm_mhz=%u mem_mhz=%u power_w=%.0f temp_c=%u throttle=%s",
		   p->family ? p->family : "-", have_sm ? sm : 0, have_mem ? mem : 0,
		   have_w ? mw / 1000.0 : 0.0, have_t ? temp : 0, why);
}

void probe_note_environment(struct probe *p)
{
	int drv = 0, rt = 0, blas = 0;
	(void)cudaDriverGetVersion(&drv);
	(void)cudaRuntimeGetVersion(&rt);
	if (!p->blas || cublasGetVersion(p->blas, &blas) != CUBLAS_STATUS_SUCCESS)
		blas = 0;
	probe_note(p, "cuda", "driver supports %d.%d, runtime %d.%d, cuBLAS %d", drv / 1000,
		   drv % 1000 / 10, rt / 1000, rt % 1000 / 10, blas);
	struct nvml *n = p->nvml;
	if (!n)
		return;
	char ver[96] = "";
	unsigned mw = 0;
	if (n->driver && n->driver(ver, sizeof ver) == NVML_OK)
		probe_note(p, "driver", "%s", ver);
	if (n->power_limit && n->power_limit(n->dev, &mw) == NVML_OK)
		probe_note(p, "power_limit_w", "%.0f", mw / 1000.0);
}
