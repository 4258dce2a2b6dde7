#include "progress.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "xalloc.h"

struct progress {
	const char *verb;
	pthread_mutex_t lock;          /* points from several threads */
	double start_s, drawn_s;       /* wall clock: at create, at the last draw */
	int64_t points;
	bool dirty;                    /* a line is on the terminal */
};

static double wall_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

struct progress *progress_create(const char *verb, enum progress_mode mode)
{
	if (mode == PROGRESS_OFF || (mode == PROGRESS_AUTO && !isatty(STDERR_FILENO)))
		return NULL;
	struct progress *p = xcalloc(1, sizeof *p);
	p->verb = verb;
	pthread_mutex_init(&p->lock, NULL);
	p->start_s = p->drawn_s = wall_s();
	return p;
}

void progress_destroy(struct progress *p)
{
	if (!p)
		return;
	if (p->dirty)
		fputs("\r\033[K", stderr);
	fflush(stderr);
	pthread_mutex_destroy(&p->lock);
	free(p);
}

/* Whether to draw now: a tenth of a second since the last line. */
static bool due(struct progress *p, double *elapsed)
{
	double now = wall_s();
	if (now - p->drawn_s < 0.1)
		return false;
	p->drawn_s = now;
	*elapsed = now - p->start_s;
	return true;
}

/* "ETA 12 s" from the fraction done in elapsed seconds. */
static void eta(char *out, size_t cap, double frac, double elapsed)
{
	if (frac <= 0 || frac > 1)
		snprintf(out, cap, "ETA ?");
	else
		snprintf(out, cap, "ETA %.0f s", elapsed * (1 - frac) / frac);
}

void progress_run(struct progress *p, double sim_s, int64_t done, int64_t total)
{
	double elapsed;
	if (!p || !due(p, &elapsed))
		return;
	char left[32] = "";
	double frac = total > 0 ? (double)done / (double)total : 0;
	eta(left, sizeof left, frac, elapsed);
	fprintf(stderr, "\r\033[Kservesim %s: %.0f s simulated, %lld", p->verb, sim_s, (long long)done);
	if (total > 0)
		fprintf(stderr, "/%lld requests (%.1f%%), %.0f req/s, %s", (long long)total, 100 * frac,
			elapsed > 0 ? (double)done / elapsed : 0, left);
	else
		fprintf(stderr, " requests, %.0f req/s", elapsed > 0 ? (double)done / elapsed : 0);
	fflush(stderr);
	p->dirty = true;
}

void progress_points(struct progress *p, int64_t n, int64_t total)
{
	if (!p)
		return;
	pthread_mutex_lock(&p->lock);
	p->points += n;
	double elapsed;
	if (due(p, &elapsed) || p->points == total) {
		elapsed = wall_s() - p->start_s;
		double frac = total > 0 ? (double)p->points / (double)total : 0;
		char left[32];
		eta(left, sizeof left, frac, elapsed);
		fprintf(stderr, "\r\033[Kservesim %s: %lld/%lld points (%.1f%%), %.1f points/s, %s", p->verb,
			(long long)p->points, (long long)total, 100 * frac,
			elapsed > 0 ? (double)p->points / elapsed : 0, left);
		fflush(stderr);
		p->dirty = true;
	}
	pthread_mutex_unlock(&p->lock);
}
