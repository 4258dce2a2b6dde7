#include "simassert.h"

#include <stdio.h>
#include <stdlib.h>

#include "num.h"

_Noreturn void simassert_fail(const char *cond, const char *file, int line, int64_t now_ns, int64_t req)
{
	char at[64] = "", who[48] = "";
	if (now_ns != SIM_NO_TIME)
		snprintf(at, sizeof at, " at simulated time %lld.%09lld s", (long long)(now_ns / NS_PER_S),
			 (long long)((now_ns < 0 ? -now_ns : now_ns) % NS_PER_S));
	if (req != SIM_NO_REQ)
		snprintf(who, sizeof who, ", request %lld", (long long)req);
	fprintf(stderr, "servesim: bug: %s:%d: %s failed%s%s\n", file, line, cond, at, who);
	fflush(stderr);
	abort();
}
