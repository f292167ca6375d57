/* test_calls_table.c - what a diagnosis reads from its table of calls on
 * its own connection (diag_scope__api_view) in place of the API tables'
 * views is what the views give: each name's calls and their time in the
 * window (api_groups__make) and what the calls' names say of the program
 * (prog_model__take_call_names). In each process's scope (where nothing is
 * shared between connections, so each answer is read) of real captures:
 * a one-file DDP job, CUDA graph launches, managed memory, a DataLoader's
 * pinning thread, an nsys export, a foreign file's text in a call's
 * name, and managed allocations of a bad span. The table, made before
 * the repeated-call test answers, holds each call once where a table
 * holds calls twice (nsys's backtrace rows), as the calls' union does. */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/core/program.h"
#include "analysis/diagnose/diagnose.h"
#include "analysis/rules/api_groups.h"
#include "model/ranks.h"
#include "model/sql.h"
#include "prof/store.h"
#include "prof/tables.h"
#include "testutil.h"

static const char *const captures[] = {
	"ddp/ddp2_even.sqlite",		"corpus/graph_replay.sqlite",	  "corpus/managed_memory.sqlite",
	"corpus/timm_resnet_dataloader.sqlite", "nsys/cloverleaf-cuda.sqlite", "python/py_hf_gpt2_train.sqlite",
};

/* What the calls said over every capture and scope. */
struct seen {
	int scopes, groups, odd;
	bool graphs, managed, dataloader;
};

static struct api_groups *groups_of(struct diag_context *ctx, bool table_here)
{
	struct prof_error err = { 0 };
	void *made = NULL;

	ctx->api_table_here = table_here;
	ck_assert_msg(api_groups__make(ctx, &made, &err) == 0, "%s", err.msg);
	ctx->api_table_here = true;
	return made;
}

static void check_groups(struct diag_context *ctx, const char *what, struct seen *seen)
{
	struct api_groups *table = groups_of(ctx, true), *views = groups_of(ctx, false);

	ck_assert_msg(table->odd == views->odd, "%s: odd %d, the views' %d", what, table->odd, views->odd);
	ck_assert_msg(table->by_name.n == views->by_name.n, "%s: %d names, the views' %d", what, table->by_name.n,
		      views->by_name.n);
	for (int i = 0; i < table->by_name.n; i++) {
		const struct id_group *a = &table->by_name.v[i], *b = &views->by_name.v[i];

		ck_assert_int_eq(a->id, b->id);
		ck_assert_msg(a->count == b->count && a->sum == b->sum, "%s: name %lld: %lld calls %lld ns, the views' %lld %lld",
			      what, (long long)a->id, (long long)a->count, (long long)a->sum, (long long)b->count,
			      (long long)b->sum);
	}
	seen->groups += table->by_name.n;
	seen->odd += table->odd;
	api_groups__free(table);
	api_groups__free(views);
}

static void check_names(struct diag_context *ctx, const char *what, struct seen *seen)
{
	struct prof_error err = { 0 };
	struct prog_model table, views;

	ck_assert_msg(prog_model__take_call_names(ctx->store, true, &table, &err) == 0, "%s: %s", what, err.msg);
	ck_assert_msg(prog_model__take_call_names(ctx->store, false, &views, &err) == 0, "%s: %s", what, err.msg);
	ck_assert_msg(memcmp(table.framework, views.framework, sizeof table.framework) == 0, "%s: frameworks", what);
	ck_assert_msg(memcmp(table.uses, views.uses, sizeof table.uses) == 0, "%s: practices", what);
	seen->graphs |= table.framework[PROG_CUDA_GRAPHS];
	seen->managed |= table.uses[USE_MANAGED];
	seen->dataloader |= table.uses[USE_DATALOADER];
}

/* Each process of path in its scope, with a diagnosis's table made there. */
static void check_capture(const char *path, struct seen *seen)
{
	struct prof_error err = { 0 };
	struct prof_store *s = NULL;
	struct sum_ranks r;

	ck_assert_msg(prof_store__open(path, &s, &err) == 0, "%s: %s", path, err.msg);
	ck_assert_msg(sum_ranks__load(s, &r, &err) == 0, "%s", err.msg);
	for (int i = 0; i < r.n; i++) {
		struct diag_settings settings;
		struct diag_context ctx;

		ck_assert_msg(sum_ranks__scope(s, r.p[i].global_pid, &err) == 0, "%s", err.msg);
		ck_assert(prof_store__restricted(s));
		ck_assert_int_eq(diag_settings__init(&settings), 0);
		ck_assert_msg(diag_context__init_scope(&ctx, s, &settings, &err) == 0, "%s: %s", path, err.msg);
		if (ctx.has_api_calls) {
			ck_assert(ctx.api_table_here);
			check_groups(&ctx, path, seen);
			check_names(&ctx, path, seen);
			seen->scopes++;
		}
		api_groups__free(ctx.api_groups);
		ctx.api_groups = NULL;
		diag_context__exit(&ctx);
		diag_settings__exit(&settings);
		ck_assert_int_eq(sum_ranks__unscope(s, &err), 0);
	}
	sum_ranks__exit(&r);
	prof_store__close(s);
}

/* The table's calls against the calls' union less those of a bad span:
 * how many, and their times and ids summed. */
static void check_calls_once(const char *capture, bool repeated)
{
	struct prof_error err = { 0 };
	struct prof_store *s = NULL;
	struct diag_scope scope = { 0 };
	int64_t table[4], views[4];
	char *src, *sql;
	bool once;
	int rc;

	ck_assert_msg(prof_store__open(testutil_data_path(capture), &s, &err) == 0, "%s", err.msg);
	scope.store = s;
	ck_assert_msg(diag_scope__api_view(&scope, &err) == 0, "%s: %s", capture, err.msg);
	ck_assert(scope.api_table_here);
	ck_assert_int_eq(sum_api_calls__once(s, &once, &err), 0);
	ck_assert_int_eq(once, !repeated);
	src = sum_api_calls(s, &rc, &err);
	ck_assert(src != NULL);
	sql = malloc(strlen(src) + 256);
	ck_assert(sql != NULL);
	sprintf(sql, "SELECT count(*), total(start), total(end), total(correlationId) FROM (%s) WHERE NOT "
		SUM_BAD_SPAN(""), src);
	for (int k = 0; k < 2; k++) {
		struct prof_cursor *c = NULL;
		int64_t *v = k ? views : table;

		ck_assert_int_eq(prof_cursor__open(s, k ? sql : "SELECT count(*), total(start), total(end),"
					  " total(correlationId) FROM " DIAG_API_CALLS, &c, &err), 0);
		ck_assert_int_eq(prof_cursor__next(c, &err), 1);
		for (int j = 0; j < 4; j++)
			v[j] = j ? (int64_t)(prof_cursor__double(c, j) / 1e3) : prof_cursor__int64(c, 0);
		prof_cursor__close(c);
	}
	for (int j = 0; j < 4; j++)
		ck_assert_msg(table[j] == views[j], "%s: column %d: the table %lld, the calls %lld", capture, j,
			      (long long)table[j], (long long)views[j]);
	free(sql);
	free(src);
	prof_store__close(s);
}

START_TEST(each_call_once_in_the_table)
{
	check_calls_once("transformer_naive.sqlite", false);
	check_calls_once("nsys/saxpy-mpi-cuda-rank0.sqlite", true);
}
END_TEST

START_TEST(the_table_reads_as_the_views)
{
	struct seen seen = { 0 };

	for (size_t i = 0; i < sizeof captures / sizeof *captures; i++)
		check_capture(testutil_data_path(captures[i]), &seen);
	/* the answers compared said something */
	ck_assert_int_gt(seen.scopes, (int)(sizeof captures / sizeof *captures));
	ck_assert_int_gt(seen.groups, 50);
	ck_assert(seen.graphs && seen.managed && seen.dataloader);
	ck_assert_int_eq(seen.odd, 0);
}
END_TEST

/* A name that is no id (a foreign file's text in nameId) makes the
 * groups odd read either way. */
START_TEST(a_name_of_another_type_is_odd_either_way)
{
	struct seen seen = { 0 };
	char path[4096];

	snprintf(path, sizeof path, "%s",
		 testutil_changed_copy("ddp/ddp2_even.sqlite", "calls_table_text_name.sqlite",
			 "UPDATE " PROF_T_RUNTIME " SET nameId = 'no id' "
			 "WHERE rowid IN (SELECT rowid FROM " PROF_T_RUNTIME " ORDER BY rowid DESC LIMIT 50)"));
	check_capture(path, &seen);
	ck_assert_int_gt(seen.odd, 0);
}
END_TEST

/* Calls of a bad span say nothing either way: a copy whose managed
 * allocations all lost their span tells of no managed memory. */
START_TEST(calls_of_a_bad_span_say_nothing_either_way)
{
	struct seen seen = { 0 };
	char path[4096];

	snprintf(path, sizeof path, "%s",
		 testutil_changed_copy("corpus/managed_memory.sqlite", "calls_table_bad_managed.sqlite",
			 "UPDATE " PROF_T_RUNTIME " SET end = start - 1 WHERE nameId IN (SELECT id FROM "
			 PROF_T_STRINGS " WHERE value LIKE 'cudaMallocManaged%');"
			 " UPDATE " PROF_T_DRIVER " SET end = start - 1 WHERE nameId IN (SELECT id FROM "
			 PROF_T_STRINGS " WHERE value LIKE 'cuMemAllocManaged%')"));
	check_capture(path, &seen);
	ck_assert_int_gt(seen.scopes, 0);
	ck_assert(!seen.managed);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("calls_table");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, the_table_reads_as_the_views);
	tcase_add_test(tc, each_call_once_in_the_table);
	tcase_add_test(tc, a_name_of_another_type_is_odd_either_way);
	tcase_add_test(tc, calls_of_a_bad_span_say_nothing_either_way);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return testutil_run(suite());
}
