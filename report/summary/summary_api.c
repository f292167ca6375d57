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

/* A run of the calls of one API name as shown (none: NULL). */
struct name_run {
	const char *name;
	int64_t value, count;
};

struct name_runs {
	struct name_run *v;
	size_t n, cap;
	char **names; /* the names shown, one a name id */
	size_t nnames, names_cap;
	struct prof_cursor *value_of; /* a name id's string */
	bool other; /* a string of another type, or holding a NUL: SQL's to compare */
	struct prof_error *err;
};

/* The name a call of name id key shows (SUM_API_NAME of its string, NULL
 * for none): 0 and *name, or < 0 an error. */
static int shown_name(struct name_runs *nr, int64_t key, const char **name)
{
	const char *bytes;
	size_t len = 0;
	char *copy;
	int rc;

	*name = NULL;
	prof_cursor__reset(nr->value_of);
	prof_cursor__bind_int64(nr->value_of, 1, key);
	rc = prof_cursor__next(nr->value_of, nr->err);
	/* no string, or a NULL one */
	if (rc <= 0 || prof_cursor__is_null(nr->value_of, 0))
		return rc < 0 ? rc : 0;
	bytes = prof_cursor__text_bytes(nr->value_of, 0, &len);
	if (prof_cursor__kind(nr->value_of, 0) != PROF_VALUE_TEXT || strlen(bytes) != len) {
		nr->other = true;
		return 0;
	}
	copy = strndup(bytes, sum_api_name_len(bytes));
	if (!copy || sum_array__grow(&nr->names, &nr->names_cap, nr->nnames, sizeof *nr->names) < 0) {
		free(copy);
		return prof_error__set(nr->err, PROF_E_NOMEM, "out of memory");
	}
	nr->names[nr->nnames++] = copy;
	*name = copy;
	return 0;
}

/* A name id's runs (group_runs_fn) under the name its calls show. */
static int add_name_runs(void *ctx, const char *l1, const char *l2, bool key_is_null, int64_t key,
			 const struct sum_run *runs, size_t nruns)
{
	struct name_runs *nr = ctx;
	const char *name = NULL;
	int rc;

	(void)l1;
	(void)l2;
	/* as the summary's join: no name id, or one of no string, shows none */
	rc = key_is_null ? 0 : shown_name(nr, key, &name);
	for (size_t i = 0; rc == 0 && i < nruns; i++) {
		if (sum_array__grow(&nr->v, &nr->cap, nr->n, sizeof *nr->v) < 0)
			return prof_error__set(nr->err, PROF_E_NOMEM, "out of memory");
		nr->v[nr->n++] = (struct name_run){ name, runs[i].value, runs[i].count };
	}
	return rc;
}

static int name_cmp(const char *a, const char *b)
{
	if (!a || !b)
		return (a != NULL) - (b != NULL);
	return strcmp(a, b);
}

/* SQL's order of the groups (none first, then the names as BINARY orders
 * them) and of the values in each. */
static int name_run_cmp(const void *pa, const void *pb)
{
	const struct name_run *a = pa, *b = pb;
	int c = name_cmp(a->name, b->name);

	if (c)
		return c;
	return (a->value > b->value) - (a->value < b->value);
}

/* nr's runs as groups, a name each, in the names' order, keyed by their
 * place in it as the summary's own places are (none: no key). */
static int push_names(struct name_runs *nr, struct sum_groups *gs)
{
	struct sum_run *runs = malloc((nr->n ? nr->n : 1) * sizeof *runs);
	int64_t place = 0;
	size_t i = 0;
	int rc = 0;

	if (!runs)
		return prof_error__set(nr->err, PROF_E_NOMEM, "out of memory");
	qsort(nr->v, nr->n, sizeof *nr->v, name_run_cmp);
	while (rc == 0 && i < nr->n) {
		const struct name_run *first = &nr->v[i];
		size_t n = 0;

		/* a duration of two name ids of one name is one run */
		for (; i < nr->n && !name_cmp(nr->v[i].name, first->name); i++)
			if (n && runs[n - 1].value == nr->v[i].value)
				runs[n - 1].count += nr->v[i].count;
			else
				runs[n++] = (struct sum_run){ nr->v[i].value, nr->v[i].count };
		rc = sum_groups__push_runs(gs, first->name, NULL, !first->name, first->name ? ++place : 0, runs,
					   n);
	}
	free(runs);
	return rc < 0 ? prof_error__set(nr->err, PROF_E_NOMEM, "out of memory") : 0;
}

/* The summary's groups from the runs the calls' census counted
 * (call_runs.h), where it counted every table's and no call is in a
 * table twice (the runs are of every row): 1 made, 0 not (the caller
 * reads the calls), < 0 an error. The same groups as the rows' own, to
 * the last bit: the same runs, folded alike, named by the name ids the
 * calls hold (a few hundred), where the rows' own join places every
 * string of the capture (6 ms of a two-rank DDP capture's page). */
static int groups_of_census(struct prof_store *s, struct sum_groups *gs, struct prof_error *err)
{
	static const char *const tables[] = { PROF_T_RUNTIME, PROF_T_DRIVER };
	const struct group_runs *runs[2] = { NULL, NULL };
	struct name_runs nr = { .err = err };
	struct sum_groups made = { 0 };
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
	rc = prof_cursor__open(s, "SELECT value FROM " PROF_T_STRINGS " WHERE id = ?1", &nr.value_of, err);
	for (int i = 0; rc >= 0 && i < 2; i++)
		if (runs[i]) {
			made.rows_left_out += group_runs__left_out(runs[i]);
			rc = group_runs__walk(runs[i], add_name_runs, &nr);
			if (rc == PROF_E_NOMEM)
				prof_error__set(err, rc, "out of memory");
		}
	if (nr.value_of)
		prof_cursor__close(nr.value_of);
	if (rc >= 0 && !nr.other)
		rc = push_names(&nr, &made);
	free(nr.v);
	for (size_t i = 0; i < nr.nnames; i++)
		free(nr.names[i]);
	free(nr.names);
	if (rc < 0 || nr.other) {
		sum_groups__exit(&made);
		return rc < 0 ? rc : 0;
	}
	*gs = made;
	return 1;
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
	if (rc >= 0 && calls)
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
