#include "par.h"

#include <pthread.h>
#include <stdlib.h>
#include <stdatomic.h>
#include <unistd.h>

#include "progress.h"
#include "xalloc.h"

struct par_work {
	void (*fn)(void *ctx, size_t i);
	void *ctx;
	size_t n;
	atomic_size_t next;       /* the next index to hand out */
	struct progress *progress;
};

static void *worker(void *arg)
{
	struct par_work *w = arg;
	for (;;) {
		size_t i = atomic_fetch_add(&w->next, 1);
		if (i >= w->n)
			return NULL;
		w->fn(w->ctx, i);
		progress_points(w->progress, 1, (int64_t)w->n);
	}
}

void par_for(size_t n, int jobs, void (*fn)(void *ctx, size_t i), void *ctx)
{
	par_for_progress(n, jobs, fn, ctx, NULL);
}

void par_for_progress(size_t n, int jobs, void (*fn)(void *ctx, size_t i), void *ctx,
		      struct progress *p)
{
	struct par_work w = { .fn = fn, .ctx = ctx, .n = n, .progress = p };
	atomic_init(&w.next, 0);
	size_t extra = jobs > 1 ? (size_t)jobs - 1 : 0;   /* the caller is one */
	if (extra > n)
		extra = n ? n - 1 : 0;
	pthread_t *tids = extra ? xcalloc(extra, sizeof *tids) : NULL;
	size_t started = 0;
	while (started < extra && pthread_create(&tids[started], NULL, worker, &w) == 0)
		started++;
	worker(&w);
	for (size_t t = 0; t < started; t++)
		pthread_join(tids[t], NULL);
	free(tids);
}

int par_default_jobs(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	return n >= 1 && n <= 4096 ? (int)n : 1;
}
