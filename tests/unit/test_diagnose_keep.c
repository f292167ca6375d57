/* test_diagnose_keep.c - what a diagnosis leaves for the HTML page's
 * sections (diag__run_keeping): on a real capture of one rank of a DDP job
 * alone, the rank's idle attribution and critical path kept under its
 * number, the same step and spans as the rank read in its own
 * (sum_ranks__scope, as the page's step reads it); on a capture of two
 * ranks, whose ranks are diagnosed through their own scopes, each rank's. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/diagnose/diagnose.h"
#include "analysis/diagnose_run.h"
#include "analysis/timeline/critical_path.h"
#include "analysis/timeline/timeline_units.h"
#include "model/ranks.h"
#include "testutil.h"
#include "prof/error.h"
#include "prof/store.h"

static struct prof_store *open_fixture(const char *name)
{
	struct prof_store *s = NULL;
	struct prof_error err = { 0 };

	ck_assert_msg(prof_store__open_capture(testutil_data_path(name), &s, &err) == 0, "%s", err.msg);
	return s;
}

static void diagnose_keeping(struct prof_store *s, struct diag_keep *keep)
{
	struct diag_settings settings = { 0 };
	struct prof_error err = { 0 };
	struct diag_report *r = NULL;

	memset(keep, 0, sizeof *keep);
	ck_assert_int_eq(diag_settings__init(&settings), 0);
	ck_assert_msg(diag__run_keeping(s, &settings, keep, &r, &err) == 0, "%s", err.msg);
	diag_report__delete(r);
	diag_settings__exit(&settings);
}

/* The unit of rank in units, or NULL, without adding one. */
static struct timeline_unit *unit_of(struct timeline_units *u, int rank)
{
	for (int i = 0; i < u->n; i++)
		if (u->v[i].rank == rank)
			return &u->v[i];
	return NULL;
}

START_TEST(a_rank_alone_keeps_its_analyses_under_its_number)
{
	struct prof_store *s = open_fixture("ddp/ddp2_rank0.sqlite");
	struct prof_error err = { 0 };
	struct timeline_units own = { 0 };
	struct timeline_unit *kept, *made;
	struct diag_keep keep;
	struct sum_ranks ranks;
	int k = -1;

	ck_assert_msg(sum_ranks__load(s, &ranks, &err) == 0, "%s", err.msg);
	ck_assert(sum_ranks__is_job(&ranks));
	ck_assert_int_eq(ranks.nranks, 1);
	for (int i = 0; i < ranks.n; i++)
		if (ranks.p[i].rank >= 0)
			k = i;
	diagnose_keeping(s, &keep);
	kept = unit_of(&keep.timeline, ranks.p[k].rank);
	ck_assert_msg(kept && timeline_unit__has(kept, TIMELINE_IDLE | TIMELINE_PATH),
		      "rank %d's analyses were not kept", ranks.p[k].rank);
	/* what the page's step would make of the rank in its own */
	ck_assert_msg(sum_ranks__scope(s, ranks.p[k].global_pid, &err) == 0, "%s", err.msg);
	ck_assert_msg(timeline_units__need(s, &own, ranks.p[k].rank, TIMELINE_IDLE | TIMELINE_PATH, &made, &err) == 0,
		      "%s", err.msg);
	ck_assert_msg(sum_ranks__unscope(s, &err) == 0, "%s", err.msg);
	ck_assert_int_gt(made->cp->step, 0);
	ck_assert_int_eq(kept->cp->step, made->cp->step);
	ck_assert_int_eq(kept->cp->nsteps, made->cp->nsteps);
	ck_assert_int_eq(kept->cp->start_ns, made->cp->start_ns);
	ck_assert_int_eq(kept->cp->end_ns, made->cp->end_ns);
	ck_assert_int_eq(kept->cp->nparts, made->cp->nparts);
	ck_assert_int_eq(kept->rows.nwork, made->rows.nwork);
	ck_assert_int_eq(kept->rows.ncalls, made->rows.ncalls);
	ck_assert_int_eq(kept->idle->nsteps, made->idle->nsteps);
	ck_assert_int_eq(kept->idle->ndev, made->idle->ndev);
	ck_assert_int_eq(kept->idle->window.start_ns, made->idle->window.start_ns);
	ck_assert_int_eq(kept->idle->window.end_ns, made->idle->window.end_ns);
	timeline_units__exit(&own);
	diag_keep__exit(&keep);
	sum_ranks__exit(&ranks);
	prof_store__close(s);
}
END_TEST

START_TEST(a_job_of_two_ranks_keeps_each_ranks_analyses)
{
	struct prof_store *s = open_fixture("ddp/ddp2_even.sqlite");
	struct diag_keep keep;

	diagnose_keeping(s, &keep);
	for (int rank = 0; rank < 2; rank++) {
		struct timeline_unit *x = unit_of(&keep.timeline, rank);

		ck_assert_msg(x && timeline_unit__has(x, TIMELINE_IDLE | TIMELINE_PATH), "rank %d not kept", rank);
	}
	/* no unit of the capture as a whole: it is two processes */
	ck_assert_ptr_null(unit_of(&keep.timeline, -1));
	diag_keep__exit(&keep);
	prof_store__close(s);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("diagnose_keep");
	TCase *tc = tcase_create("keep");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, a_rank_alone_keeps_its_analyses_under_its_number);
	tcase_add_test(tc, a_job_of_two_ranks_keeps_each_ranks_analyses);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return testutil_run(suite());
}
