/* test_shared_answers.c - two answers about a whole capture made once for
 * the connections to the file (prof_store__shared_take), as the HTML page
 * reads it on several: the threads' labels (sum_thread_labels__load),
 * which its folded stacks and its step section each read, and the
 * context's failure (sum_context_failure__find), which its overview and
 * its diagnosis each looked for. On copies of real captures: the answer is
 * the one read alone, a second connection opened from the first takes it
 * (the file changed under them afterwards shows it was not read again),
 * a connection of its own reads anew; a rank's scope takes the whole
 * capture's "no failure", and reads its own rows where the capture
 * failed or nobody looked. */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "model/context_failure.h"
#include "model/ranks.h"
#include "model/thread_label.h"
#include "prof/error.h"
#include "prof/store.h"
#include "testutil.h"

static struct prof_store *open_path(const char *path)
{
	struct prof_error err = { 0 };
	struct prof_store *s = NULL;

	ck_assert_msg(prof_store__open(path, &s, &err) == 0, "%s", err.msg);
	return s;
}

static struct prof_store *reopen(struct prof_store *s)
{
	struct prof_error err = { 0 };
	struct prof_store *again = NULL;

	ck_assert_msg(prof_store__reopen(s, &again, &err) == 0, "%s", err.msg);
	return again;
}

/* The label of the named thread tid, read on s. */
static void label_of(struct prof_store *s, int64_t tid, char *out, size_t cap)
{
	struct prof_error err = { 0 };
	struct sum_thread_labels *l = NULL;

	ck_assert_msg(sum_thread_labels__load(s, &l, &err) == 0, "%s", err.msg);
	snprintf(out, cap, "%s", sum_thread_labels__get(l, tid));
	sum_thread_labels__delete(l);
}

START_TEST(thread_labels_read_once_a_file)
{
	const char *path = testutil_tmp_path("shared_labels.sqlite");
	char first[128], again_label[128], own_label[128], renamed[128];
	struct prof_store *s, *again, *own;
	struct prof_error err = { 0 };
	struct prof_cursor *c = NULL;
	int64_t tid;

	testutil_copy_file(testutil_data_path("ddp/ddp2_rank0.sqlite"), path);
	s = open_path(path);
	ck_assert_msg(prof_cursor__open(s, "SELECT globalTid FROM ThreadNames LIMIT 1", &c, &err) == 0, "%s",
		      err.msg);
	ck_assert_int_eq(prof_cursor__next(c, &err), 1);
	tid = prof_cursor__int64(c, 0);
	prof_cursor__close(c);
	label_of(s, tid, first, sizeof first);
	again = reopen(s);
	/* the thread renamed behind the readers' backs: the shared labels stand */
	testutil_sqlite3(path, "UPDATE StringIds SET value = 'renamed_worker'"
			       " WHERE id IN (SELECT nameId FROM ThreadNames)");
	label_of(again, tid, again_label, sizeof again_label);
	ck_assert_str_eq(again_label, first);
	own = open_path(path);
	label_of(own, tid, own_label, sizeof own_label);
	snprintf(renamed, sizeof renamed, "%s", own_label);
	ck_assert_msg(strstr(renamed, "renamed_worker") != NULL, "a connection of its own reads '%s'", renamed);
	ck_assert_str_ne(own_label, first);
	prof_store__close(own);
	prof_store__close(again);
	prof_store__close(s);
}
END_TEST

static struct sum_context_failure failure_of(struct prof_store *s)
{
	struct prof_error err = { 0 };
	struct sum_context_failure f;

	ck_assert_msg(sum_context_failure__find(s, &f, &err) == 0, "%s", err.msg);
	return f;
}

START_TEST(context_failure_found_once_a_file)
{
	const char *path = testutil_tmp_path("shared_failure.sqlite");
	struct prof_store *s, *again, *own;
	struct sum_context_failure first, taken, anew;

	testutil_copy_file(testutil_data_path("faults/context_failed.sqlite"), path);
	s = open_path(path);
	first = failure_of(s);
	ck_assert(first.failed);
	ck_assert_int_eq(first.code, 700);
	again = reopen(s);
	/* an earlier call failed too, written behind the readers' backs */
	testutil_sqlite3(path, "UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET returnValue = 719 WHERE rowid = 50");
	taken = failure_of(again);
	ck_assert_int_eq(taken.code, first.code);
	ck_assert_int_eq(taken.at_ns, first.at_ns);
	ck_assert_str_eq(taken.call, first.call);
	own = open_path(path);
	anew = failure_of(own);
	ck_assert_int_eq(anew.code, 719);
	ck_assert_int_lt(anew.at_ns, first.at_ns);
	prof_store__close(own);
	prof_store__close(again);
	prof_store__close(s);
}
END_TEST

/* The process of the last call of the runtime table. */
static int64_t last_call_process(struct prof_store *s)
{
	struct prof_error err = { 0 };
	struct prof_cursor *c = NULL;
	int64_t pid;

	ck_assert_msg(prof_cursor__open(s, "SELECT (globalTid >> 24) << 24 FROM CUPTI_ACTIVITY_KIND_RUNTIME"
					   " ORDER BY rowid DESC LIMIT 1", &c, &err) == 0, "%s", err.msg);
	ck_assert_int_eq(prof_cursor__next(c, &err), 1);
	pid = prof_cursor__int64(c, 0);
	prof_cursor__close(c);
	return pid;
}

/* A rank's scope (a connection whose views show some rows) takes the
 * whole capture's "no failure" where another connection found it, and
 * reads its own rows otherwise: where the whole capture failed, and where
 * nobody looked. */
START_TEST(a_rank_takes_the_whole_captures_none)
{
	const char *path = testutil_tmp_path("shared_failure_rank.sqlite");
	struct prof_store *s, *again, *own;
	struct prof_error err = { 0 };
	struct sum_context_failure whole, taken, anew;
	int64_t pid;

	testutil_copy_file(testutil_data_path("ddp/ddp2_even.sqlite"), path);
	s = open_path(path);
	whole = failure_of(s);
	ck_assert(!whole.failed);
	pid = last_call_process(s);
	again = reopen(s);
	ck_assert_msg(sum_ranks__scope(again, pid, &err) == 0, "%s", err.msg);
	/* the rank's last call failed, written behind the readers' backs */
	testutil_sqlite3(path, "UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET returnValue = 700"
			 " WHERE rowid = (SELECT max(rowid) FROM CUPTI_ACTIVITY_KIND_RUNTIME)");
	taken = failure_of(again);
	ck_assert(!taken.failed);
	ck_assert_int_eq(taken.run_start_ns, whole.run_start_ns);
	ck_assert_int_eq(taken.incomplete_kernels, whole.incomplete_kernels);
	own = open_path(path);
	ck_assert_msg(sum_ranks__scope(own, pid, &err) == 0, "%s", err.msg);
	anew = failure_of(own);
	ck_assert(anew.failed);
	ck_assert_int_eq(anew.code, 700);
	ck_assert_int_eq(anew.run_start_ns, whole.run_start_ns);
	prof_store__close(own);
	prof_store__close(again);
	prof_store__close(s);

	/* a capture that failed: the rank reads its own rows */
	path = testutil_tmp_path("shared_failure_failed_rank.sqlite");
	testutil_copy_file(testutil_data_path("faults/context_failed.sqlite"), path);
	s = open_path(path);
	whole = failure_of(s);
	ck_assert(whole.failed);
	again = reopen(s);
	ck_assert_msg(sum_ranks__scope(again, last_call_process(s), &err) == 0, "%s", err.msg);
	taken = failure_of(again);
	ck_assert(taken.failed);
	ck_assert_int_eq(taken.code, whole.code);
	ck_assert_int_eq(taken.at_ns, whole.at_ns);
	ck_assert_str_eq(taken.call, whole.call);
	prof_store__close(again);
	prof_store__close(s);
}
END_TEST

int main(void)
{
	Suite *suite = suite_create("shared_answers");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, thread_labels_read_once_a_file);
	tcase_add_test(tc, context_failure_found_once_a_file);
	tcase_add_test(tc, a_rank_takes_the_whole_captures_none);
	suite_add_tcase(suite, tc);
	return testutil_run(suite);
}
