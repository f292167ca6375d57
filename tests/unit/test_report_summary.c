/* test_report_summary.c - the summary reports on small stores written with
 * known values: statistics, percentages, ordering, labels, NVTX attribution,
 * and stores that lack optional tables. */
#include <check.h>
#include <math.h>
#include <string.h>

#include "report_capture.h"
#include "report_store.h"
#include "registry/registry.h"
#include "summary/summary.h"
#include "testutil.h"
#include "prof/error.h"

#define TID(pid, tid) prof_global_tid((pid), (tid))

static struct cap_sink *run_report(struct prof_store *s, const char *name)
{
	struct cap_sink *c = cap_sink__new();
	struct prof_error err = { 0 };

	ck_assert_msg(registry__run(name, s, &c->sink, &err) == 0, "%s: %s", name, err.msg);
	ck_assert_msg(cap_report(c, name) && cap_report(c, name)->ended, "%s not ended", name);
	return c;
}

static void close_all(struct cap_sink *c, struct prof_store *s)
{
	c->sink.destroy(&c->sink);
	prof_store__close(s);
}

static int64_t ival(const struct cap_report *r, int row, const char *col)
{
	const struct rpt_cell *c = cap_cell(r, row, col);

	ck_assert_msg(c && !c->is_null, "no value in row %d column %s", row, col);
	return c->i;
}

static double dval(const struct cap_report *r, int row, const char *col)
{
	const struct rpt_cell *c = cap_cell(r, row, col);

	ck_assert_msg(c && !c->is_null, "no value in row %d column %s", row, col);
	return c->d;
}

static const char *sval(const struct cap_report *r, int row, const char *col)
{
	const struct rpt_cell *c = cap_cell(r, row, col);

	ck_assert_msg(c != NULL, "no cell in row %d column %s", row, col);
	return c->is_null ? NULL : c->s;
}

static void check_stats(const struct cap_report *r, int row, const char *count_col,
			const int64_t *v, int n)
{
	struct ref_stats e = ref_stats(v, n);

	ck_assert_int_eq(ival(r, row, count_col), e.n);
	ck_assert_int_eq(ival(r, row, "Total Time (ns)"), e.total);
	ck_assert_int_eq(ival(r, row, "Min (ns)"), e.min);
	ck_assert_int_eq(ival(r, row, "Max (ns)"), e.max);
	ck_assert_double_eq_tol(dval(r, row, "Avg (ns)"), e.mean, 1e-9);
	ck_assert_double_eq_tol(dval(r, row, "Med (ns)"), e.median, 1e-9);
	ck_assert_double_eq_tol(dval(r, row, "StdDev (ns)"), e.stddev, 1e-9);
}

/* Kernels named name with the given durations, back to back from start. */
static int64_t add_kernels(struct prof_writer *w, const char *name, const int64_t *dur, int n,
			   int64_t start, int32_t *corr)
{
	for (int i = 0; i < n; i++) {
		add_kernel(w, name, start, start + dur[i], (*corr)++, 1);
		start += dur[i] + 10;
	}
	return start;
}

START_TEST(report_kern_sum_median_of_odd_count_is_middle_value)
{
	static const int64_t d[] = { 300, 100, 250, 1000, 120 };
	struct prof_writer *w = store_new("odd.sqlite");
	int32_t corr = 1;

	add_kernels(w, "k_odd", d, 5, 1000, &corr);
	struct prof_store *s = store_finish(w);
	struct cap_sink *c = run_report(s, "cuda_gpu_kern_sum");
	struct cap_report *r = cap_report(c, "cuda_gpu_kern_sum");

	ck_assert_int_eq(r->nrows, 1);
	ck_assert_str_eq(sval(r, 0, "Name"), "k_odd");
	check_stats(r, 0, "Instances", d, 5);
	ck_assert_double_eq_tol(dval(r, 0, "Med (ns)"), 250.0, 1e-9);
	close_all(c, s);
}
END_TEST

START_TEST(report_kern_sum_median_of_even_count_averages_middle_pair)
{
	static const int64_t d[] = { 9, 1, 4, 5 };
	struct prof_writer *w = store_new("even.sqlite");
	int32_t corr = 1;

	add_kernels(w, "k_even", d, 4, 1000, &corr);
	struct prof_store *s = store_finish(w);
	struct cap_sink *c = run_report(s, "cuda_gpu_kern_sum");
	struct cap_report *r = cap_report(c, "cuda_gpu_kern_sum");

	ck_assert_int_eq(r->nrows, 1);
	check_stats(r, 0, "Instances", d, 4);
	ck_assert_double_eq_tol(dval(r, 0, "Med (ns)"), (4 + 5) / 2.0, 1e-9);
	close_all(c, s);
}
END_TEST

START_TEST(report_kern_sum_single_instance_has_zero_stddev)
{
	static const int64_t d[] = { 777 };
	struct prof_writer *w = store_new("one.sqlite");
	int32_t corr = 1;

	add_kernels(w, "k_one", d, 1, 1000, &corr);
	struct prof_store *s = store_finish(w);
	struct cap_sink *c = run_report(s, "cuda_gpu_kern_sum");
	struct cap_report *r = cap_report(c, "cuda_gpu_kern_sum");

	ck_assert_double_eq_tol(dval(r, 0, "StdDev (ns)"), 0.0, 1e-12);
	ck_assert_double_eq_tol(dval(r, 0, "Time (%)"), 100.0, 1e-9);
	close_all(c, s);
}
END_TEST

START_TEST(report_kern_sum_orders_by_total_time_with_percent_of_kernel_time)
{
	static const int64_t a[] = { 10, 20, 30 }, b[] = { 100 }, k[] = { 5, 35 };
	struct prof_writer *w = store_new("order.sqlite");
	int32_t corr = 1;
	int64_t t = 0;

	t = add_kernels(w, "alpha", a, 3, t, &corr);
	t = add_kernels(w, "beta", b, 1, t, &corr);
	add_kernels(w, "kappa", k, 2, t, &corr);
	struct prof_store *s = store_finish(w);
	struct cap_sink *c = run_report(s, "cuda_gpu_kern_sum");
	struct cap_report *r = cap_report(c, "cuda_gpu_kern_sum");
	double sum = 60 + 100 + 40;

	ck_assert_int_eq(r->nrows, 3);
	ck_assert_str_eq(sval(r, 0, "Name"), "beta");
	ck_assert_str_eq(sval(r, 1, "Name"), "alpha");
	ck_assert_str_eq(sval(r, 2, "Name"), "kappa");
	ck_assert_double_eq_tol(dval(r, 0, "Time (%)"), 100 * 100 / sum, 1e-9);
	ck_assert_double_eq_tol(dval(r, 1, "Time (%)"), 100 * 60 / sum, 1e-9);
	ck_assert_double_eq_tol(dval(r, 2, "Time (%)"), 100 * 40 / sum, 1e-9);
	check_stats(r, 1, "Instances", a, 3);
	check_stats(r, 2, "Instances", k, 2);
	close_all(c, s);
}
END_TEST

START_TEST(report_kern_sum_breaks_total_time_ties_by_name)
{
	static const int64_t x[] = { 50, 50 }, y[] = { 100 };
	struct prof_writer *w = store_new("ties.sqlite");
	int32_t corr = 1;
	int64_t t = 0;

	/* Written in reverse name order so insertion order cannot pass the test. */
	t = add_kernels(w, "zeta", y, 1, t, &corr);
	add_kernels(w, "eta", x, 2, t, &corr);
	struct prof_store *s = store_finish(w);
	struct cap_sink *c = run_report(s, "cuda_gpu_kern_sum");
	struct cap_report *r = cap_report(c, "cuda_gpu_kern_sum");

	ck_assert_int_eq(r->nrows, 2);
	ck_assert_str_eq(sval(r, 0, "Name"), "eta");
	ck_assert_str_eq(sval(r, 1, "Name"), "zeta");
	close_all(c, s);
}
END_TEST

START_TEST(report_kern_sum_columns_follow_nsys)
{
	static const char *const want[] = { "Time (%)", "Total Time (ns)", "Instances",
		"Avg (ns)", "Med (ns)", "Min (ns)", "Max (ns)", "StdDev (ns)", "Name" };
	struct prof_writer *w = store_new("cols.sqlite");
	struct prof_store *s = store_finish(w);
	struct cap_sink *c = run_report(s, "cuda_gpu_kern_sum");
	struct cap_report *r = cap_report(c, "cuda_gpu_kern_sum");

	ck_assert_int_eq(r->ncols, 9);
	for (int i = 0; i < 9; i++)
		ck_assert_str_eq(r->col[i], want[i]);
	ck_assert_int_eq(r->nrows, 0);
	close_all(c, s);
}
END_TEST

START_TEST(report_api_sum_covers_runtime_and_driver_without_version_suffix)
{
	static const int64_t m[] = { 400, 600, 800 }, l[] = { 50 };
	struct prof_writer *w = store_new("api.sqlite");
	int64_t tid = TID(10, 11);

	add_api(w, PROF_API_RUNTIME, "cudaMalloc_v3020", 0, 400, 1, tid);
	add_api(w, PROF_API_RUNTIME, "cudaMalloc_v3020", 1000, 1600, 2, tid);
	add_api(w, PROF_API_RUNTIME, "cudaMalloc_v3020", 2000, 2800, 3, tid);
	add_api(w, PROF_API_DRIVER, "cuLaunchKernel", 3000, 3050, 4, tid);
	struct prof_store *s = store_finish(w);
	struct cap_sink *c = run_report(s, "cuda_api_sum");
	struct cap_report *r = cap_report(c, "cuda_api_sum");

	ck_assert_int_eq(r->nrows, 2);
	ck_assert_str_eq(sval(r, 0, "Name"), "cudaMalloc");
	ck_assert_str_eq(sval(r, 1, "Name"), "cuLaunchKernel");
	check_stats(r, 0, "Num Calls", m, 3);
	check_stats(r, 1, "Num Calls", l, 1);
	ck_assert_double_eq_tol(dval(r, 1, "Time (%)"), 100.0 * 50 / 1850, 1e-9);
	close_all(c, s);
}
END_TEST

START_TEST(report_mem_time_sum_groups_by_operation)
{
	struct prof_writer *w = store_new("memtime.sqlite");
	static const int64_t htod[] = { 100, 300 }, dtoh[] = { 1000 }, set[] = { 40 };

	add_copy(w, PROF_COPY_HTOD, PROF_MEM_PAGEABLE, PROF_MEM_DEVICE, 4096, 0, 100, 0);
	add_copy(w, PROF_COPY_HTOD, PROF_MEM_PINNED, PROF_MEM_DEVICE, 8192, 200, 500, 0);
	add_copy(w, PROF_COPY_DTOH, PROF_MEM_DEVICE, PROF_MEM_PAGEABLE, 1000000, 600, 1600, 0);
	add_memset(w, 2048, 2000, 2040, 0);
	struct prof_store *s = store_finish(w);
	struct cap_sink *c = run_report(s, "cuda_gpu_mem_time_sum");
	struct cap_report *r = cap_report(c, "cuda_gpu_mem_time_sum");

	ck_assert_int_eq(r->nrows, 3);
	ck_assert_str_eq(sval(r, 0, "Operation"), "[CUDA memcpy Device-to-Host]");
	ck_assert_str_eq(sval(r, 1, "Operation"), "[CUDA memcpy Host-to-Device]");
	ck_assert_str_eq(sval(r, 2, "Operation"), "[CUDA memset]");
	check_stats(r, 0, "Count", dtoh, 1);
	check_stats(r, 1, "Count", htod, 2);
	check_stats(r, 2, "Count", set, 1);
	ck_assert_double_eq_tol(dval(r, 1, "Time (%)"), 100.0 * 400 / 1440, 1e-9);
	close_all(c, s);
}
END_TEST

START_TEST(report_mem_size_sum_reports_megabytes_by_total_size)
{
	struct prof_writer *w = store_new("memsize.sqlite");
	static const int64_t htod[] = { 3000000, 1000000, 2000000 };

	add_copy(w, PROF_COPY_HTOD, PROF_MEM_PINNED, PROF_MEM_DEVICE, htod[0], 0, 10, 0);
	add_copy(w, PROF_COPY_HTOD, PROF_MEM_PINNED, PROF_MEM_DEVICE, htod[1], 20, 30, 0);
	add_copy(w, PROF_COPY_HTOD, PROF_MEM_PINNED, PROF_MEM_DEVICE, htod[2], 40, 50, 0);
	add_memset(w, 500000, 60, 70, 0);
	struct prof_store *s = store_finish(w);
	struct cap_sink *c = run_report(s, "cuda_gpu_mem_size_sum");
	struct cap_report *r = cap_report(c, "cuda_gpu_mem_size_sum");
	struct ref_stats e = ref_stats(htod, 3);

	ck_assert_int_eq(r->nrows, 2);
	ck_assert_str_eq(sval(r, 0, "Operation"), "[CUDA memcpy Host-to-Device]");
	ck_assert_double_eq_tol(dval(r, 0, "Total (MB)"), e.total / 1e6, 1e-9);
	ck_assert_int_eq(ival(r, 0, "Count"), 3);
	ck_assert_double_eq_tol(dval(r, 0, "Avg (MB)"), e.mean / 1e6, 1e-9);
	ck_assert_double_eq_tol(dval(r, 0, "Med (MB)"), e.median / 1e6, 1e-9);
	ck_assert_double_eq_tol(dval(r, 0, "Min (MB)"), e.min / 1e6, 1e-9);
	ck_assert_double_eq_tol(dval(r, 0, "Max (MB)"), e.max / 1e6, 1e-9);
	ck_assert_double_eq_tol(dval(r, 0, "StdDev (MB)"), e.stddev / 1e6, 1e-9);
	ck_assert_str_eq(sval(r, 1, "Operation"), "[CUDA memset]");
	ck_assert_double_eq_tol(dval(r, 1, "Total (MB)"), 0.5, 1e-9);
	close_all(c, s);
}
END_TEST

START_TEST(report_gpu_trace_lists_kernels_copies_and_memsets_in_start_order)
{
	struct prof_writer *w = store_new("trace.sqlite");

	add_kernel(w, "late_kernel", 300, 400, 5, 1);
	add_copy(w, PROF_COPY_HTOD, PROF_MEM_PINNED, PROF_MEM_DEVICE, 2000000, 100, 1100, 0);
	add_memset(w, 1024, 200, 250, 0);
	add_kernel(w, "early_kernel", 50, 60, 6, 1);
	struct prof_store *s = store_finish(w);
	struct cap_sink *c = run_report(s, "cuda_gpu_trace");
	struct cap_report *r = cap_report(c, "cuda_gpu_trace");

	ck_assert_int_eq(r->nrows, 4);
	ck_assert_str_eq(sval(r, 0, "Name"), "early_kernel");
	ck_assert_str_eq(sval(r, 1, "Name"), "[CUDA memcpy Host-to-Device]");
	ck_assert_str_eq(sval(r, 2, "Name"), "[CUDA memset]");
	ck_assert_str_eq(sval(r, 3, "Name"), "late_kernel");
	/* times count from the capture's zero: without a run's start, its
	 * first record (early_kernel, at 50; docs/time-base.md) */
	ck_assert_int_eq(ival(r, 1, "Start (ns)"), 100 - 50);
	ck_assert_int_eq(ival(r, 1, "Duration (ns)"), 1000);
	/* 2 MB in 1000 ns = 2000 MB/s */
	ck_assert_double_eq_tol(dval(r, 1, "Bytes (MB)"), 2.0, 1e-12);
	ck_assert_double_eq_tol(dval(r, 1, "Throughput (MB/s)"), 2.0 / 1000e-9, 1e-6);
	ck_assert_str_eq(sval(r, 1, "SrcMemKd"), "Pinned");
	ck_assert_str_eq(sval(r, 1, "DstMemKd"), "Device");
	ck_assert_ptr_null(sval(r, 0, "SrcMemKd"));
	ck_assert(cap_cell(r, 0, "Bytes (MB)")->is_null);
	ck_assert_int_eq(ival(r, 0, "BlkX"), 32);
	ck_assert_int_eq(ival(r, 0, "CorrId"), 6);
	close_all(c, s);
}
END_TEST

START_TEST(report_nvtx_sum_groups_by_range_name_and_style)
{
	struct prof_writer *w = store_new("nvtx.sqlite");
	int64_t tid = TID(10, 11);
	static const int64_t step[] = { 100, 300 }, load[] = { 50 };

	add_range(w, PROF_NVTX_PUSHPOP, "step", 0, 100, tid);
	add_range(w, PROF_NVTX_PUSHPOP, "step", 200, 500, tid);
	add_range(w, PROF_NVTX_STARTEND, "load", 600, 650, tid);
	add_range(w, PROF_NVTX_STARTEND, "step", 700, 710, tid);
	struct prof_store *s = store_finish(w);
	struct cap_sink *c = run_report(s, "nvtx_sum");
	struct cap_report *r = cap_report(c, "nvtx_sum");

	ck_assert_int_eq(r->nrows, 3);
	ck_assert_str_eq(sval(r, 0, "Range"), "step");
	ck_assert_str_eq(sval(r, 0, "Style"), "PushPop");
	check_stats(r, 0, "Instances", step, 2);
	ck_assert_str_eq(sval(r, 1, "Range"), "load");
	ck_assert_str_eq(sval(r, 1, "Style"), "StartEnd");
	check_stats(r, 1, "Instances", load, 1);
	ck_assert_str_eq(sval(r, 2, "Range"), "step");
	ck_assert_str_eq(sval(r, 2, "Style"), "StartEnd");
	ck_assert_double_eq_tol(dval(r, 0, "Time (%)"), 100.0 * 400 / 460, 1e-9);
	close_all(c, s);
}
END_TEST

START_TEST(report_nvtx_kern_sum_attributes_to_innermost_range)
{
	struct prof_writer *w = store_new("nvtxkern.sqlite");
	int64_t tid = TID(10, 11);

	add_range(w, PROF_NVTX_PUSHPOP, "outer", 0, 10000, tid);
	add_range(w, PROF_NVTX_PUSHPOP, "inner", 100, 200, tid);
	add_api(w, PROF_API_RUNTIME, "cudaLaunchKernel_v7000", 150, 160, 1, tid);
	add_kernel(w, "k", 1000, 1040, 1, 10);
	add_api(w, PROF_API_RUNTIME, "cudaLaunchKernel_v7000", 500, 510, 2, tid);
	add_kernel(w, "k", 2000, 2070, 2, 10);
	add_api(w, PROF_API_RUNTIME, "cudaLaunchKernel_v7000", 600, 610, 3, tid);
	add_kernel(w, "k", 3000, 3090, 3, 10);
	/* Launched after every range closed: attributed to none. */
	add_api(w, PROF_API_RUNTIME, "cudaLaunchKernel_v7000", 20000, 20010, 4, tid);
	add_kernel(w, "k", 21000, 21500, 4, 10);
	struct prof_store *s = store_finish(w);
	struct cap_sink *c = run_report(s, "nvtx_kern_sum");
	struct cap_report *r = cap_report(c, "nvtx_kern_sum");
	static const int64_t outer[] = { 70, 90 }, inner[] = { 40 };

	ck_assert_int_eq(r->nrows, 2);
	ck_assert_str_eq(sval(r, 0, "NVTX Range"), "outer");
	ck_assert_str_eq(sval(r, 0, "Kernel Name"), "k");
	check_stats(r, 0, "Instances", outer, 2);
	ck_assert_str_eq(sval(r, 1, "NVTX Range"), "inner");
	check_stats(r, 1, "Instances", inner, 1);
	close_all(c, s);
}
END_TEST

START_TEST(report_nvtx_kern_sum_uses_only_the_launching_threads_ranges)
{
	struct prof_writer *w = store_new("threads.sqlite");
	int64_t t1 = TID(10, 11), t2 = TID(10, 12);

	/* Thread 2's range covers every launch; only thread 1 launches. */
	add_range(w, PROF_NVTX_PUSHPOP, "other_thread", 0, 100000, t2);
	add_range(w, PROF_NVTX_PUSHPOP, "mine", 100, 1000, t1);
	add_api(w, PROF_API_RUNTIME, "cudaLaunchKernel_v7000", 500, 510, 1, t1);
	add_kernel(w, "k1", 2000, 2100, 1, 10);
	add_api(w, PROF_API_RUNTIME, "cudaLaunchKernel_v7000", 5000, 5010, 2, t1);
	add_kernel(w, "k2", 6000, 6100, 2, 10);
	struct prof_store *s = store_finish(w);
	struct cap_sink *c = run_report(s, "nvtx_kern_sum");
	struct cap_report *r = cap_report(c, "nvtx_kern_sum");

	ck_assert_int_eq(r->nrows, 1);
	ck_assert_str_eq(sval(r, 0, "NVTX Range"), "mine");
	ck_assert_str_eq(sval(r, 0, "Kernel Name"), "k1");
	ck_assert_int_eq(ival(r, 0, "Total Time (ns)"), 100);
	close_all(c, s);
}
END_TEST

START_TEST(report_nvtx_kern_sum_matches_correlation_ids_within_a_process)
{
	struct prof_writer *w = store_new("procs.sqlite");
	int64_t a = TID(10, 10), b = TID(20, 20);

	add_range(w, PROF_NVTX_PUSHPOP, "proc_a", 0, 1000, a);
	add_range(w, PROF_NVTX_PUSHPOP, "proc_b", 0, 1000, b);
	add_api(w, PROF_API_RUNTIME, "cudaLaunchKernel_v7000", 100, 110, 1, a);
	add_api(w, PROF_API_RUNTIME, "cudaLaunchKernel_v7000", 100, 110, 1, b);
	add_kernel(w, "kb", 2000, 2300, 1, 20);
	struct prof_store *s = store_finish(w);
	struct cap_sink *c = run_report(s, "nvtx_kern_sum");
	struct cap_report *r = cap_report(c, "nvtx_kern_sum");

	ck_assert_int_eq(r->nrows, 1);
	ck_assert_str_eq(sval(r, 0, "NVTX Range"), "proc_b");
	ck_assert_int_eq(ival(r, 0, "Instances"), 1);
	close_all(c, s);
}
END_TEST

/* The sweep of nvtx_kern_sum (model/nvtx_kernels.c) against the rule
 * written as an interval lookup, kernel by kernel, on a real capture whose
 * 17 threads hold thousands of ranges: each kernel's launching call (by
 * correlation id within its process), the latest-starting push/pop range
 * open on the call's thread at its start (the shorter of two that start
 * together); every (range, kernel) pair's count and total agree, 54 pairs
 * over 9,045 ranges. */
START_TEST(report_nvtx_kern_sum_agrees_with_an_interval_lookup_on_a_real_capture)
{
	static const char oracle[] =
		"SELECT name, kname, count(*), sum(e - b) FROM (SELECT (SELECT coalesce(s.value, n.text)"
		" FROM NVTX_EVENTS n LEFT JOIN StringIds s ON s.id = n.textId WHERE n.eventType = 59"
		" AND n.globalTid = a.globalTid AND n.start <= a.start AND n.end > a.start"
		" ORDER BY n.start DESC, n.end ASC LIMIT 1) AS name,"
		" (SELECT value FROM StringIds WHERE id = coalesce(k.demangledName, k.shortName)) AS kname,"
		" k.start AS b, k.end AS e FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN (SELECT globalTid,"
		" start, correlationId FROM CUPTI_ACTIVITY_KIND_RUNTIME UNION ALL SELECT globalTid,"
		" start, correlationId FROM CUPTI_ACTIVITY_KIND_DRIVER) a ON a.correlationId ="
		" k.correlationId AND (k.globalPid IS NULL OR k.globalPid = 0 OR k.globalPid ="
		" ((a.globalTid >> 24) << 24))) WHERE name IS NOT NULL GROUP BY name, kname";
	struct prof_error err = { 0 };
	struct prof_store *s;
	struct prof_cursor *q;
	struct cap_sink *c;
	struct cap_report *r;
	int pairs = 0;

	ck_assert_msg(prof_store__open(testutil_data_path("corpus/jax_jit_mlp.sqlite"), &s, &err) == 0,
		      "%s", err.msg);
	c = run_report(s, "nvtx_kern_sum");
	r = cap_report(c, "nvtx_kern_sum");
	ck_assert_msg(prof_cursor__open(s, oracle, &q, &err) == 0, "%s", err.msg);
	while (prof_cursor__next(q, &err) == 1) {
		int row = -1;

		for (int i = 0; i < r->nrows && row < 0; i++)
			if (!strcmp(sval(r, i, "NVTX Range"), prof_cursor__text(q, 0)) &&
			    !strcmp(sval(r, i, "Kernel Name"), prof_cursor__text(q, 1)))
				row = i;
		ck_assert_msg(row >= 0, "no row for range %s, kernel %s", prof_cursor__text(q, 0),
			      prof_cursor__text(q, 1));
		ck_assert_int_eq(ival(r, row, "Instances"), prof_cursor__int64(q, 2));
		ck_assert_int_eq(ival(r, row, "Total Time (ns)"), prof_cursor__int64(q, 3));
		pairs++;
	}
	prof_cursor__close(q);
	/* rows to compare, and none that the lookup lacks */
	ck_assert_int_gt(pairs, 1);
	ck_assert_int_eq(r->nrows, pairs);
	close_all(c, s);
}
END_TEST

/* nsys creates a table only when it has data: drop the optional ones from a
 * written store and every report must still run, with zero rows. */
START_TEST(report_store_without_optional_tables_yields_empty_reports)
{
	static const char *const drop[] = {
		"DROP TABLE IF EXISTS CUPTI_ACTIVITY_KIND_KERNEL",
		"DROP TABLE IF EXISTS CUPTI_ACTIVITY_KIND_MEMCPY",
		"DROP TABLE IF EXISTS CUPTI_ACTIVITY_KIND_MEMSET",
		"DROP TABLE IF EXISTS CUPTI_ACTIVITY_KIND_RUNTIME",
		"DROP TABLE IF EXISTS CUPTI_ACTIVITY_KIND_DRIVER",
		"DROP TABLE IF EXISTS NVTX_EVENTS",
		"DROP TABLE IF EXISTS TARGET_INFO_GPU",
	};
	struct prof_writer *w = store_new("bare.sqlite");
	struct prof_error err = { 0 };
	struct prof_store *s;
	size_t n;
	const char *const *names;

	add_kernel(w, "k", 0, 10, 1, 1);
	s = store_finish(w);
	prof_store__close(s);
	for (size_t i = 0; i < sizeof drop / sizeof drop[0]; i++)
		testutil_sqlite3(store_path, drop[i]);
	ck_assert_msg(prof_store__open(store_path, &s, &err) == 0, "reopen: %s", err.msg);
	names = registry__names(&n);
	for (size_t i = 0; i < n; i++) {
		struct cap_sink *c = cap_sink__new();

		ck_assert_msg(registry__run(names[i], s, &c->sink, &err) == 0, "%s: %s", names[i],
			      err.msg);
		for (int k = 0; k < c->nreports; k++)
			if (strcmp(c->rep[k].name, "overview_run") != 0)
				ck_assert_msg(c->rep[k].nrows == 0, "%s: %d rows", c->rep[k].name,
					      c->rep[k].nrows);
		c->sink.destroy(&c->sink);
	}
	prof_store__close(s);
}
END_TEST

START_TEST(report_unknown_name_is_a_usage_error)
{
	struct prof_writer *w = store_new("unknown.sqlite");
	struct prof_store *s = store_finish(w);
	struct cap_sink *c = cap_sink__new();
	struct prof_error err = { 0 };

	ck_assert_int_eq(registry__run("cuda_gpu_kern_summ", s, &c->sink, &err), PROF_E_USAGE);
	ck_assert_int_eq(c->nreports, 0);
	close_all(c, s);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("report_summary");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, report_kern_sum_median_of_odd_count_is_middle_value);
	tcase_add_test(tc, report_kern_sum_median_of_even_count_averages_middle_pair);
	tcase_add_test(tc, report_kern_sum_single_instance_has_zero_stddev);
	tcase_add_test(tc, report_kern_sum_orders_by_total_time_with_percent_of_kernel_time);
	tcase_add_test(tc, report_kern_sum_breaks_total_time_ties_by_name);
	tcase_add_test(tc, report_kern_sum_columns_follow_nsys);
	tcase_add_test(tc, report_api_sum_covers_runtime_and_driver_without_version_suffix);
	tcase_add_test(tc, report_mem_time_sum_groups_by_operation);
	tcase_add_test(tc, report_mem_size_sum_reports_megabytes_by_total_size);
	tcase_add_test(tc, report_gpu_trace_lists_kernels_copies_and_memsets_in_start_order);
	tcase_add_test(tc, report_nvtx_sum_groups_by_range_name_and_style);
	tcase_add_test(tc, report_nvtx_kern_sum_attributes_to_innermost_range);
	tcase_add_test(tc, report_nvtx_kern_sum_agrees_with_an_interval_lookup_on_a_real_capture);
	tcase_add_test(tc, report_nvtx_kern_sum_uses_only_the_launching_threads_ranges);
	tcase_add_test(tc, report_nvtx_kern_sum_matches_correlation_ids_within_a_process);
	tcase_add_test(tc, report_store_without_optional_tables_yields_empty_reports);
	tcase_add_test(tc, report_unknown_name_is_a_usage_error);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return testutil_run(suite());
}
