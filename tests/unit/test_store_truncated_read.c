/* test_store_truncated_read.c - a capture another process truncates while
 * perfkit reads it: the read that meets the missing pages fails with one
 * line saying so, and prof_store__check_read catches it even where the call
 * that met it answered without an error (a count, a table looked up); a
 * file deleted or replaced meanwhile is read whole, as POSIX keeps it open.
 * The capture is a real one (tests/data); its kernels and API calls span
 * hundreds of pages, most past the first 64 KiB. */
#include <check.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "prof/store.h"
#include "prof/tables.h"
#include "testutil.h"

#define FIXTURE "transformer_naive.sqlite"
#define CUT_BYTES 65536

static char path[512];

/* A fresh copy of the fixture, opened; its API calls in the reader's hands. */
static struct prof_store *open_copy(const char *name)
{
	struct prof_store *s = NULL;
	struct prof_error err = { 0 };

	snprintf(path, sizeof path, "%s", testutil_tmp_path(name));
	testutil_copy_file(testutil_data_path(FIXTURE), path);
	ck_assert_msg(prof_store__open(path, &s, &err) == 0, "%s", err.msg);
	return s;
}

static int64_t fixture_count(const char *table)
{
	struct prof_store *s = NULL;
	struct prof_error err = { 0 };
	int64_t n;

	ck_assert_msg(prof_store__open(testutil_data_path(FIXTURE), &s, &err) == 0, "%s", err.msg);
	n = prof_store__count(s, table);
	prof_store__close(s);
	return n;
}

static void assert_truncated_message(const struct prof_error *err)
{
	ck_assert_int_eq(err->code, PROF_E_TRUNCATED);
	ck_assert_msg(strstr(err->msg, path) && strstr(err->msg, "truncated while being read"),
		      "message: %s", err->msg);
	ck_assert_ptr_null(strchr(err->msg, '\n'));
}

START_TEST(store_cursor_fails_when_the_file_is_truncated_mid_read)
{
	struct prof_store *s = open_copy("mid-cursor.sqlite");
	struct prof_cursor *c = NULL;
	struct prof_error err = { 0 };
	int64_t rows = 0;
	int rc;

	ck_assert_int_eq(prof_cursor__open(s, "SELECT start, end FROM " PROF_T_RUNTIME, &c, &err), 0);
	for (int i = 0; i < 10; i++)
		ck_assert_int_eq(prof_cursor__next(c, &err), 1);
	ck_assert_int_eq(truncate(path, CUT_BYTES), 0);
	while ((rc = prof_cursor__next(c, &err)) == 1)
		rows++;
	prof_cursor__close(c);
	ck_assert_msg(rc < 0, "read %lld more rows and no error", (long long)rows);
	assert_truncated_message(&err);
	memset(&err, 0, sizeof err);
	ck_assert_int_eq(prof_store__check_read(s, &err), PROF_E_TRUNCATED);
	assert_truncated_message(&err);
	prof_store__close(s);
}
END_TEST

START_TEST(store_check_read_catches_damage_a_count_answered_without)
{
	struct prof_store *s = open_copy("count.sqlite");
	struct prof_error err = { 0 };
	int64_t n;

	ck_assert_int_eq(prof_store__check_read(s, &err), 0);
	ck_assert_int_eq(truncate(path, CUT_BYTES), 0);
	n = prof_store__count(s, PROF_T_RUNTIME);
	ck_assert_int_lt(n, fixture_count(PROF_T_RUNTIME));
	ck_assert_int_eq(prof_store__check_read(s, &err), PROF_E_TRUNCATED);
	assert_truncated_message(&err);
	prof_store__close(s);
}
END_TEST

START_TEST(store_check_read_passes_a_file_read_whole)
{
	struct prof_store *s = open_copy("whole.sqlite");
	struct prof_error err = { 0 };

	ck_assert_int_eq(prof_store__count(s, PROF_T_RUNTIME), fixture_count(PROF_T_RUNTIME));
	ck_assert_int_eq(prof_store__check_read(s, &err), 0);
	prof_store__close(s);
}
END_TEST

START_TEST(store_reads_a_file_deleted_while_it_is_read_whole)
{
	struct prof_store *s = open_copy("deleted.sqlite");
	struct prof_error err = { 0 };

	ck_assert_int_eq(unlink(path), 0);
	ck_assert_int_eq(prof_store__count(s, PROF_T_RUNTIME), fixture_count(PROF_T_RUNTIME));
	ck_assert_int_eq(prof_store__count(s, PROF_T_KERNEL), fixture_count(PROF_T_KERNEL));
	ck_assert_msg(prof_store__check_read(s, &err) == 0, "%s", err.msg);
	prof_store__close(s);
}
END_TEST

START_TEST(store_reads_a_file_replaced_while_it_is_read_whole)
{
	struct prof_store *s = open_copy("replaced.sqlite");
	struct prof_error err = { 0 };
	char other[512];

	/* a smaller file renamed over it: the name's size says nothing of ours */
	snprintf(other, sizeof other, "%s", testutil_tmp_path("other.sqlite"));
	testutil_copy_file(testutil_data_path("clean_loop.sqlite"), other);
	ck_assert_int_eq(rename(other, path), 0);
	ck_assert_int_eq(prof_store__count(s, PROF_T_RUNTIME), fixture_count(PROF_T_RUNTIME));
	ck_assert_msg(prof_store__check_read(s, &err) == 0, "%s", err.msg);
	prof_store__close(s);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("store_truncated_read");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, store_cursor_fails_when_the_file_is_truncated_mid_read);
	tcase_add_test(tc, store_check_read_catches_damage_a_count_answered_without);
	tcase_add_test(tc, store_check_read_passes_a_file_read_whole);
	tcase_add_test(tc, store_reads_a_file_deleted_while_it_is_read_whole);
	tcase_add_test(tc, store_reads_a_file_replaced_while_it_is_read_whole);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return testutil_run(suite());
}
