/* test_diff_kernels.c - `perfkit diff` on stores written with known kernels,
 * copies and ranges: matching by name and launch shape, ratios, ordering by
 * impact, added/removed entries, the verdict and the rendered rows. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compare/diff.h"
#include "diff_fixture.h"
#include "sink/table.h"
#include "testutil.h"

#define MS 1000000LL

static void load(struct diff_profile *p, const char *path)
{
	struct prof_error err = { 0 };

	ck_assert_msg(diff_profile__load_path(p, path, &err) == 0, "%s", err.msg);
}

/* BASE: gemm 10 x 2 ms, softmax 10 x 1 ms. NEW: gemm 10 x 4 ms, softmax same. */
static void write_pair(char *base, char *new, size_t cap)
{
	struct fx f;

	snprintf(base, cap, "%s", testutil_tmp_path("base.sqlite"));
	fx_open(&f, base, "./train --steps 10", "NVIDIA H100");
	fx_kernels(&f, "gemm", 128, 256, 10, 2 * MS);
	fx_kernels(&f, "softmax", 64, 128, 10, 1 * MS);
	fx_close(&f, 100 * MS);
	snprintf(new, cap, "%s", testutil_tmp_path("new.sqlite"));
	fx_open(&f, new, "./train --steps 10", "NVIDIA H100");
	fx_kernels(&f, "softmax", 64, 128, 10, 1 * MS);
	fx_kernels(&f, "gemm", 128, 256, 10, 4 * MS);
	fx_close(&f, 130 * MS);
}

START_TEST(diff_kernel_twice_as_slow_has_ratio_two_and_comes_first)
{
	char base_path[512], new_path[512];
	struct diff_profile base, new;
	struct diff_result r;
	const struct diff_row *top;

	write_pair(base_path, new_path, sizeof base_path);
	load(&base, base_path);
	load(&new, new_path);
	ck_assert_int_eq(diff__compute(&r, &base, &new), 0);
	ck_assert_uint_eq(r.nrows[DIFF_KERNELS], 2);
	top = &r.rows[DIFF_KERNELS][0];
	ck_assert_str_eq(top->base->name, "gemm");
	ck_assert_int_eq(top->delta_ns, 10 * (4 - 2) * MS);
	ck_assert_int_eq(top->new->total_ns, 2 * top->base->total_ns);
	ck_assert_int_eq(top->base->median_ns, 2 * MS);
	ck_assert_int_eq(top->new->median_ns, 4 * MS);
	ck_assert_int_eq(r.rows[DIFF_KERNELS][1].delta_ns, 0);
	diff__exit(&r);
	diff_profile__exit(&base);
	diff_profile__exit(&new);
}
END_TEST

START_TEST(diff_profile_totals_come_from_the_written_records)
{
	char base_path[512], new_path[512];
	struct diff_profile base;

	write_pair(base_path, new_path, sizeof base_path);
	load(&base, base_path);
	ck_assert_int_eq(base.gpu_time_ns, 10 * 2 * MS + 10 * 1 * MS);
	ck_assert_int_eq(base.kernel_count, 20);
	ck_assert_int_eq(base.wall_ns, 100 * MS);
	ck_assert_str_eq(base.program, "train");
	ck_assert_str_eq(base.gpu, "NVIDIA H100");
	diff_profile__exit(&base);
}
END_TEST

START_TEST(diff_reports_added_and_removed_kernels)
{
	const char *p;
	char base_path[512], new_path[512];
	struct diff_profile base, new;
	struct diff_result r;
	struct fx f;
	int added = 0, removed = 0;

	p = testutil_tmp_path("a.sqlite");
	snprintf(base_path, sizeof base_path, "%s", p);
	fx_open(&f, base_path, "app", "gpu0");
	fx_kernels(&f, "naive_gather", 1, 32, 100, 50000);
	fx_kernels(&f, "common", 1, 32, 5, 1000);
	fx_close(&f, -1);
	p = testutil_tmp_path("b.sqlite");
	snprintf(new_path, sizeof new_path, "%s", p);
	fx_open(&f, new_path, "app", "gpu0");
	fx_kernels(&f, "fused_lookup", 8, 256, 1, 700000);
	fx_kernels(&f, "common", 1, 32, 5, 1000);
	fx_close(&f, -1);
	load(&base, base_path);
	load(&new, new_path);
	ck_assert_int_eq(diff__compute(&r, &base, &new), 0);
	ck_assert_uint_eq(r.nrows[DIFF_KERNELS], 3);
	for (size_t i = 0; i < r.nrows[DIFF_KERNELS]; i++) {
		const struct diff_row *row = &r.rows[DIFF_KERNELS][i];

		if (!row->base) {
			added++;
			ck_assert_str_eq(row->new->name, "fused_lookup");
			ck_assert_int_eq(row->delta_ns, 700000);
		}
		if (!row->new) {
			removed++;
			ck_assert_str_eq(row->base->name, "naive_gather");
			ck_assert_int_eq(row->delta_ns, -100 * 50000);
		}
	}
	ck_assert_int_eq(added, 1);
	ck_assert_int_eq(removed, 1);
	/* The removed kernel moved GPU time most (5 ms vs 0.7 ms). */
	ck_assert_ptr_null(r.rows[DIFF_KERNELS][0].new);
	diff__exit(&r);
	diff_profile__exit(&base);
	diff_profile__exit(&new);
}
END_TEST

START_TEST(diff_keys_kernels_by_launch_shape)
{
	char base_path[512], new_path[512];
	struct diff_profile base, new;
	struct diff_result r;
	struct fx f;

	snprintf(base_path, sizeof base_path, "%s", testutil_tmp_path("s1.sqlite"));
	fx_open(&f, base_path, "app", "gpu0");
	fx_kernels(&f, "reduce", 64, 256, 3, 1000);
	fx_close(&f, -1);
	snprintf(new_path, sizeof new_path, "%s", testutil_tmp_path("s2.sqlite"));
	fx_open(&f, new_path, "app", "gpu0");
	fx_kernels(&f, "reduce", 64, 256, 3, 1000);
	fx_kernels(&f, "reduce", 128, 256, 2, 3000);
	fx_close(&f, -1);
	load(&base, base_path);
	load(&new, new_path);
	ck_assert_uint_eq(new.sec[DIFF_KERNELS].n, 2);
	ck_assert_int_eq(diff__compute(&r, &base, &new), 0);
	ck_assert_uint_eq(r.nrows[DIFF_KERNELS], 2);
	/* The 128-block shape is new; the 64-block one is unchanged. */
	ck_assert_ptr_null(r.rows[DIFF_KERNELS][0].base);
	ck_assert_int_eq(r.rows[DIFF_KERNELS][0].new->grid[0], 128);
	ck_assert_int_eq(r.rows[DIFF_KERNELS][1].delta_ns, 0);
	diff__exit(&r);
	diff_profile__exit(&base);
	diff_profile__exit(&new);
}
END_TEST

START_TEST(diff_copies_are_keyed_by_direction_and_host_memory_kind)
{
	char path[512];
	struct diff_profile p;
	struct fx f;
	int seen = 0;

	snprintf(path, sizeof path, "%s", testutil_tmp_path("copies.sqlite"));
	fx_open(&f, path, "app", "gpu0");
	fx_copies(&f, PROF_COPY_HTOD, PROF_MEM_PAGEABLE, PROF_MEM_DEVICE, 4, 3000, 1000);
	fx_copies(&f, PROF_COPY_HTOD, PROF_MEM_PINNED, PROF_MEM_DEVICE, 2, 1000, 5000);
	fx_copies(&f, PROF_COPY_DTOH, PROF_MEM_DEVICE, PROF_MEM_PINNED, 1, 7000, 64);
	fx_close(&f, -1);
	load(&p, path);
	ck_assert_uint_eq(p.sec[DIFF_COPIES].n, 3);
	for (size_t i = 0; i < p.sec[DIFF_COPIES].n; i++) {
		const struct diff_stat *s = &p.sec[DIFF_COPIES].v[i];

		if (strcmp(s->name, "HtoD pageable") == 0) {
			ck_assert_int_eq(s->count, 4);
			ck_assert_int_eq(s->total_ns, 12000);
			ck_assert_int_eq(s->bytes, 4000);
			seen++;
		} else if (strcmp(s->name, "HtoD pinned") == 0) {
			ck_assert_int_eq(s->bytes, 10000);
			seen++;
		} else if (strcmp(s->name, "DtoH pinned") == 0) {
			ck_assert_int_eq(s->median_ns, 7000);
			seen++;
		}
	}
	ck_assert_int_eq(seen, 3);
	ck_assert_int_eq(p.gpu_time_ns, 12000 + 2000 + 7000);
	diff_profile__exit(&p);
}
END_TEST

START_TEST(diff_ranges_are_compared_by_name_with_median)
{
	char base_path[512], new_path[512];
	struct diff_profile base, new;
	struct diff_result r;
	struct fx f;

	snprintf(base_path, sizeof base_path, "%s", testutil_tmp_path("r1.sqlite"));
	fx_open(&f, base_path, "app", "gpu0");
	fx_ranges(&f, "step", 3, 1000);
	fx_ranges(&f, "step", 1, 9000);
	fx_close(&f, -1);
	snprintf(new_path, sizeof new_path, "%s", testutil_tmp_path("r2.sqlite"));
	fx_open(&f, new_path, "app", "gpu0");
	fx_ranges(&f, "step", 4, 500);
	fx_close(&f, -1);
	load(&base, base_path);
	load(&new, new_path);
	ck_assert_int_eq(diff__compute(&r, &base, &new), 0);
	ck_assert_uint_eq(r.nrows[DIFF_RANGES], 1);
	ck_assert_int_eq(r.rows[DIFF_RANGES][0].base->count, 4);
	ck_assert_int_eq(r.rows[DIFF_RANGES][0].base->median_ns, 1000);
	ck_assert_int_eq(r.rows[DIFF_RANGES][0].delta_ns, 4 * 500 - (3 * 1000 + 9000));
	diff__exit(&r);
	diff_profile__exit(&base);
	diff_profile__exit(&new);
}
END_TEST

START_TEST(diff_verdict_names_the_ratio_and_the_kernel_that_moved)
{
	char base_path[512], new_path[512], verdict[512];
	struct diff_profile base, new;
	struct diff_result r;

	write_pair(base_path, new_path, sizeof base_path);
	load(&base, base_path);
	load(&new, new_path);
	/* NEW as the base: 50 ms -> 30 ms of GPU time is 1.7x faster, gemm -20 ms. */
	ck_assert_int_eq(diff__compute(&r, &new, &base), 0);
	diff__verdict(&r, verdict, sizeof verdict);
	ck_assert_msg(strncmp(verdict, "NEW is 1.7x faster on the GPU: gemm \xe2\x88\x92" "20 ms",
			      strlen("NEW is 1.7x faster on the GPU: gemm \xe2\x88\x92" "20 ms")) == 0,
		      "verdict: %s", verdict);
	diff__exit(&r);
	ck_assert_int_eq(diff__compute(&r, &base, &new), 0);
	diff__verdict(&r, verdict, sizeof verdict);
	ck_assert_msg(strstr(verdict, "NEW is 1.7x slower on the GPU: gemm +20 ms") == verdict,
		      "verdict: %s", verdict);
	diff__exit(&r);
	diff_profile__exit(&base);
	diff_profile__exit(&new);
}
END_TEST

START_TEST(diff_json_rows_put_the_slowed_kernel_first_with_ratio_two)
{
	char base_path[512], new_path[512];
	struct diff_profile base, new;
	struct diff_result r;
	char *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);
	struct rpt_sink *sink = rpt_sink__new(RPT_FORMAT_JSON, out);
	const char *kernels, *first_row, *gemm, *softmax, *ratio;

	write_pair(base_path, new_path, sizeof base_path);
	load(&base, base_path);
	load(&new, new_path);
	ck_assert_int_eq(diff__compute(&r, &base, &new), 0);
	ck_assert_int_eq(diff__report(&r, sink), 0);
	rpt_sink__delete(sink);
	fclose(out);
	kernels = strstr(buf, "\"diff_kernels\"");
	ck_assert_ptr_nonnull(kernels);
	first_row = strstr(kernels, "\"rows\"");
	ck_assert_ptr_nonnull(first_row);
	gemm = strstr(first_row, "\"gemm\"");
	softmax = strstr(first_row, "\"softmax\"");
	ck_assert_ptr_nonnull(gemm);
	ck_assert_ptr_nonnull(softmax);
	ck_assert(gemm < softmax);
	/* Ratio precedes Name within a row: the first row holds 2.00 and gemm. */
	ratio = strstr(first_row, "\"Ratio\":2.00");
	ck_assert_ptr_nonnull(ratio);
	ck_assert(ratio < gemm);
	free(buf);
	diff__exit(&r);
	diff_profile__exit(&base);
	diff_profile__exit(&new);
}
END_TEST

START_TEST(diff_html_escapes_kernel_names)
{
	char base_path[512], new_path[512];
	struct diff_profile base, new;
	struct diff_result r;
	struct fx f;
	char *buf = NULL;
	size_t len = 0;
	FILE *out;

	snprintf(base_path, sizeof base_path, "%s", testutil_tmp_path("h1.sqlite"));
	fx_open(&f, base_path, "app", "gpu0");
	fx_kernels(&f, "k<float>&\"x\"", 1, 1, 1, 1000);
	fx_close(&f, -1);
	snprintf(new_path, sizeof new_path, "%s", testutil_tmp_path("h2.sqlite"));
	fx_open(&f, new_path, "app", "gpu0");
	fx_close(&f, -1);
	load(&base, base_path);
	load(&new, new_path);
	ck_assert_int_eq(diff__compute(&r, &base, &new), 0);
	out = open_memstream(&buf, &len);
	ck_assert_int_eq(diff__write_html(&r, out), 0);
	fclose(out);
	ck_assert_ptr_nonnull(strstr(buf, "k&lt;float&gt;&amp;&quot;x&quot;"));
	ck_assert_ptr_null(strstr(buf, "k<float>"));
	free(buf);
	diff__exit(&r);
	diff_profile__exit(&base);
	diff_profile__exit(&new);
}
END_TEST

/* nsys creates tables only when it has data, and has no PERFKIT_META: turn a
 * written store into that shape by dropping tables. */
static void drop_tables(const char *path, const char *const *tables, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		char sql[128];

		snprintf(sql, sizeof sql, "DROP TABLE IF EXISTS %s", tables[i]);
		testutil_sqlite3(path, sql);
	}
}

START_TEST(diff_store_without_optional_tables_gives_empty_sections)
{
	static const char *const optional[] = {
		"CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET", "NVTX_EVENTS",
		"CUDA_GPU_MEMORY_USAGE_EVENTS", "CUPTI_ACTIVITY_KIND_RUNTIME",
		"CUPTI_ACTIVITY_KIND_DRIVER",
	};
	char path[512];
	struct diff_profile p;
	struct fx f;

	snprintf(path, sizeof path, "%s", testutil_tmp_path("bare.sqlite"));
	fx_open(&f, path, "app", "gpu0");
	fx_kernels(&f, "k", 1, 32, 2, 1000);
	fx_copies(&f, PROF_COPY_HTOD, PROF_MEM_PAGEABLE, PROF_MEM_DEVICE, 1, 500, 64);
	fx_ranges(&f, "step", 1, 5000);
	fx_allocs(&f, 2);
	fx_close(&f, -1);
	drop_tables(path, optional, sizeof optional / sizeof optional[0]);
	load(&p, path);
	ck_assert_uint_eq(p.sec[DIFF_KERNELS].n, 1);
	ck_assert_uint_eq(p.sec[DIFF_COPIES].n, 0);
	ck_assert_uint_eq(p.sec[DIFF_RANGES].n, 0);
	ck_assert_int_eq(p.alloc_count, 0);
	ck_assert_int_eq(p.gpu_time_ns, 2000);
	diff_profile__exit(&p);
}
END_TEST

START_TEST(diff_profile_of_an_export_takes_wall_time_from_the_capture_span)
{
	static const char *const perfkit_only[] = { "PERFKIT_META", "PERFKIT_COUNTERS" };
	char path[512];
	struct diff_profile p;
	struct fx f;
	int64_t first;

	snprintf(path, sizeof path, "%s", testutil_tmp_path("export.sqlite"));
	fx_open(&f, path, "app", "NVIDIA H100");
	first = f.t_ns;
	fx_kernels(&f, "k", 1, 32, 2, 1000);
	fx_ranges(&f, "step", 1, 5000);
	ck_assert_int_eq(prof_writer__process(f.w, 4242, "/usr/bin/python3"), 0);
	fx_close(&f, 999999999);
	drop_tables(path, perfkit_only, 2);
	load(&p, path);
	/* Two kernels of 1000 ns 10 ns apart, then 10 ns and a 5000 ns range. */
	ck_assert_int_eq(p.wall_ns, (first + 1000 + 10 + 1000 + 10 + 5000) - first);
	ck_assert_str_eq(p.program, "python3");
	ck_assert_str_eq(p.gpu, "NVIDIA H100");
	diff_profile__exit(&p);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("diff_kernels");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, diff_kernel_twice_as_slow_has_ratio_two_and_comes_first);
	tcase_add_test(tc, diff_profile_totals_come_from_the_written_records);
	tcase_add_test(tc, diff_reports_added_and_removed_kernels);
	tcase_add_test(tc, diff_keys_kernels_by_launch_shape);
	tcase_add_test(tc, diff_copies_are_keyed_by_direction_and_host_memory_kind);
	tcase_add_test(tc, diff_ranges_are_compared_by_name_with_median);
	tcase_add_test(tc, diff_verdict_names_the_ratio_and_the_kernel_that_moved);
	tcase_add_test(tc, diff_json_rows_put_the_slowed_kernel_first_with_ratio_two);
	tcase_add_test(tc, diff_html_escapes_kernel_names);
	tcase_add_test(tc, diff_store_without_optional_tables_gives_empty_sections);
	tcase_add_test(tc, diff_profile_of_an_export_takes_wall_time_from_the_capture_span);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return testutil_run(suite());
}
