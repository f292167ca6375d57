/* test_html_svg.c - the numbers of the HTML page's SVG pictures
 * (html_svg__fixed) written as printf's "%.1f" and "%.2f" write them:
 * every half on the grid of each count of decimals (where the exact
 * binary value decides the rounding), values just beside them, the
 * picture's whole range in fine steps, negatives, -0, the very large and
 * the not finite. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export/html_svg.h"
#include "testutil.h"

static long mismatches;

static void same_as_printf(double v, int decimals)
{
	char want[HTML_SVG_FIXED_MAX], got[HTML_SVG_FIXED_MAX];

	snprintf(want, sizeof want, "%.*f", decimals, v);
	ck_assert_ptr_eq(html_svg__fixed(got, v, decimals), got);
	if (strcmp(want, got) && mismatches++ < 5)
		fprintf(stderr, "%.17g, %d decimals: printf %s, html_svg__fixed %s\n", v, decimals, want, got);
}

START_TEST(halves_and_their_neighbours)
{
	mismatches = 0;
	/* 0.005, 0.015, ... and 0.05, 0.15, ... up past the picture's width */
	for (int d = 1; d <= 2; d++) {
		double unit = d == 1 ? 0.1 : 0.01;

		for (long k = 0; k < 150000; k++) {
			double half = ((double)k + 0.5) * unit;

			same_as_printf(half, d);
			same_as_printf(nextafter(half, 0), d);
			same_as_printf(nextafter(half, INFINITY), d);
			same_as_printf((double)k * unit, d);
		}
	}
	ck_assert_int_eq(mismatches, 0);
}
END_TEST

START_TEST(a_picture_range_and_odd_values)
{
	static const double odd[] = { 0.0, -0.0, -0.001, -0.004, -0.05, -1240.0, 0.4, 1240.0, 1e7,
				      9999999.995, 1e9, 1e15, 1e300, NAN, INFINITY, -INFINITY, 5e-324 };

	mismatches = 0;
	srand(11);
	for (long i = 0; i < 300000; i++) {
		double v = (double)rand() / RAND_MAX * 1300.0;

		same_as_printf(v, 1);
		same_as_printf(v, 2);
		same_as_printf(ldexp((double)rand(), -(rand() % 48)), 2);
	}
	for (size_t i = 0; i < sizeof odd / sizeof odd[0]; i++)
		for (int d = 0; d <= 3; d++)
			same_as_printf(odd[i], d);
	ck_assert_int_eq(mismatches, 0);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("html_svg");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, halves_and_their_neighbours);
	tcase_add_test(tc, a_picture_range_and_odd_values);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return testutil_run(suite());
}
