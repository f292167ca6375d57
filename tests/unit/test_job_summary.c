/* test_job_summary.c - the map and reduce of a job's captures, every part
 * of it (the overview's and kernel summary's, rank_sum's, nccl_sum's,
 * diagnose's): the
 * reduce is exact (any order and grouping give the same summary, byte for
 * byte as packed), a summary survives being packed and unpacked, and a
 * damaged pack is refused; so do a share's probes and collectives, which
 * MPI processes gather for the plan, and a share that failed sends its
 * first failure. On real captures, NCCL's among them. */
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

/* A plan of the same captures with nothing probed: their paths alone, as
 * an MPI process holds the captures of the other shares before it
 * gathers their probes. */
static void unprobed(struct job_plan *p)
{
	memset(p, 0, sizeof *p);
	p->n = plan.n;
	p->c = calloc((size_t)p->n, sizeof *p->c);
	ck_assert_ptr_nonnull(p->c);
	for (int i = 0; i < p->n; i++)
		p->c[i].path = strdup(plan.c[i].path);
}

static void pack_share(const struct job_plan *p, int r, int size, enum job_probe_part part, char **buf,
		       size_t *len)
{
	ck_assert_int_eq(job_share__pack(p, r, size, part, -1, 0, NULL, buf, len), 0);
}

START_TEST(job_share_probes_pack_and_unpack)
{
	enum { SIZE = 4 };
	static const enum job_probe_part parts[] = { JOB_PROBE_META, JOB_PROBE_COLLECTIVES };
	struct prof_error err = { 0 };
	int ends = 0;

	/* every capture's collectives, as a plan of several hosts reads them */
	for (int i = 0; i < plan.n; i++) {
		if (!plan.c[i].nccl)
			ck_assert_msg(job_capture__read_collectives(&plan.c[i], &err) == 0, "%s", err.msg);
		ends += plan.c[i].nnccl;
	}
	ck_assert_int_gt(ends, 0);
	for (size_t k = 0; k < sizeof parts / sizeof parts[0]; k++) {
		for (int r = 0; r < SIZE; r++) {
			struct job_plan q;
			char *x, *y;
			size_t nx, ny;
			int failed, rc;

			unprobed(&q);
			pack_share(&plan, r, SIZE, parts[k], &x, &nx);
			ck_assert_int_eq(job_share__unpack(&q, r, SIZE, parts[k], x, nx, &failed, &rc, &err), 0);
			ck_assert_int_eq(failed, -1);
			pack_share(&q, r, SIZE, parts[k], &y, &ny);
			ck_assert_uint_eq(nx, ny);
			ck_assert(memcmp(x, y, nx) == 0);
			/* every shorter prefix is refused, not read past */
			for (size_t cut = 0; cut < nx; cut += 1 + nx / 97) {
				struct job_plan c;

				unprobed(&c);
				ck_assert_int_eq(job_share__unpack(&c, r, SIZE, parts[k], x, cut, &failed, &rc, &err),
						 PROF_E_CORRUPT);
				job_plan__exit(&c);
			}
			free(x);
			free(y);
			job_plan__exit(&q);
		}
	}
}
END_TEST

START_TEST(job_share_that_failed_packs_its_first_failure)
{
	struct prof_error err = { 0 }, got = { 0 };
	struct job_plan q;
	char *x;
	size_t nx;
	int failed, rc;

	prof_error__set(&err, PROF_E_CORRUPT, "rank-5.sqlite: damaged");
	ck_assert_int_eq(job_share__pack(&plan, 1, 2, JOB_PROBE_META, 5, PROF_E_CORRUPT, &err, &x, &nx), 0);
	unprobed(&q);
	ck_assert_int_eq(job_share__unpack(&q, 1, 2, JOB_PROBE_META, x, nx, &failed, &rc, &got), 0);
	ck_assert_int_eq(failed, 5);
	ck_assert_int_eq(rc, PROF_E_CORRUPT);
	ck_assert_int_eq(got.code, PROF_E_CORRUPT);
	ck_assert_str_eq(got.msg, "rank-5.sqlite: damaged");
	/* nothing of the share is read */
	ck_assert_ptr_null(q.c[1].host);
	free(x);
	job_plan__exit(&q);
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
	tcase_add_test(tc, job_share_probes_pack_and_unpack);
	tcase_add_test(tc, job_share_that_failed_packs_its_first_failure);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return testutil_run(suite());
}
