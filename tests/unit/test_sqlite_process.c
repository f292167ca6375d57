/* test_sqlite_process.c - SQLite's process-wide settings for perfkit's own
 * program (prof_sqlite__setup_process): set before any store is opened,
 * SQLite keeps no count of its memory (the count every allocation took a
 * process-wide lock for) and a real capture reads the same rows; asked
 * once SQLite has started, it says so and changes nothing. Each case runs
 * in a child of its own, where SQLite has not started yet. Only libprof
 * includes sqlite3.h: the test reads SQLite's count by its symbol's name,
 * as a debugger would. */
#include <check.h>
#include <dlfcn.h>
#include <stdint.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testutil.h"
#include "prof/error.h"
#include "prof/store.h"

#define CAPTURE "gpu_work.sqlite"

/* sqlite3_memory_highwater(0): the most memory SQLite held at once, as it
 * counts it (0 when it counts nothing) */
static int64_t sqlite_memory_peak(void)
{
	int64_t (*peak)(int) = (int64_t (*)(int))dlsym(RTLD_DEFAULT, "sqlite3_memory_highwater");

	ck_assert_msg(peak != NULL, "SQLite's sqlite3_memory_highwater is not in this process");
	return peak(0);
}

/* The capture's kernels, counted through a store: -1 on failure. */
static int64_t kernels(void)
{
	struct prof_store *s = NULL;
	struct prof_error err = { 0 };
	int64_t n;

	if (prof_store__open_capture(testutil_data_path(CAPTURE), &s, &err) != 0)
		return -1;
	n = prof_store__count(s, "CUPTI_ACTIVITY_KIND_KERNEL");
	prof_store__close(s);
	return n;
}

/* What a case found in a child: the first expectation that failed (0:
 * none) and the kernels it counted. */
struct found {
	int failed;
	int64_t kernels;
};

static struct found in_child(struct found (*body)(void))
{
	struct found f = { -1, -1 };
	int fd[2], status = 0;
	pid_t pid;

	ck_assert_int_eq(pipe(fd), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		f = body();
		_exit(write(fd[1], &f, sizeof f) == (ssize_t)sizeof f ? 0 : 1);
	}
	close(fd[1]);
	ck_assert_int_eq(read(fd[0], &f, sizeof f), (ssize_t)sizeof f);
	close(fd[0]);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	return f;
}

static struct found set_up_first(void)
{
	struct found f = { 0, -1 };

	if (prof_sqlite__setup_process() != 0)
		f.failed = 1;
	else if ((f.kernels = kernels()) <= 0)
		f.failed = 2;
	else if (sqlite_memory_peak() != 0)
		f.failed = 3;
	return f;
}

static struct found set_up_late(void)
{
	struct found f = { 0, -1 };

	if ((f.kernels = kernels()) <= 0)
		f.failed = 1;
	/* SQLite's default counts (the store is closed: its peak): the zero
	 * above is the setting's doing */
	else if (sqlite_memory_peak() <= 0)
		f.failed = 2;
	else if (prof_sqlite__setup_process() != PROF_E_USAGE)
		f.failed = 3;
	else if (kernels() != f.kernels || sqlite_memory_peak() <= 0)
		f.failed = 4;
	return f;
}

START_TEST(set_up_first_keeps_no_memory_count_and_reads_the_same)
{
	struct found first = in_child(set_up_first), late = in_child(set_up_late);

	ck_assert_int_eq(first.failed, 0);
	ck_assert_int_eq(late.failed, 0);
	ck_assert_int_eq(first.kernels, late.kernels);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("sqlite_process");
	TCase *tc = tcase_create("setup");

	tcase_add_test(tc, set_up_first_keeps_no_memory_count_and_reads_the_same);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return testutil_run(suite());
}
