/* test_call_census.c - one pass over a table of calls (sum_call_census)
 * says what the three passes it stands for say: the first start and last
 * end of the real rows, the rows of a bad span, the calls that returned a
 * sticky error; on real captures (perfkit's, an nsys export, one whose
 * context failed) and on a copy whose calls lost their times (a start of
 * 0, an end before the start, no end, a span past INT64_MAX, a start of
 * text, which SQL counts its own way) and failed; read
 * once for the file's connections, and not at all for a capture still
 * being written or a table that holds no calls. The same walk tells
 * whether each thread's correlation ids rise, as the rise's own walk
 * does (sum_calls__ids_rise), on the captures and on copies whose ids
 * fall, hold no id, an id of 0 or one of text, or whose threads are text. */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "model/call_census.h"
#include "model/pid_rows.h"
#include "model/sql.h"
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

static int64_t ask(struct prof_store *s, const char *sql, int64_t if_null)
{
	struct prof_error err = { 0 };
	struct prof_cursor *c;
	int64_t v;

	ck_assert_msg(prof_cursor__open(s, sql, &c, &err) == 0, "%s: %s", sql, err.msg);
	ck_assert_int_eq(prof_cursor__next(c, &err), 1);
	v = prof_cursor__is_null(c, 0) ? if_null : prof_cursor__int64(c, 0);
	prof_cursor__close(c);
	return v;
}

/* The rows of each process of table as the census walked them, against
 * SQL's grouping of them (as --rank's bounds read them: rowid, and the
 * first start and last end of the real rows where the table is timed). */
static void check_pid_rows(struct prof_store *sql, const char *table, const struct pid_rows_walk *w)
{
	char q[512];
	struct prof_cursor *c;
	struct prof_error err = { 0 };
	size_t k = 0;

	snprintf(q, sizeof q, "SELECT (globalTid >> 24) << 24 AS p, min(rowid), max(rowid),"
		 " min(start) FILTER (WHERE start > 0 AND end >= start), max(end) FILTER (WHERE start > 0 AND"
		 " end >= start) FROM main.%s WHERE globalTid IS NOT NULL GROUP BY p ORDER BY p", table);
	ck_assert_msg(prof_cursor__open(sql, q, &c, &err) == 0, "%s", err.msg);
	ck_assert(w->timing);
	while (prof_cursor__next(c, &err) == 1) {
		const struct pid_rows *r = &w->v[k++];

		ck_assert_uint_le(k, w->n);
		ck_assert_int_eq(r->pid, prof_cursor__int64(c, 0));
		ck_assert_int_eq(r->lo, prof_cursor__int64(c, 1));
		ck_assert_int_eq(r->hi, prof_cursor__int64(c, 2));
		ck_assert_int_eq(r->first, prof_cursor__is_null(c, 3) ? INT64_MAX : prof_cursor__int64(c, 3));
		ck_assert_int_eq(r->last, prof_cursor__is_null(c, 4) ? INT64_MIN : prof_cursor__int64(c, 4));
	}
	ck_assert_uint_eq(k, w->n);
	prof_cursor__close(c);
}

/* Each table's census against its three statements; how many calls failed. */
static int64_t check_capture(const char *path)
{
	static const char *const tables[] = { PROF_T_RUNTIME, PROF_T_DRIVER };
	struct prof_store *s = open_store(path), *sql = open_store(path);
	struct prof_error err = { 0 };
	int64_t sticky = 0;
	char q[512];

	for (size_t i = 0; i < 2; i++) {
		struct call_census c;
		int rc = sum_call_census(s, tables[i], &c, &err);

		ck_assert_msg(rc >= 0, "%s", err.msg);
		if (!prof_store__has_table(sql, tables[i])) {
			ck_assert_int_eq(rc, 0);
			continue;
		}
		ck_assert_int_eq(rc, 1);
		snprintf(q, sizeof q, "SELECT min(start) FROM main.%s WHERE start > 0 AND"
			 " (end >= start AND end - start <= 9223372036854775807) IS 1", tables[i]);
		ck_assert_int_eq(c.first, ask(sql, q, INT64_MAX));
		snprintf(q, sizeof q, "SELECT max(end) FROM main.%s WHERE start > 0 AND"
			 " (end >= start AND end - start <= 9223372036854775807) IS 1", tables[i]);
		ck_assert_int_eq(c.last, ask(sql, q, INT64_MIN));
		snprintf(q, sizeof q, "SELECT count(*) FROM main.%s WHERE"
			 " (end >= start AND end - start <= 9223372036854775807) IS NOT 1", tables[i]);
		ck_assert_int_eq(c.bad, ask(sql, q, 0));
		snprintf(q, sizeof q, "SELECT count(*) FROM main.%s WHERE returnValue IN (700, 702, 710, 714, 715,"
			 " 716, 717, 718, 719)", tables[i]);
		ck_assert_int_eq(c.sticky, ask(sql, q, 0));
		sticky += c.sticky;
		{
			const struct pid_rows_walk *w;

			/* given by a walk of every row, whose threads were integers */
			snprintf(q, sizeof q, "SELECT count(*) FROM main.%s WHERE typeof(globalTid)"
				 " NOT IN ('integer', 'null')", tables[i]);
			if (sum_pid_rows__take(s, tables[i], &w))
				check_pid_rows(sql, tables[i], w);
			else
				ck_assert_msg(!c.rise_known || ask(sql, q, 0) > 0,
					      "%s %s: walked, yet no rows of a process given", path, tables[i]);
		}
		if (c.rise_known) {
			bool rise;

			ck_assert_msg(sum_calls__ids_rise(sql, tables[i], &rise, &err) == 0, "%s", err.msg);
			ck_assert_msg(c.ids_rise == rise, "%s %s: the census says the ids %s", path, tables[i],
				      c.ids_rise ? "rise" : "do not rise");
		}
	}
	/* no table of calls */
	{
		struct call_census c;

		ck_assert_int_eq(sum_call_census(s, PROF_T_KERNEL, &c, &err), 0);
	}
	prof_store__close(sql);
	prof_store__close(s);
	return sticky;
}

START_TEST(the_census_is_the_three_passes)
{
	char path[4096];

	ck_assert_int_eq(check_capture(testutil_data_path("transformer_naive.sqlite")), 0);
	ck_assert_int_eq(check_capture(testutil_data_path("ddp/ddp2_even.sqlite")), 0);
	ck_assert_int_eq(check_capture(testutil_data_path("nsys/cloverleaf-cuda.sqlite")), 0);
	ck_assert_int_gt(check_capture(testutil_data_path("faults/context_failed.sqlite")), 0);
	snprintf(path, sizeof path, "%s",
		 testutil_changed_copy("ddp/ddp2_even.sqlite", "call_census_damaged.sqlite",
			 "UPDATE " PROF_T_RUNTIME " SET start = 0 WHERE rowid IN (1, 2);"
			 " UPDATE " PROF_T_RUNTIME " SET end = start - 1 WHERE rowid = 3;"
			 " UPDATE " PROF_T_RUNTIME " SET end = NULL WHERE rowid = (SELECT max(rowid) FROM "
			 PROF_T_RUNTIME ");"
			 " UPDATE " PROF_T_RUNTIME " SET start = -9223372036854775000, end = 9223372036854775000"
			 " WHERE rowid = 4;"
			 " UPDATE " PROF_T_RUNTIME " SET returnValue = 715 WHERE rowid = 11;"
			 " UPDATE " PROF_T_DRIVER " SET start = 'soon' WHERE rowid = 5;"
			 " UPDATE " PROF_T_DRIVER " SET returnValue = 700 WHERE rowid IN (9, 10)"));
	ck_assert_int_eq(check_capture(path), 3);
}
END_TEST

/* Whether the census of fixture's copy changed by sql (NULL: the fixture)
 * knows the rise of table's ids, and what it is (checked against the
 * rise's own walk by check_capture); *repeated: what the repeated-call
 * test says of the table. */
static bool census_rise(const char *fixture, const char *sql, const char *table, bool *known, bool *repeated)
{
	char path[4096];
	struct prof_error err = { 0 };
	struct prof_store *s;
	struct call_census c;

	snprintf(path, sizeof path, "%s",
		 sql ? testutil_changed_copy(fixture, "call_census_ids.sqlite", sql) : testutil_data_path(fixture));
	check_capture(path);
	s = open_store(path);
	ck_assert_int_eq(sum_call_census(s, table, &c, &err), 1);
	ck_assert_msg(sum_calls__repeated(s, table, repeated, &err) == 0, "%s", err.msg);
	prof_store__close(s);
	*known = c.rise_known;
	return c.ids_rise;
}

START_TEST(the_census_tells_the_ids_rise)
{
	bool known, repeated;

	ck_assert(census_rise("transformer_naive.sqlite", NULL, PROF_T_RUNTIME, &known, &repeated));
	ck_assert(known && !repeated);
	ck_assert(census_rise("ddp/ddp2_even.sqlite", NULL, PROF_T_DRIVER, &known, &repeated));
	ck_assert(known && !repeated);
	/* nsys's backtrace rows repeat calls: no rise, and the sort finds them */
	ck_assert(!census_rise("nsys/saxpy-mpi-cuda-rank0.sqlite", NULL, PROF_T_RUNTIME, &known, &repeated));
	ck_assert(known && repeated);
	/* a thread's id past the ones after it: no rise, yet no call twice */
	ck_assert(!census_rise("transformer_naive.sqlite",
			       "UPDATE " PROF_T_RUNTIME " SET correlationId = correlationId + 100000000 WHERE rowid = 40",
			       PROF_T_RUNTIME, &known, &repeated));
	ck_assert(known && !repeated);
	/* calls of no id, or of 0, are no call SQL's test asks of */
	ck_assert(census_rise("transformer_naive.sqlite",
			      "UPDATE " PROF_T_RUNTIME " SET correlationId = NULL WHERE rowid IN (40, 41);"
			      " UPDATE " PROF_T_RUNTIME " SET correlationId = 0 WHERE rowid IN (60, 61, 62)",
			      PROF_T_RUNTIME, &known, &repeated));
	ck_assert(known && !repeated);
	/* an id or a thread of text: left to SQL */
	ck_assert(!census_rise("transformer_naive.sqlite",
			       "UPDATE " PROF_T_RUNTIME " SET correlationId = 'x' WHERE rowid = 40",
			       PROF_T_RUNTIME, &known, &repeated));
	ck_assert(known);
	ck_assert(!census_rise("transformer_naive.sqlite",
			       "UPDATE " PROF_T_DRIVER " SET globalTid = 'main' WHERE rowid = 40",
			       PROF_T_DRIVER, &known, &repeated));
	ck_assert(known);
}
END_TEST

START_TEST(read_once_a_file_and_not_while_written)
{
	char path[4096];
	struct prof_error err = { 0 };
	struct prof_store *s, *again;
	struct call_census first, taken;

	snprintf(path, sizeof path, "%s", testutil_tmp_path("call_census_once.sqlite"));
	testutil_copy_file(testutil_data_path("transformer_naive.sqlite"), path);
	s = open_store(path);
	ck_assert_int_eq(sum_call_census(s, PROF_T_RUNTIME, &first, &err), 1);
	ck_assert_msg(prof_store__reopen(s, &again, &err) == 0, "%s", err.msg);
	/* a call failed, written behind the readers' backs: the census taken stands */
	testutil_sqlite3(path, "UPDATE " PROF_T_RUNTIME " SET returnValue = 719 WHERE rowid = 50");
	ck_assert_int_eq(sum_call_census(again, PROF_T_RUNTIME, &taken, &err), 1);
	ck_assert_int_eq(taken.sticky, first.sticky);
	prof_store__close(again);
	prof_store__close(s);
	ck_assert_int_eq(check_capture(path), 1);
	/* still being written: the census is not the caller's to trust */
	testutil_sqlite3(path, "DELETE FROM PERFKIT_META WHERE key = 'finished'");
	s = open_store(path);
	ck_assert(!prof_store__is_finished(s));
	ck_assert_int_eq(sum_call_census(s, PROF_T_RUNTIME, &first, &err), 0);
	prof_store__close(s);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("call_census");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, the_census_is_the_three_passes);
	tcase_add_test(tc, the_census_tells_the_ids_rise);
	tcase_add_test(tc, read_once_a_file_and_not_while_written);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return testutil_run(suite());
}
