/* test_html_sink.c - the HTML renderer of report rows: a heading and a
 * table per report, every string escaped, numbers formatted as in the text
 * sink, long reports cut with a count, empty ones marked, row classes. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sink/sink.h"
#include "testutil.h"

static const struct rpt_column cols[] = {
	{ "Total <ns>", RPT_INT, 0 },
	{ "Share (%)", RPT_PERCENT, 1 },
	{ "Name", RPT_TEXT, 0 },
};

static char *render(const struct rpt_html_options *o, const char *const *names, int n)
{
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);
	struct rpt_sink *sink = rpt_sink_html__new(f, o);

	ck_assert_int_eq(sink->begin(sink, "kern\"sum", "Kernels & <more>", cols, 3), 0);
	for (int i = 0; i < n; i++) {
		struct rpt_cell cells[3] = { { .i = 1234567 * (i + 1) }, { .d = 12.345 },
					     { .s = names[i] } };
		ck_assert_int_eq(sink->row(sink, cells), 0);
	}
	ck_assert_int_eq(sink->end(sink), 0);
	rpt_sink__delete(sink);
	fclose(f);
	return out;
}

static int count(const char *hay, const char *needle)
{
	int n = 0;

	for (const char *p = hay; (p = strstr(p, needle)) != NULL; p += strlen(needle))
		n++;
	return n;
}

START_TEST(html_sink_escapes_headings_headers_and_cells)
{
	const char *names[] = { "<script>alert(1)</script>", "a \"b\" & 'c'" };
	char *out = render(NULL, names, 2);

	ck_assert_ptr_null(strstr(out, "<script"));
	ck_assert_ptr_nonnull(strstr(out, "<h3 id=\"kern&quot;sum\">Kernels &amp; &lt;more&gt;</h3>"));
	ck_assert_ptr_nonnull(strstr(out, "<th class=\"num\">Total &lt;ns&gt;</th>"));
	ck_assert_ptr_nonnull(strstr(out, "<td>&lt;script&gt;alert(1)&lt;/script&gt;</td>"));
	ck_assert_ptr_nonnull(strstr(out, "<td>a &quot;b&quot; &amp; &#39;c&#39;</td>"));
	ck_assert_ptr_nonnull(strstr(out, "<td class=\"num\">1,234,567</td><td class=\"num\">12.3</td>"));
	ck_assert_int_eq(count(out, "<tr>"), 1 + 2);
	free(out);
}
END_TEST

START_TEST(html_sink_cuts_long_reports_and_counts_the_rest)
{
	const char *names[] = { "a", "b", "c", "d", "e" };
	struct rpt_html_options o = { .max_rows = 2, .heading_level = 2 };
	char *out = render(&o, names, 5);

	ck_assert_ptr_nonnull(strstr(out, "<h2 id="));
	ck_assert_ptr_nonnull(strstr(out, "<td>b</td>"));
	ck_assert_ptr_null(strstr(out, "<td>c</td>"));
	ck_assert_ptr_nonnull(strstr(out, ">3 more rows not shown</td>"));
	free(out);
}
END_TEST

START_TEST(html_sink_marks_an_empty_report)
{
	char *out = render(NULL, NULL, 0);

	ck_assert_ptr_nonnull(strstr(out, "<td class=\"empty\" colspan=\"3\">no data</td>"));
	ck_assert_ptr_nonnull(strstr(out, "</table>"));
	free(out);
}
END_TEST

static const char *odd_rows(const struct rpt_column *c, int n, const struct rpt_cell *cells)
{
	(void)c;
	(void)n;
	return cells[0].i % 2 ? "odd<" : NULL;
}

START_TEST(html_sink_classes_rows_through_the_escaper)
{
	const char *names[] = { "a", "b" };
	struct rpt_html_options o = { .row_class = odd_rows };
	char *out = render(&o, names, 2);

	ck_assert_int_eq(count(out, "<tr class=\"odd&lt;\"><td class=\"num\">1,234,567<"), 1);
	ck_assert_int_eq(count(out, "<tr><td class=\"num\">2,469,134<"), 1);
	free(out);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("html_sink");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, html_sink_escapes_headings_headers_and_cells);
	tcase_add_test(tc, html_sink_cuts_long_reports_and_counts_the_rest);
	tcase_add_test(tc, html_sink_marks_an_empty_report);
	tcase_add_test(tc, html_sink_classes_rows_through_the_escaper);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return testutil_run(suite());
}
