/* test_diagnose_reads_once.c - what several analyses of one diagnosis ask
 * for alike is read once a window: the API calls' names (the idle
 * attribution and the critical path, api_names__load) and the kernels
 * grouped by name (fp32_memory_bound's heuristic and tensor_cores_idle,
 * kernel_groups__of). Each answer read again is the same as the first,
 * and a window that moved is read anew, as the capture has it there
 * (counted with SQL). And what the diagnosis takes from passes it makes
 * anyway, in place of passes of their own, is what those passes found:
 * the devices from the busy union, each device's kernel unions (all, and
 * less NCCL's) and the end of the work each NVTX step launched from the
 * idle attribution's pass (the verdict's split, the critical path's
 * spans), each against the capture read with SQL and the critical path
 * against the one that reads the ends itself. On a real capture with an
 * NVTX loop and NCCL kernels, ddp2_rank0. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include <stdio.h>

#include "analysis/core/gpu_work.h"
#include "analysis/diagnose/diagnose.h"
#include "analysis/ranks/nccl.h"
#include "analysis/rules/kernel_groups.h"
#include "analysis/timeline/critical_path.h"
#include "analysis/timeline/gpu_idle.h"
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

/* The window's idle attribution, whose pass the diagnosis takes the
 * devices' kernel unions and the steps' launched ends from. */
static struct gpu_idle_result *analyse_idle(struct opened *o)
{
	struct prof_error err = { 0 };
	struct gpu_idle_result *idle = NULL;

	ck_assert_int_eq(o->ctx.w->mark, SUM_LOOP_NVTX);
	ck_assert_msg(gpu_idle__analyse(&o->ctx.scope, &idle, &err) == 0, "%s", err.msg);
	return idle;
}

START_TEST(devices_come_with_the_busy_union)
{
	struct prof_error err = { 0 };
	struct opened o;
	struct gpu_idle_result *idle = NULL;
	int64_t *ids = NULL;
	int n = 0;

	open_scope(&o);
	idle = analyse_idle(&o);
	ck_assert(o.ctx.devices_known);
	ck_assert_int_eq(gpu_work__devices(&o.ctx.scope, o.ctx.w->start_ns, o.ctx.w->end_ns, &ids, &n, &err), 0);
	ck_assert_int_gt(n, 0);
	ck_assert_int_eq(o.ctx.ndevices, n);
	for (int i = 0; i < n; i++)
		ck_assert_int_eq(o.ctx.devices[i], ids[i]);
	ck_assert_int_eq(idle->ndev, n);
	free(ids);
	gpu_idle_result__delete(idle);
	close_scope(&o);
}
END_TEST

/* The union of the device's kernels in the window, read with SQL; with
 * NCCL's left out when less_nccl. */
static int64_t kernel_union_ns(struct opened *o, int64_t device, bool less_nccl)
{
	struct diag_intervals u = { 0 };
	struct prof_error err = { 0 };
	char sql[1024];
	int64_t ns;

	snprintf(sql, sizeof sql,
		 "SELECT start, end FROM " PROF_T_KERNEL " k WHERE end > ?1 AND start < ?2"
		 " AND coalesce(deviceId, 0) = %lld AND NOT " SUM_BAD_SPAN("k.") "%s ORDER BY start",
		 (long long)device, less_nccl ? " AND (" NCCL_KERNEL_SQL("k") ") IS NOT 1" : "");
	ck_assert_int_eq(diag_scope__load_union(&o->ctx.scope, sql, DIAG_GPU_SIDE, &u, &err), 0);
	ns = diag_intervals__length(&u);
	diag_intervals__exit(&u);
	return ns;
}

START_TEST(kernel_unions_come_with_the_idle_pass)
{
	struct opened o;
	struct gpu_idle_result *idle = NULL;

	open_scope(&o);
	idle = analyse_idle(&o);
	for (int i = 0; i < idle->ndev; i++) {
		const struct gpu_idle_device *d = &idle->dev[i];

		ck_assert_int_eq(d->kernels_ns, kernel_union_ns(&o, d->device_id, false));
		ck_assert_int_eq(d->compute_ns, kernel_union_ns(&o, d->device_id, true));
		/* the capture's all-reduces are NCCL's: left out of the second */
		ck_assert_int_lt(d->compute_ns, d->kernels_ns);
		ck_assert_int_gt(d->compute_ns, 0);
	}
	gpu_idle_result__delete(idle);
	close_scope(&o);
}
END_TEST

/* The latest end, clipped to the window, of the work launched by a call
 * starting in [from, to), read with SQL; INT64_MIN for none. */
static int64_t launched_end(struct opened *o, int64_t from, int64_t to)
{
	struct prof_error err = { 0 };
	struct prof_cursor *c = NULL;
	char sql[2048];
	int64_t end = INT64_MIN;

	snprintf(sql, sizeof sql,
		 "SELECT max(min(g.end, ?2)) FROM (SELECT start, end, correlationId, globalPid FROM " PROF_T_KERNEL
		 " WHERE NOT " SUM_BAD_SPAN("") " UNION ALL SELECT start, end, correlationId, globalPid FROM "
		 PROF_T_MEMCPY " WHERE NOT " SUM_BAD_SPAN("") " UNION ALL SELECT start, end, correlationId, globalPid"
		 " FROM " PROF_T_MEMSET " WHERE NOT " SUM_BAD_SPAN("") ") g JOIN " DIAG_API_CALLS " a ON "
		 SUM_LAUNCHED_BY("g", "a") " WHERE g.end > ?1 AND g.start < ?2 AND a.start >= %lld AND a.start < %lld",
		 (long long)from, (long long)to);
	ck_assert_int_eq(diag__open_window(&o->ctx, sql, DIAG_GPU_SIDE, &c, &err), 0);
	ck_assert_int_eq(prof_cursor__next(c, &err), 1);
	if (!prof_cursor__is_null(c, 0))
		end = prof_cursor__int64(c, 0);
	prof_cursor__close(c);
	return end;
}

START_TEST(step_ends_come_with_the_idle_pass)
{
	struct prof_error err = { 0 };
	struct critical_path *with = NULL, *without = NULL;
	const struct step_ends *e;
	struct opened o;
	struct gpu_idle_result *idle = NULL;
	int ahead = 0;

	open_scope(&o);
	idle = analyse_idle(&o);
	e = &idle->step_ends;
	ck_assert(e->known);
	ck_assert_int_gt(idle->nsteps, 1);
	ck_assert_int_eq(e->n, idle->nsteps);
	for (int k = 0; k < e->n; k++) {
		const struct sum_step *s = &idle->steps[k];

		ck_assert_int_eq(e->end[k], launched_end(&o, s->start_ns, s->end_ns));
		ahead += e->end[k] > s->end_ns;
	}
	/* the loop runs ahead of its GPU: its steps' work ends after their ranges */
	ck_assert_int_gt(ahead, 0);
	ck_assert_int_eq(e->before, launched_end(&o, INT64_MIN, idle->steps[0].start_ns));
	/* the critical path of the same steps, whichever read the ends */
	ck_assert_msg(critical_path__analyse(&o.ctx.scope, idle, &with, &err) == 0, "%s", err.msg);
	ck_assert_msg(critical_path__analyse(&o.ctx.scope, NULL, &without, &err) == 0, "%s", err.msg);
	ck_assert_int_gt(with->step, 0);
	ck_assert_int_eq(with->step, without->step);
	ck_assert_int_eq(with->start_ns, without->start_ns);
	ck_assert_int_eq(with->end_ns, without->end_ns);
	ck_assert_int_eq(with->nparts, without->nparts);
	critical_path__delete(with);
	critical_path__delete(without);
	gpu_idle_result__delete(idle);
	close_scope(&o);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("diagnose_reads_once");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, api_names_read_once_a_window);
	tcase_add_test(tc, kernel_groups_read_once_a_window);
	tcase_add_test(tc, devices_come_with_the_busy_union);
	tcase_add_test(tc, kernel_unions_come_with_the_idle_pass);
	tcase_add_test(tc, step_ends_come_with_the_idle_pass);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return testutil_run(suite());
}
