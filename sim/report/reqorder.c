/*
 * reqorder: rows by request id, held while an earlier id runs, spilled to
 * sorted runs past a budget (reqorder.h).
 */
#include "reqorder.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "heap.h"
#include "xalloc.h"

static bool by_id(const struct reqorder_row *a, const struct reqorder_row *b)
{
	return a->id < b->id;
}

HEAP_DEFINE(rowheap, struct reqorder_row, by_id)

bool reqorder_due(const struct reqorder *o, int64_t id)
{
	return id == o->next;
}

/* Run r's next row into its head; false (and the run closed) when none
 * is left. A short read marks o failed. */
static bool run_advance(struct reqorder *o, struct reqorder_run *r)
{
	free(r->head);
	r->head = NULL;
	if (r->left == 0)
		return false;
	int64_t id;
	uint32_t len;
	if (fread(&id, sizeof id, 1, r->f) != 1 || fread(&len, sizeof len, 1, r->f) != 1) {
		o->failed = true;
		return false;
	}
	r->head = xmalloc((size_t)len + 1);
	if (len && fread(r->head, len, 1, r->f) != 1) {
		o->failed = true;
		free(r->head);
		r->head = NULL;
		return false;
	}
	r->head[len] = '\0';
	r->head_id = id;
	r->left--;
	return true;
}

/* Every row held in memory, in id order, as a new run; the heap emptied. */
static void spill(struct reqorder *o)
{
	FILE *f = tmpfile();
	if (!f) {
		o->failed = true;
		return;
	}
	int64_t n = 0;
	for (; o->n_heap; rowheap_pop(o->heap, &o->n_heap), n++) {
		int64_t id = o->heap[0].id;
		char *row = o->heap[0].row;
		uint32_t len = (uint32_t)strlen(row);
		if (fwrite(&id, sizeof id, 1, f) != 1 || fwrite(&len, sizeof len, 1, f) != 1 ||
		    fwrite(row, 1, len, f) != len)
			o->failed = true;
		free(row);
	}
	o->held_bytes = 0;
	o->n_spilled += n;
	if (fflush(f) || fseek(f, 0, SEEK_SET))
		o->failed = true;
	xgrow(&o->runs, &o->cap_runs, o->n_runs + 1, sizeof *o->runs);
	struct reqorder_run *r = &o->runs[o->n_runs];
	*r = (struct reqorder_run){ .f = f, .left = n };
	if (run_advance(o, r))
		o->n_runs++;
	else
		fclose(f);
}

void reqorder_hold(struct reqorder *o, int64_t id, char *row)
{
	assert(id > o->next);
	rowheap_push(&o->heap, &o->n_heap, &o->cap_heap, &(struct reqorder_row){ id, row });
	o->n_held++;
	o->held_bytes += strlen(row) + 1;
	if (o->held_bytes > REQORDER_HELD_BYTES && o->n_runs < REQORDER_MAX_RUNS)
		spill(o);
}

/* The spilled run whose head is id, or NULL. */
static struct reqorder_run *run_with(struct reqorder *o, int64_t id)
{
	for (size_t i = 0; i < o->n_runs; i++)
		if (o->runs[i].head_id == id)
			return &o->runs[i];
	return NULL;
}

void reqorder_done(struct reqorder *o, void (*put)(void *ctx, const char *row), void *ctx)
{
	o->next++;
	while (o->n_held) {
		struct reqorder_run *r = NULL;
		if (o->n_heap && o->heap[0].id == o->next) {
			char *row = o->heap[0].row;
			rowheap_pop(o->heap, &o->n_heap);
			put(ctx, row);
			o->held_bytes -= strlen(row) + 1;
			free(row);
		} else if ((r = run_with(o, o->next))) {
			put(ctx, r->head);
			if (!run_advance(o, r)) { /* read out: closed, the last run moved in */
				fclose(r->f);
				*r = o->runs[--o->n_runs];
			}
		} else {
			break;
		}
		o->n_held--;
		o->next++;
	}
}

int64_t reqorder_missing(const struct reqorder *o)
{
	return o->n_held ? o->next : -1;
}

void reqorder_free(struct reqorder *o)
{
	for (size_t k = 0; k < o->n_heap; k++)
		free(o->heap[k].row);
	free(o->heap);
	for (size_t i = 0; i < o->n_runs; i++) {
		free(o->runs[i].head);
		fclose(o->runs[i].f);
	}
	free(o->runs);
	memset(o, 0, sizeof *o);
}
