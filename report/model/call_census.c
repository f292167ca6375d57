/* call_census.c - one pass over every row of a table of CUDA calls for its
 * extent, its rows of a bad span and its sticky errors (call_census.h):
 * three passes over every call became one. */
#include "model/call_census.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "model/call_pairs.h"
#include "model/call_runs.h"
#include "model/launch_ids.h"
#include "model/ids_rise.h"
#include "model/memo.h"
#include "model/pid_rows.h"
#include "model/sticky_errors.h"
#include "model/window.h"
#include "model/sql.h"
#include "prof/strfmt.h"
#include "prof/tables.h"

static const char census_key;
/* An extra asked for, under its bit as tag. */
static const char want_key;

void sum_call_census__want(struct prof_store *s, unsigned extras)
{
	for (unsigned char bit = 1; bit && bit <= extras; bit <<= 1) {
		void *known = NULL;

		if ((extras & bit) && prof_store__shared_take(s, &want_key, &bit, 1, &known) == 0)
			prof_store__shared_give(s, &want_key, &bit, 1, (void *)&want_key, NULL);
	}
}

static bool wanted(struct prof_store *s, unsigned char bit)
{
	void *known = NULL;

	return prof_store__is_finished(s) && prof_store__shared_peek(s, &want_key, &bit, 1, &known) == 1;
}

/* The census as SQL counts it: the same conditions as the extent's
 * (capture_time.c), the bad spans' (bad_spans.c) and the failure's
 * (context_failure.c), each an aggregate's filter. A pass of its own for
 * the rows whose times or code are of another type than integer or NULL,
 * whose comparisons SQL makes its own way. */
static int read_census_sql(struct prof_store *s, const char *rows, struct call_census *c, struct prof_error *err)
{
	struct prof_cursor *cur = NULL;
	char *sql = prof_strfmt("SELECT min(start) FILTER (WHERE start > 0 AND NOT " SUM_BAD_SPAN("") "),"
				" max(end) FILTER (WHERE start > 0 AND NOT " SUM_BAD_SPAN("") "),"
				" count(*) FILTER (WHERE " SUM_BAD_SPAN("") "),"
				" count(*) FILTER (WHERE returnValue IN (" SUM_STICKY_CODES "))"
				" FROM (%s) AS t", rows);
	int rc = sql ? prof_cursor__open(s, sql, &cur, err) : prof_error__set(err, PROF_E_NOMEM, "out of memory");

	free(sql);
	if (rc < 0)
		return rc;
	rc = prof_cursor__next(cur, err);
	if (rc > 0) {
		c->first = prof_cursor__is_null(cur, 0) ? INT64_MAX : prof_cursor__int64(cur, 0);
		c->last = prof_cursor__is_null(cur, 1) ? INT64_MIN : prof_cursor__int64(cur, 1);
		c->bad = prof_cursor__int64(cur, 2);
		c->sticky = prof_cursor__int64(cur, 3);
	}
	prof_cursor__close(cur);
	return rc < 0 ? rc : 1;
}

static bool int_or_null(enum prof_value_kind k)
{
	return k == PROF_VALUE_INT || k == PROF_VALUE_NULL;
}

/* One row into c: false where a value is of another type. */
static bool count_row(struct prof_cursor *cur, struct call_census *c)
{
	enum prof_value_kind ks = prof_cursor__kind(cur, 0), ke = prof_cursor__kind(cur, 1);
	enum prof_value_kind kr = prof_cursor__kind(cur, 2);
	int64_t start, end;
	bool bad;

	if (!int_or_null(ks) || !int_or_null(ke) || !int_or_null(kr))
		return false;
	start = ks == PROF_VALUE_INT ? prof_cursor__int64(cur, 0) : 0;
	end = ke == PROF_VALUE_INT ? prof_cursor__int64(cur, 1) : 0;
	bad = sum_call_span_bad(ks, start, ke, end);
	c->bad += bad;
	if (!bad && start > 0) {
		c->first = start < c->first ? start : c->first;
		c->last = end > c->last ? end : c->last;
	}
	c->sticky += kr == PROF_VALUE_INT && sum_sticky_error(prof_cursor__int64(cur, 2)) != NULL;
	return true;
}

/* The census in one walk of the three columns (the statement that
 * filters each aggregate took as long as the three passes: 0.31 s over
 * the runtime's calls of gpu_work x1250, where the walk takes 0.19 s in
 * the HTML page), else SQL's. The same walk tells the ids' rise and,
 * read every row, gives the table's (thread, name id) pairs to the
 * file's connections (call_pairs.h), which walked it again for them. */
static int read_census(struct prof_store *s, const char *table, const char *rows, struct call_census *c,
		       struct prof_error *err)
{
	struct prof_cursor *cur = NULL;
	/* by rowid, the order the ids' rise is of (the table's own scan) */
	char *sql = prof_strfmt("SELECT start, end, returnValue, globalTid, correlationId, nameId, t.rowid FROM (%s)"
				" AS t ORDER BY t.rowid", rows);
	struct ids_rise_walk rise;
	struct call_pairs_walk pairs;
	struct call_runs_walk runs;
	struct launch_ids_walk ids;
	struct pid_rows_walk by_pid;
	bool plain = true, tids_plain = true;
	int rc = sql ? prof_cursor__open(s, sql, &cur, err) : prof_error__set(err, PROF_E_NOMEM, "out of memory");

	free(sql);
	if (rc < 0)
		return rc;
	/* six walks read each row */
	prof_cursor__keep_values(cur);
	*c = (struct call_census){ .first = INT64_MAX, .last = INT64_MIN };
	ids_rise_walk__init(&rise);
	call_pairs_walk__begin(&pairs);
	call_runs_walk__begin(&runs, wanted(s, CALL_CENSUS_RUNS));
	launch_ids_walk__begin(&ids, table, wanted(s, CALL_CENSUS_LAUNCH_IDS));
	pid_rows_walk__begin(&by_pid, sum_capture__extent_table(table));
	while (plain && (rc = prof_cursor__next(cur, err)) > 0) {
		plain = count_row(cur, c);
		/* the rows of a thread, as --rank's views bound them */
		tids_plain &= int_or_null(prof_cursor__kind(cur, 3));
		if (prof_cursor__kind(cur, 3) == PROF_VALUE_INT)
			pid_rows_walk__add(&by_pid, prof_cursor__int64(cur, 6),
					   sum_global_pid_of_tid(prof_cursor__int64(cur, 3)), prof_cursor__kind(cur, 0),
					   prof_cursor__int64(cur, 0), prof_cursor__kind(cur, 1),
					   prof_cursor__int64(cur, 1));
		else
			pid_rows_walk__without(&by_pid);
		if (ids_rise_walk__add(&rise, cur, 3, 4) || call_pairs_walk__add(&pairs, cur, 3, 5, 0, 1) ||
		    call_runs_walk__add(&runs, cur, 5, 0, 1) || launch_ids_walk__add(&ids, cur, 3, 4)) {
			rc = prof_error__set(err, PROF_E_NOMEM, "out of memory");
			break;
		}
	}
	prof_cursor__close(cur);
	c->rise_known = plain && rc == 0;
	c->ids_rise = c->rise_known && rise.rise;
	ids_rise_walk__exit(&rise);
	/* what else a walk that read every row counted (call_pairs.h,
	 * call_runs.h, launch_ids.h, pid_rows.h: its rows of a thread of
	 * another type than integer are SQL's to compute) */
	if (c->rise_known) {
		call_pairs_walk__give(s, table, &pairs);
		call_runs_walk__give(s, table, &runs);
		launch_ids_walk__give(s, table, &ids);
	} else {
		call_pairs_walk__exit(&pairs);
		call_runs_walk__exit(&runs);
		launch_ids_walk__exit(&ids);
	}
	if (c->rise_known && tids_plain)
		pid_rows_walk__give(s, table, &by_pid);
	else
		pid_rows_walk__exit(&by_pid);
	if (rc < 0)
		return rc;
	return plain ? 1 : read_census_sql(s, rows, c, err);
}

int sum_call_census(struct prof_store *s, const char *table, struct call_census *c, struct prof_error *err)
{
	const char *rows;
	int got, rc;

	memset(c, 0, sizeof *c);
	if ((strcmp(table, PROF_T_RUNTIME) && strcmp(table, PROF_T_DRIVER)) || !prof_store__has_table(s, table) ||
	    !(rows = prof_store__all_rows(s, table)))
		return 0;
	/* of every row: the same on every connection, whatever its views show */
	got = sum_shared__take_value(s, &census_key, table, c, sizeof *c);
	if (got == 1)
		return 1;
	if (got < 0)
		return 0;
	rc = read_census(s, table, rows, c, err);
	sum_shared__give_value(s, &census_key, table, c, sizeof *c, rc == 1);
	return rc;
}
