/* test_rank_model.c - the processes and ranks of a capture (model/ranks.h,
 * struct sum_ranks) and --rank (summary__select_ranks, the temporary views
 * named like the tables): on jobs made of two real captures
 * (job_fixture.h: the CUDA rows are the captures', the process info is
 * written by the test), on a single capture and on an nsys export. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "job_fixture.h"
#include "prof/store.h"
#include "model/ranks.h"
#include "model/window.h"
#include "summary/summary.h"
#include "testutil.h"
#include "prof/tables.h"
#include "prof/error.h"

#define STEADY_50 "cases/case_steady_50.sqlite"
#define STEADY_44 "cases/case_steady_44_slow.sqlite"

static const char *make_job(const char *name, unsigned flags)
{
	static char path[4096];
	char a[4096], b[4096];
	const char *caps[2];

	snprintf(a, sizeof a, "%s", testutil_data_path(STEADY_50));
	snprintf(b, sizeof b, "%s", testutil_data_path(STEADY_44));
	caps[0] = a;
	caps[1] = b;
	snprintf(path, sizeof path, "%s", testutil_tmp_path(name));
	ck_assert_int_eq(job_fixture__make(path, caps, 2, flags), 0);
	return path;
}

static struct prof_store *open_store(const char *path)
{
	struct prof_error err = { 0 };
	struct prof_store *s;

	ck_assert_msg(prof_store__open_capture(path, &s, &err) == 0, "%s", err.msg);
	return s;
}

static int64_t count(struct prof_store *s, const char *sql)
{
	struct prof_error err = { 0 };
	struct prof_cursor *c;
	int64_t n = -1;

	ck_assert_msg(prof_cursor__open(s, sql, &c, &err) == 0, "%s", err.msg);
	if (prof_cursor__next(c, &err) == 1)
		n = prof_cursor__int64(c, 0);
	prof_cursor__close(c);
	return n;
}

/* The globalPid of the capture's only process, read from its file. */
static int64_t pid_of(const char *fixture)
{
	struct prof_store *s = open_store(testutil_data_path(fixture));
	int64_t pid = count(s, "SELECT globalPid FROM PROCESSES LIMIT 1");

	prof_store__close(s);
	return pid;
}

static int64_t kernels_of(const char *fixture)
{
	struct prof_store *s = open_store(testutil_data_path(fixture));
	int64_t n = count(s, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL");

	prof_store__close(s);
	return n;
}

START_TEST(ranks_come_from_process_info_and_launcher_is_no_rank)
{
	struct prof_store *s = open_store(make_job("job.sqlite", 0));
	struct prof_error err = { 0 };
	struct sum_ranks r;
	char label[256];

	ck_assert_msg(sum_ranks__load(s, &r, &err) == 0, "%s", err.msg);
	ck_assert(r.from_process_info);
	ck_assert_int_eq(r.n, 3);
	ck_assert_int_eq(r.nranks, 2);
	ck_assert_int_eq(r.p[0].rank, 0);
	ck_assert_int_eq(r.p[0].global_pid, pid_of(STEADY_50));
	ck_assert_int_eq(r.p[1].rank, 1);
	ck_assert_int_eq(r.p[1].global_pid, pid_of(STEADY_44));
	ck_assert_int_eq(r.p[1].world_size, 2);
	ck_assert_int_eq(r.p[1].local_rank, 1);
	ck_assert_str_eq(r.p[1].launcher, "torchrun");
	/* the launcher: kept, last, not a rank, no CUDA work */
	ck_assert_int_eq(r.p[2].rank, -1);
	ck_assert_int_eq(r.p[2].pid, JOB_LAUNCHER_PID);
	ck_assert(!r.p[2].has_cuda);
	ck_assert_str_eq(r.p[2].name, "torchrun");
	ck_assert(r.p[0].has_cuda && r.p[1].has_cuda);
	ck_assert_int_eq(r.p[0].ngpus, 1);
	ck_assert_str_eq(r.p[0].gpus[0].uuid, "GPU-e465080f-725b-abd6-47a1-a2b2a8e8d1ad");
	ck_assert_str_eq(r.p[0].gpus[0].name, "NVIDIA H100 80GB HBM3");
	sum_process__label(&r.p[1], label, sizeof label);
	ck_assert_str_eq(label, "rank 1 \u00b7 node-a \u00b7 GPU 0 (GPU-e465080f)");
	sum_process__label(&r.p[2], label, sizeof label);
	ck_assert_str_eq(label, "torchrun (pid 7) \u00b7 node-a");
	ck_assert_ptr_eq(sum_ranks__rank(&r, 1), &r.p[1]);
	ck_assert_ptr_null(sum_ranks__rank(&r, 2));
	ck_assert(!r.filtered && r.p[0].selected && r.p[2].selected);
	sum_ranks__exit(&r);
	prof_store__close(s);
}
END_TEST

START_TEST(ranks_follow_launcher_numbers_not_pid_order)
{
	struct prof_store *s = open_store(make_job("job_reversed.sqlite", JOB_REVERSE));
	struct prof_error err = { 0 };
	struct sum_ranks r;

	ck_assert_msg(sum_ranks__load(s, &r, &err) == 0, "%s", err.msg);
	ck_assert_int_eq(r.p[0].rank, 0);
	ck_assert_int_eq(r.p[0].global_pid, pid_of(STEADY_44));
	ck_assert_int_eq(r.p[1].global_pid, pid_of(STEADY_50));
	sum_ranks__exit(&r);
	prof_store__close(s);
}
END_TEST

START_TEST(ranks_without_process_info_are_processes_with_cuda_work_in_pid_order)
{
	struct prof_store *s = open_store(make_job("job_noinfo.sqlite", JOB_NO_INFO));
	struct prof_error err = { 0 };
	struct sum_ranks r;
	char label[256];

	ck_assert_msg(sum_ranks__load(s, &r, &err) == 0, "%s", err.msg);
	ck_assert(!r.from_process_info);
	ck_assert_int_eq(r.nranks, 2);
	/* pid 2539 before 2552 */
	ck_assert_int_eq(r.p[0].pid, 2539);
	ck_assert_int_eq(r.p[0].rank, 0);
	ck_assert_int_eq(r.p[1].pid, 2552);
	ck_assert_int_eq(r.p[1].rank, 1);
	ck_assert_int_eq(r.p[1].world_size, 2);
	ck_assert_int_eq(r.p[2].rank, -1);
	ck_assert_ptr_null(r.p[0].gpus[0].uuid);
	sum_process__label(&r.p[0], label, sizeof label);
	ck_assert_str_eq(label, "rank 0 \u00b7 node-a \u00b7 GPU 0");
	sum_ranks__exit(&r);
	prof_store__close(s);
}
END_TEST

START_TEST(ranks_of_single_capture_and_nsys_export)
{
	struct prof_store *s = open_store(testutil_data_path("clean_loop.sqlite"));
	struct prof_error err = { 0 };
	struct sum_ranks r;
	char label[256];

	ck_assert_msg(sum_ranks__load(s, &r, &err) == 0, "%s", err.msg);
	ck_assert_int_eq(r.n, 1);
	ck_assert_int_eq(r.p[0].rank, 0);
	ck_assert_str_eq(r.p[0].host, "vm");
	sum_ranks__exit(&r);
	prof_store__close(s);

	/* an export lists every process of the node: only the CUDA one stays */
	s = open_store(testutil_data_path("nsys/saxpy-mpi-cuda-rank0.sqlite"));
	ck_assert_msg(sum_ranks__load(s, &r, &err) == 0, "%s", err.msg);
	ck_assert_int_eq(r.nranks, 1);
	ck_assert_int_eq(r.p[0].rank, 0);
	ck_assert_str_eq(r.p[0].host, "nid001608");
	ck_assert_str_eq(r.p[0].gpus[0].name, "NVIDIA A100-SXM4-40GB");
	ck_assert_int_le(r.n, 3);
	sum_process__label(&r.p[0], label, sizeof label);
	ck_assert_str_eq(label, "rank 0 \u00b7 nid001608 \u00b7 GPU 0");
	sum_ranks__exit(&r);
	prof_store__close(s);
}
END_TEST

START_TEST(select_ranks_filters_every_table_by_process)
{
	const char *job = make_job("job_select.sqlite", 0);
	struct prof_store *s = open_store(job);
	struct prof_error err = { 0 };
	struct sum_ranks r;
	int64_t pid1 = pid_of(STEADY_44);

	ck_assert_int_eq(count(s, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL"),
			 kernels_of(STEADY_50) + kernels_of(STEADY_44));
	ck_assert_msg(summary__select_ranks(s, "1", &err) == 0, "%s", err.msg);
	ck_assert_int_eq(count(s, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL"),
			 kernels_of(STEADY_44));
	ck_assert_int_eq(count(s, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE globalPid <> "
			       "(SELECT globalPid FROM PROCESSES WHERE pid = 2552)"), 0);
	ck_assert_int_eq(count(s, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME WHERE"
			       " (globalTid >> 24) << 24 <> (SELECT globalPid FROM PROCESSES WHERE pid = 2552)"), 0);
	ck_assert_int_gt(count(s, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME"), 0);
	ck_assert_int_eq(count(s, "SELECT count(*) FROM NVTX_EVENTS WHERE eventType = 59"), 45);
	ck_assert_int_eq(count(s, "SELECT count(*) FROM PROCESSES"), 1);
	ck_assert_int_eq(prof_store__count(s, PROF_T_KERNEL), kernels_of(STEADY_44));
	/* the view's rowid is the table's */
	ck_assert_int_eq(count(s, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN"
			       " main.CUPTI_ACTIVITY_KIND_KERNEL m ON m.rowid = k.rowid AND m.start = k.start"),
			 kernels_of(STEADY_44));
	/* the model stays the whole capture's and says who is chosen */
	ck_assert_msg(sum_ranks__load(s, &r, &err) == 0, "%s", err.msg);
	ck_assert_int_eq(r.n, 3);
	ck_assert(r.filtered);
	ck_assert(!r.p[0].selected && r.p[1].selected && !r.p[2].selected);
	ck_assert_int_eq(r.p[1].global_pid, pid1);
	sum_ranks__exit(&r);
	prof_store__close(s);
}
END_TEST

START_TEST(select_ranks_keeps_the_indexes_in_query_plans)
{
	struct prof_store *s = open_store(make_job("job_plan.sqlite", 0));
	struct prof_error err = { 0 };
	struct prof_cursor *c;
	bool corr = false, nvtx = false;

	ck_assert_msg(summary__select_ranks(s, "0", &err) == 0, "%s", err.msg);
	/* the launch join of the traces and diagnose (through the kernels'
	 * correlationId index: the API tables have none), and the range open
	 * at a call */
	ck_assert(prof_cursor__open(s, "EXPLAIN QUERY PLAN SELECT k.start, r.start, n.start FROM "
				    PROF_T_KERNEL " k JOIN " PROF_T_RUNTIME " r ON r.correlationId ="
				    " k.correlationId LEFT JOIN " PROF_T_NVTX " n ON n.globalTid = r.globalTid"
				    " AND n.start <= r.start AND n.end > r.start", &c, &err) == 0);
	while (prof_cursor__next(c, &err) == 1) {
		const char *detail = prof_cursor__text(c, 3);

		corr |= strstr(detail, "USING INDEX perfkit_kernel_corr") != NULL;
		nvtx |= strstr(detail, "USING INDEX perfkit_nvtx_tid") != NULL;
	}
	prof_cursor__close(c);
	ck_assert_msg(corr, "the launch join lost the kernels' correlationId index");
	ck_assert_msg(nvtx, "the NVTX join lost its (globalTid, start) index");
	prof_store__close(s);
}
END_TEST

START_TEST(select_ranks_refuses_unknown_rank_and_bad_lists)
{
	struct prof_store *s = open_store(make_job("job_bad.sqlite", 0));
	struct prof_error err = { 0 };
	static const char *const bad[] = { "", "x", "1,", ",1", "-1", "1;2", "0,,1", "99999999999" };

	ck_assert_int_eq(summary__select_ranks(s, "2", &err), PROF_E_USAGE);
	ck_assert_msg(strstr(err.msg, "has no rank 2 (ranks 0-1)") != NULL, "%s", err.msg);
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		memset(&err, 0, sizeof err);
		ck_assert_msg(summary__select_ranks(s, bad[i], &err) == PROF_E_USAGE, "'%s' taken", bad[i]);
		ck_assert(err.msg[0] && !strchr(err.msg, '\n'));
	}
	/* nothing was filtered by the refusals */
	ck_assert_int_eq(count(s, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL"),
			 kernels_of(STEADY_50) + kernels_of(STEADY_44));
	prof_store__close(s);
}
END_TEST

START_TEST(select_every_rank_of_single_capture_makes_no_views)
{
	struct prof_store *s = open_store(testutil_data_path("clean_loop.sqlite"));
	struct prof_error err = { 0 };

	ck_assert_msg(summary__select_ranks(s, "0", &err) == 0, "%s", err.msg);
	ck_assert_int_eq(count(s, "SELECT count(*) FROM sqlite_temp_master WHERE type = 'view'"
				    " AND sql LIKE '%perfkit_rank_pids%'"), 0);
	ck_assert_int_eq(count(s, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL"),
			 kernels_of("clean_loop.sqlite"));
	prof_store__close(s);
}
END_TEST

START_TEST(scope_narrows_to_one_rank_and_unscope_restores_the_choice)
{
	struct prof_store *s = open_store(make_job("job_scope.sqlite", 0));
	struct prof_error err = { 0 };
	int64_t all = kernels_of(STEADY_50) + kernels_of(STEADY_44);

	/* without --rank: scope, then back to the whole capture, views gone */
	ck_assert_int_eq(sum_ranks__scope(s, pid_of(STEADY_50), &err), 0);
	ck_assert_int_eq(count(s, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL"),
			 kernels_of(STEADY_50));
	ck_assert_int_eq(sum_ranks__unscope(s, &err), 0);
	ck_assert_int_eq(count(s, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL"), all);
	ck_assert_int_eq(count(s, "SELECT count(*) FROM sqlite_temp_master WHERE type = 'view'"
				    " AND sql LIKE '%perfkit_rank_pids%'"), 0);
	/* with --rank=1: scope to rank 0, back to rank 1 */
	ck_assert_int_eq(summary__select_ranks(s, "1", &err), 0);
	ck_assert_int_eq(sum_ranks__scope(s, pid_of(STEADY_50), &err), 0);
	ck_assert_int_eq(count(s, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL"),
			 kernels_of(STEADY_50));
	ck_assert_int_eq(sum_ranks__unscope(s, &err), 0);
	ck_assert_int_eq(count(s, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL"),
			 kernels_of(STEADY_44));
	prof_store__close(s);
}
END_TEST

/* Each rank of a job analysed in turn reads its own rows, not the job's:
 * the scoped views seek to the rank's run of rowids (a merge writes each
 * capture's rows together), NVTX's to the rank's thread ids through its
 * (globalTid, start) index, so the work over all ranks grows with the
 * job, not with its square; what they show is still exactly the rank's. */
START_TEST(scope_seeks_to_the_rank_rows_in_query_plans)
{
	static const char *const tables[][3] = {
		{ "CUPTI_ACTIVITY_KIND_KERNEL", "globalPid", "(rowid>? AND rowid<?)" },
		{ "CUPTI_ACTIVITY_KIND_RUNTIME", "globalTid", "(rowid>? AND rowid<?)" },
		{ "NVTX_EVENTS", "globalTid", "perfkit_nvtx_tid (globalTid>? AND globalTid<?)" },
	};
	struct prof_store *s = open_store(make_job("job_seek.sqlite", 0));
	struct prof_error err = { 0 };
	struct sum_capture_time whole, scoped, again;
	int64_t pid = pid_of(STEADY_44);
	char sql[512];

	ck_assert_msg(sum_capture__time(s, &whole, &err) == 0, "%s", err.msg);
	ck_assert_msg(sum_ranks__scope(s, pid, &err) == 0, "%s", err.msg);
	for (size_t i = 0; i < sizeof tables / sizeof tables[0]; i++) {
		struct prof_cursor *c;
		bool seeks = false;

		snprintf(sql, sizeof sql, "EXPLAIN QUERY PLAN SELECT start FROM %s", tables[i][0]);
		ck_assert(prof_cursor__open(s, sql, &c, &err) == 0);
		while (prof_cursor__next(c, &err) == 1)
			seeks |= strstr(prof_cursor__text(c, 3), tables[i][2]) != NULL;
		prof_cursor__close(c);
		ck_assert_msg(seeks, "%s: the scoped view scans every rank's rows", tables[i][0]);
		snprintf(sql, sizeof sql, "SELECT count(*) FROM %s", tables[i][0]);
		ck_assert_int_gt(count(s, sql), 0);
		snprintf(sql, sizeof sql, "SELECT (SELECT count(*) FROM %s) - (SELECT count(*) FROM main.%s"
			 " WHERE ((%s >> 24) << 24) = %lld)", tables[i][0], tables[i][0], tables[i][1],
			 (long long)pid);
		ck_assert_int_eq(count(s, sql), 0);
	}
	/* the extent of every row, kept from the first rank for the next */
	ck_assert_msg(sum_capture__time(s, &scoped, &err) == 0, "%s", err.msg);
	ck_assert_msg(sum_capture__time(s, &again, &err) == 0, "%s", err.msg);
	ck_assert_int_eq(scoped.zero_ns, whole.zero_ns);
	ck_assert_int_eq(again.zero_ns, whole.zero_ns);
	ck_assert_int_eq(again.first_ns, scoped.first_ns);
	ck_assert_int_eq(again.last_ns, scoped.last_ns);
	ck_assert_int_eq(sum_ranks__unscope(s, &err), 0);
	prof_store__close(s);
}
END_TEST

/* Each table's lowest and highest rowid of each process, which bound the
 * scoped views (rank_filter.c), are what SQL's GROUP BY over the table
 * says: on a one-file DDP capture, whose launcher's and ranks' rows
 * interleave, and on a merged job, whose ranks' rows lie together. */
static char *joined(struct prof_store *s, const char *sql)
{
	struct prof_error err = { 0 };
	struct prof_cursor *c;
	char *text = NULL;

	ck_assert_msg(prof_cursor__open(s, sql, &c, &err) == 0, "%s: %s", sql, err.msg);
	if (prof_cursor__next(c, &err) == 1 && prof_cursor__text(c, 0))
		text = strdup(prof_cursor__text(c, 0));
	prof_cursor__close(c);
	return text;
}

START_TEST(rank_rows_are_each_process_first_and_last_row)
{
	static const char *const tables[][2] = {
		{ "CUPTI_ACTIVITY_KIND_KERNEL", "globalPid" },  { "CUPTI_ACTIVITY_KIND_RUNTIME", "globalTid" },
		{ "CUPTI_ACTIVITY_KIND_DRIVER", "globalTid" },  { "CUPTI_ACTIVITY_KIND_MEMCPY", "globalPid" },
		{ "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION", "globalTid" },
	};
	char one[4096], by_time[4096];
	const char *captures[3];

	/* the data path's buffer is the next call's too */
	snprintf(one, sizeof one, "%s", testutil_data_path("ddp/ddp2_even.sqlite"));
	captures[0] = one;
	captures[1] = make_job("job_rows.sqlite", 0);
	/* the one-file capture's rows in time order, as an nsys export of a
	 * job writes them: the processes' rows interleave */
	snprintf(by_time, sizeof by_time, "%s", testutil_tmp_path("ddp2_by_time.sqlite"));
	testutil_copy_file(one, by_time);
	for (size_t i = 0; i < sizeof tables / sizeof tables[0]; i++) {
		char sql[512];

		snprintf(sql, sizeof sql, "CREATE TEMP TABLE t AS SELECT * FROM %s ORDER BY start; DELETE FROM %s; "
			 "INSERT INTO %s SELECT * FROM t; DROP TABLE t", tables[i][0], tables[i][0], tables[i][0]);
		testutil_sqlite3(by_time, sql);
	}
	captures[2] = by_time;
	{
		struct prof_store *s = open_store(by_time);

		/* many more runs of one process than processes */
		ck_assert_int_gt(count(s, "SELECT count(*) FROM (SELECT ((globalTid >> 24) << 24) AS p, lag((globalTid "
				      ">> 24) << 24) OVER (ORDER BY rowid) AS q FROM CUPTI_ACTIVITY_KIND_RUNTIME) "
				      "WHERE p <> q"), 100);
		prof_store__close(s);
	}

	for (size_t k = 0; k < 3; k++) {
		struct prof_store *s = open_store(captures[k]);
		struct prof_error err = { 0 };
		struct sum_ranks r;
		int matched = 0;
		char sql[1024];

		ck_assert_msg(sum_ranks__load(s, &r, &err) == 0, "%s", err.msg);
		ck_assert_int_ge(r.n, 2);
		ck_assert_msg(sum_ranks__scope(s, r.p[1].global_pid, &err) == 0, "%s", err.msg);
		for (size_t i = 0; i < sizeof tables / sizeof tables[0]; i++) {
			char *want, *got;
			int64_t tbl;

			snprintf(sql, sizeof sql, "SELECT group_concat(x, ' ') FROM (SELECT pid || ':' || min(rowid) "
				 "|| ':' || max(rowid) AS x FROM (SELECT rowid, ((%s >> 24) << 24) AS pid FROM main.%s) "
				 "WHERE pid IS NOT NULL GROUP BY pid ORDER BY pid)", tables[i][1], tables[i][0]);
			want = joined(s, sql);
			if (!want)
				continue;
			/* the noted table whose rows are this table's */
			for (tbl = 0; tbl < 32; tbl++) {
				snprintf(sql, sizeof sql, "SELECT group_concat(x, ' ') FROM (SELECT globalPid || ':' || lo "
					 "|| ':' || hi AS x FROM temp.perfkit_rank_rows WHERE tbl = %lld ORDER BY globalPid)",
					 (long long)tbl);
				got = joined(s, sql);
				if (got && strcmp(got, want) == 0) {
					matched++;
					free(got);
					break;
				}
				free(got);
			}
			ck_assert_msg(tbl < 32, "%s of %s: no noted rows are %s", tables[i][0], captures[k], want);
			free(want);
		}
		ck_assert_int_ge(matched, 3);
		ck_assert_int_eq(sum_ranks__unscope(s, &err), 0);
		sum_ranks__exit(&r);
		prof_store__close(s);
	}
}
END_TEST

int main(void)
{
	Suite *s = suite_create("rank_model");
	TCase *tc = tcase_create("ranks");

	tcase_add_test(tc, ranks_come_from_process_info_and_launcher_is_no_rank);
	tcase_add_test(tc, ranks_follow_launcher_numbers_not_pid_order);
	tcase_add_test(tc, ranks_without_process_info_are_processes_with_cuda_work_in_pid_order);
	tcase_add_test(tc, ranks_of_single_capture_and_nsys_export);
	tcase_add_test(tc, select_ranks_filters_every_table_by_process);
	tcase_add_test(tc, select_ranks_keeps_the_indexes_in_query_plans);
	tcase_add_test(tc, select_ranks_refuses_unknown_rank_and_bad_lists);
	tcase_add_test(tc, select_every_rank_of_single_capture_makes_no_views);
	tcase_add_test(tc, scope_narrows_to_one_rank_and_unscope_restores_the_choice);
	tcase_add_test(tc, scope_seeks_to_the_rank_rows_in_query_plans);
	tcase_add_test(tc, rank_rows_are_each_process_first_and_last_row);
	suite_add_tcase(s, tc);
	return testutil_run(s);
}
