/* test_gemm_runs.c - runs of the same GEMM told apart by what the trace
 * shows: alternating with other kernels on one stream (a chain of layers),
 * on several streams at once (independent), or back to back on one stream
 * (either); and runs of one GEMM grouped across streams only where they
 * overlap in time on one device. */
#include <check.h>

#include "analysis/kernel_metrics/gemm_runs.h"
#include "testutil.h"

#define US 1000LL

/* A run on one stream: n launches of GEMM 11 (grid 8, block 128) from start,
 * each 5 us; `between` kernels of 3 us after each launch but the last. */
static struct gemm_run run(int64_t device, int64_t stream, int64_t start_ns, int n, int between)
{
	struct gemm_run r = {
		.name_id = 11, .grid = 8, .block = 128, .device = device, .stream = stream,
		.start_ns = start_ns, .launches = n, .kernel_ns = n * 5 * US, .streams = 1,
	};

	r.end_ns = start_ns + n * 5 * US + (n - 1) * between * 3 * US;
	if (between)
		r.interleaved = n - 1, r.others = (int64_t)(n - 1) * between;
	else
		r.adjacent = n - 1;
	return r;
}

START_TEST(gemm_run_alternating_with_other_kernels_is_a_chain)
{
	/* the MLP: GEMM, bias+ReLU, GEMM, bias+ReLU, ... (8 layers) */
	struct gemm_run r = run(0, 7, 0, 8, 1);

	ck_assert_int_eq(gemm_run__classify(&r), GEMM_RUN_CHAIN);
}
END_TEST

START_TEST(gemm_run_back_to_back_on_one_stream_is_unknown)
{
	/* 16 heads, one after the other: the trace cannot tell */
	struct gemm_run r = run(0, 7, 0, 16, 0);

	ck_assert_int_eq(gemm_run__classify(&r), GEMM_RUN_UNKNOWN);
}
END_TEST

START_TEST(gemm_run_mostly_back_to_back_stays_unknown)
{
	/* pairs of back-to-back products with one kernel between the pairs */
	struct gemm_run r = run(0, 7, 0, 8, 0);

	r.adjacent = 4, r.interleaved = 3, r.others = 3;
	ck_assert_int_eq(gemm_run__classify(&r), GEMM_RUN_UNKNOWN);
}
END_TEST

START_TEST(gemm_runs_overlapping_on_four_streams_are_one_independent_run)
{
	/* 16 GEMMs over 4 streams, 4 back to back on each, all at once */
	struct gemm_run r[4];
	int n;

	for (int s = 0; s < 4; s++)
		r[s] = run(0, 10 + s, s * US, 4, 0);
	n = gemm_runs__group(r, 4);
	ck_assert_int_eq(n, 1);
	ck_assert_int_eq(r[0].streams, 4);
	ck_assert_int_eq(r[0].launches, 16);
	ck_assert_int_eq(r[0].kernel_ns, 16 * 5 * US);
	ck_assert_int_eq(r[0].start_ns, 0);
	ck_assert_int_eq(r[0].end_ns, 3 * US + 20 * US);
	ck_assert_int_eq(gemm_run__classify(&r[0]), GEMM_RUN_INDEPENDENT);
}
END_TEST

START_TEST(gemm_runs_one_after_another_are_not_grouped)
{
	/* the same GEMM on two streams, the second starting after the first ended */
	struct gemm_run r[2] = { run(0, 10, 0, 4, 0), run(0, 11, 100 * US, 4, 0) };

	ck_assert_int_eq(gemm_runs__group(r, 2), 2);
	ck_assert_int_eq(r[0].streams, 1);
	ck_assert_int_eq(r[1].streams, 1);
	ck_assert_int_eq(gemm_run__classify(&r[0]), GEMM_RUN_UNKNOWN);
}
END_TEST

START_TEST(gemm_runs_on_two_devices_are_not_grouped)
{
	/* data parallel: each GPU runs its own chain at the same time */
	struct gemm_run r[2] = { run(0, 10, 0, 8, 1), run(1, 10, 0, 8, 1) };

	ck_assert_int_eq(gemm_runs__group(r, 2), 2);
	ck_assert_int_eq(gemm_run__classify(&r[0]), GEMM_RUN_CHAIN);
	ck_assert_int_eq(gemm_run__classify(&r[1]), GEMM_RUN_CHAIN);
}
END_TEST

START_TEST(gemm_runs_of_another_shape_are_not_grouped)
{
	struct gemm_run r[2] = { run(0, 10, 0, 4, 0), run(0, 11, 0, 4, 0) };

	r[1].grid = 16;
	ck_assert_int_eq(gemm_runs__group(r, 2), 2);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("gemm_runs");
	TCase *tc = tcase_create("classify");

	tcase_add_test(tc, gemm_run_alternating_with_other_kernels_is_a_chain);
	tcase_add_test(tc, gemm_run_back_to_back_on_one_stream_is_unknown);
	tcase_add_test(tc, gemm_run_mostly_back_to_back_stays_unknown);
	tcase_add_test(tc, gemm_runs_overlapping_on_four_streams_are_one_independent_run);
	tcase_add_test(tc, gemm_runs_one_after_another_are_not_grouped);
	tcase_add_test(tc, gemm_runs_on_two_devices_are_not_grouped);
	tcase_add_test(tc, gemm_runs_of_another_shape_are_not_grouped);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return testutil_run(suite());
}
