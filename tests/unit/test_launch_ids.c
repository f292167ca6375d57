/* test_launch_ids.c - the calls' correlation ids as sets in memory
 * (model/launch_ids.c) against SQL's test of the same (SUM_LAUNCHED_BY_SOME's):
 * every kernel of real captures asked both ways, with calls taken away,
 * kernels of no process (NULL and 0) and ids spread over many blocks;
 * whether the runtime launched a driver call's kernel, against the join
 * folded.c made; and the folded stacks (their kernels without a launching
 * call, and the driver's calls the runtime's launches leave out), found
 * through the sets and through SQL's joins, the same. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export/folded.h"
#include "model/call_census.h"
#include "model/launch_ids.h"
#include "testutil.h"
#include "prof/error.h"
#include "prof/store.h"
#include "prof/tables.h"

static bool has_driver(const char *path)
{
	struct prof_store *s = NULL;
	struct prof_error err = { 0 };
	bool yes;

	ck_assert_msg(prof_store__open(path, &s, &err) == 0, "%s: %s", path, err.msg);
	yes = prof_store__has_table(s, PROF_T_DRIVER);
	prof_store__close(s);
	return yes;
}

/* Real captures, changed as a broken or partial capture would leave them:
 * a third of the runtime calls gone, some kernels of no process. */
static const char *damaged(const char *name, int n)
{
	char file[64];
	const char *path;

	snprintf(file, sizeof file, "launch_ids_%d.sqlite", n);
	path = testutil_tmp_path(file);
	testutil_copy_file(testutil_data_path(name), path);
	testutil_sqlite3(path, "DELETE FROM CUPTI_ACTIVITY_KIND_RUNTIME WHERE rowid % 3 = 0;"
			       "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET globalPid = NULL WHERE rowid % 7 = 0;"
			       "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET globalPid = 0 WHERE rowid % 11 = 0;"
			       "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET correlationId = NULL WHERE rowid % 13 = 0;"
			       "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET correlationId = correlationId + 1000000"
			       " WHERE rowid % 17 = 0;");
	if (has_driver(path))
		/* a runtime launch whose driver call was traced too: both
		 * under one id (no capture here has them; the walk of the
		 * driver's calls must leave such a call to the runtime's) */
		testutil_sqlite3(path, "UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET correlationId = (SELECT"
				       " d.correlationId FROM CUPTI_ACTIVITY_KIND_DRIVER d WHERE d.rowid ="
				       " CUPTI_ACTIVITY_KIND_RUNTIME.rowid) WHERE rowid % 5 = 1 AND EXISTS (SELECT 1"
				       " FROM CUPTI_ACTIVITY_KIND_DRIVER d WHERE d.rowid = CUPTI_ACTIVITY_KIND_RUNTIME.rowid"
				       " AND (d.globalTid >> 24) = (CUPTI_ACTIVITY_KIND_RUNTIME.globalTid >> 24));");
	return path;
}

static const char *const captures[] = {
	"transformer_naive.sqlite", "ddp/two_gpus/ddp2_even.sqlite", "nsys/cloverleaf-cuda.sqlite",
	"corpus/graph_eager.sqlite", "hash_embedding_naive.sqlite",
};
#define NCAPTURES (sizeof captures / sizeof captures[0])

static struct prof_store *open_path(const char *path)
{
	struct prof_store *s = NULL;
	struct prof_error err = { 0 };

	ck_assert_msg(prof_store__open(path, &s, &err) == 0, "%s: %s", path, err.msg);
	return s;
}

/* Every kernel: the sets' answer against SQL's; the kernels found without
 * a call, in *orphans. */
static void compare_kernels(struct prof_store *s, const char *what, int64_t *orphans)
{
	/* SUM_LAUNCHED_BY_SOME's test, its (process, id) pairs joined: its
	 * row-value IN scans the whole set at every kernel it does not find,
	 * minutes on these captures under the sanitizers */
#define PAIRS(T, X)                                                                              \
	" LEFT JOIN (SELECT DISTINCT " PROF_SQL_GLOBAL_PID_OF_TID("globalTid") " AS p, correlationId" \
	" AS c FROM " T " WHERE globalTid IS NOT NULL AND correlationId IS NOT NULL) " X " ON " X  \
	".p = k.globalPid AND " X ".c = k.correlationId"
#define ANY(T)                                                                                   \
	"k.correlationId IN (SELECT correlationId FROM " T " WHERE correlationId IS NOT NULL)"
	static const char sql[] =
		"SELECT k.globalPid, k.correlationId, xr.c IS NOT NULL OR xd.c IS NOT NULL OR"
		" coalesce((k.globalPid IS NULL OR k.globalPid = 0) AND (" ANY(PROF_T_RUNTIME) " OR "
		ANY(PROF_T_DRIVER) "), 0) FROM " PROF_T_KERNEL " k" PAIRS(PROF_T_RUNTIME, "xr")
		PAIRS(PROF_T_DRIVER, "xd");
#undef PAIRS
#undef ANY
	struct launch_ids *ids = NULL;
	struct prof_cursor *c = NULL;
	struct prof_error err = { 0 };
	int64_t rows = 0;
	int rc;

	ck_assert_int_eq(launch_ids__load(s, &ids, &err), 1);
	ck_assert_msg(prof_cursor__open(s, sql, &c, &err) == 0, "%s", err.msg);
	while ((rc = prof_cursor__next(c, &err)) > 0) {
		bool want = prof_cursor__int64(c, 2) != 0;
		bool got = launch_ids__launched(ids, !prof_cursor__is_null(c, 0), prof_cursor__int64(c, 0),
						!prof_cursor__is_null(c, 1), prof_cursor__int64(c, 1));

		ck_assert_msg(got == want, "%s: kernel %lld (process %lld, id %lld): sets %d, SQL %d",
			      what, (long long)rows, (long long)prof_cursor__int64(c, 0),
			      (long long)prof_cursor__int64(c, 1), got, want);
		*orphans += !got;
		rows++;
	}
	ck_assert_int_eq(rc, 0);
	ck_assert_int_gt(rows, 10);
	prof_cursor__close(c);
	launch_ids__free(ids);
}

/* Every driver call: whether the runtime has its (process, id), the sets'
 * answer against the join folded.c's walk of the driver's calls made;
 * the calls left to the runtime counted in *shadowed, the rest in *own. */
static void compare_driver_calls(struct prof_store *s, const char *what, int64_t *shadowed, int64_t *own)
{
	static const char sql[] =
		"SELECT d.globalTid, d.correlationId, NOT (x.c IS NULL AND (d.globalTid IS NOT NULL OR NOT"
		" EXISTS (SELECT 1 FROM " PROF_T_RUNTIME " r WHERE r.globalTid IS NOT NULL AND"
		" r.correlationId IS NOT NULL))) FROM " PROF_T_DRIVER " d LEFT JOIN (SELECT DISTINCT "
		PROF_SQL_PID_OF_TID("r.globalTid") " AS p, r.correlationId AS c FROM " PROF_T_RUNTIME
		" r WHERE r.globalTid IS NOT NULL AND r.correlationId IS NOT NULL) x ON x.p = "
		PROF_SQL_PID_OF_TID("d.globalTid") " AND x.c = d.correlationId"
		" WHERE d.correlationId IS NOT NULL";
	struct launch_ids *ids = NULL;
	struct prof_cursor *c = NULL;
	struct prof_error err = { 0 };
	int rc;

	if (!prof_store__has_table(s, PROF_T_DRIVER) || !prof_store__has_table(s, PROF_T_RUNTIME))
		return;
	ck_assert_int_eq(launch_ids__load(s, &ids, &err), 1);
	ck_assert_msg(prof_cursor__open(s, sql, &c, &err) == 0, "%s", err.msg);
	while ((rc = prof_cursor__next(c, &err)) > 0) {
		bool want = prof_cursor__int64(c, 2) != 0;
		bool got = launch_ids__runtime_has(ids, !prof_cursor__is_null(c, 0), prof_cursor__int64(c, 0),
						   prof_cursor__int64(c, 1));

		ck_assert_msg(got == want, "%s: driver call of thread %lld, id %lld: sets %d, SQL %d", what,
			      (long long)prof_cursor__int64(c, 0), (long long)prof_cursor__int64(c, 1), got, want);
		*(got ? shadowed : own) += 1;
	}
	ck_assert_int_eq(rc, 0);
	prof_cursor__close(c);
	launch_ids__free(ids);
}

START_TEST(test_sets_answer_as_sql_does)
{
	int64_t whole = 0, broken = 0, shadowed = 0, own = 0;

	for (size_t i = 0; i < NCAPTURES; i++) {
		struct prof_store *s = open_path(testutil_data_path(captures[i]));

		compare_kernels(s, captures[i], &whole);
		compare_driver_calls(s, captures[i], &shadowed, &own);
		prof_store__close(s);
		s = open_path(damaged(captures[i], (int)i));
		compare_kernels(s, captures[i], &broken);
		compare_driver_calls(s, captures[i], &shadowed, &own);
		prof_store__close(s);
	}
	/* every kernel of the captures as recorded has its call; the damaged
	 * copies have kernels without */
	ck_assert_int_eq(whole, 0);
	ck_assert_int_gt(broken, 100);
	/* driver calls both of the runtime's launches and of their own (the
	 * damaged copies lost a third of the runtime's) */
	ck_assert_int_gt(shadowed, 100);
	ck_assert_int_gt(own, 100);
}
END_TEST

/* A driver call of no thread is left to the runtime wherever the
 * runtime has calls of a thread, and kept where it has none. */
START_TEST(test_driver_call_of_no_thread)
{
	const char *path = damaged("ddp/two_gpus/ddp2_even.sqlite", 98);
	struct prof_store *s;
	struct launch_ids *ids = NULL;
	struct prof_error err = { 0 };

	s = open_path(path);
	ck_assert_int_eq(launch_ids__load(s, &ids, &err), 1);
	ck_assert(launch_ids__runtime_has(ids, false, 0, 1));
	launch_ids__free(ids);
	prof_store__close(s);
	testutil_sqlite3(path, "UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET globalTid = NULL;");
	s = open_path(path);
	ck_assert_int_eq(launch_ids__load(s, &ids, &err), 1);
	ck_assert(!launch_ids__runtime_has(ids, false, 0, 1));
	launch_ids__free(ids);
	prof_store__close(s);
}
END_TEST

/* The census walk's sets, where a reader asked for them before it walked,
 * answer as SQL does, on the captures and the damaged copies; unasked,
 * or where the ids spread too thin, it keeps none and the sets are read. */
START_TEST(test_the_census_walk_keeps_the_same_sets)
{
	static const char *const tables[] = { PROF_T_RUNTIME, PROF_T_DRIVER };
	int64_t whole = 0, broken = 0, shadowed = 0, own = 0;

	for (size_t i = 0; i < 2 * NCAPTURES; i++) {
		const char *path = i < NCAPTURES ? testutil_data_path(captures[i])
						 : damaged(captures[i - NCAPTURES], 50 + (int)i);
		struct prof_store *s = open_path(path), *unasked = open_path(path);
		struct launch_ids *ids = NULL;
		struct prof_error err = { 0 };

		sum_call_census__want(s, CALL_CENSUS_LAUNCH_IDS);
		ck_assert_int_eq(launch_ids__of_census(s, &ids), 0);
		for (size_t t = 0; t < 2; t++) {
			struct call_census c;

			ck_assert_int_ge(sum_call_census(s, tables[t], &c, &err), 0);
			ck_assert_int_ge(sum_call_census(unasked, tables[t], &c, &err), 0);
		}
		ck_assert_int_eq(launch_ids__of_census(s, &ids), 1);
		launch_ids__free(ids);
		ck_assert_int_eq(launch_ids__of_census(unasked, &ids), 0);
		compare_kernels(s, path, i < NCAPTURES ? &whole : &broken);
		compare_driver_calls(s, path, &shadowed, &own);
		/* a view that narrows the calls (--rank's) reads its own */
		ck_assert_int_eq(prof_store__restrict(s, PROF_T_RUNTIME, "rowid % 2 = 0", &err), 0);
		ck_assert_int_eq(launch_ids__of_census(s, &ids), 0);
		prof_store__close(s);
		prof_store__close(unasked);
	}
	ck_assert_int_eq(whole, 0);
	ck_assert_int_gt(broken, 100);
	ck_assert_int_gt(shadowed, 100);
	ck_assert_int_gt(own, 100);
}
END_TEST

/* Ids a block each (65,536 apart) fill more blocks than allowed: not held;
 * with room for them, held. */
START_TEST(test_ids_spread_thin_are_left_to_sql)
{
	const char *path = damaged("transformer_naive.sqlite", 99);
	struct prof_store *s;
	struct launch_ids *ids = (struct launch_ids *)1;
	struct prof_error err = { 0 };

	/* a hundred calls' ids a block apart: about 200 blocks more */
	testutil_sqlite3(path, "UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET correlationId = correlationId * 65536"
			       " WHERE rowid % 100 = 0;");
	s = open_path(path);
	launch_ids__set_max_blocks(64);
	/* nor does the census walk keep them */
	sum_call_census__want(s, CALL_CENSUS_LAUNCH_IDS);
	ck_assert_int_ge(sum_call_census(s, PROF_T_RUNTIME, &(struct call_census){ 0 }, &err), 0);
	ck_assert_int_eq(launch_ids__of_census(s, &ids), 0);
	ck_assert_int_eq(launch_ids__load(s, &ids, &err), 0);
	ck_assert_ptr_null(ids);
	launch_ids__set_max_blocks(4096);
	ck_assert_int_eq(launch_ids__load(s, &ids, &err), 1);
	launch_ids__free(ids);
	prof_store__close(s);
}
END_TEST

/* The limit is on the blocks of both tables together, as the reads keep
 * it: where each table's fit and the two together do not, the census's
 * sets are not taken either. */
START_TEST(test_the_limit_is_on_both_tables)
{
	static const char *const tables[] = { PROF_T_RUNTIME, PROF_T_DRIVER };
	const char *path = testutil_data_path("ddp/two_gpus/ddp2_even.sqlite");
	struct launch_ids *ids = NULL;
	struct prof_error err = { 0 };
	struct prof_store *s;
	size_t fits = 1;

	/* the fewest blocks the ids fit in, read */
	for (;; fits++) {
		s = open_path(path);
		launch_ids__set_max_blocks(fits);
		if (launch_ids__load(s, &ids, &err) == 1)
			break;
		prof_store__close(s);
		ck_assert_uint_lt(fits, 4096);
	}
	launch_ids__free(ids);
	prof_store__close(s);
	ck_assert_uint_gt(fits, 4);
	s = open_path(path);
	launch_ids__set_max_blocks(fits - 1);
	sum_call_census__want(s, CALL_CENSUS_LAUNCH_IDS);
	for (size_t t = 0; t < 2; t++)
		ck_assert_int_ge(sum_call_census(s, tables[t], &(struct call_census){ 0 }, &err), 0);
	ck_assert_int_eq(launch_ids__of_census(s, &ids), 0);
	ck_assert_int_eq(launch_ids__load(s, &ids, &err), 0);
	prof_store__close(s);
	launch_ids__set_max_blocks(4096);
}
END_TEST

static char *folded_text(struct prof_store *s)
{
	struct folded_stacks st;
	struct prof_error err = { 0 };
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	ck_assert_ptr_nonnull(f);
	ck_assert_msg(folded__collect(s, NULL, &st, &err) == 0, "%s", err.msg);
	ck_assert_int_eq(folded__write(&st, f), 0);
	folded_stacks__exit(&st);
	fclose(f);
	return text;
}

START_TEST(test_folded_orphans_the_same_either_way)
{
	int with_orphans = 0;

	for (size_t i = 0; i < NCAPTURES; i++) {
		struct prof_store *s = open_path(damaged(captures[i], 100 + (int)i));
		char *sets, *joined;

		sets = folded_text(s);
		launch_ids__set_max_blocks(0);
		joined = folded_text(s);
		launch_ids__set_max_blocks(4096);
		ck_assert_msg(strcmp(sets, joined) == 0, "%s: the folded stacks differ", captures[i]);
		with_orphans += strstr(sets, FOLDED_NO_CALL) != NULL;
		free(sets);
		free(joined);
		prof_store__close(s);
	}
	ck_assert_int_ge(with_orphans, 4);
}
END_TEST

int main(void)
{
	Suite *suite = suite_create("launch_ids");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_sets_answer_as_sql_does);
	tcase_add_test(tc, test_the_census_walk_keeps_the_same_sets);
	tcase_add_test(tc, test_ids_spread_thin_are_left_to_sql);
	tcase_add_test(tc, test_the_limit_is_on_both_tables);
	tcase_add_test(tc, test_driver_call_of_no_thread);
	tcase_add_test(tc, test_folded_orphans_the_same_either_way);
	suite_add_tcase(suite, tc);
	return testutil_run(suite);
}
