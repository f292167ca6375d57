/* test_html_apart.c - the HTML report with its diagnosis made on a thread
 * and a connection of its own (export/html_apart.c) against the page made
 * in order on one connection: real captures read from their files (made
 * apart) and from memory under the same name (a capture in memory cannot
 * be opened again, so its page is made in order), the same bytes; and
 * which stores open a second connection (prof_store__reopen). */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export/html_report.h"
#include "testutil.h"
#include "prof/error.h"
#include "prof/store.h"
#include "prof/tables.h"

static const char *const captures[] = {
	"transformer_naive.sqlite", "ddp/ddp2_even.sqlite", "ddp/two_gpus/ddp2_even.sqlite",
	"corpus/jax_jit_mlp.sqlite", "nsys/cloverleaf-cuda.sqlite", "corpus/managed_memory.sqlite",
};
#define NCAPTURES (sizeof captures / sizeof captures[0])

static char *page_of(struct prof_store *s)
{
	struct prof_error err = { 0 };
	char *html = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&html, &len);

	ck_assert_ptr_nonnull(f);
	ck_assert_msg(html_report__write(s, NULL, f, &err) == 0, "%s: %s", prof_store__path(s), err.msg);
	fclose(f);
	return html;
}

START_TEST(test_page_made_apart_is_the_page_made_in_order)
{
	for (size_t i = 0; i < NCAPTURES; i++) {
		const char *path = testutil_data_path(captures[i]);
		struct prof_store *file = NULL, *mem = NULL, *again = NULL;
		struct prof_error err = { 0 };
		char *data, *apart, *in_order;
		size_t size;

		data = testutil_read_file(path, &size);
		ck_assert_msg(prof_store__open(path, &file, &err) == 0, "%s", err.msg);
		ck_assert_msg(prof_store__open_memory(data, size, path, &mem, &err) == 0, "%s", err.msg);
		/* the file's page is made apart, the copy's in order */
		ck_assert_msg(prof_store__reopen(file, &again, &err) == 0, "%s: %s", path, err.msg);
		prof_store__close(again);
		ck_assert_int_eq(prof_store__reopen(mem, &again, &err), PROF_E_USAGE);
		ck_assert_ptr_null(again);
		apart = page_of(file);
		in_order = page_of(mem);
		ck_assert_msg(strstr(apart, "id=\"findings\"") && strstr(apart, "id=\"flame\""), "%s", path);
		ck_assert_msg(strcmp(apart, in_order) == 0, "%s: the page made apart differs", path);
		free(apart);
		free(in_order);
		free(data);
		prof_store__close(file);
		prof_store__close(mem);
	}
}
END_TEST

/* A copy of the first capture at path, opened. */
static struct prof_store *open_copy(const char *path)
{
	struct prof_store *s = NULL;
	struct prof_error err = { 0 };

	testutil_copy_file(testutil_data_path(captures[0]), path);
	ck_assert_msg(prof_store__open(path, &s, &err) == 0, "%s", err.msg);
	return s;
}

START_TEST(test_reopen_reads_the_same_file_under_its_name)
{
	struct prof_store *s = open_copy(testutil_tmp_path("apart_named.sqlite")), *again = NULL;
	struct prof_error err = { 0 };

	/* a job's merged capture goes by its captures' name */
	ck_assert_int_eq(prof_store__set_name(s, "the job's captures", &err), 0);
	ck_assert_msg(prof_store__reopen(s, &again, &err) == 0, "%s", err.msg);
	ck_assert_str_eq(prof_store__path(again), "the job's captures");
	ck_assert_int_eq(prof_store__count(again, PROF_T_KERNEL), prof_store__count(s, PROF_T_KERNEL));
	ck_assert_int_gt(prof_store__count(again, PROF_T_KERNEL), 0);
	prof_store__close(again);
	prof_store__close(s);
}
END_TEST

START_TEST(test_reopen_refuses_narrowed_live_and_changed_stores)
{
	const char *path = testutil_tmp_path("apart_changed.sqlite");
	struct prof_store *s = open_copy(path), *again = NULL;
	struct prof_error err = { 0 };

	/* --rank's views are this connection's own */
	ck_assert_int_eq(prof_store__restrict(s, PROF_T_KERNEL, "deviceId = 0", &err), 0);
	ck_assert_int_eq(prof_store__reopen(s, &again, &err), PROF_E_USAGE);
	ck_assert_ptr_null(again);
	ck_assert_int_eq(prof_store__restrict(s, PROF_T_KERNEL, NULL, &err), 0);
	ck_assert_msg(prof_store__reopen(s, &again, &err) == 0, "%s", err.msg);
	prof_store__close(again);
	/* rewritten since the first open: the two would read two captures */
	testutil_sqlite3(path, "DELETE FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE rowid % 2 = 0");
	ck_assert_int_eq(prof_store__reopen(s, &again, &err), PROF_E_USAGE);
	ck_assert_ptr_null(again);
	/* still being written (after the path above: the temporary path is
	 * static storage): the two could read two captures */
	{
		const char *live = testutil_tmp_path("apart_live.sqlite");
		struct prof_store *w = NULL;

		testutil_copy_file(testutil_data_path(captures[0]), live);
		testutil_sqlite3(live, "UPDATE PERFKIT_META SET value = '0' WHERE key = 'finished'");
		ck_assert_msg(prof_store__open(live, &w, &err) == 0, "%s", err.msg);
		ck_assert_int_eq(prof_store__reopen(w, &again, &err), PROF_E_USAGE);
		ck_assert_ptr_null(again);
		prof_store__close(w);
	}
	prof_store__close(s);
}
END_TEST

int main(void)
{
	Suite *suite = suite_create("html_apart");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_page_made_apart_is_the_page_made_in_order);
	tcase_add_test(tc, test_reopen_reads_the_same_file_under_its_name);
	tcase_add_test(tc, test_reopen_refuses_narrowed_live_and_changed_stores);
	suite_add_tcase(suite, tc);
	return testutil_run(suite);
}
