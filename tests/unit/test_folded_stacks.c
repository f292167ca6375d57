/* test_folded_stacks.c - folded stacks on stores written with known values:
 * totals against the summed durations written, the frame order (process,
 * thread, NVTX outer to inner, API call, kernel), agreement with
 * nvtx_kern_sum's attribution, frame-name replacement, --weight=api, the
 * window and range filters, and the written text. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export/folded.h"
#include "export_store.h"
#include "report_capture.h"
#include "report_store.h"
#include "summary/summary.h"
#include "testutil.h"

#define TID(pid, tid) prof_global_tid((pid), (tid))

static struct prof_store *open_xs(void)
{
	const char *path = testutil_tmp_path("xs.sqlite");
	struct prof_store *s = NULL;
	struct prof_error err = { 0 };

	xs_write(path, false);
	ck_assert_msg(prof_store__open(path, &s, &err) == 0, "%s", err.msg);
	return s;
}

static void collect(struct prof_store *s, const struct folded_options *o, struct folded_stacks *st)
{
	struct prof_error err = { 0 };

	ck_assert_msg(folded__collect(s, o, st, &err) == 0, "%s", err.msg);
}

/* The weight of the stack with exactly these frames; -1 when absent. */
static int64_t weight_of(const struct folded_stacks *st, const char *frames)
{
	for (size_t i = 0; i < st->n; i++)
		if (strcmp(st->v[i].frames, frames) == 0)
			return (int64_t)st->v[i].weight;
	return -1;
}

static uint64_t sum_weights(const struct folded_stacks *st)
{
	uint64_t t = 0;

	for (size_t i = 0; i < st->n; i++)
		t += st->v[i].weight;
	return t;
}

START_TEST(folded_gpu_total_equals_summed_kernel_time)
{
	struct prof_store *s = open_xs();
	struct folded_stacks st;

	collect(s, NULL, &st);
	ck_assert_int_eq((int64_t)st.total_ns, xs_kernel_total_ns());
	ck_assert_int_eq((int64_t)sum_weights(&st), xs_kernel_total_ns());
	folded_stacks__exit(&st);
	prof_store__close(s);
}
END_TEST

START_TEST(folded_stack_runs_from_process_to_kernel)
{
	struct prof_store *s = open_xs();
	struct folded_stacks st;

	collect(s, NULL, &st);
	/* process "app;x" and kernel "kernel;B\nx" have their separators replaced */
	ck_assert_int_eq(weight_of(&st, "app:x;main;" XS_OUTER ";cudaLaunchKernel;kernelA"),
			 xs_launches[0].gpu_end - xs_launches[0].gpu_start);
	ck_assert_int_eq(weight_of(&st, "app:x;main;" XS_OUTER ";cudaLaunchKernel;kernel:B x"),
			 xs_launches[1].gpu_end - xs_launches[1].gpu_start);
	ck_assert_int_eq(weight_of(&st, "app:x;main;" XS_SECOND ";cuLaunchKernel;" XS_EVIL),
			 xs_launches[3].gpu_end - xs_launches[3].gpu_start);
	ck_assert_int_eq(weight_of(&st, "app:x;" FOLDED_NO_CALL ";orphan"),
			 XS_ORPHAN_END - XS_ORPHAN_START);
	ck_assert_uint_eq(st.n, 4);
	ck_assert_uint_eq(st.max_depth, 5);
	folded_stacks__exit(&st);
	prof_store__close(s);
}
END_TEST

/* Thread 1: outer [0, 10000) > mid [100, 5000) > inner [200, 300); long and
 * short both start at 30000; ended closes exactly when a call starts. Thread
 * 2's range covers everything and must never appear. */
static struct prof_store *write_nested(void)
{
	struct prof_writer *w = store_new("nested.sqlite");
	int64_t t1 = TID(10, 11), t2 = TID(10, 12);

	add_range(w, PROF_NVTX_PUSHPOP, "other_thread", 0, 1000000, t2);
	add_range(w, PROF_NVTX_PUSHPOP, "outer", 0, 10000, t1);
	add_range(w, PROF_NVTX_PUSHPOP, "mid", 100, 5000, t1);
	add_range(w, PROF_NVTX_PUSHPOP, "inner", 200, 300, t1);
	add_range(w, PROF_NVTX_PUSHPOP, "short", 30000, 35000, t1);
	add_range(w, PROF_NVTX_PUSHPOP, "long", 30000, 40000, t1);
	add_range(w, PROF_NVTX_PUSHPOP, "ended", 50000, 60000, t1);
	add_api(w, PROF_API_RUNTIME, "cudaLaunchKernel_v7000", 250, 260, 1, t1);
	add_kernel(w, "k1", 1000, 1040, 1, 10);
	add_api(w, PROF_API_RUNTIME, "cudaLaunchKernel_v7000", 400, 410, 2, t1);
	add_kernel(w, "k2", 2000, 2070, 2, 10);
	add_api(w, PROF_API_RUNTIME, "cudaLaunchKernel_v7000", 6000, 6010, 3, t1);
	add_kernel(w, "k3", 7000, 7090, 3, 10);
	add_api(w, PROF_API_RUNTIME, "cudaLaunchKernel_v7000", 20000, 20010, 4, t1);
	add_kernel(w, "k4", 21000, 21500, 4, 10);
	add_api(w, PROF_API_RUNTIME, "cudaLaunchKernel_v7000", 30000, 30010, 5, t1);
	add_kernel(w, "k5", 31000, 31011, 5, 10);
	add_api(w, PROF_API_RUNTIME, "cudaLaunchKernel_v7000", 60000, 60010, 6, t1);
	add_kernel(w, "k6", 61000, 61013, 6, 10);
	/* a second launch of k1 in the same ranges adds to the same stack */
	add_api(w, PROF_API_RUNTIME, "cudaLaunchKernel_v7000", 280, 290, 7, t1);
	add_kernel(w, "k1", 1100, 1160, 7, 10);
	return store_finish(w);
}

START_TEST(folded_nests_ranges_outer_to_inner)
{
	struct prof_store *s = write_nested();
	struct folded_stacks st;

	collect(s, NULL, &st);
	ck_assert_int_eq(weight_of(&st, "process 10;thread 11;outer;mid;inner;cudaLaunchKernel;k1"),
			 40 + 60);
	ck_assert_int_eq(weight_of(&st, "process 10;thread 11;outer;mid;cudaLaunchKernel;k2"), 70);
	ck_assert_int_eq(weight_of(&st, "process 10;thread 11;outer;cudaLaunchKernel;k3"), 90);
	ck_assert_int_eq(weight_of(&st, "process 10;thread 11;cudaLaunchKernel;k4"), 500);
	/* equal starts: the longer range is the outer one; start is inclusive */
	ck_assert_int_eq(weight_of(&st, "process 10;thread 11;long;short;cudaLaunchKernel;k5"), 11);
	/* a range ending when the call starts is closed */
	ck_assert_int_eq(weight_of(&st, "process 10;thread 11;cudaLaunchKernel;k6"), 13);
	ck_assert_uint_eq(st.n, 6);
	ck_assert_int_eq((int64_t)st.total_ns, 40 + 60 + 70 + 90 + 500 + 11 + 13);
	for (size_t i = 0; i < st.n; i++)
		ck_assert_ptr_null(strstr(st.v[i].frames, "other_thread"));
	folded_stacks__exit(&st);
	prof_store__close(s);
}
END_TEST

/* nvtx_kern_sum names the innermost range of a kernel's launch; the folded
 * stack's last range frame must be that range, with the same total. */
START_TEST(folded_innermost_range_agrees_with_nvtx_kern_sum)
{
	struct prof_store *s = write_nested();
	struct cap_sink *c = cap_sink__new();
	struct prof_error err = { 0 };
	struct folded_stacks st;
	struct cap_report *r;

	collect(s, NULL, &st);
	ck_assert_msg(summary__nvtx_kern_sum(s, &c->sink, &err) == 0, "%s", err.msg);
	r = cap_report(c, "nvtx_kern_sum");
	ck_assert_ptr_nonnull(r);
	ck_assert_int_gt(r->nrows, 0);
	for (int row = 0; row < r->nrows; row++) {
		const char *range = cap_cell(r, row, "NVTX Range")->s;
		const char *kernel = cap_cell(r, row, "Kernel Name")->s;
		char suffix[128];
		int64_t total = 0;

		snprintf(suffix, sizeof suffix, ";%s;cudaLaunchKernel;%s", range, kernel);
		for (size_t i = 0; i < st.n; i++) {
			size_t len = strlen(st.v[i].frames);

			if (len >= strlen(suffix) &&
			    strcmp(st.v[i].frames + len - strlen(suffix), suffix) == 0)
				total += (int64_t)st.v[i].weight;
		}
		ck_assert_msg(total == cap_cell(r, row, "Total Time (ns)")->i,
			      "%s/%s: folded %lld, nvtx_kern_sum %lld", range, kernel,
			      (long long)total, (long long)cap_cell(r, row, "Total Time (ns)")->i);
	}
	c->sink.destroy(&c->sink);
	folded_stacks__exit(&st);
	prof_store__close(s);
}
END_TEST

START_TEST(folded_weight_api_sums_call_durations)
{
	struct prof_store *s = open_xs();
	struct folded_options o = { .weight = FOLDED_WEIGHT_API };
	struct folded_stacks st;
	int64_t total = 0;

	collect(s, &o, &st);
	for (int i = 0; i < XS_NLAUNCH; i++)
		total += xs_launches[i].api_end - xs_launches[i].api_start;
	ck_assert_int_eq((int64_t)st.total_ns, total);
	ck_assert_int_eq((int64_t)sum_weights(&st), total);
	/* a call that launched one kernel ends in it; others end in the call */
	ck_assert_int_eq(weight_of(&st, "app:x;main;" XS_OUTER ";cudaLaunchKernel;kernelA"),
			 xs_launches[0].api_end - xs_launches[0].api_start);
	ck_assert_int_eq(weight_of(&st, "app:x;main;" XS_OUTER ";cudaMemcpyAsync"),
			 xs_launches[2].api_end - xs_launches[2].api_start);
	ck_assert_int_eq(weight_of(&st, "app:x;main;cudaDeviceSynchronize"),
			 xs_launches[5].api_end - xs_launches[5].api_start);
	ck_assert_int_eq(weight_of(&st, "app:x;" FOLDED_NO_CALL ";orphan"), -1);
	folded_stacks__exit(&st);
	prof_store__close(s);
}
END_TEST

START_TEST(folded_window_clips_kernel_time)
{
	struct prof_store *s = open_xs();
	/* kernelA runs 10000..20000 and kernel;B 20000..25000 after XS_T0 */
	struct folded_options o = { .filter = { .has_from = true, .from_ns = 15000,
						.has_to = true, .to_ns = 22000 } };
	struct folded_stacks st;

	collect(s, &o, &st);
	ck_assert_int_eq(weight_of(&st, "app:x;main;" XS_OUTER ";cudaLaunchKernel;kernelA"), 5000);
	ck_assert_int_eq(weight_of(&st, "app:x;main;" XS_OUTER ";cudaLaunchKernel;kernel:B x"), 2000);
	ck_assert_uint_eq(st.n, 2);
	ck_assert_int_eq((int64_t)st.total_ns, 7000);
	folded_stacks__exit(&st);
	prof_store__close(s);
}
END_TEST

START_TEST(folded_range_filter_keeps_launches_inside_the_range)
{
	struct prof_store *s = open_xs();
	struct folded_options o = { .filter = { .range_name = XS_SECOND } };
	struct folded_stacks st;

	collect(s, &o, &st);
	ck_assert_uint_eq(st.n, 1);
	ck_assert_str_eq(st.v[0].frames, "app:x;main;" XS_SECOND ";cuLaunchKernel;" XS_EVIL);
	ck_assert_int_eq((int64_t)st.total_ns, xs_launches[3].gpu_end - xs_launches[3].gpu_start);
	folded_stacks__exit(&st);
	prof_store__close(s);
}
END_TEST

START_TEST(folded_kernel_counts_once_when_runtime_and_driver_share_its_call)
{
	struct prof_writer *w = store_new("both.sqlite");
	int64_t t = TID(10, 11);
	struct folded_stacks st;
	struct prof_store *s;

	add_api(w, PROF_API_RUNTIME, "cudaLaunchKernel_v7000", 100, 200, 1, t);
	add_api(w, PROF_API_DRIVER, "cuLaunchKernel", 120, 180, 1, t);
	add_kernel(w, "k", 1000, 1300, 1, 10);
	add_api(w, PROF_API_DRIVER, "cuLaunchKernel", 400, 450, 2, t);
	add_kernel(w, "kd", 2000, 2050, 2, 10);
	s = store_finish(w);
	collect(s, NULL, &st);
	ck_assert_int_eq(weight_of(&st, "process 10;thread 11;cudaLaunchKernel;k"), 300);
	ck_assert_int_eq(weight_of(&st, "process 10;thread 11;cuLaunchKernel;kd"), 50);
	ck_assert_uint_eq(st.n, 2);
	folded_stacks__exit(&st);
	prof_store__close(s);
}
END_TEST

START_TEST(folded_frame_replaces_separators_and_controls)
{
	char *a = folded_frame__sanitize("a;b\r\nc\td\x1b[0m");
	char *b = folded_frame__sanitize("bad\xff");
	char *c = folded_frame__sanitize("");

	ck_assert_str_eq(a, "a:b  c d?[0m");
	ck_assert_str_eq(b, "bad\xef\xbf\xbd");
	ck_assert_str_eq(c, "[unnamed]");
	free(a);
	free(b);
	free(c);
}
END_TEST

/* The written text: one line per stack, "frames weight", in the order of the
 * stacks, weights summing to the total. */
START_TEST(folded_text_has_one_line_per_stack)
{
	struct prof_store *s = open_xs();
	struct folded_stacks st;
	char *text = NULL, *line, *save = NULL;
	size_t len = 0, lines = 0;
	uint64_t total = 0;
	FILE *f = open_memstream(&text, &len);

	collect(s, NULL, &st);
	ck_assert_int_eq(folded__write(&st, f), 0);
	fclose(f);
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *space = strrchr(line, ' ');

		ck_assert_ptr_nonnull(space);
		ck_assert_uint_eq(strspn(space + 1, "0123456789"), strlen(space + 1));
		ck_assert_uint_eq((size_t)(space - line), strlen(st.v[lines].frames));
		ck_assert_int_eq(strncmp(line, st.v[lines].frames, (size_t)(space - line)), 0);
		total += strtoull(space + 1, NULL, 10);
		lines++;
	}
	ck_assert_uint_eq(lines, st.n);
	ck_assert_uint_eq(total, st.total_ns);
	free(text);
	folded_stacks__exit(&st);
	prof_store__close(s);
}
END_TEST

/* Frame by frame, not byte by byte: thread "gpu" sorts before "gpu worker"
 * although ' ' < ';', so all stacks under one frame stay together. */
START_TEST(folded_stacks_sort_frame_by_frame)
{
	struct prof_writer *w = store_new("order.sqlite");
	int64_t t1 = TID(10, 11), t2 = TID(10, 12);
	struct folded_stacks st;
	struct prof_store *s;

	ck_assert_int_eq(prof_writer__thread_name(w, t1, "gpu"), 0);
	ck_assert_int_eq(prof_writer__thread_name(w, t2, "gpu worker"), 0);
	add_api(w, PROF_API_RUNTIME, "cudaLaunchKernel_v7000", 100, 110, 1, t2);
	add_kernel(w, "a", 1000, 1100, 1, 10);
	add_api(w, PROF_API_RUNTIME, "cudaLaunchKernel_v7000", 200, 210, 2, t1);
	add_kernel(w, "b", 2000, 2100, 2, 10);
	add_api(w, PROF_API_RUNTIME, "cudaMemcpy_v3020", 300, 310, 3, t1);
	add_kernel(w, "c", 3000, 3100, 3, 10);
	s = store_finish(w);
	collect(s, NULL, &st);
	ck_assert_uint_eq(st.n, 3);
	ck_assert_str_eq(st.v[0].frames, "process 10;gpu;cudaLaunchKernel;b");
	ck_assert_str_eq(st.v[1].frames, "process 10;gpu;cudaMemcpy;c");
	ck_assert_str_eq(st.v[2].frames, "process 10;gpu worker;cudaLaunchKernel;a");
	folded_stacks__exit(&st);
	prof_store__close(s);
}
END_TEST

START_TEST(folded_weight_names_parse)
{
	ck_assert_int_eq(folded_weight__parse("gpu"), FOLDED_WEIGHT_GPU);
	ck_assert_int_eq(folded_weight__parse("api"), FOLDED_WEIGHT_API);
	ck_assert_int_eq(folded_weight__parse("cpu"), -1);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("folded_stacks");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, folded_gpu_total_equals_summed_kernel_time);
	tcase_add_test(tc, folded_stack_runs_from_process_to_kernel);
	tcase_add_test(tc, folded_nests_ranges_outer_to_inner);
	tcase_add_test(tc, folded_innermost_range_agrees_with_nvtx_kern_sum);
	tcase_add_test(tc, folded_weight_api_sums_call_durations);
	tcase_add_test(tc, folded_window_clips_kernel_time);
	tcase_add_test(tc, folded_range_filter_keeps_launches_inside_the_range);
	tcase_add_test(tc, folded_kernel_counts_once_when_runtime_and_driver_share_its_call);
	tcase_add_test(tc, folded_frame_replaces_separators_and_controls);
	tcase_add_test(tc, folded_text_has_one_line_per_stack);
	tcase_add_test(tc, folded_stacks_sort_frame_by_frame);
	tcase_add_test(tc, folded_weight_names_parse);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return testutil_run(suite());
}
