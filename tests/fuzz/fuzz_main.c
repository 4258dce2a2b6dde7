/*
 * A libFuzzer harness: the target FUZZ_TARGET of fuzz_targets.c (one
 * binary per target, built with clang -fsanitize=fuzzer when
 * -DSERVESIM_FUZZ=ON). scripts/fuzz runs them; CTest's `fuzz` label replays
 * their corpora and fuzzes each for a few seconds.
 */
#include <stdio.h>
#include <stdlib.h>

#include "fuzz_targets.h"

static const struct fuzz_target *target;

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fuzz_targets_init();
	target = fuzz_target_named(FUZZ_TARGET);
	if (!target) {
		fprintf(stderr, "fuzz: no target '%s' in fuzz_targets.c\n", FUZZ_TARGET);
		exit(2);
	}
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	target->run(data, size);
	return 0;
}
