/* test_temp_dir.c - libprof's temporary folder: a private folder under
 * $TMPDIR named by its prefix; the registered kind is gone when a signal
 * ends the process, the unregistered kind (its owner removes it) stays;
 * a name too long for the buffer is refused with errno saying so. */
#include <check.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "prof/temp_files.h"
#include "testutil.h"

/* A fresh folder for TMPDIR, named for the test. */
static const char *fresh_tmpdir(const char *name)
{
	const char *dir = testutil_tmp_path(name);

	ck_assert_int_eq(mkdir(dir, 0700), 0);
	ck_assert_int_eq(setenv("TMPDIR", dir, 1), 0);
	return dir;
}

typedef int (*make_fn)(const char *prefix, char *path, size_t cap, struct prof_error *err);

/* In a child: make the folder, write its name to the pipe, end by SIGTERM. */
static void made_then_killed(make_fn make, char *path, size_t cap)
{
	int fds[2];
	pid_t pid;
	int status;
	ssize_t n;

	ck_assert_int_eq(pipe(fds), 0);
	/* the child reports nothing to Check: it may only _exit */
	pid = fork();
	if (pid == 0) {
		struct prof_error err = { 0 };
		char dir[PATH_MAX];

		close(fds[0]);
		/* SIGTERM as a process has it, not as Check's runner handles it */
		signal(SIGTERM, SIG_DFL);
		if (make("perfkit-test", dir, sizeof dir, &err) < 0)
			_exit(3);
		if (write(fds[1], dir, strlen(dir) + 1) < 0)
			_exit(4);
		close(fds[1]);
		raise(SIGTERM);
		_exit(5);
	}
	ck_assert_int_gt(pid, 0);
	close(fds[1]);
	n = read(fds[0], path, cap - 1);
	close(fds[0]);
	ck_assert_int_gt(n, 0);
	path[n] = '\0';
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM);
}

START_TEST(temp_dir_is_private_and_named_by_its_prefix)
{
	const char *base = fresh_tmpdir("tmpdir1");
	struct prof_error err = { 0 };
	char path[PATH_MAX], want[PATH_MAX];
	struct stat st;

	ck_assert_int_eq(prof_temp_dir__make("perfkit-x", path, sizeof path, &err), 0);
	snprintf(want, sizeof want, "%s/perfkit-x-", base);
	ck_assert_int_eq(strncmp(path, want, strlen(want)), 0);
	ck_assert_uint_eq(strlen(path), strlen(want) + 6);
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert(S_ISDIR(st.st_mode));
	ck_assert_int_eq(st.st_mode & 0777, 0700);
	ck_assert_int_eq(rmdir(path), 0);
}
END_TEST

START_TEST(temp_dir_registered_is_removed_by_a_signal)
{
	char path[PATH_MAX];
	struct stat st;

	fresh_tmpdir("tmpdir2");
	made_then_killed(prof_temp_dir__create, path, sizeof path);
	ck_assert_int_eq(stat(path, &st), -1);
	ck_assert_int_eq(errno, ENOENT);
}
END_TEST

START_TEST(temp_dir_made_unregistered_stays_for_its_owner)
{
	char path[PATH_MAX];
	struct stat st;

	fresh_tmpdir("tmpdir3");
	made_then_killed(prof_temp_dir__make, path, sizeof path);
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert(S_ISDIR(st.st_mode));
	ck_assert_int_eq(rmdir(path), 0);
}
END_TEST

START_TEST(temp_dir_name_too_long_is_refused)
{
	struct prof_error err = { 0 };
	char path[16] = "untouched";

	fresh_tmpdir("tmpdir4");
	errno = 0;
	ck_assert_int_eq(prof_temp_dir__make("perfkit-x", path, sizeof path, &err), PROF_E_IO);
	ck_assert_int_eq(errno, ENAMETOOLONG);
	ck_assert_str_eq(path, "");
	ck_assert_ptr_nonnull(strstr(err.msg, "too long"));
	ck_assert_int_eq(prof_temp_dir__create("perfkit-x", path, sizeof path, &err), PROF_E_IO);
}
END_TEST

START_TEST(temp_dir_in_a_missing_tmpdir_says_why)
{
	struct prof_error err = { 0 };
	char path[PATH_MAX];

	ck_assert_int_eq(setenv("TMPDIR", testutil_tmp_path("missing"), 1), 0);
	ck_assert_int_eq(prof_temp_dir__create("perfkit-x", path, sizeof path, &err), PROF_E_IO);
	ck_assert_int_eq(errno, ENOENT);
	ck_assert_ptr_nonnull(strstr(err.msg, "cannot make a temporary folder"));
}
END_TEST

int main(void)
{
	Suite *s = suite_create("temp_dir");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, temp_dir_is_private_and_named_by_its_prefix);
	tcase_add_test(tc, temp_dir_registered_is_removed_by_a_signal);
	tcase_add_test(tc, temp_dir_made_unregistered_stays_for_its_owner);
	tcase_add_test(tc, temp_dir_name_too_long_is_refused);
	tcase_add_test(tc, temp_dir_in_a_missing_tmpdir_says_why);
	suite_add_tcase(s, tc);
	return testutil_run(s);
}
