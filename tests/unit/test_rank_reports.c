/* test_rank_reports.c - rank_sum and nccl_sum on values: each rank's
 * compute, communication, hidden and exposed communication and idle time,
 * and per collective kind and size the calls, bytes, times and nccl-tests'
 * bandwidths, on the two-rank job of nccl_job.h (written through the
 * writer, every time known); the steps per rank on a job made of two real
 * captures (job_fixture.h), against each capture's own loop; --rank on
 * both reports; and the interval overlap they rest on. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "analysis/analysis.h"
#include "analysis/ranks/rank_time.h"
#include "job_fixture.h"
#include "nccl_job.h"
#include "prof/analysis_tables.h"
#include "report_capture.h"
#include "registry/registry.h"
#include "summary/summary.h"
#include "testutil.h"

static struct cap_report *run_report(const char *path, const char *ranks, const char *name,
				     struct cap_sink **out)
{
	struct prof_error err = { 0 };
	struct prof_store *s;
	struct cap_sink *c = cap_sink__new();

	ck_assert_msg(prof_store__open_capture(path, &s, &err) == 0, "%s", err.msg);
	if (ranks)
		ck_assert_msg(summary__select_ranks(s, ranks, &err) == 0, "%s", err.msg);
	ck_assert_msg(registry__run(name, s, &c->sink, &err) == 0, "%s", err.msg);
	prof_store__close(s);
	*out = c;
	return cap_report(c, name);
}

static int64_t ival(const struct cap_report *r, int row, const char *col)
{
	const struct rpt_cell *c = cap_cell(r, row, col);

	ck_assert_msg(c != NULL, "no column %s", col);
	ck_assert_msg(!c->is_null, "%s is null in row %d", col, row);
	return c->i;
}

static double dval(const struct cap_report *r, int row, const char *col)
{
	const struct rpt_cell *c = cap_cell(r, row, col);

	ck_assert_msg(c != NULL && !c->is_null, "%s missing in row %d", col, row);
	return c->d;
}

START_TEST(intervals_overlap_counts_time_both_cover)
{
	struct diag_intervals a = { 0 }, b = { 0 };

	diag_intervals__merge(&a, 0, 10);
	diag_intervals__merge(&a, 20, 30);
	diag_intervals__merge(&a, 40, 50);
	diag_intervals__merge(&b, 5, 25);
	diag_intervals__merge(&b, 28, 29);
	diag_intervals__merge(&b, 45, 100);
	/* 5..10, 20..25, 28..29, 45..50 */
	ck_assert_int_eq(diag_intervals__overlap_ns(&a, &b), 5 + 5 + 1 + 5);
	ck_assert_int_eq(diag_intervals__overlap_ns(&b, &a), 16);
	diag_intervals__exit(&b);
	ck_assert_int_eq(diag_intervals__overlap_ns(&a, &b), 0);
	diag_intervals__exit(&a);
}
END_TEST

START_TEST(percentile_by_nearest_rank)
{
	int64_t v[] = { 50, 10, 40, 20, 30, 60, 70, 80, 90, 100 };

	ck_assert_int_eq(rank_time__percentile(v, 10, 50), 50);
	ck_assert_int_eq(rank_time__percentile(v, 10, 95), 100);
	ck_assert_int_eq(rank_time__percentile(v, 10, 90), 90);
	ck_assert_int_eq(rank_time__percentile(v, 1, 95), 10);
	ck_assert_int_eq(rank_time__percentile(v, 0, 50), -1);
}
END_TEST

START_TEST(rank_sum_splits_each_rank_into_compute_communication_and_idle)
{
	struct cap_sink *c;
	struct cap_report *r = run_report(write_job(), NULL, "rank_sum", &c);

	ck_assert_int_eq(r->nrows, 2);
	ck_assert_int_eq(ival(r, 0, "Rank"), 0);
	/* elementwise 1000 + GEMM 1900; all-reduce 1000, send/recv 500, all-gather 300 */
	ck_assert_int_eq(ival(r, 0, "Compute (ns)"), 2900);
	ck_assert_int_eq(ival(r, 0, "Communication (ns)"), 1800);
	ck_assert_int_eq(ival(r, 0, "Hidden Comm (ns)"), 500);
	ck_assert_int_eq(ival(r, 0, "Exposed Comm (ns)"), 1300);
	ck_assert_int_eq(ival(r, 0, "GPU Busy (ns)"), 4200);
	/* no loop: the window is rank 0's whole capture, its first range to its GEMM's end */
	ck_assert_int_eq(ival(r, 0, "Window (ns)"), 8900);
	ck_assert_int_eq(ival(r, 0, "Idle (ns)"), 4700);
	ck_assert_int_eq(ival(r, 0, "Steps"), 0);
	ck_assert(cap_cell(r, 0, "Step Med (ns)")->is_null);
	/* rank 1: its all-reduce and send/recv start later, under the same compute */
	ck_assert_int_eq(ival(r, 1, "Rank"), 1);
	ck_assert_int_eq(ival(r, 1, "Communication (ns)"), 400 + 400 + 300);
	ck_assert_int_eq(ival(r, 1, "Hidden Comm (ns)"), 400);
	ck_assert_int_eq(ival(r, 1, "Exposed Comm (ns)"), 700);
	ck_assert_int_eq(ival(r, 1, "Idle (ns)"), 8900 - 3600);
	ck_assert(fabs(dval(r, 1, "Exposed (%)") - 100.0 * 700 / 8900) < 1e-9);
	ck_assert_int_eq(cap_note_count(r, "rows_left_out"), 0);
	cap_destroy(&c->sink);
}
END_TEST

START_TEST(rank_sum_steps_are_each_ranks_own_loop)
{
	const char *caps[2];
	char a[4096], b[4096], job[4096];
	struct cap_sink *c;
	struct cap_report *r;

	snprintf(a, sizeof a, "%s", testutil_data_path("cases/case_steady_50.sqlite"));
	snprintf(b, sizeof b, "%s", testutil_data_path("cases/case_steady_44_slow.sqlite"));
	caps[0] = a;
	caps[1] = b;
	snprintf(job, sizeof job, "%s", testutil_tmp_path("steady_job.sqlite"));
	ck_assert_int_eq(job_fixture__make(job, caps, 2, 0), 0);
	r = run_report(job, NULL, "rank_sum", &c);
	ck_assert_int_eq(r->nrows, 2);
	/* each capture's "step" loop, its first instance left out */
	ck_assert_int_eq(ival(r, 0, "Steps"), 50);
	ck_assert_int_eq(ival(r, 1, "Steps"), 44);
	ck_assert_str_eq(cap_cell(r, 1, "Window Source")->s, "NVTX range \"step\" x 44");
	ck_assert_int_le(ival(r, 0, "Step Med (ns)"), ival(r, 0, "Step P95 (ns)"));
	ck_assert_int_eq(ival(r, 0, "Communication (ns)"), 0);
	ck_assert_int_eq(ival(r, 0, "GPU Busy (ns)") + ival(r, 0, "Idle (ns)"), ival(r, 0, "Window (ns)"));
	ck_assert_str_eq(cap_cell(r, 0, "Process")->s, "rank 0 \u00b7 node-a \u00b7 GPU 0 (GPU-e465080f)");
	cap_destroy(&c->sink);

	/* rank 1 alone, as --rank shows it: the same row */
	r = run_report(job, "1", "rank_sum", &c);
	ck_assert_int_eq(r->nrows, 1);
	ck_assert_int_eq(ival(r, 0, "Rank"), 1);
	ck_assert_int_eq(ival(r, 0, "Steps"), 44);
	cap_destroy(&c->sink);
}
END_TEST

START_TEST(nccl_sum_by_kind_and_size_with_nccl_tests_bandwidths)
{
	const char *job = write_job();
	struct prof_peak peak = { .key = "p2p_bytes_per_s", .value = 400e9 };
	struct prof_error err = { 0 };
	struct cap_sink *c;
	struct cap_report *r;

	r = run_report(job, NULL, "nccl_sum", &c);
	/* AllReduce x2 ranks, SendRecv x2, AllGather x2 */
	ck_assert_int_eq(r->nrows, 6);
	ck_assert_str_eq(cap_cell(r, 0, "Kind")->s, "AllReduce");
	ck_assert_str_eq(cap_cell(r, 0, "Message Size")->s, "64 KiB-1 MiB");
	ck_assert_int_eq(ival(r, 0, "Rank"), 0);
	ck_assert_int_eq(ival(r, 0, "Calls"), 1);
	ck_assert_int_eq(ival(r, 0, "Bytes"), 1 << 20);
	ck_assert_int_eq(ival(r, 0, "Med (ns)"), 1000);
	ck_assert_int_eq(ival(r, 0, "Ranks"), 2);
	/* algbw = bytes / time; all-reduce of 2 ranks: busbw = algbw * 2(2-1)/2 */
	ck_assert(fabs(dval(r, 0, "Alg BW (GB/s)") - 1048576.0 / 1000) < 1e-9);
	ck_assert(fabs(dval(r, 0, "Bus BW (GB/s)") - 1048576.0 / 1000) < 1e-9);
	/* rank 0 arrived 600 ns before rank 1 and waited that long in its
	 * 1000 ns kernel: the transfer took 400 ns on both */
	ck_assert_int_eq(ival(r, 0, "Wait (ns)"), 600);
	ck_assert(fabs(dval(r, 0, "Xfer Bus BW (GB/s)") - 1048576.0 / 400) < 1e-9);
	ck_assert_int_eq(ival(r, 1, "Wait (ns)"), 0);
	ck_assert(fabs(dval(r, 1, "Xfer Bus BW (GB/s)") - 1048576.0 / 400) < 1e-9);
	ck_assert_str_eq(cap_cell(r, 0, "Kernel Variant")->s, "RING LL");
	ck_assert_str_eq(cap_cell(r, 0, "Type")->s, "f32");
	ck_assert(cap_cell(r, 0, "Link BW (GB/s)")->is_null);
	ck_assert_int_eq(ival(r, 1, "Med (ns)"), 400);
	ck_assert_str_eq(cap_cell(r, 2, "Kind")->s, "AllGather");
	ck_assert_str_eq(cap_cell(r, 2, "Message Size")->s, "unknown");
	ck_assert(cap_cell(r, 2, "Bytes")->is_null);
	ck_assert(cap_cell(r, 2, "Bus BW (GB/s)")->is_null);
	ck_assert_str_eq(cap_cell(r, 4, "Kind")->s, "SendRecv");
	ck_assert_str_eq(cap_cell(r, 4, "Message Size")->s, "<= 4 KiB");
	ck_assert_int_eq(ival(r, 4, "Bytes"), 4096);
	ck_assert(fabs(dval(r, 5, "Bus BW (GB/s)") - 4096.0 / 400) < 1e-9);
	ck_assert_int_eq(cap_note_count(r, "sizes_unknown"), 2);
	ck_assert_int_eq(cap_note_count(r, "link_unmeasured"), 6);
	cap_destroy(&c->sink);

	/* with the link's bandwidth from `perfkit peaks` */
	ck_assert_msg(prof_analysis__store_peaks(job, &peak, 1, &err) == 0, "%s", err.msg);
	r = run_report(job, "1", "nccl_sum", &c);
	ck_assert_int_eq(r->nrows, 3);
	ck_assert_int_eq(ival(r, 0, "Rank"), 1);
	ck_assert(fabs(dval(r, 0, "Link BW (GB/s)") - 400) < 1e-9);
	ck_assert(fabs(dval(r, 0, "Bus/Link (%)") - 100.0 * (1048576.0 / 400) / 400) < 1e-9);
	ck_assert_int_eq(cap_note_count(r, "link_unmeasured"), 0);
	/* one rank of each collective: its waits are not known */
	ck_assert(cap_cell(r, 0, "Wait (ns)")->is_null);
	ck_assert_int_eq(cap_note_count(r, "waits_unknown"), 3);
	cap_destroy(&c->sink);
}
END_TEST

START_TEST(rank_reports_of_capture_without_ranks_or_nccl)
{
	struct cap_sink *c;
	struct cap_report *r = run_report(testutil_data_path("torch_train.sqlite"), NULL, "nccl_sum", &c);

	ck_assert_int_eq(r->nrows, 0);
	ck_assert(r->ended);
	cap_destroy(&c->sink);
	r = run_report(testutil_data_path("torch_train.sqlite"), NULL, "rank_sum", &c);
	ck_assert_int_eq(r->nrows, 1);
	ck_assert_int_eq(ival(r, 0, "Communication (ns)"), 0);
	ck_assert_int_gt(ival(r, 0, "Steps"), 0);
	cap_destroy(&c->sink);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("rank_reports");
	TCase *tc = tcase_create("reports");

	tcase_add_test(tc, intervals_overlap_counts_time_both_cover);
	tcase_add_test(tc, percentile_by_nearest_rank);
	tcase_add_test(tc, rank_sum_splits_each_rank_into_compute_communication_and_idle);
	tcase_add_test(tc, rank_sum_steps_are_each_ranks_own_loop);
	tcase_add_test(tc, nccl_sum_by_kind_and_size_with_nccl_tests_bandwidths);
	tcase_add_test(tc, rank_reports_of_capture_without_ranks_or_nccl);
	suite_add_tcase(s, tc);
	return testutil_run(s);
}
