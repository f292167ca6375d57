/* test_store_live_reader.c - finishing a capture that a reader (perfkit
 * top) has open: the finish succeeds, and the file holds every row by
 * itself, whether or not the reader lets go in time for the writer to
 * leave WAL mode. */
#include <check.h>
#include <pthread.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "prof/store.h"
#include "testutil.h"

static char path[512];

static struct prof_writer *writer_with_rows(const char *name, int rows)
{
	struct prof_writer *w = NULL;
	struct prof_error err = { 0 };

	snprintf(path, sizeof path, "%s", testutil_tmp_path(name));
	ck_assert_msg(prof_writer__create(path, 0, &w, &err) == 0, "%s", err.msg);
	for (int i = 0; i < rows; i++) {
		struct prof_kernel k = { .start_ns = 1000 + i, .end_ns = 2000 + i };

		k.demangled_name = prof_writer__string(w, "k");
		ck_assert_int_eq(prof_writer__kernel(w, &k), 0);
	}
	ck_assert_int_eq(prof_writer__flush(w, &err), 0);
	return w;
}

/* Byte 18 of the SQLite header: 1 rollback journal, 2 WAL. */
static int journal_byte(void)
{
	unsigned char h[20] = { 0 };
	FILE *f = fopen(path, "rb");

	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fread(h, 1, sizeof h, f), sizeof h);
	fclose(f);
	return h[18];
}

static void assert_complete(int rows)
{
	struct prof_store *s = NULL;
	struct prof_error err = { 0 };

	ck_assert_msg(prof_store__open(path, &s, &err) == 0, "%s", err.msg);
	ck_assert(prof_store__is_finished(s));
	ck_assert_int_eq(prof_store__count(s, "CUPTI_ACTIVITY_KIND_KERNEL"), rows);
	prof_store__close(s);
}

static void *close_later(void *reader)
{
	usleep(100000);
	prof_store__close(reader);
	return NULL;
}

START_TEST(store_finish_leaves_wal_mode_once_a_reader_lets_go)
{
	struct prof_writer *w = writer_with_rows("lets-go.sqlite", 100);
	struct prof_store *reader = NULL;
	struct prof_error err = { 0 };
	pthread_t t;

	ck_assert_int_eq(prof_store__open(path, &reader, &err), 0);
	ck_assert_int_eq(prof_store__count(reader, "CUPTI_ACTIVITY_KIND_KERNEL"), 100);
	pthread_create(&t, NULL, close_later, reader);
	ck_assert_msg(prof_writer__finish(w, &err) == 0, "%s", err.msg);
	pthread_join(t, NULL);
	ck_assert_int_eq(journal_byte(), 1);
	assert_complete(100);
}
END_TEST

START_TEST(store_finish_succeeds_while_a_reader_stays_connected)
{
	struct prof_writer *w = writer_with_rows("stays.sqlite", 100);
	struct prof_store *reader = NULL;
	struct prof_error err = { 0 };
	char wal[600];
	struct stat st;

	ck_assert_int_eq(prof_store__open(path, &reader, &err), 0);
	ck_assert_msg(prof_writer__finish(w, &err) == 0, "%s", err.msg);
	/* still WAL, but checkpointed: the main file holds everything */
	snprintf(wal, sizeof wal, "%s-wal", path);
	ck_assert(stat(wal, &st) != 0 || st.st_size == 0);
	ck_assert_int_eq(prof_store__count(reader, "CUPTI_ACTIVITY_KIND_KERNEL"), 100);
	prof_store__close(reader);
	assert_complete(100);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("store_live_reader");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, store_finish_leaves_wal_mode_once_a_reader_lets_go);
	tcase_add_test(tc, store_finish_succeeds_while_a_reader_stays_connected);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return testutil_run(suite());
}
