/* test_report_overview.c - the overview sections on stores written with
 * known values: GPU busy as a union of intervals, transfers split by host
 * memory kind, top-N limits, run metadata and the dropped-record warning. */
#include <check.h>

#include "report_capture.h"
#include "report_store.h"
#include "summary/summary.h"
#include "testutil.h"
#include "model/overview.h"

static struct cap_sink *overview(struct prof_store *s)
{
	struct cap_sink *c = cap_sink__new();
	struct prof_error err = { 0 };

	ck_assert_msg(summary__overview(s, &c->sink, &err) == 0, "overview: %s", err.msg);
	return c;
}

static const char *item(const struct cap_report *r, const char *key)
{
	for (int i = 0; i < r->nrows; i++)
		if (strcmp(cap_cell(r, i, "Item")->s, key) == 0)
			return cap_cell(r, i, "Value")->s;
	return NULL;
}

static void meta_span(struct prof_writer *w, const char *start, const char *dur)
{
	ck_assert_int_eq(prof_writer__meta(w, "start_ns", start), 0);
	ck_assert_int_eq(prof_writer__meta(w, "duration_ns", dur), 0);
}

START_TEST(overview_gpu_busy_counts_overlapping_work_once)
{
	struct prof_writer *w = store_new("busy.sqlite");
	struct cap_report *r;

	meta_span(w, "0", "1000");
	add_kernel(w, "k", 0, 100, 1, 1);                                   /* [0,100)   */
	add_copy(w, PROF_COPY_HTOD, PROF_MEM_PINNED, PROF_MEM_DEVICE, 10, 50, 150, 0); /* [50,150) */
	add_kernel(w, "k", 120, 140, 2, 1);                                 /* inside    */
	add_memset(w, 10, 300, 400, 0);                                     /* [300,400) */
	add_kernel(w, "k", 500, 600, 3, 1);      /* device 0 as well (add_kernel) */
	struct prof_store *s = store_finish(w);
	struct cap_sink *c = overview(s);

	r = cap_report(c, "overview_gpu_busy");
	ck_assert_ptr_nonnull(r);
	ck_assert_int_eq(r->nrows, 1);
	/* union: [0,150) + [300,400) + [500,600) = 350 of 1000 */
	ck_assert_int_eq(cap_cell(r, 0, "Busy Time (ns)")->i, 150 + 100 + 100);
	ck_assert_double_eq_tol(cap_cell(r, 0, "Busy (%)")->d, 35.0, 1e-9);
	ck_assert_int_eq(cap_cell(r, 0, "Span (ns)")->i, 1000);
	c->sink.destroy(&c->sink);
	prof_store__close(s);
}
END_TEST

START_TEST(overview_gpu_busy_is_per_device_and_clipped_to_the_capture)
{
	struct prof_writer *w = store_new("busy2.sqlite");
	struct cap_report *r;

	meta_span(w, "1000", "1000");
	add_copy(w, PROF_COPY_HTOD, PROF_MEM_PINNED, PROF_MEM_DEVICE, 10, 900, 1100, 0);
	add_copy(w, PROF_COPY_HTOD, PROF_MEM_PINNED, PROF_MEM_DEVICE, 10, 1000, 1500, 1);
	add_copy(w, PROF_COPY_HTOD, PROF_MEM_PINNED, PROF_MEM_DEVICE, 10, 1900, 2500, 1);
	struct prof_store *s = store_finish(w);
	struct cap_sink *c = overview(s);

	r = cap_report(c, "overview_gpu_busy");
	ck_assert_int_eq(r->nrows, 2);
	ck_assert_int_eq(cap_cell(r, 0, "Device")->i, 0);
	ck_assert_int_eq(cap_cell(r, 0, "Busy Time (ns)")->i, 100);  /* [1000,1100) */
	ck_assert_int_eq(cap_cell(r, 1, "Device")->i, 1);
	ck_assert_int_eq(cap_cell(r, 1, "Busy Time (ns)")->i, 500 + 100);
	ck_assert_double_eq_tol(cap_cell(r, 1, "Busy (%)")->d, 60.0, 1e-9);
	c->sink.destroy(&c->sink);
	prof_store__close(s);
}
END_TEST

START_TEST(overview_transfers_split_pageable_and_pinned_with_throughput)
{
	struct prof_writer *w = store_new("xfer.sqlite");
	struct cap_report *r;

	add_copy(w, PROF_COPY_HTOD, PROF_MEM_PAGEABLE, PROF_MEM_DEVICE, 3000000, 0, 3000, 0);
	add_copy(w, PROF_COPY_HTOD, PROF_MEM_PAGEABLE, PROF_MEM_DEVICE, 1000000, 4000, 5000, 0);
	add_copy(w, PROF_COPY_HTOD, PROF_MEM_PINNED, PROF_MEM_DEVICE, 2000000, 6000, 6100, 0);
	add_copy(w, PROF_COPY_DTOH, PROF_MEM_DEVICE, PROF_MEM_PINNED, 500000, 7000, 7050, 0);
	struct prof_store *s = store_finish(w);
	struct cap_sink *c = overview(s);

	r = cap_report(c, "overview_transfers");
	ck_assert_int_eq(r->nrows, 3);
	ck_assert_str_eq(cap_cell(r, 0, "Direction")->s, "Host-to-Device");
	ck_assert_str_eq(cap_cell(r, 0, "Host Memory")->s, "Pageable");
	ck_assert_int_eq(cap_cell(r, 0, "Count")->i, 2);
	ck_assert_double_eq_tol(cap_cell(r, 0, "Total (MB)")->d, 4.0, 1e-12);
	ck_assert_int_eq(cap_cell(r, 0, "Total Time (ns)")->i, 4000);
	/* 4e6 bytes in 4000 ns = 1000 bytes/ns = 1000 GB/s */
	ck_assert_double_eq_tol(cap_cell(r, 0, "Throughput (GB/s)")->d, 4e6 / 4000, 1e-9);
	ck_assert_str_eq(cap_cell(r, 1, "Host Memory")->s, "Pinned");
	ck_assert_double_eq_tol(cap_cell(r, 1, "Throughput (GB/s)")->d, 2e6 / 100, 1e-9);
	ck_assert_str_eq(cap_cell(r, 2, "Direction")->s, "Device-to-Host");
	ck_assert_str_eq(cap_cell(r, 2, "Host Memory")->s, "Pinned");
	c->sink.destroy(&c->sink);
	prof_store__close(s);
}
END_TEST

START_TEST(overview_top_kernels_shows_the_five_longest)
{
	struct prof_writer *w = store_new("top.sqlite");
	static const char *const names[] = { "k1", "k2", "k3", "k4", "k5", "k6", "k7" };
	struct cap_report *r;

	for (int i = 0; i < 7; i++)
		add_kernel(w, names[i], i * 1000, i * 1000 + 10 * (i + 1), i + 1, 1);
	struct prof_store *s = store_finish(w);
	struct cap_sink *c = overview(s);

	r = cap_report(c, "overview_top_kernels");
	ck_assert_int_eq(r->nrows, SUMMARY_OVERVIEW_TOP);
	ck_assert_str_eq(cap_cell(r, 0, "Name")->s, "k7");
	ck_assert_str_eq(cap_cell(r, 4, "Name")->s, "k3");
	/* Percent of all kernel time, not of the five shown. */
	ck_assert_double_eq_tol(cap_cell(r, 0, "Time (%)")->d, 100.0 * 70 / 280, 1e-9);
	c->sink.destroy(&c->sink);
	prof_store__close(s);
}
END_TEST

START_TEST(overview_run_section_shows_metadata)
{
	struct prof_writer *w = store_new("meta.sqlite");
	struct cap_report *r;

	ck_assert_int_eq(prof_writer__meta(w, "command", "./train --epochs=3"), 0);
	ck_assert_int_eq(prof_writer__meta(w, "host", "node7"), 0);
	ck_assert_int_eq(prof_writer__meta(w, "gpu", "NVIDIA H100"), 0);
	ck_assert_int_eq(prof_writer__meta(w, "exit_status", "3"), 0);
	meta_span(w, "0", "2500");
	struct prof_store *s = store_finish(w);
	struct cap_sink *c = overview(s);

	r = cap_report(c, "overview_run");
	ck_assert_str_eq(item(r, "Command"), "./train --epochs=3");
	ck_assert_str_eq(item(r, "Host"), "node7");
	ck_assert_str_eq(item(r, "GPU"), "NVIDIA H100");
	ck_assert_str_eq(item(r, "Exit status"), "3");
	ck_assert_str_eq(item(r, "Duration (ns)"), "2500");
	ck_assert_str_eq(item(r, "Start"), "1970-01-01 00:00:00 UTC");
	ck_assert_str_eq(item(r, "Dropped records"), "0");
	ck_assert_ptr_null(cap_report(c, "overview_warnings"));
	c->sink.destroy(&c->sink);
	prof_store__close(s);
}
END_TEST

START_TEST(overview_warns_about_dropped_records)
{
	struct prof_writer *w = store_new("dropped.sqlite");
	struct cap_report *r;

	ck_assert_int_eq(prof_writer__count(w, "dropped_records", 40), 0);
	ck_assert_int_eq(prof_writer__count(w, "dropped_records", 2), 0);
	struct prof_store *s = store_finish(w);
	struct cap_sink *c = overview(s);

	r = cap_report(c, "overview_warnings");
	ck_assert_ptr_nonnull(r);
	ck_assert_int_eq(r->nrows, 1);
	ck_assert_ptr_nonnull(strstr(cap_cell(r, 0, "Warning")->s, "42 activity records"));
	ck_assert_str_eq(item(cap_report(c, "overview_run"), "Dropped records"), "42");
	c->sink.destroy(&c->sink);
	prof_store__close(s);
}
END_TEST

START_TEST(overview_top_ranges_lists_nvtx_ranges_by_total)
{
	struct prof_writer *w = store_new("ranges.sqlite");
	int64_t tid = prof_global_tid(1, 1);
	struct cap_report *r;

	add_range(w, PROF_NVTX_PUSHPOP, "short", 0, 10, tid);
	add_range(w, PROF_NVTX_PUSHPOP, "long", 20, 1020, tid);
	struct prof_store *s = store_finish(w);
	struct cap_sink *c = overview(s);

	r = cap_report(c, "overview_top_ranges");
	ck_assert_int_eq(r->nrows, 2);
	ck_assert_str_eq(cap_cell(r, 0, "Range")->s, "long");
	ck_assert_str_eq(cap_cell(r, 1, "Range")->s, "short");
	c->sink.destroy(&c->sink);
	prof_store__close(s);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("report_overview");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, overview_gpu_busy_counts_overlapping_work_once);
	tcase_add_test(tc, overview_gpu_busy_is_per_device_and_clipped_to_the_capture);
	tcase_add_test(tc, overview_transfers_split_pageable_and_pinned_with_throughput);
	tcase_add_test(tc, overview_top_kernels_shows_the_five_longest);
	tcase_add_test(tc, overview_run_section_shows_metadata);
	tcase_add_test(tc, overview_warns_about_dropped_records);
	tcase_add_test(tc, overview_top_ranges_lists_nvtx_ranges_by_total);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return testutil_run(suite());
}
