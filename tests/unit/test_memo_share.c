/* test_memo_share.c - the answers about every row a connection keeps (the
 * rank bounds, the extent of every row, whether calls repeat an id, the
 * API names' order) handed to a second connection to the same capture: a
 * real two-rank DDP capture read rank by rank on one connection, then
 * opened again; the second holds the same rows in temporary tables of the
 * same shape, and nothing in the file. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/gpu_metrics/gpu_metrics.h"
#include "model/memo.h"
#include "model/ranks.h"
#include "model/sql.h"
#include "model/window.h"
#include "registry/registry.h"
#include "sink/sink.h"
#include "summary/summary.h"
#include "testutil.h"
#include "prof/error.h"
#include "prof/store.h"

/* The rows of sql as text, one line a row. */
static char *dump(struct prof_store *s, const char *sql)
{
	struct prof_cursor *c = NULL;
	struct prof_error err = { 0 };
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	int rc;

	ck_assert_ptr_nonnull(f);
	ck_assert_msg(prof_cursor__open(s, sql, &c, &err) == 0, "%s: %s", sql, err.msg);
	while ((rc = prof_cursor__next(c, &err)) > 0) {
		for (int i = 0; i < prof_cursor__columns(c); i++)
			fprintf(f, "%s%d:%s", i ? "|" : "", (int)prof_cursor__kind(c, i),
				prof_cursor__is_null(c, i) ? "" : prof_cursor__text(c, i));
		fputc('\n', f);
	}
	ck_assert_msg(rc == 0, "%s", err.msg);
	prof_cursor__close(c);
	fclose(f);
	return text;
}

static int64_t first_pid(struct prof_store *s)
{
	struct prof_cursor *c = NULL;
	struct prof_error err = { 0 };
	int64_t pid;

	ck_assert_int_eq(prof_cursor__open(s, "SELECT min(globalPid) FROM CUPTI_ACTIVITY_KIND_KERNEL", &c, &err), 0);
	ck_assert_int_eq(prof_cursor__next(c, &err), 1);
	pid = prof_cursor__int64(c, 0);
	prof_cursor__close(c);
	return pid;
}

/* Every table of names the first connection keeps, the same schema and
 * rows on the second, and none of them in the file. */
static void same_memos(struct prof_store *one, struct prof_store *two, const char *const *names, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		char sql[256], *a, *b;

		snprintf(sql, sizeof sql, "SELECT sql FROM temp.sqlite_master WHERE name = '%s'", names[i]);
		a = dump(one, sql);
		b = dump(two, sql);
		ck_assert_msg(strlen(a) > 0, "the first connection made no %s", names[i]);
		ck_assert_str_eq(a, b);
		free(a);
		free(b);
		snprintf(sql, sizeof sql, "SELECT * FROM temp.%s ORDER BY 1, 2", names[i]);
		a = dump(one, sql);
		b = dump(two, sql);
		ck_assert_msg(strlen(a) > 0, "%s is empty", names[i]);
		ck_assert_msg(strcmp(a, b) == 0, "%s differs:\n%s\nagainst\n%s", names[i], a, b);
		free(a);
		free(b);
		snprintf(sql, sizeof sql, "SELECT name FROM main.sqlite_master WHERE tbl_name = '%s'", names[i]);
		a = dump(two, sql);
		ck_assert_str_eq(a, "");
		free(a);
	}
}

static struct prof_store *open_fixture(const char *name)
{
	struct prof_store *s = NULL;
	struct prof_error err = { 0 };

	ck_assert_msg(prof_store__open_capture(testutil_data_path(name), &s, &err) == 0, "%s", err.msg);
	return s;
}

START_TEST(memo_tables_handed_to_a_second_connection_hold_the_same_rows)
{
	static const char *const tables[] = {
		MEMO_RANK_ROWS, MEMO_RANK_ROWS_NOTED, MEMO_ALL_EXTENT, MEMO_REPEATED_CALLS, MEMO_API_NAME_PLACES,
	};
	struct prof_store *one = open_fixture("ddp/ddp2_even.sqlite"), *two = NULL;
	struct prof_error err = { 0 };
	struct sum_capture_time t;
	char *calls;
	int rc;

	/* one rank's scope takes the rank bounds and, narrowed, the extent of
	 * every row; the calls ask whether ids repeat; the API summary orders
	 * the names */
	ck_assert_msg(sum_ranks__scope(one, first_pid(one), &err) == 0, "%s", err.msg);
	ck_assert_msg(sum_capture__time(one, &t, &err) == 0, "%s", err.msg);
	ck_assert_msg(sum_ranks__unscope(one, &err) == 0, "%s", err.msg);
	calls = sum_api_calls(one, &rc, &err);
	ck_assert_msg(calls != NULL, "%s", err.msg);
	free(calls);
	{
		FILE *null = fopen("/dev/null", "w");
		struct rpt_sink *quiet = rpt_sink__new(RPT_FORMAT_CSV, null);

		ck_assert_ptr_nonnull(quiet);
		ck_assert_msg(registry__run("cuda_api_sum", one, quiet, &err) == 0, "%s", err.msg);
		rpt_sink__delete(quiet);
		fclose(null);
	}
	ck_assert_msg(prof_store__reopen(one, &two, &err) == 0, "%s", err.msg);
	ck_assert_msg(sum_memo__share(one, two, &err) == 0, "%s", err.msg);
	same_memos(one, two, tables, sizeof tables / sizeof tables[0]);
	/* handed again, nothing changes: the second keeps its own */
	ck_assert_msg(sum_memo__share(one, two, &err) == 0, "%s", err.msg);
	prof_store__close(two);
	prof_store__close(one);
}
END_TEST

/* The GPU-metrics samplers' order, which each reader of the samples asks:
 * kept on the first catalogue, read back by the next (the same answer as
 * the scan, on both connections). */
START_TEST(gpu_metrics_order_kept_and_handed_on)
{
	static const char *const tables[] = { MEMO_GPU_METRICS_ORDER };
	struct prof_store *one = open_fixture("gpu_metrics/torch_gemm_bf16_fp32.sqlite"), *two = NULL;
	struct prof_error err = { 0 };
	struct gm_catalog scanned, kept, handed;

	ck_assert_msg(gm_catalog__load(one, &scanned, &err) == 0, "%s", err.msg);
	ck_assert_msg(gm_catalog__load(one, &kept, &err) == 0, "%s", err.msg);
	ck_assert_msg(prof_store__reopen(one, &two, &err) == 0, "%s", err.msg);
	ck_assert_msg(sum_memo__share(one, two, &err) == 0, "%s", err.msg);
	same_memos(one, two, tables, 1);
	ck_assert_msg(gm_catalog__load(two, &handed, &err) == 0, "%s", err.msg);
	ck_assert_int_gt(scanned.nsamplers, 0);
	ck_assert_int_eq(kept.nsamplers, scanned.nsamplers);
	ck_assert_int_eq(handed.nsamplers, scanned.nsamplers);
	for (int i = 0; i < scanned.nsamplers; i++) {
		ck_assert(scanned.samplers[i].in_order);
		ck_assert(kept.samplers[i].in_order);
		ck_assert(handed.samplers[i].in_order);
	}
	gm_catalog__exit(&scanned);
	gm_catalog__exit(&kept);
	gm_catalog__exit(&handed);
	prof_store__close(two);
	prof_store__close(one);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("memo_share");
	TCase *tc = tcase_create("share");

	tcase_add_test(tc, memo_tables_handed_to_a_second_connection_hold_the_same_rows);
	tcase_add_test(tc, gpu_metrics_order_kept_and_handed_on);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return testutil_run(suite());
}
