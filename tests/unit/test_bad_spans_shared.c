/* test_bad_spans_shared.c - the rows a capture read whole leaves out
 * (sum_bad_spans__count) are counted once for the connections to the
 * file: the HTML page's diagnosis, its idle section and the page itself
 * each counted them in a pass over every table. On a copy of a real
 * capture with rows of impossible spans: the count is SQL's, a second
 * connection opened from the first takes it (the file changed under them
 * afterwards shows it was not counted again), a connection of its own
 * counts anew. */
#include <check.h>
#include <stdio.h>

#include "model/sql.h"
#include "prof/error.h"
#include "prof/store.h"
#include "testutil.h"

static int64_t count_of(struct prof_store *s)
{
	struct prof_error err = { 0 };
	int64_t rows = -1;

	ck_assert_msg(sum_bad_spans__count(s, &rows, &err) == 0, "%s", err.msg);
	return rows;
}

static struct prof_store *open_path(const char *path)
{
	struct prof_error err = { 0 };
	struct prof_store *s = NULL;

	ck_assert_msg(prof_store__open(path, &s, &err) == 0, "%s", err.msg);
	return s;
}

/* One number SQL answers, on a connection of its own. */
static int64_t ask(const char *path, const char *sql)
{
	struct prof_store *s = open_path(path);
	struct prof_error err = { 0 };
	struct prof_cursor *c = NULL;
	int64_t v;

	ck_assert_msg(prof_cursor__open(s, sql, &c, &err) == 0, "%s", err.msg);
	ck_assert_int_eq(prof_cursor__next(c, &err), 1);
	v = prof_cursor__int64(c, 0);
	prof_cursor__close(c);
	prof_store__close(s);
	return v;
}

START_TEST(test_bad_spans_counted_once_a_file)
{
	const char *path = testutil_tmp_path("bad_spans_shared.sqlite");
	struct prof_error err = { 0 };
	struct prof_store *s, *again = NULL, *own;
	int64_t first;

	testutil_copy_file(testutil_data_path("transformer_naive.sqlite"), path);
	testutil_sqlite3(path, "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET end = start - 1 WHERE rowid % 7 = 0;"
			       "UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET end = NULL WHERE rowid % 11 = 0;");
	s = open_path(path);
	first = count_of(s);
	ck_assert_int_eq(first, ask(path, "SELECT (SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL"
					       " WHERE rowid % 7 = 0) + (SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME"
					       " WHERE rowid % 11 = 0)"));
	ck_assert_int_gt(first, 100);
	ck_assert_msg(prof_store__reopen(s, &again, &err) == 0, "%s", err.msg);
	/* more rows damaged behind the readers' backs: the shared count stands */
	testutil_sqlite3(path, "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET end = start - 1 WHERE rowid % 5 = 0;");
	ck_assert_int_eq(count_of(again), first);
	ck_assert_int_eq(count_of(s), first);
	own = open_path(path);
	ck_assert_int_gt(count_of(own), first);
	prof_store__close(own);
	prof_store__close(again);
	prof_store__close(s);
}
END_TEST

int main(void)
{
	Suite *suite = suite_create("bad_spans_shared");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_bad_spans_counted_once_a_file);
	suite_add_tcase(suite, tc);
	return testutil_run(suite);
}
