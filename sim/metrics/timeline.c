#include "timeline.h"

#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fsum.h"
#include "xalloc.h"

const double timeline_itl_edges[TIMELINE_N_ITL] = { 0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2,
						    0.3,  0.4,	 0.5,  0.75,  1.0, 2.5,	 5.0,
						    7.5,  10.0,	 20.0, 40.0,  80.0 };
const double timeline_iter_edges[TIMELINE_N_ITER] = { 1,   8,	 16,   32,   64,   128,	 256,
						      512, 1024, 2048, 4096, 8192, 16384 };

struct timeline *timeline_create(void)
{
	struct timeline *t = xcalloc(1, sizeof *t);
	t->itl.n_edges = TIMELINE_N_ITL;
	t->itl.edges = timeline_itl_edges;
	t->iter.n_edges = TIMELINE_N_ITER;
	t->iter.edges = timeline_iter_edges;
	return t;
}

struct timeline *timeline_create_totals(void)
{
	struct timeline *t = timeline_create();
	t->totals = true;
	struct timeline_hist *hs[] = { &t->itl, &t->iter };
	for (int i = 0; i < 2; i++) {
		size_t w = hs[i]->n_edges + 1;
		hs[i]->counts = xcalloc(TIMELINE_RING * w, sizeof *hs[i]->counts);
		hs[i]->sums = xcalloc(TIMELINE_RING, sizeof *hs[i]->sums);
		hs[i]->folded = xcalloc(w, sizeof *hs[i]->folded);
	}
	return t;
}

void timeline_destroy(struct timeline *t)
{
	if (!t)
		return;
	free(t->itl.counts);
	free(t->itl.sums);
	free(t->itl.folded);
	free(t->iter.counts);
	free(t->iter.sums);
	free(t->iter.folded);
	free(t);
}

/* Totals only: window w (at w % RING) into h's folded total, then zeroed. */
static void fold(struct timeline_hist *h, size_t w)
{
	size_t nb = h->n_edges + 1, at = w % TIMELINE_RING;
	for (size_t b = 0; b < nb; b++)
		h->folded[b] += h->counts[at * nb + b];
	h->folded_sum += h->sums[at];
	memset(h->counts + at * nb, 0, nb * sizeof *h->counts);
	h->sums[at] = 0;
}

/* Totals only: window w of both histograms folded, on_fold told first. */
static void fold_window(struct timeline *t, size_t w)
{
	if (t->on_fold)
		t->on_fold(t->fold_ctx, t, w, w);
	fold(&t->itl, w);
	fold(&t->iter, w);
}

void timeline_fold_rest(struct timeline *t)
{
	assert(t->totals);
	for (; t->base < t->n_windows; t->base++)
		fold_window(t, t->base);
	if (t->on_fold)
		t->on_fold(t->fold_ctx, t, t->base, t->base);
}

static void hist_resize(struct timeline_hist *h, size_t old_n, size_t n)
{
	size_t w = h->n_edges + 1;
	h->counts = xrealloc(h->counts, n * w * sizeof *h->counts);
	h->sums = xrealloc(h->sums, n * sizeof *h->sums);
	memset(h->counts + old_n * w, 0, (n - old_n) * w * sizeof *h->counts);
	memset(h->sums + old_n, 0, (n - old_n) * sizeof *h->sums);
}

/* The window of t_ns, growing the arrays (doubling) to hold it. */
static size_t window(struct timeline *t, int64_t t_ns)
{
	size_t w = (size_t)(t_ns / TIMELINE_WINDOW_NS);
	if (w >= t->n_windows) {
		size_t n = t->n_windows ? t->n_windows : 64;
		while (n <= w)
			n *= 2;
		hist_resize(&t->itl, t->n_windows, n);
		hist_resize(&t->iter, t->n_windows, n);
		t->n_windows = n;
	}
	return w;
}

/* Index of the first edge >= v (Prometheus: a value counts in every
 * bucket whose le is >= it), n_edges when above them all. */
static size_t bucket(const struct timeline_hist *h, double v)
{
	size_t lo = 0, hi = h->n_edges;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (h->edges[mid] >= v)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

/* Totals only: where window w's values go (its ring slot, folding the
 * windows it pushes out), or SIZE_MAX for one already folded. */
static size_t ring_slot(struct timeline *t, size_t w)
{
	if (w < t->base)
		return SIZE_MAX;
	if (w >= t->base + 2 * TIMELINE_RING) {
		/* Far ahead: fold the ring's windows; those between are empty
		 * (adding their zeros would change nothing). */
		for (size_t k = t->base; k < t->base + TIMELINE_RING; k++)
			fold_window(t, k);
		size_t nb = w - TIMELINE_RING + 1;
		if (t->on_fold)
			t->on_fold(t->fold_ctx, t, t->base + TIMELINE_RING, nb);
		t->base = nb;
	}
	for (; w >= t->base + TIMELINE_RING; t->base++)
		fold_window(t, t->base);
	if (w >= t->n_windows)
		t->n_windows = w + 1;
	return w % TIMELINE_RING;
}

/* n values v at t_ns: the window (and the ring's folds) and the bucket
 * once, the sum's n additions in order (n calls' bits). */
static void record(struct timeline *t, struct timeline_hist *h, int64_t t_ns, double v, size_t n)
{
	double *sum;
	if (t->totals) {
		size_t at = ring_slot(t, (size_t)((t_ns < 0 ? 0 : t_ns) / TIMELINE_WINDOW_NS));
		if (at == SIZE_MAX) {   /* behind the ring: into the total */
			h->folded[bucket(h, v)] += (int64_t)n;
			t->n_late += (int64_t)n;
			sum = &h->folded_sum;
		} else {
			h->counts[at * (h->n_edges + 1) + bucket(h, v)] += (int64_t)n;
			sum = &h->sums[at];
		}
	} else {
		size_t w = window(t, t_ns < 0 ? 0 : t_ns);
		h->counts[w * (h->n_edges + 1) + bucket(h, v)] += (int64_t)n;
		sum = &h->sums[w];
	}
	*sum = fsum_repeat(*sum, v, n);   /* n additions' bits */
}

void timeline_gap(struct timeline *t, int64_t t_ns, double gap_s)
{
	record(t, &t->itl, t_ns, gap_s, 1);
}

void timeline_gaps(struct timeline *t, int64_t t_ns, double gap_s, size_t n)
{
	if (n)
		record(t, &t->itl, t_ns, gap_s, n);
}

void timeline_step(struct timeline *t, int64_t t_ns, int64_t tokens)
{
	record(t, &t->iter, t_ns, (double)tokens, 1);
}

void timeline_accumulate(const struct timeline *t, const struct timeline_hist *h, size_t from,
			 size_t upto, int64_t *counts, double *sum)
{
	size_t nb = h->n_edges + 1;
	if (t->totals) {   /* every window: the folded ones, then the ring's in order */
		assert(from == 0 && upto >= t->n_windows);
		for (size_t b = 0; b < nb; b++)
			counts[b] += h->folded[b];
		*sum += h->folded_sum;
		for (size_t w = t->base; w < t->n_windows; w++) {
			size_t at = w % TIMELINE_RING;
			for (size_t b = 0; b < nb; b++)
				counts[b] += h->counts[at * nb + b];
			*sum += h->sums[at];
		}
		return;
	}
	for (size_t w = from; w < upto && w < t->n_windows; w++) {
		for (size_t b = 0; b < nb; b++)
			counts[b] += h->counts[w * nb + b];
		*sum += h->sums[w];
	}
}
