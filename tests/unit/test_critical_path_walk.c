/* test_critical_path_walk.c - the critical path walk over one step's work,
 * calls and stream waits given as values: which chain it follows (launch,
 * synchronisation, blocking copy, stream order, an event wait between
 * streams), where it stops (work an earlier step queued), and that its
 * segments tile the step. The capture side is
 * checked on real captures by tests/cli/test_gpu_idle_captures.sh. */
#include <check.h>
#include <string.h>

#include "analysis/timeline/critical_path.h"
#include "testutil.h"

#define TID 0x1000001LL
#define PID 0x1000000LL

static struct gpu_work kernel(int64_t stream, int64_t start, int64_t end, int64_t l0, int64_t l1)
{
	return (struct gpu_work){ .start_ns = start, .end_ns = end, .device_id = 0, .stream_id = stream,
				  .pid = PID, .kind = GPU_WORK_KERNEL, .has_launch = true,
				  .launch_start_ns = l0, .launch_end_ns = l1, .launch_tid = TID };
}

static struct cp_call call(int64_t start, int64_t end, enum api_kind kind, bool waits)
{
	return (struct cp_call){ .start_ns = start, .end_ns = end, .tid = TID, .pid = PID, .kind = kind,
				 .waits_for_gpu = waits, .sync_stream = -1 };
}

/* Walks and checks the path tiles [from, to) without gaps or overlaps. */
static void walk(struct cp_data *d, struct cp_anchor a, int64_t from, int64_t to, struct cp_path *p)
{
	ck_assert_int_eq(cp_data__index(d), 0);
	ck_assert_int_eq(critical_path__walk(d, &a, from, p), 0);
	ck_assert_int_gt(p->nseg, 0);
	ck_assert_int_eq(p->seg[0].start_ns, from);
	for (int i = 1; i < p->nseg; i++)
		ck_assert_int_eq(p->seg[i].start_ns, p->seg[i - 1].end_ns);
	ck_assert_int_eq(p->seg[p->nseg - 1].end_ns, to);
}

static void expect(const struct cp_path *p, int i, int64_t start, int64_t end, enum cp_kind kind)
{
	ck_assert_int_lt(i, p->nseg);
	ck_assert_int_eq(p->seg[i].start_ns, start);
	ck_assert_int_eq(p->seg[i].end_ns, end);
	ck_assert_int_eq(p->seg[i].kind, kind);
}

START_TEST(critical_path_of_a_synchronised_step_runs_launch_kernel_sync)
{
	/* host work, a launch, the kernel, and the sync that waits for it */
	struct gpu_work work[] = { kernel(7, 115, 500, 100, 110) };
	struct cp_call calls[] = { call(100, 110, API_LAUNCH, false), call(110, 505, API_SYNC, true) };
	struct cp_data d = { .work = work, .nwork = 1, .calls = calls, .ncalls = 2 };
	struct cp_path p;

	walk(&d, (struct cp_anchor){ .tid = TID, .at_ns = 505 }, 0, 505, &p);
	ck_assert_int_eq(p.nseg, 5);
	expect(&p, 0, 0, 100, CP_HOST_WORK);
	expect(&p, 1, 100, 110, CP_CALL);
	ck_assert_int_eq(p.seg[1].ref, 0);
	expect(&p, 2, 110, 115, CP_LAUNCH_LATENCY);
	expect(&p, 3, 115, 500, CP_GPU);
	expect(&p, 4, 500, 505, CP_CALL);
	ck_assert_int_eq(p.seg[4].ref, 1);
	ck_assert_int_eq(p.edges[CP_EDGE_LAUNCH], 1);
	ck_assert_int_eq(p.edges[CP_EDGE_SYNC], 1);
	cp_path__exit(&p);
	cp_data__exit(&d);
}
END_TEST

START_TEST(critical_path_goes_through_a_blocking_pageable_copy)
{
	/* cudaMemcpy over [50, 400): it stages the data, its own copy runs
	 * [300, 390); then the host works until 450 */
	struct gpu_work work[] = { { .start_ns = 300, .end_ns = 390, .stream_id = 7, .pid = PID,
				     .kind = GPU_WORK_COPY, .has_launch = true, .launch_start_ns = 50,
				     .launch_end_ns = 400, .launch_tid = TID } };
	struct cp_call calls[] = { call(50, 400, API_COPY, false) };
	struct cp_data d = { .work = work, .nwork = 1, .calls = calls, .ncalls = 1 };
	struct cp_path p;

	walk(&d, (struct cp_anchor){ .tid = TID, .at_ns = 450 }, 0, 450, &p);
	ck_assert_int_eq(p.nseg, 5);
	expect(&p, 0, 0, 50, CP_HOST_WORK);
	expect(&p, 1, 50, 300, CP_CALL); /* the host side: staging */
	expect(&p, 2, 300, 390, CP_GPU);
	expect(&p, 3, 390, 400, CP_CALL);
	expect(&p, 4, 400, 450, CP_HOST_WORK);
	ck_assert_int_eq(p.edges[CP_EDGE_COPY], 1);
	cp_path__exit(&p);
	cp_data__exit(&d);
}
END_TEST

START_TEST(critical_path_of_a_busy_stream_follows_stream_order)
{
	/* three kernels queued well before the step, back to back */
	struct gpu_work work[] = {
		kernel(7, -50, 100, -900, -890), kernel(7, 102, 300, -880, -870), kernel(7, 305, 600, -860, -850),
	};
	struct cp_data d = { .work = work, .nwork = 3, .own_from_ns = INT64_MIN };
	struct cp_path p;

	walk(&d, (struct cp_anchor){ .on_gpu = true, .work = 2 }, 0, 600, &p);
	ck_assert_int_eq(p.nseg, 5);
	expect(&p, 0, 0, 100, CP_GPU); /* started before the step: clipped */
	expect(&p, 1, 100, 102, CP_STREAM_GAP);
	expect(&p, 2, 102, 300, CP_GPU);
	expect(&p, 3, 300, 305, CP_STREAM_GAP);
	expect(&p, 4, 305, 600, CP_GPU);
	ck_assert_int_eq(p.edges[CP_EDGE_STREAM], 2);
	ck_assert_int_eq(p.edges[CP_EDGE_LAUNCH], 0);
	cp_path__exit(&p);
	cp_data__exit(&d);
}
END_TEST

START_TEST(critical_path_crosses_streams_where_a_stream_waited_on_an_event)
{
	/* stream 13 produces [0, 100); stream 14 was told to wait on an event
	 * (cudaStreamWaitEvent at -20) before its kernel was launched at -10:
	 * the kernel starts at 110, after the producer */
	struct gpu_work work[] = { kernel(13, 0, 100, -40, -30), kernel(14, 110, 200, -10, -5) };
	struct cp_wait waits[] = { { PID, 0, 14, -20 } };
	struct cp_data d = { .work = work, .nwork = 2, .waits = waits, .nwaits = 1, .own_from_ns = INT64_MIN };
	struct cp_path p;

	walk(&d, (struct cp_anchor){ .on_gpu = true, .work = 1 }, 0, 200, &p);
	ck_assert_int_eq(p.nseg, 3);
	expect(&p, 0, 0, 100, CP_GPU);
	ck_assert_int_eq(p.seg[0].ref, 0);
	expect(&p, 1, 100, 110, CP_EVENT_WAIT);
	ck_assert_int_eq(p.seg[1].ref, 0);
	expect(&p, 2, 110, 200, CP_GPU);
	ck_assert_int_eq(p.edges[CP_EDGE_EVENT], 1);
	cp_path__exit(&p);
	cp_data__exit(&d);
}
END_TEST

START_TEST(critical_path_ignores_other_streams_without_a_wait)
{
	/* the same timeline without the wait: the kernel on stream 14 is not
	 * tied to stream 13, it was queued before the step */
	struct gpu_work work[] = { kernel(13, 0, 100, -40, -30), kernel(14, 110, 200, -10, -5) };
	struct cp_data d = { .work = work, .nwork = 2, .own_from_ns = INT64_MIN };
	struct cp_path p;

	walk(&d, (struct cp_anchor){ .on_gpu = true, .work = 1 }, 0, 200, &p);
	ck_assert_int_eq(p.nseg, 2);
	expect(&p, 0, 0, 110, CP_QUEUED);
	expect(&p, 1, 110, 200, CP_GPU);
	ck_assert_int_eq(p.edges[CP_EDGE_EVENT], 0);
	cp_path__exit(&p);
	cp_data__exit(&d);
}
END_TEST

START_TEST(critical_path_stops_at_work_an_earlier_step_launched)
{
	/* an NVTX step from 0: the kernel an earlier step launched (at -100)
	 * runs until 150, the step's own (launched at 10) follows it on the
	 * stream. Before its own work the step waited on a backlog, queued
	 * before it, whose chain is the earlier steps' */
	struct gpu_work work[] = { kernel(7, -50, 150, -100, -90), kernel(7, 160, 300, 10, 20) };
	struct cp_data d = { .work = work, .nwork = 2, .own_from_ns = 0 };
	struct cp_path p;

	walk(&d, (struct cp_anchor){ .on_gpu = true, .work = 1 }, 0, 300, &p);
	ck_assert_int_eq(p.nseg, 3);
	expect(&p, 0, 0, 150, CP_QUEUED);
	expect(&p, 1, 150, 160, CP_STREAM_GAP);
	expect(&p, 2, 160, 300, CP_GPU);
	cp_path__exit(&p);
	cp_data__exit(&d);
}
END_TEST

START_TEST(critical_path_of_a_step_behind_the_gpu_starts_with_the_wait_on_the_previous_step)
{
	/* the host ran ahead: the step's range began at 0, but the GPU worked
	 * on the previous step's last kernel (stream 13, launched at -40) until
	 * 150, where the step's span starts. Its own kernel on stream 14,
	 * whose stream waited on an event (at 5) after that kernel, starts at
	 * 152: the first 2 ns are the hand-off between the steps, no backlog */
	struct gpu_work work[] = { kernel(13, 60, 150, -40, -30), kernel(14, 152, 300, 10, 20) };
	struct cp_wait waits[] = { { PID, 0, 14, 5 } };
	struct cp_data d = { .work = work, .nwork = 2, .waits = waits, .nwaits = 1, .own_from_ns = 0 };
	struct cp_path p;

	walk(&d, (struct cp_anchor){ .on_gpu = true, .work = 1 }, 150, 300, &p);
	ck_assert_int_eq(p.nseg, 2);
	expect(&p, 0, 150, 152, CP_EVENT_WAIT);
	ck_assert_int_eq(p.seg[0].ref, 0);
	expect(&p, 1, 152, 300, CP_GPU);
	ck_assert_int_eq(p.edges[CP_EDGE_EVENT], 1);
	cp_path__exit(&p);
	cp_data__exit(&d);
}
END_TEST

START_TEST(critical_path_of_a_kernel_step_ends_before_the_next_steps_launch)
{
	/* a kernel step [0, 400): its kernel, then the host launches the next
	 * step's marker kernel, which starts at 400 and is left out */
	struct gpu_work work[] = { kernel(7, 20, 250, 0, 10), kernel(7, 400, 700, 380, 390) };
	struct cp_call calls[] = { call(0, 10, API_LAUNCH, false), call(380, 390, API_LAUNCH, false) };
	struct cp_data d = { .work = work, .nwork = 2, .calls = calls, .ncalls = 2 };
	struct cp_path p;

	walk(&d, (struct cp_anchor){ .on_gpu = true, .work = 1, .before_work = true }, 0, 400, &p);
	expect(&p, p.nseg - 1, 390, 400, CP_LAUNCH_LATENCY);
	expect(&p, p.nseg - 2, 380, 390, CP_CALL);
	expect(&p, p.nseg - 3, 10, 380, CP_HOST_WORK);
	for (int i = 0; i < p.nseg; i++)
		ck_assert_int_ne(p.seg[i].kind == CP_GPU && p.seg[i].ref == 1, 1);
	cp_path__exit(&p);
	cp_data__exit(&d);
}
END_TEST

START_TEST(critical_path_stops_on_data_that_does_not_move)
{
	/* zero-length work at one instant, synchronised by a call that ends
	 * there: the walk must end and still tile the step */
	struct gpu_work work[] = { kernel(7, 50, 50, 40, 60), kernel(7, 50, 50, 45, 60) };
	struct cp_call calls[] = { call(40, 60, API_SYNC, true), call(45, 60, API_SYNC, true) };
	struct cp_data d = { .work = work, .nwork = 2, .calls = calls, .ncalls = 2 };
	struct cp_path p;

	walk(&d, (struct cp_anchor){ .tid = TID, .at_ns = 60 }, 0, 60, &p);
	cp_path__exit(&p);
	cp_data__exit(&d);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("critical_path_walk");
	TCase *tc = tcase_create("walk");

	tcase_add_test(tc, critical_path_of_a_synchronised_step_runs_launch_kernel_sync);
	tcase_add_test(tc, critical_path_goes_through_a_blocking_pageable_copy);
	tcase_add_test(tc, critical_path_of_a_busy_stream_follows_stream_order);
	tcase_add_test(tc, critical_path_crosses_streams_where_a_stream_waited_on_an_event);
	tcase_add_test(tc, critical_path_ignores_other_streams_without_a_wait);
	tcase_add_test(tc, critical_path_stops_at_work_an_earlier_step_launched);
	tcase_add_test(tc, critical_path_of_a_step_behind_the_gpu_starts_with_the_wait_on_the_previous_step);
	tcase_add_test(tc, critical_path_of_a_kernel_step_ends_before_the_next_steps_launch);
	tcase_add_test(tc, critical_path_stops_on_data_that_does_not_move);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return testutil_run(suite());
}
