/* test_cursor_copy.c - a copy of a cursor's row (prof_cursor__copy_row)
 * reads as the cursor read: the same kind, NULL, integer, real, text and
 * bytes for every column of every row of every table of real captures,
 * each column also cast to REAL, TEXT and BLOB (and one past the last
 * column, which reads as NULL). The copy is read after its cursor has
 * stepped on, against a second cursor on the row it copied, and one copy
 * serves every table in turn, wide and narrow; a copy of the copy reads
 * the same. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prof/store.h"
#include "testutil.h"

/* Tables of a few hundred thousand rows make the test slow; each holds
 * every kind of value in its first rows. */
#define ROWS_PER_TABLE 1000

static char *quoted(const char *name)
{
	char *q = malloc(strlen(name) * 2 + 3), *at = q;

	ck_assert_ptr_nonnull(q);
	*at++ = '"';
	for (const char *c = name; *c; c++) {
		if (*c == '"')
			*at++ = '"';
		*at++ = *c;
	}
	*at++ = '"';
	*at = '\0';
	return q;
}

/* "SELECT c, ..., CAST(c AS REAL), CAST(c AS TEXT), CAST(c AS BLOB), ...
 * FROM table LIMIT n", from the table's own columns. */
static char *select_with_casts(struct prof_store *s, const char *table)
{
	static const char *const casts[] = { "%s", "CAST(%s AS REAL)", "CAST(%s AS TEXT)",
					     "CAST(%s AS BLOB)" };
	struct prof_error err = { 0 };
	struct prof_cursor *cols = NULL;
	char *qt = quoted(table), *sql = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&sql, &len);
	bool first = true;

	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(prof_cursor__open(s, "SELECT name FROM pragma_table_info(?1)", &cols, &err), 0);
	ck_assert_int_eq(prof_cursor__bind_text(cols, 1, table), 0);
	fputs("SELECT ", f);
	for (int c = 0; c < 4; c++) {
		prof_cursor__reset(cols);
		while (prof_cursor__next(cols, &err) == 1) {
			char *qc = quoted(prof_cursor__text(cols, 0));

			fputs(first ? "" : ", ", f);
			fprintf(f, casts[c], qc);
			first = false;
			free(qc);
		}
	}
	fprintf(f, " FROM %s LIMIT %d", qt, ROWS_PER_TABLE);
	fclose(f);
	prof_cursor__close(cols);
	free(qt);
	return first ? (free(sql), NULL) : sql;
}

static bool same_double(double a, double b)
{
	return (isnan(a) && isnan(b)) || memcmp(&a, &b, sizeof a) == 0;
}

/* copy against cur, which stands on the row copy holds; the cursor's
 * accessors in the order that keeps each answer defined (its kind before
 * any conversion, its numbers before its text). */
static void expect_same_row(struct prof_cursor *copy, struct prof_cursor *cur, const char *sql)
{
	int n = prof_cursor__columns(cur);

	ck_assert_int_eq(prof_cursor__columns(copy), n);
	for (int col = 0; col <= n; col++) {
		enum prof_value_kind kind = prof_cursor__kind(cur, col);
		bool null = prof_cursor__is_null(cur, col);
		int64_t i = prof_cursor__int64(cur, col);
		double d = prof_cursor__double(cur, col);
		size_t len = 0, copy_len = 0;
		const char *text = prof_cursor__text_bytes(cur, col, &len);
		const char *copy_text = prof_cursor__text_bytes(copy, col, &copy_len);

		ck_assert_msg(prof_cursor__kind(copy, col) == kind, "%s: column %d: kind", sql, col);
		ck_assert_int_eq(prof_cursor__is_null(copy, col), null);
		ck_assert_msg(prof_cursor__int64(copy, col) == i, "%s: column %d: integer", sql, col);
		ck_assert_msg(same_double(prof_cursor__double(copy, col), d), "%s: column %d: real", sql,
			      col);
		ck_assert_msg((text == NULL) == (copy_text == NULL) && copy_len == len &&
				      (!len || memcmp(text, copy_text, len) == 0),
			      "%s: column %d: text", sql, col);
		if (text)
			ck_assert_str_eq(prof_cursor__text(copy, col), prof_cursor__text(cur, col));
		if (kind == PROF_VALUE_BLOB || kind == PROF_VALUE_TEXT) {
			const void *blob = prof_cursor__blob(cur, col, &len);
			const void *copy_blob = prof_cursor__blob(copy, col, &copy_len);

			ck_assert_msg(copy_len == len && (!len || memcmp(blob, copy_blob, len) == 0),
				      "%s: column %d: bytes", sql, col);
		}
	}
}

/* Every table of the capture at name, its rows copied (into copy, and
 * copy into again) and compared; returns the values compared. */
static long expect_copies_read_as_rows(const char *name, struct prof_cursor *copy,
				       struct prof_cursor *again)
{
	struct prof_error err = { 0 };
	struct prof_store *s = NULL;
	struct prof_cursor *tables = NULL;
	long values = 0;

	ck_assert_msg(prof_store__open(testutil_data_path(name), &s, &err) == 0, "%s", err.msg);
	ck_assert_int_eq(prof_cursor__open(s, "SELECT name FROM sqlite_master WHERE type = 'table' "
					      "ORDER BY name", &tables, &err), 0);
	while (prof_cursor__next(tables, &err) == 1) {
		char *sql = select_with_casts(s, prof_cursor__text(tables, 0));
		struct prof_cursor *ahead = NULL, *cur = NULL;

		if (!sql)
			continue;
		ck_assert_msg(prof_cursor__open(s, sql, &ahead, &err) == 0, "%s: %s", sql, err.msg);
		ck_assert_int_eq(prof_cursor__open(s, sql, &cur, &err), 0);
		/* ahead is copied, then stepped on, before the copy is read */
		ck_assert_int_ge(prof_cursor__next(ahead, &err), 0);
		while (prof_cursor__next(cur, &err) == 1) {
			ck_assert_int_eq(prof_cursor__copy_row(copy, ahead, &err), 0);
			ck_assert_int_ge(prof_cursor__next(ahead, &err), 0);
			expect_same_row(copy, cur, sql);
			/* a copy of the copy (a merge read ahead of its feed),
			 * against the copy: the cursor's text reads above may
			 * have turned its values' kinds */
			ck_assert_int_eq(prof_cursor__copy_row(again, copy, &err), 0);
			expect_same_row(again, copy, sql);
			values += prof_cursor__columns(cur);
		}
		prof_cursor__close(ahead);
		prof_cursor__close(cur);
		free(sql);
	}
	prof_cursor__close(tables);
	prof_store__close(s);
	return values;
}

START_TEST(test_copies_read_as_the_rows_they_copied)
{
	struct prof_error err = { 0 };
	struct prof_cursor *copy = NULL, *again = NULL;

	ck_assert_int_eq(prof_cursor__new_copy(&copy, &err), 0);
	ck_assert_int_eq(prof_cursor__new_copy(&again, &err), 0);
	/* before any row: no columns, no row */
	ck_assert_int_eq(prof_cursor__columns(copy), 0);
	ck_assert_int_eq(prof_cursor__next(copy, &err), 0);
	ck_assert(prof_cursor__is_null(copy, 0));
	/* a perfkit capture with NVTX text, a job, an nsys export: values
	 * were compared, so a capture read as nothing cannot pass */
	ck_assert_int_gt(expect_copies_read_as_rows("transformer_naive.sqlite", copy, again), 0);
	ck_assert_int_gt(expect_copies_read_as_rows("ddp/ddp2_even.sqlite", copy, again), 0);
	ck_assert_int_gt(expect_copies_read_as_rows("nsys/cloverleaf-cuda.sqlite", copy, again), 0);
	prof_cursor__close(copy);
	prof_cursor__close(again);
}
END_TEST

int main(void)
{
	Suite *suite = suite_create("cursor_copy");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, test_copies_read_as_the_rows_they_copied);
	suite_add_tcase(suite, tc);
	return testutil_run(suite);
}
