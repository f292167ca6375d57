/* test_window_found_once.c - the loop a connection found is kept for the
 * next search with the same options (sum_window__find), and never handed
 * to a search it would answer wrongly: one with other options, or one on
 * rows that --rank narrowed. Each answer is compared with a search of its
 * own on a fresh connection. On a real two-rank DDP capture, whose whole
 * capture and rank 1 have different loops. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "model/ranks.h"
#include "model/window.h"
#include "prof/store.h"
#include "testutil.h"

#define CAPTURE "ddp/ddp2_even.sqlite"

static struct prof_store *open_capture(void)
{
	struct prof_error err = { 0 };
	struct prof_store *s = NULL;

	ck_assert_msg(prof_store__open(testutil_data_path(CAPTURE), &s, &err) == 0, "%s", err.msg);
	return s;
}

static struct sum_window found(struct prof_store *s, const struct sum_loop_options *o)
{
	struct prof_error err = { 0 };
	struct sum_window w;

	ck_assert_msg(sum_window__find(s, o, &w, &err) == 0, "%s", err.msg);
	return w;
}

/* what a connection of its own finds, narrowed to ranks (NULL: all) */
static struct sum_window fresh(const struct sum_loop_options *o, const char *ranks)
{
	struct prof_error err = { 0 };
	struct prof_store *s = open_capture();
	struct sum_window w;

	if (ranks)
		ck_assert_msg(summary__select_ranks(s, ranks, &err) == 0, "%s", err.msg);
	w = found(s, o);
	prof_store__close(s);
	return w;
}

static void same_window(const struct sum_window *a, const struct sum_window *b)
{
	ck_assert_int_eq(a->start_ns, b->start_ns);
	ck_assert_int_eq(a->end_ns, b->end_ns);
	ck_assert_int_eq(a->host_end_ns, b->host_end_ns);
	ck_assert_int_eq(a->capture_start_ns, b->capture_start_ns);
	ck_assert_int_eq(a->capture_end_ns, b->capture_end_ns);
	ck_assert_int_eq(a->span_ns, b->span_ns);
	ck_assert_int_eq(a->iterations, b->iterations);
	ck_assert_int_eq(a->whole_run, b->whole_run);
	ck_assert_int_eq(a->mark, b->mark);
	ck_assert_str_eq(a->mark_name, b->mark_name);
	ck_assert_str_eq(a->source, b->source);
}

START_TEST(each_options_its_own_loop)
{
	struct sum_loop_options loop, whole;
	struct prof_store *s = open_capture();
	struct sum_window a1, b, a2, fa, fb;

	sum_loop_options__init(&loop);
	whole = loop;
	whole.whole_run = true;
	a1 = found(s, &loop);
	b = found(s, &whole);
	a2 = found(s, &loop);
	fa = fresh(&loop, NULL);
	fb = fresh(&whole, NULL);
	/* the two options find two windows here */
	ck_assert_int_gt(a1.iterations, 0);
	ck_assert(fb.whole_run && fb.iterations == 0);
	same_window(&a1, &fa);
	same_window(&a2, &fa);
	same_window(&b, &fb);
	prof_store__close(s);
}
END_TEST

START_TEST(narrowed_rows_searched_again)
{
	struct prof_error err = { 0 };
	struct sum_loop_options o;
	struct prof_store *s = open_capture();
	struct sum_window all, rank1, want;

	sum_loop_options__init(&o);
	all = found(s, &o);
	ck_assert_msg(summary__select_ranks(s, "1", &err) == 0, "%s", err.msg);
	rank1 = found(s, &o);
	want = fresh(&o, "1");
	same_window(&rank1, &want);
	/* rank 1's capture is not the whole job's: the memo would be wrong */
	ck_assert(all.capture_start_ns != rank1.capture_start_ns || all.capture_end_ns != rank1.capture_end_ns ||
		  all.start_ns != rank1.start_ns);
	prof_store__close(s);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("window_found_once");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, each_options_its_own_loop);
	tcase_add_test(tc, narrowed_rows_searched_again);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return testutil_run(suite());
}
