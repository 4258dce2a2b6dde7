#include "rngstream.h"

/* FNV-1a over the name, seeded by the run's seed. */
static uint64_t fnv1a(const char *s, uint64_t h)
{
	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 1099511628211ULL;
	}
	return h;
}

gsl_rng *rng_stream(const char *name, int64_t seed)
{
	gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
	uint64_t h = fnv1a(name, 1469598103934665603ULL ^ (uint64_t)seed);
	gsl_rng_set(r, (unsigned long)(h ^ (h >> 32)));
	return r;
}
