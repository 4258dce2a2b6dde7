/*
 * csv: RFC 4180 as the tools write it: commas and line breaks inside
 * quotes, "" for a quote, CRLF or LF, empty fields.
 */
#include "testutil.h"

#include <string.h>

#include "csv.h"

static void split_quotes(void **state)
{
	(void)state;
	struct csv_row r = { 0 };
	const char *s = "a,\"b, c\",\"say \"\"hi\"\"\",,7\r";
	assert_int_equal(csv_split(s, strlen(s), &r), 5);
	assert_string_equal(r.f[0], "a");
	assert_string_equal(r.f[1], "b, c");
	assert_string_equal(r.f[2], "say \"hi\"");
	assert_string_equal(r.f[3], "");
	assert_string_equal(r.f[4], "7");
	assert_int_equal(csv_split("\"open", 5, &r), -1);
	assert_int_equal(csv_split("", 0, &r), 1);
	assert_string_equal(r.f[0], "");
	csv_row_free(&r);
}

/* Records across lines: a quoted line break stays in its field and is
 * counted, so callers keep their line numbers. */
static void records(void **state)
{
	(void)state;
	struct csv_row r = { 0 };
	const char *text = "h1,h2\r\n\"multi\nline\",2\n3,4", *p = text;
	int lines;
	assert_int_equal(csv_record(&p, &r, &lines), 2);
	assert_int_equal(lines, 1);
	assert_string_equal(r.f[1], "h2");
	assert_int_equal(csv_record(&p, &r, &lines), 2);
	assert_int_equal(lines, 2);
	assert_string_equal(r.f[0], "multi\nline");
	assert_int_equal(csv_record(&p, &r, &lines), 2);
	assert_string_equal(r.f[1], "4");
	assert_int_equal(csv_record(&p, &r, &lines), 0);
	p = "\"never closed\n1,2\n";
	assert_int_equal(csv_record(&p, &r, &lines), -1);
	csv_row_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(split_quotes),
		cmocka_unit_test(records),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
