/* test_launch_slots.c - the loop search's launches counted between the
 * NVTX instances' boundaries (model/launch_slots.c) against SQL asking
 * each instance for its launches: counts, GPU time and the latest end of
 * the launched work, on real captures and on copies where calls start on
 * the ranges' boundaries; and the loop every fixture's search finds, the
 * same with the slots as with the SQL counting every launch, and the same
 * where the launches are found from the work's side through diagnose's
 * table of calls (sum_loop_options.calls), also on copies where every
 * launching call has a bad span (which that table leaves out). Each
 * search on a connection of its own: one file's connections share the
 * loop found. */
#include <check.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/core/scope.h"
#include "model/launch_slots.h"
#include "model/window.h"
#include "testutil.h"
#include "prof/error.h"
#include "prof/store.h"
#include "prof/tables.h"

static const char *const captures[] = {
	"transformer_naive.sqlite", "corpus/timm_resnet_dataloader.sqlite", "corpus/hf_gpt2_train.sqlite",
	"corpus/jax_jit_mlp.sqlite", "ddp/ddp2_even.sqlite",
};
#define NCAPTURES (sizeof captures / sizeof captures[0])

/* Every NVTX range an instance, its process from its thread. */
#define INSTANCES                                                                          \
	"SELECT globalTid >> 24 AS p, start, end FROM " PROF_T_NVTX " WHERE eventType IN (59, 60)" \
	" AND end > start AND globalTid IS NOT NULL"
/* The kernels and their runtime calls, as window_nvtx.c's launches_sql
 * gives them: (p, t, e, gpu) for the calls in [lo, hi) of span. */
#define LAUNCHES                                                                                 \
	"SELECT a.globalTid >> 24 AS p, a.start AS t, g.end AS e,"                                  \
	" max(coalesce(g.end - g.start, 0), 0) AS gpu FROM " PROF_T_RUNTIME " a JOIN " PROF_T_KERNEL \
	" g ON g.correlationId = a.correlationId WHERE a.globalTid IS NOT NULL"                     \
	" AND a.start >= (SELECT lo FROM span) AND a.start < (SELECT hi FROM span)"

static struct prof_store *open_path(const char *path)
{
	struct prof_store *s = NULL;
	struct prof_error err = { 0 };

	ck_assert_msg(prof_store__open(path, &s, &err) == 0, "%s: %s", path, err.msg);
	return s;
}

/* A copy where some calls start where a range of their thread starts or
 * ends (launches on boundaries) and some kernels have no end. */
static const char *cut(const char *name, int n)
{
	char file[64];
	const char *path;

	snprintf(file, sizeof file, "launch_slots_%d.sqlite", n);
	path = testutil_tmp_path(file);
	testutil_copy_file(testutil_data_path(name), path);
	testutil_sqlite3(path, "UPDATE CUPTI_ACTIVITY_KIND_RUNTIME AS a SET start = coalesce((SELECT n.start"
			       " FROM NVTX_EVENTS n WHERE n.globalTid = a.globalTid AND n.start <= a.start"
			       " AND n.eventType IN (59, 60) ORDER BY n.start DESC LIMIT 1), start) WHERE rowid % 5 = 0;"
			       "UPDATE CUPTI_ACTIVITY_KIND_RUNTIME AS a SET start = coalesce((SELECT n.end"
			       " FROM NVTX_EVENTS n WHERE n.globalTid = a.globalTid AND n.start <= a.start"
			       " AND n.eventType IN (59, 60) ORDER BY n.start DESC LIMIT 1), start) WHERE rowid % 7 = 1;"
			       "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET end = NULL WHERE rowid % 29 = 0;");
	return path;
}

static int64_t ask(struct prof_store *s, const char *sql, const int64_t *binds, int nbinds, bool *null)
{
	struct prof_cursor *c = NULL;
	struct prof_error err = { 0 };
	int64_t v;

	ck_assert_msg(prof_cursor__open(s, sql, &c, &err) == 0, "%s", err.msg);
	for (int i = 0; i < nbinds; i++)
		prof_cursor__bind_int64(c, i + 1, binds[i]);
	ck_assert_int_eq(prof_cursor__next(c, &err), 1);
	*null = prof_cursor__is_null(c, 0);
	v = prof_cursor__int64(c, 0);
	prof_cursor__close(c);
	return v;
}

/* Each instance: its launches from the slots' table and from the launches
 * themselves, and the latest end of their work; *ties: launches that
 * start where a boundary is. */
static void compare(struct prof_store *s, const char *what, int *instances, int *ties)
{
	struct launch_slots *ls = NULL;
	struct prof_error err = { 0 };
	struct prof_cursor *c = NULL;
	int64_t lo, hi;
	bool null;

	ck_assert_msg(launch_slots__count(s, INSTANCES, NULL, LAUNCHES, &ls, &err) == 0, "%s: %s", what, err.msg);
	ck_assert_msg(ls != NULL, "%s: no slots", what);
	lo = ask(s, "SELECT min(start) FROM (" INSTANCES ")", NULL, 0, &null);
	hi = ask(s, "SELECT max(end) FROM (" INSTANCES ")", NULL, 0, &null);
	*ties += (int)ask(s, "WITH span AS (SELECT ?1 AS lo, ?2 AS hi) SELECT count(*) FROM (" LAUNCHES ") l"
			  " WHERE EXISTS (SELECT 1 FROM (" INSTANCES ") i WHERE i.p = l.p AND (i.start = l.t"
			  " OR i.end = l.t))", (int64_t[]){ lo, hi }, 2, &null);
	ck_assert_msg(prof_cursor__open(s, INSTANCES, &c, &err) == 0, "%s", err.msg);
	while (prof_cursor__next(c, &err) == 1) {
		int64_t b[5] = { lo, hi, prof_cursor__int64(c, 0), prof_cursor__int64(c, 1), prof_cursor__int64(c, 2) };
		int64_t end = 0, want_end;
		bool any, want_null;

		ck_assert_int_eq(ask(s, "SELECT coalesce(sum(n), 0) FROM temp." LAUNCH_SLOTS_TABLE
				     " WHERE p = ?3 AND t >= ?4 AND t < ?5 AND ?1 IS NOT NULL AND ?2 IS NOT NULL",
				     b, 5, &null),
				 ask(s, "WITH span AS (SELECT ?1 AS lo, ?2 AS hi) SELECT count(*) FROM (" LAUNCHES
				     ") WHERE p = ?3 AND t >= ?4 AND t < ?5", b, 5, &null));
		ck_assert_int_eq(ask(s, "SELECT coalesce(sum(g), 0) FROM temp." LAUNCH_SLOTS_TABLE
				     " WHERE p = ?3 AND t >= ?4 AND t < ?5 AND ?1 IS NOT NULL AND ?2 IS NOT NULL",
				     b, 5, &null),
				 ask(s, "WITH span AS (SELECT ?1 AS lo, ?2 AS hi) SELECT coalesce(sum(gpu), 0) FROM ("
				     LAUNCHES ") WHERE p = ?3 AND t >= ?4 AND t < ?5", b, 5, &null));
		/* every process's work, as the window's extension asks */
		want_end = ask(s, "WITH span AS (SELECT ?1 AS lo, ?2 AS hi) SELECT max(e) FROM (" LAUNCHES
			       ") WHERE t >= ?4 AND t < ?5 AND ?3 IS NOT NULL", b, 5, &want_null);
		ck_assert_msg(launch_slots__max_end(ls, b[3], b[4], &end, &any), "%s: a boundary unknown", what);
		ck_assert_int_eq(any, !want_null);
		if (any)
			ck_assert_int_eq(end, want_end);
		(*instances)++;
	}
	prof_cursor__close(c);
	/* no boundary at either end: the caller asks the SQL */
	ck_assert(!launch_slots__max_end(ls, lo - 1, hi, &(int64_t){ 0 }, &(bool){ false }));
	ck_assert(!launch_slots__max_end(ls, lo, hi + 1, &(int64_t){ 0 }, &(bool){ false }));
	launch_slots__delete(ls, s);
	ck_assert_int_eq(ask(s, "SELECT count(*) FROM temp.sqlite_master WHERE name = '" LAUNCH_SLOTS_TABLE "'",
			     NULL, 0, &null), 0);
}

START_TEST(test_slots_sum_as_the_launches_do)
{
	int instances = 0, ties = 0;

	for (size_t i = 0; i < NCAPTURES; i++) {
		struct prof_store *s = open_path(testutil_data_path(captures[i]));

		compare(s, captures[i], &instances, &ties);
		prof_store__close(s);
		s = open_path(cut(captures[i], (int)i));
		compare(s, captures[i], &instances, &ties);
		prof_store__close(s);
	}
	ck_assert_int_ge(instances, 1000);
	/* the changed copies put launches on boundaries */
	ck_assert_int_ge(ties, 10);
}
END_TEST

START_TEST(test_too_many_instances_are_left_to_sql)
{
	struct prof_store *s = open_path(testutil_data_path(captures[0]));
	struct launch_slots *ls = NULL;
	struct prof_error err = { 0 };
	bool null;

	launch_slots__set_max_instances(10);
	ck_assert_int_eq(launch_slots__count(s, INSTANCES, NULL, LAUNCHES, &ls, &err), 0);
	launch_slots__set_max_instances(LAUNCH_SLOTS_MAX_INSTANCES);
	ck_assert(ls == NULL);
	ck_assert_int_eq(ask(s, "SELECT count(*) FROM temp.sqlite_master WHERE name = '" LAUNCH_SLOTS_TABLE "'",
			     NULL, 0, &null), 0);
	prof_store__close(s);
}
END_TEST

/* The loop path's search finds, on a connection of its own: through
 * diagnose's table of calls when with_calls, counting every launch in SQL
 * when max_instances is 0. -1 when the file is no capture. */
static int search(const char *path, bool with_calls, int64_t max_instances, struct sum_window *w)
{
	struct sum_loop_options o;
	struct prof_error err = { 0 };
	struct prof_store *s = NULL;
	struct diag_scope scope = { 0 };

	if (prof_store__open(path, &s, &err))
		return -1;
	sum_loop_options__init(&o);
	if (with_calls) {
		scope.store = s;
		ck_assert_msg(diag_scope__api_view(&scope, &err) == 0, "%s: %s", path, err.msg);
		o.calls = scope.has_api_calls ? DIAG_API_CALLS : NULL;
	}
	memset(w, 0, sizeof *w);
	launch_slots__set_max_instances(max_instances);
	ck_assert_msg(sum_window__find(s, &o, w, &err) == 0, "%s: %s", path, err.msg);
	launch_slots__set_max_instances(LAUNCH_SLOTS_MAX_INSTANCES);
	prof_store__close(s);
	return 0;
}

/* The loop of the NVTX range name asked for (sum_window__find_marked),
 * counting with the slots or in SQL as search does. */
static void search_marked(const char *path, const char *name, int64_t max_instances, struct sum_window *w)
{
	struct sum_loop_options o;
	struct prof_error err = { 0 };
	struct prof_store *s = open_path(path);
	struct sum_window like = { 0 };

	sum_loop_options__init(&o);
	like.mark = SUM_LOOP_NVTX;
	snprintf(like.mark_name, sizeof like.mark_name, "%s", name);
	memset(w, 0, sizeof *w);
	launch_slots__set_max_instances(max_instances);
	ck_assert_msg(sum_window__find_marked(s, &o, &like, w, &err) == 0, "%s: %s", path, err.msg);
	launch_slots__set_max_instances(LAUNCH_SLOTS_MAX_INSTANCES);
	prof_store__close(s);
}

static void assert_same_window(const char *path, const struct sum_window *a, const struct sum_window *b)
{
	ck_assert_msg(memcmp(a, b, sizeof *a) == 0, "%s: %s [%lld, %lld) x %d against %s [%lld, %lld) x %d", path,
		      a->source, (long long)a->start_ns, (long long)a->end_ns, a->iterations, b->source,
		      (long long)b->start_ns, (long long)b->end_ns, b->iterations);
}

/* The window of every fixture's loop search: with the slots, without,
 * and through the calls table. */
static void each_fixture(const char *dir, int *searched, int *nvtx)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	ck_assert_msg(d != NULL, "%s", dir);
	while ((e = readdir(d))) {
		char path[4096];
		size_t len = strlen(e->d_name);

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
		if (len > 7 && !strcmp(e->d_name + len - 7, ".sqlite")) {
			struct sum_window slots, sql, calls;

			if (search(path, false, LAUNCH_SLOTS_MAX_INSTANCES, &slots))
				continue;
			ck_assert_int_eq(search(path, false, 0, &sql), 0);
			ck_assert_int_eq(search(path, true, LAUNCH_SLOTS_MAX_INSTANCES, &calls), 0);
			assert_same_window(path, &slots, &sql);
			assert_same_window(path, &slots, &calls);
			(*searched)++;
			*nvtx += slots.mark == SUM_LOOP_NVTX;
		} else if (!strchr(e->d_name, '.')) {
			each_fixture(path, searched, nvtx);
		}
	}
	closedir(d);
}

/* Copies where every call that launched a kernel has a bad span: the
 * calls table leaves them out, the search finds them all the same. */
START_TEST(test_launching_calls_with_bad_spans_still_launch)
{
	static const char *const names[] = { "transformer_naive.sqlite", "ddp/ddp2_even.sqlite" };

	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
		struct sum_window plain, calls;
		struct prof_store *s;
		char file[64];
		const char *path;
		bool null;

		snprintf(file, sizeof file, "launch_bad_spans_%zu.sqlite", i);
		path = testutil_tmp_path(file);
		testutil_copy_file(testutil_data_path(names[i]), path);
		testutil_sqlite3(path, "UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET end = start - 1 WHERE correlationId IN"
				       " (SELECT correlationId FROM CUPTI_ACTIVITY_KIND_KERNEL);");
		s = open_path(path);
		ck_assert_int_gt(ask(s, "SELECT count(*) FROM " PROF_T_RUNTIME " WHERE end < start", NULL, 0, &null),
				 100);
		prof_store__close(s);
		ck_assert_int_eq(search(path, false, LAUNCH_SLOTS_MAX_INSTANCES, &plain), 0);
		ck_assert_int_eq(search(path, true, LAUNCH_SLOTS_MAX_INSTANCES, &calls), 0);
		/* the loop is the NVTX one, which only launches make the loop */
		ck_assert_int_eq(plain.mark, SUM_LOOP_NVTX);
		assert_same_window(path, &plain, &calls);
	}
}
END_TEST

/* Each repeated range name's loop, asked for by name as diff asks for
 * the other capture's: the same with the slots (whose count holds the
 * instances of that name) as counting in SQL, and of that name. */
START_TEST(test_a_marked_loop_is_of_its_name)
{
	int names = 0, other = 0;

	for (size_t i = 0; i < NCAPTURES; i++) {
		const char *path = testutil_data_path(captures[i]);
		struct prof_store *s = open_path(path);
		struct prof_error err = { 0 };
		struct prof_cursor *c = NULL;
		char found[8][256];
		int n = 0;

		ck_assert_int_eq(prof_cursor__open(s, "SELECT coalesce(t.value, n.text) AS name FROM " PROF_T_NVTX " n"
					  " LEFT JOIN " PROF_T_STRINGS " t ON t.id = n.textId WHERE n.eventType IN (59, 60)"
					  " AND n.end > n.start GROUP BY name HAVING count(*) >= 4 ORDER BY name LIMIT 8",
					  &c, &err), 0);
		while (n < 8 && prof_cursor__next(c, &err) == 1)
			if (prof_cursor__text(c, 0))
				snprintf(found[n++], sizeof found[0], "%s", prof_cursor__text(c, 0));
		prof_cursor__close(c);
		prof_store__close(s);
		for (int k = 0; k < n; k++) {
			struct sum_window slots, sql, plain;

			search_marked(path, found[k], LAUNCH_SLOTS_MAX_INSTANCES, &slots);
			search_marked(path, found[k], 0, &sql);
			assert_same_window(path, &slots, &sql);
			if (slots.mark != SUM_LOOP_NVTX)
				continue;
			names++;
			ck_assert_msg(strcmp(slots.mark_name, found[k]) == 0, "%s: asked for %s, found %s", path, found[k],
				      slots.mark_name);
			ck_assert_int_eq(search(path, false, LAUNCH_SLOTS_MAX_INSTANCES, &plain), 0);
			other += strcmp(plain.mark_name, found[k]) != 0;
		}
	}
	/* names other than the one a search of its own picks were asked for */
	ck_assert_int_ge(names, 4);
	ck_assert_int_ge(other, 2);
}
END_TEST

START_TEST(test_every_fixture_finds_the_same_loop)
{
	int searched = 0, nvtx = 0;
	char dir[4096];

	snprintf(dir, sizeof dir, "%s", testutil_data_path("transformer_naive.sqlite"));
	*strrchr(dir, '/') = '\0';
	each_fixture(dir, &searched, &nvtx);
	ck_assert_int_ge(searched, 40);
	ck_assert_int_ge(nvtx, 10);
}
END_TEST

int main(void)
{
	Suite *suite = suite_create("launch_slots");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_slots_sum_as_the_launches_do);
	tcase_add_test(tc, test_too_many_instances_are_left_to_sql);
	tcase_add_test(tc, test_every_fixture_finds_the_same_loop);
	tcase_add_test(tc, test_launching_calls_with_bad_spans_still_launch);
	tcase_add_test(tc, test_a_marked_loop_is_of_its_name);
	suite_add_tcase(suite, tc);
	return testutil_run(suite);
}
