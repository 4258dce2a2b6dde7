#include "activesec.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "xalloc.h"

/* Room for seconds [base, sec]: the ring doubles, each live second moved
 * to its slot in the new size. */
static void reach(struct activesec *a, int64_t sec)
{
	assert(sec >= a->base);
	if (a->cap && (uint64_t)(sec - a->base) < a->cap)
		return;
	size_t cap = a->cap ? a->cap : 64;
	while ((uint64_t)(sec - a->base) >= cap)
		cap *= 2;
	int64_t *diff = xcalloc(cap, sizeof *diff), *pending = xcalloc(cap, sizeof *pending);
	for (size_t k = 0; k < a->cap; k++) {
		int64_t s = a->base + (int64_t)k;
		diff[(size_t)s & (cap - 1)] = a->diff[(size_t)s & (a->cap - 1)];
		pending[(size_t)s & (cap - 1)] = a->pending[(size_t)s & (a->cap - 1)];
	}
	free(a->diff);
	free(a->pending);
	a->diff = diff;
	a->pending = pending;
	a->cap = cap;
}

/* Folds second base into the running sum and the peak. */
static void fold_one(struct activesec *a)
{
	int64_t *d = &a->diff[(size_t)a->base & (a->cap - 1)];
	a->running += *d;
	*d = 0;
	if (a->running > a->peak)
		a->peak = a->running;
	a->base++;
}

/* Folds the seconds before clock_sec that nothing in flight was sent in. */
static void fold_closed(struct activesec *a, int64_t clock_sec)
{
	size_t folded = 0;
	while (a->cap && a->base < clock_sec && a->pending[(size_t)a->base & (a->cap - 1)] == 0) {
		fold_one(a);
		if (++folded == a->cap)
			break;   /* every slot is 0 now: skip the idle seconds at once */
	}
	if ((!a->cap || folded == a->cap) && a->base < clock_sec)
		a->base = clock_sec;
}

void activesec_send(struct activesec *a, int64_t sec)
{
	fold_closed(a, sec);   /* a send at sec: the clock is there */
	reach(a, sec);
	a->pending[(size_t)sec & (a->cap - 1)]++;
}

void activesec_done(struct activesec *a, int64_t first, int64_t last, int ok, int64_t clock_sec)
{
	size_t m = a->cap - 1;
	assert(a->cap && first >= a->base && a->pending[(size_t)first & m] > 0);
	a->pending[(size_t)first & m]--;
	if (ok) {
		reach(a, last + 1);
		m = a->cap - 1;
		a->diff[(size_t)first & m]++;
		a->diff[(size_t)(last + 1) & m]--;
	}
	fold_closed(a, clock_sec);
}

int64_t activesec_peak(struct activesec *a)
{
	for (size_t k = 0; k < a->cap; k++)
		fold_one(a);
	return a->peak;
}

void activesec_free(struct activesec *a)
{
	free(a->diff);
	free(a->pending);
	memset(a, 0, sizeof *a);
}
