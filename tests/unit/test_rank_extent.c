/* test_rank_extent.c - the first and last record a rank's scope or --rank
 * shows (sum_capture__time's first_ns and last_ns), taken from the times
 * each process's rows were noted with when the views were made
 * (sum_ranks__shown_extent), are what SQL reads of those rows: on a
 * one-file DDP job, a job merged from two captures and a copy of the
 * first where a rank's first calls lost their time (a start of 0, an end
 * before the start, no end), and where a call's start is text (a foreign
 * file: the table is read, as SQL compares). Under --window the rows are
 * read as before. */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "model/capture_windows.h"
#include "model/ranks.h"
#include "model/window.h"
#include "prof/store.h"
#include "prof/tables.h"
#include "testutil.h"

static struct prof_store *open_store(const char *path)
{
	struct prof_error err = { 0 };
	struct prof_store *s = NULL;

	ck_assert_msg(prof_store__open(path, &s, &err) == 0, "%s: %s", path, err.msg);
	return s;
}

/* *first and *last widened to the (start, end) row sql reads of process
 * pid (?1). */
static void widen(struct prof_store *s, const char *sql, int64_t pid, int64_t *first, int64_t *last)
{
	struct prof_error err = { 0 };
	struct prof_cursor *c;

	ck_assert_msg(prof_cursor__open(s, sql, &c, &err) == 0, "%s", err.msg);
	prof_cursor__bind_int64(c, 1, pid);
	ck_assert_int_eq(prof_cursor__next(c, &err), 1);
	if (!prof_cursor__is_null(c, 0) && prof_cursor__int64(c, 0) < *first)
		*first = prof_cursor__int64(c, 0);
	if (!prof_cursor__is_null(c, 1) && prof_cursor__int64(c, 1) > *last)
		*last = prof_cursor__int64(c, 1);
	prof_cursor__close(c);
}

/* SQL's first start and last end of the real rows of pid's in the six
 * tables the extent counts, on another connection. */
static void sql_extent(const char *path, int64_t pid, int64_t *first, int64_t *last)
{
	static const char *const tables[][2] = {
		{ PROF_T_KERNEL, "globalPid" }, { PROF_T_MEMCPY, "globalPid" }, { PROF_T_MEMSET, "globalPid" },
		{ PROF_T_RUNTIME, "globalTid" }, { PROF_T_DRIVER, "globalTid" },
	};
	struct prof_store *s = open_store(path);
	char sql[1024];

	*first = INT64_MAX;
	*last = INT64_MIN;
	for (size_t i = 0; i < sizeof tables / sizeof *tables; i++) {
		snprintf(sql, sizeof sql, "SELECT min(start), max(end) FROM main.%s WHERE ((%s >> 24) << 24) = ?1"
			 " AND start > 0 AND (end >= start AND end - start <= 9223372036854775807) IS 1",
			 tables[i][0], tables[i][1]);
		widen(s, sql, pid, first, last);
	}
	widen(s, "SELECT min(start), max(coalesce(end, start)) FROM main." PROF_T_NVTX
		 " WHERE ((globalTid >> 24) << 24) = ?1 AND eventType != " PROF_SQL_NVTX_DOMAIN_CREATE
		 " AND start > 0 AND (end IS NULL OR (end >= start AND end - start <= 9223372036854775807) IS 1)",
	      pid, first, last);
	prof_store__close(s);
}

/* Each process's scope and each rank under --rank against SQL; how many
 * scopes took their extent from the notes. */
static int check_capture(const char *path)
{
	struct prof_store *s = open_store(path);
	struct prof_error err = { 0 };
	struct sum_ranks r;
	int noted = 0;

	ck_assert_msg(sum_ranks__load(s, &r, &err) == 0, "%s", err.msg);
	for (int i = 0; i < r.n; i++) {
		struct sum_capture_time t;
		int64_t first, last, lo, hi;

		sql_extent(path, r.p[i].global_pid, &first, &last);
		ck_assert_msg(sum_ranks__scope(s, r.p[i].global_pid, &err) == 0, "%s", err.msg);
		ck_assert_msg(sum_capture__time(s, &t, &err) == 0, "%s", err.msg);
		noted += sum_ranks__shown_extent(s, PROF_T_RUNTIME, &lo, &hi, &err) == 1;
		ck_assert_int_eq(sum_ranks__unscope(s, &err), 0);
		if (last == INT64_MIN)
			first = last = 0;
		ck_assert_msg(t.first_ns == first && t.last_ns == last, "%s: process %lld: %lld..%lld, SQL %lld..%lld",
			      path, (long long)r.p[i].global_pid, (long long)t.first_ns, (long long)t.last_ns,
			      (long long)first, (long long)last);
	}
	for (int i = 0; i < r.n; i++) {
		struct prof_store *chosen = open_store(path);
		struct sum_capture_time t;
		int64_t first, last;
		char list[16];

		if (r.p[i].rank < 0) {
			prof_store__close(chosen);
			continue;
		}
		snprintf(list, sizeof list, "%d", r.p[i].rank);
		ck_assert_msg(summary__select_ranks(chosen, list, &err) == 0, "%s", err.msg);
		ck_assert_msg(sum_capture__time(chosen, &t, &err) == 0, "%s", err.msg);
		sql_extent(path, r.p[i].global_pid, &first, &last);
		ck_assert_int_eq(t.first_ns, first);
		ck_assert_int_eq(t.last_ns, last);
		prof_store__close(chosen);
	}
	sum_ranks__exit(&r);
	prof_store__close(s);
	return noted;
}

START_TEST(a_ranks_extent_is_what_sql_reads)
{
	char path[4096];

	ck_assert_int_gt(check_capture(testutil_data_path("ddp/ddp2_even.sqlite")), 1);
	ck_assert_int_gt(check_capture(testutil_data_path("ddp/two_gpus/ddp2_straggler.sqlite")), 1);
	/* a rank's first calls without a time of their own */
	snprintf(path, sizeof path, "%s", testutil_tmp_path("rank_extent_untimed.sqlite"));
	testutil_copy_file(testutil_data_path("ddp/ddp2_even.sqlite"), path);
	testutil_sqlite3(path, "UPDATE " PROF_T_RUNTIME " SET start = 0 WHERE rowid IN (SELECT min(rowid) FROM "
			 PROF_T_RUNTIME " GROUP BY globalTid >> 24);"
			 " UPDATE " PROF_T_RUNTIME " SET end = start - 1 WHERE rowid IN (SELECT min(rowid) + 1 FROM "
			 PROF_T_RUNTIME " GROUP BY globalTid >> 24);"
			 " UPDATE " PROF_T_DRIVER " SET end = NULL WHERE rowid IN (SELECT max(rowid) FROM "
			 PROF_T_DRIVER " GROUP BY globalTid >> 24);"
			 " UPDATE " PROF_T_KERNEL " SET end = start - 5 WHERE rowid IN (SELECT max(rowid) FROM "
			 PROF_T_KERNEL " GROUP BY globalPid)");
	ck_assert_int_gt(check_capture(path), 1);
	/* a start of text: SQL's comparisons, so the table is read */
	testutil_sqlite3(path, "UPDATE " PROF_T_RUNTIME " SET start = 'soon' WHERE rowid = 7");
	ck_assert_int_eq(check_capture(path), 0);
}
END_TEST

START_TEST(a_window_reads_its_rows)
{
	const char *path = testutil_data_path("windows/ddp2_nvtx_window.sqlite");
	struct prof_store *s = open_store(path);
	struct prof_error err = { 0 };
	struct sum_capture_time whole, windowed;
	int64_t lo, hi;

	ck_assert_msg(sum_capture__time(s, &whole, &err) == 0, "%s", err.msg);
	ck_assert_msg(summary__select_window(s, 1, &err) == 0, "%s", err.msg);
	ck_assert_msg(summary__select_ranks(s, "0", &err) == 0, "%s", err.msg);
	ck_assert_int_eq(sum_ranks__shown_extent(s, PROF_T_RUNTIME, &lo, &hi, &err), 0);
	ck_assert_msg(sum_capture__time(s, &windowed, &err) == 0, "%s", err.msg);
	ck_assert_int_ge(windowed.first_ns, whole.first_ns);
	ck_assert_int_le(windowed.last_ns, whole.last_ns);
	prof_store__close(s);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("rank_extent");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, a_ranks_extent_is_what_sql_reads);
	tcase_add_test(tc, a_window_reads_its_rows);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return testutil_run(suite());
}
