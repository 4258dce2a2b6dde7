/*
 * fuzz_targets: one entry point per parser and document reader servesim
 * has, each taking arbitrary bytes. The table is shared by the libFuzzer
 * harnesses (fuzz_main.c, one binary per target, clang only) and by the
 * replay command (fuzz_replay.c, every build), which runs the seeds and
 * the crash reproducers of tests/fuzz/regress/ under CTest.
 *
 * A target must return normally whatever the bytes: a parser answers bad
 * input with an error, never a crash, a hang or a leak. Targets that read a
 * file get the bytes through a temporary file of their own (the parsers'
 * interfaces take paths, as the command line gives them).
 */
#ifndef SERVESIM_FUZZ_TARGETS_H
#define SERVESIM_FUZZ_TARGETS_H

#include <stddef.h>
#include <stdint.h>

struct fuzz_target {
	const char *name;
	void (*run)(const uint8_t *data, size_t size);
	const char *what; /* the reader, for the help and the docs */
};

extern const struct fuzz_target fuzz_targets[];

/* The target called name, or NULL. */
const struct fuzz_target *fuzz_target_named(const char *name);

/* Sets what every target needs once per process: SERVESIM_DATA_DIR (the
 * source tree's data folders) unless the environment gives it. */
void fuzz_targets_init(void);

#endif
