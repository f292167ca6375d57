/* test_call_pairs.c - each (thread, name id) of the calls once
 * (sum_call_pairs__load) is what SQL's DISTINCT over the runtime's and the
 * driver's calls gives, with whether one of the pair's calls had a real
 * span, and the threads that made a call: on real captures (perfkit's, an
 * nsys export, a DDP job) and on a copy where every call of some names
 * lost its span, some calls their thread, and the first of a name's two
 * calls in a row its span; read once for the file's
 * connections, each caller a copy of its own; for the rows a rank's
 * scope shows; and not at all where a thread is text. */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "model/call_pairs.h"
#include "model/ranks.h"
#include "prof/store.h"
#include "prof/tables.h"
#include "testutil.h"

/* Every call of the two tables, as the views show them. */
#define CALLS                                                                                         \
	"(SELECT globalTid, nameId, start, end FROM " PROF_T_RUNTIME " UNION ALL SELECT globalTid, nameId," \
	" start, end FROM " PROF_T_DRIVER ")"
#define GOOD "((end >= start AND end - start <= 9223372036854775807) IS 1)"

static struct prof_store *open_store(const char *path)
{
	struct prof_error err = { 0 };
	struct prof_store *s = NULL;

	ck_assert_msg(prof_store__open(path, &s, &err) == 0, "%s: %s", path, err.msg);
	return s;
}

static const char *const both[2] = { PROF_T_RUNTIME, PROF_T_DRIVER };

static struct call_pairs *load(struct prof_store *s)
{
	struct prof_error err = { 0 };
	struct call_pairs *p = NULL;

	ck_assert_msg(sum_call_pairs__load(s, both, &p, &err) == 1, "%s", err.msg);
	return p;
}

static const struct call_pair *find(const struct call_pairs *p, bool tid_null, int64_t tid, int64_t name)
{
	for (size_t i = 0; i < p->cap; i++)
		if (p->v[i].used && p->v[i].tid_null == tid_null && (tid_null || p->v[i].tid == tid) &&
		    p->v[i].name == name)
			return &p->v[i];
	return NULL;
}

/* p against SQL on s's views: every pair and its flag, every thread;
 * how many pairs had no real span. */
static int check_pairs(struct prof_store *s, const struct call_pairs *p, const char *what)
{
	struct prof_error err = { 0 };
	struct prof_cursor *c;
	size_t n = 0, ntids = 0;
	int bad_only = 0, rc;

	ck_assert_msg(prof_cursor__open(s, "SELECT globalTid, nameId, max(" GOOD ") FROM " CALLS
				       " WHERE nameId IS NOT NULL GROUP BY globalTid, nameId", &c, &err) == 0,
		      "%s", err.msg);
	while ((rc = prof_cursor__next(c, &err)) == 1) {
		bool tid_null = prof_cursor__is_null(c, 0);
		const struct call_pair *q = find(p, tid_null, prof_cursor__int64(c, 0), prof_cursor__int64(c, 1));

		ck_assert_msg(q, "%s: thread %lld name %lld missing", what, (long long)prof_cursor__int64(c, 0),
			      (long long)prof_cursor__int64(c, 1));
		ck_assert_msg(q->good == (prof_cursor__int64(c, 2) == 1), "%s: thread %lld name %lld good %d", what,
			      (long long)q->tid, (long long)q->name, q->good);
		bad_only += !q->good;
		n++;
	}
	ck_assert_int_eq(rc, 0);
	prof_cursor__close(c);
	ck_assert_msg(n == p->n, "%s: %zu pairs, SQL's %zu", what, p->n, n);
	ck_assert_msg(prof_cursor__open(s, "SELECT DISTINCT globalTid FROM " CALLS " WHERE globalTid IS NOT NULL"
				       " ORDER BY 1", &c, &err) == 0, "%s", err.msg);
	while ((rc = prof_cursor__next(c, &err)) == 1) {
		ck_assert_msg(ntids < p->ntids, "%s: more threads than %zu", what, p->ntids);
		ck_assert_int_eq(p->tids[ntids++], prof_cursor__int64(c, 0));
	}
	prof_cursor__close(c);
	ck_assert_msg(ntids == p->ntids, "%s: %zu threads, SQL's %zu", what, p->ntids, ntids);
	return bad_only;
}

static int check_capture(const char *path)
{
	struct prof_store *s = open_store(path);
	struct call_pairs *p = load(s);
	int bad_only;

	ck_assert_int_gt(p->n, 5);
	bad_only = check_pairs(s, p, path);
	sum_call_pairs__delete(p);
	prof_store__close(s);
	return bad_only;
}

START_TEST(the_pairs_are_sqls_distinct)
{
	char path[4096];
	int damaged;

	ck_assert_int_eq(check_capture(testutil_data_path("transformer_naive.sqlite")), 0);
	ck_assert_int_eq(check_capture(testutil_data_path("ddp/ddp2_even.sqlite")), 0);
	ck_assert_int_eq(check_capture(testutil_data_path("nsys/cloverleaf-cuda.sqlite")), 0);
	ck_assert_int_eq(check_capture(testutil_data_path("corpus/timm_resnet_dataloader.sqlite")), 0);
	/* every call of the two most frequent names of the runtime loses its
	 * span one way or another; some calls lose their thread */
	snprintf(path, sizeof path, "%s",
		 testutil_changed_copy("ddp/ddp2_even.sqlite", "call_pairs_damaged.sqlite",
			 "UPDATE " PROF_T_RUNTIME " SET end = start - 1 WHERE nameId = (SELECT nameId FROM "
			 PROF_T_RUNTIME " GROUP BY nameId ORDER BY count(*) DESC LIMIT 1);"
			 " UPDATE " PROF_T_RUNTIME " SET end = NULL WHERE nameId = (SELECT nameId FROM "
			 PROF_T_RUNTIME " GROUP BY nameId ORDER BY count(*) DESC LIMIT 1 OFFSET 1);"
			 " UPDATE " PROF_T_DRIVER " SET start = -9223372036854775000, end = 9223372036854775000"
			 " WHERE rowid IN (3, 4);"
			 " UPDATE " PROF_T_RUNTIME " SET globalTid = NULL WHERE rowid % 7 = 0;"
			 /* a name of two calls in a row, the first of no real span */
			 " UPDATE " PROF_T_RUNTIME " SET nameId = 987654321, globalTid = (SELECT globalTid FROM "
			 PROF_T_RUNTIME " WHERE rowid = 100) WHERE rowid IN (100, 101);"
			 " UPDATE " PROF_T_RUNTIME " SET end = start - 1 WHERE rowid = 100"));
	damaged = check_capture(path);
	ck_assert_int_gt(damaged, 0);
}
END_TEST

START_TEST(read_once_a_file_each_a_copy_and_a_scope_its_own)
{
	struct prof_error err = { 0 };
	struct prof_store *s = open_store(testutil_data_path("ddp/ddp2_even.sqlite")), *again;
	struct call_pairs *first = load(s), *taken;
	struct sum_ranks r;
	char path[4096];

	ck_assert_msg(prof_store__reopen(s, &again, &err) == 0, "%s", err.msg);
	taken = load(again);
	ck_assert_ptr_ne(taken, first);
	ck_assert_ptr_ne(taken->v, first->v);
	ck_assert_int_eq(taken->n, first->n);
	ck_assert_int_eq(taken->ntids, first->ntids);
	ck_assert_int_eq(memcmp(taken->v, first->v, sizeof *first->v * first->cap), 0);
	sum_call_pairs__delete(taken);
	prof_store__close(again);
	/* each rank's scope: its own threads' pairs, not the whole file's */
	ck_assert_msg(sum_ranks__load(s, &r, &err) == 0, "%s", err.msg);
	ck_assert_int_ge(r.n, 2);
	for (int i = 0; i < r.n; i++) {
		struct call_pairs *p;

		ck_assert_msg(sum_ranks__scope(s, r.p[i].global_pid, &err) == 0, "%s", err.msg);
		p = load(s);
		ck_assert_int_lt(p->ntids, first->ntids);
		check_pairs(s, p, "a rank's scope");
		sum_call_pairs__delete(p);
		ck_assert_int_eq(sum_ranks__unscope(s, &err), 0);
	}
	sum_ranks__exit(&r);
	sum_call_pairs__delete(first);
	prof_store__close(s);
	/* a thread of text: SQL compares it its own way */
	snprintf(path, sizeof path, "%s",
		 testutil_changed_copy("transformer_naive.sqlite", "call_pairs_text.sqlite",
			 "UPDATE " PROF_T_RUNTIME " SET globalTid = 'main' WHERE rowid = 20"));
	s = open_store(path);
	first = NULL;
	ck_assert_int_eq(sum_call_pairs__load(s, both, &first, &err), 0);
	ck_assert_ptr_null(first);
	/* and a second connection is told the same */
	ck_assert_msg(prof_store__reopen(s, &again, &err) == 0, "%s", err.msg);
	ck_assert_int_eq(sum_call_pairs__load(again, both, &first, &err), 0);
	prof_store__close(again);
	prof_store__close(s);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("call_pairs");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, the_pairs_are_sqls_distinct);
	tcase_add_test(tc, read_once_a_file_each_a_copy_and_a_scope_its_own);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return testutil_run(suite());
}
