/* test_store_views.c - the schema answered once: after the open, every
 * table of prof/tables.h reads in its canonical form whatever the file has
 * (a column an older capture or export lacks reads as NULL, a missing table
 * as empty, the file's own extra columns and its rowid stay), the queries
 * keep the file's indexes, --rank's restriction narrows and puts back a
 * table's rows, and nothing is written to the file. The stores are real
 * captures from tests/data, changed with the sqlite3 tool. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prof/store.h"
#include "prof/tables.h"
#include "testutil.h"

static const char *fixture_copy(const char *fixture, const char *name, const char *sql)
{
	static char path[512];

	snprintf(path, sizeof path, "%s", testutil_tmp_path(name));
	testutil_copy_file(testutil_data_path(fixture), path);
	if (sql)
		testutil_sqlite3(path, sql);
	return path;
}

static struct prof_store *open_store(const char *path)
{
	struct prof_error err = { 0 };
	struct prof_store *s = NULL;

	ck_assert_msg(prof_store__open(path, &s, &err) == 0, "%s", err.msg);
	return s;
}

/* The one integer sql gives (it must give one row). */
static int64_t one_int(struct prof_store *s, const char *sql)
{
	struct prof_error err = { 0 };
	struct prof_cursor *c = NULL;
	int64_t v;

	ck_assert_msg(prof_cursor__open(s, sql, &c, &err) == 0, "%s: %s", sql, err.msg);
	ck_assert_msg(prof_cursor__next(c, &err) == 1, "%s: %s", sql, err.msg);
	v = prof_cursor__int64(c, 0);
	prof_cursor__close(c);
	return v;
}

/* The plan of sql, its lines joined. */
static void plan_of(struct prof_store *s, const char *sql, char *buf, size_t cap)
{
	struct prof_error err = { 0 };
	struct prof_cursor *c = NULL;
	char q[1024];
	size_t used = 0;

	snprintf(q, sizeof q, "EXPLAIN QUERY PLAN %s", sql);
	buf[0] = '\0';
	ck_assert_msg(prof_cursor__open(s, q, &c, &err) == 0, "%s", err.msg);
	while (prof_cursor__next(c, &err) == 1 && used < cap)
		used += (size_t)snprintf(buf + used, cap - used, "%s\n", prof_cursor__text(c, 3));
	prof_cursor__close(c);
}

START_TEST(missing_column_reads_as_null)
{
	const char *path = fixture_copy("clean_loop.sqlite", "old.sqlite",
					"DROP INDEX IF EXISTS perfkit_kernel_name_dur;"
					"ALTER TABLE " PROF_T_KERNEL " DROP COLUMN shortName;"
					"ALTER TABLE " PROF_T_KERNEL " DROP COLUMN greenContextId;");
	struct prof_store *s = open_store(path);

	ck_assert(!prof_store__has_column(s, PROF_T_KERNEL, "shortName"));
	ck_assert_int_gt(one_int(s, "SELECT count(*) FROM " PROF_T_KERNEL), 0);
	ck_assert_int_eq(one_int(s, "SELECT count(*) FROM " PROF_T_KERNEL
				    " WHERE shortName IS NOT NULL OR greenContextId IS NOT NULL"), 0);
	/* the kernel's name falls back to nothing, not to an error */
	ck_assert_int_eq(one_int(s, "SELECT count(*) FROM " PROF_T_KERNEL " k WHERE "
				    PROF_SQL_KERNEL_NAME_ID("k.") " IS NULL"),
			 one_int(s, "SELECT count(*) FROM main." PROF_T_KERNEL
				    " WHERE demangledName IS NULL"));
	prof_store__close(s);
}
END_TEST

START_TEST(missing_table_reads_as_empty_but_is_not_there)
{
	const char *path = fixture_copy("clean_loop.sqlite", "no_memset.sqlite",
					"DROP TABLE IF EXISTS " PROF_T_MEMSET ";"
					"DROP TABLE IF EXISTS " PROF_T_SYNC ";");
	struct prof_store *s = open_store(path);

	ck_assert(!prof_store__has_table(s, PROF_T_MEMSET));
	ck_assert_int_eq(prof_store__count(s, PROF_T_MEMSET), 0);
	ck_assert_int_eq(one_int(s, "SELECT count(*) FROM " PROF_T_MEMSET " WHERE bytes > 0"), 0);
	ck_assert_int_eq(one_int(s, "SELECT count(*) FROM " PROF_T_SYNC " y JOIN " PROF_T_KERNEL
				    " k ON k.correlationId = y.correlationId"), 0);
	/* nsys's own tables read the same way where an export lacks them */
	ck_assert_int_eq(one_int(s, "SELECT count(*) FROM " PROF_T_SYSTEM_ENV " WHERE name = 'x'"),
			 0);
	prof_store__close(s);
}
END_TEST

START_TEST(analysis_table_missing_reads_as_empty)
{
	/* a capture without hardware metrics: the tables were never added */
	struct prof_store *s = open_store(testutil_data_path("clean_loop.sqlite"));

	ck_assert(!prof_store__has_table(s, PROF_T_KERNEL_METRICS));
	ck_assert(!prof_store__has_table(s, PROF_T_PEAKS));
	ck_assert_int_eq(one_int(s, "SELECT count(*) FROM " PROF_T_KERNEL_METRICS " m JOIN "
				    PROF_T_KERNEL " k ON k.correlationId = m.correlationId"), 0);
	ck_assert_int_eq(one_int(s, "SELECT count(value) FROM " PROF_T_PEAKS), 0);
	prof_store__close(s);
}
END_TEST

START_TEST(analysis_table_older_columns_read_as_null)
{
	/* a capture from before the access-efficiency counters */
	struct prof_store *s = open_store(testutil_data_path("rollout_naive_roofline.sqlite"));

	ck_assert(!prof_store__has_column(s, PROF_T_KERNEL_METRICS, "ldSectors"));
	ck_assert_int_gt(one_int(s, "SELECT count(*) FROM " PROF_T_KERNEL_METRICS), 0);
	ck_assert_int_eq(one_int(s, "SELECT count(ldSectors) FROM " PROF_T_KERNEL_METRICS), 0);
	prof_store__close(s);
}
END_TEST

START_TEST(owner_column_falls_back_to_the_one_the_file_has)
{
	struct prof_store *s = open_store(testutil_data_path("clean_loop.sqlite"));

	/* kernels say whose by globalPid alone, API calls by globalTid */
	ck_assert(!prof_store__has_column(s, PROF_T_KERNEL, "globalTid"));
	ck_assert(prof_store__has_column(s, PROF_T_KERNEL, "globalPid"));
	ck_assert_str_eq(prof_store__owner_column(s, PROF_T_KERNEL, "globalTid"), "globalPid");
	ck_assert_str_eq(prof_store__owner_column(s, PROF_T_KERNEL, "globalPid"), "globalPid");
	ck_assert(prof_store__has_column(s, PROF_T_RUNTIME, "globalTid"));
	ck_assert_str_eq(prof_store__owner_column(s, PROF_T_RUNTIME, "globalTid"), "globalTid");
	/* a table of no process's rows */
	ck_assert(!prof_store__has_column(s, PROF_T_STRINGS, "globalPid"));
	ck_assert(!prof_store__has_column(s, PROF_T_STRINGS, "globalTid"));
	ck_assert_ptr_null(prof_store__owner_column(s, PROF_T_STRINGS, "globalPid"));
	ck_assert_ptr_null(prof_store__owner_column(s, PROF_T_KERNEL, NULL));
	prof_store__close(s);
}
END_TEST

START_TEST(extra_columns_and_rowid_stay)
{
	const char *path = fixture_copy("clean_loop.sqlite", "newer.sqlite",
					"ALTER TABLE " PROF_T_KERNEL " ADD COLUMN clusterX INTEGER;"
					"UPDATE " PROF_T_KERNEL " SET clusterX = rowid % 3;");
	struct prof_store *s = open_store(path);

	ck_assert_int_eq(one_int(s, "SELECT sum(clusterX) FROM " PROF_T_KERNEL),
			 one_int(s, "SELECT sum(rowid % 3) FROM main." PROF_T_KERNEL));
	ck_assert_int_eq(one_int(s, "SELECT count(*) FROM " PROF_T_KERNEL " k JOIN main."
				    PROF_T_KERNEL " m ON m.rowid = k.rowid AND m.start = k.start"),
			 one_int(s, "SELECT count(*) FROM main." PROF_T_KERNEL));
	prof_store__close(s);
}
END_TEST

START_TEST(views_keep_the_indexes)
{
	struct prof_store *s = open_store(testutil_data_path("clean_loop.sqlite"));
	char plan[2048];

	plan_of(s, "SELECT start FROM " PROF_T_KERNEL " WHERE correlationId = 7", plan,
		sizeof plan);
	ck_assert_msg(strstr(plan, "USING INDEX perfkit_kernel_corr"), "%s", plan);
	plan_of(s, "SELECT n.start FROM " PROF_T_RUNTIME " a JOIN " PROF_T_NVTX " n ON n.globalTid"
		   " = a.globalTid AND n.start <= a.start", plan, sizeof plan);
	ck_assert_msg(strstr(plan, "perfkit_nvtx_tid"), "%s", plan);
	prof_store__close(s);
}
END_TEST

START_TEST(nsys_export_reads_every_canonical_column)
{
	struct prof_store *s = open_store(testutil_data_path("nsys/cloverleaf-cuda.sqlite"));

	ck_assert_int_eq(prof_store__kind(s), PROF_STORE_NSYS);
	/* a column of perfkit's (or of other exports) this export may lack */
	ck_assert_int_ge(one_int(s, "SELECT count(*) FROM " PROF_T_SYNC
				    " WHERE globalPid IS NULL OR globalPid IS NOT NULL"), 0);
	ck_assert_int_eq(one_int(s, "SELECT count(*) FROM " PROF_T_KERNEL " WHERE "
				    PROF_SQL_PID_OF_TID("globalPid") " <> "
				    PROF_SQL_PID_OF_TID(PROF_SQL_GLOBAL_PID_OF_TID("globalPid"))), 0);
	ck_assert_int_eq(one_int(s, "SELECT count(*) FROM " PROF_T_KERNEL),
			 one_int(s, "SELECT count(*) FROM main." PROF_T_KERNEL));
	prof_store__close(s);
}
END_TEST

/* The columns of sql's rows, less a first one named rowid, joined. */
static void columns_of(struct prof_store *s, const char *sql, char *buf, size_t cap)
{
	struct prof_error err = { 0 };
	struct prof_cursor *c = NULL;
	size_t used = 0;

	buf[0] = '\0';
	ck_assert_msg(prof_cursor__open(s, sql, &c, &err) == 0, "%s: %s", sql, err.msg);
	for (int i = 0; i < prof_cursor__columns(c) && used < cap; i++)
		if (i > 0 || strcmp(prof_cursor__column_name(c, i), "rowid") != 0)
			used += (size_t)snprintf(buf + used, cap - used, "%s,", prof_cursor__column_name(c, i));
	prof_cursor__close(c);
}

/* Every table of the file and view of the store reads by its name as its
 * canonical form: its columns, in their order, and its rows; the number
 * of views made. */
static int64_t every_name_reads_canonical(struct prof_store *s)
{
	struct prof_error err = { 0 };
	struct prof_cursor *names = NULL;
	int checked = 0;

	ck_assert_int_eq(prof_cursor__open(s, "SELECT name FROM main.sqlite_master WHERE type = 'table'"
					      " UNION SELECT name FROM temp.sqlite_master WHERE type = 'view'",
					   &names, &err), 0);
	while (prof_cursor__next(names, &err) == 1) {
		const char *name = prof_cursor__text(names, 0);
		const char *all = prof_store__all_rows(s, name);
		static char by_name[8192], canonical[8192], sql[16384];

		if (!all)
			continue;
		snprintf(sql, sizeof sql, "SELECT * FROM \"%s\"", name);
		columns_of(s, sql, by_name, sizeof by_name);
		snprintf(sql, sizeof sql, "SELECT * FROM (%s)", all);
		columns_of(s, sql, canonical, sizeof canonical);
		ck_assert_msg(strcmp(by_name, canonical) == 0, "%s: %s against %s", name, by_name, canonical);
		snprintf(sql, sizeof sql, "SELECT (SELECT count(*) || ',' || total(rowid) FROM \"%s\") ="
			 " (SELECT count(*) || ',' || total(rowid) FROM (%s))", name, all);
		ck_assert_msg(one_int(s, sql) == 1, "%s: other rows by its name", name);
		checked++;
	}
	prof_cursor__close(names);
	ck_assert_int_gt(checked, 10);
	return one_int(s, "SELECT count(*) FROM temp.sqlite_master WHERE type = 'view'");
}

START_TEST(a_table_like_its_view_is_read_as_it_is)
{
	struct prof_store *s = open_store(testutil_data_path("clean_loop.sqlite"));
	struct prof_store *nsys = open_store(testutil_data_path("nsys/cloverleaf-cuda.sqlite"));
	const char *path = fixture_copy("clean_loop.sqlite", "turned.sqlite", NULL);
	char cols[8192], turned[8192] = "", sql[16384], *last;
	int64_t views = every_name_reads_canonical(s), kernels;

	/* a capture of this version: most tables already in their form */
	ck_assert_int_eq(one_int(s, "SELECT count(*) FROM temp.sqlite_master WHERE name = '" PROF_T_KERNEL "'"), 0);
	ck_assert_int_eq(one_int(s, "SELECT count(*) FROM temp.sqlite_master WHERE name = '" PROF_T_SYSTEM_ENV "'"), 1);
	kernels = one_int(s, "SELECT count(*) FROM " PROF_T_KERNEL);
	columns_of(s, "SELECT * FROM main." PROF_T_KERNEL, cols, sizeof cols);
	prof_store__close(s);
	ck_assert_int_gt(every_name_reads_canonical(nsys), views);
	prof_store__close(nsys);
	/* the same columns turned round, the last first: a view puts them
	 * back in order */
	cols[strlen(cols) - 1] = '\0';
	while ((last = strrchr(cols, ',')) != NULL) {
		snprintf(turned + strlen(turned), sizeof turned - strlen(turned), "\"%s\", ", last + 1);
		*last = '\0';
	}
	snprintf(turned + strlen(turned), sizeof turned - strlen(turned), "\"%s\"", cols);
	snprintf(sql, sizeof sql, "CREATE TABLE k2 AS SELECT %s FROM " PROF_T_KERNEL ";"
		 "DROP TABLE " PROF_T_KERNEL "; ALTER TABLE k2 RENAME TO " PROF_T_KERNEL ";", turned);
	testutil_sqlite3(path, sql);
	s = open_store(path);
	ck_assert_int_eq(one_int(s, "SELECT count(*) FROM temp.sqlite_master WHERE name = '" PROF_T_KERNEL "'"), 1);
	ck_assert_int_eq(every_name_reads_canonical(s), views + 1);
	ck_assert_int_eq(one_int(s, "SELECT count(*) FROM " PROF_T_KERNEL), kernels);
	prof_store__close(s);
	/* a column the view leaves out (one named as the rowid is) */
	s = open_store(testutil_changed_copy("clean_loop.sqlite", "rowid_named.sqlite",
					     "ALTER TABLE " PROF_T_KERNEL " ADD COLUMN _rowid_ INTEGER"));
	ck_assert_int_eq(every_name_reads_canonical(s), views + 1);
	prof_store__close(s);
}
END_TEST

START_TEST(restrict_narrows_and_puts_back)
{
	struct prof_store *s = open_store(testutil_data_path("clean_loop.sqlite"));
	struct prof_error err = { 0 };
	int64_t all = one_int(s, "SELECT count(*) FROM " PROF_T_KERNEL);
	int64_t some = one_int(s, "SELECT count(*) FROM main." PROF_T_KERNEL
				  " WHERE streamId = (SELECT min(streamId) FROM main." PROF_T_KERNEL ")");

	ck_assert_int_gt(all, 0);
	ck_assert_int_eq(prof_store__restrict(s, PROF_T_KERNEL,
					      "streamId = (SELECT min(streamId) FROM main."
					      PROF_T_KERNEL ")", &err), 0);
	ck_assert_int_eq(one_int(s, "SELECT count(*) FROM " PROF_T_KERNEL), some);
	ck_assert_int_eq(one_int(s, "SELECT count(rowid) FROM " PROF_T_KERNEL), some);
	{
		char sql[4096];

		snprintf(sql, sizeof sql, "SELECT count(*) FROM (%s)",
			 prof_store__all_rows(s, PROF_T_KERNEL));
		ck_assert_int_eq(one_int(s, sql), all);
	}
	ck_assert_ptr_null(prof_store__all_rows(s, "NO_SUCH_TABLE"));
	ck_assert_int_eq(prof_store__restrict(s, PROF_T_KERNEL, NULL, &err), 0);
	ck_assert_int_eq(one_int(s, "SELECT count(*) FROM " PROF_T_KERNEL), all);
	ck_assert_int_eq(prof_store__restrict(s, "NO_SUCH_TABLE", NULL, &err), 1);
	prof_store__close(s);
}
END_TEST

START_TEST(restrict_time_ands_with_restrict_and_each_puts_back_alone)
{
	struct prof_store *s = open_store(testutil_data_path("clean_loop.sqlite"));
	struct prof_error err = { 0 };
	const char *stream = "streamId = (SELECT min(streamId) FROM main." PROF_T_KERNEL ")";
	const char *early = "start < (SELECT avg(start) FROM main." PROF_T_KERNEL ")";
	int64_t all = one_int(s, "SELECT count(*) FROM " PROF_T_KERNEL);
	int64_t on_stream = one_int(s, "SELECT count(*) FROM main." PROF_T_KERNEL " WHERE streamId ="
				       " (SELECT min(streamId) FROM main." PROF_T_KERNEL ")");
	int64_t is_early = one_int(s, "SELECT count(*) FROM main." PROF_T_KERNEL " WHERE start <"
				      " (SELECT avg(start) FROM main." PROF_T_KERNEL ")");
	int64_t both = one_int(s, "SELECT count(*) FROM main." PROF_T_KERNEL " WHERE streamId ="
				  " (SELECT min(streamId) FROM main." PROF_T_KERNEL ") AND start <"
				  " (SELECT avg(start) FROM main." PROF_T_KERNEL ")");

	ck_assert_int_gt(is_early, 0);
	ck_assert_int_lt(is_early, all);
	ck_assert_int_eq(prof_store__restrict_time(s, PROF_T_KERNEL, early, &err), 0);
	ck_assert_int_eq(one_int(s, "SELECT count(*) FROM " PROF_T_KERNEL), is_early);
	ck_assert_int_eq(prof_store__restrict(s, PROF_T_KERNEL, stream, &err), 0);
	ck_assert_int_eq(one_int(s, "SELECT count(*) FROM " PROF_T_KERNEL), both);
	/* the process condition put back leaves the time condition */
	ck_assert_int_eq(prof_store__restrict(s, PROF_T_KERNEL, NULL, &err), 0);
	ck_assert_int_eq(one_int(s, "SELECT count(*) FROM " PROF_T_KERNEL), is_early);
	ck_assert_int_eq(prof_store__restrict(s, PROF_T_KERNEL, stream, &err), 0);
	ck_assert_int_eq(prof_store__restrict_time(s, PROF_T_KERNEL, NULL, &err), 0);
	ck_assert_int_eq(one_int(s, "SELECT count(*) FROM " PROF_T_KERNEL), on_stream);
	ck_assert_int_eq(prof_store__restrict_time(s, "NO_SUCH_TABLE", NULL, &err), 1);
	prof_store__close(s);
}
END_TEST

START_TEST(the_file_is_never_written)
{
	const char *path = fixture_copy("clean_loop.sqlite", "untouched.sqlite", NULL);
	char copy[512];
	size_t before_len, after_len;
	char *before, *after;
	struct prof_store *s;
	struct prof_error err = { 0 };

	snprintf(copy, sizeof copy, "%s", path);
	before = testutil_read_file(copy, &before_len);
	s = open_store(copy);
	ck_assert_int_eq(prof_store__restrict(s, PROF_T_KERNEL, "streamId > 0", &err), 0);
	ck_assert_int_ge(one_int(s, "SELECT count(*) FROM " PROF_T_KERNEL), 0);
	ck_assert_int_eq(prof_store__check_read(s, &err), 0);
	prof_store__close(s);
	after = testutil_read_file(copy, &after_len);
	ck_assert_uint_eq(before_len, after_len);
	ck_assert(memcmp(before, after, before_len) == 0);
	free(before);
	free(after);
}
END_TEST

START_TEST(a_store_in_memory_reads_the_same)
{
	size_t len;
	char *bytes = testutil_read_file(testutil_data_path("clean_loop.sqlite"), &len);
	struct prof_store *s = NULL, *f = open_store(testutil_data_path("clean_loop.sqlite"));
	struct prof_error err = { 0 };

	ck_assert_msg(prof_store__open_memory(bytes, len, "mem.sqlite", &s, &err) == 0, "%s",
		      err.msg);
	ck_assert_int_eq(one_int(s, "SELECT count(*) FROM " PROF_T_MEMSET),
			 one_int(f, "SELECT count(*) FROM " PROF_T_MEMSET));
	ck_assert_int_eq(one_int(s, "SELECT count(*) FROM " PROF_T_SYSTEM_ENV), 0);
	prof_store__close(s);
	prof_store__close(f);
	free(bytes);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("store_views");
	TCase *tc = tcase_create("views");

	tcase_add_test(tc, missing_column_reads_as_null);
	tcase_add_test(tc, missing_table_reads_as_empty_but_is_not_there);
	tcase_add_test(tc, analysis_table_missing_reads_as_empty);
	tcase_add_test(tc, analysis_table_older_columns_read_as_null);
	tcase_add_test(tc, owner_column_falls_back_to_the_one_the_file_has);
	tcase_add_test(tc, extra_columns_and_rowid_stay);
	tcase_add_test(tc, views_keep_the_indexes);
	tcase_add_test(tc, nsys_export_reads_every_canonical_column);
	tcase_add_test(tc, a_table_like_its_view_is_read_as_it_is);
	tcase_add_test(tc, restrict_narrows_and_puts_back);
	tcase_add_test(tc, restrict_time_ands_with_restrict_and_each_puts_back_alone);
	tcase_add_test(tc, the_file_is_never_written);
	tcase_add_test(tc, a_store_in_memory_reads_the_same);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return testutil_run(suite());
}
