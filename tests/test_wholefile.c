/*
 * wholefile: outputs whole or absent. The folder stage (--plot) appears
 * at once when new and adds its files to a folder that exists; mkdir -p
 * makes every parent and names a file standing in the way; scratch files
 * land in $TMPDIR; a FIFO or device destination stays one.
 */
#include "testutil.h"

#include "wholefile.h"

#include <fcntl.h>
#include <sys/stat.h>

TEST_TMPDIR_GROUP("wholefile")

static void put(const char *dir, const char *name, const char *text)
{
	char path[PATH_MAX + 64];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	test_write_text(path, text);
}

/* The names in dir, sorted, one a line ("" when empty or absent). */
static char *listing(const char *dir)
{
	struct cmd_result r;
	run_cmd(&r, "ls -A '%s' 2>/dev/null", dir);
	char *out = strdup(r.out);
	cmd_result_free(&r);
	return out;
}

static void stage_fresh_folder(void **state)
{
	(void)state;
	char dir[512], parent[256];
	snprintf(parent, sizeof parent, "%s/new/a", tmpdir);
	snprintf(dir, sizeof dir, "%s/b/", parent);   /* a trailing slash names the folder */
	struct wholedir d;
	struct err e;
	assert_int_equal(wholedir_stage(&d, dir, &e), 0);
	put(d.stage, "one.dat", "1\n");
	put(d.stage, "two.png", "2\n");
	struct stat st;
	assert_int_not_equal(stat(d.dir, &st), 0);   /* nothing before the commit */
	assert_int_equal(wholedir_stage_commit(&d, &e), 0);
	char *l = listing(d.dir);
	assert_string_equal(l, "one.dat\ntwo.png\n");
	free(l);
	l = listing(parent);
	assert_string_equal(l, "b\n");   /* no stage left beside it */
	free(l);
	/* Aborted: neither the folder nor its stage. */
	snprintf(dir, sizeof dir, "%s/c", parent);
	assert_int_equal(wholedir_stage(&d, dir, &e), 0);
	put(d.stage, "one.dat", "1\n");
	wholedir_stage_abort(&d);
	l = listing(parent);
	assert_string_equal(l, "b\n");
	free(l);
}

static void stage_existing_folder(void **state)
{
	(void)state;
	char dir[256];
	snprintf(dir, sizeof dir, "%s/old", tmpdir);
	assert_int_equal(mkdir(dir, 0777), 0);
	put(dir, "notes.txt", "mine\n");
	put(dir, "one.dat", "old\n");
	struct wholedir d;
	struct err e;
	assert_int_equal(wholedir_stage(&d, dir, &e), 0);
	put(d.stage, "one.dat", "new\n");
	put(d.stage, "two.png", "2\n");
	assert_int_equal(wholedir_stage_commit(&d, &e), 0);
	char *l = listing(dir);
	assert_string_equal(l, "notes.txt\none.dat\ntwo.png\n");
	free(l);
	char path[300], text[16] = "";
	snprintf(path, sizeof path, "%s/one.dat", dir);
	FILE *f = fopen(path, "r");
	assert_non_null(fgets(text, sizeof text, f));
	fclose(f);
	assert_string_equal(text, "new\n");
	l = listing(tmpdir);
	assert_null(strstr(l, ".tmp"));
	free(l);
}

static void mkdirs_and_a_file_in_the_way(void **state)
{
	(void)state;
	char dir[256];
	struct err e;
	snprintf(dir, sizeof dir, "%s/p/q/r", tmpdir);
	assert_int_equal(wholefile_mkdirs(dir, &e), 0);
	assert_int_equal(wholefile_mkdirs(dir, &e), 0);   /* again: nothing to do */
	snprintf(dir, sizeof dir, "%s/p", tmpdir);
	put(dir, "file", "x");
	snprintf(dir, sizeof dir, "%s/p/file/s", tmpdir);
	assert_int_equal(wholefile_mkdirs(dir, &e), -1);
	assert_contains(e.msg, "/p/file: cannot create the folder: a file of that name exists");
	struct wholedir d;
	assert_int_equal(wholedir_stage(&d, dir, &e), -1);
}

static void temp_in_tmpdir(void **state)
{
	(void)state;
	char path[PATH_MAX];
	struct err e;
	setenv("TMPDIR", tmpdir, 1);
	assert_int_equal(wholefile_temp(path, sizeof path, "fit", ".ini", &e), 0);
	unsetenv("TMPDIR");
	assert_int_equal(strncmp(path, tmpdir, strlen(tmpdir)), 0);
	assert_non_null(strstr(path, "/servesim-fit-"));
	assert_string_equal(path + strlen(path) - 4, ".ini");
	assert_int_equal(access(path, W_OK), 0);
	unlink(path);
	char tiny[16];
	assert_int_equal(wholefile_temp(tiny, sizeof tiny, "fit", ".ini", &e), -1);
}

/* A destination that is a FIFO (or a device: --out /dev/stdout) is
 * written in place; the temporary renamed onto it made it a file (as
 * root, `report --out /dev/full` replaced the device). */
static void a_fifo_is_written_in_place(void **state)
{
	(void)state;
	char path[256];
	struct err e;
	snprintf(path, sizeof path, "%s/fifo", tmpdir);
	assert_int_equal(mkfifo(path, 0600), 0);
	int rd = open(path, O_RDWR | O_NONBLOCK);   /* a reader, so opening to write does not block */
	assert_true(rd >= 0);
	FILE *f = wholefile_open(path, &e);
	assert_non_null(f);
	fputs("whole\n", f);
	assert_int_equal(wholefile_commit(f, path, &e), 0);
	struct stat st;
	assert_int_equal(stat(path, &st), 0);
	assert_true(S_ISFIFO(st.st_mode));
	char buf[16] = "";
	assert_int_equal(read(rd, buf, sizeof buf - 1), 6);
	assert_string_equal(buf, "whole\n");
	close(rd);
	char *l = listing(tmpdir);
	assert_null(strstr(l, ".tmp"));   /* no temporary beside it */
	free(l);
	unlink(path);
}

/* A symbolic link to a file: the file it names is replaced, the link
 * stays a link (renamed onto, the link became a file and the file it named
 * kept its old text). */
static void a_symlink_keeps_pointing(void **state)
{
	(void)state;
	char real[256], link[256];
	struct err e;
	snprintf(real, sizeof real, "%s/real.txt", tmpdir);
	snprintf(link, sizeof link, "%s/link.txt", tmpdir);
	test_write_text(real, "old\n");
	assert_int_equal(symlink("real.txt", link), 0);
	FILE *f = wholefile_open(link, &e);
	assert_non_null(f);
	fputs("new\n", f);
	assert_int_equal(wholefile_commit(f, link, &e), 0);
	struct stat st;
	assert_int_equal(lstat(link, &st), 0);
	assert_true(S_ISLNK(st.st_mode));
	char buf[16] = "";
	f = fopen(real, "r");
	assert_non_null(f);
	assert_non_null(fgets(buf, sizeof buf, f));
	fclose(f);
	assert_string_equal(buf, "new\n");
	/* An aborted write leaves both as they were, and no temporary. */
	f = wholefile_open(link, &e);
	assert_non_null(f);
	fputs("lost\n", f);
	wholefile_abort(f, link);
	char *l = listing(tmpdir);
	assert_null(strstr(l, ".tmp"));
	free(l);
	unlink(link);
	unlink(real);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(stage_fresh_folder),
		cmocka_unit_test(stage_existing_folder),
		cmocka_unit_test(mkdirs_and_a_file_in_the_way),
		cmocka_unit_test(temp_in_tmpdir),
		cmocka_unit_test(a_fifo_is_written_in_place),
		cmocka_unit_test(a_symlink_keeps_pointing),
	};
	return cmocka_run_group_tests(tests, tmpdir_setup, tmpdir_teardown);
}
