/* test_capture_zero.c - the capture's zero alone (sum_capture__zero) is
 * sum_capture__time's, however the views are narrowed: every row, a
 * rank's scope, --rank and --window. On real captures: a one-file DDP job,
 * and the same with its run's start taken out (its meta and its session
 * start), where the zero is the whole capture's first record and a rank's
 * own rows start later (a zero made of the rows shown would differ
 * there); an nsys export; the two capture windows of a run, without its
 * start, where the zero made of a window's rows would differ too. */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "model/capture_windows.h"
#include "model/ranks.h"
#include "model/window.h"
#include "prof/store.h"
#include "prof/tables.h"
#include "testutil.h"

static struct prof_store *open_store(const char *path)
{
	struct prof_error err = { 0 };
	struct prof_store *s = NULL;

	ck_assert_msg(prof_store__open(path, &s, &err) == 0, "%s: %s", path, err.msg);
	return s;
}

/* s's zero alone against its time, as the views show now; the first
 * record shown, for the caller to tell the views apart. */
static int64_t check_zero(struct prof_store *s, const char *what)
{
	struct prof_error err = { 0 };
	struct sum_capture_time t, z;

	ck_assert_msg(sum_capture__time(s, &t, &err) == 0, "%s: %s", what, err.msg);
	memset(&z, 0x5a, sizeof z);
	ck_assert_msg(sum_capture__zero(s, &z, &err) == 0, "%s: %s", what, err.msg);
	ck_assert_msg(z.zero_ns == t.zero_ns, "%s: zero %lld, the time's %lld", what, (long long)z.zero_ns,
		      (long long)t.zero_ns);
	ck_assert_int_eq(z.zero_utc_ns, t.zero_utc_ns);
	ck_assert_int_eq(z.first_ns, 0);
	ck_assert_int_eq(z.last_ns, 0);
	return t.first_ns;
}

/* Every row, each process's scope, and --rank of each rank; how many
 * scopes showed a first record later than the whole capture's. */
static int check_capture(const char *path)
{
	struct prof_store *s = open_store(path);
	struct prof_error err = { 0 };
	struct sum_ranks r;
	int64_t whole_first = check_zero(s, path);
	int later = 0;

	ck_assert_msg(sum_ranks__load(s, &r, &err) == 0, "%s", err.msg);
	ck_assert_int_gt(r.n, 0);
	for (int i = 0; i < r.n; i++) {
		ck_assert_msg(sum_ranks__scope(s, r.p[i].global_pid, &err) == 0, "%s", err.msg);
		later += check_zero(s, path) > whole_first;
		ck_assert_int_eq(sum_ranks__unscope(s, &err), 0);
	}
	sum_ranks__exit(&r);
	prof_store__close(s);
	for (int rank = 0; rank < 2; rank++) {
		char list[8];

		snprintf(list, sizeof list, "%d", rank);
		s = open_store(path);
		if (summary__select_ranks(s, list, &err) == 0)
			later += check_zero(s, path) > whole_first;
		prof_store__close(s);
	}
	return later;
}

START_TEST(the_zero_of_every_view_is_the_times)
{
	char path[4096];
	int later;

	/* a perfkit capture's zero is its run's start, whatever it shows */
	later = check_capture(testutil_data_path("ddp/ddp2_even.sqlite"));
	ck_assert_int_gt(later, 0);
	/* without the run's start the zero is the first record of all,
	 * which a rank's own rows may not hold */
	snprintf(path, sizeof path, "%s", testutil_tmp_path("capture_zero_no_start.sqlite"));
	testutil_copy_file(testutil_data_path("ddp/ddp2_even.sqlite"), path);
	testutil_sqlite3(path, "DELETE FROM PERFKIT_META WHERE key = 'start_ns'; DELETE FROM " PROF_T_SESSION_START);
	ck_assert_int_gt(check_capture(path), 0);
	check_capture(testutil_data_path("nsys/cloverleaf-cuda.sqlite"));
}
END_TEST

START_TEST(the_zero_of_a_capture_window_is_the_times)
{
	struct prof_error err = { 0 };
	int64_t firsts[2];
	char path[4096];

	/* without the run's start, as above */
	snprintf(path, sizeof path, "%s", testutil_tmp_path("capture_zero_windows.sqlite"));
	testutil_copy_file(testutil_data_path("windows/two_profiler_windows.sqlite"), path);
	testutil_sqlite3(path, "DELETE FROM PERFKIT_META WHERE key = 'start_ns'; DELETE FROM " PROF_T_SESSION_START);
	for (int k = 1; k <= 2; k++) {
		struct prof_store *s = open_store(path);

		ck_assert_msg(summary__select_window(s, k, &err) == 0, "%s", err.msg);
		firsts[k - 1] = check_zero(s, path);
		prof_store__close(s);
	}
	/* two windows, two stretches of rows */
	ck_assert_int_ne(firsts[0], firsts[1]);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("capture_zero");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, the_zero_of_every_view_is_the_times);
	tcase_add_test(tc, the_zero_of_a_capture_window_is_the_times);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return testutil_run(suite());
}
