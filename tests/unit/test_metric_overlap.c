/* test_metric_overlap.c - sampled counters averaged over the time groups of
 * intervals cover (report/analysis/metric_overlap.c): each sample weighed by
 * its period's overlap with the group, the time the samples saw and the
 * share of their periods the group filled; checked on values worked out by
 * hand and against a direct sum over every (sample, interval) pair. */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "analysis/gpu_metrics/metric_overlap.h"
#include "testutil.h"

#define EPS 1e-9

/* Samples at these timestamps (the first opens the first period) with one
 * metric's values, ending at t[i]; value[0] is never used. */
static void feed(struct mo_sweep *s, const int64_t *t, const double *v, int n)
{
	for (int i = 1; i < n; i++)
		ck_assert_int_eq(mo_sweep__add(s, t[i - 1], t[i], &v[i]), 0);
}

START_TEST(overlap_kernel_inside_one_period_takes_that_periods_value)
{
	const int64_t t[] = { 0, 100, 200 };
	const double v[] = { 0, 30, 80 };
	struct mo_interval iv[] = { { 120, 125, 0 } };
	struct mo_sweep s;

	ck_assert_int_eq(mo_sweep__init(&s, iv, 1, 1, 1), 0);
	feed(&s, t, v, 3);
	ck_assert_double_eq_tol(mo_sweep__mean(&s, 0, 0), 80, EPS);
	/* 5 ns of a 100 ns period: the value is mostly what ran around it */
	ck_assert_int_eq(s.groups[0].covered_ns, 5);
	ck_assert_int_eq(s.groups[0].touched_ns, 100);
	ck_assert_int_eq(s.groups[0].periods, 1);
	mo_sweep__exit(&s);
}
END_TEST

START_TEST(overlap_weighs_each_period_by_the_time_it_shares_with_the_interval)
{
	/* periods (0,100] (100,200] (200,300] at 10, 20, 40; the kernel runs
	 * 50..225: 50 ns, 100 ns and 25 ns of them */
	const int64_t t[] = { 0, 100, 200, 300 };
	const double v[] = { 0, 10, 20, 40 };
	struct mo_interval iv[] = { { 50, 225, 0 } };
	struct mo_sweep s;

	ck_assert_int_eq(mo_sweep__init(&s, iv, 1, 1, 1), 0);
	feed(&s, t, v, 4);
	ck_assert_double_eq_tol(mo_sweep__mean(&s, 0, 0), (10.0 * 50 + 20.0 * 100 + 40.0 * 25) / 175, EPS);
	ck_assert_int_eq(s.groups[0].covered_ns, 175);
	ck_assert_int_eq(s.groups[0].touched_ns, 300);
	ck_assert_int_eq(mo_sweep__weight_ns(&s, 0, 0), 175);
	mo_sweep__exit(&s);
}
END_TEST

START_TEST(overlap_time_outside_the_samples_has_no_value)
{
	/* samples cover (100, 200]; the kernel runs 0..300 */
	const int64_t t[] = { 100, 200 };
	const double v[] = { 0, 60 };
	struct mo_interval iv[] = { { 0, 300, 0 }, { 400, 500, 1 } };
	struct mo_sweep s;

	ck_assert_int_eq(mo_sweep__init(&s, iv, 2, 2, 1), 0);
	feed(&s, t, v, 2);
	ck_assert_double_eq_tol(mo_sweep__mean(&s, 0, 0), 60, EPS);
	ck_assert_int_eq(s.groups[0].covered_ns, 100);
	ck_assert(isnan(mo_sweep__mean(&s, 1, 0)));
	ck_assert_int_eq(s.groups[1].covered_ns, 0);
	ck_assert_int_eq(s.groups[1].touched_ns, 0);
	mo_sweep__exit(&s);
}
END_TEST

START_TEST(overlap_a_metric_missing_from_a_sample_weighs_only_where_it_has_values)
{
	/* metric 1 has no value in the first period */
	struct mo_interval iv[] = { { 0, 200, 0 } };
	const double first[] = { 10, NAN }, second[] = { 30, 50 };
	struct mo_sweep s;

	ck_assert_int_eq(mo_sweep__init(&s, iv, 1, 1, 2), 0);
	ck_assert_int_eq(mo_sweep__add(&s, 0, 100, first), 0);
	ck_assert_int_eq(mo_sweep__add(&s, 100, 200, second), 0);
	ck_assert_double_eq_tol(mo_sweep__mean(&s, 0, 0), 20, EPS);
	ck_assert_double_eq_tol(mo_sweep__mean(&s, 0, 1), 50, EPS);
	ck_assert_int_eq(mo_sweep__weight_ns(&s, 0, 1), 100);
	ck_assert_int_eq(s.groups[0].covered_ns, 200);
	mo_sweep__exit(&s);
}
END_TEST

START_TEST(overlap_two_intervals_of_a_group_in_one_period_count_the_period_once)
{
	const int64_t t[] = { 0, 100 };
	const double v[] = { 0, 70 };
	struct mo_interval iv[] = { { 10, 20, 0 }, { 40, 60, 0 } };
	struct mo_sweep s;

	ck_assert_int_eq(mo_sweep__init(&s, iv, 2, 1, 1), 0);
	feed(&s, t, v, 2);
	ck_assert_int_eq(s.groups[0].covered_ns, 30);
	ck_assert_int_eq(s.groups[0].touched_ns, 100);
	ck_assert_int_eq(s.groups[0].periods, 1);
	mo_sweep__exit(&s);
}
END_TEST

START_TEST(overlap_groups_that_run_at_once_are_each_averaged_on_their_own)
{
	/* two kernels on two streams: A 0..150, B 100..300 */
	const int64_t t[] = { 0, 100, 200, 300 };
	const double v[] = { 0, 10, 50, 90 };
	struct mo_interval iv[] = { { 0, 150, 0 }, { 100, 300, 1 } };
	struct mo_sweep s;

	ck_assert_int_eq(mo_sweep__init(&s, iv, 2, 2, 1), 0);
	feed(&s, t, v, 4);
	ck_assert_double_eq_tol(mo_sweep__mean(&s, 0, 0), (10.0 * 100 + 50.0 * 50) / 150, EPS);
	ck_assert_double_eq_tol(mo_sweep__mean(&s, 1, 0), (50.0 * 100 + 90.0 * 100) / 200, EPS);
	mo_sweep__exit(&s);
}
END_TEST

START_TEST(overlap_merge_makes_a_groups_instances_one_union)
{
	struct mo_interval *iv = NULL;
	int n = 0, cap = 0, last_a = -1, last_b = -1;

	/* A: 0..10, 5..20 (overlap), 20..30 (touch), 40..50 (apart); B: 8..9 */
	ck_assert_int_eq(mo_intervals__merge(&iv, &n, &cap, &last_a, 0, 10, 0), 0);
	ck_assert_int_eq(mo_intervals__merge(&iv, &n, &cap, &last_b, 8, 9, 1), 0);
	ck_assert_int_eq(mo_intervals__merge(&iv, &n, &cap, &last_a, 5, 20, 0), 0);
	ck_assert_int_eq(mo_intervals__merge(&iv, &n, &cap, &last_a, 20, 30, 0), 0);
	ck_assert_int_eq(mo_intervals__merge(&iv, &n, &cap, &last_a, 40, 50, 0), 0);
	ck_assert_int_eq(mo_intervals__merge(&iv, &n, &cap, &last_a, 45, 45, 0), 0); /* empty */
	ck_assert_int_eq(n, 3);
	mo_intervals__sort(iv, n);
	ck_assert_int_eq(iv[0].start_ns, 0);
	ck_assert_int_eq(iv[0].end_ns, 30);
	ck_assert_int_eq(iv[1].group, 1);
	ck_assert_int_eq(iv[2].start_ns, 40);
	ck_assert_int_eq(iv[2].end_ns, 50);
	free(iv);
}
END_TEST

START_TEST(overlap_empty_and_reversed_periods_count_for_nothing)
{
	struct mo_interval iv[] = { { 0, 100, 0 } };
	const double v = 50;
	struct mo_sweep s;

	ck_assert_int_eq(mo_sweep__init(&s, iv, 1, 1, 1), 0);
	ck_assert_int_eq(mo_sweep__add(&s, 10, 10, &v), 0);
	ck_assert_int_eq(mo_sweep__add(&s, 30, 20, &v), 0);
	ck_assert(isnan(mo_sweep__mean(&s, 0, 0)));
	ck_assert_int_eq(s.groups[0].covered_ns, 0);
	mo_sweep__exit(&s);
}
END_TEST

START_TEST(overlap_extreme_timestamps_saturate_instead_of_wrapping)
{
	/* a whole-capture group over a damaged file's timestamps */
	struct mo_interval iv[] = { { INT64_MIN, INT64_MAX, 0 } };
	const double v = 25;
	struct mo_sweep s;

	ck_assert_int_eq(mo_sweep__init(&s, iv, 1, 1, 1), 0);
	ck_assert_int_eq(mo_sweep__add(&s, INT64_MIN + 1, INT64_MAX - 1, &v), 0);
	ck_assert_int_eq(mo_sweep__add(&s, INT64_MAX - 1, INT64_MAX, &v), 0);
	ck_assert_int_eq(s.groups[0].covered_ns, INT64_MAX);
	ck_assert_double_eq_tol(mo_sweep__mean(&s, 0, 0), 25, EPS);
	ck_assert_double_eq_tol(mo_fraction(s.groups[0].covered_ns, s.groups[0].touched_ns), 1, EPS);
	mo_sweep__exit(&s);
}
END_TEST

/* The sweep against the sum over every pair, on random intervals and
 * samples: groups of disjoint intervals and periods of random length. */
START_TEST(overlap_sweep_equals_the_sum_over_every_pair)
{
	enum { GROUPS = 7, PER_GROUP = 40, SAMPLES = 400 };
	struct mo_interval iv[GROUPS * PER_GROUP];
	int64_t t[SAMPLES + 1];
	double v[SAMPLES + 1];
	struct mo_sweep s;
	int n = 0;

	srand(20);
	for (int g = 0; g < GROUPS; g++)
		for (int i = 0, at = rand() % 50; i < PER_GROUP; i++) {
			int64_t start = at + rand() % 300, end = start + 1 + rand() % 400;

			iv[n++] = (struct mo_interval){ start, end, g };
			at = (int)end + rand() % 5;
		}
	t[0] = 100;
	for (int i = 1; i <= SAMPLES; i++) {
		t[i] = t[i - 1] + 1 + rand() % 120;
		v[i] = (double)(rand() % 1000) / 10;
	}
	mo_intervals__sort(iv, n);
	ck_assert_int_eq(mo_sweep__init(&s, iv, n, GROUPS, 1), 0);
	feed(&s, t, v, SAMPLES + 1);
	for (int g = 0; g < GROUPS; g++) {
		double sum = 0;
		int64_t weight = 0, touched = 0;

		for (int i = 1; i <= SAMPLES; i++) {
			int64_t mine = 0;

			for (int k = 0; k < n; k++) {
				int64_t a = iv[k].start_ns > t[i - 1] ? iv[k].start_ns : t[i - 1];
				int64_t b = iv[k].end_ns < t[i] ? iv[k].end_ns : t[i];

				if (iv[k].group == g && b > a)
					mine += b - a;
			}
			sum += v[i] * (double)mine;
			weight += mine;
			touched += mine > 0 ? t[i] - t[i - 1] : 0;
		}
		ck_assert_int_eq(s.groups[g].covered_ns, weight);
		ck_assert_int_eq(s.groups[g].touched_ns, touched);
		if (weight)
			ck_assert_double_eq_tol(mo_sweep__mean(&s, g, 0), sum / (double)weight, 1e-6);
		else
			ck_assert(isnan(mo_sweep__mean(&s, g, 0)));
	}
	mo_sweep__exit(&s);
}
END_TEST

START_TEST(overlap_fraction_stays_in_zero_to_one)
{
	ck_assert_double_eq_tol(mo_fraction(5, 100), 0.05, EPS);
	ck_assert_double_eq_tol(mo_fraction(5, 0), 0, EPS);
	ck_assert_double_eq_tol(mo_fraction(-5, 10), 0, EPS);
	ck_assert_double_eq_tol(mo_fraction(20, 10), 1, EPS);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("metric_overlap");
	TCase *tc = tcase_create("overlap");

	tcase_add_test(tc, overlap_kernel_inside_one_period_takes_that_periods_value);
	tcase_add_test(tc, overlap_weighs_each_period_by_the_time_it_shares_with_the_interval);
	tcase_add_test(tc, overlap_time_outside_the_samples_has_no_value);
	tcase_add_test(tc, overlap_a_metric_missing_from_a_sample_weighs_only_where_it_has_values);
	tcase_add_test(tc, overlap_two_intervals_of_a_group_in_one_period_count_the_period_once);
	tcase_add_test(tc, overlap_groups_that_run_at_once_are_each_averaged_on_their_own);
	tcase_add_test(tc, overlap_merge_makes_a_groups_instances_one_union);
	tcase_add_test(tc, overlap_empty_and_reversed_periods_count_for_nothing);
	tcase_add_test(tc, overlap_extreme_timestamps_saturate_instead_of_wrapping);
	tcase_add_test(tc, overlap_sweep_equals_the_sum_over_every_pair);
	tcase_add_test(tc, overlap_fraction_stays_in_zero_to_one);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return testutil_run(suite());
}
