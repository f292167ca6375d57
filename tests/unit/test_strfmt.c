/* test_strfmt.c - libprof's formatted allocation: the text in full, past
 * any fixed buffer, and the va_list form usable after the first pass. */
#include <check.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "prof/strfmt.h"
#include "testutil.h"

START_TEST(strfmt_formats_into_a_new_string)
{
	char *s = prof_strfmt("%s AND rowid > ?%d", "SELECT 1", 1);

	ck_assert_ptr_nonnull(s);
	ck_assert_str_eq(s, "SELECT 1 AND rowid > ?1");
	free(s);
	s = prof_strfmt("%s", "");
	ck_assert_ptr_nonnull(s);
	ck_assert_str_eq(s, "");
	free(s);
}
END_TEST

START_TEST(strfmt_holds_a_text_longer_than_any_buffer)
{
	size_t n = 100000;
	char *big = malloc(n + 1);
	char *s;

	ck_assert_ptr_nonnull(big);
	memset(big, 'k', n);
	big[n] = '\0';
	s = prof_strfmt("<%s>", big);
	ck_assert_ptr_nonnull(s);
	ck_assert_uint_eq(strlen(s), n + 2);
	ck_assert_int_eq(s[0], '<');
	ck_assert_int_eq(s[n + 1], '>');
	free(s);
	free(big);
}
END_TEST

static char *through_va_list(const char *fmt, ...)
{
	va_list ap;
	char *s;

	va_start(ap, fmt);
	s = prof_vstrfmt(fmt, ap);
	va_end(ap);
	return s;
}

START_TEST(vstrfmt_formats_every_argument)
{
	char *s = through_va_list("%d:%s:%.2f", 42, "rank", 0.5);

	ck_assert_ptr_nonnull(s);
	ck_assert_str_eq(s, "42:rank:0.50");
	free(s);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("strfmt");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, strfmt_formats_into_a_new_string);
	tcase_add_test(tc, strfmt_holds_a_text_longer_than_any_buffer);
	tcase_add_test(tc, vstrfmt_formats_every_argument);
	suite_add_tcase(s, tc);
	return testutil_run(s);
}
