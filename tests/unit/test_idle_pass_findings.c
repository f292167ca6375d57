/* test_idle_pass_findings.c - what the diagnosis takes from passes it
 * already makes, in place of passes of their own, is what those passes
 * found: the devices from the busy union, each device's kernel unions
 * (all, and less NCCL's) from the idle attribution's pass, and the end of
 * the work each step launched, from that pass too (the critical path's
 * spans). Each is checked against the capture read with SQL, and the
 * critical path against the one that reads the ends itself. On a real
 * capture with an NVTX loop and NCCL kernels, ddp2_rank0. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/core/gpu_work.h"
#include "analysis/diagnose/diagnose.h"
#include "analysis/ranks/nccl.h"
#include "analysis/timeline/critical_path.h"
#include "analysis/timeline/gpu_idle.h"
#include "model/sql.h"
#include "prof/store.h"
#include "prof/tables.h"
#include "testutil.h"

#define CAPTURE "ddp/ddp2_rank0.sqlite"

struct opened {
	struct prof_store *store;
	struct diag_settings settings;
	struct diag_context ctx;
	struct gpu_idle_result *idle;
};

static void open_scope(struct opened *o)
{
	struct prof_error err = { 0 };

	memset(o, 0, sizeof *o);
	ck_assert_msg(prof_store__open(testutil_data_path(CAPTURE), &o->store, &err) == 0, "%s", err.msg);
	ck_assert_int_eq(diag_settings__init(&o->settings), 0);
	ck_assert_msg(diag_context__init_scope(&o->ctx, o->store, &o->settings, &err) == 0, "%s", err.msg);
	ck_assert(o->ctx.has_api_calls && o->ctx.has_kernel);
	ck_assert_int_eq(o->ctx.w->mark, SUM_LOOP_NVTX);
	ck_assert_msg(gpu_idle__analyse(&o->ctx.scope, &o->idle, &err) == 0, "%s", err.msg);
}

static void close_scope(struct opened *o)
{
	gpu_idle_result__delete(o->idle);
	diag_context__exit(&o->ctx);
	diag_settings__exit(&o->settings);
	prof_store__close(o->store);
}

START_TEST(devices_come_with_the_busy_union)
{
	struct prof_error err = { 0 };
	struct opened o;
	int64_t *ids = NULL;
	int n = 0;

	open_scope(&o);
	ck_assert(o.ctx.devices_known);
	ck_assert_int_eq(gpu_work__devices(&o.ctx.scope, o.ctx.w->start_ns, o.ctx.w->end_ns, &ids, &n, &err), 0);
	ck_assert_int_gt(n, 0);
	ck_assert_int_eq(o.ctx.ndevices, n);
	for (int i = 0; i < n; i++)
		ck_assert_int_eq(o.ctx.devices[i], ids[i]);
	ck_assert_int_eq(o.idle->ndev, n);
	free(ids);
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

	open_scope(&o);
	ck_assert(o.idle->kernel_unions);
	for (int i = 0; i < o.idle->ndev; i++) {
		const struct gpu_idle_device *d = &o.idle->dev[i];

		ck_assert_int_eq(d->kernels_ns, kernel_union_ns(&o, d->device_id, false));
		ck_assert_int_eq(d->compute_ns, kernel_union_ns(&o, d->device_id, true));
		/* the capture's all-reduces are NCCL's: left out of the second */
		ck_assert_int_lt(d->compute_ns, d->kernels_ns);
		ck_assert_int_gt(d->compute_ns, 0);
	}
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
	int ahead = 0;

	open_scope(&o);
	e = &o.idle->step_ends;
	ck_assert(e->known);
	ck_assert_int_gt(o.idle->nsteps, 1);
	ck_assert_int_eq(e->n, o.idle->nsteps);
	for (int k = 0; k < e->n; k++) {
		const struct sum_step *s = &o.idle->steps[k];

		ck_assert_int_eq(e->end[k], launched_end(&o, s->start_ns, s->end_ns));
		ahead += e->end[k] > s->end_ns;
	}
	/* the loop runs ahead of its GPU: its steps' work ends after their ranges */
	ck_assert_int_gt(ahead, 0);
	ck_assert_int_eq(e->before, launched_end(&o, INT64_MIN, o.idle->steps[0].start_ns));
	/* the critical path of the same steps, whichever read the ends */
	ck_assert_msg(critical_path__analyse(&o.ctx.scope, o.idle, &with, &err) == 0, "%s", err.msg);
	ck_assert_msg(critical_path__analyse(&o.ctx.scope, NULL, &without, &err) == 0, "%s", err.msg);
	ck_assert_int_gt(with->step, 0);
	ck_assert_int_eq(with->step, without->step);
	ck_assert_int_eq(with->start_ns, without->start_ns);
	ck_assert_int_eq(with->end_ns, without->end_ns);
	ck_assert_int_eq(with->nparts, without->nparts);
	critical_path__delete(with);
	critical_path__delete(without);
	close_scope(&o);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("idle_pass_findings");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 60);
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
