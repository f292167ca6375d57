/* test_escape.c - each output sink escapes quotes, separators, newlines,
 * markup, terminal escapes and invalid UTF-8 its own way. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prof/escape.h"
#include "testutil.h"

#define FFFD "\xEF\xBF\xBD"

static char out[1024];

/* What one escaping function writes for s. */
static const char *run(void (*fn)(FILE *, const char *), const char *s)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	fn(f, s);
	fclose(f);
	snprintf(out, sizeof out, "%s", buf);
	free(buf);
	return out;
}

START_TEST(escape_json_quotes_backslash_and_controls)
{
	ck_assert_str_eq(run(prof_fputs_json, "say \"hi\"\\"), "\"say \\\"hi\\\"\\\\\"");
	ck_assert_str_eq(run(prof_fputs_json, "a\nb\x1b[31m"), "\"a\\u000ab\\u001b[31m\"");
	ck_assert_str_eq(run(prof_fputs_json, "a,b <&>"), "\"a,b <&>\"");
	ck_assert_str_eq(run(prof_fputs_json, NULL), "null");
}
END_TEST

START_TEST(escape_json_replaces_invalid_utf8)
{
	ck_assert_str_eq(run(prof_fputs_json, "k\xff\xfe" "e"), "\"k" FFFD FFFD "e\"");
	/* overlong '/' and a lone surrogate are invalid too */
	ck_assert_str_eq(run(prof_fputs_json, "\xc0\xaf"), "\"" FFFD FFFD "\"");
	ck_assert_str_eq(run(prof_fputs_json, "\xed\xa0\x80"), "\"" FFFD FFFD FFFD "\"");
	/* a truncated sequence at the end of the string */
	ck_assert_str_eq(run(prof_fputs_json, "x\xe2\x82"), "\"x" FFFD FFFD "\"");
}
END_TEST

START_TEST(escape_json_keeps_valid_multibyte_text)
{
	ck_assert_str_eq(run(prof_fputs_json, "\xc3\xa9t\xc3\xa9 \xe2\x82\xac \xf0\x9f\x94\xa5"),
			 "\"\xc3\xa9t\xc3\xa9 \xe2\x82\xac \xf0\x9f\x94\xa5\"");
}
END_TEST

START_TEST(escape_csv_quotes_fields_with_separators)
{
	ck_assert_str_eq(run(prof_fputs_csv, "plain"), "plain");
	ck_assert_str_eq(run(prof_fputs_csv, "a,b"), "\"a,b\"");
	ck_assert_str_eq(run(prof_fputs_csv, "say \"hi\""), "\"say \"\"hi\"\"\"");
	/* control characters as the terminal shows them: no line break splits
	 * the row, no ESC reaches a terminal that shows the file */
	ck_assert_str_eq(run(prof_fputs_csv, "line1\nline2"), "line1?line2");
	ck_assert_str_eq(run(prof_fputs_csv, "cr\rhere"), "cr?here");
	ck_assert_str_eq(run(prof_fputs_csv, "\x1b[31mred\a,x"), "\"?[31mred?,x\"");
	ck_assert_str_eq(run(prof_fputs_csv, "<&>"), "<&>");
	ck_assert_str_eq(run(prof_fputs_csv, NULL), "");
}
END_TEST

START_TEST(escape_csv_guards_formulas_but_not_numbers)
{
	ck_assert_str_eq(run(prof_fputs_csv, "=cmd|' /C calc'!A0"), "'=cmd|' /C calc'!A0");
	ck_assert_str_eq(run(prof_fputs_csv, "+1+2"), "'+1+2");
	ck_assert_str_eq(run(prof_fputs_csv, "@SUM(A1)"), "'@SUM(A1)");
	ck_assert_str_eq(run(prof_fputs_csv, "-2+3,x"), "\"'-2+3,x\"");
	ck_assert_str_eq(run(prof_fputs_csv, "-42"), "-42");
	ck_assert_str_eq(run(prof_fputs_csv, "-1.5e3"), "-1.5e3");
}
END_TEST

START_TEST(escape_csv_replaces_invalid_utf8_and_control_characters)
{
	ck_assert_str_eq(run(prof_fputs_csv, "a\xff" "b"), "a" FFFD "b");
	/* a CSV file is shown in terminals too: ESC, BEL and C1 as the text
	 * sink shows them */
	ck_assert_str_eq(run(prof_fputs_csv, "\x1b[1m\a\xc2\x9b"), "?[1m??");
}
END_TEST

START_TEST(escape_html_escapes_markup_characters)
{
	ck_assert_str_eq(run(prof_fputs_html, "<script>a & \"b\" 'c'</script>"),
			 "&lt;script&gt;a &amp; &quot;b&quot; &#39;c&#39;&lt;/script&gt;");
	ck_assert_str_eq(run(prof_fputs_html, "a,b\nc"), "a,b\nc");
	ck_assert_str_eq(run(prof_fputs_html, "e\x1b[0m"), "e" FFFD "[0m");
	ck_assert_str_eq(run(prof_fputs_html, "bad\xc3"), "bad" FFFD);
	/* runs of plain ASCII between what is not */
	ck_assert_str_eq(run(prof_fputs_html, "void k<float>(\xc3\xa9\x7f)\t'x'"),
			 "void k&lt;float&gt;(\xc3\xa9" FFFD ")\t&#39;x&#39;");
}
END_TEST

START_TEST(escape_term_shows_controls_as_question_marks)
{
	ck_assert_str_eq(run(prof_fputs_term, "red\x1b[31mtext"), "red?[31mtext");
	ck_assert_str_eq(run(prof_fputs_term, "a\nb\tc\rd\x7f"), "a?b?c?d?");
	/* U+009B is CSI on some terminals */
	ck_assert_str_eq(run(prof_fputs_term, "x\xc2\x9b" "2J"), "x?2J");
	ck_assert_str_eq(run(prof_fputs_term, "\"a,b\" <&>"), "\"a,b\" <&>");
	ck_assert_str_eq(run(prof_fputs_term, "\xff"), FFFD);
}
END_TEST

START_TEST(escape_sanitize_term_truncates_on_character_boundary)
{
	char buf[8];

	ck_assert_uint_eq(prof_sanitize_term(buf, sizeof buf, "ab\x1b" "cd"), 5);
	ck_assert_str_eq(buf, "ab?cd");
	/* 3 + 3 bytes of euro signs fit in 7, the third euro does not */
	ck_assert_uint_eq(prof_sanitize_term(buf, sizeof buf, "\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac"), 6);
	ck_assert_str_eq(buf, "\xe2\x82\xac\xe2\x82\xac");
	ck_assert_uint_eq(prof_sanitize_term(buf, 1, "abc"), 0);
	ck_assert_str_eq(buf, "");
	ck_assert_uint_eq(prof_sanitize_term(buf, sizeof buf, "z\xfe"), 4);
	ck_assert_str_eq(buf, "z" FFFD);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("escape");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, escape_json_quotes_backslash_and_controls);
	tcase_add_test(tc, escape_json_replaces_invalid_utf8);
	tcase_add_test(tc, escape_json_keeps_valid_multibyte_text);
	tcase_add_test(tc, escape_csv_quotes_fields_with_separators);
	tcase_add_test(tc, escape_csv_guards_formulas_but_not_numbers);
	tcase_add_test(tc, escape_csv_replaces_invalid_utf8_and_control_characters);
	tcase_add_test(tc, escape_html_escapes_markup_characters);
	tcase_add_test(tc, escape_term_shows_controls_as_question_marks);
	tcase_add_test(tc, escape_sanitize_term_truncates_on_character_boundary);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return testutil_run(suite());
}
