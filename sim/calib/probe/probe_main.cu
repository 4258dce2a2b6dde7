/*
 * servesim-probe: measures the GPU it runs on, for `servesim calibrate`.
 *
 * A standalone program that needs only the CUDA runtime, cuBLAS and
 * cuBLASLt (libnvidia-ml.so.1 is used when present, never required), so
 * it runs on a bare GPU box; `servesim calibrate fit` reads its CSV
 * anywhere. For the model dimensions given on the command line, sharded
 * per tensor-parallel rank as vLLM shards them (heads / tp, KV heads / tp
 * but at least 1, intermediate / tp, vocab / tp), it runs the families of
 * `families[]` below in order (`--list` prints them, `--only` picks some).
 *
 * Output: '#' lines (`# key: value`: probe version, device, CUDA and
 * driver versions, dims, clocks per family, skipped and failed work,
 * elapsed time), then the CSV header PROBE_HEADER and one row per
 * measurement, each flushed as it is measured: a crash or a time-out
 * keeps every row before it, and what is on disk is always a CSV the fit
 * reads. time_us is the median of the batch means (p10/p90 their spread,
 * reps the calls timed), bytes the minimum traffic, flops the
 * multiply-adds x 2; kernel names what ran, graph says whether it was
 * timed as a CUDA graph, frac_bw and frac_peak what it reached against
 * this run's stream_read and GEMM.
 *
 * Memory: each experiment is sized to what cudaMemGetInfo reports free,
 * less a margin; what does not fit is skipped with a `# skipped:` line.
 * Time: after --budget-s seconds (default 240) the remaining experiments
 * are skipped the same way.
 *
 * Failure: a CUDA or cuBLAS error inside a family is written as
 * `# failed: FAMILY: FILE:LINE: call: error` (and to stderr); the family's
 * allocations are released, the device is reset when the error is sticky,
 * and the next family runs. Exit 0 when every family ran, 3 when some
 * failed (the CSV is still whole), 1 when no device can be used (the
 * message says why: no driver, a driver too old for this runtime, no
 * device …) or --check failed, 2 for bad arguments.
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "probe_attn.h"

struct family {
	const char *name;
	void (*run)(struct probe *p);
	const char *what;
};

/* In run order: the bandwidth and GEMM references first (frac_bw and
 * frac_peak of later rows), fp8 right after bf16. */
static const struct family families[] = {
	{ "stream_read", fam_stream_read, "read bandwidth, 16-byte loads, buffers 8-128x L2" },
	{ "d2d_copy", fam_d2d_copy, "cudaMemcpyAsync device to device" },
	{ "launch", fam_launch, "empty kernel: eager launch, inside a graph, one graph launch" },
	{ "gemm_bf16", fam_gemm_bf16, "cuBLAS bf16 GEMMs of the model's weights, 1..max-tokens" },
	{ "gemm_fp8", fam_gemm_fp8, "cuBLASLt fp8 e4m3 GEMMs, fast accumulation (sm_89+)" },
	{ "gemv_int4", fam_gemv_int4, "W4A16 GEMV at batch 1-8 (probe kernel, a lower bound)" },
	{ "moe_gemm", fam_moe_gemm, "MoE experts' GEMMs (cuBLAS batched) by tokens per expert" },
	{ "attn_prefill", fam_attn_prefill, "causal prefill attention, prompts and chunks" },
	{ "attn_prefill_swa", fam_attn_prefill_swa, "the same through the model's sliding window (--window)" },
	{ "attn_decode", fam_attn_decode, "paged split-K decode attention, batch 1-128" },
	{ "layer", fam_layer, "one synthetic decoder layer, decode and prefill" },
	{ "elementwise", fam_elementwise, "RMSNorm, rotary embedding, KV-cache write by tokens" },
	{ "h2d_copy", fam_h2d_copy, "pinned host to device copies" },
	{ "d2h_copy", fam_d2h_copy, "device to pinned host copies" },
	{ "peer_copy", fam_peer_copy, "copies to every peer GPU (needs two or more)" },
	{ "allreduce", fam_allreduce, "ring all-reduce over peer copies among all GPUs (two or more)" },
};
enum { N_FAMILIES = sizeof families / sizeof *families };

static void usage(FILE *f)
{
	fprintf(f,
		"usage: servesim-probe --hidden N --intermediate N --heads N --kv-heads N\n"
		"                      --head-dim N --vocab N [--tp N] [--out FILE]\n"
		"                      [--device N] [--max-tokens N] [--max-context N]\n"
		"                      [--budget-s S] [--only F,F…] [--experts E --experts-per-token K]\n"
		"                      [--window W]\n"
		"       servesim-probe --check [--out FILE]\n"
		"       servesim-probe --list\n\n"
		"Measures this GPU for `servesim calibrate fit` and writes CSV (%s)\n"
		"to FILE, or stdout when --out is absent or '-'. Rows are flushed as measured.\n\n"
		"  --tp N           tensor-parallel size: shapes are one rank's (default 1)\n"
		"  --max-tokens N   largest GEMM token count, a power of two (default 16384)\n"
		"  --max-context N  largest attention context, a power of two (default 32768)\n"
		"  --budget-s S     skip what remains after S seconds (default 240)\n"
		"  --only F,F…      run only these families (see --list)\n"
		"  --experts E      an MoE model's routed experts (moe_gemm); K: experts a token uses\n"
		"  --window W       the sliding window of the model's windowed layers (attn_prefill_swa)\n"
		"  --check          compare the kernels with naive references, then run every\n"
		"                   family on tiny shapes; exit 0 when all pass\n"
		"  --list           print the families, one a line, and exit\n"
		"Exit: 0 done, 3 some families failed (the CSV holds the rest), 1 no usable\n"
		"device or a failed check, 2 bad arguments.\n",
		PROBE_HEADER);
}

static int parse_int(const char *s, const char *name, int lo, int hi, int *out)
{
	char *end = NULL;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (!*s || *end || errno || v < lo || v > hi) {
		fprintf(stderr, "servesim-probe: --%s: expected an integer in [%d, %d], got '%s'\n", name,
			lo, hi, s);
		return -1;
	}
	*out = (int)v;
	return 0;
}

static int family_index(const char *name, size_t len)
{
	for (int i = 0; i < N_FAMILIES; i++)
		if (strlen(families[i].name) == len && !strncmp(families[i].name, name, len))
			return i;
	return -1;
}

/* "a,b" into chosen[]; -1 with a message naming the unknown family. */
static int parse_only(const char *list, bool *chosen)
{
	for (const char *s = list; *s;) {
		size_t len = strcspn(s, ",");
		int i = family_index(s, len);
		if (i < 0) {
			fprintf(stderr, "servesim-probe: --only: '%.*s' is not a family (servesim-probe --list names them)\n",
				(int)len, s);
			return -1;
		}
		chosen[i] = true;
		s += len + (s[len] == ',');
	}
	return 0;
}

/* What a failed cudaGetDeviceCount means, in the user's terms. */
static const char *device_hint(cudaError_t rc)
{
	switch (rc) {
	case cudaErrorNoDevice: return "the driver sees no CUDA device (check nvidia-smi, CUDA_VISIBLE_DEVICES)";
	case cudaErrorInsufficientDriver:
		return "the NVIDIA driver is older than this probe's CUDA runtime: update the driver, or build the probe with the CUDA toolkit the driver supports";
	case cudaErrorStubLibrary: return "only the toolkit's stub libcuda.so was found: no NVIDIA driver is installed";
	case cudaErrorSystemDriverMismatch:
		return "the kernel module and the user-space driver libraries differ in version (reboot or reinstall the driver)";
	case cudaErrorCompatNotSupportedOnDevice:
		return "the forward-compatibility driver does not support this device";
	case cudaErrorDevicesUnavailable: return "every device is busy or in exclusive/prohibited compute mode";
	case cudaErrorInitializationError: return "the driver failed to initialise (see dmesg)";
	default: return "see the CUDA error above";
	}
}

static int open_device(struct probe *p, struct cudaDeviceProp *prop)
{
	int drv = 0, rt = 0;
	(void)cudaDriverGetVersion(&drv);
	(void)cudaRuntimeGetVersion(&rt);
	cudaError_t rc = cudaGetDeviceCount(&p->n_devices);
	if (rc == cudaSuccess && p->n_devices == 0)
		rc = cudaErrorNoDevice;
	if (rc != cudaSuccess) {
		fprintf(stderr, "servesim-probe: no usable CUDA device: cudaGetDeviceCount: %s (%s); driver supports CUDA %d.%d%s, probe built for runtime %d.%d: %s\n",
			cudaGetErrorString(rc), cudaGetErrorName(rc), drv / 1000, drv % 1000 / 10,
			drv ? "" : " (no driver found)", rt / 1000, rt % 1000 / 10,
			drv ? device_hint(rc) : "no NVIDIA driver is installed or loaded (libcuda.so.1 not found): install it, then check nvidia-smi");
		return -1;
	}
	if (p->device >= p->n_devices) {
		fprintf(stderr, "servesim-probe: --device %d: only %d device(s)\n", p->device, p->n_devices);
		return -2;
	}
	rc = cudaGetDeviceProperties(prop, p->device);
	if (rc != cudaSuccess) {
		fprintf(stderr, "servesim-probe: no usable CUDA device: cudaGetDeviceProperties(%d): %s\n",
			p->device, cudaGetErrorString(rc));
		return -1;
	}
	if (prop->major < 8) {
		fprintf(stderr, "servesim-probe: %s is sm_%d%d; the kernels need sm_80 or newer\n", prop->name,
			prop->major, prop->minor);
		return -1;
	}
	p->cc_major = prop->major;
	p->cc_minor = prop->minor;
	p->sms = prop->multiProcessorCount;
	p->l2_bytes = (size_t)prop->l2CacheSize;
	return 0;
}

/* A context that failed: drop its handles, reset the device when the
 * error stuck, make new handles. 0 when the device is usable again. */
static int recover(struct probe *p)
{
	(void)cudaGetLastError();
	int sticky = cudaDeviceSynchronize() != cudaSuccess;
	probe_free_all(p);
	if (sticky) {
		probe_handles_destroy(p);
		if (cudaDeviceReset() != cudaSuccess)
			return -1;
		try {
			probe_handles_create(p);
			attn_set_smem_limits(p);
		} catch (const probe_error &e) {
			fprintf(stderr, "servesim-probe: after a reset: %s\n", e.msg);
			return -1;
		}
		probe_note(p, "reset", "the device was reset after a sticky error");
	}
	return 0;
}

/* Runs one family; 0 when it ran, 1 when it failed (and was logged), -1
 * when the device cannot be used any more. */
static int run_family(struct probe *p, const struct family *f)
{
	p->family = f->name;
	int rows0 = p->rows, rc = 0;
	double t0 = probe_now_s();
	try {
		f->run(p);
		CK(cudaStreamSynchronize(p->stream));
		probe_note_clocks(p);
	} catch (const probe_error &e) {
		probe_note(p, "failed", "%s: %s", f->name, e.msg);
		fprintf(stderr, "servesim-probe: family %s failed: %s\n", f->name, e.msg);
		rc = recover(p) ? -1 : 1;
	}
	probe_note(p, "family", "%s rows=%d seconds=%.1f%s", f->name, p->rows - rows0,
		   probe_now_s() - t0, rc ? " failed" : "");
	p->family = NULL;
	return rc;
}

static void write_header(struct probe *p, const struct cudaDeviceProp *prop)
{
	size_t free_b = 0, total_b = 0;
	CK(cudaMemGetInfo(&free_b, &total_b));
	probe_note(p, "servesim-probe", "%d", PROBE_VERSION);
	probe_note(p, "device", "%s", prop->name);
	probe_note(p, "sm", "%d%d", prop->major, prop->minor);
	probe_note(p, "sms", "%d", prop->multiProcessorCount);
	probe_note(p, "memory_gib", "%.2f", (double)total_b / 1073741824.0);
	probe_note(p, "l2_mib", "%.1f", (double)p->l2_bytes / 1048576.0);
	probe_note(p, "gpus", "%d", p->n_devices);
	probe_note_environment(p);
	char moe[96] = "";
	if (p->experts)
		snprintf(moe, sizeof moe, " experts=%d experts_per_token=%d", p->experts, p->experts_per_token);
	if (p->window)
		snprintf(moe + strlen(moe), sizeof moe - strlen(moe), " window=%d", p->window);
	probe_note(p, "dims", "hidden=%d intermediate=%d heads=%d kv_heads=%d head_dim=%d vocab=%d tp=%d%s",
		   p->d.hidden, p->d.intermediate, p->d.heads, p->d.kv_heads, p->d.head_dim, p->d.vocab,
		   p->d.tp, moe);
	fprintf(p->out, "%s\n", PROBE_HEADER);
	fflush(p->out);
}

/* --check: the references, then every family on tiny shapes (main sets
 * them: a small GQA model, 8 query heads on 2 KV heads of 128, hidden and
 * FFN 1024 so every GEMV shape runs, 4 experts, 64 tokens, 512 context). */
static int run_check(struct probe *p, const bool *chosen)
{
	int ok = 1;
	try {
		ok &= probe_attn_check(p);
		ok &= probe_gemm_fp8_check(p);
		ok &= probe_gemv_int4_check(p);
	} catch (const probe_error &e) {
		printf("check: FAILED: %s\n", e.msg);
		ok = 0;
		if (recover(p))
			return 0;
	}
	for (int i = 0; i < N_FAMILIES; i++) {
		if (!chosen[i])
			continue;
		int rows0 = p->rows;
		int rc = run_family(p, &families[i]);
		printf("check: family %-37s %s (%d rows)\n", families[i].name, rc ? "FAILED" : "ok",
		       p->rows - rows0);
		ok &= rc == 0;
		if (rc < 0)
			break;
	}
	return ok;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "budget-s", required_argument, NULL, 'b' },
		{ "check", no_argument, NULL, 'c' },
		{ "experts", required_argument, NULL, 'E' },
		{ "experts-per-token", required_argument, NULL, 'K' },
		{ "window", required_argument, NULL, 'W' },
		{ "device", required_argument, NULL, 'D' },
		{ "head-dim", required_argument, NULL, 'd' },
		{ "heads", required_argument, NULL, 'a' },
		{ "help", no_argument, NULL, 'h' },
		{ "hidden", required_argument, NULL, 'H' },
		{ "intermediate", required_argument, NULL, 'I' },
		{ "kv-heads", required_argument, NULL, 'k' },
		{ "list", no_argument, NULL, 'l' },
		{ "max-context", required_argument, NULL, 'C' },
		{ "max-tokens", required_argument, NULL, 'T' },
		{ "only", required_argument, NULL, 'O' },
		{ "out", required_argument, NULL, 'o' },
		{ "tp", required_argument, NULL, 't' },
		{ "vocab", required_argument, NULL, 'v' },
		{ 0, 0, 0, 0 },
	};
	struct probe p{};   /* value-initialised: zeros, empty vectors */
	p.d = (struct dims){ 0, 0, 0, 0, 0, 0, 1 };
	p.max_tokens = 16384;
	p.max_context = 32768;
	int budget = 240, c;
	bool chosen[N_FAMILIES], only = false;
	for (int i = 0; i < N_FAMILIES; i++)
		chosen[i] = true;
	const char *out_path = NULL;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		int bad = 0;
		switch (c) {
		case 'b': bad = parse_int(optarg, "budget-s", 1, 86400, &budget); break;
		case 'c': p.check = 1; break;
		case 'E': bad = parse_int(optarg, "experts", 0, 4096, &p.experts); break;
		case 'K': bad = parse_int(optarg, "experts-per-token", 1, 4096, &p.experts_per_token); break;
		case 'W': bad = parse_int(optarg, "window", 0, 1 << 24, &p.window); break;
		case 'D': bad = parse_int(optarg, "device", 0, 1024, &p.device); break;
		case 'd': bad = parse_int(optarg, "head-dim", 1, 1024, &p.d.head_dim); break;
		case 'a': bad = parse_int(optarg, "heads", 1, 4096, &p.d.heads); break;
		case 'h': usage(stdout); return 0;
		case 'H': bad = parse_int(optarg, "hidden", 16, 1 << 20, &p.d.hidden); break;
		case 'I': bad = parse_int(optarg, "intermediate", 16, 1 << 22, &p.d.intermediate); break;
		case 'k': bad = parse_int(optarg, "kv-heads", 1, 4096, &p.d.kv_heads); break;
		case 'l':
			for (int i = 0; i < N_FAMILIES; i++)
				printf("%s\t%s\n", families[i].name, families[i].what);
			return 0;
		case 'C': bad = parse_int(optarg, "max-context", 128, 1 << 20, &p.max_context); break;
		case 'T': bad = parse_int(optarg, "max-tokens", 1, 1 << 20, &p.max_tokens); break;
		case 'O':
			if (!only)
				for (int i = 0; i < N_FAMILIES; i++)
					chosen[i] = false;
			only = true;
			bad = parse_only(optarg, chosen);
			break;
		case 'o': out_path = optarg; break;
		case 't': bad = parse_int(optarg, "tp", 1, 64, &p.d.tp); break;
		case 'v': bad = parse_int(optarg, "vocab", 16, 1 << 24, &p.d.vocab); break;
		default: usage(stderr); return 2;
		}
		if (bad)
			return 2;
	}
	p.budget_s = budget;
	if (optind < argc) {
		fprintf(stderr, "servesim-probe: unexpected argument '%s'\n", argv[optind]);
		return 2;
	}
	if (!p.check && (!p.d.hidden || !p.d.intermediate || !p.d.heads || !p.d.kv_heads ||
			 !p.d.head_dim || !p.d.vocab)) {
		fprintf(stderr, "servesim-probe: --hidden, --intermediate, --heads, --kv-heads, --head-dim and --vocab are required (servesim calibrate gpu passes the model's)\n");
		return 2;
	}
	if (!p.check && (p.d.heads % p.d.kv_heads || p.d.heads % p.d.tp || p.d.intermediate % p.d.tp ||
			 p.d.head_dim % 16)) {
		fprintf(stderr, "servesim-probe: heads must be a multiple of kv-heads, heads and intermediate multiples of tp, head-dim a multiple of 16\n");
		return 2;
	}
	if (p.check) {   /* run_check's tiny shapes, recorded in `# dims:` */
		p.d = (struct dims){ 1024, 1024, 8, 2, 128, 1024, 1 };
		p.max_tokens = 64;
		p.max_context = 512;
		p.experts = 4;
		p.experts_per_token = 2;
	}
	if (p.experts && !p.experts_per_token)
		p.experts_per_token = 1;
	p.heads_r = p.d.heads / p.d.tp;
	p.kv_r = p.d.kv_heads >= p.d.tp ? p.d.kv_heads / p.d.tp : 1;
	p.inter_r = p.d.intermediate / p.d.tp;
	p.vocab_r = (p.d.vocab + p.d.tp - 1) / p.d.tp;

	struct cudaDeviceProp prop;
	int orc = open_device(&p, &prop);
	if (orc)
		return orc == -2 ? 2 : 1;
	p.out = stdout;
	if (out_path && strcmp(out_path, "-")) {
		p.out = fopen(out_path, "w");
		if (!p.out) {
			fprintf(stderr, "servesim-probe: %s: cannot write: %s\n", out_path, strerror(errno));
			return 1;
		}
	}
	FILE *msgs = p.out == stdout ? stderr : stdout;
	if (p.check && p.out == stdout) {
		/* --check prints its verdicts on stdout; the rows go nowhere. */
		p.out = fopen("/dev/null", "w");
		msgs = stdout;
	}
	try {
		probe_handles_create(&p);
		attn_set_smem_limits(&p);
	} catch (const probe_error &e) {
		fprintf(stderr, "servesim-probe: no usable CUDA device: %s\n", e.msg);
		return 1;
	}
	probe_nvml_open(&p);
	p.t_start_s = probe_now_s();
	int failed = 0, lost = 0;
	try {
		write_header(&p, &prop);
		p.family = "warmup";
		probe_warmup(&p);
		p.family = NULL;
	} catch (const probe_error &e) {
		probe_note(&p, "failed", "warmup: %s", e.msg);
		lost = recover(&p) != 0;
	}
	if (p.check) {
		int ok = !lost && run_check(&p, chosen);
		fprintf(msgs, "check: %s\n", ok ? "all ok" : "FAILED");
		failed = !ok;
	} else {
		for (int i = 0; i < N_FAMILIES && !lost; i++) {
			if (!chosen[i])
				continue;
			int rc = run_family(&p, &families[i]);
			failed += rc != 0;
			lost = rc < 0;
		}
	}
	probe_note(&p, "elapsed_s", "%.1f", probe_now_s() - p.t_start_s);
	probe_nvml_close(&p);
	probe_free_all(&p);
	probe_handles_destroy(&p);
	int werr = ferror(p.out) || (p.out != stdout ? fclose(p.out) : fflush(stdout));
	if (werr) {
		fprintf(stderr, "servesim-probe: %s: cannot write: %s\n", out_path ? out_path : "stdout",
			strerror(errno));
		return 1;
	}
	if (!p.check)
		fprintf(stderr, "servesim-probe: %d measurements in %.1f s%s\n", p.rows,
			probe_now_s() - p.t_start_s, failed ? "; some families failed (see # failed:)" : "");
	if (lost)
		fprintf(stderr, "servesim-probe: the device could not be recovered; the CSV holds what was measured before\n");
	return p.check ? (failed ? 1 : 0) : failed ? 3 : 0;
}
