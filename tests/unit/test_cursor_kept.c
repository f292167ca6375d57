/* test_cursor_kept.c - a cursor that keeps a row's kinds and integers
 * once asked (prof_cursor__keep_values) reads every row as SQLite has
 * it: asked in any order and again, the kind is the value's type and the
 * integer its value, row after row of real captures whose columns mix
 * integers, NULLs and text; a column past those kept reads as well; a
 * statement asked again with a new value bound reads the new row. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prof/store.h"
#include "testutil.h"

static const char *const captures[] = {
	"ddp/ddp2_even.sqlite", "corpus/jax_jit_mlp.sqlite", "nsys/cloverleaf-cuda.sqlite",
};

static enum prof_value_kind kind_named(const char *type)
{
	if (!strcmp(type, "integer"))
		return PROF_VALUE_INT;
	if (!strcmp(type, "real"))
		return PROF_VALUE_REAL;
	if (!strcmp(type, "text"))
		return PROF_VALUE_TEXT;
	if (!strcmp(type, "blob"))
		return PROF_VALUE_BLOB;
	return PROF_VALUE_NULL;
}

/* Rows of a value (column 0) whose kind and integer are asked in an order
 * of the row's number, against SQL's own typeof and text of it (columns 1
 * and 2, which the cursor does not keep): the rows counted by kind. */
static void read_rows(const char *path, int64_t counts[5])
{
	static const char sql[] =
		"SELECT v, typeof(v), CAST(v AS TEXT), 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16,"
		" 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, v FROM"
		" (SELECT end AS v, rowid AS r FROM NVTX_EVENTS UNION ALL SELECT value, id FROM StringIds"
		" UNION ALL SELECT correlationId, rowid FROM CUPTI_ACTIVITY_KIND_RUNTIME) ORDER BY r LIMIT 20000";
	struct prof_store *s = NULL;
	struct prof_cursor *c = NULL;
	struct prof_error err = { 0 };
	int64_t row = 0;
	int rc;

	ck_assert_msg(prof_store__open(path, &s, &err) == 0, "%s: %s", path, err.msg);
	ck_assert_msg(prof_cursor__open(s, sql, &c, &err) == 0, "%s", err.msg);
	prof_cursor__keep_values(c);
	while ((rc = prof_cursor__next(c, &err)) == 1) {
		enum prof_value_kind want = kind_named(prof_cursor__text(c, 1));
		const char *text = prof_cursor__text(c, 2);
		int64_t first = 0;

		/* the integer first on odd rows, the kind first on even ones */
		if (row % 2)
			first = prof_cursor__int64(c, 0);
		ck_assert_int_eq(prof_cursor__kind(c, 0), want);
		ck_assert(prof_cursor__is_null(c, 0) == (want == PROF_VALUE_NULL));
		if (want == PROF_VALUE_INT) {
			ck_assert_msg(prof_cursor__int64(c, 0) == strtoll(text, NULL, 10), "%s: row %lld", path,
				      (long long)row);
			ck_assert(row % 2 == 0 || first == prof_cursor__int64(c, 0));
		}
		ck_assert_int_eq(prof_cursor__kind(c, 0), want);
		/* columns past those kept: the same value, as read */
		ck_assert_int_eq(prof_cursor__int64(c, 3 + 34), 34);
		ck_assert_int_eq(prof_cursor__kind(c, 38), want);
		if (want == PROF_VALUE_INT)
			ck_assert(prof_cursor__int64(c, 38) == prof_cursor__int64(c, 0));
		counts[want]++;
		row++;
	}
	ck_assert_int_eq(rc, 0);
	prof_cursor__close(c);
	prof_store__close(s);
}

START_TEST(rows_read_as_sqlite_has_them)
{
	int64_t counts[5] = { 0 };

	for (size_t i = 0; i < sizeof captures / sizeof *captures; i++)
		read_rows(testutil_data_path(captures[i]), counts);
	/* every kind the captures hold, many rows of each */
	ck_assert_int_gt(counts[PROF_VALUE_INT], 1000);
	ck_assert_int_gt(counts[PROF_VALUE_TEXT], 100);
	ck_assert_int_gt(counts[PROF_VALUE_NULL], 1);
}
END_TEST

START_TEST(a_statement_asked_again_reads_its_new_row)
{
	struct prof_store *s = NULL;
	struct prof_cursor *c = NULL;
	struct prof_error err = { 0 };

	ck_assert_int_eq(prof_store__open(testutil_data_path(captures[0]), &s, &err), 0);
	ck_assert_int_eq(prof_cursor__open(s, "SELECT ?1", &c, &err), 0);
	prof_cursor__keep_values(c);
	for (int64_t v = 1; v <= 3; v++) {
		prof_cursor__reset(c);
		if (v == 2)
			ck_assert_int_eq(prof_cursor__bind_text(c, 1, NULL), 0);
		else
			ck_assert_int_eq(prof_cursor__bind_int64(c, 1, v * 1000), 0);
		ck_assert_int_eq(prof_cursor__next(c, &err), 1);
		ck_assert_int_eq(prof_cursor__kind(c, 0), v == 2 ? PROF_VALUE_NULL : PROF_VALUE_INT);
		ck_assert_int_eq(prof_cursor__int64(c, 0), v == 2 ? 0 : v * 1000);
	}
	prof_cursor__close(c);
	prof_store__close(s);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("cursor_kept");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, rows_read_as_sqlite_has_them);
	tcase_add_test(tc, a_statement_asked_again_reads_its_new_row);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return testutil_run(suite());
}
