/* test_api_groups.c - the window's calls counted by name in one pass
 * (api_groups__tally) give each kind's rules what a statement over the
 * diagnosis's table of calls gives, name for name: synchronous memsets,
 * synchronisation, allocation, kernel launches, and every call. On real
 * captures of every kind (nsys exports of the runtime and of MPI ranks, a
 * DataLoader's allocations, two GPUs, JAX, Python's stacks), in the
 * diagnosis's window and over the whole capture; a foreign file's name
 * that is no id takes the statement's way. The statements, run beside,
 * say what is right. */
#include <check.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/diagnose/diagnose.h"
#include "analysis/rules/api_groups.h"
#include "model/names.h"
#include "model/sums.h"
#include "prof/store.h"
#include "prof/tables.h"
#include "rules_context.h"
#include "testutil.h"

static const char *const captures[] = {
	"transformer_naive.sqlite",	      "ddp/ddp2_even.sqlite",	       "ddp/two_gpus/ddp2_straggler.sqlite",
	"corpus/hf_gpt2_train.sqlite",	      "corpus/jax_jit_mlp.sqlite",     "corpus/graph_replay.sqlite",
	"corpus/timm_resnet_dataloader.sqlite", "corpus/managed_memory.sqlite", "nsys/cloverleaf-cuda.sqlite",
	"nsys/saxpy-mpi-cuda-rank0.sqlite",   "python/py_hf_gpt2_train.sqlite",
};

/* The kinds the rules ask for, and every call. */
static const char *const kinds[] = {
	"(s.value LIKE 'cudaMemset%' OR s.value LIKE 'cuMemsetD%') AND s.value NOT LIKE '%Async%'",
	"s.value LIKE 'cudaDeviceSynchronize%' OR s.value LIKE 'cudaStreamSynchronize%'"
	" OR s.value LIKE 'cudaEventSynchronize%' OR s.value LIKE 'cuCtxSynchronize%'"
	" OR s.value LIKE 'cuStreamSynchronize%' OR s.value LIKE 'cuEventSynchronize%'",
	"s.value NOT LIKE '%Async%' AND (s.value LIKE 'cudaMalloc%' OR s.value LIKE 'cudaFree%'"
	" OR s.value LIKE 'cudaHostAlloc%' OR s.value LIKE 'cuMemAlloc%' OR s.value LIKE 'cuMemFree%'"
	" OR s.value LIKE 'cuMemHostAlloc%')",
	"s.value LIKE '%LaunchKernel%' OR s.value LIKE 'cuLaunch%'",
	"1",
};
#define NKINDS (sizeof kinds / sizeof *kinds)

/* The kind's calls in ctx's window against the statement's; how many
 * calls the kind has. */
static int64_t check_kind(struct diag_context *ctx, const char *capture, const char *where)
{
	struct prof_error err = { 0 };
	struct diag_tally t = { 0 };
	int64_t count = -1, ns = -1, sql_count = 0, sql_ns = 0;
	struct prof_cursor *c;
	char sql[1024];
	int rows = 0;

	ck_assert_msg(api_groups__tally(ctx, where, &t, &count, &ns, &err) == 0, "%s: %s", capture, err.msg);
	snprintf(sql, sizeof sql,
		 "SELECT s.value, count(*), " SUM_TOTAL_SATURATED("r.end - r.start") " FROM " DIAG_API_CALLS " r"
		 " JOIN " SUM_API_NAMES " s ON s.id = r.nameId WHERE r.start >= ?1 AND r.start < ?2 AND (%s)"
		 " GROUP BY s.value",
		 where);
	ck_assert_int_eq(diag__open_window(ctx, sql, DIAG_HOST_SIDE, &c, &err), 0);
	while (prof_cursor__next(c, &err) == 1) {
		const char *name = prof_cursor__text(c, 0);
		int i;

		for (i = 0; i < t.n && strcmp(t.e[i].key, name); i++)
			;
		ck_assert_msg(i < t.n, "%s: %s has calls, the groups none", capture, name);
		ck_assert_msg(t.e[i].count == prof_cursor__int64(c, 1), "%s: %s: %lld calls, SQL %lld", capture, name,
			      (long long)t.e[i].count, (long long)prof_cursor__int64(c, 1));
		ck_assert_msg(t.e[i].time_ns == prof_cursor__int64(c, 2), "%s: %s: %lld ns, SQL %lld", capture, name,
			      (long long)t.e[i].time_ns, (long long)prof_cursor__int64(c, 2));
		sql_count += t.e[i].count;
		sql_ns += t.e[i].time_ns;
		rows++;
	}
	prof_cursor__close(c);
	ck_assert_msg(rows == t.n, "%s: %d names, SQL %d", capture, t.n, rows);
	ck_assert_int_eq(count, sql_count);
	ck_assert_int_eq(ns, sql_ns);
	/* without a tally: the sums alone */
	ck_assert_int_eq(api_groups__tally(ctx, where, NULL, &count, &ns, &err), 0);
	ck_assert_int_eq(count, sql_count);
	ck_assert_int_eq(ns, sql_ns);
	diag_tally__exit(&t);
	return sql_count;
}

/* Every kind in ctx's window and over the whole capture; the calls of
 * the rules' kinds (not every call) seen. */
static int64_t check_capture(struct diag_context *ctx, const char *capture)
{
	struct sum_window *w = &ctx->report->window;
	int64_t seen = 0;

	for (int whole = 0; whole < 2; whole++) {
		if (whole) {
			w->start_ns = INT64_MIN;
			w->end_ns = INT64_MAX;
			w->host_end_ns = INT64_MAX;
		}
		for (size_t k = 0; k < NKINDS; k++) {
			int64_t n = check_kind(ctx, capture, kinds[k]);

			seen += k + 1 < NKINDS ? n : 0;
		}
	}
	return seen;
}

START_TEST(kinds_as_the_statements_count_them)
{
	int64_t seen = 0;

	for (size_t k = 0; k < sizeof captures / sizeof *captures; k++) {
		struct diag_settings settings;
		struct diag_context ctx;
		struct prof_store *s;

		rules_context__open(testutil_data_path(captures[k]), &s, &settings, &ctx);
		seen += check_capture(&ctx, captures[k]);
		ck_assert_msg(!ctx.api_groups->odd, "%s: its calls read as a foreign file's", captures[k]);
		rules_context__close(s, &settings, &ctx);
	}
	/* the rules' kinds were there to count, not only empty ones */
	ck_assert_int_gt(seen, 1000);
}
END_TEST

/* A name that is no id (a foreign file's text in nameId) joins no name:
 * the kinds are read by their statements, which leave it out as the
 * join does. */
START_TEST(a_name_of_another_type_takes_the_statements)
{
	char path[4096];
	struct diag_settings settings;
	struct diag_context ctx;
	struct prof_store *s;

	snprintf(path, sizeof path, "%s", testutil_tmp_path("api_groups_text_name.sqlite"));
	testutil_copy_file(testutil_data_path("transformer_naive.sqlite"), path);
	testutil_sqlite3(path, "UPDATE " PROF_T_RUNTIME " SET nameId = 'no id' "
			 "WHERE rowid IN (SELECT rowid FROM " PROF_T_RUNTIME " ORDER BY rowid DESC LIMIT 50)");
	rules_context__open(path, &s, &settings, &ctx);
	ck_assert_int_gt(check_capture(&ctx, "transformer_naive with text names"), 100);
	ck_assert(ctx.api_groups->odd);
	rules_context__close(s, &settings, &ctx);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("api_groups");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, kinds_as_the_statements_count_them);
	tcase_add_test(tc, a_name_of_another_type_takes_the_statements);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return testutil_run(suite());
}
