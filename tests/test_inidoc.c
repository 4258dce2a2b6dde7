/*
 * inidoc and num: the INI adapter binds a table of keys strictly (types,
 * ranges, enums, duplicates, unknown sections and keys, required keys),
 * --set overrides go through the same binding, and numbers parse strictly.
 */
#include "testutil.h"

#include <unistd.h>

#include <stdbool.h>

#include "inidoc.h"
#include "num.h"

/* A made-up scenario section, shaped like the ones servesim reads. */
struct cfg {
	char name[INI_VALUE_MAX];
	double request_rate;   /* requests/s; inf = all at t = 0 */
	int64_t num_prompts;
	int arrival;           /* index into arrivals[] */
	bool stream;
	double burstiness;     /* > 0, finite */
};

static const char *const arrivals[] = { "poisson", "constant", "gamma", NULL };

#define F(field) offsetof(struct cfg, field)
static const struct inidoc_key keys[] = {
	{ "run", "name", INI_STRING, F(name), INI_REQUIRED, 0, 0, "a name", NULL },
	{ "workload", "request_rate", INI_DOUBLE, F(request_rate),
	  INI_REQUIRED | INI_MIN_EXCLUSIVE | INI_ALLOW_INF, 0, 1e6, "requests/s, > 0, or inf", NULL },
	{ "workload", "num_prompts", INI_INT, F(num_prompts), INI_REQUIRED, 1, 1e9,
	  "a request count >= 1", NULL },
	{ "workload", "arrival", INI_ENUM, F(arrival), 0, 0, 0, "one of poisson, constant, gamma",
	  arrivals },
	{ "workload", "stream", INI_BOOL, F(stream), 0, 0, 0, "true or false", NULL },
	{ "workload", "burstiness", INI_DOUBLE, F(burstiness), INI_MIN_EXCLUSIVE, 0, 100,
	  "a shape > 0", NULL },
};
enum { N_KEYS = sizeof keys / sizeof *keys };

/* Loads TEST_DATA_DIR/file, applies the overrides, binds; returns
 * inidoc_bind's result with the message in e. */
static int bind_file(const char *file, const char *const *sets, struct cfg *c, struct err *e)
{
	char path[512];
	struct inidoc doc;
	snprintf(path, sizeof path, "%s/%s", TEST_DATA_DIR, file);
	memset(c, 0, sizeof *c);
	memset(e, 0, sizeof *e);
	if (inidoc_load(&doc, path, e)) {
		print_error("%s\n", e->msg);
		inidoc_free(&doc);
		fail();
	}
	for (; sets && *sets; sets++)
		assert_int_equal(inidoc_add_override(&doc, *sets, e), 0);
	int rc = inidoc_bind(&doc, keys, N_KEYS, c, false, NULL, e);
	inidoc_free(&doc);
	return rc;
}

static void binds_a_valid_file(void **state)
{
	(void)state;
	struct cfg c;
	struct err e;
	assert_int_equal(bind_file("inidoc_ok.ini", NULL, &c, &e), 0);
	assert_string_equal(c.name, "smoke");
	/* Exact: "2" parses to the double 2. */
	assert_double_near(c.request_rate, 2, 0.0);
	assert_int_equal(c.num_prompts, 200);
	assert_int_equal(c.arrival, 0);
	assert_true(c.stream);
}

/* --set workload.request_rate=5 wins over the file's 2. */
static void override_wins(void **state)
{
	(void)state;
	static const char *const sets[] = { "workload.request_rate=5", "workload.arrival=gamma", NULL };
	struct cfg c;
	struct err e;
	assert_int_equal(bind_file("inidoc_ok.ini", sets, &c, &e), 0);
	assert_double_near(c.request_rate, 5, 0.0);
	assert_int_equal(c.arrival, 2);
}

/* A bad --set value says it came from --set and which key. */
static void override_bad_value(void **state)
{
	(void)state;
	static const char *const sets[] = { "workload.request_rate=fast", NULL };
	struct cfg c;
	struct err e;
	assert_int_equal(bind_file("inidoc_ok.ini", sets, &c, &e), -1);
	assert_contains(e.msg, "--set workload.request_rate");
	assert_contains(e.msg, "got 'fast'");
}

static void override_malformed(void **state)
{
	(void)state;
	static const char *const bad[] = {
		"foo", "foo=1", "workload.request_rate", ".request_rate=1", "workload.=1",
		"rate=1.5.x",
	};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		struct inidoc doc = { 0 };
		struct err e = { { 0 } };
		if (inidoc_add_override(&doc, bad[i], &e) != -1) {
			print_error("'%s' was accepted\n", bad[i]);
			inidoc_free(&doc);
			fail();
		}
		assert_contains(e.msg, "SECTION.KEY=VALUE");
		assert_contains(e.msg, bad[i]);
		assert_int_equal(doc.len, 0);
		inidoc_free(&doc);
	}
}

/* Overrides alone, on a zeroed doc; the last one for a key is found. */
static void override_without_file(void **state)
{
	(void)state;
	struct inidoc doc = { 0 };
	struct err e = { { 0 } };
	assert_int_equal(inidoc_add_override(&doc, "workload.request_rate=5", &e), 0);
	assert_int_equal(inidoc_add_override(&doc, "workload.request_rate=7", &e), 0);
	assert_string_equal(doc.path, "--set");
	const struct inidoc_entry *en = inidoc_find(&doc, "workload", "request_rate");
	assert_non_null(en);
	assert_string_equal(en->value, "7");
	assert_int_equal(en->line, 0);
	assert_null(inidoc_find(&doc, "workload", "num_prompts"));
	inidoc_free(&doc);
}

static void duplicate_key(void **state)
{
	(void)state;
	struct cfg c;
	struct err e;
	assert_int_equal(bind_file("inidoc_duplicate.ini", NULL, &c, &e), -1);
	assert_contains(e.msg, "inidoc_duplicate.ini:7:");
	assert_contains(e.msg, "request_rate");
	assert_contains(e.msg, "duplicate");
	assert_contains(e.msg, "line 6");
}

static void enum_rejects_unknown(void **state)
{
	(void)state;
	struct cfg c;
	struct err e;
	assert_int_equal(bind_file("inidoc_enum.ini", NULL, &c, &e), -1);
	assert_contains(e.msg, "inidoc_enum.ini:8:");
	assert_contains(e.msg, "arrival: expected one of poisson, constant, gamma");
	assert_contains(e.msg, "got 'bursty'");
}

static void allow_inf(void **state)
{
	(void)state;
	struct cfg c;
	struct err e;
	assert_int_equal(bind_file("inidoc_inf.ini", NULL, &c, &e), 0);
	assert_true(isinf(c.request_rate) && c.request_rate > 0);
	/* burstiness has no INI_ALLOW_INF: inf is above its max. */
	static const char *const sets[] = { "workload.burstiness=inf", NULL };
	assert_int_equal(bind_file("inidoc_ok.ini", sets, &c, &e), -1);
	assert_contains(e.msg, "burstiness");
	assert_contains(e.msg, "got 'inf'");
}

/* Range and type checks, through overrides on the valid file. */
/* The range rule that binding and the key reference (keydoc) share:
 * min included unless INI_MIN_EXCLUSIVE, max included, +inf only with
 * INI_ALLOW_INF, -inf and NaN never. */
static void key_range_edges(void **state)
{
	(void)state;
	struct inidoc_key k = { .type = INI_DOUBLE, .min = 0, .max = 10 };
	assert_true(inidoc_key_in_range(&k, 0));
	assert_true(inidoc_key_in_range(&k, 10));
	assert_false(inidoc_key_in_range(&k, -1e-300));
	assert_false(inidoc_key_in_range(&k, nextafter(10, 11)));
	assert_false(inidoc_key_in_range(&k, INFINITY));
	assert_false(inidoc_key_in_range(&k, NAN));
	k.flags = INI_MIN_EXCLUSIVE | INI_ALLOW_INF;
	assert_false(inidoc_key_in_range(&k, 0));
	assert_true(inidoc_key_in_range(&k, 1e-300));
	assert_true(inidoc_key_in_range(&k, INFINITY));
	assert_false(inidoc_key_in_range(&k, -INFINITY));
	assert_false(inidoc_key_in_range(&k, NAN));
}

static void rejects_bad_values(void **state)
{
	(void)state;
	static const char *const bad[] = {
		"workload.request_rate=0",     /* INI_MIN_EXCLUSIVE: > 0 */
		"workload.request_rate=-1",
		"workload.request_rate=2e6",   /* above max */
		"workload.num_prompts=1.5",    /* INI_INT */
		"workload.num_prompts=0",      /* below min 1 */
		"workload.stream=maybe",
		"workload.burstiness=nan",
		"run.name=",                   /* empty string */
	};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		const char *sets[] = { bad[i], NULL };
		struct cfg c;
		struct err e;
		if (bind_file("inidoc_ok.ini", sets, &c, &e) != -1) {
			print_error("--set %s was accepted\n", bad[i]);
			fail();
		}
		assert_contains(e.msg, "--set");
		assert_contains(e.msg, "expected");
	}
}

static void unknown_section_and_key(void **state)
{
	(void)state;
	struct cfg c;
	struct err e;
	assert_int_equal(bind_file("inidoc_unknown_section.ini", NULL, &c, &e), -1);
	/* The line is that of the section's first entry (inidoc keeps entries,
	 * not headers), one below "[engine]". */
	assert_contains(e.msg, "inidoc_unknown_section.ini:6:");
	assert_contains(e.msg, "[engine] max_num_seqs: unknown section");

	static const char *const sets[] = { "workload.request_rte=3", NULL };
	assert_int_equal(bind_file("inidoc_ok.ini", sets, &c, &e), -1);
	assert_contains(e.msg, "request_rte: unknown key");
	assert_contains(e.msg, "request_rate");
}

static void missing_required(void **state)
{
	(void)state;
	/* A document of only a name: request_rate is the first required key
	 * missing. */
	struct inidoc doc = { 0 };
	struct cfg c;
	struct err e = { { 0 } };
	memset(&c, 0, sizeof c);
	assert_int_equal(inidoc_add_override(&doc, "run.name=x", &e), 0);
	assert_int_equal(inidoc_bind(&doc, keys, N_KEYS, &c, false, NULL, &e), -1);
	assert_contains(e.msg, "[workload] request_rate: missing");
	inidoc_free(&doc);
}

/* The longest line inih keeps whole is 198 characters (its 200-byte
 * buffer holds the newline and a NUL too): 198 loads, 199 is an error
 * naming the line, never a silently split value. */
static void line_length_limit(void **state)
{
	(void)state;
	for (int len = 198; len <= 199; len++) {
		char path[] = "/tmp/servesim-inidoc-XXXXXX";
		int fd = mkstemp(path);
		assert_true(fd >= 0);
		FILE *f = fdopen(fd, "w");
		fprintf(f, "[s]\nk = ");
		for (int i = 4; i < len; i++)
			fputc('x', f);
		fputc('\n', f);
		fclose(f);
		struct inidoc doc;
		struct err e;
		int rc = inidoc_load(&doc, path, &e);
		if (len == 198) {
			assert_int_equal(rc, 0);
			assert_int_equal(strlen(doc.entries[0].value), 198 - 4);
		} else {
			assert_int_equal(rc, -1);
			assert_contains(e.msg, ":2: line is longer than 198 characters");
		}
		inidoc_free(&doc);
		unlink(path);
	}
}

static void num_double(void **state)
{
	(void)state;
	double v = 42;
	/* Exact: each is a short decimal that strtod rounds the same way as
	 * the literal. */
	assert_int_equal(num_parse_double(" 12.5 ", &v), 0);
	assert_double_near(v, 12.5, 0.0);
	assert_int_equal(num_parse_double("1e3", &v), 0);
	assert_double_near(v, 1000, 0.0);
	assert_int_equal(num_parse_double("-0.25", &v), 0);
	assert_double_near(v, -0.25, 0.0);
	assert_int_equal(num_parse_double("inf", &v), 0);
	assert_true(isinf(v) && v > 0);

	static const char *const bad[] = { "12abc", "", "   ", "nan", "NaN", "1e999", "1,5", "--1",
					   /* C's hexadecimal floats, which strtod reads (0x1p3 = 8) */
					   "0x1p3", "0X10", "-0x1.8p1", " 0x0 " };
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		v = 42;
		if (num_parse_double(bad[i], &v) != -1) {
			print_error("'%s' parsed as %g\n", bad[i], v);
			fail();
		}
		/* *out is left untouched on failure. */
		assert_double_near(v, 42, 0.0);
	}
}

static void num_int64(void **state)
{
	(void)state;
	int64_t v = 42;
	assert_int_equal(num_parse_int64(" -3 ", &v), 0);
	assert_int_equal(v, -3);
	assert_int_equal(num_parse_int64("9223372036854775807", &v), 0);
	assert_int_equal(v, INT64_MAX);
	static const char *const bad[] = { "1.5", "", "12abc", "1e3", "9223372036854775808", "inf" };
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		v = 42;
		if (num_parse_int64(bad[i], &v) != -1) {
			print_error("'%s' parsed as %lld\n", bad[i], (long long)v);
			fail();
		}
		assert_int_equal(v, 42);
	}
}

static void num_bool(void **state)
{
	(void)state;
	static const char *const yes[] = { "true", "yes", "on", "1", "TRUE", " Yes " };
	static const char *const no[] = { "false", "no", "off", "0", "False" };
	static const char *const bad[] = { "", "2", "maybe", "y", "truee" };
	bool v;
	for (size_t i = 0; i < sizeof yes / sizeof *yes; i++) {
		v = false;
		assert_int_equal(num_parse_bool(yes[i], &v), 0);
		assert_true(v);
	}
	for (size_t i = 0; i < sizeof no / sizeof *no; i++) {
		v = true;
		assert_int_equal(num_parse_bool(no[i], &v), 0);
		assert_false(v);
	}
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
		assert_int_equal(num_parse_bool(bad[i], &v), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(binds_a_valid_file),
		cmocka_unit_test(override_wins),
		cmocka_unit_test(override_bad_value),
		cmocka_unit_test(override_malformed),
		cmocka_unit_test(override_without_file),
		cmocka_unit_test(duplicate_key),
		cmocka_unit_test(enum_rejects_unknown),
		cmocka_unit_test(allow_inf),
		cmocka_unit_test(key_range_edges),
		cmocka_unit_test(rejects_bad_values),
		cmocka_unit_test(unknown_section_and_key),
		cmocka_unit_test(missing_required),
		cmocka_unit_test(line_length_limit),
		cmocka_unit_test(num_double),
		cmocka_unit_test(num_int64),
		cmocka_unit_test(num_bool),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
