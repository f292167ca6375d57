/* test_rank_holds_only.c - whether a capture holds one process's rows
 * alone (sum_ranks__holds_only), which lets a rank's analysis read the
 * capture as it is: yes for a DDP rank's own capture and its process, no
 * for another process, for a capture of two ranks, and for a copy where
 * one call or one NVTX range is another process's or a call no thread's
 * (the calls answered from their census's walk, the rest by SQL); asked of every row
 * whatever a rank's scope shows; answered once for the file's
 * connections (a change made behind their backs is not seen by a
 * connection opened again from one that asked), and read again by a
 * connection of its own. */
#include <check.h>
#include <stdint.h>
#include <stdio.h>

#include "model/ranks.h"
#include "prof/store.h"
#include "testutil.h"

#define RANK0_PID 12851347456LL /* ddp2_rank0's process */
#define EVEN_RANK0_PID 10536091648LL /* ddp2_even's rank 0 */

static struct prof_store *open_store(const char *path)
{
	struct prof_error err = { 0 };
	struct prof_store *s = NULL;

	ck_assert_msg(prof_store__open(path, &s, &err) == 0, "%s: %s", path, err.msg);
	return s;
}

static bool only(struct prof_store *s, int64_t pid)
{
	struct prof_error err = { 0 };
	bool yes = false;

	ck_assert_msg(sum_ranks__holds_only(s, pid, &yes, &err) == 0, "%s", err.msg);
	return yes;
}

static bool path_only(const char *path, int64_t pid)
{
	struct prof_store *s = open_store(path);
	bool yes = only(s, pid);

	prof_store__close(s);
	return yes;
}

START_TEST(a_ranks_own_capture_holds_it_alone)
{
	ck_assert(path_only(testutil_data_path("ddp/ddp2_rank0.sqlite"), RANK0_PID));
	ck_assert(!path_only(testutil_data_path("ddp/ddp2_rank0.sqlite"), RANK0_PID + (1LL << 24)));
	ck_assert(!path_only(testutil_data_path("ddp/ddp2_even.sqlite"), EVEN_RANK0_PID));
	/* one row of another process, in the calls or the NVTX ranges */
	ck_assert(!path_only(testutil_changed_copy("ddp/ddp2_rank0.sqlite", "holds_only_call.sqlite",
						   "UPDATE CUPTI_ACTIVITY_KIND_DRIVER SET globalTid = globalTid + 16777216"
						   " WHERE rowid = 7"),
			     RANK0_PID));
	/* a call of no thread is no process's: not the rank's alone */
	ck_assert(!path_only(testutil_changed_copy("ddp/ddp2_rank0.sqlite", "holds_only_no_thread.sqlite",
						   "UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET globalTid = NULL WHERE rowid = 5"),
			     RANK0_PID));
	ck_assert(!path_only(testutil_changed_copy("ddp/ddp2_rank0.sqlite", "holds_only_nvtx.sqlite",
						   "UPDATE NVTX_EVENTS SET globalTid = globalTid + 16777216"
						   " WHERE rowid = (SELECT max(rowid) FROM NVTX_EVENTS WHERE eventType = 59)"),
			     RANK0_PID));
}
END_TEST

START_TEST(asked_of_every_row_once_for_the_files_connections)
{
	char path[4096];
	struct prof_error err = { 0 };
	struct prof_store *s, *again;

	/* a rank's scope shows its rows alone; the answer is of every row */
	s = open_store(testutil_data_path("ddp/ddp2_even.sqlite"));
	ck_assert_int_eq(sum_ranks__scope(s, EVEN_RANK0_PID, &err), 0);
	ck_assert(!only(s, EVEN_RANK0_PID));
	ck_assert_int_eq(sum_ranks__unscope(s, &err), 0);
	prof_store__close(s);

	snprintf(path, sizeof path, "%s", testutil_tmp_path("holds_only_once.sqlite"));
	testutil_copy_file(testutil_data_path("ddp/ddp2_rank0.sqlite"), path);
	s = open_store(path);
	ck_assert(only(s, RANK0_PID));
	/* each process its own answer */
	ck_assert(!only(s, RANK0_PID + (1LL << 24)));
	ck_assert_msg(prof_store__reopen(s, &again, &err) == 0, "%s", err.msg);
	/* a call of another process, written behind the readers' backs */
	testutil_sqlite3(path, "UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET globalTid = globalTid + 16777216 WHERE rowid = 9");
	ck_assert(only(again, RANK0_PID));
	prof_store__close(again);
	prof_store__close(s);
	ck_assert(!path_only(path, RANK0_PID));
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("rank_holds_only");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, a_ranks_own_capture_holds_it_alone);
	tcase_add_test(tc, asked_of_every_row_once_for_the_files_connections);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return testutil_run(suite());
}
