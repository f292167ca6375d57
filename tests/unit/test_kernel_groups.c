/* test_kernel_groups.c - the window's kernels grouped by one unsorted pass
 * (kernel_groups__of) are what the GROUP BY statements it stands in for
 * give, row for row and in their order, ties included: by name, every
 * kernel; by name and launch shape, NCCL's left out. On real captures of
 * every kind (NCCL's kernels, two GPUs, JAX, nsys exports, captures whose
 * groups tie on their total), in the diagnosis's window and over the whole
 * capture. The statements, run beside, say what is right. */
#include <check.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/core/kernel_name_sql.h"
#include "analysis/diagnose/diagnose.h"
#include "analysis/ranks/nccl.h"
#include "analysis/rules/kernel_groups.h"
#include "model/sql.h"
#include "model/sums.h"
#include "prof/store.h"
#include "prof/tables.h"
#include "testutil.h"

static const char *const captures[] = {
	"transformer_naive.sqlite",	     "ddp/ddp2_even.sqlite",	  "ddp/two_gpus/ddp2_straggler.sqlite",
	"corpus/hf_gpt2_train.sqlite",	     "corpus/jax_jit_mlp.sqlite", "corpus/graph_replay.sqlite",
	"nsys/cloverleaf-cuda.sqlite",	     "nsys/saxpy-mpi-cuda-rank0.sqlite",
	"python/py_hf_gpt2_train.sqlite",
};

static const char names_sql[] = KERNEL_GROUPS_NAMES_SQL;
static const char shapes_sql[] = KERNEL_GROUPS_SHAPES_SQL;

/* The groups against the statements in ctx's window; how many rows tie
 * on their total with the row before. */
static int check_window(struct diag_context *ctx, const char *capture)
{
	struct prof_error err = { 0 };
	const struct kernel_groups *g;
	struct prof_cursor *c;
	int i, ties = 0;

	ck_assert_msg(kernel_groups__of(ctx, &g, &err) == 0, "%s: %s", capture, err.msg);
	ck_assert_int_eq(diag__open_window(ctx, names_sql, DIAG_GPU_SIDE, &c, &err), 0);
	for (i = 0; prof_cursor__next(c, &err) == 1; i++) {
		ck_assert_msg(i < g->n, "%s: %d groups by name, SQL has more", capture, g->n);
		ck_assert_msg(strcmp(g->v[i].name, prof_cursor__text(c, 0)) == 0, "%s: group %d is %.60s, SQL says %.60s",
			      capture, i, g->v[i].name, prof_cursor__text(c, 0));
		ck_assert_int_eq(g->v[i].count, prof_cursor__int64(c, 1));
		ck_assert_int_eq(g->v[i].time_ns, prof_cursor__int64(c, 2));
		ties += i > 0 && g->v[i].time_ns == g->v[i - 1].time_ns;
	}
	prof_cursor__close(c);
	ck_assert_msg(i == g->n, "%s: %d groups by name, SQL %d", capture, g->n, i);
	ck_assert_int_eq(diag__open_window(ctx, shapes_sql, DIAG_GPU_SIDE, &c, &err), 0);
	for (i = 0; prof_cursor__next(c, &err) == 1; i++) {
		const struct kernel_shape *s = &g->shapes[i];

		ck_assert_msg(i < g->nshapes, "%s: %d shapes, SQL has more", capture, g->nshapes);
		ck_assert_msg(strcmp(s->name, prof_cursor__text(c, 0)) == 0, "%s: shape %d is %s, SQL says %s", capture,
			      i, s->name, prof_cursor__text(c, 0));
		ck_assert_int_eq(s->threads_per_block, prof_cursor__int64(c, 1));
		ck_assert_int_eq(s->registers_per_thread, prof_cursor__int64(c, 2));
		ck_assert_int_eq(s->shared_bytes, prof_cursor__int64(c, 3));
		ck_assert_int_eq(s->shared_config_bytes, prof_cursor__int64(c, 4));
		ck_assert_int_eq(s->count, prof_cursor__int64(c, 5));
		ck_assert_int_eq(s->time_ns, prof_cursor__int64(c, 6));
		ties += i > 0 && s->time_ns == g->shapes[i - 1].time_ns;
	}
	prof_cursor__close(c);
	ck_assert_msg(i == g->nshapes, "%s: %d shapes, SQL %d", capture, g->nshapes, i);
	return ties;
}

START_TEST(groups_as_the_statements_give_them)
{
	int ties = 0, groups = 0;

	for (size_t k = 0; k < sizeof captures / sizeof *captures; k++) {
		struct prof_error err = { 0 };
		struct prof_store *s;
		struct diag_settings settings;
		struct diag_context ctx;
		struct sum_window *w;

		memset(&ctx, 0, sizeof ctx);
		ck_assert_msg(prof_store__open(testutil_data_path(captures[k]), &s, &err) == 0, "%s", err.msg);
		ck_assert_int_eq(diag_settings__init(&settings), 0);
		ck_assert_msg(diag_context__init_scope(&ctx, s, &settings, &err) == 0, "%s: %s", captures[k], err.msg);
		ck_assert_msg(ctx.has_kernel, "%s has no kernels", captures[k]);
		ties += check_window(&ctx, captures[k]);
		groups += ctx.kernel_groups->n;
		/* the whole capture: every group, the ties between them */
		w = &ctx.report->window;
		w->start_ns = INT64_MIN;
		w->end_ns = INT64_MAX;
		w->host_end_ns = INT64_MAX;
		ties += check_window(&ctx, captures[k]);
		kernel_groups__free(ctx.kernel_groups);
		ctx.kernel_groups = NULL;
		diag_context__exit(&ctx);
		diag_settings__exit(&settings);
		prof_store__close(s);
	}
	/* the order of equal totals is tested, not only the sums */
	ck_assert_int_gt(ties, 2);
	ck_assert_int_gt(groups, 100);
}
END_TEST

/* A column of another type (a foreign file's real number of registers)
 * is grouped as SQL groups it, apart from the integers beside it. */
START_TEST(other_types_grouped_as_sql_groups_them)
{
	char path[4096];
	struct prof_error err = { 0 };
	struct prof_store *s;
	struct diag_settings settings;
	struct diag_context ctx;

	snprintf(path, sizeof path, "%s", testutil_tmp_path("kernel_groups_real.sqlite"));
	testutil_copy_file(testutil_data_path("transformer_naive.sqlite"), path);
	testutil_sqlite3(path, "UPDATE " PROF_T_KERNEL " SET registersPerThread = registersPerThread + 0.5 "
			 "WHERE rowid IN (SELECT rowid FROM " PROF_T_KERNEL " ORDER BY rowid DESC LIMIT 50)");
	memset(&ctx, 0, sizeof ctx);
	ck_assert_msg(prof_store__open(path, &s, &err) == 0, "%s", err.msg);
	ck_assert_int_eq(diag_settings__init(&settings), 0);
	ck_assert_msg(diag_context__init_scope(&ctx, s, &settings, &err) == 0, "%s", err.msg);
	ctx.report->window.start_ns = INT64_MIN;
	ctx.report->window.end_ns = INT64_MAX;
	ctx.report->window.host_end_ns = INT64_MAX;
	check_window(&ctx, "transformer_naive with real registers");
	kernel_groups__free(ctx.kernel_groups);
	ctx.kernel_groups = NULL;
	diag_context__exit(&ctx);
	diag_settings__exit(&settings);
	prof_store__close(s);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("kernel_groups");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, groups_as_the_statements_give_them);
	tcase_add_test(tc, other_types_grouped_as_sql_groups_them);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return testutil_run(suite());
}
