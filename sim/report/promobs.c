/*
 * promobs: request metrics summed in time order as requests are done
 * (promobs.h).
 */
#include "promobs.h"
#include "report_int.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "heap.h"
#include "timeline.h"
#include "xalloc.h"

#define N_RM (RM_PREEMPTIONS + 1)
#define GRID_CAP 160

/* One request's observations recorded at one time: its first token's
 * (TTFT, prompt tokens) or its finish's (the rest). */
struct pending {
	int64_t t_ns, id;
	int replica;
	unsigned has;        /* bit m: v[m] is one of these observations */
	double v[N_RM];
};

struct series_acc {
	int64_t *counts;     /* N_RM x (n_grid + 1) */
	double sum[N_RM];
};

struct promobs {
	double grid[GRID_CAP];   /* every edge, ascending */
	size_t n_grid;
	struct series_acc *acc;  /* [0]: every request; [i + 1]: replica i */
	int n_acc;
	struct pending *heap;    /* a binary min-heap by (t_ns, id) */
	size_t n_heap, cap_heap;
	promobs_settle_fn *on_settle;   /* optional watcher (promobs_on_settle) */
	void *settle_ctx;
};

static int by_value(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

struct promobs *promobs_create(void)
{
	struct promobs *p = xcalloc(1, sizeof *p);
	const struct {
		const double *v;
		size_t n;
	} sets[] = {
		{ report_ttft_buckets, report_n_ttft_buckets },
		{ report_e2e_buckets, report_n_e2e_buckets },
		{ report_prefill_token_buckets, report_n_prefill_token_buckets },
		{ report_params_n_buckets, report_n_params_n_buckets },
		{ timeline_itl_edges, TIMELINE_N_ITL },
	};
	double all[GRID_CAP];
	size_t n = report_buckets_125(INT64_C(1000000000000000), all, 64);
	for (size_t s = 0; s < sizeof sets / sizeof *sets; s++) {
		assert(n + sets[s].n <= GRID_CAP);
		memcpy(all + n, sets[s].v, sets[s].n * sizeof *all);
		n += sets[s].n;
	}
	qsort(all, n, sizeof *all, by_value);
	for (size_t i = 0; i < n; i++)
		if (!p->n_grid || all[i] != p->grid[p->n_grid - 1])
			p->grid[p->n_grid++] = all[i];
	return p;
}

void promobs_destroy(struct promobs *p)
{
	if (!p)
		return;
	for (int i = 0; i < p->n_acc; i++)
		free(p->acc[i].counts);
	free(p->acc);
	free(p->heap);
	free(p);
}

bool promobs_value(const struct request *r, enum req_metric m, int64_t *t_ns, double *v)
{
	const double ns = 1e9;
	*t_ns = r->finish_ns;
	switch (m) {
	case RM_TTFT:
		*t_ns = r->first_token_ns;
		*v = (double)(r->first_token_ns - r->send_ns) / ns;
		break;
	case RM_E2E:
		*v = (double)(r->finish_ns - r->send_ns) / ns;
		break;
	case RM_QUEUE:
		*v = (double)(r->first_scheduled_ns - r->enqueue_ns) / ns;
		break;
	case RM_INFERENCE:
		*v = (double)(r->last_token_ns - r->first_scheduled_ns) / ns;
		break;
	case RM_PREFILL:
		*v = (double)(r->first_token_ns - r->first_scheduled_ns) / ns;
		break;
	case RM_DECODE:
		*v = (double)(r->last_token_ns - r->first_token_ns) / ns;
		break;
	case RM_PREFILL_PER_TOKEN:
		if (r->prompt_len <= 0)
			return false;
		*v = (double)(r->first_token_ns - r->first_scheduled_ns) / ns / r->prompt_len;
		break;
	case RM_REQUEST_TPOT:
		if (r->output_len <= 1)
			return false;
		*v = (double)(r->last_token_ns - r->first_token_ns) / ns / (r->output_len - 1);
		break;
	case RM_PROMPT_TOKENS:
		*t_ns = r->first_token_ns;
		*v = r->prompt_len;
		break;
	case RM_GENERATION_TOKENS:
		*v = r->output_len;
		break;
	case RM_ONE:
		*v = 1;
		break;
	case RM_PREEMPTIONS:
		*v = r->preemptions;
		break;
	}
	return true;
}

static bool before(const struct pending *a, const struct pending *b)
{
	return a->t_ns < b->t_ns || (a->t_ns == b->t_ns && a->id < b->id);
}

HEAP_DEFINE(settle_heap, struct pending, before)

/* Index of the first grid edge >= v (Prometheus: a value counts in every
 * bucket whose le is >= it), n_grid when above them all. */
static size_t grid_bucket(const double *grid, size_t n, double v)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (grid[mid] >= v)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

static struct series_acc *series(struct promobs *p, int k)
{
	if (k >= p->n_acc) {
		p->acc = xrealloc(p->acc, (size_t)(k + 1) * sizeof *p->acc);
		for (int i = p->n_acc; i <= k; i++) {
			memset(&p->acc[i], 0, sizeof p->acc[i]);
			p->acc[i].counts = xcalloc(N_RM * (p->n_grid + 1), sizeof *p->acc[i].counts);
		}
		p->n_acc = k + 1;
	}
	return &p->acc[k];
}

/* The heap's first entry into the sums of every request's series and its
 * replica's. */
static void settle_one(struct promobs *p)
{
	const struct pending *e = &p->heap[0];
	if (p->on_settle)
		p->on_settle(p->settle_ctx, p, e->t_ns);
	/* Every request's series, and its replica's when it has one (a
	 * request no replica took counts once). */
	int n_to = e->replica >= 0 ? 2 : 1;
	series(p, e->replica >= 0 ? e->replica + 1 : 0);   /* grows the table first: the pointers stay */
	struct series_acc *to[2] = { series(p, 0), series(p, e->replica >= 0 ? e->replica + 1 : 0) };
	for (int m = 0; m < N_RM; m++) {
		if (!(e->has & 1u << m))
			continue;
		size_t b = grid_bucket(p->grid, p->n_grid, e->v[m]);
		for (int s = 0; s < n_to; s++) {
			to[s]->counts[(size_t)m * (p->n_grid + 1) + b]++;
			to[s]->sum[m] += e->v[m];
		}
	}
	settle_heap_pop(p->heap, &p->n_heap);
}

void promobs_row(void *ctx, const struct request *r, int64_t settled_ns)
{
	struct promobs *p = ctx;
	if (r->state == REQ_FINISHED) {
		struct pending at[2] = { { .id = r->id, .replica = r->replica }, { .id = r->id, .replica = r->replica } };
		for (int m = 0; m < N_RM; m++) {
			int64_t t;
			double v;
			if (!promobs_value(r, (enum req_metric)m, &t, &v))
				continue;
			/* Two times only: the first token's and the finish's. */
			struct pending *e = t == r->first_token_ns && (m == RM_TTFT || m == RM_PROMPT_TOKENS) ? &at[0] : &at[1];
			e->t_ns = t;
			e->has |= 1u << m;
			e->v[m] = v;
		}
		for (int k = 0; k < 2; k++)
			if (at[k].has)
				settle_heap_push(&p->heap, &p->n_heap, &p->cap_heap, &at[k]);
	}
	while (p->n_heap && p->heap[0].t_ns < settled_ns)
		settle_one(p);
}

void promobs_finish(struct promobs *p)
{
	while (p->n_heap)
		settle_one(p);
}

void promobs_on_settle(struct promobs *p, promobs_settle_fn *fn, void *ctx)
{
	p->on_settle = fn;
	p->settle_ctx = ctx;
}

size_t promobs_state_size(const struct promobs *p)
{
	return N_RM * (p->n_grid + 1) * sizeof(int64_t) + N_RM * sizeof(double);
}

/* A saved state: the counts (N_RM x (n_grid + 1)), then the N_RM sums. */
void promobs_save(const struct promobs *p, int replica, void *buf)
{
	size_t nc = N_RM * (p->n_grid + 1) * sizeof(int64_t);
	int k = replica + 1;
	if (k >= p->n_acc) {
		memset(buf, 0, promobs_state_size(p));
		return;
	}
	memcpy(buf, p->acc[k].counts, nc);
	memcpy((char *)buf + nc, p->acc[k].sum, N_RM * sizeof(double));
}

/* Grid counts c of one metric onto edges (see promobs_hist). */
static void onto_edges(const struct promobs *p, const int64_t *c, const double *edges, size_t n_edges,
		       int64_t *counts)
{
	memset(counts, 0, (n_edges + 1) * sizeof *counts);
	size_t b = 0;
	for (size_t u = 0; u <= p->n_grid; u++) {
		/* Grid bucket u holds values in (grid[u-1], grid[u]]: edge bucket
		 * b is the first edge >= grid[u]. */
		while (u < p->n_grid && b < n_edges && edges[b] < p->grid[u])
			b++;
		counts[u < p->n_grid ? b : n_edges] += c[u];
	}
}

void promobs_hist_saved(const struct promobs *p, const void *state, enum req_metric m, const double *edges,
			size_t n_edges, int64_t *counts, double *sum)
{
	size_t nc = N_RM * (p->n_grid + 1);
	int64_t c[GRID_CAP + 1];
	double sums[N_RM];
	memcpy(c, (const int64_t *)state + (size_t)m * (p->n_grid + 1), (p->n_grid + 1) * sizeof *c);
	memcpy(sums, (const char *)state + nc * sizeof(int64_t), sizeof sums);
	onto_edges(p, c, edges, n_edges, counts);
	*sum = sums[m];
}

void promobs_hist(const struct promobs *p, int replica, enum req_metric m, const double *edges,
		  size_t n_edges, int64_t *counts, double *sum)
{
	memset(counts, 0, (n_edges + 1) * sizeof *counts);
	*sum = 0;
	int k = replica + 1;
	if (k >= p->n_acc)
		return;   /* nothing completed there */
	const struct series_acc *a = &p->acc[k];
	onto_edges(p, a->counts + (size_t)m * (p->n_grid + 1), edges, n_edges, counts);
	*sum = a->sum[m];
}
