/*
 * list: one reading of the comma-separated lists of flags and INI values.
 * Blanks around items go, an empty item is an error (the flags' old
 * strtok loops skipped it silently), an item too long for the caller's
 * buffer is an error, not a cut.
 */
#include "testutil.h"

#include "list.h"

static void items_trimmed(void **state)
{
	(void)state;
	const char *cur = " h100-sxm ,l40s,\ta100 ";
	char item[16];
	assert_int_equal(list_next(&cur, item, sizeof item), 1);
	assert_string_equal(item, "h100-sxm");
	assert_int_equal(list_next(&cur, item, sizeof item), 1);
	assert_string_equal(item, "l40s");
	assert_int_equal(list_next(&cur, item, sizeof item), 1);
	assert_string_equal(item, "a100");
	assert_null(cur);
	assert_int_equal(list_next(&cur, item, sizeof item), 0);
}

static void empty_items_refused(void **state)
{
	(void)state;
	static const char *const bad[] = { "", " ", "a,,b", "a,", ",a" };
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		const char *cur = bad[i];
		char item[16];
		int rc;
		while ((rc = list_next(&cur, item, sizeof item)) > 0) {
		}
		if (rc != -1)
			fail_msg("'%s': expected an empty item to be an error", bad[i]);
	}
	/* 8 characters do not fit in 8 bytes: refused, the start kept for
	 * the message. */
	const char *cur = "abcdefgh";
	char item[8];
	assert_int_equal(list_next(&cur, item, sizeof item), -1);
	assert_string_equal(item, "abcdefg");
}

static void doubles(void **state)
{
	(void)state;
	double v[3];
	char bad[16];
	assert_int_equal(list_doubles("50, 90,99.9", v, 3, bad, sizeof bad), 3);
	assert_double_near(v[2], 99.9, 0);   /* strtod of the same text */
	assert_int_equal(list_doubles("1,2,3,4", v, 3, bad, sizeof bad), -1);   /* more than max */
	assert_string_equal(bad, "4");
	assert_int_equal(list_doubles("1,x", v, 3, bad, sizeof bad), -1);
	assert_string_equal(bad, "x");
	assert_int_equal(list_doubles("1,nan", v, 3, NULL, 0), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(items_trimmed),
		cmocka_unit_test(empty_items_refused),
		cmocka_unit_test(doubles),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
