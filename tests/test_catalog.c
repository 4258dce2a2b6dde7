/*
 * catalog: data folders are found (SERVESIM_DATA_DIR first), names resolve
 * as paths, ids (any case) or Hugging Face ids, and an unknown name lists
 * the known ones.
 */
#include "testutil.h"

#include <sys/wait.h>
#include <unistd.h>

#include <sys/stat.h>

#include "catalog.h"

static void id_of(void **state)
{
	(void)state;
	char id[64];
	catalog_id_of("/x/y/llama-3.1-8b.json", id, sizeof id);
	assert_string_equal(id, "llama-3.1-8b");
	catalog_id_of("h100-sxm.ini", id, sizeof id);
	assert_string_equal(id, "h100-sxm");
	/* Only the catalog's own extensions are dropped: the dot in a version
	 * number stays. */
	catalog_id_of("models/llama-3.1", id, sizeof id);
	assert_string_equal(id, "llama-3.1");
}

static void resolve(void **state)
{
	(void)state;
	char path[4096];
	struct err e = { { 0 } };
	assert_int_equal(catalog_resolve(CATALOG_HARDWARE, "H100-SXM", path, sizeof path, &e), 0);
	assert_contains(path, "hardware_profiles/h100-sxm.ini");
	assert_int_equal(catalog_resolve(CATALOG_MODELS, "mistralai/Mixtral-8x7B-v0.1", path,
					 sizeof path, &e), 0);
	assert_contains(path, "models/mixtral-8x7b.json");
	/* A path to an existing file is taken as it is. */
	assert_int_equal(catalog_resolve(CATALOG_HARDWARE, TEST_DATA_DIR "/hw_valid.ini", path,
					 sizeof path, &e), 0);
	assert_string_equal(path, TEST_DATA_DIR "/hw_valid.ini");
	/* An unknown id: -1 and the known ids. */
	assert_int_equal(catalog_resolve(CATALOG_HARDWARE, "h100-sxn", path, sizeof path, &e), -1);
	assert_contains(e.msg, "unknown hardware 'h100-sxn'");
	assert_contains(e.msg, "h100-sxm");
	/* An unknown Hugging Face id is an unknown model, not a crash. */
	assert_int_equal(catalog_resolve(CATALOG_MODELS, "nobody/Nothing-7B", path, sizeof path, &e), -1);
	assert_contains(e.msg, "nobody/Nothing-7B");
}

/* The ids come sorted (listings and error messages are stable). */
static void list_sorted(void **state)
{
	(void)state;
	char **ids;
	size_t n = catalog_list(CATALOG_HARDWARE, &ids);
	assert_true(n > 1);
	for (size_t i = 0; i < n; i++) {
		if (i > 0)
			assert_true(strcmp(ids[i - 1], ids[i]) < 0);
		/* The extension is gone; README.md is not a profile. */
		assert_null(strstr(ids[i], ".ini"));
		assert_string_not_equal(ids[i], "README");
	}
	for (size_t i = 0; i < n; i++)
		free(ids[i]);
	free(ids);
}

/* SERVESIM_DATA_DIR overrides the other places; a root with an empty
 * models/ lists nothing and a missing folder has no catalog_dir. The data
 * folders are found once per process, so the check runs in a child whose
 * environment is set before its first lookup. The child reports the first
 * failed check as its exit status. */
static int override_child(const char *root, const char *sub)
{
	setenv("SERVESIM_DATA_DIR", root, 1);
	const char *dir = catalog_dir(CATALOG_MODELS);
	if (!dir || strcmp(dir, sub))
		return 1;
	if (catalog_dir(CATALOG_HARDWARE))
		return 2;
	/* An empty folder lists nothing (and never calls qsort on NULL). */
	char **ids = (char **)1;
	if (catalog_list(CATALOG_MODELS, &ids) != 0 || ids)
		return 3;
	if (catalog_list(CATALOG_HARDWARE, &ids) != 0 || ids)
		return 4;
	return 0;
}

static void data_dir_override(void **state)
{
	(void)state;
	char root[] = "/tmp/servesim-catalog-XXXXXX", sub[64];
	assert_non_null(mkdtemp(root));
	snprintf(sub, sizeof sub, "%s/models", root);
	assert_int_equal(mkdir(sub, 0700), 0);
	fflush(NULL);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		_exit(override_child(root, sub));
	int status;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	rmdir(sub);
	rmdir(root);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		/* First: its child must make the process's first lookup. */
		cmocka_unit_test(data_dir_override),
		cmocka_unit_test(id_of),
		cmocka_unit_test(resolve),
		cmocka_unit_test(list_sorted),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
