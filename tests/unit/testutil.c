/* testutil.c - temporary paths, fixture lookup and raw SQL for the unit
 * tests. */
#include "testutil.h"

#include <ftw.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "prof/temp_files.h"

extern char **environ;

static char tmp_dir[256];
static pid_t tmp_dir_owner;
static char path_buf[512];

static int remove_entry(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	return type == FTW_DP ? rmdir(path) : unlink(path);
}

/* Each test runs in a process of its own (Check forks), which makes its own
 * folder: the process that made it removes it, with whatever the test left
 * there, so that a run of the suites leaves nothing in $TMPDIR. */
static void remove_tmp_dir(void)
{
	if (tmp_dir[0] && getpid() == tmp_dir_owner)
		nftw(tmp_dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

const char *testutil_tmp_path(const char *name)
{
	if (!tmp_dir[0]) {
		struct prof_error err = { 0 };

		if (prof_temp_dir__make("perfkit-test", tmp_dir, sizeof tmp_dir, &err) < 0) {
			fprintf(stderr, "%s\n", err.msg);
			abort();
		}
		tmp_dir_owner = getpid();
		atexit(remove_tmp_dir);
	}
	snprintf(path_buf, sizeof path_buf, "%s/%d-%s", tmp_dir, (int)getpid(), name);
	unlink(path_buf);
	return path_buf;
}

const char *testutil_data_path(const char *name)
{
	/* a buffer of its own: a fixture's path passed beside a fresh one
	 * (testutil_copy_file's from and to) must not become it, or the copy
	 * would empty the fixture */
	static char data_buf[512];

	snprintf(data_buf, sizeof data_buf, "%s/%s", PERFKIT_TEST_DATA, name);
	return data_buf;
}

void testutil_copy_file(const char *from, const char *to)
{
	char buf[65536];
	FILE *in = fopen(from, "rb"), *out = fopen(to, "wb");
	size_t n;

	ck_assert_msg(in && out, "cannot copy %s to %s", from, to);
	while ((n = fread(buf, 1, sizeof buf, in)) > 0)
		ck_assert_uint_eq(fwrite(buf, 1, n, out), n);
	fclose(in);
	ck_assert_int_eq(fclose(out), 0);
}

char *testutil_read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	long n;

	ck_assert_msg(f != NULL, "cannot read %s", path);
	ck_assert_int_eq(fseek(f, 0, SEEK_END), 0);
	n = ftell(f);
	ck_assert_int_ge(n, 0);
	rewind(f);
	buf = malloc((size_t)n + 1);
	ck_assert_ptr_nonnull(buf);
	ck_assert_uint_eq(fread(buf, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	buf[n] = '\0';
	*len = (size_t)n;
	return buf;
}

void testutil_limit_file_size(off_t bytes)
{
	struct rlimit limit;

	signal(SIGXFSZ, SIG_IGN);
	ck_assert_int_eq(getrlimit(RLIMIT_FSIZE, &limit), 0);
	limit.rlim_cur = bytes < 0 ? limit.rlim_max : (rlim_t)bytes;
	ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, &limit), 0);
}

void testutil_sqlite3(const char *path, const char *sql)
{
	/* -init /dev/null: a user's ~/.sqliterc must not change what runs */
	char *argv[] = { "sqlite3", "-bail", "-batch", "-init", "/dev/null", (char *)path, (char *)sql,
			 NULL };
	pid_t pid;
	int rc, status;

	rc = posix_spawnp(&pid, "sqlite3", NULL, NULL, argv, environ);
	ck_assert_msg(rc == 0, "cannot run the sqlite3 command-line tool: %s", strerror(rc));
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "sqlite3 %s failed: %s", path,
		      sql);
}

const char *testutil_changed_copy(const char *fixture, const char *name, const char *sql)
{
	static char copy[4096];

	snprintf(copy, sizeof copy, "%s", testutil_tmp_path(name));
	testutil_copy_file(testutil_data_path(fixture), copy);
	testutil_sqlite3(copy, sql);
	return copy;
}

int testutil_run(Suite *suite)
{
	SRunner *sr = srunner_create(suite);
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
