/*
 * jsonvals: a file of JSON values as benchmark tools write them. JSON
 * lines and pretty values one after another split into their values with
 * the line each starts on; Python's bare Infinity / NaN read as "inf" /
 * null outside strings and stay as written inside them; a bad value is
 * named by line and column; and the split is linear in the text however
 * many values it holds (counted work, not timed).
 */
#include "testutil.h"

#include "jsonvals.h"

static void splits_values_with_lines(void **state)
{
	(void)state;
	const char *text = "{\"a\": 1}\n"
			   "{\"rate\": Infinity, \"x\": NaN, \"s\": \"NaN Infinity\"}\n"
			   "\n"
			   "{\n  \"b\": -Infinity\n}\n"
			   "[1, 2] {\"c\": 3}\n";
	struct jsonvals v;
	struct err e = { { 0 } };
	if (jsonvals_parse(&v, text, "t.json", &e))
		fail_msg("%s", e.msg);
	assert_int_equal(v.len, 5);
	static const int lines[] = { 1, 2, 4, 7, 7 };
	for (size_t i = 0; i < 5; i++)
		assert_int_equal(v.line[i], lines[i]);
	assert_string_equal(json_string_value(json_object_get(v.v[1], "rate")), "inf");
	assert_true(json_is_null(json_object_get(v.v[1], "x")));
	assert_string_equal(json_string_value(json_object_get(v.v[1], "s")), "NaN Infinity");
	assert_string_equal(json_string_value(json_object_get(v.v[2], "b")), "-inf");
	assert_int_equal(json_integer_value(json_object_get(v.v[4], "c")), 3);
	jsonvals_free(&v);
}

static void bad_value_names_line_and_column(void **state)
{
	(void)state;
	struct jsonvals v;
	struct err e = { { 0 } };
	assert_int_equal(jsonvals_parse(&v, "{\"a\": 1}\n{\"b\": 2}\n{\"c\": }\n", "t.json", &e), -1);
	assert_contains(e.msg, "t.json:3:");
	assert_contains(e.msg, "invalid JSON");
	assert_int_equal(v.len, 2);   /* what parsed before it, the caller's to free */
	jsonvals_free(&v);
}

/* K JSON lines of one small result each. */
static char *lines_of(size_t k, size_t *len)
{
	static const char row[] = "{\"completed\": 7, \"request_rate\": Infinity, \"ttfts\": [0.1, 0.2]}\n";
	size_t n = sizeof row - 1;
	char *text = malloc(k * n + 1);
	assert_non_null(text);
	for (size_t i = 0; i < k; i++)
		memcpy(text + i * n, row, n);
	text[k * n] = '\0';
	*len = k * n;
	return text;
}

static size_t work_of(size_t k, size_t *len)
{
	char *text = lines_of(k, len);
	struct jsonvals v;
	struct err e = { { 0 } };
	assert_int_equal(jsonvals_parse(&v, text, "many.json", &e), 0);
	assert_int_equal(v.len, k);
	assert_int_equal(v.line[k - 1], (int)k);
	size_t work = v.work;
	jsonvals_free(&v);
	free(text);
	return work;
}

/* A file of many values: the split reads each byte a bounded number of
 * times (sanitizing twice, the parser and the line count once each; the
 * sanitized text is one byte longer per Infinity), so the work per byte
 * is the same for 10^4 values as for 4·10^4. A strlen of the rest per
 * value (the old split) made it grow with the count: 10^4 values of 66
 * bytes would be ~3·10^8 bytes read, not ~3·10^6. */
static void linear_in_the_text(void **state)
{
	(void)state;
	size_t len1, len4;
	size_t w1 = work_of(10000, &len1), w4 = work_of(40000, &len4);
	/* Bounds: 2 passes of sanitizing + parser + line count = 4 per byte,
	 * plus the two quotes each Infinity gains in each later pass. */
	assert_true(w1 <= 4 * len1 + 10000 * 8);
	assert_true(w4 <= 4 * len4 + 40000 * 8);
	assert_true(w1 >= len1);   /* the counter counts */
	/* Four times the text is four times the work, exactly: every value
	 * costs the same. */
	assert_int_equal(w4, 4 * w1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(splits_values_with_lines),
		cmocka_unit_test(bad_value_names_line_and_column),
		cmocka_unit_test(linear_in_the_text),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
