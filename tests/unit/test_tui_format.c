/* test_tui_format.c - the small pure pieces of perfkit top's screen:
 * text cut to its column, sparkline glyphs and the rate
 * ring, and NVML's absence shown as invalid metrics rather than zeros. */
#include <check.h>
#include <locale.h>
#include <string.h>

#include "nvml.h"
#include "sparkline.h"
#include "testutil.h"
#include "text_width.h"

START_TEST(text_fit_cuts_on_characters_and_marks_the_cut)
{
	char b[64];

	ck_assert_int_eq(text__fit(b, sizeof b, "short", 10, TEXT_KEEP_HEAD, true), 5);
	ck_assert_str_eq(b, "short");
	ck_assert_int_eq(text__fit(b, sizeof b, "void kernel<float>", 8, TEXT_KEEP_HEAD, true), 8);
	ck_assert_str_eq(b, "void ke\u2026");
	ck_assert_int_eq(text__fit(b, sizeof b, "a > b > forward", 9, TEXT_KEEP_TAIL, true), 9);
	ck_assert_str_eq(b, "\u2026 forward");
	/* a multibyte character is kept whole or dropped whole */
	ck_assert_int_eq(text__fit(b, sizeof b, "\u00e9\u00e9\u00e9\u00e9", 3, TEXT_KEEP_HEAD, true), 3);
	ck_assert_str_eq(b, "\u00e9\u00e9\u2026");
	ck_assert_int_eq(text__fit(b, sizeof b, "x", 0, TEXT_KEEP_HEAD, true), 0);
	ck_assert_str_eq(b, "");
}
END_TEST

START_TEST(text_fit_without_utf8_shows_ascii_only)
{
	char b[64];

	ck_assert_int_eq(text__fit(b, sizeof b, "caf\u00e9", 10, TEXT_KEEP_HEAD, false), 4);
	ck_assert_str_eq(b, "caf?");
	ck_assert_int_eq(text__fit(b, sizeof b, "abcdefghij", 6, TEXT_KEEP_HEAD, false), 6);
	ck_assert_str_eq(b, "abc...");
}
END_TEST

START_TEST(text_width_counts_wide_characters_twice)
{
	ck_assert_int_eq(text__width("abc", true), 3);
	ck_assert_int_eq(text__width("\u6f22\u5b57", true), 4);
	ck_assert_int_eq(text__width("\xEF\xBF\xBD", true), 1);
}
END_TEST

START_TEST(sparkline_scales_to_the_maximum_and_leaves_zero_blank)
{
	int64_t v[5] = { 0, 1, 50, 100, 0 };
	char out[64];

	sparkline__render(v, 5, true, out, sizeof out);
	ck_assert_str_eq(out, " \u2581\u2585\u2588 ");
	sparkline__render(v, 5, false, out, sizeof out);
	ck_assert_str_eq(out, " .=# ");
	/* too small a buffer: whole glyphs only */
	ck_assert_uint_eq(sparkline__render(v, 5, true, out, 5), 4);
}
END_TEST

START_TEST(spark_ring_keeps_the_last_buckets_only)
{
	struct spark_ring r;
	int64_t w[3];

	spark_ring__init(&r);
	spark_ring__add(&r, 10, 5);
	spark_ring__add(&r, 10, 2);
	spark_ring__add(&r, 12, 1);
	ck_assert_int_eq(spark_ring__get(&r, 10), 7);
	ck_assert_int_eq(spark_ring__get(&r, 11), 0);
	spark_ring__window(&r, 12, 3, w);
	ck_assert_int_eq(w[0], 7);
	ck_assert_int_eq(w[2], 1);
	/* a late event for a bucket still in the ring counts */
	spark_ring__add(&r, 11, 3);
	ck_assert_int_eq(spark_ring__get(&r, 11), 3);
	/* moving far ahead forgets everything older than the ring */
	spark_ring__add(&r, 12 + SPARK_RING_LEN, 4);
	ck_assert_int_eq(spark_ring__get(&r, 12), 0);
	ck_assert_int_eq(spark_ring__get(&r, 12 + SPARK_RING_LEN), 4);
	spark_ring__add(&r, 12, 9); /* too old now: ignored */
	ck_assert_int_eq(spark_ring__get(&r, 12), 0);
	ck_assert_int_eq(spark_ring__get(&r, 13 + SPARK_RING_LEN), 0);
}
END_TEST

START_TEST(nvml_missing_library_gives_invalid_metrics_not_zeros)
{
	struct nvml_sample s;
	const char *why = NULL;
	struct nvml *n = nvml__open("libperfkit-no-such-nvml.so.1", NULL, &why);

	ck_assert_ptr_null(n);
	ck_assert_ptr_nonnull(why);
	memset(&s, 0xFF, sizeof s);
	nvml__sample(n, &s);
	ck_assert(!s.name_valid);
	ck_assert(!s.util_valid);
	ck_assert(!s.memory_valid);
	ck_assert(!s.power_valid);
	ck_assert(!s.sm_clock_valid);
	nvml__close(n);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("tui_format");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, text_fit_cuts_on_characters_and_marks_the_cut);
	tcase_add_test(tc, text_fit_without_utf8_shows_ascii_only);
	tcase_add_test(tc, text_width_counts_wide_characters_twice);
	tcase_add_test(tc, sparkline_scales_to_the_maximum_and_leaves_zero_blank);
	tcase_add_test(tc, spark_ring_keeps_the_last_buckets_only);
	tcase_add_test(tc, nvml_missing_library_gives_invalid_metrics_not_zeros);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	/* wcwidth needs a UTF-8 locale; C.UTF-8 is always there on glibc */
	setlocale(LC_CTYPE, "C.UTF-8");
	return testutil_run(suite());
}
