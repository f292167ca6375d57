/* test_output_rule.c - prof/output.h: what an output never replaces, and
 * what its commit does when another file takes the name while it is being
 * written (the races a command line cannot reach); a stream written
 * behind (PROF_OUTPUT_WRITE_BEHIND) puts every byte in order, and a write
 * that fails behind it fails the commit. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "prof/output.h"
#include "testutil.h"

static void write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	ck_assert_int_eq(fclose(f), 0);
}

static char *read_text(const char *path)
{
	static char buf[256];
	FILE *f = fopen(path, "r");
	size_t n;

	ck_assert_msg(f != NULL, "%s missing", path);
	n = fread(buf, 1, sizeof buf - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

static bool exists(const char *path)
{
	struct stat st;

	return lstat(path, &st) == 0;
}

START_TEST(output_without_replace_does_not_take_a_name_that_appeared_meanwhile)
{
	char path[512];
	struct prof_output *o = NULL;
	struct prof_error err = { 0 };
	char temp[512];

	snprintf(path, sizeof path, "%s", testutil_tmp_path("appeared.json"));
	ck_assert_int_eq(prof_output__open(path, 0, NULL, &o, &err), 0);
	snprintf(temp, sizeof temp, "%s", prof_output__temp_path(o));
	fputs("new", prof_output__stream(o));
	write_text(path, "theirs");
	ck_assert_int_eq(prof_output__commit(o, &err), PROF_E_EXISTS);
	ck_assert_msg(strstr(err.msg, "appeared.json") != NULL, "%s", err.msg);
	prof_output__delete(o);
	ck_assert_str_eq(read_text(path), "theirs");
	ck_assert_msg(!exists(temp), "%s left behind", temp);
}
END_TEST

START_TEST(output_replace_replaces_only_the_file_it_was_given)
{
	char path[512], other[512];
	struct prof_output *o = NULL;
	struct prof_error err = { 0 };

	snprintf(path, sizeof path, "%s", testutil_tmp_path("given.json"));
	snprintf(other, sizeof other, "%s", testutil_tmp_path("other.json"));
	write_text(path, "old");
	ck_assert_int_eq(prof_output__open(path, PROF_OUTPUT_REPLACE, NULL, &o, &err), 0);
	fputs("new", prof_output__stream(o));
	/* another program renames its own file over the name meanwhile */
	write_text(other, "theirs");
	ck_assert_int_eq(rename(other, path), 0);
	ck_assert(prof_output__taken(o));
	ck_assert_int_eq(prof_output__commit(o, &err), PROF_E_EXISTS);
	prof_output__delete(o);
	ck_assert_str_eq(read_text(path), "theirs");
}
END_TEST

START_TEST(output_replace_keeps_the_old_file_until_the_commit)
{
	char path[512];
	struct prof_output *o = NULL;
	struct prof_error err = { 0 };
	struct stat st;

	snprintf(path, sizeof path, "%s", testutil_tmp_path("kept.json"));
	write_text(path, "old");
	ck_assert_int_eq(chmod(path, 0600), 0);
	ck_assert_int_eq(prof_output__open(path, PROF_OUTPUT_REPLACE, NULL, &o, &err), 0);
	fputs("new", prof_output__stream(o));
	fflush(prof_output__stream(o));
	ck_assert_str_eq(read_text(path), "old");
	ck_assert(!prof_output__taken(o));
	ck_assert_int_eq(prof_output__commit(o, &err), 0);
	prof_output__delete(o);
	ck_assert_str_eq(read_text(path), "new");
	/* a private file stays private */
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_int_eq(st.st_mode & 0777, 0600);
}
END_TEST

START_TEST(output_abandoned_leaves_the_old_file_and_no_temporary_file)
{
	char path[512], temp[512];
	struct prof_output *o = NULL;
	struct prof_error err = { 0 };
	const char *base;

	snprintf(path, sizeof path, "%s", testutil_tmp_path("abandoned.sqlite"));
	write_text(path, "old");
	ck_assert_int_eq(prof_output__open(path, PROF_OUTPUT_REPLACE | PROF_OUTPUT_BY_NAME, NULL, &o,
					   &err), 0);
	ck_assert_ptr_null(prof_output__stream(o));
	snprintf(temp, sizeof temp, "%s", prof_output__temp_path(o));
	/* hidden, and never a *.sqlite a reader of the folder would take */
	base = strrchr(temp, '/') + 1;
	ck_assert_int_eq(base[0], '.');
	ck_assert_msg(strcmp(temp + strlen(temp) - 7, ".sqlite") != 0, "%s", temp);
	ck_assert(exists(temp));
	write_text(temp, "half");
	prof_output__delete(o);
	ck_assert(!exists(temp));
	ck_assert_str_eq(read_text(path), "old");
}
END_TEST

START_TEST(output_refuses_what_is_not_a_regular_file)
{
	char path[512], target[512];
	struct prof_error err = { 0 };
	struct prof_output *o = NULL;
	const struct prof_output_spared spared = { target, "the program to run" };

	snprintf(target, sizeof target, "%s", testutil_tmp_path("target"));
	write_text(target, "victim");
	snprintf(path, sizeof path, "%s", testutil_tmp_path("link"));
	ck_assert_int_eq(symlink(target, path), 0);
	ck_assert_int_eq(prof_output__open(path, PROF_OUTPUT_REPLACE, NULL, &o, &err), PROF_E_USAGE);
	ck_assert_msg(strstr(err.msg, "symbolic link") != NULL, "%s", err.msg);
	ck_assert_ptr_null(o);
	ck_assert_str_eq(read_text(target), "victim");

	snprintf(path, sizeof path, "%s", testutil_tmp_path("fifo"));
	ck_assert_int_eq(mkfifo(path, 0600), 0);
	ck_assert_int_eq(prof_output__check(path, PROF_OUTPUT_REPLACE, NULL, &err), PROF_E_USAGE);
	ck_assert_msg(strstr(err.msg, "FIFO") != NULL, "%s", err.msg);

	/* a hard link to the spared file is that file */
	snprintf(path, sizeof path, "%s", testutil_tmp_path("same"));
	ck_assert_int_eq(link(target, path), 0);
	ck_assert_int_eq(prof_output__check(path, PROF_OUTPUT_REPLACE, &spared, &err), PROF_E_USAGE);
	ck_assert_msg(strstr(err.msg, "the program to run") != NULL, "%s", err.msg);

	ck_assert_int_eq(prof_output__check(target, 0, NULL, &err), PROF_E_EXISTS);
	ck_assert_msg(strstr(err.msg, "use -f") != NULL, "%s", err.msg);
	ck_assert_int_eq(prof_output__check(target, PROF_OUTPUT_FORCE_IS_LONG, NULL, &err),
			 PROF_E_EXISTS);
	ck_assert_msg(strstr(err.msg, "use --force") != NULL, "%s", err.msg);
}
END_TEST


/* Byte i of the written-behind tests' output: no period a block's size
 * divides, so a block out of place or repeated shows. */
static char pattern_byte(size_t i)
{
	return (char)('a' + (i * 7 + i / 1000003) % 26);
}

/* n bytes of the pattern, in pieces of 1 byte to 3 MiB + 17 (less and
 * more than a block), some through fputc: false once the stream refuses
 * one. */
static bool put_pattern(FILE *f, size_t n)
{
	static char piece[(3u << 20) + 17];
	size_t at = 0, sizes[] = { 1, 100, 4096, (1u << 20) - 1, 1u << 20, sizeof piece, 65537 };

	for (size_t k = 0; at < n; k++) {
		size_t len = sizes[k % (sizeof sizes / sizeof sizes[0])];

		if (len > n - at)
			len = n - at;
		if (len == 1) {
			if (fputc(pattern_byte(at), f) == EOF)
				return false;
		} else {
			for (size_t i = 0; i < len; i++)
				piece[i] = pattern_byte(at + i);
			if (fwrite(piece, 1, len, f) != len)
				return false;
		}
		at += len;
	}
	return true;
}

START_TEST(output_written_behind_holds_every_byte_in_order)
{
	char path[512];
	struct prof_output *o = NULL;
	struct prof_error err = { 0 };
	/* past the ring of blocks twice over, each block in several writes */
	const size_t n = (37u << 20) + 5;
	size_t len, first_bad = n;
	char *got;

	snprintf(path, sizeof path, "%s", testutil_tmp_path("behind.json"));
	ck_assert_int_eq(prof_output__open(path, PROF_OUTPUT_WRITE_BEHIND, NULL, &o, &err), 0);
	ck_assert(put_pattern(prof_output__stream(o), n));
	ck_assert_int_eq(prof_output__commit(o, &err), 0);
	prof_output__delete(o);
	got = testutil_read_file(path, &len);
	ck_assert_uint_eq(len, n);
	for (size_t i = 0; i < n && first_bad == n; i++)
		if (got[i] != pattern_byte(i))
			first_bad = i;
	free(got);
	ck_assert_msg(first_bad == n, "byte %zu differs", first_bad);
}
END_TEST

/* A write the thread makes past the room left (the file size limit, as a
 * full disk: EFBIG where that is ENOSPC): the commit fails and says why,
 * the old file stays and the temporary one goes. In its own process, as
 * Check runs each test. */
START_TEST(output_written_behind_fails_its_commit_when_a_write_fails)
{
	char path[512], temp[512];
	struct prof_output *o = NULL;
	struct prof_error err = { 0 };

	snprintf(path, sizeof path, "%s", testutil_tmp_path("behind_full.json"));
	write_text(path, "old");
	ck_assert_int_eq(prof_output__open(path, PROF_OUTPUT_REPLACE | PROF_OUTPUT_WRITE_BEHIND, NULL,
					   &o, &err), 0);
	snprintf(temp, sizeof temp, "%s", prof_output__temp_path(o));
	testutil_limit_file_size(3 << 20);
	(void)put_pattern(prof_output__stream(o), 4u << 20);
	ck_assert_int_eq(prof_output__commit(o, &err), PROF_E_IO);
	ck_assert_msg(strstr(err.msg, "behind_full.json") && strstr(err.msg, strerror(EFBIG)),
		      "%s", err.msg);
	prof_output__delete(o);
	ck_assert_str_eq(read_text(path), "old");
	ck_assert_msg(!exists(temp), "%s left behind", temp);
}
END_TEST

/* Writes after the failure fail on the stream too, so a writer that asks
 * ferror (an export, before it calls itself done) stops early. */
START_TEST(output_written_behind_fails_later_writes_after_a_failed_one)
{
	char path[512];
	struct prof_output *o = NULL;
	struct prof_error err = { 0 };
	FILE *f;

	snprintf(path, sizeof path, "%s", testutil_tmp_path("behind_later.json"));
	ck_assert_int_eq(prof_output__open(path, PROF_OUTPUT_WRITE_BEHIND, NULL, &o, &err), 0);
	f = prof_output__stream(o);
	testutil_limit_file_size(1 << 20);
	/* the thread meets the limit with the second block; the blocks it has
	 * not taken yet are at most four, so some write after them fails */
	for (int i = 0; i < 64 && put_pattern(f, 1u << 20); i++)
		;
	ck_assert_msg(ferror(f), "no write failed on the stream");
	ck_assert_int_eq(prof_output__commit(o, &err), PROF_E_IO);
	prof_output__delete(o);
	ck_assert(!exists(path));
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("output_rule");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, output_without_replace_does_not_take_a_name_that_appeared_meanwhile);
	tcase_add_test(tc, output_replace_replaces_only_the_file_it_was_given);
	tcase_add_test(tc, output_replace_keeps_the_old_file_until_the_commit);
	tcase_add_test(tc, output_abandoned_leaves_the_old_file_and_no_temporary_file);
	tcase_add_test(tc, output_refuses_what_is_not_a_regular_file);
	tcase_add_test(tc, output_written_behind_holds_every_byte_in_order);
	tcase_add_test(tc, output_written_behind_fails_its_commit_when_a_write_fails);
	tcase_add_test(tc, output_written_behind_fails_later_writes_after_a_failed_one);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return testutil_run(suite());
}
