/* test_html_beside.c - after the page's diagnosis, the sections on its
 * timeline (on_timeline) render on a thread of their own through the
 * diagnosis's connection, beside the others on the page's thread and
 * connection; each sees the diagnosis and the timeline it kept, and the
 * page holds every section's text in the sections' order. Sections
 * before the diagnosis that may move (any_connection) and are not begun
 * when it is done render there too. Real captures (ddp/ddp2_rank1: one
 * DDP rank; a small case), with sections that note where they ran. */
#include <check.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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

/* The page of capture with sections alone, written in memory on this
 * thread (page_thread) through page_store, which the caller closes. */
static char *page_of(const char *capture, const struct html_section *sections, size_t n)
{
	struct html_options o = { .gnuplot = "/nonexistent/gnuplot", .sections = sections, .nsections = n };
	struct prof_error err = { 0 };
	char *html = NULL;
	size_t len = 0;
	FILE *f;

	ck_assert_msg(prof_store__open_capture(testutil_data_path(capture), &page_store, &err) == 0, "%s",
		      err.msg);
	page_thread = pthread_self();
	f = open_memstream(&html, &len);
	ck_assert_ptr_nonnull(f);
	ck_assert_msg(html_report__write(page_store, &o, f, &err) == 0, "%s", err.msg);
	fclose(f);
	return html;
}

/* Section id after at, whole, its body body: where it begins. */
static const char *section_after(const char *at, const char *id, const char *body)
{
	char want[128];
	const char *next;

	snprintf(want, sizeof want, "<section id=\"%s\">", id);
	next = strstr(at, want);
	ck_assert_msg(next != NULL, "section %s missing or out of order", id);
	ck_assert_msg(strncmp(strstr(next, "</h2>\n") + 6, body, strlen(body)) == 0, "%s: %.200s", id, next);
	return next;
}

START_TEST(html_sections_on_the_timeline_render_beside_the_others)
{
	static const struct html_section sections[] = {
		{ "s0", "Without the diagnosis", NULL, render_0, true, false, false },
		{ "s1", "On the timeline", NULL, render_1, false, true, false },
		{ "s2", "With the diagnosis", NULL, render_2, false, false, false },
		{ "s3", "On the timeline too", NULL, render_3, false, true, false },
	};
	char *html = page_of(CAPTURE, sections, 4);
	const char *at;

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
		char id[8], body[128];

		snprintf(id, sizeof id, "s%d", i);
		snprintf(body, sizeof body, "<p>body %d</p>\n<p class=\"note\">%s</p>\n</section>", i,
			 i % 2 ? "odd &lt;section&gt;" : "even &lt;section&gt;");
		at = section_after(at, id, body) + 1;
	}
	free(html);
	prof_store__close(page_store);
}
END_TEST

/* Sections before the diagnosis that may render on any connection
 * (any_connection): once the diagnosis is done, those the page's thread
 * has not begun render beside it on the diagnosis's connection, where
 * one that may not move never does. m0 takes long enough for the
 * diagnosis of a small capture to end meanwhile, and the others to be
 * taken beside it. */
#define SMALL_CAPTURE "cases/case_clean.sqlite"

static struct seen moved[4];

static void note_moved(struct html_page *p, int i, unsigned wait_ms)
{
	struct timespec t = { .tv_sec = wait_ms / 1000, .tv_nsec = (long)(wait_ms % 1000) * 1000000L };

	nanosleep(&t, NULL);
	moved[i].thread = pthread_self();
	moved[i].store = html_page__store(p);
	fprintf(html_page__out(p), "<p>moved %d</p>\n", i);
	html_page__note(p, "a <note>");
}

static int render_m0(struct html_page *p, struct prof_error *err) { (void)err; note_moved(p, 0, 2000); return 0; }
static int render_m1(struct html_page *p, struct prof_error *err) { (void)err; note_moved(p, 1, 0); return 0; }
static int render_m2(struct html_page *p, struct prof_error *err) { (void)err; note_moved(p, 2, 0); return 0; }
static int render_m3(struct html_page *p, struct prof_error *err) { (void)err; note_moved(p, 3, 0); return 0; }

START_TEST(html_sections_before_the_diagnosis_move_once_it_is_done)
{
	static const struct html_section sections[] = {
		{ "m0", "Slow", NULL, render_m0, true, false, true },
		{ "m1", "Movable", NULL, render_m1, true, false, true },
		{ "m2", "Movable too", NULL, render_m2, true, false, true },
		{ "m3", "Not movable", NULL, render_m3, true, false, false },
	};
	char *html = page_of(SMALL_CAPTURE, sections, 4);
	const char *at;

	/* the page's thread begins m0 while the diagnosis runs, and m1 and m2
	 * move; on a loaded machine the diagnosis may end before the page's
	 * thread begins, and m0 moves instead, while that thread takes the
	 * rest: either way the sections not begun when it ended moved */
	if (pthread_equal(moved[0].thread, page_thread)) {
		ck_assert_ptr_eq(moved[0].store, page_store);
		for (int i = 1; i <= 2; i++) {
			ck_assert_msg(!pthread_equal(moved[i].thread, page_thread), "m%d stayed on the page's thread", i);
			ck_assert_ptr_nonnull(moved[i].store);
			ck_assert_ptr_ne(moved[i].store, page_store);
		}
	} else {
		ck_assert_ptr_nonnull(moved[0].store);
		ck_assert_ptr_ne(moved[0].store, page_store);
		for (int i = 1; i <= 2; i++)
			ck_assert_msg(pthread_equal(moved[i].thread, page_thread), "m%d moved beside a slow one", i);
	}
	ck_assert(pthread_equal(moved[3].thread, page_thread));
	ck_assert_ptr_eq(moved[3].store, page_store);
	at = html;
	for (int i = 0; i < 4; i++) {
		char id[8], body[128];

		snprintf(id, sizeof id, "m%d", i);
		snprintf(body, sizeof body, "<p>moved %d</p>\n<p class=\"note\">a &lt;note&gt;</p>\n</section>", i);
		at = section_after(at, id, body) + 1;
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
	tcase_add_test(tc, html_sections_before_the_diagnosis_move_once_it_is_done);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return testutil_run(suite());
}
