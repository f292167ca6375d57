/* test_job_judge.c - the decisions of a job's rules on values: how long
 * each rank waited at a collective (the smaller of the two measures, so
 * that neither ranks time-sliced on one GPU nor a collective that ends
 * apart is taken for waiting), who the straggler is (one rank consistently
 * last by the margin, never a balanced job's alternating late ranks), how
 * uneven compute is, what the straggler did more, whether overlap could
 * hide the exposed communication, and how rank lists read. */
#include <check.h>
#include <string.h>

#include "analysis/ranks/job_judge.h"
#include "testutil.h"

#define MS 1000000LL

START_TEST(waits_of_ranks_that_end_together)
{
	/* rank 2 starts 20 ms after rank 0 and 5 ms after rank 1; all end at 40 ms */
	int64_t start[3] = { 0, 15 * MS, 20 * MS }, dur[3] = { 40 * MS, 25 * MS, 20 * MS }, wait[3];

	ck_assert_int_eq(job_judge__waits(start, dur, 3, wait), 2);
	ck_assert_int_eq(wait[0], 20 * MS);
	ck_assert_int_eq(wait[1], 5 * MS);
	ck_assert_int_eq(wait[2], 0);
}
END_TEST

START_TEST(waits_leave_out_time_slicing)
{
	/* two ranks on one GPU: the second's kernel starts 2.25 ms later (the
	 * time slice) and both run as long: nobody waited */
	int64_t start[2] = { 0, 2250000 }, dur[2] = { 22 * MS, 22 * MS }, wait[2];

	ck_assert_int_eq(job_judge__waits(start, dur, 2, wait), 1);
	ck_assert_int_eq(wait[0], 0);
	ck_assert_int_eq(wait[1], 0);
}
END_TEST

START_TEST(waits_of_a_collective_that_ends_apart)
{
	/* starts 1 ms apart, but rank 0's kernel runs 10 ms longer (a
	 * broadcast's root, say): it waited 1 ms, not 10 */
	int64_t start[2] = { 0, 1 * MS }, dur[2] = { 30 * MS, 20 * MS }, wait[2];

	job_judge__waits(start, dur, 2, wait);
	ck_assert_int_eq(wait[0], 1 * MS);
	ck_assert_int_eq(wait[1], 0);
}
END_TEST

START_TEST(waits_never_negative)
{
	/* the later rank's kernel is the longer: the measures disagree, no wait */
	int64_t start[2] = { 0, 3 * MS }, dur[2] = { 20 * MS, 25 * MS }, wait[2];

	job_judge__waits(start, dur, 2, wait);
	ck_assert_int_eq(wait[0], 0);
	ck_assert_int_eq(wait[1], 0);
	ck_assert_int_eq(job_judge__waits(start, dur, 0, wait), -1);
}
END_TEST

START_TEST(straggler_consistently_last)
{
	/* rank 1 last at 10 late collectives, rank 0 at one */
	struct job_lateness v[2] = { { 1, 4 * MS }, { 10, 200 * MS } };

	ck_assert_int_eq(job_judge__straggler(v, 2, 3, 0.75), 1);
}
END_TEST

START_TEST(no_straggler_where_the_late_rank_alternates)
{
	/* a balanced job: a late collective for one rank, then the other */
	struct job_lateness v[2] = { { 1, 10 * MS }, { 1, 8 * MS } };
	struct job_lateness many[4] = { { 5, 50 * MS }, { 4, 40 * MS }, { 5, 45 * MS }, { 6, 55 * MS } };

	ck_assert_int_eq(job_judge__straggler(v, 2, 3, 0.75), -1);
	ck_assert_int_eq(job_judge__straggler(many, 4, 3, 0.75), -1);
}
END_TEST

START_TEST(no_straggler_from_a_few_late_collectives)
{
	/* one rank alone late, but twice: a hiccup, not a straggler */
	struct job_lateness v[2] = { { 0, 0 }, { 2, 40 * MS } };
	struct job_lateness none[2] = { { 0, 0 }, { 0, 0 } };

	ck_assert_int_eq(job_judge__straggler(v, 2, 3, 0.75), -1);
	ck_assert_int_eq(job_judge__straggler(v, 2, 2, 0.75), 1);
	ck_assert_int_eq(job_judge__straggler(none, 2, 0, 0.75), -1);
}
END_TEST

START_TEST(contention_is_the_time_past_the_same_kernel_alone)
{
	/* a GEMM (name 7, one configuration) runs 50 us alone and 93 us beside
	 * the rank's waiting NCCL kernel, as in the two-GPU DDP captures; the
	 * same name with another grid is another configuration, never alone */
	struct job_kernel v[] = {
		{ 7, { 16, 1, 8 }, { 256, 1, 1 }, 93000, true },
		{ 7, { 16, 1, 8 }, { 256, 1, 1 }, 49000, false },
		{ 7, { 16, 1, 8 }, { 256, 1, 1 }, 50000, false },
		{ 7, { 16, 1, 8 }, { 256, 1, 1 }, 90000, true },
		{ 7, { 16, 1, 8 }, { 256, 1, 1 }, 51000, false },
		{ 7, { 128, 1, 1 }, { 256, 1, 1 }, 95000, true },
		/* beside communication but no slower than alone: nothing */
		{ 9, { 4, 1, 1 }, { 128, 1, 1 }, 3000, true },
		{ 9, { 4, 1, 1 }, { 128, 1, 1 }, 4000, false },
	};
	/* nothing beside communication, nothing to take off */
	struct job_kernel alone[] = { { 1, { 1, 1, 1 }, { 1, 1, 1 }, 5000, false } };

	/* the median alone is 50 us: 43 + 40 us past it */
	ck_assert_int_eq(job_judge__contention_ns(v, 8), 83000);
	ck_assert_int_eq(job_judge__contention_ns(alone, 1), 0);
	ck_assert_int_eq(job_judge__contention_ns(NULL, 0), 0);
}
END_TEST

START_TEST(imbalance_of_compute_per_step)
{
	/* the example: 113 ms and 39 ms for the same launches */
	double v[2] = { 39.0, 113.0 }, even[3] = { 10.0, 10.5, 10.2 }, zero[2] = { 0, 0 };
	int hi, lo;

	ck_assert_double_eq_tol(job_judge__imbalance(v, 2, &hi, &lo), 74.0 / 113.0, 1e-12);
	ck_assert_int_eq(hi, 1);
	ck_assert_int_eq(lo, 0);
	ck_assert_double_lt(job_judge__imbalance(even, 3, &hi, &lo), 0.1);
	ck_assert_int_eq(hi, 1);
	ck_assert_double_eq(job_judge__imbalance(zero, 2, &hi, &lo), 0);
	ck_assert_int_eq(hi, -1);
	ck_assert_double_eq(job_judge__imbalance(v, 1, &hi, &lo), 0);
}
END_TEST

START_TEST(cause_host_work)
{
	/* the DDP capture's straggler: 20 ms of its own host work before the
	 * collective, as much GPU work as the other */
	struct job_gap s = { .gap_ns = 25 * MS, .compute_ns = 0.9 * MS, .host_ns = 23 * MS,
			     .calls_ns = 1.6 * MS, .kernels = 42 };
	struct job_gap w = { .gap_ns = 5 * MS, .compute_ns = 0.9 * MS, .host_ns = 2.5 * MS,
			     .calls_ns = 1.6 * MS, .kernels = 42 };
	double extra;

	ck_assert_int_eq(job_judge__cause(&s, &w, &extra), JOB_CAUSE_HOST);
	ck_assert_double_eq_tol(extra, 20.5 * MS, 1);
}
END_TEST

START_TEST(cause_gpu_work_more_or_slower)
{
	struct job_gap w = { .gap_ns = 10 * MS, .compute_ns = 10 * MS, .kernels = 100 };
	struct job_gap more = { .gap_ns = 20 * MS, .compute_ns = 20 * MS, .kernels = 200 };
	struct job_gap slower = { .gap_ns = 20 * MS, .compute_ns = 20 * MS, .kernels = 100 };
	struct job_gap copies = { .gap_ns = 20 * MS, .compute_ns = 10 * MS, .copies_ns = 8 * MS, .kernels = 100 };
	struct job_gap calls = { .gap_ns = 20 * MS, .compute_ns = 10 * MS, .calls_ns = 9 * MS, .kernels = 100 };
	double extra;

	ck_assert_int_eq(job_judge__cause(&more, &w, &extra), JOB_CAUSE_MORE_GPU);
	ck_assert_int_eq(job_judge__cause(&slower, &w, &extra), JOB_CAUSE_SLOW_GPU);
	ck_assert_int_eq(job_judge__cause(&copies, &w, &extra), JOB_CAUSE_COPIES);
	ck_assert_double_eq_tol(extra, 8 * MS, 1);
	ck_assert_int_eq(job_judge__cause(&calls, &w, &extra), JOB_CAUSE_CALLS);
	/* no more of anything: nothing to blame */
	ck_assert_int_eq(job_judge__cause(&w, &w, &extra), JOB_CAUSE_NONE);
	ck_assert_double_eq(extra, 0);
}
END_TEST

START_TEST(overlap_hides_only_what_compute_can_cover)
{
	/* the DDP capture: 80 ms of exposed communication, 1.5 ms of compute */
	ck_assert(!job_judge__overlap_can_hide(80 * MS, 1.5 * MS, 0.5 * MS));
	/* 10 ms exposed, 30 ms of compute of which 5 ms overlapped already */
	ck_assert(job_judge__overlap_can_hide(10 * MS, 30 * MS, 5 * MS));
	/* exactly half */
	ck_assert(job_judge__overlap_can_hide(10 * MS, 5 * MS, 0));
	ck_assert(!job_judge__overlap_can_hide(10 * MS, 5 * MS - 1, 0));
	ck_assert(!job_judge__overlap_can_hide(0, 5 * MS, 0));
}
END_TEST

START_TEST(rank_lists)
{
	int one[1] = { 3 }, two[2] = { 0, 2 }, run[6] = { 0, 1, 2, 3, 7, 8 }, many[64];
	char buf[256], small[16];

	job_judge__rank_list(one, 1, buf, sizeof buf);
	ck_assert_str_eq(buf, "rank 3");
	job_judge__rank_list(two, 2, buf, sizeof buf);
	ck_assert_str_eq(buf, "ranks 0, 2");
	job_judge__rank_list(run, 6, buf, sizeof buf);
	ck_assert_str_eq(buf, "ranks 0-3, 7, 8");
	for (int i = 0; i < 64; i++)
		many[i] = 2 * i;
	job_judge__rank_list(many, 64, small, sizeof small);
	ck_assert_int_eq(strlen(small), sizeof small - 1);
	ck_assert_str_eq(small + sizeof small - 4, "...");
	job_judge__rank_list(one, 0, buf, sizeof buf);
	ck_assert_str_eq(buf, "");
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("job_judge");
	TCase *tc = tcase_create("decisions");

	tcase_add_test(tc, waits_of_ranks_that_end_together);
	tcase_add_test(tc, waits_leave_out_time_slicing);
	tcase_add_test(tc, waits_of_a_collective_that_ends_apart);
	tcase_add_test(tc, waits_never_negative);
	tcase_add_test(tc, straggler_consistently_last);
	tcase_add_test(tc, no_straggler_where_the_late_rank_alternates);
	tcase_add_test(tc, no_straggler_from_a_few_late_collectives);
	tcase_add_test(tc, imbalance_of_compute_per_step);
	tcase_add_test(tc, contention_is_the_time_past_the_same_kernel_alone);
	tcase_add_test(tc, cause_host_work);
	tcase_add_test(tc, cause_gpu_work_more_or_slower);
	tcase_add_test(tc, overlap_hides_only_what_compute_can_cover);
	tcase_add_test(tc, rank_lists);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return testutil_run(suite());
}
