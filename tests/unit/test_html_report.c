/* test_html_report.c - the HTML report of the export store (export_store.h):
 * capture strings escaped, the summary rows present, the page self-contained,
 * plots inlined (or a note without gnuplot), optional sections shown only when
 * they apply, the kernel bars in order of total time and labelled by name,
 * the findings before the first table. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "export/html_report.h"
#include "export/plots_gnuplot.h"
#include "export_store.h"
#include "prof/analysis_tables.h"
#include "testutil.h"

static char xs_path[512];

static char *render_path(const char *path, const struct html_options *o)
{
	struct prof_store *s = NULL;
	struct prof_error err = { 0 };
	char *html = NULL;
	size_t len = 0;
	FILE *f;

	ck_assert_msg(prof_store__open(path, &s, &err) == 0, "%s", err.msg);
	f = open_memstream(&html, &len);
	ck_assert_msg(html_report__write(s, o, f, &err) == 0, "%s", err.msg);
	fclose(f);
	prof_store__close(s);
	return html;
}

static char *render(const struct html_options *o)
{
	snprintf(xs_path, sizeof xs_path, "%s", testutil_tmp_path("xs.sqlite"));
	xs_write(xs_path, true);
	return render_path(xs_path, o);
}

static int count(const char *hay, const char *needle)
{
	int n = 0;

	for (const char *p = hay; (p = strstr(p, needle)) != NULL; p += strlen(needle))
		n++;
	return n;
}

/* The text of the table headed by id="name", up to its </table>. */
static char *table_of(const char *html, const char *name)
{
	char key[128];
	const char *start, *end;

	snprintf(key, sizeof key, "id=\"%s\"", name);
	start = strstr(html, key);
	ck_assert_msg(start != NULL, "no table %s", name);
	end = strstr(start, "</table>");
	ck_assert_ptr_nonnull(end);
	return strndup(start, (size_t)(end - start));
}

START_TEST(html_report_escapes_kernel_and_nvtx_names)
{
	char *html = render(NULL);

	ck_assert_ptr_null(strstr(html, "<script"));
	ck_assert_ptr_null(strstr(html, XS_OUTER));
	ck_assert_int_gt(count(html, "&lt;script&gt;alert(1)&lt;/script&gt;"), 0);
	ck_assert_int_gt(count(html, "outer &quot;q&quot; &amp; &lt;b&gt;"), 0);
	free(html);
}
END_TEST

START_TEST(html_report_holds_the_summary_rows)
{
	static const char *const tables[] = {
		"overview_run", "overview_gpu_busy", "cuda_gpu_kern_sum", "cuda_api_sum",
		"cuda_gpu_mem_time_sum", "cuda_gpu_mem_size_sum", "nvtx_sum", "nvtx_kern_sum",
	};
	char *html = render(NULL), *kern;

	for (size_t i = 0; i < sizeof tables / sizeof tables[0]; i++)
		ck_assert_msg(count(html, tables[i]) > 0, "no %s", tables[i]);
	/* four kernel names, one row each below the header row; kernelA's
	 * 10,000 ns (grouped as the text sink groups) is first */
	kern = table_of(html, "cuda_gpu_kern_sum");
	ck_assert_int_eq(count(kern, "<tr>"), 1 + 4);
	ck_assert_ptr_nonnull(strstr(kern, "<td class=\"num\">10,000</td>"));
	ck_assert(strstr(kern, "kernelA") < strstr(kern, "orphan"));
	free(kern);
	free(html);
}
END_TEST

START_TEST(html_report_is_self_contained)
{
	char *html = render(NULL), *p;

	ck_assert_ptr_nonnull(strstr(html, "Content-Security-Policy"));
	ck_assert_ptr_null(strstr(html, " src="));
	ck_assert_ptr_null(strstr(html, "<link rel=\"stylesheet\""));
	ck_assert_ptr_null(strstr(html, "@import"));
	/* the only URLs are XML namespace names of inline SVG */
	for (p = html; (p = strstr(p, "://")) != NULL; p++) {
		const char *attr = p;

		while (attr > html && attr[-1] != ' ' && attr[-1] != '\n')
			attr--;
		ck_assert_msg(strncmp(attr, "xmlns", 5) == 0, "external reference near: %.60s", attr);
	}
	free(html);
}
END_TEST

START_TEST(html_report_without_gnuplot_says_so_and_keeps_the_rest)
{
	struct html_options o = { .gnuplot = "/nonexistent/gnuplot" };
	char *html = render(&o);

	ck_assert_int_eq(count(html, "gnuplot was not found"), 1);
	ck_assert_int_eq(count(html, "<figure class=\"plot\""), 0);
	ck_assert_int_eq(count(html, "<svg class=\"flame\""), 1);
	ck_assert_ptr_nonnull(strstr(html, "id=\"cuda_gpu_kern_sum\""));
	ck_assert_ptr_nonnull(strstr(html, "</html>"));
	free(html);
}
END_TEST

START_TEST(html_report_inlines_the_three_gnuplot_plots)
{
	char gnuplot[4096], *html;

	if (!gnuplot__find("gnuplot", gnuplot, sizeof gnuplot)) {
		fputs("html_report_inlines_the_three_gnuplot_plots: gnuplot is not installed; "
		      "scripts/install-deps.sh installs it\n", stderr);
		ck_abort_msg("gnuplot is needed for this test");
	}
	html = render(NULL);
	ck_assert_int_eq(count(html, "<figure class=\"plot\""), 3);
	/* a figure holds gnuplot's SVG without its XML prolog, with its ids
	 * made unique to the figure; the flame graph, the budget bar and the
	 * kernel bars are the page's own */
	ck_assert_int_eq(count(html, "<svg"), 3 + 3 + count(html, "<svg class=\"step\""));
	ck_assert_ptr_null(strstr(html, "<?xml"));
	ck_assert_ptr_null(strstr(html, "<!DOCTYPE svg"));
	ck_assert_ptr_null(strstr(html, "id='gpPt0'"));
	ck_assert_int_eq(count(html, "id='plot1-gpPt0'"), 1);
	ck_assert_int_eq(count(html, "id='plot3-gpPt0'"), 1);
	ck_assert_ptr_null(strstr(html, "gnuplot was not found"));
	ck_assert_ptr_null(strstr(html, "could not be drawn"));
	free(html);
}
END_TEST

START_TEST(html_report_kernel_bars_follow_total_time_by_name)
{
	struct html_options o = { .gnuplot = "/nonexistent/gnuplot" };
	char *html = render(&o), *bars = strstr(html, "<svg class=\"bars\"");
	const char *order[] = { "kernelA", "kernel;B\nx", "&lt;script&gt;", "orphan" };

	ck_assert_ptr_nonnull(bars);
	*strstr(bars, "</svg>") = '\0';
	ck_assert_int_eq(count(bars, "<rect"), 4);
	for (int i = 1; i < 4; i++)
		ck_assert_msg(strstr(bars, order[i - 1]) < strstr(bars, order[i]),
			      "%s drawn after %s", order[i - 1], order[i]);
	ck_assert_ptr_nonnull(strstr(bars, "<title>kernelA: 0.010 ms, 1 launches</title>"));
	ck_assert_ptr_nonnull(strstr(bars, ">kernelA</text>"));
	free(html);
}
END_TEST

START_TEST(html_report_findings_come_before_the_first_table)
{
	struct html_options o = { .gnuplot = "/nonexistent/gnuplot" };
	char *html = render(&o);
	const char *findings = strstr(html, "<section id=\"findings\">"), *table = strstr(html, "<table");

	ck_assert_ptr_nonnull(findings);
	ck_assert_ptr_nonnull(table);
	ck_assert(findings < table);
	ck_assert(strstr(html, "<section id=\"summaries\">") < strstr(html, "<section id=\"api\">"));
	free(html);
}
END_TEST

static int render_extra(struct html_page *p, struct prof_error *err)
{
	(void)err;
	fputs("<p>extra body</p>\n", html_page__out(p));
	html_page__note(p, "a <note>");
	return 0;
}

static bool never(struct prof_store *s)
{
	(void)s;
	return false;
}

START_TEST(html_report_shows_optional_sections_that_apply)
{
	static const struct html_section sections[] = {
		{ "extra-yes", "Extra & yes", NULL, render_extra, false, false, false },
		{ "extra-no", "Extra no", never, render_extra, false, false, false },
	};
	struct html_options o = { .gnuplot = "/nonexistent/gnuplot", .sections = sections,
				  .nsections = 2 };
	char *html = render(&o);

	ck_assert_int_eq(count(html, "href=\"#extra-yes\">Extra &amp; yes</a>"), 1);
	ck_assert_int_eq(count(html, "<section id=\"extra-yes\">\n<h2>Extra &amp; yes</h2>\n"
				     "<p>extra body</p>"), 1);
	ck_assert_int_eq(count(html, "a &lt;note&gt;"), 1);
	ck_assert_ptr_null(strstr(html, "extra-no"));
	/* given sections replace the default ones */
	ck_assert_ptr_null(strstr(html, "id=\"findings\""));
	free(html);
}
END_TEST

START_TEST(html_report_default_sections_are_findings_and_roofline_with_metrics)
{
	struct html_options o = { .gnuplot = "/nonexistent/gnuplot" };
	char *html = render(&o), *roof, dir[512], tsv[600], path[512];
	struct prof_error err = { 0 };
	FILE *f;

	ck_assert_int_eq(count(html, "<section id=\"findings\">"), 1);
	ck_assert_ptr_nonnull(strstr(html, "Analysis window: "));
	ck_assert_ptr_null(strstr(html, "<section id=\"kernel-roofline\">"));
	free(html);

	/* hardware metrics for kernelA's launch (correlation 1) */
	snprintf(path, sizeof path, "%s", xs_path);
	snprintf(dir, sizeof dir, "%s", testutil_tmp_path("metrics"));
	ck_assert_int_eq(mkdir(dir, 0700), 0);
	snprintf(tsv, sizeof tsv, "%s/metrics-%d.tsv", dir, XS_PID);
	f = fopen(tsv, "w");
	ck_assert_ptr_nonnull(f);
	fprintf(f, "%d\t1\t0\t10000\t0\t1000000\t0\t0\t2000000\t1000000\t3000000\n", XS_PID);
	fclose(f);
	ck_assert_msg(prof_analysis__import_metrics_dir(path, dir, &err) == 1, "%s", err.msg);
	html = render_path(path, &o);
	ck_assert_int_eq(count(html, "<section id=\"kernel-roofline\">"), 1);
	roof = table_of(html, "roofline");
	ck_assert_ptr_nonnull(strstr(roof, "kernelA"));
	free(roof);
	free(html);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("html_report");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, html_report_escapes_kernel_and_nvtx_names);
	tcase_add_test(tc, html_report_holds_the_summary_rows);
	tcase_add_test(tc, html_report_is_self_contained);
	tcase_add_test(tc, html_report_without_gnuplot_says_so_and_keeps_the_rest);
	tcase_add_test(tc, html_report_inlines_the_three_gnuplot_plots);
	tcase_add_test(tc, html_report_kernel_bars_follow_total_time_by_name);
	tcase_add_test(tc, html_report_findings_come_before_the_first_table);
	tcase_add_test(tc, html_report_shows_optional_sections_that_apply);
	tcase_add_test(tc, html_report_default_sections_are_findings_and_roofline_with_metrics);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return testutil_run(suite());
}
