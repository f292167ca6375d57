/* summary_api.c - cuda_api_sum: time spent in CUDA runtime and driver API
 * calls, per function, as `nsys stats --report cuda_api_sum` shows it. */
#include "summary_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/call_census.h"
#include "model/call_runs.h"
#include "model/memo.h"
#include "model/names.h"
#include "model/sums.h"
#include "model/sql.h"
#include "prof/error.h"
#include "prof/tables.h"

/* Each string's place among the API names as shown (SUM_API_NAME), in
 * their order, kept for the connection (the strings of a file do not
 * change under a reader, and no view narrows them): the calls are grouped
 * by that integer, where grouping them by the name computed every call's
 * name and sorted its text, three times the time on a million calls. A
 * string without a name has no place, as a call without a string. */
#define NAME_PLACES MEMO_API_NAME_PLACES

static int make_places(struct prof_store *s, struct prof_error *err)
{
	struct prof_cursor *c = NULL;
	int rc = prof_store__exec(s, "CREATE TEMP TABLE IF NOT EXISTS " NAME_PLACES
				  " (id INTEGER PRIMARY KEY, place INTEGER, name TEXT)", err);

	if (rc == 0)
		rc = prof_cursor__open(s, "SELECT count(*) FROM temp." NAME_PLACES, &c, err);
	if (rc == 0)
		rc = prof_cursor__next(c, err);
	if (rc > 0 && prof_cursor__int64(c, 0) > 0)
		rc = 0;
	else if (rc > 0)
		rc = prof_store__exec(s, "INSERT INTO temp." NAME_PLACES " SELECT id, CASE WHEN name IS NULL"
				      " THEN NULL ELSE dense_rank() OVER (ORDER BY name) END, name FROM"
				      " (SELECT id, " SUM_API_NAME("value") " AS name FROM " PROF_T_STRINGS ")",
				      err);
	prof_cursor__close(c);
	return rc < 0 ? rc : 0;
}

/* Each group (by place, in place order) its name. */
static int name_groups(struct prof_store *s, struct sum_groups *gs, struct prof_error *err)
{
	struct prof_cursor *c = NULL;
	size_t i = 0;
	int rc = prof_cursor__open(s, "SELECT place, min(name) FROM temp." NAME_PLACES
				   " WHERE place IS NOT NULL GROUP BY place ORDER BY place", &c, err);

	while (rc >= 0 && (rc = prof_cursor__next(c, err)) > 0) {
		while (i < gs->n && (gs->g[i].key_is_null || gs->g[i].key < prof_cursor__int64(c, 0)))
			i++;
		if (i < gs->n && gs->g[i].key == prof_cursor__int64(c, 0)) {
			gs->g[i].label = strdup(prof_cursor__text(c, 1));
			if (!gs->g[i].label)
				rc = prof_error__set(err, PROF_E_NOMEM, "out of memory");
		}
	}
	prof_cursor__close(c);
	return rc < 0 ? rc : 0;
}

/* A run of the calls of one place (none: place_null). */
struct place_run {
	bool place_null;
	int64_t place, value, count;
};

struct place_runs {
	struct place_run *v;
	size_t n, cap;
	struct prof_cursor *place_of; /* a name id's place */
	struct prof_error *err;
};

/* A name id's runs (group_runs_fn) under the place of its name. */
static int add_name_runs(void *ctx, const char *l1, const char *l2, bool key_is_null, int64_t key,
			 const struct sum_run *runs, size_t nruns)
{
	struct place_runs *pr = ctx;
	bool place_null = true;
	int64_t place = 0;
	int rc = 0;

	(void)l1;
	(void)l2;
	/* as the summary's join: no name id, or one of no string or of a
	 * string without a name, is of no place */
	if (!key_is_null) {
		prof_cursor__reset(pr->place_of);
		prof_cursor__bind_int64(pr->place_of, 1, key);
		rc = prof_cursor__next(pr->place_of, pr->err);
		if (rc > 0 && !prof_cursor__is_null(pr->place_of, 0)) {
			place_null = false;
			place = prof_cursor__int64(pr->place_of, 0);
		}
		if (rc < 0)
			return rc;
	}
	for (size_t i = 0; i < nruns; i++) {
		if (sum_array__grow(&pr->v, &pr->cap, pr->n, sizeof *pr->v) < 0)
			return prof_error__set(pr->err, PROF_E_NOMEM, "out of memory");
		pr->v[pr->n++] = (struct place_run){ place_null, place, runs[i].value, runs[i].count };
	}
	return 0;
}

/* SQL's order of the groups (none first) and of the values in each. */
static int place_run_cmp(const void *pa, const void *pb)
{
	const struct place_run *a = pa, *b = pb;

	if (a->place_null != b->place_null)
		return a->place_null ? -1 : 1;
	if (a->place != b->place)
		return a->place < b->place ? -1 : 1;
	return (a->value > b->value) - (a->value < b->value);
}

/* pr's runs as groups, a place each, in place order. */
static int push_places(struct place_runs *pr, struct sum_groups *gs)
{
	struct sum_run *runs = malloc((pr->n ? pr->n : 1) * sizeof *runs);
	size_t i = 0;
	int rc = 0;

	if (!runs)
		return prof_error__set(pr->err, PROF_E_NOMEM, "out of memory");
	qsort(pr->v, pr->n, sizeof *pr->v, place_run_cmp);
	while (rc == 0 && i < pr->n) {
		const struct place_run *first = &pr->v[i];
		size_t n = 0;

		/* a duration of two names of one place is one run */
		for (; i < pr->n && pr->v[i].place_null == first->place_null && pr->v[i].place == first->place; i++)
			if (n && runs[n - 1].value == pr->v[i].value)
				runs[n - 1].count += pr->v[i].count;
			else
				runs[n++] = (struct sum_run){ pr->v[i].value, pr->v[i].count };
		rc = sum_groups__push_runs(gs, NULL, NULL, first->place_null, first->place, runs, n);
	}
	free(runs);
	return rc < 0 ? prof_error__set(pr->err, PROF_E_NOMEM, "out of memory") : 0;
}

/* The summary's groups from the runs the calls' census counted
 * (call_runs.h), where it counted every table's and no call is in a
 * table twice (the runs are of every row): 1 made, 0 not (the caller
 * reads the calls), < 0 an error. The same groups as the rows' own, to
 * the last bit: the same runs, folded alike. */
static int groups_of_census(struct prof_store *s, struct sum_groups *gs, struct prof_error *err)
{
	static const char *const tables[] = { PROF_T_RUNTIME, PROF_T_DRIVER };
	const struct group_runs *runs[2] = { NULL, NULL };
	struct place_runs pr = { .err = err };
	bool once = false;
	int rc = 0;

	/* a view that narrows the calls (--rank's): the runs are of every row */
	if (prof_store__restricted(s))
		return 0;
	for (int i = 0; i < 2; i++) {
		struct call_census census;

		if (!prof_store__has_table(s, tables[i]))
			continue;
		/* the walk that counts them, where it is still to come */
		rc = sum_call_census(s, tables[i], &census, err);
		if (rc < 0)
			return rc;
		if (sum_call_runs__take(s, tables[i], &runs[i]) != 1)
			return 0;
	}
	if (!runs[0] && !runs[1])
		return 0;
	rc = sum_api_calls__once(s, &once, err);
	if (rc < 0 || !once)
		return rc;
	rc = make_places(s, err);
	if (rc == 0)
		rc = prof_cursor__open(s, "SELECT place FROM temp." NAME_PLACES " WHERE id = ?1", &pr.place_of, err);
	for (int i = 0; rc >= 0 && i < 2; i++)
		if (runs[i]) {
			gs->rows_left_out += group_runs__left_out(runs[i]);
			rc = group_runs__walk(runs[i], add_name_runs, &pr);
			if (rc == PROF_E_NOMEM)
				prof_error__set(err, rc, "out of memory");
		}
	if (pr.place_of)
		prof_cursor__close(pr.place_of);
	if (rc >= 0)
		rc = push_places(&pr, gs);
	free(pr.v);
	return rc < 0 ? rc : 1;
}

int summary__cuda_api_sum(struct prof_store *s, struct rpt_sink *sink, struct prof_error *err)
{
	/* Grouped by the name shown, so that two versions of one call
	 * ("cudaStreamSynchronize", "cudaStreamSynchronize_v3020") are one row. */
	static const char fmt[] =
		"SELECT NULL AS l1, NULL AS l2, p.place AS k, a.end - a.start AS v, "
		SUM_BAD_SPAN("a.") " AS bad FROM (%s) AS a LEFT JOIN temp." NAME_PLACES " AS p "
		"ON p.id = a.nameId";
	struct sum_groups gs = { 0 };
	char *calls = NULL, *src = NULL;
	int rc = groups_of_census(s, &gs, err);
	bool counted = rc == 1;

	calls = rc == 0 ? sum_api_calls(s, &rc, err) : NULL;
	if (rc < 0)
		goto out;
	if (calls) {
		size_t len = sizeof fmt + strlen(calls);

		src = malloc(len);
		if (!src) {
			rc = prof_error__set(err, PROF_E_NOMEM, "out of memory");
			goto out;
		}
		snprintf(src, len, fmt, calls);
		rc = make_places(s, err);
		if (rc == 0)
			rc = sum_groups__collect(&gs, s, src, err);
	}
	if (rc >= 0 && (counted || calls))
		rc = name_groups(s, &gs, err);
	if (rc < 0)
		goto out;
	sum_groups__sort_by_total(&gs);
	rc = sum_groups__emit_time(&gs, sink, "cuda_api_sum", "CUDA API Summary", "Num Calls",
				   NULL, "Name", RPT_TEXT, 0, err);
out:
	free(src);
	free(calls);
	sum_groups__exit(&gs);
	return rc;
}
