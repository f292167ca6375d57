/* api_calls.c - the CUDA API calls of the runtime and driver tables, each
 * call once, as every reader of them shares them (sql.h). */
#include "model/call_census.h"
#include "model/ids_rise.h"
#include "model/memo.h"
#include "model/names.h"
#include "model/sql.h"
#include "rank_choice.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prof/tables.h"
#include "prof/error.h"
#include "prof/strfmt.h"

/* Each table's answer below, kept in the connection's temporary database
 * once taken: the rows of a file do not change under a reader, and one
 * that reads a job rank by rank (a loop finder per rank) asks it again
 * and again. */
#define REPEATED_TABLE MEMO_REPEATED_CALLS

/* 1 when sql (one number) answers nonzero, 0, or < 0. */
static int ask(struct prof_store *s, const char *sql, struct prof_error *err)
{
	struct prof_cursor *c = NULL;
	int rc = prof_cursor__open(s, sql, &c, err);

	if (rc < 0)
		return rc;
	rc = prof_cursor__next(c, err);
	rc = rc > 0 ? prof_cursor__int64(c, 0) != 0 : rc;
	prof_cursor__close(c);
	return rc;
}

/* Whether every thread's correlation ids rise strictly in the order of
 * from's rows (ids_rise.h); where they do not, *rise is false and the
 * caller sorts. */
static int ids_rise(struct prof_store *s, const char *from, bool *rise, struct prof_error *err);

int sum_calls__ids_rise(struct prof_store *s, const char *table, bool *rise, struct prof_error *err)
{
	const char *rows = prof_store__all_rows(s, table);
	char *from = rows ? prof_strfmt("(%s)", rows) : prof_strfmt("%s", table);
	int rc;

	if (!from)
		return prof_error__set(err, PROF_E_NOMEM, "out of memory");
	rc = ids_rise(s, from, rise, err);
	free(from);
	return rc;
}

static int ids_rise(struct prof_store *s, const char *from, bool *rise, struct prof_error *err)
{
	struct ids_rise_walk w;
	struct prof_cursor *c = NULL;
	char *sql = prof_strfmt("SELECT globalTid, correlationId FROM %s WHERE correlationId <> 0 "
				"ORDER BY rowid", from);
	int rc;

	*rise = false;
	if (!sql)
		return prof_error__set(err, PROF_E_NOMEM, "out of memory");
	rc = prof_cursor__open(s, sql, &c, err);
	free(sql);
	if (rc)
		return rc;
	ids_rise_walk__init(&w);
	while (w.rise && (rc = prof_cursor__next(c, err)) > 0)
		if (ids_rise_walk__add(&w, c, 0, 1)) {
			rc = prof_error__set(err, PROF_E_NOMEM, "out of memory");
			break;
		}
	prof_cursor__close(c);
	*rise = rc >= 0 && w.rise;
	ids_rise_walk__exit(&w);
	return rc < 0 ? rc : 0;
}

static const char repeated_key;

/* Whether table's ids rise (from: its every row): told by the calls'
 * census, whose one walk of the table the readers ask for first anyway
 * (at 22M calls the rise's walk of its own took 2.2 s a table), else by
 * a walk of its own. */
static int rise_of(struct prof_store *s, const char *table, const char *from, bool *rises,
		   struct prof_error *err)
{
	struct call_census census;
	int rc = sum_call_census(s, table, &census, err);

	if (rc < 0)
		return rc;
	if (rc == 1 && census.rise_known) {
		*rises = census.ids_rise;
		return 0;
	}
	return ids_rise(s, from, rises, err);
}

/* Whether some thread of table holds two rows under one correlation id:
 * perfkit's own captures never do, and ids_rise tells so in one pass. Asked of
 * every row, whatever --rank shows: a choice of them holds a repeated call
 * only where all of them do, and the test leaves a call that is not
 * repeated as it is. */
int sum_calls__repeated(struct prof_store *s, const char *table, bool *yes, struct prof_error *err)
{
	const char *rows = prof_store__all_rows(s, table);
	char *from = rows ? prof_strfmt("(%s)", rows) : prof_strfmt("%s", table), *sql;
	struct prof_cursor *c = NULL;
	bool kept, rises = false;
	int64_t answer = 0;
	int got, rc;

	*yes = false;
	if (!from)
		return prof_error__set(err, PROF_E_NOMEM, "out of memory");
	rc = sum_temp__exists(s, REPEATED_TABLE, &kept, err);
	if (rc == 0 && kept) {
		rc = prof_cursor__open(s, "SELECT yes FROM temp." REPEATED_TABLE " WHERE tbl = ?1", &c, err);
		if (rc == 0) {
			prof_cursor__bind_text(c, 1, table);
			rc = prof_cursor__next(c, err);
			*yes = rc > 0 && prof_cursor__int64(c, 0);
		}
		prof_cursor__close(c);
		if (rc != 0) {
			free(from);
			return rc < 0 ? rc : 0;
		}
	}
	/* or another connection to the file found it */
	got = rc == 0 ? sum_shared__take(s, &repeated_key, table, &answer, 1) : -1;
	if (got == 1) {
		free(from);
		*yes = answer != 0;
		goto keep;
	}
	/* ids that rise on every thread are no call twice on one thread;
	 * else no correlation id twice at all is none twice on one thread
	 * either, and costs a sort of the ids where the GROUP BY below sorts
	 * the calls */
	if (rc == 0)
		rc = rise_of(s, table, from, &rises, err);
	if (rc == 0 && !rises) {
		sql = prof_strfmt("SELECT (SELECT count(*) FROM %s WHERE correlationId <> 0) <> (SELECT"
				  " count(DISTINCT correlationId) FROM %s WHERE correlationId <> 0)", from, from);
		rc = sql ? ask(s, sql, err) : prof_error__set(err, PROF_E_NOMEM, "out of memory");
		free(sql);
	}
	if (rc > 0) {
		sql = prof_strfmt("SELECT EXISTS (SELECT 1 FROM %s WHERE correlationId <> 0 "
				  "GROUP BY globalTid, correlationId HAVING count(*) > 1)", from);
		rc = sql ? ask(s, sql, err) : prof_error__set(err, PROF_E_NOMEM, "out of memory");
		free(sql);
	}
	free(from);
	answer = rc > 0;
	if (got == 0)
		sum_shared__give(s, &repeated_key, table, &answer, 1, rc >= 0);
	if (rc < 0)
		return rc;
	*yes = rc > 0;
keep:
	rc = prof_store__exec(s, "CREATE TEMP TABLE IF NOT EXISTS " REPEATED_TABLE " (tbl TEXT PRIMARY KEY, yes INTEGER)",
			      err);
	if (rc == 0)
		rc = prof_cursor__open(s, "INSERT OR REPLACE INTO temp." REPEATED_TABLE " VALUES (?1, ?2)", &c, err);
	if (rc == 0) {
		prof_cursor__bind_text(c, 1, table);
		prof_cursor__bind_int64(c, 2, *yes);
		rc = prof_cursor__next(c, err);
		prof_cursor__close(c);
	}
	return rc < 0 ? rc : 0;
}

int sum_call_once_sql(struct prof_store *s, char *buf, size_t cap, const char *alias,
		      const char *table, struct prof_error *err)
{
	bool repeated;
	int rc = sum_calls__repeated(s, table, &repeated, err), n;

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

static const char *const api_tables[] = { PROF_T_RUNTIME, PROF_T_DRIVER };

/* sum_api_calls, or with assume_once the same where neither table holds
 * a call twice, without asking. */
static char *api_calls(struct prof_store *s, bool assume_once, int *rc, struct prof_error *err)
{
	char parts[2][512], once[384] = "1";
	const char *part_ptrs[2] = { parts[0], parts[1] };

	for (int i = 0; i < 2; i++) {
		/* older nsys exports may lack the correlation id (NULL): no call
		 * then is told apart from another */
		*rc = assume_once ? 0 : sum_call_once_sql(s, once, sizeof once, "c", api_tables[i], err);
		if (*rc < 0)
			return NULL;
		snprintf(parts[i], sizeof parts[i], "SELECT start, end, globalTid, correlationId, "
			 "nameId FROM %s AS c WHERE %s", api_tables[i], once);
	}
	return sum_union(s, api_tables, part_ptrs, 2, rc, err);
}

char *sum_api_calls(struct prof_store *s, int *rc, struct prof_error *err)
{
	return api_calls(s, false, rc, err);
}

char *sum_api_calls_assuming_once(struct prof_store *s, int *rc, struct prof_error *err)
{
	return api_calls(s, true, rc, err);
}

int sum_api_calls__once(struct prof_store *s, bool *once, struct prof_error *err)
{
	*once = true;
	for (int i = 0; *once && i < 2; i++) {
		bool repeated = false;
		int rc = prof_store__has_table(s, api_tables[i]) ? sum_calls__repeated(s, api_tables[i], &repeated, err)
								 : 0;

		if (rc < 0)
			return rc;
		*once = !repeated;
	}
	return 0;
}
