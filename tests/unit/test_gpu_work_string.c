/* test_gpu_work_string.c - a GPU row's name by its string id
 * (gpu_work__string), asked many times through one statement kept for the
 * connection: each answer is StringIds' own (and "?" for an id it lacks),
 * the statement kept does not hold the connection (a temporary table is
 * made and dropped between two asks, and the views change under it), and
 * each connection keeps its own. On a real capture. */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "analysis/core/gpu_work.h"
#include "model/ranks.h"
#include "prof/store.h"
#include "prof/tables.h"
#include "testutil.h"

static struct prof_store *open_store(void)
{
	struct prof_error err = { 0 };
	struct prof_store *s = NULL;

	ck_assert_msg(prof_store__open(testutil_data_path("ddp/ddp2_even.sqlite"), &s, &err) == 0, "%s", err.msg);
	return s;
}

/* Every string of s's first ids against SQL's, through gpu_work__string on
 * asker; how many were asked. */
static int check_strings(struct prof_store *s, struct prof_store *asker)
{
	struct prof_error err = { 0 };
	struct prof_cursor *c;
	int asked = 0;

	ck_assert_msg(prof_cursor__open(s, "SELECT id, value FROM " PROF_T_STRINGS " ORDER BY id LIMIT 200", &c,
					&err) == 0, "%s", err.msg);
	while (prof_cursor__next(c, &err) == 1) {
		char buf[256], want[256];

		snprintf(want, sizeof want, "%s", prof_cursor__text(c, 1) ? prof_cursor__text(c, 1) : "?");
		ck_assert_str_eq(gpu_work__string(asker, prof_cursor__int64(c, 0), buf, sizeof buf), want);
		asked++;
	}
	prof_cursor__close(c);
	return asked;
}

START_TEST(each_name_as_stringids_has_it)
{
	struct prof_store *s = open_store(), *other = open_store();
	struct prof_error err = { 0 };
	struct sum_ranks r;
	char buf[64];

	ck_assert_int_gt(check_strings(s, s), 100);
	ck_assert_str_eq(gpu_work__string(s, -12345, buf, sizeof buf), "?");
	/* between two asks the connection makes and drops a table, and
	 * narrows its views to a process and back */
	ck_assert_int_eq(prof_store__exec(s, "CREATE TEMP TABLE between_asks (x); DROP TABLE temp.between_asks", &err),
			 0);
	ck_assert_msg(sum_ranks__load(s, &r, &err) == 0, "%s", err.msg);
	ck_assert_msg(sum_ranks__scope(s, r.p[r.n - 1].global_pid, &err) == 0, "%s", err.msg);
	ck_assert_int_gt(check_strings(s, s), 100);
	ck_assert_int_eq(sum_ranks__unscope(s, &err), 0);
	sum_ranks__exit(&r);
	/* another connection's own */
	ck_assert_int_gt(check_strings(s, other), 100);
	prof_store__close(other);
	prof_store__close(s);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("gpu_work_string");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, each_name_as_stringids_has_it);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return testutil_run(suite());
}
