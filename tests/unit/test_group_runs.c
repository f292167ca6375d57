/* test_group_runs.c - the summaries' groups counted in memory
 * (model/group_runs.c) against the sorted statements they stand in for:
 * on real captures, every group's count, total, mean, median, min, max and
 * deviation, the runs a job's reduce reads, the rows left out and the
 * summaries' rows are the same to the last bit either way; NULL values and
 * labels keep SQL's order; a column of another type, or more distinct
 * values than allowed, goes to the sorted statements. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report_capture.h"
#include "model/call_census.h"
#include "model/call_runs.h"
#include "model/group_runs.h"
#include "model/groups.h"
#include "registry/registry.h"
#include "testutil.h"
#include "prof/error.h"
#include "prof/store.h"
#include "prof/tables.h"

static const char *const captures[] = {
	"transformer_naive.sqlite",  "ddp/ddp2_even.sqlite", "corpus/hf_gpt2_train.sqlite",
	"nsys/cloverleaf-cuda.sqlite", "um_faults.sqlite",   "rollout_naive_memory.sqlite",
};
#define NCAPTURES (sizeof captures / sizeof captures[0])

static struct prof_store *open_capture(const char *name)
{
	struct prof_store *s = NULL;
	struct prof_error err = { 0 };

	ck_assert_msg(prof_store__open(testutil_data_path(name), &s, &err) == 0, "%s: %s", name,
		      err.msg);
	return s;
}

static bool same_text(const char *a, const char *b)
{
	return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

/* Bit for bit, doubles included: both paths fold the same values in the
 * same order. */
static void assert_same_groups(const struct sum_groups *a, const struct sum_groups *b,
			       const char *what)
{
	ck_assert_msg(a->n == b->n, "%s: %zu groups counted, %zu sorted", what, a->n, b->n);
	ck_assert_int_eq(a->rows_left_out, b->rows_left_out);
	for (size_t i = 0; i < a->n; i++) {
		const struct sum_group *x = &a->g[i], *y = &b->g[i];

		ck_assert_msg(same_text(x->label, y->label) && same_text(x->label2, y->label2) &&
				      x->key_is_null == y->key_is_null && x->key == y->key,
			      "%s: group %zu is %s/%lld counted, %s/%lld sorted", what, i,
			      x->label ? x->label : "NULL", (long long)x->key,
			      y->label ? y->label : "NULL", (long long)y->key);
		ck_assert_msg(x->n == y->n && x->total == y->total && x->min == y->min &&
				      x->max == y->max,
			      "%s: group %zu: n %lld/%lld total %lld/%lld", what, i, (long long)x->n,
			      (long long)y->n, (long long)x->total, (long long)y->total);
		ck_assert_msg(memcmp(&x->mean, &y->mean, sizeof x->mean) == 0 &&
				      memcmp(&x->median, &y->median, sizeof x->median) == 0 &&
				      memcmp(&x->stddev, &y->stddev, sizeof x->stddev) == 0,
			      "%s: group %zu: mean %.17g/%.17g median %.17g/%.17g stddev %.17g/%.17g",
			      what, i, x->mean, y->mean, x->median, y->median, x->stddev, y->stddev);
	}
}

typedef int (*groups_fn)(struct prof_store *s, struct sum_groups *gs, struct prof_error *err);

static void collect_both(struct prof_store *s, groups_fn fn, struct sum_groups *counted,
			 struct sum_groups *sorted)
{
	struct prof_error err = { 0 };

	group_runs__set_max(GROUP_RUNS_MAX);
	ck_assert_msg(fn(s, counted, &err) == 0, "%s", err.msg);
	group_runs__set_max(0);
	ck_assert_msg(fn(s, sorted, &err) == 0, "%s", err.msg);
	group_runs__set_max(GROUP_RUNS_MAX);
}

START_TEST(test_kernel_and_nvtx_groups_agree)
{
	static const groups_fn fns[] = { sum_kernel_groups, sum_nvtx_groups };
	size_t groups = 0;

	for (size_t c = 0; c < NCAPTURES; c++) {
		struct prof_store *s = open_capture(captures[c]);

		for (size_t f = 0; f < 2; f++) {
			struct sum_groups a = { 0 }, b = { 0 };

			collect_both(s, fns[f], &a, &b);
			assert_same_groups(&a, &b, captures[c]);
			groups += a.n;
			sum_groups__exit(&a);
			sum_groups__exit(&b);
		}
		prof_store__close(s);
	}
	ck_assert_msg(groups > 100, "only %zu groups compared", groups);
}
END_TEST

/* A run as the walk hands it. */
struct seen_run {
	char *l1, *l2;
	bool key_is_null;
	int64_t key;
	struct sum_run run;
};

struct seen {
	struct seen_run *r;
	size_t n, cap;
};

static int see_run(void *ctx, const char *l1, const char *l2, bool key_is_null, int64_t key,
		   struct sum_run run)
{
	struct seen *s = ctx;

	if (s->n == s->cap) {
		s->cap = s->cap ? s->cap * 2 : 64;
		s->r = realloc(s->r, s->cap * sizeof *s->r);
		ck_assert_ptr_nonnull(s->r);
	}
	s->r[s->n++] = (struct seen_run){ l1 ? strdup(l1) : NULL, l2 ? strdup(l2) : NULL,
					  key_is_null, key, run };
	return 0;
}

static void seen_free(struct seen *s)
{
	for (size_t i = 0; i < s->n; i++) {
		free(s->r[i].l1);
		free(s->r[i].l2);
	}
	free(s->r);
}

typedef int (*runs_fn)(struct prof_store *s, struct sum_runs_walk *w, struct prof_error *err);

START_TEST(test_job_runs_agree)
{
	static const runs_fn fns[] = { sum_kernel_runs, sum_nvtx_runs };
	size_t runs = 0;

	for (size_t c = 0; c < NCAPTURES; c++) {
		struct prof_store *s = open_capture(captures[c]);

		for (size_t f = 0; f < 2; f++) {
			struct seen a = { 0 }, b = { 0 };
			struct sum_runs_walk wa = { see_run, &a, 0 }, wb = { see_run, &b, 0 };
			struct prof_error err = { 0 };

			ck_assert_msg(fns[f](s, &wa, &err) == 0, "%s", err.msg);
			group_runs__set_max(0);
			ck_assert_msg(fns[f](s, &wb, &err) == 0, "%s", err.msg);
			group_runs__set_max(GROUP_RUNS_MAX);
			ck_assert_msg(a.n == b.n, "%s: %zu runs counted, %zu sorted", captures[c], a.n,
				      b.n);
			ck_assert_int_eq(wa.rows_left_out, wb.rows_left_out);
			for (size_t i = 0; i < a.n; i++) {
				const struct seen_run *x = &a.r[i], *y = &b.r[i];

				ck_assert_msg(same_text(x->l1, y->l1) && same_text(x->l2, y->l2) &&
						      x->key_is_null == y->key_is_null &&
						      x->key == y->key && x->run.value == y->run.value &&
						      x->run.count == y->run.count,
					      "%s: run %zu differs", captures[c], i);
			}
			runs += a.n;
			seen_free(&a);
			seen_free(&b);
		}
		prof_store__close(s);
	}
	ck_assert_msg(runs > 1000, "only %zu runs compared", runs);
}
END_TEST

/* Every summary built on groups, as rows: the same cells either way. */
/* report's rows of a and b, cell for cell, doubles to the bit: the
 * rows compared. */
static size_t assert_same_report(struct cap_sink *a, struct cap_sink *b, const char *report, const char *what)
{
	const struct cap_report *ra = cap_report(a, report), *rb = cap_report(b, report);

	ck_assert_ptr_nonnull(ra);
	ck_assert_ptr_nonnull(rb);
	ck_assert_msg(ra->nrows == rb->nrows, "%s %s: %d rows, %d", what, report, ra->nrows, rb->nrows);
	ck_assert_int_eq(ra->nnotes, rb->nnotes);
	for (int n = 0; n < ra->nnotes; n++)
		ck_assert_int_eq(ra->note_count[n], rb->note_count[n]);
	for (int i = 0; i < ra->nrows * ra->ncols; i++) {
		const struct rpt_cell *x = &ra->cells[i], *y = &rb->cells[i];

		ck_assert_int_eq(x->is_null, y->is_null);
		if (rpt_type__is_text(ra->type[i % ra->ncols]))
			ck_assert_msg(same_text(x->s, y->s), "%s %s: cell %d: %s, %s", what, report, i, x->s,
				      y->s);
		else
			ck_assert_msg(x->i == y->i && memcmp(&x->d, &y->d, sizeof x->d) == 0,
				      "%s %s: cell %d differs", what, report, i);
	}
	return (size_t)ra->nrows;
}

START_TEST(test_summaries_agree)
{
	static const char *const reports[] = { "cuda_api_sum", "cuda_gpu_kern_sum", "nvtx_sum",
					       "cuda_gpu_mem_time_sum", "cuda_gpu_mem_size_sum" };
	size_t rows = 0;

	for (size_t c = 0; c < NCAPTURES; c++) {
		struct prof_store *s = open_capture(captures[c]);

		for (size_t r = 0; r < sizeof reports / sizeof reports[0]; r++) {
			struct cap_sink *a = cap_sink__new(), *b = cap_sink__new();
			struct prof_error err = { 0 };

			ck_assert_msg(registry__run(reports[r], s, &a->sink, &err) == 0, "%s", err.msg);
			group_runs__set_max(0);
			ck_assert_msg(registry__run(reports[r], s, &b->sink, &err) == 0, "%s", err.msg);
			group_runs__set_max(GROUP_RUNS_MAX);
			rows += assert_same_report(a, b, reports[r], captures[c]);
			a->sink.destroy(&a->sink);
			b->sink.destroy(&b->sink);
		}
		prof_store__close(s);
	}
	ck_assert_msg(rows > 100, "only %zu rows compared", rows);
}
END_TEST

/* A copy of a capture whose calls lost their spans, their name ids or
 * their strings (or whose string is NULL), and whose first call's name
 * came in a second version
 * ("cudaLaunchKernel_v7000": one row of the summary with the first). */
static const char *calls_changed(const char *name, int n)
{
	char file[64];

	snprintf(file, sizeof file, "call_runs_%d.sqlite", n);
	return testutil_changed_copy(name, file, "UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET end = start - 1 WHERE rowid % 29 = 0;"
			       "UPDATE OR IGNORE CUPTI_ACTIVITY_KIND_RUNTIME SET nameId = NULL WHERE rowid % 31 = 0;"
			       "UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET nameId = 987654321 WHERE rowid % 37 = 0;"
			       /* a table of strings that allows a NULL one */
			       "CREATE TABLE strings_before AS SELECT id, value FROM StringIds;"
			       "DROP TABLE StringIds;"
			       "CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT);"
			       "INSERT INTO StringIds SELECT id, value FROM strings_before;"
			       "DROP TABLE strings_before;"
			       "INSERT INTO StringIds (id, value) VALUES (987654320, NULL);"
			       "UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET nameId = 987654320 WHERE rowid % 41 = 0;"
			       "INSERT INTO StringIds (id, value) SELECT (SELECT max(id) + 1 FROM StringIds),"
			       " value || '_v7000' FROM StringIds WHERE id = (SELECT nameId FROM"
			       " CUPTI_ACTIVITY_KIND_RUNTIME ORDER BY rowid LIMIT 1);"
			       "UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET nameId = (SELECT max(id) FROM StringIds)"
			       " WHERE rowid % 3 = 0 AND nameId = (SELECT nameId FROM CUPTI_ACTIVITY_KIND_RUNTIME"
			       " ORDER BY rowid LIMIT 1);");
}

/* cuda_api_sum of s: its rows into a new sink; whether the calls' census
 * counted what it read (call_runs.h). */
static struct cap_sink *api_sum(struct prof_store *s, bool *counted)
{
	struct cap_sink *out = cap_sink__new();
	struct prof_error err = { 0 };
	const struct group_runs *runs = NULL;

	ck_assert_msg(registry__run("cuda_api_sum", s, &out->sink, &err) == 0, "%s", err.msg);
	*counted = sum_call_runs__take(s, PROF_T_RUNTIME, &runs) == 1;
	return out;
}

/* The API summary from the calls as the census walk counted them, where
 * it was asked to before, is the summary of the calls read again, to the
 * last bit: on the captures and on copies with calls of a bad span, of no
 * name id (where the table allows none), of a name id of no string and of
 * two versions of one name; a capture whose calls are recorded twice
 * (nsys's backtrace rows) is read again, and so are one whose census was
 * not asked to count and one whose calls a view narrows. */
START_TEST(test_api_sum_of_the_census_agrees)
{
	size_t rows = 0, counted_n = 0, n = 0;
	char *paths[2 * NCAPTURES + 1];

	/* the test's paths are of one buffer: each kept */
	for (size_t c = 0; c < NCAPTURES; c++) {
		paths[n++] = strdup(testutil_data_path(captures[c]));
		paths[n++] = strdup(calls_changed(captures[c], (int)c));
	}
	/* a second row of some calls, as nsys's backtraces make */
	paths[n++] = strdup(testutil_changed_copy("transformer_naive.sqlite", "call_runs_twice.sqlite",
						  "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME (start, end, eventClass,"
						  " globalTid, correlationId, nameId, returnValue, callchainId) SELECT"
						  " start + 1, end + 1, eventClass, globalTid, correlationId, nameId,"
						  " returnValue, callchainId FROM CUPTI_ACTIVITY_KIND_RUNTIME WHERE"
						  " rowid % 4 = 0;"));
	for (size_t c = 0; c < n; c++) {
		struct prof_store *a = NULL, *b = NULL;
		struct prof_error err = { 0 };
		struct cap_sink *ra, *rb;
		bool counted, read_again;

		ck_assert_msg(prof_store__open(paths[c], &a, &err) == 0, "%s: %s", paths[c], err.msg);
		ck_assert_msg(prof_store__open(paths[c], &b, &err) == 0, "%s: %s", paths[c], err.msg);
		sum_call_census__want(a, CALL_CENSUS_RUNS);
		ra = api_sum(a, &counted);
		rb = api_sum(b, &read_again);
		ck_assert_msg(!read_again, "%s: counted unasked", paths[c]);
		counted_n += counted;
		rows += assert_same_report(ra, rb, "cuda_api_sum", paths[c]);
		ra->sink.destroy(&ra->sink);
		rb->sink.destroy(&rb->sink);
		/* a view that narrows the calls (--rank's): its own read */
		ck_assert_int_eq(prof_store__restrict(a, PROF_T_RUNTIME, "rowid % 2 = 0", &err), 0);
		ck_assert_int_eq(prof_store__restrict(b, PROF_T_RUNTIME, "rowid % 2 = 0", &err), 0);
		ra = api_sum(a, &counted);
		rb = api_sum(b, &read_again);
		ck_assert(!counted && !read_again);
		rows += assert_same_report(ra, rb, "cuda_api_sum", paths[c]);
		ra->sink.destroy(&ra->sink);
		rb->sink.destroy(&rb->sink);
		prof_store__close(a);
		prof_store__close(b);
		free(paths[c]);
	}
	/* counted on each (the twice-recorded calls' summary read them again) */
	ck_assert_uint_eq(counted_n, n);
	ck_assert_msg(rows > 100, "only %zu rows compared", rows);
}
END_TEST

/* NULL values, NULL and shared-prefix labels and NULL keys, made of a real
 * capture's kernels: SQL puts NULL first and a prefix before its longer
 * text; the counted groups must keep that order and those values. */
START_TEST(test_nulls_and_labels_keep_sql_order)
{
	static const char src[] =
		"SELECT CASE WHEN k.rowid % 7 = 0 THEN NULL ELSE substr(coalesce(s.value, ''), 1,"
		" 1 + k.rowid % 3) END AS l1, CASE WHEN k.rowid % 5 = 0 THEN NULL ELSE 'x' END AS l2,"
		" CASE WHEN k.rowid % 11 = 0 THEN NULL ELSE k.streamId END AS k,"
		" CASE WHEN k.rowid % 13 = 0 THEN NULL ELSE (k.end - k.start) - 3000 END AS v,"
		" k.rowid % 17 = 0 AS bad FROM CUPTI_ACTIVITY_KIND_KERNEL AS k"
		" LEFT JOIN StringIds AS s ON s.id = k.shortName";
	struct prof_store *s = open_capture("transformer_naive.sqlite");
	struct sum_groups a = { 0 }, b = { 0 };
	struct prof_error err = { 0 };
	bool null_label = false, null_key = false;

	ck_assert_msg(sum_groups__collect(&a, s, src, &err) == 0, "%s", err.msg);
	group_runs__set_max(0);
	ck_assert_msg(sum_groups__collect(&b, s, src, &err) == 0, "%s", err.msg);
	group_runs__set_max(GROUP_RUNS_MAX);
	assert_same_groups(&a, &b, "nulls");
	ck_assert_int_gt(a.rows_left_out, 0);
	for (size_t i = 0; i < a.n; i++) {
		null_label |= a.g[i].label == NULL;
		null_key |= a.g[i].key_is_null;
	}
	ck_assert(null_label && null_key);
	ck_assert_uint_gt(a.n, 20);
	sum_groups__exit(&a);
	sum_groups__exit(&b);
	prof_store__close(s);
}
END_TEST

/* A value SQL orders as a number of another type, or more distinct pairs
 * than allowed: not counted, and the sorted statements answer. */
START_TEST(test_other_types_and_too_many_pairs_are_not_counted)
{
	static const char reals[] = "SELECT NULL AS l1, NULL AS l2, 0 AS k, (end - start) * 1.5 AS v,"
				    " 0 AS bad FROM CUPTI_ACTIVITY_KIND_KERNEL";
	static const char ints[] = "SELECT NULL AS l1, NULL AS l2, 0 AS k, end - start AS v,"
				   " 0 AS bad FROM CUPTI_ACTIVITY_KIND_KERNEL";
	struct prof_store *s = open_capture("transformer_naive.sqlite");
	struct group_runs *r = (struct group_runs *)1;
	struct sum_groups a = { 0 }, b = { 0 };
	struct prof_error err = { 0 };

	ck_assert_int_eq(group_runs__count(s, reals, &r, &err), 0);
	ck_assert_ptr_null(r);
	ck_assert_int_eq(group_runs__count(s, ints, &r, &err), 1);
	ck_assert_ptr_nonnull(r);
	group_runs__free(r);
	group_runs__set_max(3);
	ck_assert_int_eq(group_runs__count(s, ints, &r, &err), 0);
	ck_assert_ptr_null(r);
	ck_assert_msg(sum_groups__collect(&a, s, ints, &err) == 0, "%s", err.msg);
	group_runs__set_max(GROUP_RUNS_MAX);
	ck_assert_msg(sum_groups__collect(&b, s, ints, &err) == 0, "%s", err.msg);
	assert_same_groups(&a, &b, "limit");
	ck_assert_uint_eq(a.n, 1);
	ck_assert_int_gt(a.g[0].n, 100);
	sum_groups__exit(&a);
	sum_groups__exit(&b);
	prof_store__close(s);
}
END_TEST

int main(void)
{
	Suite *suite = suite_create("group_runs");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_kernel_and_nvtx_groups_agree);
	tcase_add_test(tc, test_job_runs_agree);
	tcase_add_test(tc, test_summaries_agree);
	tcase_add_test(tc, test_api_sum_of_the_census_agrees);
	tcase_add_test(tc, test_nulls_and_labels_keep_sql_order);
	tcase_add_test(tc, test_other_types_and_too_many_pairs_are_not_counted);
	suite_add_tcase(suite, tc);
	return testutil_run(suite);
}
