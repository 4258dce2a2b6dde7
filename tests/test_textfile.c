/*
 * textfile: textfile_read's whole file or a one-line refusal, and
 * textfile_next_line, the line walk the readers of sim/calib share
 * (llama-bench CSV/JSONL/markdown/SQL, Ollama --verbose, vLLM logs,
 * Prometheus scrapes).
 */
#include "testutil.h"

#include "textfile.h"

TEST_TMPDIR_GROUP("textfile")

/* The lines of text, walked, each followed by '\n' into out (cap bytes):
 * returns how many. */
static int walk(const char *text, char *out, size_t cap)
{
	const char *cur = text, *line;
	size_t len, used = 0;
	int n = 0;
	out[0] = '\0';
	while (textfile_next_line(&cur, &line, &len)) {
		assert_true(line >= text && line + len <= text + strlen(text));
		assert_null(memchr(line, '\n', len));   /* a line holds no newline */
		assert_true(used + len + 2 <= cap);
		memcpy(out + used, line, len);
		used += len;
		out[used++] = '\n';
		out[used] = '\0';
		n++;
	}
	assert_ptr_equal(cur, text + strlen(text));   /* the walk ends at the NUL */
	return n;
}

/* Property, over 5,000 random texts of 'a', ' ', '\r' and '\n' (0-40
 * bytes): the lines, each given back its '\n', are the text itself (plus
 * the '\n' a last line without one lacks), and there are as many lines as
 * newlines, plus one for an unterminated last line. '\r' stays in the line. */
static void lines_rebuild_the_text(void **state)
{
	(void)state;
	static const char alphabet[] = "a \r\n";
	unsigned long long x = 88172645463325252ull;   /* xorshift64: the same texts every run */
	for (int t = 0; t < 5000; t++) {
		char text[48], back[128];
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		size_t n = (size_t)(x % 41);
		int newlines = 0;
		for (size_t i = 0; i < n; i++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			text[i] = alphabet[x % 4];
			newlines += text[i] == '\n';
		}
		text[n] = '\0';
		int lines = walk(text, back, sizeof back);
		bool open_last = n > 0 && text[n - 1] != '\n';
		assert_int_equal(lines, newlines + (open_last ? 1 : 0));
		char want[64];
		snprintf(want, sizeof want, "%s%s", text, open_last ? "\n" : "");
		assert_string_equal(back, want);
	}
}

static void lines_at_the_edges(void **state)
{
	(void)state;
	const char *line = (const char *)1, *cur;
	size_t len = 99;
	/* No text, an empty one: no line, the outputs untouched. */
	cur = NULL;
	assert_false(textfile_next_line(&cur, &line, &len));
	cur = "";
	assert_false(textfile_next_line(&cur, &line, &len));
	assert_ptr_equal(line, (const char *)1);
	assert_int_equal(len, 99);
	/* "\n" is one empty line; "a\r\n\nb" three, the '\r' kept. */
	const char *t = "\n";
	cur = t;
	assert_true(textfile_next_line(&cur, &line, &len));
	assert_ptr_equal(line, t);
	assert_int_equal(len, 0);
	assert_false(textfile_next_line(&cur, &line, &len));
	t = "a\r\n\nb";
	cur = t;
	assert_true(textfile_next_line(&cur, &line, &len));
	assert_int_equal(len, 2);
	assert_memory_equal(line, "a\r", 2);
	assert_true(textfile_next_line(&cur, &line, &len));
	assert_int_equal(len, 0);
	assert_ptr_equal(line, t + 3);
	assert_true(textfile_next_line(&cur, &line, &len));
	assert_int_equal(len, 1);
	assert_ptr_equal(line, t + 4);
	assert_false(textfile_next_line(&cur, &line, &len));
}

static void put(const char *name, const void *bytes, size_t n, char *path, size_t cap)
{
	snprintf(path, cap, "%s/%s", tmpdir, name);
	test_write_file(path, bytes, n);
}

static void read_is_whole_or_one_line(void **state)
{
	(void)state;
	char path[128];
	struct err e;
	/* Past the 64 KiB first buffer, whole. */
	size_t n = 200000;
	char *big = malloc(n);
	assert_non_null(big);
	for (size_t i = 0; i < n; i++)
		big[i] = i % 80 == 79 ? '\n' : (char)('a' + i % 26);
	put("big.txt", big, n, path, sizeof path);
	char *got = textfile_read(path, n, &e);
	assert_non_null(got);
	assert_int_equal(strlen(got), n);
	assert_memory_equal(got, big, n);
	free(got);
	/* One byte over the limit. */
	assert_null(textfile_read(path, n - 1, &e));
	assert_contains(e.msg, "big.txt: larger than 199999 bytes");
	free(big);
	/* A NUL on line 2, column 3. */
	put("nul.txt", "ab\ncd\0ef\n", 9, path, sizeof path);
	assert_null(textfile_read(path, 1000, &e));
	assert_contains(e.msg, "nul.txt:2: a NUL byte at column 3; expected text");
	snprintf(path, sizeof path, "%s/absent.txt", tmpdir);
	assert_null(textfile_read(path, 1000, &e));
	assert_contains(e.msg, "absent.txt: cannot open");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(lines_rebuild_the_text),
		cmocka_unit_test(lines_at_the_edges),
		cmocka_unit_test(read_is_whole_or_one_line),
	};
	return cmocka_run_group_tests(tests, tmpdir_setup, tmpdir_teardown);
}
