/* test_input_gaps.c - the host's time before each host-to-device copy
 * (analysis/core/input_gaps.c), read in two passes over the calls, and in
 * one over diagnose's table of calls (stored in start order) or from the
 * copies' calls there, each looking back for its thread's call before it
 * (and walking every call where one lies further back), against the
 * window function over every call it stands in for: the same total on
 * real captures (one thread and several, nsys exports, several processes),
 * whole and in part of their time. */
#define _GNU_SOURCE /* asprintf */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>

#include "analysis/core/input_gaps.h"
#include "analysis/core/scope.h"
#include "model/sql.h"
#include "testutil.h"
#include "prof/error.h"
#include "prof/store.h"

static const char *const captures[] = {
	"corpus/timm_resnet_dataloader.sqlite", "threads/torch_dataloader_backward.sqlite",
	"nsys/cloverleaf-cuda.sqlite",          "ddp/two_gpus/ddp2_even.sqlite",
	"corpus/phases_no_nvtx.sqlite",         "corpus/pageable_sync_copies.sqlite",
	"batched_forces_naive.sqlite",          "hash_embedding_naive.sqlite",
	"corpus/hf_gpt2_train.sqlite",          "transformer_optimized.sqlite",
};

/* The window function: each call's previous call on its thread by start. */
static int64_t by_window_function(struct prof_store *s, const char *calls, int64_t lo, int64_t hi)
{
	static const char fmt[] =
		"SELECT CAST(total(max(0, a.start - a.prev_end)) AS INTEGER)"
		" FROM (SELECT start, globalTid, correlationId,"
		"  lag(end) OVER (PARTITION BY globalTid ORDER BY start) AS prev_end"
		"  FROM %s WHERE start >= ?1 AND start < ?2) a"
		" WHERE a.prev_end IS NOT NULL AND a.correlationId IN (SELECT correlationId"
		"  FROM CUPTI_ACTIVITY_KIND_MEMCPY WHERE copyKind = 1 AND start >= ?1 AND start < ?2"
		"  AND correlationId IS NOT NULL)";
	char sql[4096];
	struct prof_cursor *c = NULL;
	struct prof_error err = { 0 };
	int64_t v = -1;

	snprintf(sql, sizeof sql, fmt, calls);
	ck_assert_msg(prof_cursor__open(s, sql, &c, &err) == 0, "%s", err.msg);
	prof_cursor__bind_int64(c, 1, lo);
	prof_cursor__bind_int64(c, 2, hi);
	ck_assert_int_eq(prof_cursor__next(c, &err), 1);
	v = prof_cursor__int64(c, 0);
	prof_cursor__close(c);
	return v;
}

static void extent(struct prof_store *s, const char *calls, int64_t *lo, int64_t *hi)
{
	char sql[4096];
	struct prof_cursor *c = NULL;
	struct prof_error err = { 0 };

	snprintf(sql, sizeof sql, "SELECT min(start), max(start) FROM %s", calls);
	ck_assert_msg(prof_cursor__open(s, sql, &c, &err) == 0, "%s", err.msg);
	ck_assert_int_eq(prof_cursor__next(c, &err), 1);
	*lo = prof_cursor__int64(c, 0);
	*hi = prof_cursor__int64(c, 1) + 1;
	prof_cursor__close(c);
}

START_TEST(test_two_passes_agree_with_the_window_function)
{
	int with_gaps = 0;

	for (size_t i = 0; i < sizeof captures / sizeof captures[0]; i++) {
		struct prof_store *s = NULL;
		struct prof_error err = { 0 };
		int64_t lo, hi;
		char *source, *calls = NULL;
		int rc;

		ck_assert_msg(prof_store__open(testutil_data_path(captures[i]), &s, &err) == 0, "%s",
			      err.msg);
		source = sum_api_calls(s, &rc, &err);
		ck_assert_msg(source && rc == 0, "%s: %s", captures[i], err.msg);
		/* as diagnose's temporary table of the calls would be read */
		ck_assert_int_gt(asprintf(&calls, "(%s)", source), 0);
		free(source);
		extent(s, calls, &lo, &hi);
		/* the whole capture, its second half, and a middle third */
		for (int part = 0; part < 3; part++) {
			struct sum_window w = { 0 };
			int64_t got = -1, want;

			w.start_ns = part == 0 ? lo : lo + (hi - lo) / 3 * (part == 1 ? 1 : 2) / 2;
			w.end_ns = part == 2 ? lo + (hi - lo) / 3 * 2 : hi;
			want = by_window_function(s, calls, w.start_ns, w.end_ns);
			ck_assert_msg(input_gaps__total(s, &w, calls, &got, &err) == 0, "%s", err.msg);
			ck_assert_msg(got == want, "%s, part %d: %lld ns, the window function %lld ns",
				      captures[i], part, (long long)got, (long long)want);
			with_gaps += part == 0 && got > 0;
		}
		free(calls);
		/* diagnose's own table, read once in start order, and the same
		 * rows read in two passes under another name */
		{
			struct diag_scope scope = { .store = s };

			ck_assert_msg(diag_scope__api_view(&scope, &err) == 0, "%s", err.msg);
			for (int part = 0; part < 3; part++) {
				struct sum_window w = { 0 };
				int64_t looked_up = -1, once = -1, short_look = -1, twice = -1, want, limit;

				w.start_ns = part == 0 ? lo : lo + (hi - lo) / 3 * (part == 1 ? 1 : 2) / 2;
				w.end_ns = part == 2 ? lo + (hi - lo) / 3 * 2 : hi;
				want = by_window_function(s, DIAG_API_CALLS, w.start_ns, w.end_ns);
				ck_assert_msg(input_gaps__total(s, &w, DIAG_API_CALLS, &looked_up, &err) == 0, "%s",
					      err.msg);
				/* every call walked: none looked back for */
				limit = input_gaps__set_scan_limit(0);
				ck_assert_msg(input_gaps__total(s, &w, DIAG_API_CALLS, &once, &err) == 0, "%s", err.msg);
				/* looked back for until one lies a call further */
				input_gaps__set_scan_limit(1);
				ck_assert_msg(input_gaps__total(s, &w, DIAG_API_CALLS, &short_look, &err) == 0, "%s",
					      err.msg);
				input_gaps__set_scan_limit(limit);
				ck_assert_msg(input_gaps__total(s, &w, "(SELECT * FROM " DIAG_API_CALLS ")", &twice, &err) == 0,
					      "%s", err.msg);
				ck_assert_msg(looked_up == want && once == want && short_look == want && twice == want,
					      "%s, part %d: %lld ns looked up, %lld ns in one pass, %lld ns looked up"
					      " a call back, %lld ns in two, the window function %lld ns", captures[i],
					      part, (long long)looked_up, (long long)once, (long long)short_look,
					      (long long)twice, (long long)want);
				with_gaps += part == 0 && once > 0;
			}
		}
		prof_store__close(s);
	}
	ck_assert_int_ge(with_gaps, 16);
}
END_TEST

/* Calls that start together (a copy's call with its thread's call before
 * it, copy calls with each other): looked up, the total is the walk's,
 * which gives a copy the first stored call of the latest earlier start,
 * and one only to the first of a thread's copies of one start. */
START_TEST(test_calls_that_start_together_are_looked_up_as_walked)
{
	char path[4096];
	struct prof_store *s = NULL;
	struct prof_error err = { 0 };
	struct diag_scope scope = { 0 };
	struct sum_window w = { 0 };
	int64_t looked_up = -1, walked = -1, limit;

	snprintf(path, sizeof path, "%s", testutil_tmp_path("input_gaps_ties.sqlite"));
	testutil_copy_file(testutil_data_path("corpus/timm_resnet_dataloader.sqlite"), path);
	/* a third of the calls start with the call stored before them */
	testutil_sqlite3(path, "UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET start = (SELECT b.start FROM"
			 " CUPTI_ACTIVITY_KIND_RUNTIME b WHERE b.rowid = CUPTI_ACTIVITY_KIND_RUNTIME.rowid - 1)"
			 " WHERE rowid % 3 = 0 AND rowid > 1;"
			 /* and every other copy's call starts with its thread's copy call before it */
			 " WITH copies AS (SELECT correlationId FROM CUPTI_ACTIVITY_KIND_MEMCPY WHERE copyKind = 1)"
			 " UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET start = coalesce((SELECT max(b.start) FROM"
			 " CUPTI_ACTIVITY_KIND_RUNTIME b WHERE b.globalTid = CUPTI_ACTIVITY_KIND_RUNTIME.globalTid"
			 " AND b.rowid < CUPTI_ACTIVITY_KIND_RUNTIME.rowid AND b.correlationId IN copies), start)"
			 " WHERE correlationId IN copies AND rowid % 2 = 0");
	ck_assert_msg(prof_store__open(path, &s, &err) == 0, "%s", err.msg);
	scope.store = s;
	ck_assert_msg(diag_scope__api_view(&scope, &err) == 0, "%s", err.msg);
	w.start_ns = INT64_MIN;
	w.end_ns = INT64_MAX;
	ck_assert_msg(input_gaps__total(s, &w, DIAG_API_CALLS, &looked_up, &err) == 0, "%s", err.msg);
	limit = input_gaps__set_scan_limit(0);
	ck_assert_msg(input_gaps__total(s, &w, DIAG_API_CALLS, &walked, &err) == 0, "%s", err.msg);
	input_gaps__set_scan_limit(limit);
	ck_assert_int_gt(walked, 0);
	ck_assert_int_eq(looked_up, walked);
	prof_store__close(s);
}
END_TEST

int main(void)
{
	Suite *suite = suite_create("input_gaps");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_two_passes_agree_with_the_window_function);
	tcase_add_test(tc, test_calls_that_start_together_are_looked_up_as_walked);
	suite_add_tcase(suite, tc);
	return testutil_run(suite);
}
