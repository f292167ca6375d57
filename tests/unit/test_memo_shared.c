/* test_memo_shared.c - answers about every row of a capture that the
 * connections to the file share (sum_shared__take): found on one
 * connection, the one reopened beside it answers the same as a connection
 * of its own, each question under its own tag (the runtime and the driver
 * table's repeated calls differ in this export). The capture's extent
 * (sum_capture__time) and the repeated-call test (sum_call_once_sql), on
 * an nsys export whose runtime table repeats 38 calls. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "model/sql.h"
#include "model/window.h"
#include "prof/store.h"
#include "prof/tables.h"
#include "testutil.h"

#define CAPTURE "nsys/saxpy-mpi-cuda-rank0.sqlite"

static struct prof_store *open_capture(void)
{
	struct prof_error err = { 0 };
	struct prof_store *s = NULL;

	ck_assert_msg(prof_store__open(testutil_data_path(CAPTURE), &s, &err) == 0, "%s", err.msg);
	return s;
}

static void once_sql(struct prof_store *s, const char *table, char *buf)
{
	struct prof_error err = { 0 };

	ck_assert_msg(sum_call_once_sql(s, buf, 384, "a", table, &err) == 0, "%s", err.msg);
}

START_TEST(reopened_answers_as_its_own)
{
	struct prof_error err = { 0 };
	struct prof_store *s = open_capture(), *r = NULL, *alone;
	char got_rt[384], got_drv[384], want_rt[384], want_drv[384];
	struct sum_capture_time ts, tr, ta;

	ck_assert_msg(prof_store__reopen(s, &r, &err) == 0, "%s", err.msg);
	/* found on the reopened connection first, then asked of the first */
	once_sql(r, PROF_T_RUNTIME, got_rt);
	once_sql(s, PROF_T_DRIVER, got_drv);
	once_sql(s, PROF_T_RUNTIME, got_rt);
	ck_assert_int_eq(sum_capture__time(r, &tr, &err), 0);
	ck_assert_int_eq(sum_capture__time(s, &ts, &err), 0);
	alone = open_capture();
	once_sql(alone, PROF_T_RUNTIME, want_rt);
	once_sql(alone, PROF_T_DRIVER, want_drv);
	ck_assert_int_eq(sum_capture__time(alone, &ta, &err), 0);
	/* the runtime table repeats calls, the (missing) driver table none */
	ck_assert_str_ne(want_rt, "1");
	ck_assert_str_eq(want_drv, "1");
	ck_assert_str_eq(got_rt, want_rt);
	ck_assert_str_eq(got_drv, want_drv);
	ck_assert_int_eq(ts.first_ns, ta.first_ns);
	ck_assert_int_eq(ts.last_ns, ta.last_ns);
	ck_assert_int_eq(ts.zero_ns, ta.zero_ns);
	ck_assert_int_eq(tr.last_ns, ta.last_ns);
	ck_assert(ta.last_ns > ta.first_ns);
	prof_store__close(r);
	prof_store__close(s);
	prof_store__close(alone);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("memo_shared");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, reopened_answers_as_its_own);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return testutil_run(suite());
}
