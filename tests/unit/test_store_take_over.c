/* test_store_take_over.c - finishing a run's capture by taking over its
 * (largest) process file (prof_writer__take_over) gives the capture a merge
 * gives,
 * and is declined, leaving the merge to do it, when it cannot be done
 * safely. The process file is a real capture (tests/data) put back into
 * WAL mode, the state a process of a run leaves its file in. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "prof/store.h"
#include "testutil.h"

#define FIXTURE "rollout_naive.sqlite"

/* A copy of a fixture as a process would leave it, at a fresh path. */
static void process_file_of(const char *fixture, char *path, size_t cap, const char *name)
{
	snprintf(path, cap, "%s", testutil_tmp_path(name));
	testutil_copy_file(testutil_data_path(fixture), path);
	testutil_sqlite3(path, "PRAGMA journal_mode = WAL;");
}

static void process_file(char *path, size_t cap, const char *name)
{
	process_file_of(FIXTURE, path, cap, name);
}

/* The output of a run as it stands when the program has ended: its
 * metadata and a counter, no rows. */
static struct prof_writer *run_output(char *path, size_t cap, const char *name)
{
	struct prof_error err = { 0 };
	struct prof_writer *w;

	snprintf(path, cap, "%s", testutil_tmp_path(name));
	ck_assert_msg(prof_writer__create(path, 0, &w, &err) == 0, "%s", err.msg);
	ck_assert_int_eq(prof_writer__meta(w, "command", "the run's command"), 0);
	ck_assert_int_eq(prof_writer__meta(w, "live_dir", NULL), 0);
	ck_assert_int_eq(prof_writer__count(w, "dropped_records", 3), 0);
	return w;
}

static struct prof_store *open_store(const char *path)
{
	struct prof_error err = { 0 };
	struct prof_store *s;

	ck_assert_msg(prof_store__open(path, &s, &err) == 0, "%s", err.msg);
	return s;
}

/* Every row of sql on a and b, compared column by column as text. */
static void expect_same_rows(struct prof_store *a, struct prof_store *b, const char *sql)
{
	struct prof_error err = { 0 };
	struct prof_cursor *ca, *cb;
	int ra, rb;
	long rows = 0;

	ck_assert_msg(prof_cursor__open(a, sql, &ca, &err) == 0, "%s", err.msg);
	ck_assert_msg(prof_cursor__open(b, sql, &cb, &err) == 0, "%s", err.msg);
	while ((ra = prof_cursor__next(ca, &err)) == 1 && (rb = prof_cursor__next(cb, &err)) == 1) {
		ck_assert_int_eq(prof_cursor__columns(ca), prof_cursor__columns(cb));
		for (int i = 0; i < prof_cursor__columns(ca); i++) {
			const char *va = prof_cursor__text(ca, i), *vb = prof_cursor__text(cb, i);

			ck_assert_msg(va == vb || (va && vb && !strcmp(va, vb)),
				      "%s: row %ld column %s: %s vs %s", sql, rows,
				      prof_cursor__column_name(ca, i), va ? va : "NULL",
				      vb ? vb : "NULL");
		}
		rows++;
	}
	ck_assert_int_eq(ra, 0);
	ck_assert_int_eq(prof_cursor__next(cb, &err), 0);
	prof_cursor__close(ca);
	prof_cursor__close(cb);
}

/* Every table of a (and its rows), and the indexes, the same in b. */
static void expect_same_capture(struct prof_store *a, struct prof_store *b)
{
	struct prof_error err = { 0 };
	struct prof_cursor *c;
	char sql[256];
	int tables = 0;

	expect_same_rows(a, b, "SELECT type, name, tbl_name, sql FROM sqlite_master"
			 " WHERE name NOT LIKE 'sqlite_%' ORDER BY name");
	ck_assert_int_eq(prof_cursor__open(a, "SELECT name FROM sqlite_master WHERE type = 'table'"
					   " AND name NOT LIKE 'sqlite_%' ORDER BY name", &c, &err), 0);
	while (prof_cursor__next(c, &err) == 1) {
		snprintf(sql, sizeof sql, "SELECT * FROM \"%s\" ORDER BY rowid", prof_cursor__text(c, 0));
		expect_same_rows(a, b, sql);
		tables++;
	}
	prof_cursor__close(c);
	ck_assert_int_gt(tables, 10);
}

START_TEST(store_take_over_gives_the_capture_a_merge_gives)
{
	struct prof_error err = { 0 };
	struct prof_writer *merged_w, *taken_w;
	struct prof_store *merged, *taken, *fixture;
	char proc_a[512], proc_b[512], merged_path[512], taken_path[512];
	char *command;

	process_file(proc_a, sizeof proc_a, "proc-100.sqlite");
	process_file(proc_b, sizeof proc_b, "proc-101.sqlite");
	merged_w = run_output(merged_path, sizeof merged_path, "merged.sqlite");
	ck_assert_msg(prof_writer__merge(merged_w, proc_a, &err) == 0, "%s", err.msg);
	ck_assert_msg(prof_writer__finish(merged_w, &err) == 0, "%s", err.msg);
	taken_w = run_output(taken_path, sizeof taken_path, "taken.sqlite");
	ck_assert_msg(prof_writer__take_over(&taken_w, proc_b, &err) == 0, "%s", err.msg);
	ck_assert_msg(prof_writer__finish(taken_w, &err) == 0, "%s", err.msg);

	ck_assert_int_ne(access(proc_b, F_OK), 0);
	merged = open_store(merged_path);
	taken = open_store(taken_path);
	expect_same_capture(merged, taken);
	ck_assert(prof_store__is_finished(taken));
	command = prof_store__meta(taken, "command");
	ck_assert_str_eq(command, "the run's command");
	free(command);
	/* the output's counter added to the process's */
	fixture = open_store(testutil_data_path(FIXTURE));
	ck_assert_int_eq(prof_store__counter(taken, "dropped_records"),
			 prof_store__counter(fixture, "dropped_records") + 3);
	prof_store__close(fixture);
	prof_store__close(merged);
	prof_store__close(taken);
}
END_TEST

/* Per kernel name: launches, total time and launches joined to their
 * runtime call; what a run of two processes must keep of both. */
#define KERNELS_BY_NAME                                                                  \
	"SELECT s.value, count(*), sum(k.end - k.start), sum((SELECT count(*)"          \
	" FROM CUPTI_ACTIVITY_KIND_RUNTIME r WHERE r.correlationId = k.correlationId))" \
	" FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s ON s.id = k.shortName"     \
	" GROUP BY 1 ORDER BY 1"

START_TEST(store_take_over_then_merge_keeps_both_processes_as_a_merge_does)
{
	struct prof_error err = { 0 };
	struct prof_writer *merged_w, *taken_w;
	struct prof_store *merged, *taken;
	char a1[512], b1[512], a2[512], b2[512], merged_path[512], taken_path[512];

	process_file(a1, sizeof a1, "proc-110.sqlite");
	process_file_of("hash_embedding_naive.sqlite", b1, sizeof b1, "proc-111.sqlite");
	process_file(a2, sizeof a2, "proc-120.sqlite");
	process_file_of("hash_embedding_naive.sqlite", b2, sizeof b2, "proc-121.sqlite");
	merged_w = run_output(merged_path, sizeof merged_path, "merged2.sqlite");
	ck_assert_msg(prof_writer__merge(merged_w, a1, &err) == 0, "%s", err.msg);
	ck_assert_msg(prof_writer__merge(merged_w, b1, &err) == 0, "%s", err.msg);
	ck_assert_msg(prof_writer__finish(merged_w, &err) == 0, "%s", err.msg);
	taken_w = run_output(taken_path, sizeof taken_path, "taken2.sqlite");
	ck_assert_msg(prof_writer__take_over(&taken_w, b2, &err) == 0, "%s", err.msg);
	ck_assert_msg(prof_writer__merge(taken_w, a2, &err) == 0, "%s", err.msg);
	ck_assert_msg(prof_writer__finish(taken_w, &err) == 0, "%s", err.msg);

	merged = open_store(merged_path);
	taken = open_store(taken_path);
	expect_same_rows(merged, taken, KERNELS_BY_NAME);
	expect_same_rows(merged, taken, "SELECT pid, name FROM PROCESSES ORDER BY pid");
	expect_same_rows(merged, taken, "SELECT key, value FROM PERFKIT_META ORDER BY key");
	ck_assert_int_eq(prof_store__count(taken, "CUPTI_ACTIVITY_KIND_RUNTIME"),
			 prof_store__count(merged, "CUPTI_ACTIVITY_KIND_RUNTIME"));
	prof_store__close(merged);
	prof_store__close(taken);
}
END_TEST

/* A live folder on another file system than the output (/dev/shm, a
 * tmpfs, where it is one): the file cannot be renamed there and is copied
 * into place, leaving nothing behind. */
START_TEST(store_take_over_copies_the_file_from_another_file_system)
{
	struct prof_error err = { 0 };
	struct prof_store *fixture, *out;
	struct prof_writer *w;
	char proc[512], shm[64], path[512];
	struct stat a, b;

	process_file(proc, sizeof proc, "proc-700.sqlite");
	w = run_output(path, sizeof path, "from-shm.sqlite");
	snprintf(shm, sizeof shm, "/dev/shm/perfkit-test-%d.sqlite", (int)getpid());
	if (stat("/dev/shm", &a) == 0 && stat(path, &b) == 0 && a.st_dev != b.st_dev) {
		testutil_copy_file(proc, shm);
		snprintf(proc, sizeof proc, "%s", shm);
	}
	ck_assert_msg(prof_writer__take_over(&w, proc, &err) == 0, "%s", err.msg);
	ck_assert_msg(prof_writer__finish(w, &err) == 0, "%s", err.msg);
	ck_assert_int_ne(access(proc, F_OK), 0);
	fixture = open_store(testutil_data_path(FIXTURE));
	out = open_store(path);
	expect_same_rows(fixture, out, KERNELS_BY_NAME);
	ck_assert(prof_store__is_finished(out));
	prof_store__close(fixture);
	prof_store__close(out);
}
END_TEST

START_TEST(store_take_over_leaves_a_file_another_reader_has_open_to_the_merge)
{
	struct prof_error err = { 0 };
	struct prof_writer *w;
	struct prof_store *reader, *out;
	char proc[512], path[512];
	int64_t kernels;

	process_file(proc, sizeof proc, "proc-200.sqlite");
	reader = open_store(proc);
	kernels = prof_store__count(reader, "CUPTI_ACTIVITY_KIND_KERNEL");
	w = run_output(path, sizeof path, "out.sqlite");
	ck_assert_int_eq(prof_writer__take_over(&w, proc, &err), 1);
	/* the reader still reads the file where it was */
	ck_assert_int_eq(prof_store__count(reader, "CUPTI_ACTIVITY_KIND_KERNEL"), kernels);
	ck_assert_msg(prof_writer__merge(w, proc, &err) == 0, "%s", err.msg);
	ck_assert_msg(prof_writer__finish(w, &err) == 0, "%s", err.msg);
	prof_store__close(reader);
	out = open_store(path);
	ck_assert_int_gt(kernels, 0);
	ck_assert_int_eq(prof_store__count(out, "CUPTI_ACTIVITY_KIND_KERNEL"), kernels);
	prof_store__close(out);
}
END_TEST

START_TEST(store_take_over_is_declined_when_the_output_has_rows_of_its_own)
{
	struct prof_error err = { 0 };
	struct prof_kernel k = { .start_ns = 1, .end_ns = 2 };
	struct prof_writer *w;
	struct prof_store *out;
	char proc[512], path[512];

	process_file(proc, sizeof proc, "proc-300.sqlite");
	w = run_output(path, sizeof path, "own-rows.sqlite");
	ck_assert_int_eq(prof_writer__kernel(w, &k), 0);
	ck_assert_int_eq(prof_writer__take_over(&w, proc, &err), 1);
	ck_assert_int_eq(access(proc, F_OK), 0);
	ck_assert_msg(prof_writer__finish(w, &err) == 0, "%s", err.msg);
	out = open_store(path);
	ck_assert_int_eq(prof_store__count(out, "CUPTI_ACTIVITY_KIND_KERNEL"), 1);
	prof_store__close(out);
}
END_TEST

START_TEST(store_take_over_is_declined_for_a_file_of_another_schema)
{
	struct prof_error err = { 0 };
	struct prof_writer *w;
	char proc[512], path[512];

	process_file(proc, sizeof proc, "proc-400.sqlite");
	testutil_sqlite3(proc, "ALTER TABLE CUPTI_ACTIVITY_KIND_KERNEL ADD COLUMN newerColumn INTEGER;");
	w = run_output(path, sizeof path, "other-schema.sqlite");
	ck_assert_int_eq(prof_writer__take_over(&w, proc, &err), 1);
	ck_assert_msg(prof_writer__merge(w, proc, &err) == 0, "%s", err.msg);
	ck_assert_msg(prof_writer__finish(w, &err) == 0, "%s", err.msg);
}
END_TEST

/* perfkit killed while it took a file over leaves the journal of the
 * half-written transaction beside it; readers cannot open such a file (a
 * read-only connection cannot roll the journal back), and the next take-over,
 * `perfkit recover`'s, rolls it back and gives the whole capture. */
START_TEST(store_take_over_after_a_killed_take_over_gives_the_whole_capture)
{
	struct prof_error err = { 0 };
	struct prof_store *fixture, *out;
	struct prof_writer *w;
	char proc[512], path[512], cmd[2048];
	int64_t kernels;

	fixture = open_store(testutil_data_path(FIXTURE));
	kernels = prof_store__count(fixture, "CUPTI_ACTIVITY_KIND_KERNEL");
	prof_store__close(fixture);
	process_file(proc, sizeof proc, "proc-600.sqlite");
	/* the sqlite3 shell killed in the middle of a transaction that has
	 * already written part of itself to the file */
	snprintf(cmd, sizeof cmd, "sqlite3 -batch -init /dev/null '%s' 'PRAGMA journal_mode = DELETE;"
		 " PRAGMA cache_size = 2; BEGIN; DELETE FROM CUPTI_ACTIVITY_KIND_KERNEL;'"
		 " '.system kill -9 $PPID' >/dev/null 2>&1", proc);
	ck_assert_int_ne(system(cmd), 0);
	ck_assert_int_ne(prof_store__open(proc, &out, &err), 0);
	w = run_output(path, sizeof path, "after-kill.sqlite");
	ck_assert_msg(prof_writer__take_over(&w, proc, &err) == 0, "%s", err.msg);
	ck_assert_msg(prof_writer__finish(w, &err) == 0, "%s", err.msg);
	out = open_store(path);
	ck_assert_int_gt(kernels, 0);
	ck_assert_int_eq(prof_store__count(out, "CUPTI_ACTIVITY_KIND_KERNEL"), kernels);
	prof_store__close(out);
}
END_TEST

/* A row without a string (an NVTX mark without text, a kernel without a
 * demangled name) keeps NULL there through a merge, as the writer stores
 * it, so that coalesce(demangledName, shortName) finds the short name. */
START_TEST(store_merge_keeps_a_missing_string_null)
{
	struct prof_error err = { 0 };
	struct prof_kernel k = { .start_ns = 10, .end_ns = 20, .correlation_id = 1 };
	struct prof_nvtx_event mark = { .start_ns = 15, .end_ns = -1, .event_type = PROF_NVTX_MARK };
	struct prof_writer *proc_w, *w;
	struct prof_store *out;
	struct prof_cursor *c;
	char proc[512], path[512];

	snprintf(proc, sizeof proc, "%s", testutil_tmp_path("proc-500.sqlite"));
	ck_assert_msg(prof_writer__create(proc, 0, &proc_w, &err) == 0, "%s", err.msg);
	k.short_name = prof_writer__string(proc_w, "short_only");
	ck_assert_int_eq(prof_writer__kernel(proc_w, &k), 0);
	ck_assert_int_eq(prof_writer__nvtx(proc_w, &mark), 0);
	prof_writer__delete(proc_w);

	w = run_output(path, sizeof path, "nulls.sqlite");
	ck_assert_msg(prof_writer__merge(w, proc, &err) == 0, "%s", err.msg);
	ck_assert_msg(prof_writer__finish(w, &err) == 0, "%s", err.msg);
	out = open_store(path);
	ck_assert_int_eq(prof_cursor__open(out, "SELECT s.value, k.demangledName IS NULL,"
					   " (SELECT textId IS NULL FROM NVTX_EVENTS)"
					   " FROM CUPTI_ACTIVITY_KIND_KERNEL k"
					   " JOIN StringIds s ON s.id = coalesce(k.demangledName, k.shortName)",
					   &c, &err), 0);
	ck_assert_int_eq(prof_cursor__next(c, &err), 1);
	ck_assert_str_eq(prof_cursor__text(c, 0), "short_only");
	ck_assert_int_eq(prof_cursor__int64(c, 1), 1);
	ck_assert_int_eq(prof_cursor__int64(c, 2), 1);
	prof_cursor__close(c);
	prof_store__close(out);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("store_take_over");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, store_take_over_gives_the_capture_a_merge_gives);
	tcase_add_test(tc, store_take_over_then_merge_keeps_both_processes_as_a_merge_does);
	tcase_add_test(tc, store_take_over_copies_the_file_from_another_file_system);
	tcase_add_test(tc, store_take_over_leaves_a_file_another_reader_has_open_to_the_merge);
	tcase_add_test(tc, store_take_over_is_declined_when_the_output_has_rows_of_its_own);
	tcase_add_test(tc, store_take_over_is_declined_for_a_file_of_another_schema);
	tcase_add_test(tc, store_take_over_after_a_killed_take_over_gives_the_whole_capture);
	tcase_add_test(tc, store_merge_keeps_a_missing_string_null);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return testutil_run(suite());
}
