/* test_html_flamegraph.c - the flame graph of the HTML report drawn from
 * folded stacks built by hand: widths follow weights, common prefixes share
 * one frame, names are escaped, hair-thin frames are left out. */
#include <check.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export/folded.h"
#include "testutil.h"

#define WIDTH 1200.0

static char *draw(struct folded_stack *v, size_t n, size_t depth)
{
	struct folded_stacks st = { .v = v, .n = n, .max_depth = depth };
	char *svg = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&svg, &len);

	for (size_t i = 0; i < n; i++)
		st.total_ns += v[i].weight;
	ck_assert_int_eq(flamegraph__write_svg(&st, "all", f), 0);
	fclose(f);
	return svg;
}

/* Occurrences of a frame (its tooltip starts "<title>NAME ("). */
static int frames_named(const char *svg, const char *name)
{
	char key[256];
	int n = 0;

	snprintf(key, sizeof key, "<title>%s (", name);
	for (const char *p = svg; (p = strstr(p, key)) != NULL; p++)
		n++;
	return n;
}

/* Whether a frame named name is drawn width wide. */
static bool has_frame(const char *svg, const char *name, double width)
{
	char key[256];

	snprintf(key, sizeof key, "<title>%s (", name);
	for (const char *p = svg; (p = strstr(p, key)) != NULL; p++) {
		const char *w = strstr(p, "width=\"");

		if (w && strtod(w + 7, NULL) > width - 0.01 && strtod(w + 7, NULL) < width + 0.01)
			return true;
	}
	return false;
}

START_TEST(flamegraph_frame_width_is_proportional_to_weight)
{
	struct folded_stack v[] = {
		{ "proc;thread;cudaLaunchKernel;gemm", 300 },
		{ "proc;thread;cudaLaunchKernel;relu", 100 },
	};
	char *svg = draw(v, 2, 4);

	ck_assert(has_frame(svg, "all", WIDTH));
	ck_assert(has_frame(svg, "proc", WIDTH));
	ck_assert(has_frame(svg, "gemm", WIDTH * 300 / 400));
	ck_assert(has_frame(svg, "relu", WIDTH * 100 / 400));
	ck_assert_ptr_nonnull(strstr(svg, "<title>gemm (300 ns, 75.00%)</title>"));
	free(svg);
}
END_TEST

START_TEST(flamegraph_common_prefixes_share_one_frame)
{
	struct folded_stack v[] = {
		{ "proc;other;cudaLaunchKernel;a", 10 },
		{ "proc;thread;step;cudaLaunchKernel;a", 10 },
		{ "proc;thread;step;cudaLaunchKernel;b", 10 },
		{ "proc;thread;step;cudaMemcpy", 10 },
	};
	char *svg = draw(v, 4, 5);

	ck_assert_int_eq(frames_named(svg, "proc"), 1);
	ck_assert_int_eq(frames_named(svg, "thread"), 1);
	ck_assert_int_eq(frames_named(svg, "step"), 1);
	/* the same call under two threads is two frames */
	ck_assert_int_eq(frames_named(svg, "cudaLaunchKernel"), 2);
	ck_assert_int_eq(frames_named(svg, "a"), 2);
	ck_assert(has_frame(svg, "step", WIDTH * 30 / 40));
	ck_assert(has_frame(svg, "cudaLaunchKernel", WIDTH * 20 / 40));
	free(svg);
}
END_TEST

START_TEST(flamegraph_escapes_frame_names)
{
	struct folded_stack v[] = {
		{ "p&q;t;cudaLaunchKernel;<script>alert(1)</script>", 1000 },
	};
	char *svg = draw(v, 1, 4);

	ck_assert_ptr_null(strstr(svg, "<script"));
	ck_assert_ptr_null(strstr(svg, "p&q"));
	ck_assert_int_eq(frames_named(svg, "&lt;script&gt;alert(1)&lt;/script&gt;"), 1);
	ck_assert_int_eq(frames_named(svg, "p&amp;q"), 1);
	free(svg);
}
END_TEST

START_TEST(flamegraph_leaves_out_frames_narrower_than_the_minimum)
{
	struct folded_stack v[] = {
		{ "p;t;big", 1000000 },
		{ "p;t;tiny", 1 },
	};
	char *svg = draw(v, 2, 3);

	ck_assert_int_eq(frames_named(svg, "big"), 1);
	ck_assert_int_eq(frames_named(svg, "tiny"), 0);
	free(svg);
}
END_TEST

START_TEST(flamegraph_cuts_labels_to_the_frame_width)
{
	char long_name[400];
	struct folded_stack v[2];
	char *svg, *text;

	memset(long_name, 'x', sizeof long_name - 1);
	long_name[sizeof long_name - 1] = '\0';
	memcpy(long_name, "p;", 2);
	v[0] = (struct folded_stack){ long_name, 1 };
	v[1] = (struct folded_stack){ "q;y", 1 };
	svg = draw(v, 2, 2);
	/* the long frame is half the width: its label ends in ".." well short of
	 * its name, while the tooltip keeps all of it */
	text = strstr(strstr(svg, "<title>xxxx"), "<text");
	ck_assert_ptr_nonnull(text);
	ck_assert_ptr_nonnull(strstr(text, "..</text>"));
	ck_assert_int_lt(strstr(text, "</text>") - text, 200);
	ck_assert_ptr_nonnull(strstr(svg, long_name + 2));
	free(svg);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("html_flamegraph");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, flamegraph_frame_width_is_proportional_to_weight);
	tcase_add_test(tc, flamegraph_common_prefixes_share_one_frame);
	tcase_add_test(tc, flamegraph_escapes_frame_names);
	tcase_add_test(tc, flamegraph_leaves_out_frames_narrower_than_the_minimum);
	tcase_add_test(tc, flamegraph_cuts_labels_to_the_frame_width);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return testutil_run(suite());
}
