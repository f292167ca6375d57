/* test_job_summary.c - the map and reduce of a job's captures, every part
 * of it (the overview's and kernel summary's, rank_sum's, nccl_sum's,
 * diagnose's): the
 * reduce is exact (any order and grouping give the same summary, byte for
 * byte as packed), a summary survives being packed and unpacked, and a
 * damaged pack is refused. On real captures, NCCL's among them. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "job/job_impl.h"
#include "testutil.h"

static const char *const captures[] = {
	"torch_train.sqlite", "hash_embedding_optimized.sqlite",
	"hash_embedding_optimized_2.sqlite", "nsys/cloverleaf-cuda.sqlite",
	"ddp/two_gpus/ddp2_rank1.sqlite", "ddp/two_gpus/ddp2_rank0.sqlite",
};
#define N (int)(sizeof captures / sizeof captures[0])

static struct job_plan plan;
static char *paths[N];

static void setup(void)
{
	/* captures of several programs and runs, taken as one job all the same */
	struct job_inputs in = { .paths = paths, .n = N, .name = "job", .force = true };
	struct prof_error err = { 0 };

	for (int i = 0; i < N; i++)
		paths[i] = strdup(testutil_data_path(captures[i]));
	ck_assert_msg(job_plan__make(&in, &plan, &err) == 0, "%s", err.msg);
	plan.parts = JOB_PART_OVERVIEW | JOB_PART_RANKS | JOB_PART_NCCL | JOB_PART_DIAGNOSE;
}

static void teardown(void)
{
	job_plan__exit(&plan);
	for (int i = 0; i < N; i++)
		free(paths[i]);
}

static void map(int i, struct job_summary *s)
{
	struct prof_error err = { 0 };

	ck_assert_msg(job_summary__map(&plan, i, s, &err) == 0, "%s", err.msg);
}

static void reduce(struct job_summary *a, struct job_summary *b)
{
	struct prof_error err = { 0 };

	ck_assert_msg(job_summary__reduce(a, b, &err) == 0, "%s", err.msg);
}

static void pack(const struct job_summary *s, char **buf, size_t *len)
{
	ck_assert_int_eq(job_summary__pack(s, buf, len), 0);
}

/* ((0 + 1) + 2) + 3 */
static void left_fold(struct job_summary *out)
{
	struct job_summary s;

	map(0, out);
	for (int i = 1; i < N; i++) {
		map(i, &s);
		reduce(out, &s);
	}
}

START_TEST(job_reduce_is_the_same_in_any_order)
{
	struct job_summary a, b, c, d, e;
	char *x, *y;
	size_t nx, ny;

	left_fold(&a);
	/* ((3 + 1) + 5) + ((2 + 0) + 4) */
	map(3, &b);
	map(1, &c);
	reduce(&b, &c);
	map(5, &c);
	reduce(&b, &c);
	map(2, &d);
	map(0, &e);
	reduce(&d, &e);
	map(4, &c);
	reduce(&d, &c);
	reduce(&b, &d);
	pack(&a, &x, &nx);
	pack(&b, &y, &ny);
	ck_assert_int_eq(a.mapped, N);
	/* the DDP ranks' NCCL calls and times are in it, and what diagnose's
	 * job rules read of each rank: its compute under communication */
	ck_assert_uint_gt(a.ranks.n, 3);
	{
		int with_hidden = 0;

		for (size_t i = 0; i < a.ranks.n; i++)
			with_hidden += a.ranks.p[i].time.hidden.n > 0;
		ck_assert_int_ge(with_hidden, 2);
		ck_assert(a.ranks.has_first);
	}
	ck_assert_uint_eq(nx, ny);
	ck_assert(memcmp(x, y, nx) == 0);
	free(x);
	free(y);
	job_summary__exit(&a);
	job_summary__exit(&b);
}
END_TEST

START_TEST(job_reduce_sums_the_kernels_of_one_program)
{
	struct job_summary a, b;
	int64_t one = 0, both = 0;

	map(1, &a);
	for (size_t i = 0; i < a.kernels.n; i++)
		for (size_t r = 0; r < a.kernels.g[i].n; r++)
			one += a.kernels.g[i].runs[r].count;
	map(2, &b);
	/* two captures of one program: the same names, one group each */
	size_t groups = a.kernels.n;

	ck_assert_uint_eq(groups, b.kernels.n);
	reduce(&a, &b);
	ck_assert_uint_eq(a.kernels.n, groups);
	for (size_t i = 0; i < a.kernels.n; i++)
		for (size_t r = 0; r < a.kernels.g[i].n; r++) {
			both += a.kernels.g[i].runs[r].count;
			if (r)
				ck_assert(a.kernels.g[i].runs[r - 1].value < a.kernels.g[i].runs[r].value);
		}
	ck_assert(one > 0);
	ck_assert(both > one);
	job_summary__exit(&a);
}
END_TEST

START_TEST(job_summary_packs_and_unpacks)
{
	struct job_summary a, b;
	char *x, *y;
	size_t nx, ny;

	left_fold(&a);
	pack(&a, &x, &nx);
	ck_assert_int_eq(job_summary__unpack(x, nx, &b), 0);
	pack(&b, &y, &ny);
	ck_assert_uint_eq(nx, ny);
	ck_assert(memcmp(x, y, nx) == 0);
	/* every shorter prefix is refused, not read past */
	for (size_t cut = 0; cut < nx; cut += 1 + nx / 97) {
		struct job_summary c;

		ck_assert_int_eq(job_summary__unpack(x, cut, &c), PROF_E_CORRUPT);
	}
	/* a count past what the bytes hold: refused, nothing allocated for it */
	memset(x, 0x7f, 8);
	{
		struct job_summary c;

		ck_assert_int_eq(job_summary__unpack(x, nx, &c), PROF_E_CORRUPT);
	}
	free(x);
	free(y);
	job_summary__exit(&a);
	job_summary__exit(&b);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("job_summary");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, job_reduce_is_the_same_in_any_order);
	tcase_add_test(tc, job_reduce_sums_the_kernels_of_one_program);
	tcase_add_test(tc, job_summary_packs_and_unpacks);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return testutil_run(suite());
}
