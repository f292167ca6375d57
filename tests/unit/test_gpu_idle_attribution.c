/* test_gpu_idle_attribution.c - the pure part of the idle-time attribution:
 * how one idle stretch splits among causes given the call that launched
 * the work ending it and what the submitting thread did before, and how
 * CUDA calls are classified by name. Values, not captures: the capture side
 * is checked on real captures by tests/cli/test_gpu_idle_captures.sh. */
#include <check.h>
#include <stdlib.h>

#include "analysis/timeline/gpu_idle.h"
#include "testutil.h"

static int64_t total(const int64_t *by)
{
	int64_t sum = 0;

	for (int c = 0; c < IDLE_NCAUSES; c++)
		sum += by[c];
	return sum;
}

/* A stretch [start, end) ended by work its thread launched with a call of
 * `kind` over [l0, l1). */
static struct idle_stretch launched(int64_t start, int64_t end, int64_t l0, int64_t l1, enum api_kind kind)
{
	return (struct idle_stretch){ .start_ns = start, .end_ns = end, .has_launch = true,
				      .launch_start_ns = l0, .launch_end_ns = l1, .launch_kind = kind };
}

START_TEST(idle_host_sleep_between_kernels_is_host_work)
{
	/* kernel ends at 0; the sync returns 10 ns later; the host sleeps;
	 * it launches the next kernel at 2050, which starts at 2100 */
	struct idle_host_call calls[] = { { -400, 10, API_SYNC } };
	struct idle_stretch s = launched(0, 2100, 2050, 2060, API_LAUNCH);
	int64_t by[IDLE_NCAUSES];

	idle__attribute(&s, calls, 1, NULL, by, NULL);
	ck_assert_int_eq(by[IDLE_HOST_SYNC], 10);
	ck_assert_int_eq(by[IDLE_HOST_WORK], 2040);
	ck_assert_int_eq(by[IDLE_LAUNCH], 50);
	ck_assert_int_eq(idle__dominant(by), IDLE_HOST_WORK);
	ck_assert_int_eq(total(by), 2100);
}
END_TEST

START_TEST(idle_calls_before_the_launch_go_to_their_kind)
{
	struct idle_host_call calls[] = {
		{ 100, 300, API_ALLOC },  /* cudaFree */
		{ 350, 400, API_OTHER },  /* cudaGetDevice */
		{ 400, 420, API_LAUNCH }, /* a launch of other work: not the one ending the stretch */
		{ 900, 990, API_COPY },   /* starts after the launch: not counted */
	};
	struct idle_stretch s = launched(0, 1000, 500, 510, API_LAUNCH);
	int64_t by[IDLE_NCAUSES], call_ns[4];
	int best = idle__attribute(&s, calls, 4, call_ns, by, NULL);

	ck_assert_int_eq(by[IDLE_HOST_ALLOC], 200);
	ck_assert_int_eq(by[IDLE_HOST_API], 50 + 20);
	ck_assert_int_eq(by[IDLE_HOST_WORK], 100 + 50 + 80);
	ck_assert_int_eq(by[IDLE_HOST_COPY], 0);
	ck_assert_int_eq(by[IDLE_LAUNCH], 500);
	ck_assert_int_eq(best, 0);
	ck_assert_int_eq(call_ns[0], 200);
	ck_assert_int_eq(call_ns[3], 0);
	ck_assert_int_eq(total(by), 1000);
}
END_TEST

START_TEST(idle_overlapping_calls_count_once)
{
	/* a driver call inside a runtime call's time: the time goes to the
	 * call that started first */
	struct idle_host_call calls[] = { { 10, 50, API_ALLOC }, { 20, 60, API_SYNC } };
	struct idle_stretch s = launched(0, 100, 80, 90, API_LAUNCH);
	int64_t by[IDLE_NCAUSES];

	idle__attribute(&s, calls, 2, NULL, by, NULL);
	ck_assert_int_eq(by[IDLE_HOST_ALLOC], 40);
	ck_assert_int_eq(by[IDLE_HOST_SYNC], 10);
	ck_assert_int_eq(by[IDLE_HOST_WORK], 10 + 20);
	ck_assert_int_eq(total(by), 100);
}
END_TEST

START_TEST(idle_ended_by_a_blocking_copy_waits_on_the_copy)
{
	/* cudaMemcpy from pageable memory: the call stages the data, then its
	 * own copy starts on the GPU */
	struct idle_stretch s = launched(0, 1000, 100, 1200, API_COPY);
	int64_t by[IDLE_NCAUSES];

	idle__attribute(&s, NULL, 0, NULL, by, NULL);
	ck_assert_int_eq(by[IDLE_HOST_WORK], 100);
	ck_assert_int_eq(by[IDLE_HOST_COPY], 900);
	ck_assert_int_eq(idle__dominant(by), IDLE_HOST_COPY);
}
END_TEST

START_TEST(idle_queued_work_behind_an_event_wait_is_a_stream_wait)
{
	struct idle_stretch s = launched(0, 700, -500, -490, API_LAUNCH);
	int64_t by[IDLE_NCAUSES];

	s.stream_waited = true;
	idle__attribute(&s, NULL, 0, NULL, by, NULL);
	ck_assert_int_eq(by[IDLE_STREAM_WAIT], 700);
	ck_assert_int_eq(total(by), 700);
}
END_TEST

START_TEST(idle_queued_work_without_a_wait_is_queued_after_its_call)
{
	/* launched before the GPU fell idle, the call still running at first */
	struct idle_stretch s = launched(0, 1000, -100, 300, API_LAUNCH);
	int64_t by[IDLE_NCAUSES];

	idle__attribute(&s, NULL, 0, NULL, by, NULL);
	ck_assert_int_eq(by[IDLE_LAUNCH], 300);
	ck_assert_int_eq(by[IDLE_QUEUED], 700);
	ck_assert_int_eq(by[IDLE_STREAM_WAIT], 0);
}
END_TEST

START_TEST(idle_without_a_launching_call_is_unknown)
{
	struct idle_stretch s = { .start_ns = 5, .end_ns = 50 };
	int64_t by[IDLE_NCAUSES];

	ck_assert_int_eq(idle__attribute(&s, NULL, 0, NULL, by, NULL), -1);
	ck_assert_int_eq(by[IDLE_UNKNOWN], 45);
	ck_assert_int_eq(total(by), 45);
}
END_TEST

/* Whatever the calls, every nanosecond of the stretch goes to exactly one
 * cause: stretches and calls from a fixed pseudo-random sequence. */
START_TEST(idle_causes_always_sum_to_the_stretch)
{
	unsigned seed = 12345;

	for (int round = 0; round < 2000; round++) {
		struct idle_host_call calls[8];
		int64_t by[IDLE_NCAUSES], start = rand_r(&seed) % 1000, len = 1 + rand_r(&seed) % 5000;
		int n = rand_r(&seed) % 8;
		int64_t at = start - 500;
		struct idle_stretch s = launched(start, start + len, start - 300 + rand_r(&seed) % (len + 600),
						 0, (enum api_kind)(rand_r(&seed) % 5));

		s.launch_end_ns = s.launch_start_ns + rand_r(&seed) % 400;
		s.stream_waited = rand_r(&seed) % 2;
		s.has_launch = rand_r(&seed) % 8 != 0;
		for (int i = 0; i < n; i++) { /* sorted by start, may overlap */
			at += rand_r(&seed) % 900;
			calls[i] = (struct idle_host_call){ at, at + rand_r(&seed) % 1200,
							    (enum api_kind)(rand_r(&seed) % 5) };
		}
		idle__attribute(&s, calls, n, NULL, by, NULL);
		for (int c = 0; c < IDLE_NCAUSES; c++)
			ck_assert_int_ge(by[c], 0);
		ck_assert_int_eq(total(by), len);
	}
}
END_TEST

/* One synchronisation, then 2 ms of the host's own work: the idle time is
 * the host's, the call is charged only the time the host was blocked in it. */
START_TEST(idle_sync_then_long_host_work_is_charged_to_the_host)
{
	struct idle_host_call calls[] = { { -400, 10, API_SYNC } };
	struct idle_stretch s = launched(0, 2100, 2050, 2060, API_LAUNCH);
	struct idle_sync_part sync;
	int64_t by[IDLE_NCAUSES];

	idle__attribute(&s, calls, 1, NULL, by, &sync);
	ck_assert_int_eq(sync.sync_call, 0);
	ck_assert_int_eq(sync.after_sync_ns, 2040);
	ck_assert_int_eq(idle__sync_claim(by, &sync), 10);
}
END_TEST

/* The host goes from the synchronisation straight on to CUDA calls: the gap
 * up to its next call is the synchronisation's too, later gaps are not. */
START_TEST(idle_sync_then_cuda_calls_is_charged_to_the_sync)
{
	struct idle_host_call calls[] = { { -400, 10, API_SYNC }, { 15, 25, API_OTHER } };
	struct idle_stretch s = launched(0, 60, 30, 40, API_LAUNCH);
	struct idle_sync_part sync;
	int64_t by[IDLE_NCAUSES];

	idle__attribute(&s, calls, 2, NULL, by, &sync);
	ck_assert_int_eq(by[IDLE_HOST_WORK], 5 + 5);
	ck_assert_int_eq(sync.after_sync_ns, 5);
	ck_assert_int_eq(idle__sync_claim(by, &sync), 10 + 5);
}
END_TEST

START_TEST(idle_without_a_sync_charges_no_sync)
{
	/* an allocation before the launch; work queued before the stretch */
	struct idle_host_call calls[] = { { 10, 300, API_ALLOC } };
	struct idle_stretch s[] = { launched(0, 500, 400, 410, API_LAUNCH),
				    launched(0, 1000, -100, 300, API_LAUNCH) };

	for (int i = 0; i < 2; i++) {
		struct idle_sync_part sync;
		int64_t by[IDLE_NCAUSES];

		idle__attribute(&s[i], calls, 1, NULL, by, &sync);
		ck_assert_int_eq(sync.sync_call, -1);
		ck_assert_int_eq(idle__sync_claim(by, &sync), 0);
	}
}
END_TEST

START_TEST(idle_api_calls_are_classified_by_name)
{
	ck_assert_int_eq(api_kind__of("cudaLaunchKernel_v7000"), API_LAUNCH);
	ck_assert_int_eq(api_kind__of("__cudaLaunchKernel_v13000"), API_LAUNCH);
	ck_assert_int_eq(api_kind__of("cuLaunchKernelEx"), API_LAUNCH);
	ck_assert_int_eq(api_kind__of("cudaGraphLaunch_v10000"), API_LAUNCH);
	ck_assert_int_eq(api_kind__of("cudaStreamSynchronize_v3020"), API_SYNC);
	ck_assert_int_eq(api_kind__of("cuEventSynchronize"), API_SYNC);
	ck_assert_int_eq(api_kind__of("cudaMalloc_v3020"), API_ALLOC);
	ck_assert_int_eq(api_kind__of("cudaFreeHost_v3020"), API_ALLOC);
	ck_assert_int_eq(api_kind__of("cuMemAllocAsync"), API_ALLOC);
	ck_assert_int_eq(api_kind__of("cudaMemcpyAsync_v3020"), API_COPY);
	ck_assert_int_eq(api_kind__of("cuMemsetD32_v2"), API_COPY);
	ck_assert_int_eq(api_kind__of("cudaEventRecord_v3020"), API_OTHER);
	ck_assert_int_eq(api_kind__of("cuMemGetInfo_v2"), API_OTHER);
	ck_assert_int_eq(api_kind__of(NULL), API_OTHER);
}
END_TEST

START_TEST(idle_median_of_steps)
{
	int64_t odd[] = { 9, 1, 5 }, even[] = { 4, 1, 3, 10 };

	ck_assert_int_eq(idle__median(odd, 3), 5);
	ck_assert_int_eq(idle__median(even, 4), 3);
	ck_assert_int_eq(idle__median(NULL, 0), 0);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("gpu_idle_attribution");
	TCase *tc = tcase_create("stretch");

	tcase_add_test(tc, idle_host_sleep_between_kernels_is_host_work);
	tcase_add_test(tc, idle_calls_before_the_launch_go_to_their_kind);
	tcase_add_test(tc, idle_overlapping_calls_count_once);
	tcase_add_test(tc, idle_ended_by_a_blocking_copy_waits_on_the_copy);
	tcase_add_test(tc, idle_queued_work_behind_an_event_wait_is_a_stream_wait);
	tcase_add_test(tc, idle_queued_work_without_a_wait_is_queued_after_its_call);
	tcase_add_test(tc, idle_without_a_launching_call_is_unknown);
	tcase_add_test(tc, idle_causes_always_sum_to_the_stretch);
	tcase_add_test(tc, idle_sync_then_long_host_work_is_charged_to_the_host);
	tcase_add_test(tc, idle_sync_then_cuda_calls_is_charged_to_the_sync);
	tcase_add_test(tc, idle_without_a_sync_charges_no_sync);
	tcase_add_test(tc, idle_api_calls_are_classified_by_name);
	tcase_add_test(tc, idle_median_of_steps);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return testutil_run(suite());
}
