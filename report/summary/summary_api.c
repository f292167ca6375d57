/* summary_api.c - cuda_api_sum: time spent in CUDA runtime and driver API
 * calls, per function, as `nsys stats --report cuda_api_sum` shows it. */
#include "summary_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/memo.h"
#include "model/names.h"
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

int summary__cuda_api_sum(struct prof_store *s, struct rpt_sink *sink, struct prof_error *err)
{
	/* Grouped by the name shown, so that two versions of one call
	 * ("cudaStreamSynchronize", "cudaStreamSynchronize_v3020") are one row. */
	static const char fmt[] =
		"SELECT NULL AS l1, NULL AS l2, p.place AS k, a.end - a.start AS v, "
		SUM_BAD_SPAN("a.") " AS bad FROM (%s) AS a LEFT JOIN temp." NAME_PLACES " AS p "
		"ON p.id = a.nameId";
	struct sum_groups gs = { 0 };
	char *calls, *src = NULL;
	int rc;

	calls = sum_api_calls(s, &rc, err);
	if (rc < 0)
		return rc;
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
		if (rc == 0)
			rc = name_groups(s, &gs, err);
		if (rc < 0)
			goto out;
	}
	sum_groups__sort_by_total(&gs);
	rc = sum_groups__emit_time(&gs, sink, "cuda_api_sum", "CUDA API Summary", "Num Calls",
				   NULL, "Name", RPT_TEXT, 0, err);
out:
	free(src);
	free(calls);
	sum_groups__exit(&gs);
	return rc;
}
