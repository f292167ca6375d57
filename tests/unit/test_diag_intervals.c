/* test_diag_intervals.c - unions of time intervals: overlapping work counts
 * once, a union clipped to a window is never longer than the window, and
 * the covered length of a span is what lies inside it, two unions'
 * intersection covers what they cover at once, and a union's length kept
 * alone is the merged union's. */
#include <check.h>

#include "analysis/diagnose/diagnose.h"
#include "prof/store.h"
#include "prof/tables.h"
#include "testutil.h"

/* A list of n intervals pushed as they come, the empty ones dropped. */
static struct diag_intervals list(const int64_t (*iv)[2], int n)
{
	struct diag_intervals l = { 0 };

	for (int i = 0; i < n; i++)
		ck_assert_int_eq(diag_intervals__push(&l, iv[i][0], iv[i][1]), 0);
	return l;
}

START_TEST(intervals_overlapping_runs_count_once)
{
	/* two runs of 5.9 ms that interleave on one stream (two GEMMs taking
	 * turns), one reaching past them, and an empty one, in no order */
	static const int64_t iv[][2] = { { 5000, 9000 }, { 100, 6000 }, { 0, 5900 }, { 7000, 7000 } };
	struct diag_intervals l = list(iv, 4);

	ck_assert_int_eq(l.n, 3);
	/* [0, 9000) once, not 4000 + 5900 + 5900 */
	ck_assert_int_eq(diag_intervals__union_ns(&l, 0, 20000), 9000);
	diag_intervals__exit(&l);
}
END_TEST

START_TEST(intervals_union_is_clipped_to_the_window)
{
	static const int64_t iv[][2] = { { 0, 10000 }, { 2000, 12000 }, { 15000, 16000 } };
	struct diag_intervals l = list(iv, 3);

	/* the window [1000, 11000) holds 10000 of it */
	ck_assert_int_eq(diag_intervals__union_ns(&l, 1000, 11000), 10000);
	/* a window after all of them holds nothing */
	ck_assert_int_eq(diag_intervals__union_ns(&l, 20000, 30000), 0);
	diag_intervals__exit(&l);
}
END_TEST

START_TEST(intervals_merged_in_start_order_stay_disjoint)
{
	struct diag_intervals u = { 0 };

	diag_intervals__merge(&u, 0, 10);
	diag_intervals__merge(&u, 5, 20);  /* overlaps */
	diag_intervals__merge(&u, 20, 30); /* touches */
	diag_intervals__merge(&u, 40, 50);
	diag_intervals__merge(&u, 42, 45); /* inside */
	ck_assert_int_eq(u.n, 2);
	ck_assert_int_eq(u.v[0].start_ns, 0);
	ck_assert_int_eq(u.v[0].end_ns, 30);
	ck_assert_int_eq(diag_intervals__length(&u), 40);
	ck_assert_int_eq(diag_intervals__covered(&u, 25, 45), 10);
	ck_assert_int_eq(diag_intervals__covered(&u, 30, 40), 0);
	ck_assert_int_eq(diag_intervals__first_ending_after(&u, 30), 1);
	ck_assert_int_eq(diag_intervals__first_ending_after(&u, 50), 2);
	diag_intervals__exit(&u);
	ck_assert_int_eq(u.n, 0);
}
END_TEST

START_TEST(intervals_united_in_place_from_any_order)
{
	/* the waits of one rank's NCCL calls, launched from two threads */
	static const int64_t iv[][2] = { { 40, 50 }, { 0, 10 }, { 5, 20 }, { 20, 30 }, { 42, 45 } };
	struct diag_intervals l = list(iv, 5);

	diag_intervals__unite(&l);
	ck_assert_int_eq(l.n, 2);
	ck_assert_int_eq(l.v[0].start_ns, 0);
	ck_assert_int_eq(l.v[0].end_ns, 30);
	ck_assert_int_eq(l.v[1].start_ns, 40);
	ck_assert_int_eq(l.v[1].end_ns, 50);
	ck_assert_int_eq(diag_intervals__length(&l), 40);
	diag_intervals__exit(&l);
}
END_TEST

START_TEST(intervals_intersection_overlaps_a_third_as_both_would)
{
	/* a rank's compute and communication; the waits lie inside the
	 * communication, so what of them runs beside compute is what of them
	 * runs beside the compute under communication */
	static const int64_t compute[][2] = { { 0, 10 }, { 20, 35 }, { 50, 60 } };
	static const int64_t comm[][2] = { { 5, 25 }, { 30, 55 } };
	static const int64_t waits[][2] = { { 5, 8 }, { 22, 25 }, { 33, 52 } };
	struct diag_intervals a = list(compute, 3), b = list(comm, 2), w = list(waits, 3), both = { 0 };

	ck_assert_int_eq(diag_intervals__intersect(&a, &b, &both), 0);
	ck_assert_int_eq(both.n, 4); /* [5,10) [20,25) [30,35) [50,55) */
	ck_assert_int_eq(both.v[2].start_ns, 30);
	ck_assert_int_eq(both.v[3].end_ns, 55);
	ck_assert_int_eq(diag_intervals__length(&both), diag_intervals__overlap_ns(&a, &b));
	ck_assert_int_eq(diag_intervals__overlap_ns(&w, &both), diag_intervals__overlap_ns(&w, &a));
	ck_assert_int_eq(diag_intervals__overlap_ns(&w, &both), 3 + 3 + 2 + 2);
	diag_intervals__exit(&a);
	diag_intervals__exit(&b);
	diag_intervals__exit(&w);
	diag_intervals__exit(&both);
}
END_TEST

/* The union's length kept alone (diag_union_length) is the merged
 * union's length, on every kernel of real captures in start order, whole
 * and clipped to a window (rows before it start at its start, empty ones
 * after it). */
START_TEST(intervals_length_alone_is_the_merged_length)
{
	static const char *const captures[] = { "transformer_naive.sqlite", "ddp/ddp2_even.sqlite",
						"corpus/graph_replay.sqlite" };

	for (size_t k = 0; k < sizeof captures / sizeof *captures; k++) {
		struct prof_error err = { 0 };
		struct prof_store *s;
		struct prof_cursor *c;
		int64_t first = 0, last = 0;
		int n = 0;

		ck_assert_msg(prof_store__open(testutil_data_path(captures[k]), &s, &err) == 0, "%s", err.msg);
		ck_assert_int_eq(prof_cursor__open(s, "SELECT min(start), max(end) FROM " PROF_T_KERNEL, &c, &err), 0);
		ck_assert_int_eq(prof_cursor__next(c, &err), 1);
		first = prof_cursor__int64(c, 0);
		last = prof_cursor__int64(c, 1);
		prof_cursor__close(c);
		/* whole, then the middle third */
		for (int w = 0; w < 2; w++) {
			int64_t lo = w ? first + (last - first) / 3 : first, hi = w ? last - (last - first) / 3 : last;
			struct diag_intervals u = { 0 };
			struct diag_union_length len = { 0 };

			ck_assert_int_eq(prof_cursor__open(s, "SELECT start, end FROM " PROF_T_KERNEL " ORDER BY start",
							   &c, &err), 0);
			while (prof_cursor__next(c, &err) == 1) {
				int64_t a = prof_cursor__int64(c, 0), b = prof_cursor__int64(c, 1);

				a = a > lo ? a : lo;
				b = b < hi ? b : hi;
				ck_assert_int_eq(diag_intervals__merge(&u, a, b), 0);
				diag_union_length__add(&len, a, b);
				n++;
			}
			prof_cursor__close(c);
			ck_assert_int_gt(u.n, 10);
			ck_assert_int_eq(diag_union_length__ns(&len), diag_intervals__length(&u));
			diag_intervals__exit(&u);
		}
		ck_assert_int_gt(n, 1000);
		prof_store__close(s);
	}
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("diag_intervals");
	TCase *tc = tcase_create("union");

	tcase_add_test(tc, intervals_overlapping_runs_count_once);
	tcase_add_test(tc, intervals_union_is_clipped_to_the_window);
	tcase_add_test(tc, intervals_merged_in_start_order_stay_disjoint);
	tcase_add_test(tc, intervals_united_in_place_from_any_order);
	tcase_add_test(tc, intervals_intersection_overlaps_a_third_as_both_would);
	tcase_add_test(tc, intervals_length_alone_is_the_merged_length);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return testutil_run(suite());
}
