/* test_window_calls.c - what the idle attribution's pass makes of the
 * window's calls as it reads them (window_calls.h) is what the rules'
 * own statements over the diagnosis's table of calls make: the calls by
 * name id that start on the host side of the window (count, summed
 * spans), and the time the calls' union covers in the gaps of the GPU's
 * busy union (cpu_bound's measure). On real captures of every kind, in
 * the diagnosis's window, the whole capture, and a window that starts
 * where a call of no length starts and ends (a copy whose calls lost
 * their length); the pass's groups are the ones the rules then take. */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "analysis/diagnose/diagnose.h"
#include "analysis/rules/api_groups.h"
#include "analysis/timeline/gpu_idle.h"
#include "model/sums.h"
#include "prof/saturate.h"
#include "prof/store.h"
#include "prof/tables.h"
#include "rules_context.h"
#include "testutil.h"

static const char *const captures[] = {
	"transformer_naive.sqlite",	      "ddp/ddp2_even.sqlite",	       "ddp/two_gpus/ddp2_straggler.sqlite",
	"corpus/hf_gpt2_train.sqlite",	      "corpus/jax_jit_mlp.sqlite",     "corpus/graph_replay.sqlite",
	"corpus/timm_resnet_dataloader.sqlite", "corpus/managed_memory.sqlite", "nsys/cloverleaf-cuda.sqlite",
	"nsys/saxpy-mpi-cuda-rank0.sqlite",   "python/py_hf_gpt2_train.sqlite", "gpu_work.sqlite",
};

/* The time the calls' union (by start, merged where they overlap or
 * touch) covers in the gaps of ctx's busy union, as SQL lists the calls. */
static int64_t calls_in_gaps(struct diag_context *ctx)
{
	struct prof_error err = { 0 };
	struct prof_cursor *c;
	int64_t lo = ctx->w->start_ns, hi = ctx->w->end_ns, sum = 0, us = 0, ue = 0;
	bool have = false, more = true;

	ck_assert_int_eq(diag__open_window(ctx, "SELECT start, end FROM " DIAG_API_CALLS
					   " WHERE end > ?1 AND start < ?2 ORDER BY start, rowid",
					   DIAG_GPU_SIDE, &c, &err), 0);
	while (more) {
		int64_t s = 0, e = 0;

		more = prof_cursor__next(c, &err) == 1;
		if (more) {
			s = prof_cursor__int64(c, 0);
			e = prof_cursor__int64(c, 1);
			if (have && s <= ue) {
				ue = e > ue ? e : ue;
				continue;
			}
		}
		/* the union's interval [us, ue) is whole: its time in every gap */
		for (int k = 0; have && k <= ctx->nbusy; k++) {
			int64_t a = k == 0 ? lo : ctx->busy[k - 1].end_ns, b = k < ctx->nbusy ? ctx->busy[k].start_ns : hi;
			int64_t x = us > a ? us : a, y = ue < b ? ue : b;

			if (b > a && y > x)
				sum = prof_add_saturated(sum, y - x);
		}
		us = s;
		ue = e;
		have = true;
	}
	prof_cursor__close(c);
	return sum;
}

/* The pass's groups against SQL's, name id by name id; the calls counted. */
static int64_t check_groups(struct diag_context *ctx, const struct window_calls *seen, const char *what)
{
	struct prof_error err = { 0 };
	struct prof_cursor *c;
	int64_t calls = 0;
	int rows = 0;

	ck_assert_int_eq(diag__open_window(ctx, "SELECT nameId, count(*), " SUM_TOTAL_SATURATED("end - start")
					   " FROM " DIAG_API_CALLS " WHERE start >= ?1 AND start < ?2"
					   " AND nameId IS NOT NULL GROUP BY nameId ORDER BY nameId",
					   DIAG_HOST_SIDE, &c, &err), 0);
	while (prof_cursor__next(c, &err) == 1) {
		ck_assert_msg(rows < seen->by_name.n, "%s: SQL has more names than %d", what, seen->by_name.n);
		ck_assert_int_eq(seen->by_name.v[rows].id, prof_cursor__int64(c, 0));
		ck_assert_msg(seen->by_name.v[rows].count == prof_cursor__int64(c, 1), "%s: name %lld: %lld calls, SQL %lld",
			      what, (long long)prof_cursor__int64(c, 0), (long long)seen->by_name.v[rows].count,
			      (long long)prof_cursor__int64(c, 1));
		ck_assert_int_eq(seen->by_name.v[rows].sum, prof_cursor__int64(c, 2));
		calls += seen->by_name.v[rows].count;
		rows++;
	}
	prof_cursor__close(c);
	ck_assert_msg(rows == seen->by_name.n, "%s: %d names, SQL %d", what, seen->by_name.n, rows);
	return calls;
}

/* The pass over ctx's window (w: another, NULL: the diagnosis's) against
 * SQL; the calls its groups counted. */
static int64_t check_window(struct diag_context *ctx, const struct sum_window *w, const char *what)
{
	struct prof_error err = { 0 };
	const struct gpu_idle_result *idle;
	struct window_calls *seen;
	int64_t calls, count, ns;

	gpu_idle_result__delete(ctx->idle);
	ctx->idle = NULL;
	api_groups__free(ctx->api_groups);
	ctx->api_groups = NULL;
	if (w)
		ctx->report->window = *w;
	ck_assert_msg(api_groups__idle_of(ctx, &idle, &err) == 0, "%s: %s", what, err.msg);
	seen = gpu_idle__calls_seen(ctx->idle, &ctx->scope);
	ck_assert_msg(seen != NULL, "%s: the pass read not every call", what);
	ck_assert_msg(seen->groups_known, "%s: no groups", what);
	ck_assert_msg(seen->in_calls_idle_ns == calls_in_gaps(ctx), "%s: %lld ns in calls while idle, SQL %lld", what,
		      (long long)seen->in_calls_idle_ns, (long long)calls_in_gaps(ctx));
	calls = check_groups(ctx, seen, what);
	/* the rules take the pass's groups, and count what SQL counts */
	ck_assert_int_eq(api_groups__tally(ctx, "1", NULL, &count, &ns, &err), 0);
	ck_assert_int_eq(count, calls);
	ck_assert_msg(!gpu_idle__calls_seen(ctx->idle, &ctx->scope)->groups_known, "%s: the groups were read again",
		      what);
	return calls;
}

START_TEST(the_pass_counts_what_the_statements_count)
{
	int64_t calls = 0;

	for (size_t k = 0; k < sizeof captures / sizeof *captures; k++) {
		struct diag_settings settings;
		struct diag_context ctx;
		struct prof_store *s;
		struct sum_window whole;

		rules_context__open(testutil_data_path(captures[k]), &s, &settings, &ctx);
		calls += check_window(&ctx, NULL, captures[k]);
		whole = *ctx.w;
		whole.start_ns = whole.capture_start_ns;
		whole.end_ns = whole.host_end_ns = whole.capture_end_ns;
		calls += check_window(&ctx, &whole, captures[k]);
		rules_context__close(s, &settings, &ctx);
	}
	ck_assert_int_gt(calls, 10000);
}
END_TEST

/* Calls of no length where the window starts are the groups' (they start
 * in it), though no part of them is the union's or the attribution's. */
START_TEST(a_call_of_no_length_at_the_start_counts)
{
	char path[4096];
	struct diag_settings settings;
	struct diag_context ctx;
	struct prof_store *s;
	struct sum_window w;
	int64_t at;

	snprintf(path, sizeof path, "%s",
		 testutil_changed_copy("transformer_naive.sqlite", "window_calls_no_length.sqlite",
				       "UPDATE " PROF_T_RUNTIME " SET end = start WHERE rowid IN (300, 301, 302, 900)"));
	rules_context__open(path, &s, &settings, &ctx);
	{
		struct prof_error err = { 0 };
		struct prof_cursor *c;

		ck_assert_int_eq(prof_cursor__open(s, "SELECT start FROM " PROF_T_RUNTIME " WHERE rowid = 301", &c, &err),
				 0);
		ck_assert_int_eq(prof_cursor__next(c, &err), 1);
		at = prof_cursor__int64(c, 0);
		prof_cursor__close(c);
	}
	w = *ctx.w;
	w.start_ns = at;
	w.end_ns = w.host_end_ns = w.capture_end_ns;
	ck_assert_int_gt(check_window(&ctx, &w, "a window from a call of no length"), 1000);
	rules_context__close(s, &settings, &ctx);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("window_calls");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, the_pass_counts_what_the_statements_count);
	tcase_add_test(tc, a_call_of_no_length_at_the_start_counts);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return testutil_run(suite());
}
