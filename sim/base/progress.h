/*
 * progress: the one-line progress display on stderr of long work (a run's
 * simulated time and requests, or a sweep's points), redrawn in place at
 * most ten times a second and wiped when the work ends. Nothing goes to
 * stdout. A display belongs to its verb; it is passed down explicitly
 * (no global), and point counts may come from several threads at once.
 *
 * Invariant: the line is only ever drawn on a terminal, or where --progress
 * forced it; a NULL display is off and every call on it is a no-op.
 */
#ifndef SERVESIM_PROGRESS_H
#define SERVESIM_PROGRESS_H

#include <stdint.h>

enum progress_mode {
	PROGRESS_AUTO,   /* on when stderr is a terminal (the default) */
	PROGRESS_ON,     /* --progress */
	PROGRESS_OFF,    /* --no-progress */
};

struct progress;

/* A display for verb ("run", "sweep", …), or NULL when mode says it is
 * off. Cannot fail (aborts on OOM). */
struct progress *progress_create(const char *verb, enum progress_mode mode);

/* Wipes the line and frees p; NULL is a no-op. */
void progress_destroy(struct progress *p);

/* One run's state: sim_s simulated seconds, done of total requests
 * finished or failed (total 0: unknown). Call it as often as wanted: it
 * draws at most every 0.1 s of wall time. One thread only. */
void progress_run(struct progress *p, double sim_s, int64_t done, int64_t total);

/* Work made of points (sweep, plan, compare, …): n more of total are done.
 * Safe from several threads at once. */
void progress_points(struct progress *p, int64_t n, int64_t total);

#endif
