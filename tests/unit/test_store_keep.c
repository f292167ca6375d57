/* test_store_keep.c - what a reader keeps for one connection
 * (prof_store__keep): found again under its key alone, handed to its
 * done when replaced and when the store is closed, each value once. */
#include <check.h>
#include <stdlib.h>

#include "testutil.h"
#include "prof/error.h"
#include "prof/store.h"

#define CAPTURE "gpu_metrics/small_grid.sqlite"

static int done_count[3];

static void done(void *value)
{
	done_count[*(int *)value]++;
}

START_TEST(store_keeps_by_key_until_replaced_or_closed)
{
	static const char key_a = 0, key_b = 0;
	static int values[3] = { 0, 1, 2 };
	struct prof_store *s = NULL, *other = NULL;
	struct prof_error err = { 0 };

	ck_assert_msg(prof_store__open_capture(testutil_data_path(CAPTURE), &s, &err) == 0, "%s", err.msg);
	ck_assert_msg(prof_store__open_capture(testutil_data_path(CAPTURE), &other, &err) == 0, "%s", err.msg);
	ck_assert_ptr_null(prof_store__kept(s, &key_a));
	ck_assert_int_eq(prof_store__keep(s, &key_a, &values[0], done, &err), 0);
	ck_assert_int_eq(prof_store__keep(s, &key_b, &values[1], done, &err), 0);
	ck_assert_ptr_eq(prof_store__kept(s, &key_a), &values[0]);
	ck_assert_ptr_eq(prof_store__kept(s, &key_b), &values[1]);
	/* the connection's own: another of the same file keeps nothing */
	ck_assert_ptr_null(prof_store__kept(other, &key_a));
	/* kept again: the old value is done with, the new one found */
	ck_assert_int_eq(prof_store__keep(s, &key_a, &values[2], done, &err), 0);
	ck_assert_int_eq(done_count[0], 1);
	ck_assert_ptr_eq(prof_store__kept(s, &key_a), &values[2]);
	/* the same value again is not done with */
	ck_assert_int_eq(prof_store__keep(s, &key_a, &values[2], done, &err), 0);
	ck_assert_int_eq(done_count[2], 0);
	prof_store__close(other);
	ck_assert_int_eq(done_count[1] + done_count[2], 0);
	prof_store__close(s);
	ck_assert_int_eq(done_count[0], 1);
	ck_assert_int_eq(done_count[1], 1);
	ck_assert_int_eq(done_count[2], 1);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("store_keep");
	TCase *tc = tcase_create("keep");

	tcase_add_test(tc, store_keeps_by_key_until_replaced_or_closed);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return testutil_run(suite());
}
