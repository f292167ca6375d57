/* test_store_memory.c - a capture opened from memory (prof_store__open_memory)
 * reads as the same bytes opened from a file: the same refusal with the same
 * message, or the same kind, tables and rows. The fuzz harnesses rely on it:
 * they open every input from memory and stand for the file path.
 *
 * The inputs are real captures of tests/data and copies of one damaged the
 * way a disk or a fuzzer damages a file (cut short, header bytes changed). */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prof/file.h"
#include "prof/store.h"
#include "testutil.h"

struct bytes {
	char *data;
	size_t size;
};

static struct bytes read_fixture(const char *name)
{
	struct bytes b = { 0 };

	ck_assert_int_eq(prof_file__read(testutil_data_path(name), 0, &b.data, &b.size), 0);
	return b;
}

static const char *write_bytes(const char *name, const char *data, size_t size)
{
	const char *path = testutil_tmp_path(name);
	FILE *f = fopen(path, "wb");

	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fwrite(data, 1, size, f), size);
	ck_assert_int_eq(fclose(f), 0);
	return path;
}

/* "SELECT * FROM" the table, its name quoted as an identifier (a table name
 * cannot be a bound parameter; these come from the capture's own schema). */
static char *select_all(const char *table)
{
	size_t len = strlen(table);
	char *sql = malloc(len * 2 + 32), *at;

	ck_assert_ptr_nonnull(sql);
	at = sql + sprintf(sql, "SELECT * FROM \"");
	for (const char *c = table; *c; c++) {
		if (*c == '"')
			*at++ = '"';
		*at++ = *c;
	}
	strcpy(at, "\"");
	return sql;
}

/* Every row of sql, stepped on both stores at once, holds the same values;
 * returns how many rows there were. */
static long expect_same_rows(struct prof_store *file, struct prof_store *mem, const char *sql)
{
	struct prof_error err = { 0 };
	struct prof_cursor *a, *b;
	long rows = 0;
	int ra, rb;

	ck_assert_int_eq(prof_cursor__open(file, sql, &a, &err), 0);
	ck_assert_int_eq(prof_cursor__open(mem, sql, &b, &err), 0);
	ck_assert_int_eq(prof_cursor__columns(a), prof_cursor__columns(b));
	while ((ra = prof_cursor__next(a, &err)) == 1) {
		rb = prof_cursor__next(b, &err);
		ck_assert_int_eq(rb, 1);
		for (int col = 0; col < prof_cursor__columns(a); col++) {
			const char *ta = prof_cursor__text(a, col), *tb = prof_cursor__text(b, col);

			ck_assert_int_eq(prof_cursor__is_null(a, col), prof_cursor__is_null(b, col));
			ck_assert_str_eq(ta ? ta : "", tb ? tb : "");
		}
		rows++;
	}
	rb = prof_cursor__next(b, &err);
	ck_assert_int_eq(ra, rb);
	prof_cursor__close(a);
	prof_cursor__close(b);
	return rows;
}

/* Open the file at path and its bytes from memory under the same name: the
 * same verdict, and for an accepted capture the same answers. Returns the
 * rows compared (0 for a refusal). */
static long expect_same_reading(const char *path, const char *data, size_t size)
{
	struct prof_error ferr = { 0 }, merr = { 0 };
	struct prof_store *file = NULL, *mem = NULL;
	struct prof_cursor *tables;
	long rows = 0;
	int frc = prof_store__open(path, &file, &ferr);
	int mrc = prof_store__open_memory(data, size, path, &mem, &merr);

	ck_assert_msg(frc == mrc, "file: %d %s; memory: %d %s", frc, ferr.msg, mrc, merr.msg);
	if (frc) {
		ck_assert_ptr_null(mem);
		ck_assert_str_eq(merr.msg, ferr.msg);
		return 0;
	}
	ck_assert_str_eq(prof_store__path(mem), path);
	ck_assert_int_eq(prof_store__kind(mem), prof_store__kind(file));
	ck_assert_int_eq(prof_store__is_finished(mem), prof_store__is_finished(file));
	ck_assert_int_eq(prof_cursor__open(file, "SELECT name FROM sqlite_master WHERE type = 'table'"
					   " ORDER BY name", &tables, &ferr), 0);
	while (prof_cursor__next(tables, &ferr) == 1) {
		const char *name = prof_cursor__text(tables, 0);
		char *sql = select_all(name);

		ck_assert_int_eq(prof_store__count(mem, name), prof_store__count(file, name));
		rows += expect_same_rows(file, mem, sql);
		free(sql);
	}
	prof_cursor__close(tables);
	prof_store__close(file);
	prof_store__close(mem);
	return rows;
}

static long expect_fixture_reads_the_same(const char *name)
{
	struct bytes b = read_fixture(name);
	long rows = expect_same_reading(testutil_data_path(name), b.data, b.size);

	free(b.data);
	return rows;
}

START_TEST(store_open_memory_reads_perfkit_captures_as_their_files)
{
	/* Rows were compared: a capture read as nothing would pass otherwise. */
	ck_assert_int_gt(expect_fixture_reads_the_same("clean_loop.sqlite"), 0);
	ck_assert_int_gt(expect_fixture_reads_the_same("rollout_naive_roofline.sqlite"), 0);
}
END_TEST

#define WHOLE SIZE_MAX

/* A copy of clean_loop.sqlite, cut to size bytes (WHOLE: not cut), with the
 * bytes at [at, at + n) replaced by what (n == 0: none), read both ways. */
static long expect_damaged_copy_reads_the_same(size_t size, size_t at, const char *what, size_t n)
{
	struct bytes b = read_fixture("clean_loop.sqlite");
	const char *path;
	long rows;

	if (size == WHOLE)
		size = b.size;
	ck_assert_uint_le(size, b.size);
	memcpy(b.data + at, what, n);
	path = write_bytes("damaged.sqlite", b.data, size);
	rows = expect_same_reading(path, b.data, size);
	free(b.data);
	return rows;
}

START_TEST(store_open_memory_refuses_what_open_refuses)
{
	struct bytes whole = read_fixture("clean_loop.sqlite");
	const size_t half = whole.size / 2;

	free(whole.data);
	expect_damaged_copy_reads_the_same(0, 0, "", 0);                 /* empty */
	expect_damaged_copy_reads_the_same(10, 0, "", 0);                /* a bit of the magic */
	expect_damaged_copy_reads_the_same(99, 0, "", 0);                /* short of a header */
	expect_damaged_copy_reads_the_same(100, 0, "", 0);               /* the header alone */
	expect_damaged_copy_reads_the_same(half, 0, "", 0);              /* cut in half */
	expect_damaged_copy_reads_the_same(half, 24, "\0\0\0\0", 4);     /* ... unmarked */
	expect_damaged_copy_reads_the_same(WHOLE, 0, "SQLite format 2", 15);
	expect_damaged_copy_reads_the_same(WHOLE, 16, "\x03\x00", 2);    /* page size */
	expect_damaged_copy_reads_the_same(WHOLE, 18, "\x03\x03", 2);    /* unknown versions */
	expect_damaged_copy_reads_the_same(WHOLE, 100, "\x0a", 1);       /* schema page type */
	expect_damaged_copy_reads_the_same(WHOLE, 60, "\x00\x00\x00\x07", 4); /* user_version */
}
END_TEST

START_TEST(store_open_memory_reads_a_wal_marked_copy_as_the_file)
{
	/* Read and write versions 2: the file says it is in WAL mode, and has
	 * no -wal beside it. Both read its rows. */
	ck_assert_int_gt(expect_damaged_copy_reads_the_same(WHOLE, 18, "\x02\x02", 2), 0);
}
END_TEST

START_TEST(store_open_memory_names_what_it_refuses)
{
	struct prof_error err = { 0 };
	struct prof_store *s = NULL;

	ck_assert_int_eq(prof_store__open_memory("", 0, "upload.sqlite", &s, &err),
			 PROF_E_NOT_SQLITE);
	ck_assert_ptr_null(s);
	ck_assert_str_eq(err.msg, "upload.sqlite: empty file, not an SQLite database");
	ck_assert_int_eq(prof_store__open_memory("", 0, "", &s, &err), PROF_E_USAGE);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("store_memory");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, store_open_memory_reads_perfkit_captures_as_their_files);
	tcase_add_test(tc, store_open_memory_refuses_what_open_refuses);
	tcase_add_test(tc, store_open_memory_reads_a_wal_marked_copy_as_the_file);
	tcase_add_test(tc, store_open_memory_names_what_it_refuses);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return testutil_run(suite());
}
