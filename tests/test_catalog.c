/*
 * catalog: data folders are found (SERVESIM_DATA_DIR first), names resolve
 * as paths, ids (any case) or Hugging Face ids, and an unknown name lists
 * the known ones.
 */
#include "testutil.h"

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

/* SERVESIM_DATA_DIR overrides the other places, at each lookup (nothing
 * is cached: the catalog keeps no global state); a root with an empty
 * models/ lists nothing and a missing folder has no catalog_dir. */
static void data_dir_override(void **state)
{
	(void)state;
	char before[CATALOG_DIR_MAX], buf[CATALOG_DIR_MAX], saved[4096] = "";
	assert_non_null(catalog_dir(CATALOG_HARDWARE, before, sizeof before));
	const char *env = getenv("SERVESIM_DATA_DIR");
	bool had = env != NULL;
	if (had)
		snprintf(saved, sizeof saved, "%s", env);
	char root[64], sub[96];
	test_tmpdir(root, sizeof root, "catalog");
	snprintf(sub, sizeof sub, "%s/models", root);
	assert_int_equal(mkdir(sub, 0700), 0);

	setenv("SERVESIM_DATA_DIR", root, 1);
	const char *dir = catalog_dir(CATALOG_MODELS, buf, sizeof buf);
	assert_non_null(dir);
	assert_string_equal(dir, sub);
	assert_null(catalog_dir(CATALOG_HARDWARE, buf, sizeof buf));
	assert_null(catalog_dir(CATALOG_MODELS, buf, 8));   /* does not fit: absent, not cut */
	/* An empty folder lists nothing (and never calls qsort on NULL). */
	char **ids = (char **)1;
	assert_int_equal(catalog_list(CATALOG_MODELS, &ids), 0);
	assert_null(ids);
	ids = (char **)1;
	assert_int_equal(catalog_list(CATALOG_HARDWARE, &ids), 0);
	assert_null(ids);

	if (had)
		setenv("SERVESIM_DATA_DIR", saved, 1);
	else
		unsetenv("SERVESIM_DATA_DIR");
	/* Back to the folders found before, in the same process. */
	assert_non_null(catalog_dir(CATALOG_HARDWARE, buf, sizeof buf));
	assert_string_equal(buf, before);
	rmdir(sub);
	rmdir(root);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(data_dir_override),
		cmocka_unit_test(id_of),
		cmocka_unit_test(resolve),
		cmocka_unit_test(list_sorted),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
