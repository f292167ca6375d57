/* test_job_env.c - the rank of a process from each launcher's variables,
 * which launcher wins when several are set, and output-name patterns. */
#include <check.h>
#include <stdbool.h>
#include <string.h>

#include "prof/job_env.h"
#include "testutil.h"

/* An environment of NAME=VALUE strings, NULL-terminated. */
static const char *fake_env(const char *name, void *ctx)
{
	size_t len = strlen(name);

	for (const char *const *e = ctx; *e; e++)
		if (!strncmp(*e, name, len) && (*e)[len] == '=')
			return *e + len + 1;
	return NULL;
}

static struct prof_job_rank rank_of(const char *const *env)
{
	struct prof_job_rank r;

	prof_job_rank__read(&r, fake_env, (void *)env);
	return r;
}

START_TEST(job_rank_from_each_launcher)
{
	static const char *const torch[] = { "RANK=3", "WORLD_SIZE=8", "LOCAL_RANK=1", NULL };
	static const char *const ompi[] = { "OMPI_COMM_WORLD_RANK=5", "OMPI_COMM_WORLD_SIZE=16",
					    "OMPI_COMM_WORLD_LOCAL_RANK=1", NULL };
	static const char *const pmi[] = { "PMI_RANK=2", "PMI_SIZE=4", NULL };
	static const char *const slurm[] = { "SLURM_PROCID=7", "SLURM_NTASKS=8", "SLURM_LOCALID=3",
					     NULL };
	struct prof_job_rank r;

	r = rank_of(torch);
	ck_assert_int_eq(r.launcher, PROF_LAUNCHER_TORCHRUN);
	ck_assert_int_eq(r.rank, 3);
	ck_assert_int_eq(r.world_size, 8);
	ck_assert_int_eq(r.local_rank, 1);
	r = rank_of(ompi);
	ck_assert_int_eq(r.launcher, PROF_LAUNCHER_OPENMPI);
	ck_assert_int_eq(r.rank, 5);
	ck_assert_int_eq(r.world_size, 16);
	r = rank_of(pmi);
	ck_assert_int_eq(r.launcher, PROF_LAUNCHER_PMI);
	ck_assert_int_eq(r.rank, 2);
	ck_assert_int_eq(r.local_rank, -1); /* MPI_LOCALRANKID not set: unknown, not 0 */
	r = rank_of(slurm);
	ck_assert_int_eq(r.launcher, PROF_LAUNCHER_SLURM);
	ck_assert_int_eq(r.rank, 7);
	ck_assert_int_eq(r.local_rank, 3);
}
END_TEST

START_TEST(job_rank_torchrun_wins_inside_slurm_and_bad_values_are_skipped)
{
	/* torchrun started by srun: each worker's own RANK is the job's rank. */
	static const char *const both[] = { "SLURM_PROCID=0", "SLURM_NTASKS=2", "RANK=5",
					    "WORLD_SIZE=16", NULL };
	static const char *const bad[] = { "RANK=-1", "OMPI_COMM_WORLD_RANK=x1", "PMI_RANK=",
					   "SLURM_PROCID=4", NULL };
	static const char *const none[] = { "HOME=/root", NULL };

	ck_assert_int_eq(rank_of(both).launcher, PROF_LAUNCHER_TORCHRUN);
	ck_assert_int_eq(rank_of(both).rank, 5);
	ck_assert_int_eq(rank_of(bad).launcher, PROF_LAUNCHER_SLURM);
	ck_assert_int_eq(rank_of(bad).rank, 4);
	ck_assert_int_eq(rank_of(none).launcher, PROF_LAUNCHER_NONE);
	ck_assert_int_eq(rank_of(none).rank, -1);
}
END_TEST

static const char *const job_env[] = { "OMPI_COMM_WORLD_RANK=12", "JOB=run7", "SLASH=a/b",
				       "EMPTY=", "DOT=.", "DOTS=..", "NL=a\nb", "ESC=\x1b[31mred",
				       "DEL=a\x7f", NULL };

static int expand(const char *pattern, char *buf, size_t cap, struct prof_error *err)
{
	struct prof_pattern_values v = { "node-03", 4242, fake_env, (void *)job_env };

	return prof_output_pattern__expand(pattern, &v, buf, cap, err);
}

START_TEST(output_pattern_expands_each_field)
{
	struct prof_error err;
	char buf[128];

	ck_assert_int_eq(expand("job-%h-%r.sqlite", buf, sizeof buf, &err), 0);
	ck_assert_str_eq(buf, "job-node-03-12.sqlite");
	ck_assert_int_eq(expand("out/%q{JOB}-%p-100%%.sqlite", buf, sizeof buf, &err), 0);
	ck_assert_str_eq(buf, "out/run7-4242-100%.sqlite");
	ck_assert_int_eq(expand("plain.sqlite", buf, sizeof buf, &err), 0);
	ck_assert_str_eq(buf, "plain.sqlite");
}
END_TEST

START_TEST(output_pattern_refuses_what_cannot_name_a_file)
{
	static const struct {
		const char *pattern, *message;
	} bad[] = {
		{ "a-%x", "unknown %x" },
		{ "a-%", "a lone %" },
		{ "a-%q{NOPE}", "NOPE is not set" },
		{ "a-%q{JOB", "%q takes a variable in braces" },
		{ "a-%qJOB", "%q takes a variable in braces" },
		{ "a-%q{}", "needs a variable name" },
		{ "a-%q{SLASH}", "holds a '/'" },
		{ "a-%q{EMPTY}", "%q{EMPTY}: EMPTY is empty" },
		{ "a-%q{DOT}", "%q{DOT}: DOT is '.', which is not allowed as a name part" },
		{ "a-%q{DOTS}", "%q{DOTS}: DOTS is '..', which is not allowed as a name part" },
		{ "a-%q{SLASH}", "%q{SLASH}: SLASH holds a '/' ('a/b')" },
		/* a newline or ESC in a file name: refused, and never echoed */
		{ "a-%q{NL}", "%q{NL}: NL holds a control character (byte 0x0a)" },
		{ "a-%q{ESC}", "%q{ESC}: ESC holds a control character (byte 0x1b)" },
		{ "a-%q{DEL}", "%q{DEL}: DEL holds a control character (byte 0x7f)" },
		/* echoed in the message, so never a byte that breaks its line */
		{ "a-%q{A\nB}", "needs a variable name of letters, digits and '_'" },
		{ "a-%q{JOB=}", "needs a variable name of letters, digits and '_'" },
		{ "a-%\n", "unknown % followed by byte 0x0a" },
		{ "a-%\xc3\xa9", "unknown % followed by byte 0xc3" },
	};
	struct prof_error err;
	char buf[128];

	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		ck_assert_int_eq(expand(bad[i].pattern, buf, sizeof buf, &err), PROF_E_USAGE);
		ck_assert_msg(strstr(err.msg, bad[i].message), "%s: got '%s'", bad[i].pattern, err.msg);
		ck_assert_msg(!strncmp(err.msg, "-o: ", 4), "%s: message '%s'", bad[i].pattern, err.msg);
		ck_assert_msg(!strchr(err.msg, '\n'), "%s: message of two lines '%s'", bad[i].pattern, err.msg);
	}
}
END_TEST

START_TEST(output_pattern_without_rank_and_too_long)
{
	static const char *const none[] = { NULL };
	struct prof_pattern_values v = { "h", 1, fake_env, (void *)none };
	struct prof_error err;
	char buf[16];

	ck_assert_int_eq(prof_output_pattern__expand("x-%r", &v, buf, sizeof buf, &err), PROF_E_USAGE);
	ck_assert_ptr_nonnull(strstr(err.msg, "%r needs a rank"));
	/* 16 bytes hold 15 characters: one more is refused, not cut. */
	ck_assert_int_eq(prof_output_pattern__expand("%h23456789012345", &v, buf, sizeof buf, &err), 0);
	ck_assert_int_eq(prof_output_pattern__expand("%h234567890123456", &v, buf, sizeof buf, &err),
			 PROF_E_USAGE);
	ck_assert_ptr_nonnull(strstr(err.msg, "longer than 15 bytes"));
}
END_TEST

/* A message is one line of printable text (bytes of UTF-8 pass). */
static bool printable(const char *msg)
{
	for (const unsigned char *c = (const unsigned char *)msg; *c; c++)
		if (*c < 0x20 || *c == 0x7f)
			return false;
	return true;
}

START_TEST(output_pattern_says_why_a_rank_variable_is_not_a_rank)
{
	static const struct {
		const char *env, *message;
	} bad[] = {
		{ "RANK=abc", "%r needs a rank: RANK=abc is not a rank (a number from 0 to 2147483647)" },
		{ "RANK=-1", "RANK=-1 is not a rank" },
		{ "RANK=12345678901234567890", "RANK=12345678901234567890 is not a rank" },
		{ "RANK=2147483648", "RANK=2147483648 is not a rank" },
		{ "RANK=../../x", "RANK=../../x is not a rank" },
		{ "RANK=", "%r needs a rank, and RANK is set but empty" },
		{ "SLURM_PROCID=0x3", "SLURM_PROCID=0x3 is not a rank" },
		/* shown made safe, and cut */
		{ "PMI_RANK=\x1b[2J", "PMI_RANK=?[2J is not a rank" },
		{ "RANK=0123456789012345678901234567890123456789",
		  "RANK=01234567890123456789012345678901... is not a rank" },
	};
	struct prof_error err;
	char buf[128];

	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		const char *env[] = { bad[i].env, NULL };
		struct prof_pattern_values v = { "h", 1, fake_env, (void *)env };

		ck_assert_int_eq(prof_output_pattern__expand("r-%r", &v, buf, sizeof buf, &err),
				 PROF_E_USAGE);
		ck_assert_msg(strstr(err.msg, bad[i].message), "%s: got '%s'", bad[i].env, err.msg);
		ck_assert_msg(printable(err.msg), "%s: message not one printable line", bad[i].env);
	}
	/* the largest rank is one */
	{
		const char *env[] = { "RANK=2147483647", NULL };
		struct prof_pattern_values v = { "h", 1, fake_env, (void *)env };

		ck_assert_int_eq(prof_output_pattern__expand("r-%r", &v, buf, sizeof buf, &err), 0);
		ck_assert_str_eq(buf, "r-2147483647");
	}
}
END_TEST

int main(void)
{
	Suite *s = suite_create("job_env");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, job_rank_from_each_launcher);
	tcase_add_test(tc, job_rank_torchrun_wins_inside_slurm_and_bad_values_are_skipped);
	tcase_add_test(tc, output_pattern_expands_each_field);
	tcase_add_test(tc, output_pattern_refuses_what_cannot_name_a_file);
	tcase_add_test(tc, output_pattern_without_rank_and_too_long);
	tcase_add_test(tc, output_pattern_says_why_a_rank_variable_is_not_a_rank);
	suite_add_tcase(s, tc);
	return testutil_run(s);
}
