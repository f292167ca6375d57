/* test_diagnose_reads_once.c - what several analyses of one diagnosis ask
 * for alike is read once a window: the API calls' names (the idle
 * attribution and the critical path, api_names__load) and the kernels
 * grouped by name (fp32_memory_bound's heuristic and tensor_cores_idle,
 * kernel_groups__of). Each answer read again is the same as the first,
 * and a window that moved is read anew, as the capture has it there
 * (counted with SQL). On a real capture, ddp2_rank0. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/core/gpu_work.h"
#include "analysis/diagnose/diagnose.h"
#include "analysis/rules/kernel_groups.h"
#include "prof/store.h"
#include "model/sql.h"
#include "prof/tables.h"
#include "testutil.h"

#define CAPTURE "ddp/ddp2_rank0.sqlite"

struct opened {
	struct prof_store *store;
	struct diag_settings settings;
	struct diag_context ctx;
};

static void open_scope(struct opened *o)
{
	struct prof_error err = { 0 };

	memset(o, 0, sizeof *o);
	ck_assert_msg(prof_store__open(testutil_data_path(CAPTURE), &o->store, &err) == 0, "%s", err.msg);
	ck_assert_int_eq(diag_settings__init(&o->settings), 0);
	ck_assert_msg(diag_context__init_scope(&o->ctx, o->store, &o->settings, &err) == 0, "%s", err.msg);
	ck_assert(o->ctx.has_api_calls && o->ctx.has_kernel);
	ck_assert(o->ctx.w->end_ns > o->ctx.w->start_ns);
}

static void close_scope(struct opened *o)
{
	kernel_groups__free(o->ctx.kernel_groups);
	diag_context__exit(&o->ctx);
	diag_settings__exit(&o->settings);
	prof_store__close(o->store);
}

/* count SQL over the window [?1, ?2) */
static int64_t count_in(struct opened *o, const char *sql)
{
	struct prof_error err = { 0 };
	struct prof_cursor *c = NULL;
	int64_t n;

	ck_assert_int_eq(diag__open_window(&o->ctx, sql, DIAG_GPU_SIDE, &c, &err), 0);
	ck_assert_int_eq(prof_cursor__next(c, &err), 1);
	n = prof_cursor__int64(c, 0);
	prof_cursor__close(c);
	return n;
}

static void assert_same_names(const struct api_names *a, const struct api_names *b)
{
	ck_assert_int_eq(a->n, b->n);
	for (int i = 0; i < a->n; i++) {
		ck_assert_int_eq(a->v[i].id, b->v[i].id);
		ck_assert_str_eq(a->v[i].name, b->v[i].name);
		ck_assert_int_eq(a->v[i].kind, b->v[i].kind);
		/* copies: each caller frees its own */
		ck_assert_ptr_ne(a->v[i].name, b->v[i].name);
	}
}

/* the window narrowed to its first thousandth */
static void narrow(struct opened *o)
{
	struct sum_window *w = &o->ctx.report->window;

	w->end_ns = w->start_ns + (w->end_ns - w->start_ns) / 1000;
	w->host_end_ns = w->end_ns;
}

START_TEST(api_names_read_once_a_window)
{
	static const char distinct_names[] = "SELECT count(DISTINCT nameId) FROM " DIAG_API_CALLS
					     " WHERE end > ?1 AND start < ?2";
	struct prof_error err = { 0 };
	struct api_names first, again, narrowed;
	const void *kept;
	struct opened o;

	open_scope(&o);
	ck_assert_int_eq(api_names__load(&o.ctx.scope, &first, &err), 0);
	ck_assert_int_eq(first.n, count_in(&o, distinct_names));
	ck_assert_int_gt(first.n, 0);
	kept = o.ctx.api_names_read;
	ck_assert_ptr_nonnull(kept);

	ck_assert_int_eq(api_names__load(&o.ctx.scope, &again, &err), 0);
	ck_assert_ptr_eq(o.ctx.api_names_read, kept); /* not read again */
	assert_same_names(&first, &again);
	api_names__exit(&first);
	/* the second stands on its own */
	ck_assert_ptr_nonnull(api_names__find(&again, again.v[again.n - 1].id));

	narrow(&o);
	ck_assert_int_eq(api_names__load(&o.ctx.scope, &narrowed, &err), 0);
	ck_assert_ptr_ne(o.ctx.api_names_read, kept); /* read anew, kept in its place */
	ck_assert_int_eq(narrowed.n, count_in(&o, distinct_names));
	ck_assert_int_lt(narrowed.n, again.n);
	api_names__exit(&again);
	api_names__exit(&narrowed);
	close_scope(&o);
}
END_TEST

static void assert_groups_are_the_window(struct opened *o, const struct kernel_groups *g)
{
	static const char kernels[] = "SELECT count(*) FROM " PROF_T_KERNEL " k WHERE k.start >= ?1 "
				      "AND k.start < ?2 AND NOT " SUM_BAD_SPAN("k.");
	static const char names[] = "SELECT count(DISTINCT " PROF_SQL_KERNEL_NAME_ID("k.") ") FROM "
				    PROF_T_KERNEL " k WHERE k.start >= ?1 AND k.start < ?2 AND NOT "
				    SUM_BAD_SPAN("k.");
	int64_t n = 0;

	ck_assert_int_eq(g->n, count_in(o, names));
	for (int i = 0; i < g->n; i++) {
		ck_assert_ptr_nonnull(g->v[i].name);
		n += g->v[i].count;
		if (i > 0)
			ck_assert_int_ge(g->v[i - 1].time_ns, g->v[i].time_ns); /* longest first */
	}
	ck_assert_int_eq(n, count_in(o, kernels));
}

START_TEST(kernel_groups_read_once_a_window)
{
	struct prof_error err = { 0 };
	const struct kernel_groups *first, *again, *narrowed;
	int64_t all;
	struct opened o;

	open_scope(&o);
	ck_assert_int_eq(kernel_groups__of(&o.ctx, &first, &err), 0);
	ck_assert_int_gt(first->n, 1);
	assert_groups_are_the_window(&o, first);
	all = 0;
	for (int i = 0; i < first->n; i++)
		all += first->v[i].count;

	ck_assert_int_eq(kernel_groups__of(&o.ctx, &again, &err), 0);
	ck_assert_ptr_eq(again, first); /* not read again */

	narrow(&o);
	ck_assert_int_eq(kernel_groups__of(&o.ctx, &narrowed, &err), 0);
	assert_groups_are_the_window(&o, narrowed);
	{
		int64_t n = 0;

		for (int i = 0; i < narrowed->n; i++)
			n += narrowed->v[i].count;
		ck_assert_int_lt(n, all);
	}
	close_scope(&o);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("diagnose_reads_once");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, api_names_read_once_a_window);
	tcase_add_test(tc, kernel_groups_read_once_a_window);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return testutil_run(suite());
}
