/* summary_api.c - cuda_api_sum: time spent in CUDA runtime and driver API
 * calls, per function, as `nsys stats --report cuda_api_sum` shows it; and
 * the source of API calls every reader of them shares (query.h). */
#include "summary_impl.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prof/tables.h"

/* Whether some thread of table holds two rows under one correlation id:
 * perfkit's own captures never do, so they skip the test below. */
static int has_repeated_calls(struct prof_store *s, const char *table, bool *yes,
			      struct prof_error *err)
{
	char sql[256];
	struct prof_cursor *c = NULL;
	int rc;

	*yes = false;
	snprintf(sql, sizeof sql, "SELECT EXISTS (SELECT 1 FROM %s WHERE correlationId <> 0 "
		 "GROUP BY globalTid, correlationId HAVING count(*) > 1)", table);
	rc = prof_cursor__open(s, sql, &c, err);
	if (rc < 0)
		return rc;
	rc = prof_cursor__next(c, err);
	*yes = rc > 0 && prof_cursor__int64(c, 0);
	prof_cursor__close(c);
	return rc < 0 ? rc : 0;
}

int sum_call_once_sql(struct prof_store *s, char *buf, size_t cap, const char *alias,
		      const char *table, struct prof_error *err)
{
	bool repeated;
	int rc = has_repeated_calls(s, table, &repeated, err), n;

	if (rc < 0)
		return rc;
	/* The bare rowid next to max(start) is that of the row holding the
	 * maximum; the subquery does not depend on the row, so it runs once. */
	if (repeated)
		n = snprintf(buf, cap,
			     "(coalesce(%s.correlationId, 0) = 0 OR %s.rowid IN (SELECT id FROM (SELECT "
			     "rowid AS id, max(start) FROM %s WHERE correlationId <> 0 "
			     "GROUP BY globalTid, correlationId)))", alias, alias, table);
	else
		n = snprintf(buf, cap, "1");
	if (n < 0 || (size_t)n >= cap)
		return prof_error__set(err, PROF_E_USAGE, "query too long for table %s", table);
	return 0;
}

char *sum_api_calls(struct prof_store *s, int *rc, struct prof_error *err)
{
	static const char *const tables[] = { PROF_T_RUNTIME, PROF_T_DRIVER };
	char parts[2][512], once[384];
	const char *part_ptrs[2] = { parts[0], parts[1] };

	for (int i = 0; i < 2; i++) {
		/* older nsys exports may lack the correlation id (NULL): no call
		 * then is told apart from another */
		*rc = sum_call_once_sql(s, once, sizeof once, "c", tables[i], err);
		if (*rc < 0)
			return NULL;
		snprintf(parts[i], sizeof parts[i], "SELECT start, end, globalTid, correlationId, "
			 "nameId FROM %s AS c WHERE %s", tables[i], once);
	}
	return sum_union(s, tables, part_ptrs, 2, rc, err);
}

int summary__cuda_api_sum(struct prof_store *s, struct rpt_sink *sink, struct prof_error *err)
{
	/* Grouped by the name shown, so that two versions of one call
	 * ("cudaStreamSynchronize", "cudaStreamSynchronize_v3020") are one row. */
	static const char fmt[] =
		"SELECT " SUM_API_NAME("n.value") " AS l1, NULL AS l2, 0 AS k, a.end - a.start AS v, "
		SUM_BAD_SPAN("a.") " AS bad FROM (%s) AS a LEFT JOIN " PROF_T_STRINGS " AS n "
		"ON n.id = a.nameId";
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
		rc = sum_groups__collect(&gs, s, src, err);
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
