/* test_string_cache.c - string_cache__of_column gives what the subquery it
 * stands in for gives, "(SELECT value FROM StringIds WHERE id = X)", for
 * every kernel's name id of a real capture, and for ids of every other
 * type made from them (text, real, blob, NULL, ids StringIds lacks); a
 * tag set for an id stays with that id. SQL itself says what is right,
 * beside each id, in the same statement. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/string_cache.h"
#include "prof/store.h"
#include "prof/tables.h"
#include "testutil.h"

#define CAPTURE "transformer_naive.sqlite"

/* ids made by X (of k, the kernel table) matched against SQL's answer;
 * returns the rows seen */
static int64_t check_ids(struct prof_store *s, struct string_cache *c, const char *x)
{
	struct prof_error err = { 0 };
	struct prof_cursor *cur = NULL;
	char sql[512];
	int64_t rows = 0;
	int rc;

	snprintf(sql, sizeof sql, "SELECT %s AS x, (SELECT value FROM " PROF_T_STRINGS " WHERE id = %s) FROM "
		 PROF_T_KERNEL " k", x, x);
	ck_assert_msg(prof_cursor__open(s, sql, &cur, &err) == 0, "%s", err.msg);
	while ((rc = prof_cursor__next(cur, &err)) == 1) {
		const char *value, *want = prof_cursor__text(cur, 1);
		int *tag;

		ck_assert_msg(string_cache__of_column(c, cur, 0, &value, &tag, &err) == 0, "%s", err.msg);
		ck_assert_msg((value == NULL) == (want == NULL) && (!value || strcmp(value, want) == 0),
			      "%s: got %s, SQL says %s", x, value ? value : "NULL", want ? want : "NULL");
		ck_assert_ptr_nonnull(tag);
		rows++;
	}
	ck_assert_int_eq(rc, 0);
	prof_cursor__close(cur);
	return rows;
}

START_TEST(values_as_the_subquery_gives_them)
{
	static const char *const ids[] = {
		"coalesce(k.demangledName, k.shortName)",	     /* the names */
		"k.shortName",					     /* others */
		"CAST(coalesce(k.demangledName, k.shortName) AS TEXT)", /* text that reads as an id */
		"CAST(k.demangledName AS REAL)",		     /* a real equal to an id */
		"k.demangledName + 0.5",			     /* a real equal to none */
		"'x' || k.demangledName",			     /* text that is no number */
		"CAST(k.demangledName AS BLOB)",		     /* a blob */
		"NULL",						     /* none */
		"k.demangledName + 1000000000",			     /* an id StringIds lacks */
	};
	struct prof_error err = { 0 };
	struct prof_store *s = NULL;
	struct string_cache *c = NULL;

	ck_assert_msg(prof_store__open(testutil_data_path(CAPTURE), &s, &err) == 0, "%s", err.msg);
	ck_assert_int_eq(string_cache__new(s, &c, &err), 0);
	for (size_t i = 0; i < sizeof ids / sizeof *ids; i++)
		ck_assert_int_gt(check_ids(s, c, ids[i]), 100);
	string_cache__free(c);
	prof_store__close(s);
}
END_TEST

START_TEST(tags_stay_with_their_id)
{
	struct prof_error err = { 0 };
	struct prof_store *s = NULL;
	struct string_cache *c = NULL;
	struct prof_cursor *cur = NULL;
	int64_t names = 0, rows = 0;
	int rc;

	ck_assert_msg(prof_store__open(testutil_data_path(CAPTURE), &s, &err) == 0, "%s", err.msg);
	ck_assert_int_eq(string_cache__new(s, &c, &err), 0);
	ck_assert_int_eq(prof_cursor__open(s, "SELECT coalesce(demangledName, shortName) FROM " PROF_T_KERNEL
					   " ORDER BY rowid", &cur, &err), 0);
	/* each id's tag: -1 the first time it is met, then what was set */
	while ((rc = prof_cursor__next(cur, &err)) == 1) {
		const char *value;
		int *tag, id = (int)prof_cursor__int64(cur, 0);

		ck_assert_int_eq(string_cache__of_column(c, cur, 0, &value, &tag, &err), 0);
		if (*tag < 0) {
			*tag = id;
			names++;
		}
		ck_assert_int_eq(*tag, id);
		rows++;
	}
	ck_assert_int_eq(rc, 0);
	prof_cursor__close(cur);
	/* as many tags set as distinct names, and many rows per name */
	ck_assert_int_eq(prof_cursor__open(s, "SELECT count(DISTINCT coalesce(demangledName, shortName)) FROM "
					   PROF_T_KERNEL, &cur, &err), 0);
	ck_assert_int_eq(prof_cursor__next(cur, &err), 1);
	ck_assert_int_eq(names, prof_cursor__int64(cur, 0));
	ck_assert_int_gt(rows, 10 * names);
	prof_cursor__close(cur);
	string_cache__free(c);
	prof_store__close(s);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("string_cache");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, values_as_the_subquery_gives_them);
	tcase_add_test(tc, tags_stay_with_their_id);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return testutil_run(suite());
}
