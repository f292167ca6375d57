/* test_tui_layout.c - perfkit top's layout: terminal size -> panel
 * rectangles, a pure function checked without a terminal. */
#include <check.h>
#include <stdbool.h>

#include "sparkline.h"
#include "testutil.h"
#include "top_layout.h"

static bool inside(const struct top_rect *r, int cols, int rows)
{
	return r->h == 0 || (r->x >= 0 && r->y >= 0 && r->w > 0 && r->x + r->w <= cols &&
			     r->y + r->h <= rows);
}

static bool overlap(const struct top_rect *a, const struct top_rect *b)
{
	if (!a->h || !b->h)
		return false;
	return a->x < b->x + b->w && b->x < a->x + a->w && a->y < b->y + b->h &&
	       b->y < a->y + a->h;
}

static void panels(const struct top_layout *l, const struct top_rect *out[6])
{
	out[0] = &l->header;
	out[1] = &l->rates;
	out[2] = &l->kernels;
	out[3] = &l->stacks;
	out[4] = &l->ranges;
	out[5] = &l->footer;
}

START_TEST(layout_says_too_small_below_the_minimum)
{
	struct top_layout l;

	top_layout__compute(TOP_MIN_COLS - 1, 40, &l);
	ck_assert(l.too_small);
	top_layout__compute(120, TOP_MIN_ROWS - 1, &l);
	ck_assert(l.too_small);
	top_layout__compute(0, 0, &l);
	ck_assert(l.too_small);
	ck_assert_int_eq(l.kernels.h, 0);
	top_layout__compute(TOP_MIN_COLS, TOP_MIN_ROWS, &l);
	ck_assert(!l.too_small);
}
END_TEST

START_TEST(layout_panels_stay_on_screen_and_never_overlap)
{
	for (int cols = TOP_MIN_COLS; cols <= 300; cols += 7) {
		for (int rows = TOP_MIN_ROWS; rows <= 120; rows += 3) {
			struct top_layout l;
			const struct top_rect *p[6];

			top_layout__compute(cols, rows, &l);
			panels(&l, p);
			ck_assert(!l.too_small);
			for (int i = 0; i < 6; i++) {
				ck_assert_msg(inside(p[i], cols, rows), "panel %d outside %dx%d", i,
					      cols, rows);
				for (int j = i + 1; j < 6; j++)
					ck_assert_msg(!overlap(p[i], p[j]),
						      "panels %d and %d overlap at %dx%d", i, j, cols,
						      rows);
			}
		}
	}
}
END_TEST

START_TEST(layout_uses_every_row)
{
	for (int rows = TOP_MIN_ROWS; rows <= 100; rows++) {
		struct top_layout l;
		int nvtx;

		top_layout__compute(100, rows, &l);
		/* stacked NVTX panels (narrow): their heights add up */
		nvtx = l.stacks.h + l.ranges.h;
		ck_assert_int_eq(l.header.h + l.rates.h + l.kernels.h + nvtx + l.footer.h, rows);
		ck_assert_int_eq(l.footer.y, rows - 1);
	}
}
END_TEST

START_TEST(layout_gpu_panel_for_several_gpus_only)
{
	struct top_layout l;

	top_layout__compute_gpus(120, 50, 1, &l);
	ck_assert_int_eq(l.gpus.h, 0);
	top_layout__compute_gpus(120, 50, 3, &l);
	ck_assert_int_eq(l.gpu_rows, 3);
	ck_assert_int_eq(l.gpus.h, 4);
	ck_assert_int_eq(l.gpus.y, l.rates.y + l.rates.h);
	ck_assert_int_eq(l.kernels.y, l.gpus.y + l.gpus.h);
	top_layout__compute_gpus(120, 50, 40, &l);
	ck_assert_int_eq(l.gpu_rows, TOP_GPU_MAX_ROWS);
}
END_TEST

START_TEST(layout_gpu_panel_leaves_the_kernel_table_its_rows)
{
	for (int rows = TOP_MIN_ROWS; rows <= 80; rows++)
		for (int gpus = 2; gpus <= 12; gpus += 5) {
			struct top_layout l;
			const struct top_rect *p[6];

			top_layout__compute_gpus(100, rows, gpus, &l);
			ck_assert_int_ge(l.kernels.h, TOP_KERNEL_MIN_ROWS);
			ck_assert_int_eq(l.header.h + l.rates.h + l.gpus.h + l.kernels.h + l.stacks.h +
					 l.ranges.h + l.footer.h, rows);
			panels(&l, p);
			for (int i = 0; i < 6; i++)
				ck_assert(!overlap(&l.gpus, p[i]));
		}
}
END_TEST

START_TEST(layout_wide_terminal_puts_nvtx_panels_side_by_side)
{
	struct top_layout l;

	top_layout__compute(TOP_WIDE_COLS, 50, &l);
	ck_assert_int_gt(l.stacks.h, 0);
	ck_assert_int_eq(l.stacks.y, l.ranges.y);
	ck_assert_int_eq(l.stacks.h, l.ranges.h);
	ck_assert_int_eq(l.stacks.x + l.stacks.w, l.ranges.x);
	ck_assert_int_eq(l.ranges.x + l.ranges.w, TOP_WIDE_COLS);
}
END_TEST

START_TEST(layout_narrow_terminal_stacks_nvtx_panels)
{
	struct top_layout l;

	top_layout__compute(TOP_WIDE_COLS - 1, 50, &l);
	ck_assert_int_gt(l.stacks.h, 0);
	ck_assert_int_eq(l.stacks.w, TOP_WIDE_COLS - 1);
	ck_assert_int_eq(l.ranges.y, l.stacks.y + l.stacks.h);
	/* each keeps a title and three rows */
	ck_assert_int_ge(l.stacks.h, 4);
	ck_assert_int_ge(l.ranges.h, 4);
}
END_TEST

START_TEST(layout_short_terminal_drops_nvtx_before_kernel_rows)
{
	struct top_layout l;

	top_layout__compute(150, TOP_MIN_ROWS, &l);
	ck_assert_int_eq(l.stacks.h, 0);
	ck_assert_int_eq(l.ranges.h, 0);
	ck_assert_int_eq(l.kernel_rows, l.kernels.h - 2);
	ck_assert_int_gt(l.kernel_rows, 4);
	for (int rows = TOP_MIN_ROWS; rows < 80; rows++) {
		top_layout__compute(80, rows, &l);
		ck_assert_int_ge(l.kernel_rows, TOP_KERNEL_MIN_ROWS - 2);
	}
}
END_TEST

START_TEST(layout_kernel_table_grows_with_the_terminal)
{
	struct top_layout small, big;

	top_layout__compute(100, 30, &small);
	top_layout__compute(100, 60, &big);
	ck_assert_int_gt(big.kernel_rows, small.kernel_rows);
}
END_TEST

START_TEST(layout_sparkline_fills_the_rates_panel)
{
	struct top_layout l;

	top_layout__compute(100, 30, &l);
	ck_assert_int_eq(l.spark_x, TOP_RATE_LABEL_COLS);
	ck_assert_int_eq(l.spark_x + l.spark_w, 99);
	/* never wider than the history it draws */
	top_layout__compute(1000, 30, &l);
	ck_assert_int_eq(l.spark_w, SPARK_RING_LEN);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("tui_layout");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, layout_says_too_small_below_the_minimum);
	tcase_add_test(tc, layout_panels_stay_on_screen_and_never_overlap);
	tcase_add_test(tc, layout_uses_every_row);
	tcase_add_test(tc, layout_gpu_panel_for_several_gpus_only);
	tcase_add_test(tc, layout_gpu_panel_leaves_the_kernel_table_its_rows);
	tcase_add_test(tc, layout_wide_terminal_puts_nvtx_panels_side_by_side);
	tcase_add_test(tc, layout_narrow_terminal_stacks_nvtx_panels);
	tcase_add_test(tc, layout_short_terminal_drops_nvtx_before_kernel_rows);
	tcase_add_test(tc, layout_kernel_table_grows_with_the_terminal);
	tcase_add_test(tc, layout_sparkline_fills_the_rates_panel);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return testutil_run(suite());
}
