/* test_store_disk_full.c - writing a capture when no room is left: the
 * writer keeps exactly the rows it committed and counts the others, the
 * finish leaves out the indexes that do not fit, a merge that does not fit
 * is rolled back whole, and every file left is complete without its -wal.
 *
 * The room runs out through the file size limit (RLIMIT_FSIZE, with SIGXFSZ
 * ignored, so a write past it fails with EFBIG as one past a full disk
 * fails with ENOSPC): it needs no mount, and each test runs in a process of
 * its own (CK_FORK), so the limit ends with it. Check's own messages go to
 * a file too: no assertion runs in a loop while the limit is set. */
#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "prof/store.h"
#include "testutil.h"

#define KERNEL_TABLE "CUPTI_ACTIVITY_KIND_KERNEL"
#define SOURCE_FIXTURE "batched_forces_naive.sqlite"

static off_t file_size(const char *path)
{
	struct stat st;

	ck_assert_msg(stat(path, &st) == 0, "%s is missing", path);
	return st.st_size;
}

/* The file is complete on its own: no -wal beside it, and a copy of it
 * alone opens and counts its kernels. Returns that count. */
static int64_t kernels_without_sidecar(const char *path, const char *copy_name)
{
	char wal[4096], buf[65536], copy[4096];
	struct prof_store *s;
	struct prof_error err = { 0 };
	FILE *in, *out;
	size_t n;
	int64_t kernels;

	snprintf(wal, sizeof wal, "%s-wal", path);
	ck_assert_msg(access(wal, F_OK) != 0 || file_size(wal) == 0, "%s is left beside it", wal);
	snprintf(copy, sizeof copy, "%s", testutil_tmp_path(copy_name));
	in = fopen(path, "rb");
	out = fopen(copy, "wb");
	ck_assert(in && out);
	while ((n = fread(buf, 1, sizeof buf, in)) > 0)
		ck_assert_uint_eq(fwrite(buf, 1, n, out), n);
	fclose(in);
	ck_assert_int_eq(fclose(out), 0);
	ck_assert_msg(prof_store__open(copy, &s, &err) == 0, "%s", err.msg);
	kernels = prof_store__count(s, KERNEL_TABLE);
	prof_store__close(s);
	return kernels;
}

static int add_kernel(struct prof_writer *w, int64_t n, int64_t name)
{
	struct prof_kernel k = {
		.start_ns = 1000000 + n * 5000, .end_ns = 1000000 + n * 5000 + 1800,
		.stream_id = 7, .correlation_id = n + 1, .global_pid = prof_global_pid(4242),
		.demangled_name = name, .short_name = name, .grid_x = 1, .block_x = 32,
	};

	return prof_writer__kernel(w, &k);
}

/* A process writing until the room is gone: the rows of every flush that
 * returned 0 are in the file, every other row is counted, and the error
 * says there is no room (not SQLite's "no transaction is active"). */
START_TEST(test_writer_keeps_what_it_committed)
{
	char path[4096];
	struct prof_error err = { 0 };
	struct prof_writer *w;
	struct prof_store *s;
	int64_t name, appended = 0, committed = 0, batch;
	int rc = 0;

	snprintf(path, sizeof path, "%s", testutil_tmp_path("proc-4242.sqlite"));
	ck_assert_msg(prof_writer__create(path, 0, &w, &err) == 0, "%s", err.msg);
	ck_assert_int_eq(prof_writer__process(w, 4242, "filler"), 0);
	name = prof_writer__string(w, "fill_kernel");
	ck_assert_int_eq(prof_writer__flush(w, &err), 0);
	testutil_limit_file_size(file_size(path) + (1 << 20));
	while (!rc) {
		for (batch = 0; batch < 2000 && !rc; batch++, appended++)
			rc = add_kernel(w, appended, name);
		if (!rc)
			rc = prof_writer__flush(w, &err);
		else
			err = *prof_writer__last_error(w);
		if (!rc)
			committed += batch;
		if (appended > 10000000)
			break;
	}
	ck_assert_int_eq(rc, PROF_E_FULL);
	ck_assert_msg(strstr(err.msg, "no room left to write"), "message: %s", err.msg);
	ck_assert_msg(committed > 0, "nothing was committed before the room ran out");
	for (int i = 0; i < 500; i++, appended++)
		if (add_kernel(w, appended, name) != PROF_E_FULL)
			rc = 0;
	prof_writer__delete(w);
	testutil_limit_file_size(-1);
	ck_assert_msg(rc == PROF_E_FULL, "a row was taken after the room ran out");

	ck_assert_int_eq(kernels_without_sidecar(path, "copy.sqlite"), committed);
	ck_assert_msg(prof_store__open(path, &s, &err) == 0, "%s", err.msg);
	ck_assert_int_eq(prof_store__counter(s, PROF_COUNTER_ROWS_NOT_WRITTEN),
			 appended - committed);
	prof_store__close(s);
}
END_TEST

/* The finish with room for its metadata but not for the indexes: the
 * capture is finished and complete, with the indexes left out and said so. */
START_TEST(test_finish_leaves_out_indexes)
{
	char path[4096], *left_out, *finished;
	struct prof_error err = { 0 };
	struct prof_writer *w;
	struct prof_store *s;
	int64_t name;
	int rc = 0;

	snprintf(path, sizeof path, "%s", testutil_tmp_path("capture.sqlite"));
	ck_assert_msg(prof_writer__create(path, 0, &w, &err) == 0, "%s", err.msg);
	name = prof_writer__string(w, "fill_kernel");
	for (int64_t n = 0; n < 40000 && !rc; n++)
		rc = add_kernel(w, n, name);
	ck_assert_int_eq(rc, 0);
	ck_assert_int_eq(prof_writer__flush(w, &err), 0);
	testutil_limit_file_size(file_size(path) + (64 << 10));
	ck_assert_msg(prof_writer__finish(w, &err) == 0, "%s", err.msg);
	testutil_limit_file_size(-1);

	ck_assert_int_eq(kernels_without_sidecar(path, "copy.sqlite"), 40000);
	ck_assert_msg(prof_store__open_capture(path, &s, &err) == 0, "%s", err.msg);
	left_out = prof_store__meta(s, PROF_META_INDEXES_LEFT_OUT);
	finished = prof_store__meta(s, "finished");
	ck_assert_msg(left_out && strstr(left_out, " of "), "indexes_left_out: %s",
		      left_out ? left_out : "(none)");
	ck_assert_str_eq(finished, "1");
	free(left_out);
	free(finished);
	prof_store__close(s);
}
END_TEST

static int64_t count_named_kernels(const char *path)
{
	char sql[256], out[64] = "";
	FILE *p;

	snprintf(sql, sizeof sql,
		 "sqlite3 '%s' 'SELECT count(*) FROM " KERNEL_TABLE " k JOIN StringIds s"
		 " ON s.id = k.shortName'", path);
	p = popen(sql, "r");
	ck_assert(p != NULL);
	ck_assert(fgets(out, sizeof out, p) != NULL);
	ck_assert_int_eq(pclose(p), 0);
	return atoll(out);
}

/* A merge that finds no room is rolled back whole: the destination keeps
 * what it had, and a later merge (with room again) re-interns its strings
 * correctly although the failed one had interned them in its transaction. */
START_TEST(test_merge_without_room_is_rolled_back)
{
	char out_path[4096], src[4096];
	struct prof_error err = { 0 };
	struct prof_writer *w;
	struct prof_store *s;
	int64_t name, src_kernels, src_named;

	snprintf(src, sizeof src, "%s", testutil_data_path(SOURCE_FIXTURE));
	ck_assert_msg(prof_store__open(src, &s, &err) == 0, "%s", err.msg);
	src_kernels = prof_store__count(s, KERNEL_TABLE);
	prof_store__close(s);
	src_named = count_named_kernels(src);
	ck_assert_int_gt(src_kernels, 0);

	snprintf(out_path, sizeof out_path, "%s", testutil_tmp_path("output.sqlite"));
	ck_assert_msg(prof_writer__create(out_path, 0, &w, &err) == 0, "%s", err.msg);
	name = prof_writer__string(w, "own_kernel");
	for (int64_t n = 0; n < 100; n++)
		ck_assert_int_eq(add_kernel(w, n, name), 0); /* before the limit */
	ck_assert_int_eq(prof_writer__flush(w, &err), 0);
	testutil_limit_file_size(file_size(out_path) + (16 << 10));
	ck_assert_int_eq(prof_writer__merge(w, src, &err), PROF_E_FULL);
	ck_assert_msg(strstr(err.msg, "no room left to write"), "message: %s", err.msg);
	testutil_limit_file_size(-1);
	ck_assert_msg(prof_writer__merge(w, src, &err) == 0, "%s", err.msg);
	ck_assert_msg(prof_writer__finish(w, &err) == 0, "%s", err.msg);

	ck_assert_int_eq(kernels_without_sidecar(out_path, "copy.sqlite"), 100 + src_kernels);
	ck_assert_int_eq(count_named_kernels(out_path), 100 + src_named);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("store_disk_full");
	TCase *tc = tcase_create("disk_full");

	tcase_add_test(tc, test_writer_keeps_what_it_committed);
	tcase_add_test(tc, test_finish_leaves_out_indexes);
	tcase_add_test(tc, test_merge_without_room_is_rolled_back);
	suite_add_tcase(s, tc);
	return testutil_run(s);
}
