/* test_trace_feed.c - sources stepped on the feed's thread (trace_feed.h)
 * read as the same statements stepped in place: every row of a real
 * capture's kernels, calls and copies, each source on a connection of its
 * own, taken in the merge's order (by start) and source by source, so
 * that batches fill, wait and come back in every order; a source with no
 * rows; a step that fails part-way, told after the rows before it with
 * its message; a feed stopped before its sources end. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export/trace_feed.h"
#include "prof/error.h"
#include "prof/store.h"
#include "testutil.h"

/* Each source's statement: a kernel, runtime or copy table by start. */
static const char *const source_sql[] = {
	"SELECT start, end, deviceId, streamId, correlationId, demangledName FROM "
	"CUPTI_ACTIVITY_KIND_KERNEL ORDER BY start, rowid",
	"SELECT start, end, globalTid, correlationId, nameId FROM CUPTI_ACTIVITY_KIND_RUNTIME "
	"ORDER BY start, rowid",
	"SELECT start, end, bytes, copyKind, correlationId FROM CUPTI_ACTIVITY_KIND_MEMCPY "
	"ORDER BY start, rowid",
	"SELECT start, end FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE start < 0",
};
#define NSOURCES (sizeof source_sql / sizeof source_sql[0])

/* The step the merge gives: the next row, its start; a failure at the
 * row fail_at (counted over every source) when fail_at >= 0. */
struct stepper {
	struct prof_error err;
	long stepped, fail_at;
};

static int step(void *ctx, struct tm_source *s)
{
	struct stepper *st = ctx;
	int rc;

	if (st->fail_at >= 0 && st->stepped++ == st->fail_at)
		return prof_error__set(&st->err, PROF_E_CORRUPT, "damaged at row %ld", st->fail_at);
	rc = prof_cursor__next(s->cur, &st->err);
	s->has_row = rc > 0;
	if (s->has_row)
		s->start_ns = prof_cursor__int64(s->cur, 0);
	return rc < 0 ? rc : 0;
}

/* Source i on a connection of its own, on its first row. */
static void open_source(struct prof_store *s, size_t i, struct prof_store **own,
			struct tm_source *src, struct stepper *st)
{
	struct prof_error err = { 0 };

	ck_assert_msg(prof_store__reopen(s, own, &err) == 0, "%s", err.msg);
	*src = (struct tm_source){ .kind = (enum tm_kind)i };
	ck_assert_msg(prof_cursor__open(*own, source_sql[i], &src->cur, &err) == 0, "%s", err.msg);
	ck_assert_int_eq(step(st, src), 0);
}

static void expect_same_row(struct prof_cursor *fed, struct prof_cursor *in_place, size_t i)
{
	ck_assert_int_eq(prof_cursor__columns(fed), prof_cursor__columns(in_place));
	for (int col = 0; col < prof_cursor__columns(in_place); col++) {
		const char *a = prof_cursor__text(fed, col), *b = prof_cursor__text(in_place, col);

		ck_assert_int_eq(prof_cursor__kind(fed, col), prof_cursor__kind(in_place, col));
		ck_assert_msg((!a && !b) || (a && b && strcmp(a, b) == 0), "source %zu column %d", i, col);
	}
}

/* Every row of every source, fed, against the in-place statements: taken
 * by start (by_start) or each source to its end in turn; returns the rows. */
static long feed_all(const char *name, bool by_start)
{
	struct prof_error err = { 0 };
	struct prof_store *s = NULL, *own[NSOURCES];
	struct prof_cursor *in_place[NSOURCES];
	struct tm_source src[NSOURCES], got[NSOURCES];
	struct stepper st = { .fail_at = -1 };
	struct tm_feed *f = NULL;
	long rows = 0;

	ck_assert_msg(prof_store__open(testutil_data_path(name), &s, &err) == 0, "%s", err.msg);
	for (size_t i = 0; i < NSOURCES; i++) {
		open_source(s, i, &own[i], &src[i], &st);
		ck_assert_int_eq(prof_cursor__open(s, source_sql[i], &in_place[i], &err), 0);
	}
	tm_feed__start(&f, src, NSOURCES, step, &st, &st.err);
	ck_assert_ptr_nonnull(f);
	for (size_t i = 0; i < NSOURCES; i++) {
		got[i] = (struct tm_source){ .kind = src[i].kind };
		ck_assert_int_eq(tm_feed__next(f, (int)i, &got[i], &err), 0);
	}
	for (;;) {
		size_t best = NSOURCES;

		for (size_t i = 0; i < NSOURCES; i++)
			if (got[i].has_row && (best == NSOURCES || (by_start ? got[i].start_ns < got[best].start_ns
									 : i < best)))
				best = i;
		if (best == NSOURCES)
			break;
		ck_assert_int_eq(prof_cursor__next(in_place[best], &err), 1);
		expect_same_row(got[best].cur, in_place[best], best);
		rows++;
		ck_assert_int_eq(tm_feed__next(f, (int)best, &got[best], &err), 0);
	}
	/* each statement in place is at its end too */
	for (size_t i = 0; i < NSOURCES; i++)
		ck_assert_int_eq(prof_cursor__next(in_place[i], &err), 0);
	tm_feed__stop(f);
	for (size_t i = 0; i < NSOURCES; i++) {
		prof_cursor__close(in_place[i]);
		prof_store__close(own[i]);
	}
	prof_store__close(s);
	return rows;
}

START_TEST(test_fed_rows_are_the_rows_in_place)
{
	/* more rows than a source's batches hold, so the thread waits for the
	 * merge to give batches back */
	ck_assert_int_gt(feed_all("transformer_naive.sqlite", true), 4 * 256 * 2);
	ck_assert_int_gt(feed_all("transformer_naive.sqlite", false), 4 * 256 * 2);
	ck_assert_int_gt(feed_all("ddp/ddp2_even.sqlite", true), 0);
}
END_TEST

/* A step failing at its 1001st call: the rows before it come, then the
 * failure with the step's message; and a feed stopped with rows left. */
START_TEST(test_a_failed_step_is_told_after_its_rows)
{
	struct prof_error err = { 0 };
	struct prof_store *s = NULL, *own = NULL;
	struct stepper st = { .fail_at = 1000 };
	struct tm_source src, got = { 0 };
	struct tm_feed *f = NULL;
	long rows = 0;
	int rc;

	ck_assert_msg(prof_store__open(testutil_data_path("transformer_naive.sqlite"), &s, &err) == 0,
		      "%s", err.msg);
	open_source(s, 1, &own, &src, &st);
	tm_feed__start(&f, &src, 1, step, &st, &st.err);
	ck_assert_ptr_nonnull(f);
	while ((rc = tm_feed__next(f, 0, &got, &err)) == 0 && got.has_row)
		rows++;
	/* the open's step read the first row, the thread's 999 more */
	ck_assert_int_eq(rows, 1000);
	ck_assert_int_eq(rc, PROF_E_CORRUPT);
	ck_assert(!got.has_row);
	ck_assert_str_eq(err.msg, "damaged at row 1000");
	tm_feed__stop(f);
	prof_store__close(own);

	/* stopped with rows left: the thread ends, the cursor is closed */
	st = (struct stepper){ .fail_at = -1 };
	open_source(s, 0, &own, &src, &st);
	tm_feed__start(&f, &src, 1, step, &st, &st.err);
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(tm_feed__next(f, 0, &got, &err), 0);
	ck_assert(got.has_row);
	tm_feed__stop(f);
	tm_feed__stop(NULL);
	prof_store__close(own);
	prof_store__close(s);
}
END_TEST

int main(void)
{
	Suite *suite = suite_create("trace_feed");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, test_fed_rows_are_the_rows_in_place);
	tcase_add_test(tc, test_a_failed_step_is_told_after_its_rows);
	suite_add_tcase(suite, tc);
	return testutil_run(suite);
}
