/* test_diff_kernels.c - `perfkit diff` on stores written with known kernels,
 * copies and ranges: matching by name and launch shape, per-iteration and
 * per-launch comparison of loops of different lengths, the noise rules (with
 * values), ordering by the cost per iteration, added/removed entries, the
 * verdict and the rendered rows. */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compare/diff.h"
#include "diff_fixture.h"
#include "sink/table.h"
#include "testutil.h"
#include "model/window.h"

#define MS 1000000LL

static void load(struct diff_profile *p, const char *path)
{
	struct prof_error err = { 0 };

	ck_assert_msg(diff_profile__load_path(p, path, &err) == 0, "%s", err.msg);
}

/* BASE: 10 steps of gemm 2 ms + softmax 1 ms. NEW: gemm 4 ms, softmax the same. */
static void write_pair(char *base, char *new, size_t cap)
{
	const struct fx_step before[] = { { "gemm", 2 * MS }, { "softmax", 1 * MS }, { NULL, 0 } };
	const struct fx_step after[] = { { "gemm", 4 * MS }, { "softmax", 1 * MS }, { NULL, 0 } };
	struct fx f;

	snprintf(base, cap, "%s", testutil_tmp_path("base.sqlite"));
	fx_open(&f, base, "./train --steps 10", "NVIDIA H100");
	fx_steps(&f, 10, before);
	fx_close(&f, 100 * MS);
	snprintf(new, cap, "%s", testutil_tmp_path("new.sqlite"));
	fx_open(&f, new, "./train --steps 10", "NVIDIA H100");
	fx_steps(&f, 10, after);
	fx_close(&f, 130 * MS);
}

/* A loop of `steps` steps of k, as the program under test would run it. */
static void write_loop(char *path, size_t cap, const char *name, int steps, const struct fx_step *k)
{
	struct fx f;

	snprintf(path, cap, "%s", testutil_tmp_path(name));
	fx_open(&f, path, "./train", "NVIDIA H100");
	fx_steps(&f, steps, k);
	fx_close(&f, -1);
}

static const struct diff_row *find_row(const struct diff_result *r, int id, const char *name)
{
	for (size_t i = 0; i < r->nrows[id]; i++) {
		const struct diff_row *row = &r->rows[id][i];

		if (strcmp((row->base ? row->base : row->new)->name, name) == 0)
			return row;
	}
	ck_abort_msg("no row %s", name);
	return NULL;
}

/* A baseline's times are whatever its file says: the most negative one
 * still prints, with its sign (it was -INT64_MIN, undefined, in the gate's
 * fuzzed input fuzz/crashes/gate/crash-45168004a892ee3d). */
START_TEST(diff_format_ns_prints_every_int64)
{
	char buf[64];

	diff_format_ns(buf, sizeof buf, INT64_MIN);
	ck_assert_str_eq(buf, "-9.22e+09 s");
	diff_format_ns(buf, sizeof buf, INT64_MAX);
	ck_assert_str_eq(buf, "9.22e+09 s");
	diff_format_ns(buf, sizeof buf, -999);
	ck_assert_str_eq(buf, "-999 ns");
	diff_format_ns(buf, sizeof buf, -1500);
	ck_assert_str_eq(buf, "-1.5 us");
}
END_TEST

START_TEST(diff_kernel_twice_as_slow_per_launch_comes_first_with_its_cost_per_iteration)
{
	char base_path[512], new_path[512];
	struct diff_profile base, new;
	struct diff_result r;
	const struct diff_row *top;

	write_pair(base_path, new_path, sizeof base_path);
	load(&base, base_path);
	load(&new, new_path);
	ck_assert_int_eq(diff__compute(&r, &base, &new), 0);
	ck_assert(r.per_iteration);
	ck_assert_uint_eq(r.nrows[DIFF_KERNELS], 2);
	top = &r.rows[DIFF_KERNELS][0];
	ck_assert_str_eq(top->base->name, "gemm");
	ck_assert_int_eq(top->change, DIFF_SLOWER);
	ck_assert_int_eq(top->base->median_ns, 2 * MS);
	ck_assert_int_eq(top->new->median_ns, 4 * MS);
	/* One launch per iteration, 2 ms slower each. */
	ck_assert_double_eq(top->base_calls, 1.0);
	ck_assert_double_eq(top->effect_ns, 2.0 * MS);
	ck_assert_int_eq(top->delta_ns, 2 * MS);
	ck_assert_int_eq(r.rows[DIFF_KERNELS][1].change, DIFF_SAME);
	ck_assert_int_eq(r.rows[DIFF_KERNELS][1].delta_ns, 0);
	diff__exit(&r);
	diff_profile__exit(&base);
	diff_profile__exit(&new);
}
END_TEST

START_TEST(diff_profile_totals_and_loop_come_from_the_written_records)
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
	/* Marked by gemm, the first step (the warm-up) left out. */
	ck_assert_int_eq(base.loop.iterations, 9);
	ck_assert_int_eq(base.loop.mark, SUM_LOOP_KERNEL);
	ck_assert_str_eq(base.loop.mark_name, "gemm");
	ck_assert_int_eq(base.loop_kernel_count, 18);
	ck_assert_int_eq(base.loop_gpu_time_ns, 9 * 3 * MS);
	diff_profile__exit(&base);
}
END_TEST

START_TEST(diff_reports_added_and_removed_kernels_with_their_time_per_iteration)
{
	const struct fx_step before[] = { { "common", 1000 }, { "naive_gather", 50000 }, { NULL, 0 } };
	const struct fx_step after[] = { { "common", 1000 }, { "fused_lookup", 70000 }, { NULL, 0 } };
	char base_path[512], new_path[512];
	struct diff_profile base, new;
	struct diff_result r;
	const struct diff_row *row;

	write_loop(base_path, sizeof base_path, "a.sqlite", 10, before);
	write_loop(new_path, sizeof new_path, "b.sqlite", 10, after);
	load(&base, base_path);
	load(&new, new_path);
	ck_assert_int_eq(diff__compute(&r, &base, &new), 0);
	ck_assert_uint_eq(r.nrows[DIFF_KERNELS], 3);
	row = find_row(&r, DIFF_KERNELS, "fused_lookup");
	ck_assert_int_eq(row->change, DIFF_ADDED);
	ck_assert_int_eq(row->delta_ns, 70000);
	row = find_row(&r, DIFF_KERNELS, "naive_gather");
	ck_assert_int_eq(row->change, DIFF_REMOVED);
	ck_assert_int_eq(row->delta_ns, -50000);
	/* The added kernel costs the iteration most; the common one comes last. */
	ck_assert_ptr_null(r.rows[DIFF_KERNELS][0].base);
	ck_assert_int_eq(r.rows[DIFF_KERNELS][2].change, DIFF_SAME);
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
	/* The 128-block shape is new; the 64-block one is unchanged per launch,
	 * and its calls moved to the other shape, not away from the kernel. */
	ck_assert_ptr_null(r.rows[DIFF_KERNELS][0].base);
	ck_assert_int_eq(r.rows[DIFF_KERNELS][0].new->grid[0], 128);
	ck_assert_int_eq(r.rows[DIFF_KERNELS][1].change, DIFF_SAME);
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

START_TEST(diff_ranges_are_compared_by_their_median_instance)
{
	char base_path[512], new_path[512];
	struct diff_profile base, new;
	struct diff_result r;
	const struct diff_row *row;
	struct fx f;

	snprintf(base_path, sizeof base_path, "%s", testutil_tmp_path("r1.sqlite"));
	fx_open(&f, base_path, "app", "gpu0");
	fx_ranges(&f, "step", 4, 1000);
	fx_ranges(&f, "step", 1, 9000);
	fx_close(&f, -1);
	snprintf(new_path, sizeof new_path, "%s", testutil_tmp_path("r2.sqlite"));
	fx_open(&f, new_path, "app", "gpu0");
	fx_ranges(&f, "step", 5, 500);
	fx_close(&f, -1);
	load(&base, base_path);
	load(&new, new_path);
	ck_assert_int_eq(diff__compute(&r, &base, &new), 0);
	ck_assert_uint_eq(r.nrows[DIFF_RANGES], 1);
	row = &r.rows[DIFF_RANGES][0];
	ck_assert_int_eq(row->base->count, 5);
	/* The one slow instance moves neither the median nor the quartiles. */
	ck_assert_int_eq(row->base->median_ns, 1000);
	ck_assert_int_eq(row->base->q3_ns - row->base->q1_ns, 0);
	ck_assert_int_eq(row->change, DIFF_FASTER);
	diff__exit(&r);
	diff_profile__exit(&base);
	diff_profile__exit(&new);
}
END_TEST

static void verdict_of(const char *base_path, const char *new_path, char *verdict, size_t cap)
{
	struct diff_profile base, new;
	struct diff_result r;

	load(&base, base_path);
	load(&new, new_path);
	ck_assert_int_eq(diff__compute(&r, &base, &new), 0);
	diff__verdict(&r, verdict, cap);
	diff__exit(&r);
	diff_profile__exit(&base);
	diff_profile__exit(&new);
}

START_TEST(diff_verdict_names_the_ratio_per_iteration_and_the_kernel_that_moved)
{
	char base_path[512], new_path[512], verdict[1024];

	write_pair(base_path, new_path, sizeof base_path);
	/* NEW as the base: 5 ms -> 3 ms per iteration is 1.7x faster. */
	verdict_of(new_path, base_path, verdict, sizeof verdict);
	ck_assert_msg(strstr(verdict, "NEW's step is 1.7x faster: 5 ms \xe2\x86\x92 3 ms median") == verdict,
		      "verdict: %s", verdict);
	ck_assert_msg(strstr(verdict, "(BASE 9 steps, NEW 9); GPU time per step 5 ms \xe2\x86\x92 3 ms"
				      " (1.7x less): gemm 2.0x faster per launch (\xe2\x88\x92"
				      "2 ms/iter) [100% of the step's change]"), "verdict: %s", verdict);
	verdict_of(base_path, new_path, verdict, sizeof verdict);
	ck_assert_msg(strstr(verdict, "NEW's step is 1.7x slower: 3 ms \xe2\x86\x92 5 ms") == verdict,
		      "verdict: %s", verdict);
	ck_assert_msg(strstr(verdict, "gemm 2.0x slower per launch (+2 ms/iter)"), "verdict: %s", verdict);
}
END_TEST

/* The case that gave "NEW is 1.09x faster": two windows of one job, the
 * second with fewer steps, every kernel the same per launch but one. */
static const struct fx_step job_step[] = {
	{ "forward", 100000 }, { "allreduce", 200000 }, { "update", 50000 }, { NULL, 0 },
};
static const struct fx_step job_step_slow_allreduce[] = {
	{ "forward", 100000 }, { "allreduce", 228000 }, { "update", 50000 }, { NULL, 0 },
};

START_TEST(diff_of_fewer_steps_with_the_same_launches_is_no_change)
{
	char base_path[512], new_path[512], verdict[1024];
	struct diff_profile base, new;
	struct diff_result r;

	write_loop(base_path, sizeof base_path, "job50.sqlite", 50, job_step);
	write_loop(new_path, sizeof new_path, "job44.sqlite", 44, job_step);
	verdict_of(base_path, new_path, verdict, sizeof verdict);
	ck_assert_msg(strstr(verdict, "NEW's step takes the same wall time as BASE's (within noise):"
				      " 350 us \xe2\x86\x92 350 us median") == verdict, "verdict: %s", verdict);
	ck_assert_msg(strstr(verdict, "(BASE 49 steps, NEW 43)"), "verdict: %s", verdict);
	load(&base, base_path);
	load(&new, new_path);
	ck_assert_int_eq(diff__compute(&r, &base, &new), 0);
	for (size_t i = 0; i < r.nrows[DIFF_KERNELS]; i++) {
		ck_assert_int_eq(r.rows[DIFF_KERNELS][i].change, DIFF_SAME);
		/* Its total fell with the steps; per iteration nothing moved. */
		ck_assert_int_lt(r.rows[DIFF_KERNELS][i].new->total_ns,
				 r.rows[DIFF_KERNELS][i].base->total_ns);
		ck_assert_int_eq(r.rows[DIFF_KERNELS][i].delta_ns, 0);
	}
	diff__exit(&r);
	diff_profile__exit(&base);
	diff_profile__exit(&new);
}
END_TEST

START_TEST(diff_kernel_slower_per_launch_in_a_shorter_window_makes_new_slower)
{
	char base_path[512], new_path[512], verdict[1024];
	struct diff_profile base, new;
	struct diff_result r;

	write_loop(base_path, sizeof base_path, "job50.sqlite", 50, job_step);
	write_loop(new_path, sizeof new_path, "job44.sqlite", 44, job_step_slow_allreduce);
	load(&base, base_path);
	load(&new, new_path);
	/* In total NEW has less GPU time: totals would call it faster. */
	ck_assert_int_lt(new.gpu_time_ns, base.gpu_time_ns);
	ck_assert_int_eq(diff__compute(&r, &base, &new), 0);
	diff__verdict(&r, verdict, sizeof verdict);
	/* 350 us -> 378 us per iteration. */
	ck_assert_msg(strstr(verdict, "NEW's step is 1.08x slower: 350 us \xe2\x86\x92 378 us median")
		      == verdict, "verdict: %s", verdict);
	ck_assert_msg(strstr(verdict, "(BASE 49 steps, NEW 43); GPU time per step 350 us \xe2\x86\x92 378 us"
				      " (1.08x more): allreduce +14% per launch (+28 us/iter)"),
		      "verdict: %s", verdict);
	ck_assert_str_eq(r.rows[DIFF_KERNELS][0].base->name, "allreduce");
	ck_assert_int_eq(r.rows[DIFF_KERNELS][0].change, DIFF_SLOWER);
	ck_assert_int_eq(find_row(&r, DIFF_KERNELS, "forward")->change, DIFF_SAME);
	ck_assert_int_eq(find_row(&r, DIFF_KERNELS, "update")->change, DIFF_SAME);
	diff__exit(&r);
	diff_profile__exit(&base);
	diff_profile__exit(&new);
}
END_TEST

START_TEST(diff_kernel_launched_fewer_times_per_step_is_fewer_calls_not_faster)
{
	const struct fx_step twice[] = {
		{ "forward", 100000 }, { "update", 50000 }, { "update", 50000 }, { NULL, 0 },
	};
	const struct fx_step once[] = { { "forward", 100000 }, { "update", 50000 }, { NULL, 0 } };
	char base_path[512], new_path[512];
	struct diff_profile base, new;
	struct diff_result r;
	const struct diff_row *row;

	write_loop(base_path, sizeof base_path, "twice.sqlite", 20, twice);
	write_loop(new_path, sizeof new_path, "once.sqlite", 20, once);
	load(&base, base_path);
	load(&new, new_path);
	ck_assert_int_eq(diff__compute(&r, &base, &new), 0);
	row = find_row(&r, DIFF_KERNELS, "update");
	ck_assert_int_eq(row->change, DIFF_FEWER_CALLS);
	ck_assert(!row->launch_changed);
	ck_assert_double_eq(row->base_calls, 2.0);
	ck_assert_double_eq(row->new_calls, 1.0);
	ck_assert_double_eq(row->effect_ns, -50000.0);
	diff__exit(&r);
	diff_profile__exit(&base);
	diff_profile__exit(&new);
}
END_TEST

START_TEST(diff_without_a_loop_compares_totals_and_says_why)
{
	char base_path[512], new_path[512], verdict[1024];
	struct diff_profile base, new;
	struct diff_result r;
	struct fx f;

	snprintf(base_path, sizeof base_path, "%s", testutil_tmp_path("once1.sqlite"));
	fx_open(&f, base_path, "app", "gpu0");
	fx_kernels(&f, "setup", 1, 32, 1, 2 * MS);
	fx_close(&f, -1);
	snprintf(new_path, sizeof new_path, "%s", testutil_tmp_path("once2.sqlite"));
	fx_open(&f, new_path, "app", "gpu0");
	fx_kernels(&f, "setup", 1, 32, 1, 1 * MS);
	fx_close(&f, -1);
	load(&base, base_path);
	load(&new, new_path);
	ck_assert_int_eq(diff__compute(&r, &base, &new), 0);
	ck_assert(!r.per_iteration);
	diff__verdict(&r, verdict, sizeof verdict);
	ck_assert_msg(strstr(verdict, "NEW is 2.0x faster on the GPU (warning: neither BASE nor NEW has a"
				      " loop to count iterations by") == verdict, "verdict: %s", verdict);
	diff__exit(&r);
	diff_profile__exit(&base);
	diff_profile__exit(&new);
}
END_TEST

START_TEST(diff_aligns_loops_that_the_search_marks_by_different_kernels)
{
	const struct fx_step ab[] = { { "a", 1000 }, { "b", 2000 }, { NULL, 0 } };
	const struct fx_step ba[] = { { "b", 2000 }, { "a", 1000 }, { NULL, 0 } };
	char base_path[512], new_path[512], verdict[1024];
	struct prof_error err = { 0 };
	struct diff_profile base, new;
	struct diff_result r;

	write_loop(base_path, sizeof base_path, "ab.sqlite", 10, ab);
	write_loop(new_path, sizeof new_path, "ba.sqlite", 10, ba);
	load(&base, base_path);
	load(&new, new_path);
	ck_assert_str_eq(new.loop.mark_name, "b");
	ck_assert_int_eq(diff__compute(&r, &base, &new), 0);
	ck_assert(!r.per_iteration);
	diff__verdict(&r, verdict, sizeof verdict);
	ck_assert_msg(strstr(verdict, "warning: the loops are marked differently"), "verdict: %s", verdict);
	diff__exit(&r);
	ck_assert_msg(diff_profiles__align_loops(&new, 1, &base.loop, &err) == 0, "%s", err.msg);
	ck_assert_str_eq(new.loop.mark_name, "a");
	ck_assert_int_eq(new.loop.iterations, 9);
	ck_assert_int_eq(diff__compute(&r, &base, &new), 0);
	ck_assert(r.per_iteration);
	diff__exit(&r);
	diff_profile__exit(&base);
	diff_profile__exit(&new);
}
END_TEST

START_TEST(diff_json_rows_put_the_slowed_kernel_first_with_median_ratio_two)
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
	ck_assert_ptr_nonnull(strstr(buf, "\"diff_loops\""));
	kernels = strstr(buf, "\"diff_kernels\"");
	ck_assert_ptr_nonnull(kernels);
	first_row = strstr(kernels, "\"rows\"");
	ck_assert_ptr_nonnull(first_row);
	gemm = strstr(first_row, "\"gemm\"");
	softmax = strstr(first_row, "\"softmax\"");
	ck_assert_ptr_nonnull(gemm);
	ck_assert_ptr_nonnull(softmax);
	ck_assert(gemm < softmax);
	/* The ratio precedes Name within a row: the first row holds 2.00 and
	 * gemm, with its change per iteration. */
	ratio = strstr(first_row, "\"Med Ratio\":2.00");
	ck_assert_ptr_nonnull(ratio);
	ck_assert(ratio < gemm);
	ck_assert_ptr_nonnull(strstr(first_row, "\"Delta/iter (ns)\":2000000"));
	ck_assert_ptr_nonnull(strstr(first_row, "\"Base Count/iter\":1.00"));
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
	/* the process name has no arguments: the script is unknown */
	ck_assert_str_eq(p.program, "");
	ck_assert_str_eq(p.launcher, "python3");
	ck_assert_str_eq(p.gpu, "NVIDIA H100");
	diff_profile__exit(&p);
}
END_TEST

START_TEST(diff_launch_change_must_exceed_the_minimum_and_the_steadier_spread)
{
	ck_assert(diff_launch_changed(1000, 0, 1140, 0));
	ck_assert(diff_launch_changed(1000, 0, 860, 0));
	/* 2 % is under DIFF_MIN_CHANGE: timer ticks and clocks. */
	ck_assert(!diff_launch_changed(1000, 0, 1020, 0));
	/* +140 ns inside both sides' spread (IQR 200 ns each). */
	ck_assert(!diff_launch_changed(1000, 200, 1140, 200));
	/* one side steady: the new median lies outside its middle half */
	ck_assert(diff_launch_changed(1000, 200, 1140, 0));
	ck_assert(diff_launch_changed(1000, 100, 1140, 100));
	ck_assert(!diff_launch_changed(1000, 0, 1000, 0));
	/* issue 38: NVTX `step` 20.8 ms -> 128 us with a spread (IQR) larger
	 * than its new median is a change, in ns, whatever the spread's share
	 * of that median */
	ck_assert(diff_launch_changed(20842599, 50000, 127752, 300000));
}
END_TEST

START_TEST(diff_row_time_change_weighs_the_spread_of_its_calls)
{
	/* 3 calls a step, each launch spread 1 ms: +11 ms a step is a change,
	 * +2 ms is what the launches' spread explains */
	ck_assert(diff_time_changed(2.46e6, 13.8e6, 3, 1000000, 840000));
	ck_assert(!diff_time_changed(2.46e6, 4.46e6, 3, 1000000, 840000));
}
END_TEST

START_TEST(diff_calls_change_must_exceed_what_the_window_edges_explain)
{
	ck_assert(!diff_calls_changed(1.0, 49, 1.0, 43));
	ck_assert(diff_calls_changed(2.0, 49, 1.0, 43));
	/* One launch more over ten iterations, or two: the windows' edges. */
	ck_assert(!diff_calls_changed(1.0, 10, 1.1, 10));
	ck_assert(!diff_calls_changed(1.0, 10, 1.2, 10));
	ck_assert(diff_calls_changed(1.0, 10, 1.3, 10));
	/* Over totals (one "iteration") a change of two launches is the edges too. */
	ck_assert(!diff_calls_changed(100, 1, 102, 1));
	ck_assert(diff_calls_changed(100, 1, 110, 1));
	/* Into or out of the loop is a change. */
	ck_assert(diff_calls_changed(0, 10, 0.1, 10));
	ck_assert(diff_calls_changed(0.5, 10, 0, 10));
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("diff_kernels");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, diff_format_ns_prints_every_int64);
	tcase_add_test(tc, diff_kernel_twice_as_slow_per_launch_comes_first_with_its_cost_per_iteration);
	tcase_add_test(tc, diff_profile_totals_and_loop_come_from_the_written_records);
	tcase_add_test(tc, diff_reports_added_and_removed_kernels_with_their_time_per_iteration);
	tcase_add_test(tc, diff_keys_kernels_by_launch_shape);
	tcase_add_test(tc, diff_copies_are_keyed_by_direction_and_host_memory_kind);
	tcase_add_test(tc, diff_ranges_are_compared_by_their_median_instance);
	tcase_add_test(tc, diff_verdict_names_the_ratio_per_iteration_and_the_kernel_that_moved);
	tcase_add_test(tc, diff_of_fewer_steps_with_the_same_launches_is_no_change);
	tcase_add_test(tc, diff_kernel_slower_per_launch_in_a_shorter_window_makes_new_slower);
	tcase_add_test(tc, diff_kernel_launched_fewer_times_per_step_is_fewer_calls_not_faster);
	tcase_add_test(tc, diff_without_a_loop_compares_totals_and_says_why);
	tcase_add_test(tc, diff_aligns_loops_that_the_search_marks_by_different_kernels);
	tcase_add_test(tc, diff_json_rows_put_the_slowed_kernel_first_with_median_ratio_two);
	tcase_add_test(tc, diff_html_escapes_kernel_names);
	tcase_add_test(tc, diff_store_without_optional_tables_gives_empty_sections);
	tcase_add_test(tc, diff_profile_of_an_export_takes_wall_time_from_the_capture_span);
	tcase_add_test(tc, diff_launch_change_must_exceed_the_minimum_and_the_steadier_spread);
	tcase_add_test(tc, diff_row_time_change_weighs_the_spread_of_its_calls);
	tcase_add_test(tc, diff_calls_change_must_exceed_what_the_window_edges_explain);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return testutil_run(suite());
}
