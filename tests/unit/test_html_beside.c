/* test_html_beside.c - after the page's diagnosis, the sections on its
 * timeline (on_timeline) render on a thread of their own through the
 * diagnosis's connection, beside the others on the page's thread and
 * connection; each sees the diagnosis and the timeline it kept, and the
 * page holds every section's text in the sections' order. A real capture
 * (ddp/ddp2_rank1: one DDP rank), with sections that note where they ran. */
#include <check.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export/html_report.h"
#include "testutil.h"
#include "prof/error.h"
#include "prof/store.h"

#define CAPTURE "ddp/ddp2_rank1.sqlite"

struct seen {
	pthread_t thread;
	struct prof_store *store;
	bool diagnosis, timeline;
};

static struct seen seen[4];
static pthread_t page_thread;
static struct prof_store *page_store;

static void note(struct html_page *p, int i)
{
	const char *why;

	seen[i].thread = pthread_self();
	seen[i].store = html_page__store(p);
	seen[i].diagnosis = i > 0 && html_page__diagnosis(p, &why) != NULL;
	seen[i].timeline = i > 0 && html_page__timeline(p) != NULL;
	fprintf(html_page__out(p), "<p>body %d</p>\n", i);
	/* a table through the section's own sink */
	html_page__note(p, i % 2 ? "odd <section>" : "even <section>");
}

static int render_0(struct html_page *p, struct prof_error *err) { (void)err; note(p, 0); return 0; }
static int render_1(struct html_page *p, struct prof_error *err) { (void)err; note(p, 1); return 0; }
static int render_2(struct html_page *p, struct prof_error *err) { (void)err; note(p, 2); return 0; }
static int render_3(struct html_page *p, struct prof_error *err) { (void)err; note(p, 3); return 0; }

START_TEST(html_sections_on_the_timeline_render_beside_the_others)
{
	static const struct html_section sections[] = {
		{ "s0", "Without the diagnosis", NULL, render_0, true, false },
		{ "s1", "On the timeline", NULL, render_1, false, true },
		{ "s2", "With the diagnosis", NULL, render_2, false, false },
		{ "s3", "On the timeline too", NULL, render_3, false, true },
	};
	struct html_options o = { .gnuplot = "/nonexistent/gnuplot", .sections = sections, .nsections = 4 };
	struct prof_error err = { 0 };
	char *html = NULL;
	const char *at;
	size_t len = 0;
	FILE *f;

	ck_assert_msg(prof_store__open_capture(testutil_data_path(CAPTURE), &page_store, &err) == 0, "%s", err.msg);
	page_thread = pthread_self();
	f = open_memstream(&html, &len);
	ck_assert_ptr_nonnull(f);
	ck_assert_msg(html_report__write(page_store, &o, f, &err) == 0, "%s", err.msg);
	fclose(f);
	/* the page's own thread and connection, but for those on the timeline */
	ck_assert(pthread_equal(seen[0].thread, page_thread));
	ck_assert_ptr_eq(seen[0].store, page_store);
	ck_assert(pthread_equal(seen[2].thread, page_thread));
	ck_assert_ptr_eq(seen[2].store, page_store);
	for (int i = 1; i <= 3; i += 2) {
		ck_assert_msg(!pthread_equal(seen[i].thread, page_thread), "section %d ran on the page's thread", i);
		ck_assert_msg(seen[i].store != page_store, "section %d read the page's connection", i);
		ck_assert_ptr_eq(seen[i].store, seen[1].store);
		ck_assert(seen[i].diagnosis && seen[i].timeline);
	}
	ck_assert(seen[2].diagnosis && seen[2].timeline);
	/* in the sections' order, each whole and once */
	at = html;
	for (int i = 0; i < 4; i++) {
		char want[128];
		const char *next;

		snprintf(want, sizeof want, "<section id=\"s%d\">", i);
		next = strstr(at, want);
		ck_assert_msg(next != NULL, "section %d missing or out of order", i);
		snprintf(want, sizeof want, "<p>body %d</p>\n<p class=\"note\">%s</p>\n</section>", i,
			 i % 2 ? "odd &lt;section&gt;" : "even &lt;section&gt;");
		ck_assert_msg(strncmp(strstr(next, "</h2>\n") + 6, want, strlen(want)) == 0, "section %d: %.200s", i,
			      next);
		at = next + 1;
	}
	free(html);
	prof_store__close(page_store);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("html_beside");
	TCase *tc = tcase_create("beside");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, html_sections_on_the_timeline_render_beside_the_others);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return testutil_run(suite());
}
