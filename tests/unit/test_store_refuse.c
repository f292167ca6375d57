/* test_store_refuse.c - the reader accepts perfkit captures and nsys exports
 * and refuses everything else with the right code and a message naming the
 * file. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "prof/store.h"
#include "testutil.h"

static void write_capture(const char *path, int kernels)
{
	struct prof_error err = { 0 };
	struct prof_writer *w;
	struct prof_kernel k = { 0 };

	ck_assert_msg(prof_writer__create(path, 0, &w, &err) == 0, "%s", err.msg);
	k.demangled_name = prof_writer__string(w, "fill_kernel");
	for (int i = 0; i < kernels; i++) {
		k.start_ns = 1000 + i * 10;
		k.end_ns = k.start_ns + 5;
		k.correlation_id = i + 1;
		ck_assert_int_eq(prof_writer__kernel(w, &k), 0);
	}
	ck_assert_msg(prof_writer__finish(w, &err) == 0, "%s", err.msg);
}

/* Open must fail with code, and the message must name the file. */
static void expect_refusal(const char *path, int code, const char *words)
{
	struct prof_error err = { 0 };
	struct prof_store *s = NULL;

	ck_assert_int_eq(prof_store__open(path, &s, &err), code);
	ck_assert_ptr_null(s);
	ck_assert_int_eq(err.code, code);
	ck_assert_msg(strstr(err.msg, path), "message does not name the file: %s", err.msg);
	ck_assert_msg(strstr(err.msg, words), "message lacks \"%s\": %s", words, err.msg);
	ck_assert_ptr_null(strchr(err.msg, '\n'));
}

START_TEST(store_open_refuses_missing_file_without_creating_it)
{
	char path[512];
	struct stat st;

	snprintf(path, sizeof path, "%s", testutil_tmp_path("missing.sqlite"));
	expect_refusal(path, PROF_E_IO, "no such file");
	ck_assert_int_ne(stat(path, &st), 0);
}
END_TEST

START_TEST(store_open_refuses_random_bytes_as_not_sqlite)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof path, "%s", testutil_tmp_path("random.sqlite"));
	f = fopen(path, "wb");
	srand(7);
	for (int i = 0; i < 8192; i++)
		fputc(rand() & 0xFF, f);
	fclose(f);
	expect_refusal(path, PROF_E_NOT_SQLITE, "not an SQLite database");
}
END_TEST

START_TEST(store_open_refuses_empty_file_as_not_sqlite)
{
	char path[512];

	snprintf(path, sizeof path, "%s", testutil_tmp_path("empty.sqlite"));
	fclose(fopen(path, "wb"));
	expect_refusal(path, PROF_E_NOT_SQLITE, "empty");
}
END_TEST

START_TEST(store_open_refuses_first_half_of_a_capture_as_truncated)
{
	char path[512], half[512];
	FILE *in, *out;
	struct stat st;
	long n;

	snprintf(path, sizeof path, "%s", testutil_tmp_path("whole.sqlite"));
	write_capture(path, 20000);
	ck_assert_int_eq(stat(path, &st), 0);
	snprintf(half, sizeof half, "%s", testutil_tmp_path("half.sqlite"));
	in = fopen(path, "rb");
	out = fopen(half, "wb");
	for (n = 0; n < st.st_size / 2; n++)
		fputc(fgetc(in), out);
	fclose(in);
	fclose(out);
	expect_refusal(half, PROF_E_TRUNCATED, "truncated");
}
END_TEST

START_TEST(store_open_refuses_other_application_database)
{
	char path[512];

	snprintf(path, sizeof path, "%s", testutil_tmp_path("browser.sqlite"));
	testutil_sqlite3(path, "CREATE TABLE moz_places (id INTEGER PRIMARY KEY, url TEXT);"
		 "INSERT INTO moz_places (url) VALUES ('https://example.org');");
	expect_refusal(path, PROF_E_NOT_CAPTURE, "not a perfkit capture or an nsys export");
}
END_TEST

START_TEST(store_open_refuses_newer_user_version)
{
	char path[512], sql[64], words[64];

	snprintf(path, sizeof path, "%s", testutil_tmp_path("newer.sqlite"));
	write_capture(path, 3);
	snprintf(sql, sizeof sql, "PRAGMA user_version = %d", PROF_SCHEMA_VERSION + 1);
	testutil_sqlite3(path, sql);
	snprintf(words, sizeof words, "newer perfkit (schema %d)", PROF_SCHEMA_VERSION + 1);
	expect_refusal(path, PROF_E_NEWER_SCHEMA, words);
}
END_TEST

START_TEST(store_open_refuses_newer_meta_schema_version)
{
	char path[512], sql[128], words[64];

	snprintf(path, sizeof path, "%s", testutil_tmp_path("newer-meta.sqlite"));
	write_capture(path, 3);
	snprintf(sql, sizeof sql, "UPDATE PERFKIT_META SET value = '%d' WHERE key = 'schema_version'",
		 PROF_SCHEMA_VERSION + 3);
	testutil_sqlite3(path, sql);
	snprintf(words, sizeof words, "reads up to %d", PROF_SCHEMA_VERSION);
	expect_refusal(path, PROF_E_NEWER_SCHEMA, words);
}
END_TEST

START_TEST(store_open_refuses_directory)
{
	char path[512];

	snprintf(path, sizeof path, "%s", testutil_tmp_path("dir.sqlite"));
	ck_assert_int_eq(mkdir(path, 0755), 0);
	expect_refusal(path, PROF_E_IO, "directory");
}
END_TEST

START_TEST(store_open_accepts_nsys_shaped_export)
{
	struct prof_error err = { 0 };
	struct prof_store *s = NULL;
	struct prof_cursor *c;
	char path[512];

	snprintf(path, sizeof path, "%s", testutil_tmp_path("nsys.sqlite"));
	/* nsys column names plus columns perfkit does not know; no NVTX,
	 * memcpy or metadata tables (nsys creates tables only for data). */
	testutil_sqlite3(path,
		 "CREATE TABLE StringIds (id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL);"
		 "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, end INTEGER NOT NULL,"
		 " deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, greenContextId INTEGER,"
		 " streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER,"
		 " demangledName INTEGER NOT NULL, shortName INTEGER NOT NULL, mangledName INTEGER,"
		 " launchType INTEGER, cacheConfig INTEGER, registersPerThread INTEGER,"
		 " gridX INTEGER, gridY INTEGER, gridZ INTEGER, blockX INTEGER, blockY INTEGER,"
		 " blockZ INTEGER, staticSharedMemory INTEGER, dynamicSharedMemory INTEGER,"
		 " localMemoryPerThread INTEGER, localMemoryTotal INTEGER, gridId INTEGER,"
		 " sharedMemoryExecuted INTEGER, graphNodeId INTEGER, sharedMemoryLimitConfig INTEGER,"
		 " clusterX INTEGER, clusterY INTEGER, clusterZ INTEGER, graphId INTEGER);"
		 "INSERT INTO StringIds VALUES (7, 'nsys_kernel'), (8, 'nsys_k');"
		 "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, contextId, streamId,"
		 " demangledName, shortName, clusterX) VALUES (100, 350, 0, 1, 7, 7, 8, 2);");
	ck_assert_msg(prof_store__open(path, &s, &err) == 0, "%s", err.msg);
	ck_assert_int_eq(prof_store__kind(s), PROF_STORE_NSYS);
	ck_assert(prof_store__is_finished(s));
	ck_assert(!prof_store__has_table(s, "NVTX_EVENTS"));
	ck_assert(prof_store__has_column(s, "CUPTI_ACTIVITY_KIND_KERNEL", "clusterX"));
	ck_assert(!prof_store__has_column(s, "CUPTI_ACTIVITY_KIND_KERNEL", "noSuchColumn"));
	ck_assert_ptr_null(prof_store__meta(s, "schema_version"));
	ck_assert_int_eq(prof_store__count(s, "CUPTI_ACTIVITY_KIND_KERNEL"), 1);
	ck_assert_int_eq(prof_cursor__open(s, "SELECT s.value, k.end - k.start FROM"
					   " CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s"
					   " ON s.id = k.demangledName", &c, &err), 0);
	ck_assert_int_eq(prof_cursor__next(c, &err), 1);
	ck_assert_str_eq(prof_cursor__text(c, 0), "nsys_kernel");
	ck_assert_int_eq(prof_cursor__int64(c, 1), 250);
	ck_assert_int_eq(prof_cursor__next(c, &err), 0);
	prof_cursor__close(c);
	prof_store__close(s);
}
END_TEST

START_TEST(store_open_accepts_export_marked_by_meta_data_export)
{
	struct prof_error err = { 0 };
	struct prof_store *s = NULL;
	char path[512];

	snprintf(path, sizeof path, "%s", testutil_tmp_path("nsys-meta.sqlite"));
	testutil_sqlite3(path, "CREATE TABLE META_DATA_EXPORT (name TEXT, value TEXT);"
		 "INSERT INTO META_DATA_EXPORT VALUES ('EXPORT_SCHEMA_VERSION', '3.21.0');");
	ck_assert_msg(prof_store__open(path, &s, &err) == 0, "%s", err.msg);
	ck_assert_int_eq(prof_store__kind(s), PROF_STORE_NSYS);
	prof_store__close(s);
}
END_TEST

/* has_table and has_column answer a table the loaded schema holds without a
 * query; views, the rowid's names and a table another connection added
 * after the open still get the answers the queries give. */
START_TEST(store_schema_questions_agree_with_sqlite)
{
	struct prof_error err = { 0 };
	struct prof_store *s = NULL;
	char path[512];

	snprintf(path, sizeof path, "%s", testutil_tmp_path("schema-questions.sqlite"));
	testutil_copy_file(testutil_data_path("gpu_work.sqlite"), path);
	testutil_sqlite3(path, "CREATE VIEW kernel_times AS SELECT start, end"
			       " FROM CUPTI_ACTIVITY_KIND_KERNEL");
	ck_assert_msg(prof_store__open(path, &s, &err) == 0, "%s", err.msg);
	ck_assert(prof_store__has_table(s, "cupti_activity_kind_kernel"));
	ck_assert(prof_store__has_column(s, "CUPTI_ACTIVITY_KIND_KERNEL", "DEVICEID"));
	ck_assert(!prof_store__has_column(s, "CUPTI_ACTIVITY_KIND_KERNEL", "rowid"));
	ck_assert(!prof_store__has_column(s, "NO_SUCH_TABLE", "start"));
	ck_assert(prof_store__has_table(s, "kernel_times"));
	ck_assert(prof_store__has_column(s, "kernel_times", "end"));
	ck_assert(!prof_store__has_column(s, "kernel_times", "deviceId"));
	testutil_sqlite3(path, "CREATE TABLE added_later (x INTEGER)");
	ck_assert(prof_store__has_table(s, "added_later"));
	ck_assert(prof_store__has_column(s, "added_later", "x"));
	prof_store__close(s);
}
END_TEST

START_TEST(store_cursor_reports_bad_sql_naming_the_file)
{
	struct prof_error err = { 0 };
	struct prof_store *s = NULL;
	struct prof_cursor *c = NULL;
	char path[512];

	snprintf(path, sizeof path, "%s", testutil_tmp_path("badsql.sqlite"));
	write_capture(path, 1);
	ck_assert_int_eq(prof_store__open(path, &s, &err), 0);
	ck_assert_int_eq(prof_cursor__open(s, "SELECT * FROM NO_SUCH_TABLE", &c, &err), PROF_E_SQL);
	ck_assert_ptr_null(c);
	ck_assert_ptr_nonnull(strstr(err.msg, path));
	ck_assert_ptr_nonnull(strstr(err.msg, "NO_SUCH_TABLE"));
	prof_store__close(s);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("store_refuse");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, store_open_refuses_missing_file_without_creating_it);
	tcase_add_test(tc, store_open_refuses_random_bytes_as_not_sqlite);
	tcase_add_test(tc, store_open_refuses_empty_file_as_not_sqlite);
	tcase_add_test(tc, store_open_refuses_first_half_of_a_capture_as_truncated);
	tcase_add_test(tc, store_open_refuses_other_application_database);
	tcase_add_test(tc, store_open_refuses_newer_user_version);
	tcase_add_test(tc, store_open_refuses_newer_meta_schema_version);
	tcase_add_test(tc, store_open_refuses_directory);
	tcase_add_test(tc, store_open_accepts_nsys_shaped_export);
	tcase_add_test(tc, store_open_accepts_export_marked_by_meta_data_export);
	tcase_add_test(tc, store_cursor_reports_bad_sql_naming_the_file);
	tcase_add_test(tc, store_schema_questions_agree_with_sqlite);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return testutil_run(suite());
}
