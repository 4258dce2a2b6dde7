/*
 * simassert: invariant checks that say when and for whom they failed
 * (STYLE "Errors": a bug is an assertion with file, line and simulated
 * time; Cimba's cmb_assert.h, ggml's GGML_ASSERT). A failed SIM_ASSERT
 * prints one line to stderr, "servesim: bug: FILE:LINE: COND failed at
 * simulated time T s, request R", and aborts. For bugs only: bad input is
 * a returned error (err.h).
 *
 * The check ignores NDEBUG (as ggml's does; CMakeLists keeps assert(3) on
 * in every build type too): a comparison per call, and a wrong simulation
 * that runs on silently costs more than the branch.
 */
#ifndef SERVESIM_SIMASSERT_H
#define SERVESIM_SIMASSERT_H

#include <stdint.h>

#define SIM_NO_TIME INT64_MIN   /* no simulated clock at hand */
#define SIM_NO_REQ (-1)         /* no request concerned */

/* Checks cond; now_ns is the simulated time (ns, or SIM_NO_TIME) and req
 * the request index (or SIM_NO_REQ) the failure line names. */
#define SIM_ASSERT(cond, now_ns, req)                                                                 \
	((cond) ? (void)0 : simassert_fail(#cond, __FILE__, __LINE__, (int64_t)(now_ns), (int64_t)(req)))

/* Prints the failure line and aborts. Does not return. */
_Noreturn void simassert_fail(const char *cond, const char *file, int line, int64_t now_ns, int64_t req);

#endif
