/* test_output_rule.c - prof/output.h: what an output never replaces, and
 * what its commit does when another file takes the name while it is being
 * written (the races a command line cannot reach). */
#include <check.h>
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

static Suite *suite(void)
{
	Suite *s = suite_create("output_rule");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, output_without_replace_does_not_take_a_name_that_appeared_meanwhile);
	tcase_add_test(tc, output_replace_replaces_only_the_file_it_was_given);
	tcase_add_test(tc, output_replace_keeps_the_old_file_until_the_commit);
	tcase_add_test(tc, output_abandoned_leaves_the_old_file_and_no_temporary_file);
	tcase_add_test(tc, output_refuses_what_is_not_a_regular_file);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return testutil_run(suite());
}
