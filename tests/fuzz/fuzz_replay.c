/*
 * fuzz_replay TARGET FILE|DIR…: runs a fuzz target (fuzz_targets.c) once
 * on each file given, or on each file of each folder, without libFuzzer: so
 * the seeds and the crash reproducers of tests/fuzz/regress/ run in every
 * build (gcc included) and under the sanitizers. `fuzz_replay --list`
 * prints the targets. Exit 0 when every input returned, 2 on misuse; a
 * crash is the test's failure.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz_targets.h"
#include "xalloc.h"

static int run_file(const struct fuzz_target *t, const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		fprintf(stderr, "fuzz_replay: %s: cannot open\n", path);
		return -1;
	}
	size_t len = 0, cap = 4096;
	unsigned char *buf = xmalloc(cap);
	size_t n;
	while ((n = fread(buf + len, 1, cap - len, f)) > 0) {
		len += n;
		if (len == cap)
			buf = xrealloc(buf, cap *= 2);
	}
	fclose(f);
	t->run(buf, len);
	free(buf);
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every regular file under dir, in name order (reproducible). */
static int run_dir(const struct fuzz_target *t, const char *dir, size_t *count)
{
	DIR *d = opendir(dir);
	if (!d) {
		fprintf(stderr, "fuzz_replay: %s: cannot open\n", dir);
		return -1;
	}
	char **names = NULL;
	size_t len = 0, cap = 0;
	struct dirent *de;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		xgrow(&names, &cap, len + 1, sizeof *names);
		names[len++] = xstrdup(de->d_name);
	}
	closedir(d);
	if (len)
		qsort(names, len, sizeof *names, cmp_str);
	int rc = 0;
	for (size_t i = 0; i < len; i++) {
		char path[4096];
		struct stat st;
		snprintf(path, sizeof path, "%s/%s", dir, names[i]);
		if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
			rc |= run_dir(t, path, count);
		else if (run_file(t, path) == 0)
			++*count;
		free(names[i]);
	}
	free(names);
	return rc;
}

int main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "--list")) {
		for (const struct fuzz_target *t = fuzz_targets; t->name; t++)
			printf("%-18s %s\n", t->name, t->what);
		return 0;
	}
	const struct fuzz_target *t = argc >= 3 ? fuzz_target_named(argv[1]) : NULL;
	if (!t) {
		fprintf(stderr, "usage: fuzz_replay TARGET FILE|DIR…   (fuzz_replay --list for the "
				"targets)\n");
		return 2;
	}
	fuzz_targets_init();
	size_t count = 0;
	int rc = 0;
	for (int i = 2; i < argc; i++) {
		struct stat st;
		if (stat(argv[i], &st) != 0)
			continue; /* a folder that is not there (../shared) */
		if (S_ISDIR(st.st_mode))
			rc |= run_dir(t, argv[i], &count);
		else if (run_file(t, argv[i]) == 0)
			count++;
	}
	printf("fuzz_replay %s: %zu inputs, none crashed\n", t->name, count);
	return rc ? 1 : 0;
}
