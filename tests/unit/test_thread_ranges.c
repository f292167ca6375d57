/* test_thread_ranges.c - every thread's NVTX ranges held in memory
 * (model/thread_ranges.c), for walks of the calls in their tables' own
 * order: the innermost open range of every call of a real capture against
 * SQL's lookup; a call before its thread's last, a thread without ranges
 * and too many ranges told apart; and nvtx_kern_sum's groups and the
 * folded stacks (GPU and API weight, windowed) walked so against the
 * sorted walks, on real captures and on one whose calls of a thread are
 * out of start order. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export/folded.h"
#include "model/groups.h"
#include "model/thread_ranges.h"
#include "testutil.h"
#include "prof/error.h"
#include "prof/store.h"

static const char *const captures[] = {
	"transformer_naive.sqlite",	     "corpus/jax_jit_mlp.sqlite",
	"corpus/hf_gpt2_train.sqlite",	     "ddp/ddp2_even.sqlite",
	"windows/torch_profiler_window.sqlite", "python/py_hf_gpt2_train.sqlite",
	"corpus/graph_replay.sqlite",	     "nsys/cloverleaf-cuda.sqlite",
};
#define NCAPTURES (sizeof captures / sizeof captures[0])

/* The push/pop ranges as the walks hold them, each with its rowid. */
static const char ranges_sql[] =
	"SELECT globalTid, start, end, rowid FROM NVTX_EVENTS WHERE eventType = 59 AND globalTid IS NOT NULL"
	" AND start IS NOT NULL AND end IS NOT NULL ORDER BY globalTid, start, end DESC, rowid DESC";

static struct prof_store *open_path(const char *path)
{
	struct prof_store *s = NULL;
	struct prof_error err = { 0 };

	ck_assert_msg(prof_store__open(path, &s, &err) == 0, "%s: %s", path, err.msg);
	return s;
}

/* Each range's rowid, as the walks keep their own columns. */
static int keep_rowid(void *ctx, struct prof_cursor *c, void *row, char **text, struct prof_error *err)
{
	(void)ctx, (void)text, (void)err;
	*(int64_t *)row = prof_cursor__int64(c, 3);
	return 0;
}

static int64_t rowid_of(const struct thread_ranges *tr, size_t row)
{
	return *(const int64_t *)thread_ranges__row(tr, row);
}

static int load(struct prof_store *s, struct thread_ranges *tr)
{
	struct prof_error err = { 0 };
	struct prof_cursor *c = NULL;
	int rc;

	*tr = (struct thread_ranges){ .row_size = sizeof(int64_t) };
	ck_assert_msg(prof_cursor__open(s, ranges_sql, &c, &err) == 0, "%s", err.msg);
	rc = thread_ranges__load(tr, c, keep_rowid, NULL, &err);
	prof_cursor__close(c);
	ck_assert_msg(rc >= 0, "%s", err.msg);
	return rc;
}

static const char innermost[] =
	"SELECT rowid FROM NVTX_EVENTS WHERE eventType = 59 AND globalTid = ?1 AND start <= ?2"
	" AND end > ?2 ORDER BY start DESC, end ASC, rowid ASC LIMIT 1";

/* Every call of table, in the table's order, against SQL's innermost range
 * open at its start on its thread (q: innermost). */
static void check_calls(struct prof_store *s, const char *table, struct thread_ranges *tr,
			struct prof_cursor *q, int64_t *in_range, int64_t *outside)
{
	char sql[160];
	struct prof_error err = { 0 };
	struct prof_cursor *calls = NULL;

	snprintf(sql, sizeof sql, "SELECT globalTid, start FROM %s WHERE globalTid IS NOT NULL ORDER BY rowid",
		 table);
	ck_assert_msg(prof_cursor__open(s, sql, &calls, &err) == 0, "%s", err.msg);
	thread_ranges__rewind(tr);
	while (prof_cursor__next(calls, &err) == 1) {
		int64_t tid = prof_cursor__int64(calls, 0), t = prof_cursor__int64(calls, 1), want = -1;
		const size_t *open;
		size_t n;
		int rc = thread_ranges__at(tr, tid, t, &open, &n, &err);

		ck_assert_msg(rc == 0 || rc == 1, "%s: call at %lld of thread %lld: %d", table, (long long)t,
			      (long long)tid, rc);
		prof_cursor__reset(q);
		prof_cursor__bind_int64(q, 1, tid);
		prof_cursor__bind_int64(q, 2, t);
		if (prof_cursor__next(q, &err) == 1)
			want = prof_cursor__int64(q, 0);
		ck_assert_int_eq(rc == 1 && n ? rowid_of(tr, open[n - 1]) : -1, want);
		*(want >= 0 ? in_range : outside) += 1;
	}
	prof_cursor__close(calls);
}

/* The innermost range of every call (the latest to start, the shorter of
 * two that start together, of two alike the first recorded), runtime and
 * driver, on a capture of 17 threads and thousands of ranges. */
START_TEST(thread_ranges_innermost_range_of_every_call_matches_sql)
{
	struct prof_store *s = open_path(testutil_data_path("corpus/jax_jit_mlp.sqlite"));
	struct thread_ranges tr;
	struct prof_error err = { 0 };
	struct prof_cursor *q = NULL;
	int64_t in_range = 0, outside = 0;

	ck_assert_int_eq(load(s, &tr), 1);
	ck_assert_int_gt(tr.nthreads, 1);
	ck_assert_msg(prof_cursor__open(s, innermost, &q, &err) == 0, "%s", err.msg);
	check_calls(s, "CUPTI_ACTIVITY_KIND_RUNTIME", &tr, q, &in_range, &outside);
	check_calls(s, "CUPTI_ACTIVITY_KIND_DRIVER", &tr, q, &in_range, &outside);
	ck_assert_int_gt(in_range, 1000);
	ck_assert_int_gt(outside, 0);
	prof_cursor__close(q);
	thread_ranges__exit(&tr);
	prof_store__close(s);
}
END_TEST

/* A call before its thread's last says so; a thread without ranges has
 * none; past the limit nothing is held, and a table of more rows is
 * known so without reading it. */
START_TEST(thread_ranges_tell_back_in_time_unknown_threads_and_too_many)
{
	struct prof_store *s = open_path(testutil_data_path("transformer_naive.sqlite"));
	struct thread_ranges tr;
	struct prof_error err = { 0 };
	struct prof_cursor *c = NULL;
	const size_t *open;
	size_t n;
	int64_t tid;

	ck_assert_int_eq(load(s, &tr), 1);
	ck_assert_int_gt(tr.n, 10);
	ck_assert_int_ge(tr.nthreads, 1);
	ck_assert_msg(prof_cursor__open(s, "SELECT globalTid FROM NVTX_EVENTS WHERE eventType = 59 LIMIT 1", &c,
					&err) == 0 && prof_cursor__next(c, &err) == 1, "%s", err.msg);
	tid = prof_cursor__int64(c, 0);
	prof_cursor__close(c);
	ck_assert_int_eq(thread_ranges__at(&tr, tid, INT64_MAX - 1, &open, &n, &err), 1);
	ck_assert_int_eq(n, 0); /* every range has ended */
	ck_assert_int_eq(thread_ranges__at(&tr, tid, 0, &open, &n, &err), THREAD_RANGES_BACK);
	thread_ranges__rewind(&tr);
	ck_assert_int_eq(thread_ranges__at(&tr, tid, 0, &open, &n, &err), 1);
	ck_assert_int_eq(thread_ranges__at(&tr, -12345, 0, &open, &n, &err), 0);
	thread_ranges__exit(&tr);

	ck_assert(thread_ranges__may_hold(s, "NVTX_EVENTS"));
	thread_ranges__set_max(10);
	/* told from the table's last rowid, and so loaded */
	ck_assert(!thread_ranges__may_hold(s, "NVTX_EVENTS"));
	ck_assert_int_eq(load(s, &tr), 0);
	ck_assert_int_eq(tr.nthreads, 0);
	ck_assert_ptr_null(tr.spans);
	thread_ranges__set_max(THREAD_RANGES_MAX);
	prof_store__close(s);
}
END_TEST

static void nvtx_groups(const char *path, struct sum_groups *gs, int64_t *graphs)
{
	struct prof_store *s = open_path(path);
	struct prof_error err = { 0 };

	ck_assert_msg(sum_nvtx_kernel_groups(s, gs, graphs, &err) == 0, "%s: %s", path, err.msg);
	prof_store__close(s);
}

static void text_eq(const char *a, const char *b, const char *what)
{
	ck_assert_msg((a == NULL) == (b == NULL) && (!a || !strcmp(a, b)), "%s: %s against %s", what,
		      a ? a : "NULL", b ? b : "NULL");
}

static int cmp_text(const char *a, const char *b)
{
	return !a || !b ? (a != NULL) - (b != NULL) : strcmp(a, b);
}

/* The groups come in the order the walk met them: compared by what they are. */
static int cmp_group(const void *pa, const void *pb)
{
	const struct sum_group *a = pa, *b = pb;
	int c = cmp_text(a->label, b->label);

	if (!c)
		c = cmp_text(a->label2, b->label2);
	if (!c)
		c = (a->key_is_null > b->key_is_null) - (a->key_is_null < b->key_is_null);
	return c ? c : (a->key > b->key) - (a->key < b->key);
}

/* nvtx_kern_sum's groups held against sorted (nothing held), every value. */
static int compare_nvtx(const char *path)
{
	struct sum_groups held = { 0 }, sorted = { 0 };
	int64_t held_graphs, sorted_graphs;
	size_t n;

	nvtx_groups(path, &held, &held_graphs);
	thread_ranges__set_max(0);
	nvtx_groups(path, &sorted, &sorted_graphs);
	thread_ranges__set_max(THREAD_RANGES_MAX);
	ck_assert_int_eq(held.n, sorted.n);
	ck_assert_int_eq(held.rows_left_out, sorted.rows_left_out);
	ck_assert_int_eq(held_graphs, sorted_graphs);
	if (held.n > 1) {
		qsort(held.g, held.n, sizeof *held.g, cmp_group);
		qsort(sorted.g, sorted.n, sizeof *sorted.g, cmp_group);
	}
	for (size_t i = 0; i < held.n; i++) {
		const struct sum_group *a = &held.g[i], *b = &sorted.g[i];

		text_eq(a->label, b->label, path);
		text_eq(a->label2, b->label2, path);
		ck_assert(a->key == b->key && a->key_is_null == b->key_is_null);
		ck_assert(a->n == b->n && a->total == b->total && a->min == b->min && a->max == b->max);
		ck_assert(a->mean == b->mean && a->median == b->median && a->stddev == b->stddev);
	}
	n = held.n;
	sum_groups__exit(&held);
	sum_groups__exit(&sorted);
	return (int)n;
}

static void collect(const char *path, const struct folded_options *o, struct folded_stacks *st)
{
	struct prof_store *s = open_path(path);
	struct prof_error err = { 0 };

	ck_assert_msg(folded__collect(s, o, st, &err) == 0, "%s: %s", path, err.msg);
	prof_store__close(s);
}

/* The folded stacks held against sorted: the stacks with a range in them. */
static size_t compare_folded(const char *path, const struct folded_options *o)
{
	struct folded_stacks held, sorted;
	size_t ranged = 0;

	collect(path, o, &held);
	thread_ranges__set_max(0);
	collect(path, o, &sorted);
	thread_ranges__set_max(THREAD_RANGES_MAX);
	ck_assert_int_eq(held.n, sorted.n);
	ck_assert_int_eq(held.total_ns, sorted.total_ns);
	ck_assert_int_eq(held.max_depth, sorted.max_depth);
	for (size_t i = 0; i < held.n; i++) {
		text_eq(held.v[i].frames, sorted.v[i].frames, path);
		ck_assert_int_eq(held.v[i].weight, sorted.v[i].weight);
		size_t frames = 1;

		for (const char *f = held.v[i].frames; *f; f++)
			frames += *f == ';';
		/* process;thread;API call;kernel under one range at least */
		ranged += frames > 4;
	}
	folded_stacks__exit(&held);
	folded_stacks__exit(&sorted);
	return ranged;
}

static size_t compare_all_folded(const char *path)
{
	struct folded_options gpu = { .weight = FOLDED_WEIGHT_GPU }, api = { .weight = FOLDED_WEIGHT_API };
	struct folded_options window = { .weight = FOLDED_WEIGHT_GPU,
					 .filter = { .has_from = true, .has_to = true,
						     .from_ns = 50000000, .to_ns = 400000000 } };

	size_t ranged = compare_folded(path, &gpu);

	ranged += compare_folded(path, &api);
	return ranged + compare_folded(path, &window);
}

START_TEST(nvtx_kern_sum_and_folded_stacks_held_match_sorted_on_real_captures)
{
	int with_groups = 0, with_ranged_stacks = 0;

	for (size_t i = 0; i < NCAPTURES; i++) {
		const char *path = testutil_data_path(captures[i]);

		with_groups += compare_nvtx(path) > 1;
		with_ranged_stacks += compare_all_folded(path) > 0;
	}
	ck_assert_int_ge(with_groups, 5);
	ck_assert_int_ge(with_ranged_stacks, 5);
}
END_TEST

/* One launching call of a thread with ranges moved before the call ahead
 * of it in the table: the held walks meet it out of order and start again
 * sorted, with nothing counted twice. (A capture with the calls' (thread,
 * start) index of older perfkits gives its calls in that order instead.) */
START_TEST(a_call_out_of_its_threads_order_walks_sorted)
{
	const char *path = testutil_tmp_path("thread_ranges_back.sqlite");

	testutil_copy_file(testutil_data_path("corpus/hf_gpt2_train.sqlite"), path);
	testutil_sqlite3(path, "UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET start = start - 20000000 WHERE rowid ="
			       " (SELECT rowid FROM CUPTI_ACTIVITY_KIND_RUNTIME WHERE globalTid IN (SELECT"
			       " globalTid FROM NVTX_EVENTS WHERE eventType = 59) AND correlationId IN (SELECT"
			       " correlationId FROM CUPTI_ACTIVITY_KIND_KERNEL) ORDER BY rowid LIMIT 1 OFFSET 400)");
	ck_assert_int_gt(compare_nvtx(path), 1);
	ck_assert_int_gt(compare_all_folded(path), 0);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("thread_ranges");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, thread_ranges_innermost_range_of_every_call_matches_sql);
	tcase_add_test(tc, thread_ranges_tell_back_in_time_unknown_threads_and_too_many);
	tcase_add_test(tc, nvtx_kern_sum_and_folded_stacks_held_match_sorted_on_real_captures);
	tcase_add_test(tc, a_call_out_of_its_threads_order_walks_sorted);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return testutil_run(suite());
}
