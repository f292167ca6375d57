/* test_units.c - durations, bytes and counts as every sink writes them
 * (each output's style), and durations as every option reads them. */
#include <check.h>
#include <stdint.h>

#include "prof/error.h"
#include "prof/units.h"
#include "testutil.h"

static const char *dur(int64_t ns, enum prof_units_style style)
{
	static char b[64];

	return prof_units__duration(b, sizeof b, ns, style);
}

static const char *dur_f(double ns, enum prof_units_style style)
{
	static char b[64];

	return prof_units__duration_f(b, sizeof b, ns, style);
}

START_TEST(units_compact_duration_picks_a_unit_with_three_digits)
{
	ck_assert_str_eq(dur(812, PROF_UNITS_COMPACT), "812ns");
	ck_assert_str_eq(dur(12345, PROF_UNITS_COMPACT), "12.3us");
	ck_assert_str_eq(dur(4560000, PROF_UNITS_COMPACT), "4.56ms");
	ck_assert_str_eq(dur(999999999, PROF_UNITS_COMPACT), "1.00s");
	ck_assert_str_eq(dur(7890000000LL, PROF_UNITS_COMPACT), "7.89s");
	ck_assert_str_eq(dur(7380000000000LL, PROF_UNITS_COMPACT), "2h03m");
	ck_assert_str_eq(dur(-1, PROF_UNITS_COMPACT), "-");
}
END_TEST

START_TEST(units_fixed_duration_has_two_decimals_of_microseconds)
{
	ck_assert_str_eq(dur(812, PROF_UNITS_FIXED), "812 ns");
	ck_assert_str_eq(dur(12345, PROF_UNITS_FIXED), "12.35 us");
	ck_assert_str_eq(dur(4560000, PROF_UNITS_FIXED), "4.560 ms");
	ck_assert_str_eq(dur(7890000000LL, PROF_UNITS_FIXED), "7.890 s");
	/* a negative duration stays in nanoseconds, in full */
	ck_assert_str_eq(dur(-5000, PROF_UNITS_FIXED), "-5000 ns");
	ck_assert_str_eq(dur(INT64_MIN, PROF_UNITS_FIXED), "-9223372036854775808 ns");
}
END_TEST

START_TEST(units_fixed3_duration_has_three_decimals_everywhere)
{
	ck_assert_str_eq(dur_f(812.4, PROF_UNITS_FIXED3), "812 ns");
	ck_assert_str_eq(dur_f(999.6, PROF_UNITS_FIXED3), "1000 ns");
	ck_assert_str_eq(dur_f(12345, PROF_UNITS_FIXED3), "12.345 us");
	ck_assert_str_eq(dur_f(4560000, PROF_UNITS_FIXED3), "4.560 ms");
	ck_assert_str_eq(dur_f(1e19, PROF_UNITS_FIXED3), "10000000000.000 s");
	ck_assert_str_eq(dur(12345, PROF_UNITS_FIXED3), "12.345 us");
}
END_TEST

START_TEST(units_sig3_duration_is_signed_with_three_figures)
{
	ck_assert_str_eq(dur(812, PROF_UNITS_SIG3), "812 ns");
	ck_assert_str_eq(dur(-812, PROF_UNITS_SIG3), "-812 ns");
	ck_assert_str_eq(dur(12345, PROF_UNITS_SIG3), "12.3 us");
	ck_assert_str_eq(dur(-4560000, PROF_UNITS_SIG3), "-4.56 ms");
	ck_assert_str_eq(dur(7890000000LL, PROF_UNITS_SIG3), "7.89 s");
	/* -INT64_MIN is no int64_t: the magnitude is taken unsigned */
	ck_assert_str_eq(dur(INT64_MIN, PROF_UNITS_SIG3), "-9.22e+09 s");
	ck_assert_str_eq(dur_f(-4560000, PROF_UNITS_SIG3), "-4.56 ms");
}
END_TEST

START_TEST(units_bytes_and_counts_use_binary_and_decimal_prefixes)
{
	char b[32];

	ck_assert_str_eq(prof_units__bytes(b, sizeof b, 512, PROF_UNITS_COMPACT), "512B");
	ck_assert_str_eq(prof_units__bytes(b, sizeof b, 1536, PROF_UNITS_COMPACT), "1.50KiB");
	ck_assert_str_eq(prof_units__bytes(b, sizeof b, 3LL << 30, PROF_UNITS_COMPACT), "3.00GiB");
	ck_assert_str_eq(prof_units__bytes(b, sizeof b, -(2LL << 20), PROF_UNITS_COMPACT), "-2.00MiB");
	ck_assert_str_eq(prof_units__bytes(b, sizeof b, 512, PROF_UNITS_FIXED), "512 B");
	ck_assert_str_eq(prof_units__bytes(b, sizeof b, 1536, PROF_UNITS_FIXED), "1.5 KiB");
	ck_assert_str_eq(prof_units__bytes(b, sizeof b, 12LL << 20, PROF_UNITS_FIXED), "12.00 MiB");
	ck_assert_str_eq(prof_units__bytes(b, sizeof b, 3LL << 30, PROF_UNITS_FIXED), "3.00 GiB");
	ck_assert_str_eq(prof_units__count(b, sizeof b, 987), "987");
	ck_assert_str_eq(prof_units__count(b, sizeof b, 12345), "12.3k");
	ck_assert_str_eq(prof_units__count(b, sizeof b, 4.56e6), "4.56M");
	ck_assert_str_eq(prof_units__count(b, sizeof b, -3), "0");
	ck_assert_str_eq(prof_units__clock(b, sizeof b, 3723000000000LL), "01:02:03");
}
END_TEST

START_TEST(units_parse_duration_reads_each_unit_exactly)
{
	int64_t ns = -1;

	ck_assert_int_eq(prof_units__parse_duration("2500000", &ns), 0);
	ck_assert_int_eq(ns, 2500000);
	ck_assert_int_eq(prof_units__parse_duration("2500us", &ns), 0);
	ck_assert_int_eq(ns, 2500000);
	ck_assert_int_eq(prof_units__parse_duration("2.5ms", &ns), 0);
	ck_assert_int_eq(ns, 2500000);
	ck_assert_int_eq(prof_units__parse_duration("1s", &ns), 0);
	ck_assert_int_eq(ns, 1000000000);
	ck_assert_int_eq(prof_units__parse_duration("100ns", &ns), 0);
	ck_assert_int_eq(ns, 100);
	/* no rounding through a double: every nanosecond of a long time kept */
	ck_assert_int_eq(prof_units__parse_duration("9007199.254740993s", &ns), 0);
	ck_assert_int_eq(ns, 9007199254740993LL);
	ck_assert_int_eq(prof_units__parse_duration("9223372036854775799", &ns), 0);
	ck_assert_int_eq(ns, INT64_MAX - 8);
}
END_TEST

START_TEST(units_parse_duration_refuses_what_is_not_one)
{
	static const char *const bad[] = {
		"", "ms", "-5us", "+5us", " 5us", "5 us", "5us ", ".5ms", "5.ms", "1e3us",
		"0x10", "5m", "5sec", "inf", "nan", "9223372036854775808", "9223372036.9s",
		"99999999999999999999s",
	};
	int64_t ns = 42;

	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		ck_assert_msg(prof_units__parse_duration(bad[i], &ns) == PROF_E_USAGE, "took '%s'",
			      bad[i]);
	ck_assert_int_eq(prof_units__parse_duration(NULL, &ns), PROF_E_USAGE);
	ck_assert_int_eq(ns, 42);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("units");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, units_compact_duration_picks_a_unit_with_three_digits);
	tcase_add_test(tc, units_fixed_duration_has_two_decimals_of_microseconds);
	tcase_add_test(tc, units_fixed3_duration_has_three_decimals_everywhere);
	tcase_add_test(tc, units_sig3_duration_is_signed_with_three_figures);
	tcase_add_test(tc, units_bytes_and_counts_use_binary_and_decimal_prefixes);
	tcase_add_test(tc, units_parse_duration_reads_each_unit_exactly);
	tcase_add_test(tc, units_parse_duration_refuses_what_is_not_one);
	suite_add_tcase(s, tc);
	return testutil_run(s);
}
