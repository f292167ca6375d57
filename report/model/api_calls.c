/* api_calls.c - the CUDA API calls of the runtime and driver tables, each
 * call once, as every reader of them shares them (sql.h). */
#include "model/memo.h"
#include "model/names.h"
#include "model/sql.h"
#include "model/sums.h"
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

/* The last correlation id seen of each thread, ascending by thread (a NULL
 * thread, which GROUP BY takes for one more, first). */
struct thread_last {
	bool null_tid;
	int64_t tid, corr;
};

static size_t thread_slot(const struct thread_last *v, size_t n, bool null_tid, int64_t tid)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		bool before = v[mid].null_tid != null_tid ? v[mid].null_tid : v[mid].tid < tid;

		if (before)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Whether every thread's correlation ids rise strictly in the rows' order
 * (from's rows, the calls with an id): then no thread holds one id twice,
 * known from one pass in the file's order. CUPTI numbers the calls as they
 * are made, so a capture's calls mostly come so (of the fixtures, all but
 * an nsys export whose backtrace rows repeat calls); where they do not,
 * *rise is false and the caller sorts. Ids or threads that are not
 * integers (a foreign file) are left to the sort as well. */
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
	struct thread_last *last = NULL;
	size_t n = 0, cap = 0, at = 0;
	struct prof_cursor *c = NULL;
	char *sql = prof_strfmt("SELECT globalTid, correlationId FROM %s WHERE correlationId <> 0 "
				"ORDER BY rowid", from);
	int rc;

	*rise = false;
	if (!sql)
		return prof_error__set(err, PROF_E_NOMEM, "out of memory");
	rc = prof_cursor__open(s, sql, &c, err);
	free(sql);
	*rise = rc == 0;
	while (*rise && (rc = prof_cursor__next(c, err)) > 0) {
		enum prof_value_kind tk = prof_cursor__kind(c, 0);
		bool null_tid = tk == PROF_VALUE_NULL;
		int64_t tid = null_tid ? 0 : prof_cursor__int64(c, 0), corr = prof_cursor__int64(c, 1);

		if ((!null_tid && tk != PROF_VALUE_INT) || prof_cursor__kind(c, 1) != PROF_VALUE_INT) {
			*rise = false;
			break;
		}
		/* a thread's calls mostly come in runs: the last one found first */
		if (!(at < n && last[at].null_tid == null_tid && last[at].tid == tid)) {
			at = thread_slot(last, n, null_tid, tid);
			if (at == n || last[at].null_tid != null_tid || last[at].tid != tid) {
				if (sum_array__grow(&last, &cap, n, sizeof *last) < 0) {
					rc = prof_error__set(err, PROF_E_NOMEM, "out of memory");
					break;
				}
				memmove(&last[at + 1], &last[at], (n - at) * sizeof *last);
				last[at] = (struct thread_last){ null_tid, tid, corr };
				n++;
				continue;
			}
		}
		if (corr <= last[at].corr)
			*rise = false;
		last[at].corr = corr;
	}
	prof_cursor__close(c);
	free(last);
	if (rc < 0)
		*rise = false;
	return rc < 0 ? rc : 0;
}

static const char repeated_key;

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
		rc = ids_rise(s, from, &rises, err);
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
