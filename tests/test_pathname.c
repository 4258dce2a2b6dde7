/*
 * pathname: a path's file name and folder, from the string alone. The
 * cases each former copy met (calibrate's and the run readers' file
 * names, plot's subtitle of NULL, wholefile's parent at the root), and
 * the property that folder + "/" + name gives the path back.
 */
#include "testutil.h"

#include "pathname.h"

static void base_names(void **state)
{
	(void)state;
	assert_string_equal(pathname_base("a/b/c.csv"), "c.csv");
	assert_string_equal(pathname_base("c.csv"), "c.csv");
	assert_string_equal(pathname_base("/c.csv"), "c.csv");
	assert_string_equal(pathname_base("dir/"), "");
	assert_string_equal(pathname_base(""), "");
	assert_string_equal(pathname_base(NULL), "");
	const char *p = "x/y";
	assert_ptr_equal(pathname_base(p), p + 2);   /* borrowed, in the path */
}

static void parents(void **state)
{
	(void)state;
	char out[64];
	pathname_parent("a/b/c.csv", out, sizeof out);
	assert_string_equal(out, "a/b");
	pathname_parent("c.csv", out, sizeof out);
	assert_string_equal(out, ".");
	pathname_parent("/c.csv", out, sizeof out);
	assert_string_equal(out, "/");
	pathname_parent("/tmp/x", out, sizeof out);
	assert_string_equal(out, "/tmp");
	char small[4];
	pathname_parent("abcdef/x", small, sizeof small);   /* cut, NUL-terminated */
	assert_string_equal(small, "abc");
}

/* Every path with a '/' not at its start is its folder, '/', its name:
 * over all 4^6 strings of 'a', 'b', '/', '.' up to six long. */
static void parent_and_base_rebuild_the_path(void **state)
{
	(void)state;
	static const char alphabet[] = "ab/.";
	int checked = 0;
	for (int len = 1; len <= 6; len++) {
		int total = 1;
		for (int i = 0; i < len; i++)
			total *= 4;
		for (int code = 0; code < total; code++) {
			char path[8], dir[16], back[32];
			for (int i = 0, c = code; i < len; i++, c /= 4)
				path[i] = alphabet[c % 4];
			path[len] = '\0';
			const char *slash = strrchr(path, '/');
			if (!slash || slash == path)
				continue;
			pathname_parent(path, dir, sizeof dir);
			snprintf(back, sizeof back, "%s/%s", dir, pathname_base(path));
			assert_string_equal(back, path);
			checked++;
		}
	}
	assert_true(checked > 2000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(base_names),
		cmocka_unit_test(parents),
		cmocka_unit_test(parent_and_base_rebuild_the_path),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
