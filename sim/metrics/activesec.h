/*
 * activesec: vLLM's max_concurrent_requests counted as requests come and
 * go: every successful request counts in each whole second it was active
 * in (from its send's second to its finish's), and the result is the most
 * in any one second.
 *
 * A difference array over seconds (+1 at a request's first second, -1 past
 * its last) kept in a ring that holds only the seconds still open: a
 * second is folded into the running sum (and the peak) once no request can
 * touch it again, that is once it is before the send second of every
 * request in flight and before the clock (later sends come later). So the
 * ring spans the oldest in-flight request's life, not the run: memory
 * follows the requests' latency in seconds, not the simulated time.
 *
 * Invariants: seconds [base, base + cap) are in the ring, those before base
 * are folded; pending[s] counts in-flight requests sent in second s; no
 * update ever lands before base.
 */
#ifndef SERVESIM_ACTIVESEC_H
#define SERVESIM_ACTIVESEC_H

#include <stddef.h>
#include <stdint.h>

struct activesec {
	int64_t *diff;       /* ring: +1/-1 of second s at s & (cap - 1) */
	int64_t *pending;    /* ring: in-flight requests sent in second s */
	size_t cap;          /* a power of two, or 0 */
	int64_t base;        /* first second not folded */
	int64_t running;     /* the sum of diff over the folded seconds */
	int64_t peak;        /* the most over the folded seconds */
};

/* A request was sent in second sec (>= 0, from the run's time origin). */
void activesec_send(struct activesec *a, int64_t sec);

/* The request sent in second first finished, at second last when ok (a
 * failed one counts in no second); clock_sec is the run's clock: no send
 * comes before it any more. Folds what is closed. */
void activesec_done(struct activesec *a, int64_t first, int64_t last, int ok, int64_t clock_sec);

/* The most requests active in one second, once the run is over. */
int64_t activesec_peak(struct activesec *a);

void activesec_free(struct activesec *a);

#endif
