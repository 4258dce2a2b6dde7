#include "probecsv.h"

#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "csv.h"
#include "num.h"
#include "xalloc.h"

const char *const probe_kind_names[] = {
	"stream_read", "d2d_copy", "gemm",     "attn_prefill", "attn_decode",
	"layer",       "h2d_copy", "d2h_copy", "peer_copy",    "launch",      "moe_gemm", "allreduce", "elementwise", NULL
};
const char *const probe_dtype_names[] = { "none", "bf16", "fp8", "int4", NULL };

#define HEADER "kind,shape,tokens,context,dtype,time_us,bytes,flops"
#define HEADER_V2 HEADER ",kernel,graph,reps,p10_us,p90_us,frac_bw,frac_peak"
#define N_FIELDS 8
#define N_FIELDS_V2 15

static void chomp(char *s)
{
	size_t n = strlen(s);
	while (n > 0 && (s[n - 1] == '\n' || s[n - 1] == '\r' || s[n - 1] == ' ' || s[n - 1] == '\t'))
		s[--n] = '\0';
}

/* "# dims: hidden=4096 intermediate=14336 …" */
static int parse_dims(struct probe_data *d, const char *text, int line, struct err *e)
{
	static const struct {
		const char *name;
		size_t off;
	} keys[] = {
		{ "hidden", offsetof(struct probe_dims, hidden) },
		{ "intermediate", offsetof(struct probe_dims, intermediate) },
		{ "heads", offsetof(struct probe_dims, heads) },
		{ "kv_heads", offsetof(struct probe_dims, kv_heads) },
		{ "head_dim", offsetof(struct probe_dims, head_dim) },
		{ "vocab", offsetof(struct probe_dims, vocab) },
		{ "tp", offsetof(struct probe_dims, tp) },
		{ "experts", offsetof(struct probe_dims, experts) },   /* optional from here */
		{ "experts_per_token", offsetof(struct probe_dims, experts_per_token) },
		{ "window", offsetof(struct probe_dims, window) },
	};
	enum { N_REQUIRED = 7 };
	enum { N = sizeof keys / sizeof *keys };
	bool seen[N] = { false };
	char buf[512], *save = NULL;
	snprintf(buf, sizeof buf, "%s", text);
	for (char *tok = strtok_r(buf, " \t", &save); tok; tok = strtok_r(NULL, " \t", &save)) {
		char *eq = strchr(tok, '=');
		size_t k = 0;
		if (eq) {
			*eq = '\0';
			while (k < N && strcmp(keys[k].name, tok))
				k++;
		}
		int64_t v;
		if (!eq || k == N || num_parse_int64(eq + 1, &v) || v < 1)
			return err_set(e, "%s:%d: dims: expected NAME=N with NAME among hidden, intermediate, heads, kv_heads, head_dim, vocab, tp, experts, experts_per_token, window and N >= 1, got '%s%s%s'",
				       d->path, line, tok, eq ? "=" : "", eq ? eq + 1 : "");
		*(int64_t *)((char *)&d->dims + keys[k].off) = v;
		seen[k] = true;
	}
	for (size_t k = 0; k < N_REQUIRED; k++)
		if (!seen[k])
			return err_set(e, "%s:%d: dims: %s: missing", d->path, line, keys[k].name);
	d->has_dims = true;
	return 0;
}

/* "family=gemm_bf16 sm_mhz=1980 … throttle=none": a record of what the
 * GPU ran at, informative only (bad values are left at 0). */
static void parse_clocks(struct probe_data *d, const char *text)
{
	if (d->n_clocks >= PROBECSV_MAX_CLOCKS)
		return;
	struct probe_clocks *c = &d->clocks[d->n_clocks++];
	memset(c, 0, sizeof *c);
	char buf[512], *save = NULL;
	snprintf(buf, sizeof buf, "%s", text);
	for (char *tok = strtok_r(buf, " \t", &save); tok; tok = strtok_r(NULL, " \t", &save)) {
		char *eq = strchr(tok, '=');
		if (!eq)
			continue;
		*eq++ = '\0';
		double v;
		if (!strcmp(tok, "family"))
			snprintf(c->family, sizeof c->family, "%s", eq);
		else if (!strcmp(tok, "throttle"))
			snprintf(c->throttle, sizeof c->throttle, "%s", eq);
		else if (num_parse_double(eq, &v) || v < 0)
			continue;
		else if (!strcmp(tok, "sm_mhz"))
			c->sm_mhz = v;
		else if (!strcmp(tok, "mem_mhz"))
			c->mem_mhz = v;
		else if (!strcmp(tok, "power_w"))
			c->power_w = v;
	}
}

bool probecsv_throttled(const struct probe_clocks *c)
{
	static const char *const slow[] = { "sw_power_cap", "hw_slowdown", "sw_thermal", "hw_thermal",
					    "hw_power_brake" };
	for (size_t i = 0; i < sizeof slow / sizeof *slow; i++)
		if (strstr(c->throttle, slow[i]))
			return true;
	return false;
}

static int parse_comment(struct probe_data *d, const char *s, int line, struct err *e)
{
	s++;                               /* '#' */
	while (*s == ' ')
		s++;
	const char *colon = strchr(s, ':');
	if (!colon)
		return 0;                  /* free text */
	size_t klen = (size_t)(colon - s);
	const char *val = colon + 1;
	while (*val == ' ')
		val++;
	if (klen == 6 && !strncmp(s, "device", 6)) {
		snprintf(d->device, sizeof d->device, "%s", val);
	} else if (klen == 6 && !strncmp(s, "clocks", 6)) {
		parse_clocks(d, val);
	} else if (klen == 6 && !strncmp(s, "failed", 6) && d->n_failed < PROBECSV_MAX_FAILED) {
		size_t n = strcspn(val, ":");
		snprintf(d->failed[d->n_failed++], sizeof d->failed[0], "%.*s", (int)(n < 47 ? n : 47), val);
	}
	else if (klen == 4 && !strncmp(s, "dims", 4))
		return parse_dims(d, val, line, e);
	return 0;
}

static int index_of(const char *const *names, const char *s)
{
	for (int i = 0; names[i]; i++)
		if (!strcmp(names[i], s))
			return i;
	return -1;
}

/* NAME_nN_kK → N, K. */
static bool gemm_dims(const char *shape, int64_t *n, int64_t *k)
{
	const char *pn = strstr(shape, "_n");
	while (pn) {
		char *end;
		errno = 0;
		long long vn = strtoll(pn + 2, &end, 10);
		if (end != pn + 2 && !strncmp(end, "_k", 2)) {
			char *end2;
			long long vk = strtoll(end + 2, &end2, 10);
			if (end2 != end + 2 && *end2 == '\0' && vn > 0 && vk > 0 && errno == 0) {
				*n = vn;
				*k = vk;
				return true;
			}
		}
		pn = strstr(pn + 1, "_n");
	}
	return false;
}

static int bad(const struct probe_data *d, int line, const char *field, const char *expect,
	       const char *got, struct err *e)
{
	return err_set(e, "%s:%d: %s: expected %s, got '%s'", d->path, line, field, expect, got);
}

/* The version-2 columns: f[8..14]. */
static int parse_v2(struct probe_data *d, struct probe_row *r, char **f, int line, struct err *e)
{
	if (!*f[8] || strlen(f[8]) >= sizeof r->kernel)
		return bad(d, line, "kernel", "a kernel name of 1 to 47 characters", f[8], e);
	snprintf(r->kernel, sizeof r->kernel, "%s", f[8]);
	if (strcmp(f[9], "0") && strcmp(f[9], "1"))
		return bad(d, line, "graph", "0 or 1", f[9], e);
	r->graph = f[9][0] == '1';
	if (num_parse_int64(f[10], &r->reps) || r->reps < 0)
		return bad(d, line, "reps", "an integer >= 0", f[10], e);
	static const char *const names[] = { "p10_us", "p90_us", "frac_bw", "frac_peak" };
	double *dst[] = { &r->p10_us, &r->p90_us, &r->frac_bw, &r->frac_peak };
	for (int i = 0; i < 4; i++)
		if (num_parse_double(f[11 + i], dst[i]) || !(*dst[i] >= 0) || *dst[i] > 1e12)
			return bad(d, line, names[i], "a number >= 0", f[11 + i], e);
	return 0;
}

/* Row s (its line break dropped), split into row (the caller's, reused
 * line after line). */
static int parse_row(struct probe_data *d, const char *s, struct csv_row *row, int line, struct err *e)
{
	int n = csv_split(s, strlen(s), row), want = d->version == 2 ? N_FIELDS_V2 : N_FIELDS;
	char **f = row->f;
	if (n < 0)
		return err_set(e, "%s:%d: expected %d comma-separated fields (%s), got a quote that is not closed",
			       d->path, line, want, d->version == 2 ? HEADER_V2 : HEADER);
	if (n != want)
		return err_set(e, "%s:%d: expected %d comma-separated fields (%s), got %d", d->path, line,
			       want, d->version == 2 ? HEADER_V2 : HEADER, n);
	struct probe_row r = { .line = line };
	r.kind = index_of(probe_kind_names, f[0]);
	if (r.kind < 0)
		return bad(d, line, "kind",
			   "stream_read, d2d_copy, h2d_copy, d2h_copy, peer_copy, allreduce, launch, elementwise, gemm, moe_gemm, attn_prefill, attn_decode or layer",
			   f[0], e);
	if (!*f[1] || strlen(f[1]) >= sizeof r.shape)
		return bad(d, line, "shape", "a name of 1 to 47 characters", f[1], e);
	snprintf(r.shape, sizeof r.shape, "%s", f[1]);
	if (num_parse_int64(f[2], &r.tokens) || r.tokens < 0)
		return bad(d, line, "tokens", "an integer >= 0", f[2], e);
	if (num_parse_int64(f[3], &r.context) || r.context < 0)
		return bad(d, line, "context", "an integer >= 0", f[3], e);
	r.dtype = !strcmp(f[4], "fp16") ? PROBE_DT_BF16 : index_of(probe_dtype_names, f[4]);
	if (r.dtype < 0)
		return bad(d, line, "dtype", "none, bf16, fp16, fp8 or int4", f[4], e);
	if (num_parse_double(f[5], &r.time_us) || !(r.time_us > 0) || r.time_us > 1e12)
		return bad(d, line, "time_us", "a time in microseconds > 0", f[5], e);
	if (num_parse_double(f[6], &r.bytes) || !(r.bytes >= 0) || r.bytes > 1e18)
		return bad(d, line, "bytes", "a byte count >= 0", f[6], e);
	if (num_parse_double(f[7], &r.flops) || !(r.flops >= 0) || r.flops > 1e21)
		return bad(d, line, "flops", "a FLOP count >= 0", f[7], e);
	if (d->version == 2 && parse_v2(d, &r, f, line, e))
		return -1;
	switch (r.kind) {
	case PROBE_LAUNCH:
		break;
	case PROBE_STREAM_READ:
	case PROBE_D2D_COPY:
	case PROBE_H2D_COPY:
	case PROBE_D2H_COPY:
	case PROBE_PEER_COPY:
		if (!(r.bytes > 0))
			return bad(d, line, "bytes", "bytes moved > 0 for a bandwidth row", f[6], e);
		break;
	case PROBE_GEMM:
		if (!gemm_dims(r.shape, &r.gemm_n, &r.gemm_k))
			return bad(d, line, "shape", "a weight named NAME_nN_kK for a gemm row", f[1], e);
		if (r.tokens < 1)
			return bad(d, line, "tokens", "an integer >= 1 for a gemm row", f[2], e);
		if (r.dtype == PROBE_DT_NONE)
			return bad(d, line, "dtype", "bf16, fp16 or fp8 for a gemm row", f[4], e);
		break;
	case PROBE_ELEMENTWISE:
		if (!(r.bytes > 0) || r.tokens < 1)
			return bad(d, line, r.tokens < 1 ? "tokens" : "bytes",
				   "tokens >= 1 and bytes > 0 for an elementwise row", r.tokens < 1 ? f[2] : f[6], e);
		break;
	case PROBE_ALLREDUCE:
		if (!(r.bytes > 0))
			return bad(d, line, "bytes", "the buffer size > 0 for an allreduce row", f[6], e);
		if (r.tokens < 2)
			return bad(d, line, "tokens", "the GPUs in the ring (>= 2) for an allreduce row", f[2], e);
		break;
	case PROBE_MOE_GEMM: {
		long long ne, k, h, i;
		char tail;
		if (sscanf(r.shape, "moe_e%lld_k%lld_h%lld_i%lld%c", &ne, &k, &h, &i, &tail) != 4 || ne < 1 ||
		    k < 1 || k > ne || h < 1 || i < 1)
			return bad(d, line, "shape", "moe_eE_kK_hH_iI with 1 <= K <= E for a moe_gemm row", f[1], e);
		r.moe_experts = ne;
		r.moe_top_k = k;
		r.gemm_n = h;
		r.gemm_k = i;
		if (r.tokens < 1)
			return bad(d, line, "tokens", "an integer >= 1 (tokens per expert) for a moe_gemm row", f[2], e);
		break;
	}
	case PROBE_ATTN_PREFILL:
	case PROBE_ATTN_DECODE:
	case PROBE_LAYER:
		if (r.kind == PROBE_ATTN_PREFILL) {
			const char *w = strrchr(r.shape, '_');
			if (w && w[1] == 'w' && (num_parse_int64(w + 2, &r.window) || r.window < 1))
				return bad(d, line, "shape", "NAME_wW with a window W >= 1 for a windowed attn_prefill row",
					   f[1], e);
			if (!w || w[1] != 'w')
				r.window = 0;
		}
		if (r.tokens < 1)
			return bad(d, line, "tokens", "an integer >= 1 (chunk tokens or sequences)", f[2], e);
		if (r.kind == PROBE_ATTN_DECODE && r.context < 1)
			return bad(d, line, "context", "an integer >= 1 (KV tokens read) for attn_decode", f[3], e);
		if (r.kind == PROBE_LAYER) {
			if (strcmp(r.shape, "decode") && strcmp(r.shape, "prefill"))
				return bad(d, line, "shape", "decode or prefill for a layer row", f[1], e);
			r.decode = !strcmp(r.shape, "decode");
			if (r.decode && r.context < 1)
				return bad(d, line, "context", "an integer >= 1 for a decode layer", f[3], e);
		}
		break;
	}
	xgrow(&d->rows, &d->cap, d->len + 1, sizeof *d->rows);
	d->rows[d->len++] = r;
	return 0;
}

int probecsv_load(struct probe_data *d, const char *path, struct err *e)
{
	memset(d, 0, sizeof *d);
	snprintf(d->path, sizeof d->path, "%s", path);
	FILE *f = fopen(path, "r");
	if (!f)
		return err_set(e, "%s: cannot open: %s", path, strerror(errno));
	char *buf = NULL;
	size_t cap = 0;
	int line = 0, rc = 0;
	bool header = false;
	struct csv_row row = { 0 };
	ssize_t got;
	while ((got = getline(&buf, &cap, f)) != -1) {
		line++;
		bool whole = got > 0 && buf[got - 1] == '\n';
		chomp(buf);
		if (!buf[0])
			continue;
		if (buf[0] == '#') {
			if ((rc = parse_comment(d, buf, line, e)))
				break;
			continue;
		}
		if (!header) {
			d->version = !strcmp(buf, HEADER) ? 1 : !strcmp(buf, HEADER_V2) ? 2 : 0;
			if (!d->version) {
				rc = err_set(e, "%s:%d: expected the header '%s' or '%s' (a servesim-probe CSV), got '%.80s'",
					     path, line, HEADER, HEADER_V2, buf);
				break;
			}
			header = true;
			continue;
		}
		/* Only the last line can lack its newline. The probe writes each
		 * version-2 row with its newline in one call, so such a line was
		 * cut short even if what is left parses (a number cut mid-way). */
		if (!whole && d->version == 2) {
			d->truncated = true;
			break;
		}
		if ((rc = parse_row(d, buf, &row, line, e))) {
			if (!whole) {   /* a cut-short version-1 row */
				d->truncated = true;
				rc = 0;
			}
			break;
		}
	}
	if (!rc && ferror(f))
		rc = err_set(e, "%s: read error: %s", path, strerror(errno));
	csv_row_free(&row);
	free(buf);
	fclose(f);
	if (!rc && d->len == 0)
		rc = err_set(e, "%s: no measurements (expected the header '%s' and rows)", path, HEADER);
	return rc;
}

int probecsv_append(struct probe_data *d, const char *path, struct err *e)
{
	struct probe_data more;
	int rc = probecsv_load(&more, path, e);
	if (!rc && strcmp(more.device, d->device))
		rc = err_set(e, "%s: device '%s', but %s measured '%s'", path, more.device, d->path, d->device);
	if (!rc && more.has_dims && d->has_dims && memcmp(&more.dims, &d->dims, sizeof d->dims))
		rc = err_set(e, "%s: its '# dims:' differ from %s's: not the same model", path, d->path);
	if (!rc) {
		if (!d->has_dims && more.has_dims) {
			d->dims = more.dims;
			d->has_dims = true;
		}
		size_t kept = 0;   /* d's rows of a kind and dtype the rerun does not have */
		for (size_t i = 0; i < d->len; i++) {
			bool redone = false;
			for (size_t j = 0; j < more.len && !redone; j++)
				redone = more.rows[j].kind == d->rows[i].kind && more.rows[j].dtype == d->rows[i].dtype;
			if (!redone)
				d->rows[kept++] = d->rows[i];
		}
		d->len = kept;
		xgrow(&d->rows, &d->cap, d->len + more.len, sizeof *d->rows);
		memcpy(d->rows + d->len, more.rows, more.len * sizeof *more.rows);
		d->len += more.len;
		d->truncated |= more.truncated;
		for (int i = 0; i < more.n_failed && d->n_failed < PROBECSV_MAX_FAILED; i++)
			memcpy(d->failed[d->n_failed++], more.failed[i], sizeof more.failed[i]);
		for (int i = 0; i < more.n_clocks && d->n_clocks < PROBECSV_MAX_CLOCKS; i++)
			d->clocks[d->n_clocks++] = more.clocks[i];
	}
	probecsv_free(&more);
	return rc;
}

void probecsv_free(struct probe_data *d)
{
	free(d->rows);
	d->rows = NULL;
	d->len = d->cap = 0;
}

/* Does name occur in device as a whole word (no letter or digit either
 * side)? "H200" is not in "GH200 480GB", "L4" not in "L40S". */
static bool has_word(const char *device, const char *name)
{
	size_t n = strlen(name);
	for (const char *p = strstr(device, name); p; p = strstr(p + 1, name))
		if ((p == device || !isalnum((unsigned char)p[-1])) && !isalnum((unsigned char)p[n]))
			return true;
	return false;
}

const char *probecsv_hardware_id(const char *device)
{
	/* cudaGetDeviceProperties names, matched as whole words, the longer
	 * name first where one holds another (H100 NVL before H100). A GH200
	 * (Grace Hopper: its own memory system and power limit) and an H200
	 * NVL (the 600 W PCIe card) have profiles of their own: neither takes
	 * the H200 SXM's. "GH200 480GB" is the 96 GB HBM3 module (480 GB is
	 * its Grace LPDDR5X), "GH200 144G" the HBM3e one; a GH200 named
	 * otherwise stays unknown rather than guess its memory. */
	static const struct {
		const char *name, *id;
	} map[] = {
		{ "H100 NVL", "h100-nvl" },         { "H100 PCIe", "h100-pcie" },
		{ "H100", "h100-sxm" },             { "GH200 480GB", "gh200" },
		{ "GH200 144G", "gh200-144gb" },    { "GH200", NULL },
		{ "H200 NVL", "h200-nvl" },         { "H200", "h200-sxm" },
		{ "GB200", "gb200" },               { "B200", "b200" },
		{ "A100-SXM4-80GB", "a100-80gb-sxm" }, { "A100-SXM4-40GB", "a100-40gb-sxm" },
		{ "A100 80GB PCIe", "a100-80gb-pcie" }, { "A100-PCIE-40GB", "a100-40gb-pcie" },
		{ "A10G", "a10g" },                 { "L40S", "l40s" },
		{ "L4", "l4" },                     { "RTX 4090", "rtx-4090" },
		{ "RTX 5090", "rtx-5090" },
	};
	for (size_t i = 0; i < sizeof map / sizeof *map; i++)
		if (has_word(device, map[i].name))
			return map[i].id;
	return NULL;
}
