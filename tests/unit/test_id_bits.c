/* test_id_bits.c - the id bit sets hold what was set under each space and
 * nothing else: every correlation id of a real capture's calls under its
 * process (against the capture's own (process, id) pairs, which SQL
 * finds), ids at the ends of int64 and on both sides of a block's edge,
 * ids cleared again, and the block limit (the caller's way to SQL). */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>

#include "model/id_bits.h"
#include "prof/event.h"
#include "prof/store.h"
#include "prof/tables.h"
#include "testutil.h"

#define CAPTURE "ddp/two_gpus/ddp2_even.sqlite" /* two processes */

/* Every call's id set under its process, then each asked back: held under
 * its own process, not under the other's unless SQL says that one holds
 * it too; then every third cleared. */
START_TEST(ids_of_a_capture)
{
	struct prof_error err = { 0 };
	struct prof_store *s = NULL;
	struct prof_cursor *c = NULL;
	struct id_bits b;
	int64_t n = 0, cleared = 0;
	int rc;

	id_bits__init(&b, ID_BITS_MAX_BLOCKS);
	ck_assert_msg(prof_store__open(testutil_data_path(CAPTURE), &s, &err) == 0, "%s", err.msg);
	ck_assert_int_eq(prof_cursor__open(s, "SELECT DISTINCT globalTid >> 24, correlationId FROM "
					   PROF_T_RUNTIME " WHERE correlationId IS NOT NULL AND "
					   "globalTid IS NOT NULL", &c, &err), 0);
	while ((rc = prof_cursor__next(c, &err)) == 1) {
		ck_assert_int_eq(id_bits__set(&b, prof_cursor__int64(c, 0), prof_cursor__int64(c, 1)), 1);
		n++;
	}
	ck_assert_int_eq(rc, 0);
	prof_cursor__close(c);
	ck_assert_int_gt(n, 10000);
	/* each (process, id) and the same id under the other processes */
	ck_assert_int_eq(prof_cursor__open(s, "SELECT p.p, r.correlationId, EXISTS (SELECT 1 FROM "
					   PROF_T_RUNTIME " x WHERE x.globalTid >> 24 = p.p AND "
					   "x.correlationId = r.correlationId), r.rowid % 3 = 0 FROM "
					   "(SELECT DISTINCT globalTid >> 24 AS p FROM " PROF_T_RUNTIME
					   " WHERE globalTid IS NOT NULL) p, " PROF_T_RUNTIME " r WHERE "
					   "r.correlationId IS NOT NULL AND r.rowid % 5 = 0", &c, &err), 0);
	while ((rc = prof_cursor__next(c, &err)) == 1) {
		int64_t p = prof_cursor__int64(c, 0), id = prof_cursor__int64(c, 1);
		bool held = prof_cursor__int64(c, 2) != 0;

		ck_assert_msg(id_bits__has(&b, p, id) == held, "process %lld id %lld", (long long)p,
			      (long long)id);
		if (held && prof_cursor__int64(c, 3)) {
			id_bits__clear(&b, p, id);
			ck_assert(!id_bits__has(&b, p, id));
			cleared++;
		}
	}
	ck_assert_int_eq(rc, 0);
	ck_assert_int_gt(cleared, 100);
	prof_cursor__close(c);
	prof_store__close(s);
	id_bits__exit(&b);
	ck_assert(!id_bits__has(&b, 0, 1));
}
END_TEST

START_TEST(ends_edges_and_the_limit)
{
	static const int64_t ids[] = { INT64_MIN, INT64_MIN + 1, -65537, -65536, -1, 0,
				       65535, 65536, INT64_MAX - 1, INT64_MAX };
	struct id_bits b;

	id_bits__init(&b, ID_BITS_MAX_BLOCKS);
	for (size_t i = 0; i < sizeof ids / sizeof *ids; i += 2)
		ck_assert_int_eq(id_bits__set(&b, 7, ids[i]), 1);
	for (size_t i = 0; i < sizeof ids / sizeof *ids; i++) {
		ck_assert(id_bits__has(&b, 7, ids[i]) == (i % 2 == 0));
		ck_assert(!id_bits__has(&b, 8, ids[i]));
	}
	id_bits__exit(&b);
	/* two blocks allowed: a third id's block is refused, its own ids not */
	id_bits__init(&b, 2);
	ck_assert_int_eq(id_bits__set(&b, 1, 5), 1);
	ck_assert_int_eq(id_bits__set(&b, 2, 5), 1);
	ck_assert_int_eq(id_bits__set(&b, 1, 65536 + 5), 0);
	ck_assert_int_eq(id_bits__set(&b, 1, 6), 1);
	ck_assert(!id_bits__has(&b, 1, 65536 + 5));
	id_bits__exit(&b);
}
END_TEST

/* A union holds every id of both sets and no other: a block's first id
 * held by one set only, blocks of one set only, the ends of the ids, two
 * spaces; past the blocks allowed it says so. */
START_TEST(a_union_holds_both_sets)
{
	static const int64_t mine[] = { 0, 5, 65535, 70000, INT64_MIN, -1 };
	static const int64_t theirs[] = { 1, 65536 + 3, 131072, 200000, INT64_MAX, -65536 };
	static const int64_t neither[] = { 2, 65536, 131073, 65536 * 3, INT64_MAX - 1, INT64_MIN + 1, -2 };
	struct id_bits into, from;

	id_bits__init(&into, ID_BITS_MAX_BLOCKS);
	id_bits__init(&from, ID_BITS_MAX_BLOCKS);
	for (size_t i = 0; i < sizeof mine / sizeof *mine; i++)
		ck_assert_int_eq(id_bits__set(&into, 3, mine[i]), 1);
	for (size_t i = 0; i < sizeof theirs / sizeof *theirs; i++) {
		ck_assert_int_eq(id_bits__set(&from, 3, theirs[i]), 1);
		ck_assert_int_eq(id_bits__set(&from, 4, theirs[i]), 1);
	}
	ck_assert_int_eq(id_bits__union(&into, &from), 1);
	for (size_t i = 0; i < sizeof mine / sizeof *mine; i++) {
		ck_assert(id_bits__has(&into, 3, mine[i]));
		ck_assert(!id_bits__has(&into, 4, mine[i]));
	}
	for (size_t i = 0; i < sizeof theirs / sizeof *theirs; i++)
		ck_assert(id_bits__has(&into, 3, theirs[i]) && id_bits__has(&into, 4, theirs[i]));
	for (size_t i = 0; i < sizeof neither / sizeof *neither; i++)
		ck_assert_msg(!id_bits__has(&into, 3, neither[i]) && !id_bits__has(&into, 4, neither[i]),
			      "id %lld held", (long long)neither[i]);
	id_bits__exit(&into);
	/* as many blocks as allowed: the union stops at the first more */
	id_bits__init(&into, 2);
	ck_assert_int_eq(id_bits__set(&into, 3, 1), 1);
	ck_assert_int_eq(id_bits__union(&into, &from), 0);
	id_bits__exit(&into);
	id_bits__exit(&from);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("id_bits");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, ids_of_a_capture);
	tcase_add_test(tc, ends_edges_and_the_limit);
	tcase_add_test(tc, a_union_holds_both_sets);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return testutil_run(suite());
}
