/* test_id_map.c - the id map gives back what was put under each id and
 * nothing for the rest: every correlation id of a real capture's kernels
 * (thousands, so the map grows many times), each under a value of its
 * own; ids at the ends of int64 and ids that land on one slot; and ids
 * taken out again, from the middle of a run of probes and in the order
 * of a capture's ids, leaving every other id found. */
#include <check.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "model/id_map.h"
#include "prof/store.h"
#include "prof/tables.h"
#include "testutil.h"

#define CAPTURE "transformer_naive.sqlite"

static int64_t *boxed(int64_t v)
{
	int64_t *p = malloc(sizeof *p);

	ck_assert_ptr_nonnull(p);
	*p = v;
	return p;
}

START_TEST(every_id_of_a_capture_found)
{
	struct prof_error err = { 0 };
	struct prof_store *s = NULL;
	struct prof_cursor *cur = NULL;
	struct id_map m = { 0 };
	int64_t *ids = NULL;
	size_t n = 0, cap = 0;
	int rc;

	ck_assert_msg(prof_store__open(testutil_data_path(CAPTURE), &s, &err) == 0, "%s", err.msg);
	ck_assert_int_eq(prof_cursor__open(s, "SELECT DISTINCT correlationId FROM " PROF_T_KERNEL
					   " WHERE correlationId IS NOT NULL", &cur, &err), 0);
	while ((rc = prof_cursor__next(cur, &err)) == 1) {
		int64_t id = prof_cursor__int64(cur, 0);

		if (n == cap) {
			cap = cap ? cap * 2 : 1024;
			ids = realloc(ids, cap * sizeof *ids);
			ck_assert_ptr_nonnull(ids);
		}
		ids[n++] = id;
		ck_assert_ptr_null(id_map__get(&m, id));
		/* the value tells which id it was put under */
		ck_assert_int_eq(id_map__put(&m, id, boxed(id * 3 + 1)), 0);
	}
	ck_assert_int_eq(rc, 0);
	prof_cursor__close(cur);
	prof_store__close(s);
	ck_assert_uint_gt(n, 1000);
	ck_assert_uint_eq(m.n, n);
	for (size_t i = 0; i < n; i++) {
		int64_t *v = id_map__get(&m, ids[i]);

		ck_assert_ptr_nonnull(v);
		ck_assert_int_eq(*v, ids[i] * 3 + 1);
		/* an id beside one held, not itself held, is absent (the
		 * capture's ids are positive) */
		ck_assert_ptr_null(id_map__get(&m, -ids[i] - 1));
	}
	free(ids);
	id_map__exit(&m, NULL);
	ck_assert_uint_eq(m.cap, 0);
	ck_assert_ptr_null(id_map__get(&m, 1));
}
END_TEST

/* ids whose hash names one slot follow each other by probing; the ends
 * of int64 are ids as any other */
START_TEST(colliding_and_extreme_ids)
{
	static const int64_t ends[] = { INT64_MIN, INT64_MAX, 0, -1 };
	struct id_map m = { 0 };
	int64_t step = (int64_t)1 << 50; /* above the hash's kept bits at 64 slots */

	for (size_t i = 0; i < sizeof ends / sizeof *ends; i++)
		ck_assert_int_eq(id_map__put(&m, ends[i], boxed((int64_t)i)), 0);
	for (int64_t k = 1; k <= 40; k++)
		ck_assert_int_eq(id_map__put(&m, k * step, boxed(100 + k)), 0);
	for (size_t i = 0; i < sizeof ends / sizeof *ends; i++)
		ck_assert_int_eq(*(int64_t *)id_map__get(&m, ends[i]), (int64_t)i);
	for (int64_t k = 1; k <= 40; k++)
		ck_assert_int_eq(*(int64_t *)id_map__get(&m, k * step), 100 + k);
	ck_assert_ptr_null(id_map__get(&m, 41 * step));
	ck_assert_ptr_null(id_map__get(&m, 1));
	id_map__exit(&m, free);
}
END_TEST

/* Ids taken out of a map in another order than they went in: after each
 * take, every id still held is found with its value and every id taken is
 * gone (a hole left in a run of probes would hide the ids after it). */
static void take_and_check(int64_t *ids, size_t n, size_t every)
{
	struct id_map m = { 0 };
	bool *taken = calloc(n, sizeof *taken);

	ck_assert_ptr_nonnull(taken);
	for (size_t i = 0; i < n; i++)
		ck_assert_int_eq(id_map__put(&m, ids[i], boxed(ids[i] ^ 0x5a5a)), 0);
	for (size_t k = n; k-- > 0;) {
		int64_t *v;

		if (k % every)
			continue;
		v = id_map__take(&m, ids[k]);
		ck_assert_ptr_nonnull(v);
		ck_assert_int_eq(*v, ids[k] ^ 0x5a5a);
		free(v);
		taken[k] = true;
		ck_assert_ptr_null(id_map__take(&m, ids[k]));
		/* a full check after the first takes, where holes are few and
		 * each one matters; then every 64th */
		if (k % (every * 64) && n - k > 8 * every)
			continue;
		for (size_t i = 0; i < n; i++) {
			int64_t *v = id_map__get(&m, ids[i]);

			if (taken[i]) {
				ck_assert_ptr_null(v);
				continue;
			}
			ck_assert_ptr_nonnull(v);
			ck_assert_int_eq(*v, ids[i] ^ 0x5a5a);
		}
	}
	ck_assert_uint_eq(m.n, n - (n + every - 1) / every);
	free(taken);
	id_map__exit(&m, free);
}

START_TEST(ids_taken_out)
{
	struct prof_error err = { 0 };
	struct prof_store *s = NULL;
	struct prof_cursor *cur = NULL;
	int64_t colliding[40], *ids = NULL;
	size_t n = 0, cap = 0;
	int rc;

	/* one run of probes: taking from its middle must pull the rest back */
	for (int k = 0; k < 40; k++)
		colliding[k] = (int64_t)(k + 1) << 50;
	take_and_check(colliding, 40, 3);
	take_and_check(colliding, 40, 1);

	ck_assert_msg(prof_store__open(testutil_data_path(CAPTURE), &s, &err) == 0, "%s", err.msg);
	ck_assert_int_eq(prof_cursor__open(s, "SELECT DISTINCT correlationId FROM " PROF_T_KERNEL
					   " WHERE correlationId IS NOT NULL", &cur, &err), 0);
	while ((rc = prof_cursor__next(cur, &err)) == 1) {
		if (n == cap) {
			cap = cap ? cap * 2 : 1024;
			ids = realloc(ids, cap * sizeof *ids);
			ck_assert_ptr_nonnull(ids);
		}
		ids[n++] = prof_cursor__int64(cur, 0);
	}
	ck_assert_int_eq(rc, 0);
	prof_cursor__close(cur);
	prof_store__close(s);
	ck_assert_uint_gt(n, 1000);
	take_and_check(ids, n, 2);
	take_and_check(ids, n, 7);
	free(ids);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("id_map");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, every_id_of_a_capture_found);
	tcase_add_test(tc, colliding_and_extreme_ids);
	tcase_add_test(tc, ids_taken_out);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return testutil_run(suite());
}
