/* api_calls.c - the CUDA API calls of the runtime and driver tables, each
 * call once, as every reader of them shares them (sql.h). */
#include "model/names.h"
#include "model/sql.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prof/strfmt.h"
#include "prof/tables.h"
#include "prof/error.h"

/* Each API table's answer for all its rows, kept for the connection: the
 * rows of the file do not change under a reader, and a table that holds
 * no call twice has no part that does, so the views of it a reader narrows
 * (a rank's, a window's) need not be asked again. */
#define REPEATS_TABLE "perfkit_call_repeats"

/* Whether some thread of the rows of from holds two under one correlation id. */
static int repeated_in(struct prof_store *s, const char *from, bool *yes, struct prof_error *err)
{
	char *sql = prof_strfmt("SELECT EXISTS (SELECT 1 FROM %s WHERE correlationId <> 0 "
				"GROUP BY globalTid, correlationId HAVING count(*) > 1)", from);
	struct prof_cursor *c = NULL;
	int rc;

	*yes = false;
	if (!sql)
		return prof_error__set(err, PROF_E_NOMEM, "out of memory");
	rc = prof_cursor__open(s, sql, &c, err);
	free(sql);
	if (rc < 0)
		return rc;
	rc = prof_cursor__next(c, err);
	*yes = rc > 0 && prof_cursor__int64(c, 0);
	prof_cursor__close(c);
	return rc < 0 ? rc : 0;
}

/* The kept answer for every row of table: 0 or 1, -1 when none is kept. */
static int kept_answer(struct prof_store *s, const char *table, int *answer, struct prof_error *err)
{
	struct prof_cursor *c = NULL;
	int rc = prof_store__exec(s, "CREATE TEMP TABLE IF NOT EXISTS " REPEATS_TABLE
				  " (tbl TEXT PRIMARY KEY, repeated INTEGER)", err);

	*answer = -1;
	if (rc == 0)
		rc = prof_cursor__open(s, "SELECT repeated FROM temp." REPEATS_TABLE " WHERE tbl = ?1", &c, err);
	if (rc < 0)
		return rc;
	prof_cursor__bind_text(c, 1, table);
	rc = prof_cursor__next(c, err);
	if (rc > 0)
		*answer = (int)prof_cursor__int64(c, 0);
	prof_cursor__close(c);
	return rc < 0 ? rc : 0;
}

static int keep_answer(struct prof_store *s, const char *table, bool repeated, struct prof_error *err)
{
	struct prof_cursor *c = NULL;
	int rc = prof_cursor__open(s, "INSERT INTO temp." REPEATS_TABLE " VALUES (?1, ?2)", &c, err);

	if (rc < 0)
		return rc;
	prof_cursor__bind_text(c, 1, table);
	prof_cursor__bind_int64(c, 2, repeated);
	rc = prof_cursor__next(c, err);
	prof_cursor__close(c);
	return rc < 0 ? rc : 0;
}

/* Whether some thread of table, as the store's views show it now, holds
 * two rows under one correlation id: perfkit's own captures never do, so
 * they skip the test below. */
static int has_repeated_calls(struct prof_store *s, const char *table, bool *yes,
			      struct prof_error *err)
{
	const char *rows = prof_store__all_rows(s, table);
	char *all;
	int answer, rc = kept_answer(s, table, &answer, err);

	*yes = false;
	if (rc < 0)
		return rc;
	if (answer < 0) {
		bool repeated;

		all = rows ? prof_strfmt("(%s) AS t", rows) : NULL;
		if (rows && !all)
			return prof_error__set(err, PROF_E_NOMEM, "out of memory");
		rc = repeated_in(s, all ? all : table, &repeated, err);
		free(all);
		if (rc == 0)
			rc = keep_answer(s, table, repeated, err);
		if (rc < 0)
			return rc;
		answer = repeated;
		/* a table without views is shown whole */
		if (!rows) {
			*yes = repeated;
			return 0;
		}
	}
	return answer ? repeated_in(s, table, yes, err) : 0;
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
