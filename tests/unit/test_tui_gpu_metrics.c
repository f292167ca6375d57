/* test_tui_gpu_metrics.c - the sampled GPU metrics in perfkit top, without
 * a terminal: each second's value is the mean of the samples weighed by
 * their periods (tui/top_gpu_metrics.c), the rows and their labels follow
 * what the capture has, a second no sample covers is N/A, the history is
 * drawn against 100%, the rates panel makes room for them, and the source
 * reads them from a store, live and in a replay. */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "prof/store.h"
#include "sparkline.h"
#include "testutil.h"
#include "top_gpu_metrics.h"
#include "top_layout.h"
#include "top_model.h"
#include "top_source.h"

#define SEC 1000000000LL
#define BASE (1700000000LL * SEC)

START_TEST(tui_gm_names_are_nsys_names)
{
	ck_assert_int_eq(top_gpu_metrics__kind("SMs Active [Throughput %]"), TOP_GM_SM_ACTIVE);
	ck_assert_int_eq(top_gpu_metrics__kind("Tensor Active [Throughput %]"), TOP_GM_TENSOR_ACTIVE);
	ck_assert_int_eq(top_gpu_metrics__kind("DRAM Read Bandwidth [Throughput %]"), TOP_GM_DRAM_READ);
	ck_assert_int_eq(top_gpu_metrics__kind("DRAM Write Bandwidth [Throughput %]"), TOP_GM_DRAM_WRITE);
	ck_assert_int_eq(top_gpu_metrics__kind("SM Issue [Throughput %]"), -1);
	ck_assert_int_eq(top_gpu_metrics__kind(NULL), -1);
}
END_TEST

START_TEST(tui_gm_a_second_is_the_mean_weighed_by_each_samples_period)
{
	struct top_gpu_metrics g;
	char label[32], value[32];

	top_gpu_metrics__init(&g);
	/* the first sample opens the first period and counts for nothing */
	top_gpu_metrics__add(&g, BASE, 0, TOP_GM_SM_ACTIVE, 99, 1700000000);
	/* 100 us at 10%, then 300 us at 50%: (10 x 100 + 50 x 300) / 400 = 40% */
	top_gpu_metrics__add(&g, BASE + 100000, 0, TOP_GM_SM_ACTIVE, 10, 1700000000);
	top_gpu_metrics__add(&g, BASE + 400000, 0, TOP_GM_SM_ACTIVE, 50, 1700000000);
	ck_assert_int_eq(top_gpu_metrics__rows(&g), 1);
	top_gpu_metrics__row(&g, 0, 1700000000, label, sizeof label, value, sizeof value);
	ck_assert_str_eq(label, "SM active");
	ck_assert_str_eq(value, "40.0%");
	/* a second no sample covers */
	top_gpu_metrics__row(&g, 0, 1700000001, label, sizeof label, value, sizeof value);
	ck_assert_str_eq(value, "N/A");
}
END_TEST

START_TEST(tui_gm_samplers_keep_their_own_periods)
{
	struct top_gpu_metrics g;
	char label[32], value[32];

	top_gpu_metrics__init(&g);
	/* GPU 0 at 20% and GPU 1 at 60% over the same 100 us: 40% */
	for (int64_t type = 0; type < 2; type++) {
		top_gpu_metrics__add(&g, BASE, type, TOP_GM_SM_ACTIVE, 0, 1700000000);
		top_gpu_metrics__add(&g, BASE + 100000, type, TOP_GM_SM_ACTIVE, type ? 60 : 20, 1700000000);
	}
	top_gpu_metrics__row(&g, 0, 1700000000, label, sizeof label, value, sizeof value);
	ck_assert_str_eq(value, "40.0%");
}
END_TEST

START_TEST(tui_gm_rows_follow_the_metrics_the_capture_has)
{
	struct top_gpu_metrics g;
	char label[32], value[32];

	top_gpu_metrics__init(&g);
	ck_assert_int_eq(top_gpu_metrics__rows(&g), 0);
	/* one sample of four metrics, then the next: they share its period */
	for (int i = 0; i < 2; i++) {
		int64_t t = BASE + i * 1000;

		top_gpu_metrics__add(&g, t, 0, TOP_GM_SM_ACTIVE, 70, 1700000000);
		top_gpu_metrics__add(&g, t, 0, TOP_GM_TENSOR_ACTIVE, 30, 1700000000);
		top_gpu_metrics__add(&g, t, 0, TOP_GM_DRAM_READ, 45, 1700000000);
		top_gpu_metrics__add(&g, t, 0, TOP_GM_DRAM_WRITE, 15, 1700000000);
	}
	ck_assert_int_eq(top_gpu_metrics__rows(&g), 3);
	top_gpu_metrics__row(&g, 1, 1700000000, label, sizeof label, value, sizeof value);
	ck_assert_str_eq(label, "tensor pipe");
	ck_assert_str_eq(value, "30.0%");
	top_gpu_metrics__row(&g, 2, 1700000000, label, sizeof label, value, sizeof value);
	ck_assert_str_eq(label, "DRAM r+w");
	ck_assert_str_eq(value, "60.0%");
}
END_TEST

START_TEST(tui_gm_history_is_drawn_against_one_hundred_percent)
{
	struct top_gpu_metrics g;
	int64_t v[4];
	char flat[64], scaled[64];
	int64_t full;

	top_gpu_metrics__init(&g);
	top_gpu_metrics__add(&g, BASE - 1000, 0, TOP_GM_SM_ACTIVE, 20, 1699999999);
	for (int s = 0; s < 4; s++)
		top_gpu_metrics__add(&g, BASE + s * SEC, 0, TOP_GM_SM_ACTIVE, 20, 1700000000 + s);
	full = top_gpu_metrics__window(&g, 0, 1700000003, 4, v);
	ck_assert_int_eq(full, 10000);
	ck_assert_int_eq(v[0], 2000);
	ck_assert_int_eq(v[3], 2000);
	/* a flat 20% is a low bar, not the full one a self-scaled line shows */
	sparkline__render_max(v, 4, full, false, flat, sizeof flat);
	sparkline__render(v, 4, false, scaled, sizeof scaled);
	ck_assert_str_eq(flat, ",,,,");
	ck_assert_str_eq(scaled, "####");
}
END_TEST

START_TEST(tui_gm_rates_panel_makes_room_and_gives_it_up_first)
{
	struct top_layout plain, with;

	top_layout__compute(100, 40, &plain);
	top_layout__compute_metrics(100, 40, 3, &with);
	ck_assert_int_eq(with.metric_rows, 3);
	ck_assert_int_eq(with.rates.h, plain.rates.h + 3);
	ck_assert_int_eq(with.kernels.y, plain.kernels.y + 3);
	ck_assert_int_le(with.kernels.y + with.kernels.h + with.stacks.h + with.ranges.h, with.footer.y);
	/* the smallest terminal keeps the rest as it was */
	top_layout__compute(TOP_MIN_COLS, TOP_MIN_ROWS, &plain);
	top_layout__compute_metrics(TOP_MIN_COLS, TOP_MIN_ROWS, 3, &with);
	ck_assert_int_eq(with.metric_rows, 0);
	ck_assert_int_eq(with.kernel_rows, plain.kernel_rows);
}
END_TEST

/* A store with device 0 of process 7 sampled every 100 us for 2 s: SMs
 * Active 25% in the first second and 75% in the second; one kernel a ms. */
static void write_sampled(const char *path)
{
	struct prof_writer *w = NULL;
	struct prof_error err = { 0 };
	struct prof_gpu_metric_type t = { .type_id = 0, .type_name = "GPU", .metric_id = 3,
					  .metric_name = "SMs Active [Throughput %]", .global_pid = prof_global_pid(7) };
	struct prof_gpu_metric_type other = t;

	other.metric_id = 4;
	other.metric_name = "GR Active [Throughput %]";
	ck_assert_int_eq(prof_writer__create(path, PROF_WRITER_OVERWRITE, &w, &err), 0);
	ck_assert_int_eq(prof_writer__gpu_metric_type(w, &t), 0);
	ck_assert_int_eq(prof_writer__gpu_metric_type(w, &other), 0);
	for (int64_t ts = BASE; ts <= BASE + 2 * SEC; ts += 100000) {
		struct prof_gpu_metric m = { .timestamp_ns = ts, .type_id = 0, .metric_id = 3,
					     .value = ts <= BASE + SEC ? 25 : 75 };
		struct prof_gpu_metric gr = { .timestamp_ns = ts, .type_id = 0, .metric_id = 4, .value = 99 };

		ck_assert_int_eq(prof_writer__gpu_metric(w, &m), 0);
		ck_assert_int_eq(prof_writer__gpu_metric(w, &gr), 0);
	}
	for (int64_t ts = BASE; ts < BASE + 2 * SEC; ts += 1000000) {
		struct prof_kernel k = { .start_ns = ts, .end_ns = ts + 1000, .global_pid = prof_global_pid(7) };

		k.demangled_name = k.short_name = prof_writer__string(w, "k");
		ck_assert_int_eq(prof_writer__kernel(w, &k), 0);
	}
	ck_assert_int_eq(prof_writer__finish(w, &err), 0);
}

START_TEST(tui_gm_source_reads_the_samples_live_and_in_a_replay)
{
	char path[512], label[32], value[32];
	struct prof_error err = { 0 };
	struct top_source *s = NULL;
	struct top_model m;

	snprintf(path, sizeof path, "%s", testutil_tmp_path("sampled.sqlite"));
	write_sampled(path);
	ck_assert_int_eq(top_model__init(&m), 0);
	ck_assert_int_eq(top_source__open(path, TOP_READ_ROWID, &s, &err), 0);
	ck_assert_int_eq(top_source__read(s, &m, INT64_MAX, &err), 1);
	top_source__close(s);
	/* only SMs Active is shown; GR Active is not one of top's */
	ck_assert_int_eq(top_gpu_metrics__rows(&m.gpu_metrics), 1);
	top_gpu_metrics__row(&m.gpu_metrics, 0, 1700000000, label, sizeof label, value, sizeof value);
	ck_assert_str_eq(value, "25.0%");
	top_gpu_metrics__row(&m.gpu_metrics, 0, 1700000001, label, sizeof label, value, sizeof value);
	ck_assert_str_eq(value, "75.0%");
	top_model__exit(&m);

	/* a replay half way through has seen the first second only */
	ck_assert_int_eq(top_model__init(&m), 0);
	ck_assert_int_eq(top_source__open(path, TOP_READ_REPLAY, &s, &err), 0);
	ck_assert_int_eq(top_source__replay(s, &m, BASE + SEC + SEC / 2, INT64_MAX, &err), 1);
	top_gpu_metrics__row(&m.gpu_metrics, 0, 1700000000, label, sizeof label, value, sizeof value);
	ck_assert_str_eq(value, "25.0%");
	top_source__close(s);
	top_model__exit(&m);
}
END_TEST

START_TEST(tui_gm_a_capture_without_samples_has_no_rows)
{
	char path[512];
	struct prof_error err = { 0 };
	struct prof_writer *w = NULL;
	struct top_source *s = NULL;
	struct top_model m;
	struct prof_kernel k = { .start_ns = BASE, .end_ns = BASE + 1000 };

	snprintf(path, sizeof path, "%s", testutil_tmp_path("plain.sqlite"));
	ck_assert_int_eq(prof_writer__create(path, PROF_WRITER_OVERWRITE, &w, &err), 0);
	ck_assert_int_eq(prof_writer__kernel(w, &k), 0);
	ck_assert_int_eq(prof_writer__finish(w, &err), 0);
	ck_assert_int_eq(top_model__init(&m), 0);
	ck_assert_int_eq(top_source__open(path, TOP_READ_ROWID, &s, &err), 0);
	ck_assert_int_eq(top_source__read(s, &m, INT64_MAX, &err), 1);
	ck_assert_int_eq(m.kernel_count, 1);
	ck_assert_int_eq(top_gpu_metrics__rows(&m.gpu_metrics), 0);
	top_source__close(s);
	top_model__exit(&m);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("tui_gpu_metrics");
	TCase *tc = tcase_create("gpu_metrics");

	tcase_add_test(tc, tui_gm_names_are_nsys_names);
	tcase_add_test(tc, tui_gm_a_second_is_the_mean_weighed_by_each_samples_period);
	tcase_add_test(tc, tui_gm_samplers_keep_their_own_periods);
	tcase_add_test(tc, tui_gm_rows_follow_the_metrics_the_capture_has);
	tcase_add_test(tc, tui_gm_history_is_drawn_against_one_hundred_percent);
	tcase_add_test(tc, tui_gm_rates_panel_makes_room_and_gives_it_up_first);
	tcase_add_test(tc, tui_gm_source_reads_the_samples_live_and_in_a_replay);
	tcase_add_test(tc, tui_gm_a_capture_without_samples_has_no_rows);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return testutil_run(suite());
}
