/*
 * sanitizer_canary: proves the sanitizer build's checks are on, by doing
 * what each must catch, on a value read at run time so that no compiler
 * folds it away. CTest (tests/CMakeLists.txt) expects the sanitizer's
 * report: without -fsanitize=float-cast-overflow, which gcc's and clang's
 * `undefined` leave out (issue 15), the cast below is silent undefined
 * behaviour and the test fails.
 *
 *   sanitizer_canary float-cast VALUE   (int64_t)VALUE
 *   sanitizer_canary heap-read INDEX    reads byte INDEX of a 4-byte block
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: sanitizer_canary float-cast VALUE | heap-read INDEX\n");
		return 2;
	}
	if (!strcmp(argv[1], "float-cast")) {
		volatile double v = strtod(argv[2], NULL);
		volatile int64_t n = (int64_t)v;
		printf("%lld\n", (long long)n);
		return 0;
	}
	if (!strcmp(argv[1], "heap-read")) {
		char *p = malloc(4);
		if (!p)
			return 1;
		memset(p, 0, 4);
		/* Through memcpy, which ASan checks and UBSan's object-size
		 * check (it would report first) does not. */
		char c;
		volatile size_t one = 1;   /* a call to memcpy, not an inlined load */
		memcpy(&c, p + atoi(argv[2]), one);
		free(p);
		printf("%d\n", c);
		return 0;
	}
	fprintf(stderr, "sanitizer_canary: unknown check '%s'\n", argv[1]);
	return 2;
}
