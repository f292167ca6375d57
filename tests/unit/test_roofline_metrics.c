/* test_roofline_metrics.c - the roofline: metrics imported from the
 * collector's per-process files join their kernels by correlationId and sum
 * per kernel; peaks stored from a peaks document are read back as measured;
 * each class follows from intensity and distance to the roof. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "analysis/kernel_metrics/peaks_doc.h"
#include "analysis/kernel_metrics/roofline.h"
#include "prof/analysis_tables.h"
#include "prof/store.h"
#include "testutil.h"

#define PID 777u

static char capture[512], dir[512];

/* Two kernels, "stream" launched 3 times (correlation 1..3) and "gemm" once
 * (4); metrics for launches 1, 2 and 4 only. */
static void write_capture(void)
{
	struct prof_writer *w;
	struct prof_error err;
	struct prof_gpu_info g = { .id = 0, .name = "GPU", .uuid = "GPU-roof", .sm_count = 132,
				   .clock_rate_hz = 1980000000LL, .compute_major = 9,
				   .memory_bandwidth_bytes_per_s = 3352000000000LL };
	char tsv[600];
	FILE *f;

	snprintf(capture, sizeof capture, "%s", testutil_tmp_path("roof.sqlite"));
	snprintf(dir, sizeof dir, "%s", testutil_tmp_path("metricsdir"));
	ck_assert_int_eq(prof_writer__create(capture, PROF_WRITER_OVERWRITE, &w, &err), 0);
	prof_writer__gpu(w, &g);
	for (int i = 1; i <= 4; i++) {
		int64_t id = prof_writer__string(w, i < 4 ? "stream" : "gemm");
		struct prof_kernel k = { .start_ns = 1000000 * i, .end_ns = 1000000 * i + 100000,
					 .correlation_id = i, .global_pid = prof_global_pid(PID),
					 .demangled_name = id, .short_name = id, .mangled_name = id,
					 .block_x = 256, .block_y = 1, .block_z = 1 };
		ck_assert_int_eq(prof_writer__kernel(w, &k), 0);
	}
	ck_assert_int_eq(prof_writer__finish(w, &err), 0);
	ck_assert_int_eq(mkdir(dir, 0700), 0);
	snprintf(tsv, sizeof tsv, "%s/metrics-777.tsv", dir);
	f = fopen(tsv, "w");
	ck_assert_ptr_nonnull(f);
	/* pid corr dev dur f64 f32 f16 tensor rd wr l2 */
	fprintf(f, "777\t1\t0\t100000\t0\t1000000\t0\t0\t200000000\t100000000\t300000000\n");
	fprintf(f, "777\t2\t0\t100000\t0\t1000000\t0\t0\t200000000\t100000000\t300000000\n");
	fprintf(f, "777\t4\t0\t100000\t0\t40000000000\t0\t0\t100000000\t0\t500000000\n");
	fprintf(f, "777\t9\t0\t1");  /* cut short by a dying process: ignored */
	fclose(f);
}

/* The capture's metrics imported from dir (want_rows lines), loaded as the
 * roofline does for the launches starting in [from_ns, to_ns) (0, 0: all). */
static struct roof_kernel *import_and_load(int want_rows, int64_t from_ns, int64_t to_ns, int *n)
{
	struct prof_store *s;
	struct prof_error err;
	struct roof_peaks p;
	struct roof_kernel *k;

	ck_assert_int_eq(prof_analysis__import_metrics_dir(capture, dir, &err), want_rows);
	ck_assert_int_eq(prof_store__open(capture, &s, &err), 0);
	ck_assert_int_eq(roof_peaks__load(s, &p, &err), 0);
	ck_assert_int_eq(roof__load(s, &p, from_ns, to_ns, &k, n, &err), 0);
	prof_store__close(s);
	return k;
}

START_TEST(roofline_import_joins_metrics_to_kernels_by_correlation)
{
	struct roof_kernel *k;
	int n;

	write_capture();
	k = import_and_load(3, 0, 0, &n);
	ck_assert_int_eq(n, 2);
	/* "stream" has 3 launches (300 us in all), 2 of them measured */
	ck_assert_str_eq(k[0].name, "stream");
	ck_assert_int_eq(k[0].launches, 3);
	ck_assert_int_eq(k[0].measured, 2);
	ck_assert_int_eq(k[0].time_ns, 300000);
	ck_assert_double_eq_tol(k[0].flops_f32, 2e6, 1e-6);
	ck_assert_double_eq_tol(k[0].dram_bytes, 6e8, 1e-3);
	ck_assert_double_eq_tol(k[0].ai_dram, 2e6 / 6e8, 1e-12);
	ck_assert_double_eq_tol(k[0].dram_bytes_per_s, 6e8 / 200e-6, 1);
	roof__free(k, n);
}
END_TEST

/* The memory set measures no FLOPs: the collector writes "-", the import
 * stores NULL, and the roofline knows the kernel has no FLOP counts (rather
 * than zero FLOPs) while its bytes and time are as measured. */
START_TEST(roofline_memory_set_has_no_flop_counts)
{
	struct roof_kernel *k;
	char tsv[600];
	FILE *f;
	int n;

	write_capture();
	snprintf(tsv, sizeof tsv, "%s/metrics-777.tsv", dir);
	f = fopen(tsv, "w");
	ck_assert_ptr_nonnull(f);
	fprintf(f, "777\t1\t0\t100000\t-\t-\t-\t-\t200000000\t100000000\t300000000\n");
	fclose(f);
	k = import_and_load(1, 0, 0, &n);
	ck_assert_int_eq(n, 1);
	ck_assert(!k[0].has_flops);
	ck_assert(!roof__any_flops(k, n));
	ck_assert_double_eq_tol(k[0].dram_bytes, 3e8, 1e-3);
	ck_assert_double_eq_tol(k[0].dram_bytes_per_s, 3e8 / 100e-6, 1);
	roof__free(k, n);
}
END_TEST

/* A line that ends with the tensor-core FLOPs by precision (after the
 * launch and the access counters): the import stores them and the roofline
 * counts them with the CUDA cores' FLOPs; a line of a collector before
 * them leaves them NULL, which the roofline tells from zero. */
static void write_line(FILE *f, int corr, const char *tensor)
{
	fprintf(f, "777\t%d\t0\t100000\t0\t1000000\t0\t4096\t200000000\t100000000\t300000000", corr);
	fprintf(f, "\t1000\t1100000\t1\t1\t1\t128\t1\t1\t0\t32\t0\t7\t1\tgemm\tgemm");
	fprintf(f, "\t8\t2\t4\t1\t256\t128\t50.00\t60.00");
	if (tensor)
		fprintf(f, "\t%s", tensor);
	fputc('\n', f);
}

START_TEST(roofline_tensor_flops_are_imported_by_precision_and_counted)
{
	struct roof_kernel *k;
	char tsv[600];
	FILE *f;
	int n;

	write_capture();
	snprintf(tsv, sizeof tsv, "%s/metrics-777.tsv", dir);
	f = fopen(tsv, "w");
	ck_assert_ptr_nonnull(f);
	write_line(f, 4, "0\t2000000000\t-\t0\t-");
	fclose(f);
	k = import_and_load(1, 0, 0, &n);
	ck_assert_int_eq(n, 1);
	ck_assert(k[0].has_tensor_flops);
	ck_assert_double_eq_tol(k[0].tensor_flops[ROOF_T_BF16], 2e9, 1e-3);
	ck_assert_double_eq_tol(k[0].flops, 1e6 + 2e9, 1e-3);
	ck_assert_int_eq(k[0].tensor_precision, ROOF_T_BF16);
	ck_assert_int_eq(roof__tensor_unknown(k, n), 0);
	roof__free(k, n);
}
END_TEST

START_TEST(roofline_tensor_flops_of_an_older_collector_are_unknown)
{
	struct roof_kernel *k;
	char tsv[600];
	FILE *f;
	int n;

	write_capture();
	snprintf(tsv, sizeof tsv, "%s/metrics-777.tsv", dir);
	f = fopen(tsv, "w");
	ck_assert_ptr_nonnull(f);
	write_line(f, 4, NULL);
	fclose(f);
	k = import_and_load(1, 0, 0, &n);
	ck_assert(!k[0].has_tensor_flops);
	ck_assert_double_eq_tol(k[0].flops, 1e6, 1e-3);
	ck_assert_int_eq(k[0].tensor_precision, -1);
	/* tensor-pipe instructions without the FLOP counts: said so */
	ck_assert_int_eq(roof__tensor_unknown(k, n), 1);
	roof__free(k, n);
}
END_TEST

/* The diagnosis window: only launches starting inside it count, so a
 * finding's time is of the window its share is taken of. */
START_TEST(roofline_load_keeps_to_the_window)
{
	struct roof_kernel *k;
	int n;

	write_capture();
	/* launches 2 and 3 of "stream" start at 2 and 3 ms; 2 is measured */
	k = import_and_load(3, 1500000, 3500000, &n);
	ck_assert_int_eq(n, 1);
	ck_assert_str_eq(k[0].name, "stream");
	ck_assert_int_eq(k[0].launches, 2);
	ck_assert_int_eq(k[0].measured, 1);
	ck_assert_int_eq(k[0].time_ns, 200000);
	ck_assert_double_eq_tol(k[0].dram_bytes, 3e8, 1e-3);
	roof__free(k, n);
}
END_TEST

START_TEST(roofline_peaks_document_is_read_back_as_measured)
{
	struct prof_store *s;
	struct prof_error err;
	struct roof_peaks p;
	const char *doc = "{\"gpu_name\":\"H100\",\"gpu_uuid\":\"GPU-roof\",\"peaks\":{"
			  "\"dram_bytes_per_s\":3.0e12,\"l2_bytes_per_s\":9.0e12,"
			  "\"fp32_flops_per_s\":5.0e13,\"fp16_flops_per_s\":1.0e14}}";

	write_capture();
	ck_assert_int_eq(peaks_doc__store(capture, doc, &err), 0);
	ck_assert_int_eq(prof_store__open(capture, &s, &err), 0);
	ck_assert_int_eq(roof_peaks__load(s, &p, &err), 0);
	ck_assert(p.measured);
	ck_assert_double_eq_tol(p.dram_bytes_per_s, 3.0e12, 1);
	ck_assert_double_eq_tol(p.l2_bytes_per_s, 9.0e12, 1);
	ck_assert_double_eq_tol(p.fp32_flops_per_s, 5.0e13, 1);
	prof_store__close(s);
}
END_TEST

START_TEST(roofline_nominal_peaks_come_from_the_gpu_description)
{
	struct prof_store *s;
	struct prof_error err;
	struct roof_peaks p;

	write_capture();
	ck_assert_int_eq(prof_store__open(capture, &s, &err), 0);
	ck_assert_int_eq(roof_peaks__load(s, &p, &err), 0);
	ck_assert(!p.measured);
	ck_assert_double_eq_tol(p.dram_bytes_per_s, 3352000000000.0, 1);
	/* 132 SMs x 128 lanes x 2 FLOP x 1.98 GHz */
	ck_assert_double_eq_tol(p.fp32_flops_per_s, 132.0 * 128 * 2 * 1.98e9, 1e3);
	prof_store__close(s);
}
END_TEST

static const struct roof_peaks peaks = {
	.dram_bytes_per_s = 3e12, .l2_bytes_per_s = 1e13, .fp32_flops_per_s = 6e13,
	.fp16_flops_per_s = 1.2e14, .fp64_flops_per_s = 3e13,
};

static struct roof_kernel kern(int64_t launches, int64_t time_ns, double f32, double dram)
{
	struct roof_kernel k = { .launches = launches, .measured = launches, .time_ns = time_ns,
				 .metric_time_ns = time_ns, .flops_f32 = f32, .dram_bytes = dram };
	roof__derive(&k, &peaks);
	return k;
}

START_TEST(roofline_low_intensity_near_the_bandwidth_roof_is_memory_bound)
{
	/* 1 ms moving 2.4 GB = 2.4 TB/s of 3 TB/s; AI 0.1 << ridge 20 */
	struct roof_kernel k = kern(1, 1000000, 2.4e8, 2.4e9);
	ck_assert_int_eq(k.klass, ROOF_MEMORY);
	ck_assert_double_eq_tol(k.roof_fraction, 0.8, 1e-9);
}
END_TEST

START_TEST(roofline_high_intensity_near_peak_is_compute_bound)
{
	/* 1 ms, 4.8e10 FLOP = 48 TFLOP/s of 60; AI 480 */
	struct roof_kernel k = kern(1, 1000000, 4.8e10, 1e8);
	ck_assert_int_eq(k.klass, ROOF_COMPUTE);
	ck_assert_double_eq_tol(k.roof_fraction, 0.8, 1e-9);
}
END_TEST

START_TEST(roofline_far_from_both_roofs_is_latency_bound)
{
	/* 1 ms, 0.3 TB/s of 3: 10% of the roof at its intensity */
	struct roof_kernel k = kern(1, 1000000, 3e7, 3e8);
	ck_assert_int_eq(k.klass, ROOF_LATENCY);
}
END_TEST

/* A kernel whose tensor cores did most of its FLOPs is judged against the
 * tensor-core ceiling of that precision, not the CUDA cores' FP32 one, at
 * which it would pass for far above the roof. */
START_TEST(roofline_tensor_kernel_has_the_tensor_roof)
{
	struct roof_peaks p = peaks;
	/* 1 ms, 4e11 tensor BF16 FLOP = 400 TFLOP/s of 800; AI 4000 */
	struct roof_kernel k = { .launches = 1, .measured = 1, .time_ns = 1000000, .metric_time_ns = 1000000,
				 .flops_f32 = 1e9, .dram_bytes = 1e8, .has_flops = true,
				 .has_tensor_flops = true };

	p.tensor_flops_per_s[ROOF_T_BF16] = 8e14;
	k.tensor_flops[ROOF_T_BF16] = 4e11;
	roof__derive(&k, &p);
	ck_assert_int_eq(k.tensor_precision, ROOF_T_BF16);
	ck_assert_double_eq_tol(k.peak_flops, 8e14, 1);
	ck_assert_double_eq_tol(k.roof_fraction, (4e11 + 1e9) / 1e-3 / 8e14, 1e-9);
	ck_assert_int_eq(k.klass, ROOF_COMPUTE);
}
END_TEST

START_TEST(roofline_many_tiny_launches_are_launch_bound)
{
	/* 1000 launches of 2 us each, whatever their rates */
	struct roof_kernel k = kern(1000, 2000000, 4.8e9, 4.8e9);
	ck_assert_int_eq(k.klass, ROOF_LAUNCH);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("roofline");
	TCase *tc = tcase_create("metrics");

	tcase_add_test(tc, roofline_import_joins_metrics_to_kernels_by_correlation);
	tcase_add_test(tc, roofline_load_keeps_to_the_window);
	tcase_add_test(tc, roofline_memory_set_has_no_flop_counts);
	tcase_add_test(tc, roofline_peaks_document_is_read_back_as_measured);
	tcase_add_test(tc, roofline_nominal_peaks_come_from_the_gpu_description);
	tcase_add_test(tc, roofline_low_intensity_near_the_bandwidth_roof_is_memory_bound);
	tcase_add_test(tc, roofline_high_intensity_near_peak_is_compute_bound);
	tcase_add_test(tc, roofline_far_from_both_roofs_is_latency_bound);
	tcase_add_test(tc, roofline_many_tiny_launches_are_launch_bound);
	tcase_add_test(tc, roofline_tensor_flops_are_imported_by_precision_and_counted);
	tcase_add_test(tc, roofline_tensor_flops_of_an_older_collector_are_unknown);
	tcase_add_test(tc, roofline_tensor_kernel_has_the_tensor_roof);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return testutil_run(suite());
}
