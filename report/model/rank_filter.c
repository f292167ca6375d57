/* rank_filter.c - `--rank=N[,M]`: one mechanism for every report, the
 * diagnosis and the exports. Each table that holds a process's rows (the
 * GPU work by globalPid, the calls, ranges and threads by their process)
 * is restricted to the chosen processes' rows (prof_store__restrict: the
 * store's canonical view of the table, which every statement reads, gains
 * a condition), so every query of the read side is filtered without being
 * touched; the views stay simple enough for SQLite to flatten into the
 * queries that use them, so those keep their indexes (test_rank_filter.c
 * checks the plans).
 *
 * The views read the process ids from a temporary table. The analyses
 * that work one rank at a time (rank_sum's steps and busy time) narrow it
 * to one process (sum_ranks__scope) and put the user's choice back after
 * (sum_ranks__unscope).
 *
 * A process's condition reads the column of every row, so an analysis of
 * each rank of a job in turn would read the whole job once a rank: time
 * quadratic in the ranks. A merge writes each capture's rows together, so
 * each view but NVTX's also bounds the rowids to those of the processes it
 * shows (their lowest to their highest, taken once per table when the
 * views are made): SQLite seeks to that run of the table instead of
 * scanning it. NVTX's joins seek by thread through its (globalTid, start)
 * index, which the planner would trade for a run of rowids; its view
 * bounds the thread ids instead (a process's threads lie in [globalPid,
 * globalPid + 2^24)), so a scan seeks through the same index and a join
 * keeps it. The bounds only narrow what the process condition keeps
 * anyway. The same pass over a table of timed rows notes each process's
 * first and last record, from which a rank's scope or --rank tells the
 * rows it shows without a pass of its own (sum_ranks__shown_extent). */
#include <inttypes.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rank_choice.h"
#include "model/call_census.h"
#include "model/memo.h"
#include "model/pid_rows.h"
#include "model/ranks.h"
#include "model/sums.h"
#include "model/window.h"
#include "prof/tables.h"
#include "prof/error.h"
#include "prof/strfmt.h"

/* Each filtered table's lowest and highest rowid of each process, and of
 * those the views show; in the span, row THREAD_SPAN holds the lowest and
 * highest thread id the shown processes can have. */
#define ROWS_TABLE MEMO_RANK_ROWS
#define SPAN_TABLE "perfkit_rank_span"
#define THREAD_SPAN "-1"
/* Which filtered tables ROWS_TABLE bounds (1) or cannot (0). Both tables
 * are of every row, whatever the views show, so they outlive the views:
 * an analysis rank by rank scopes and unscopes the store (the HTML report
 * of a job four times), and each time they would cost a pass over every
 * table. */
#define NOTED_TABLE MEMO_RANK_ROWS_NOTED

/* The tables holding a process's rows, and the column that says whose. */
static const struct filtered_table {
	const char *table;
	const char *by;          /* "globalPid" or "globalTid" */
	bool keep_no_thread;     /* rows without a thread stay (NVTX domain rows) */
} filtered[] = {
	{ PROF_T_KERNEL, "globalPid", false },
	{ PROF_T_MEMCPY, "globalPid", false },
	{ PROF_T_MEMSET, "globalPid", false },
	{ PROF_T_GRAPH_TRACE, "globalPid", false },
	{ PROF_T_MEMORY, "globalPid", false },
	{ PROF_T_PROCESSES, "globalPid", false },
	{ PROF_T_KERNEL_METRICS, "globalPid", false },
	{ PROF_T_GPU_METRIC_TYPES, "globalPid", false },
	{ PROF_T_RUNTIME, "globalTid", false },
	{ PROF_T_DRIVER, "globalTid", false },
	{ PROF_T_SYNC, "globalTid", false },
	{ PROF_T_NVTX, "globalTid", true },
	{ PROF_T_THREAD_NAMES, "globalTid", false },
	{ PROF_T_OVERHEAD, "globalTid", false },
	/* Python's stacks, samples and calls' stacks (--python-sampling,
	 * --python-backtrace) */
	{ PROF_T_PY_SAMPLES, "globalPid", false },
	{ PROF_T_PY_FRAMES, "globalPid", false },
	{ PROF_T_PY_CUDA_CALLS, "globalPid", false },
	/* the capture windows: the chosen processes' are the capture's stretches */
	{ PROF_T_CAPTURE_WINDOWS, "globalPid", false },
};

/* prof_store__restrict, a table the store has no form of (an analysis
 * table the file lacks) left as it is. */
static int restrict_table(struct prof_store *s, const char *table, const char *where,
			  struct prof_error *err)
{
	int rc = prof_store__restrict(s, table, where, err);

	return rc == 1 ? 0 : rc;
}

/* Whether filtered table i's rows carry the capture's times (its extent
 * counts them): NVTX's, whose marks and domains count otherwise, are not
 * noted (note_rows). */
static bool timed_table(int i)
{
	return !filtered[i].keep_no_thread && sum_capture__extent_table(filtered[i].table);
}

/* The walk of f's rows by process that the calls' census made (a table
 * of calls of a finished capture, whose rows say their thread: the
 * census's process is its thread's): true and *w, else false. by: the
 * column f's rows say their process in. */
static bool census_rows(struct prof_store *s, const struct filtered_table *f, const char *by,
			const struct pid_rows_walk **w)
{
	struct prof_error ignored = { 0 };
	struct call_census calls;

	*w = NULL;
	return strcmp(by, "globalTid") == 0 && sum_call_census(s, f->table, &calls, &ignored) == 1 &&
	       sum_pid_rows__take(s, f->table, w);
}

/* Filtered table i's rows walked in the table's order (pid_rows.h) into
 * *w: the calls' census's walk where it made one, else a walk of its own
 * into own; NULL where the table has no rowids to bound (a WITHOUT ROWID
 * table keeps the condition alone) or memory ran out in the walk. 0, or
 * PROF_E_NOMEM for its statement. */
static int walk_rows(struct prof_store *s, int i, const char *by, const char *rows, struct pid_rows_walk *own,
		     const struct pid_rows_walk **w, struct prof_error *err)
{
	const struct filtered_table *f = &filtered[i];
	struct prof_error ignored = { 0 };
	const struct pid_rows_walk *census = NULL;
	struct prof_cursor *c = NULL;
	/* a table of timed rows notes each process's first and last record
	 * in the same pass: a rank's extent without a pass of its own */
	bool timing = timed_table(i);
	char *sql;
	int rc;

	*w = NULL;
	if (census_rows(s, f, by, &census)) {
		*w = census;
		return 0;
	}
	sql = prof_strfmt("SELECT rowid, " PROF_SQL_GLOBAL_PID_OF_TID("%s") "%s FROM (%s) WHERE %s IS NOT NULL",
			  by, timing ? ", start, end" : "", rows, by);
	if (!sql)
		return prof_error__set(err, PROF_E_NOMEM, "out of memory");
	rc = prof_cursor__open(s, sql, &c, &ignored);
	free(sql);
	if (rc)
		return 0;
	pid_rows_walk__begin(own, timing);
	while ((rc = prof_cursor__next(c, &ignored)) == 1)
		pid_rows_walk__add(own, prof_cursor__int64(c, 0), prof_cursor__int64(c, 1),
				   timing ? prof_cursor__kind(c, 2) : PROF_VALUE_NULL, timing ? prof_cursor__int64(c, 2) : 0,
				   timing ? prof_cursor__kind(c, 3) : PROF_VALUE_NULL, timing ? prof_cursor__int64(c, 3) : 0);
	prof_cursor__close(c);
	if (rc == 0 && pid_rows_walk__end(own))
		*w = own;
	return 0;
}

/* ROWS_TABLE's rows of filtered table i, whose process column is by: 1
 * when they were taken, 0 when the table has no rowids to bound. One pass
 * in the table's order, folding each run of one process's rows: a merge
 * writes each capture's rows together, so the runs are few, where SQL's
 * GROUP BY sorted every row by its process. */
static int note_rows(struct prof_store *s, int i, const char *by, bool *timed, struct prof_error *err)
{
	const struct filtered_table *f = &filtered[i];
	const char *rows = prof_store__all_rows(s, f->table);
	struct prof_error ignored = { 0 };
	struct prof_cursor *c = NULL;
	struct pid_rows_walk own = { 0 };
	const struct pid_rows_walk *w = NULL;
	int rc;

	*timed = false;
	/* the NVTX joins keep their (globalTid, start) index, which the
	 * planner would trade for the run of rowids */
	if (!rows || f->keep_no_thread)
		return 0;
	rc = walk_rows(s, i, by, rows, &own, &w, err);
	if (rc < 0)
		return rc;
	rc = w ? prof_cursor__open(s, "INSERT INTO temp." ROWS_TABLE " VALUES (?1, ?2, ?3, ?4, ?5, ?6)", &c,
				   &ignored)
	       : -1;
	for (size_t k = 0; rc == 0 && k < w->n; k++) {
		const struct pid_rows *v = &w->v[k];
		bool any = w->timing && v->first <= v->last;

		prof_cursor__reset(c);
		if (prof_cursor__bind_int64(c, 1, i) || prof_cursor__bind_int64(c, 2, v->pid) ||
		    prof_cursor__bind_int64(c, 3, v->lo) || prof_cursor__bind_int64(c, 4, v->hi) ||
		    (any ? prof_cursor__bind_int64(c, 5, v->first) : prof_cursor__bind_text(c, 5, NULL)) ||
		    (any ? prof_cursor__bind_int64(c, 6, v->last) : prof_cursor__bind_text(c, 6, NULL)))
			rc = -1;
		else
			rc = prof_cursor__next(c, &ignored) < 0 ? -1 : 0;
	}
	prof_cursor__close(c);
	/* any failure, as of the INSERT ... GROUP BY this replaces: the
	 * table keeps the condition alone (its rows, unused then, bound
	 * nothing) */
	*timed = rc == 0 && w->timing;
	pid_rows_walk__exit(&own);
	return rc == 0 ? 1 : 0;
}

/* note_rows, taken once per connection: kept, the answer NOTED_TABLE kept. */
static int noted_rows(struct prof_store *s, int i, const char *by, bool kept, struct prof_error *err)
{
	struct prof_cursor *c = NULL;
	bool timed;
	int rc, bounded;

	if (kept) {
		rc = prof_cursor__open(s, "SELECT bounded FROM temp." NOTED_TABLE " WHERE tbl = ?1", &c, err);
		if (rc)
			return rc;
		prof_cursor__bind_int64(c, 1, i);
		rc = prof_cursor__next(c, err);
		bounded = rc > 0 ? (int)prof_cursor__int64(c, 0) : 0;
		prof_cursor__close(c);
		return rc < 0 ? rc : bounded;
	}
	bounded = note_rows(s, i, by, &timed, err);
	if (bounded < 0)
		return bounded;
	rc = prof_cursor__open(s, "INSERT INTO temp." NOTED_TABLE " VALUES (?1, ?2, ?3)", &c, err);
	if (rc)
		return rc;
	prof_cursor__bind_int64(c, 1, i);
	prof_cursor__bind_int64(c, 2, bounded);
	prof_cursor__bind_int64(c, 3, timed);
	rc = prof_cursor__next(c, err);
	prof_cursor__close(c);
	return rc < 0 ? rc : bounded;
}

/* Whether table (kept where it has rows of no thread) has such rows: NVTX
 * rows of nsys exports may, perfkit's never do. */
static int has_threadless_rows(struct prof_store *s, const char *table, const char *by,
			       bool *yes, struct prof_error *err)
{
	const char *rows = prof_store__all_rows(s, table);
	struct prof_cursor *c;
	char *sql;
	int rc;

	*yes = false;
	if (!rows)
		return 0;
	sql = prof_strfmt("SELECT EXISTS (SELECT 1 FROM (%s) WHERE %s IS NULL)", rows, by);
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

/* SPAN_TABLE: the rowids of the processes the views show now. */
static int note_span(struct prof_store *s, struct prof_error *err)
{
	return prof_store__exec(s, "DELETE FROM temp." SPAN_TABLE "; INSERT INTO temp." SPAN_TABLE
				" SELECT tbl, min(lo), max(hi) FROM temp." ROWS_TABLE " WHERE globalPid IN"
				" (SELECT globalPid FROM temp." PIDS_TABLE ") GROUP BY tbl; INSERT INTO temp."
				SPAN_TABLE " SELECT " THREAD_SPAN ", min(globalPid), max(globalPid) + 16777215"
				" FROM temp." PIDS_TABLE,
				err);
}

int sum_ranks__shown_extent(struct prof_store *s, const char *table, int64_t *lo, int64_t *hi,
			    struct prof_error *err)
{
	struct prof_cursor *c = NULL;
	bool narrowed = false, noted = false;
	int i = 0, rc;

	while (i < (int)(sizeof filtered / sizeof filtered[0]) && strcmp(filtered[i].table, table))
		i++;
	/* the processes' rows whole: no stretch of time cut from them */
	if (i == (int)(sizeof filtered / sizeof filtered[0]) || !timed_table(i) || !prof_store__restricted(s) ||
	    prof_store__time_restricted(s))
		return 0;
	rc = sum_temp__exists(s, PIDS_TABLE, &narrowed, err);
	if (rc == 0 && narrowed)
		rc = sum_temp__exists(s, NOTED_TABLE, &noted, err);
	if (rc || !noted)
		return rc;
	rc = prof_cursor__open(s, "SELECT (SELECT timed FROM temp." NOTED_TABLE " WHERE tbl = ?1),"
			       " min(first), max(last) FROM temp." ROWS_TABLE " WHERE tbl = ?1 AND globalPid IN"
			       " (SELECT globalPid FROM temp." PIDS_TABLE ")", &c, err);
	if (rc)
		return rc;
	prof_cursor__bind_int64(c, 1, i);
	rc = prof_cursor__next(c, err);
	if (rc > 0) {
		rc = !prof_cursor__is_null(c, 0) && prof_cursor__int64(c, 0) == 1;
		*lo = prof_cursor__is_null(c, 1) ? INT64_MAX : prof_cursor__int64(c, 1);
		*hi = prof_cursor__is_null(c, 2) ? INT64_MIN : prof_cursor__int64(c, 2);
	}
	prof_cursor__close(c);
	return rc;
}

static int create_views(struct prof_store *s, struct prof_error *err)
{
	char where[512];
	const char *types_by;
	bool made, kept;
	int rc = sum_temp__exists(s, PIDS_TABLE, &made, err);

	if (rc || made)
		return rc;
	rc = sum_temp__exists(s, NOTED_TABLE, &kept, err);
	if (rc == 0)
		rc = prof_store__exec(s, "CREATE TEMP TABLE " PIDS_TABLE " (globalPid INTEGER PRIMARY KEY);"
				      " CREATE TEMP TABLE " SPAN_TABLE " (tbl INTEGER PRIMARY KEY,"
				      " lo INTEGER, hi INTEGER)", err);
	if (rc == 0 && !kept)
		rc = prof_store__exec(s, "CREATE TEMP TABLE " ROWS_TABLE " (tbl INTEGER, globalPid INTEGER,"
				      " lo INTEGER, hi INTEGER, first INTEGER, last INTEGER); CREATE TEMP TABLE " NOTED_TABLE
				      " (tbl INTEGER PRIMARY KEY, bounded INTEGER, timed INTEGER)", err);
	for (size_t i = 0; rc == 0 && i < sizeof filtered / sizeof filtered[0]; i++) {
		const struct filtered_table *f = &filtered[i];
		/* nsys exports differ: a table may say whose by the other
		 * column, and one that says by neither is not a process's */
		const char *by = prof_store__owner_column(s, f->table, f->by);
		int bounded;
		bool threadless = false;
		size_t len = 0;

		if (!by)
			continue;
		bounded = noted_rows(s, (int)i, by, kept, err);
		if (bounded < 0)
			return bounded;
		if (bounded)
			len = (size_t)snprintf(where, sizeof where, "rowid BETWEEN (SELECT lo FROM temp."
					       SPAN_TABLE " WHERE tbl = %zu) AND (SELECT hi FROM temp."
					       SPAN_TABLE " WHERE tbl = %zu) AND ", i, i);
		if (f->keep_no_thread) {
			rc = has_threadless_rows(s, f->table, by, &threadless, err);
			if (rc < 0)
				return rc;
		}
		/* an OR with the rows of no thread would cost the seek, so it
		 * is only there where such rows are */
		if (!bounded && f->keep_no_thread)
			len = (size_t)snprintf(where, sizeof where, "(%s%s BETWEEN (SELECT lo FROM temp."
					       SPAN_TABLE " WHERE tbl = " THREAD_SPAN ") AND (SELECT hi"
					       " FROM temp." SPAN_TABLE " WHERE tbl = " THREAD_SPAN "))"
					       " AND ", threadless ? "globalTid IS NULL OR " : "", by);
		snprintf(where + len, sizeof where - len, "(%s" PROF_SQL_GLOBAL_PID_OF_TID("%s")
			 " IN (SELECT globalPid FROM temp." PIDS_TABLE "))",
			 threadless ? "globalTid IS NULL OR " : "", by);
		rc = restrict_table(s, f->table, where, err);
	}
	/* samples of the chosen processes' samplers, where they say whose */
	types_by = prof_store__owner_column(s, PROF_T_GPU_METRIC_TYPES, "globalPid");
	if (rc == 0 && types_by && strcmp(types_by, "globalPid") == 0)
		rc = restrict_table(s, PROF_T_GPU_METRICS, "typeId IN (SELECT typeId FROM main."
				    PROF_T_GPU_METRIC_TYPES " WHERE globalPid IN (SELECT globalPid"
				    " FROM temp." PIDS_TABLE "))", err);
	return rc;
}

/* Whether sql (?1 the process) finds a row: 1, 0, or < 0. */
static int exists(struct prof_store *s, char *sql, int64_t global_pid, struct prof_error *err)
{
	struct prof_cursor *c;
	int rc;

	if (!sql)
		return prof_error__set(err, PROF_E_NOMEM, "out of memory");
	rc = prof_cursor__open(s, sql, &c, err);
	free(sql);
	if (rc < 0)
		return rc;
	prof_cursor__bind_int64(c, 1, global_pid);
	rc = prof_cursor__next(c, err);
	rc = rc > 0 ? prof_cursor__int64(c, 0) != 0 : rc;
	prof_cursor__close(c);
	return rc;
}

static const char holds_only_key;

/* Whether a row of some table is not global_pid's (holds_only's question),
 * read from every row whatever the views show: 1, 0, or < 0. */
static int other_rows(struct prof_store *s, int64_t global_pid, struct prof_error *err);

int sum_ranks__holds_only(struct prof_store *s, int64_t global_pid, bool *only, struct prof_error *err)
{
	char tag[32];
	int64_t answer = 0;
	int got, rc;

	/* of every row: the diagnosis of a one-rank capture asks it, and the
	 * HTML page's step after it, each a pass over every call */
	snprintf(tag, sizeof tag, "%lld", (long long)global_pid);
	got = sum_shared__take(s, &holds_only_key, tag, &answer, 1);
	if (got == 1) {
		*only = answer == 0;
		return 0;
	}
	rc = other_rows(s, global_pid, err);
	answer = rc;
	if (got == 0)
		sum_shared__give(s, &holds_only_key, tag, &answer, 1, rc >= 0);
	*only = rc == 0;
	return rc < 0 ? rc : 0;
}

static int other_rows(struct prof_store *s, int64_t global_pid, struct prof_error *err)
{
	const char *types_by = prof_store__owner_column(s, PROF_T_GPU_METRIC_TYPES, "globalPid");
	int rc = 0;

	/* a row sum_ranks__scope would leave out, table by table */
	for (size_t i = 0; rc == 0 && i < sizeof filtered / sizeof filtered[0]; i++) {
		const struct filtered_table *f = &filtered[i];
		const char *by = prof_store__owner_column(s, f->table, f->by);
		const char *rows = prof_store__all_rows(s, f->table);
		const struct pid_rows_walk *census;

		if (!by || !rows)
			continue;
		/* the calls, which every reader's census walks (a pass over
		 * every call where each thread is one process's) */
		if (census_rows(s, f, by, &census)) {
			rc = pid_rows_walk__other_than(census, global_pid);
			continue;
		}
		rc = exists(s, prof_strfmt("SELECT EXISTS (SELECT 1 FROM (%s) WHERE %s%s" PROF_SQL_GLOBAL_PID_OF_TID("%s")
					   " IS NOT ?1)", rows, f->keep_no_thread ? by : "",
					   f->keep_no_thread ? " IS NOT NULL AND " : "", by),
			    global_pid, err);
	}
	if (rc == 0 && types_by && strcmp(types_by, "globalPid") == 0 && prof_store__all_rows(s, PROF_T_GPU_METRICS))
		rc = exists(s, prof_strfmt("SELECT EXISTS (SELECT 1 FROM (%s) WHERE typeId NOT IN (SELECT typeId"
					   " FROM main." PROF_T_GPU_METRIC_TYPES " WHERE globalPid = ?1))",
					   prof_store__all_rows(s, PROF_T_GPU_METRICS)),
			    global_pid, err);
	return rc;
}

static int drop_views(struct prof_store *s, struct prof_error *err)
{
	int rc = 0;

	for (size_t i = 0; rc == 0 && i <= sizeof filtered / sizeof filtered[0]; i++)
		rc = restrict_table(s, i < sizeof filtered / sizeof filtered[0] ? filtered[i].table
										 : PROF_T_GPU_METRICS,
				    NULL, err);
	if (rc == 0)
		rc = prof_store__exec(s, "DROP TABLE IF EXISTS temp." PIDS_TABLE "; DROP TABLE IF EXISTS"
				      " temp." SPAN_TABLE, err);
	return rc;
}

/* Parse "N[,M...]" into ranks (at most max); PROF_E_USAGE with a message. */
static int parse_list(const char *list, int *ranks, int max, int *n, struct prof_error *err)
{
	const char *p = list;

	*n = 0;
	if (!list || !*list)
		return prof_error__set(err, PROF_E_USAGE, "--rank needs a rank number, e.g. --rank=0,1");
	while (*p) {
		char *end;
		long v;

		if (*p < '0' || *p > '9')
			return prof_error__set(err, PROF_E_USAGE,
					       "--rank takes rank numbers separated by commas, not '%s'",
					       list);
		v = strtol(p, &end, 10);
		if (v > INT32_MAX || (*end && *end != ','))
			return prof_error__set(err, PROF_E_USAGE,
					       "--rank takes rank numbers separated by commas, not '%s'",
					       list);
		if (*n == max)
			return prof_error__set(err, PROF_E_USAGE, "--rank takes at most %d ranks", max);
		ranks[(*n)++] = (int)v;
		p = *end ? end + 1 : end;
		if (*end == ',' && !*p)
			return prof_error__set(err, PROF_E_USAGE,
					       "--rank takes rank numbers separated by commas, not '%s'",
					       list);
	}
	return 0;
}

/* "ranks 0-3", "ranks 0, 2", "no ranks" for a message. */
static void describe_ranks(const struct sum_ranks *r, char *buf, size_t cap)
{
	int lo = -1, hi = -1;
	bool contiguous = true;
	size_t len;

	for (int i = 0; i < r->n; i++) {
		if (r->p[i].rank < 0)
			continue;
		if (lo < 0)
			lo = r->p[i].rank;
		else if (r->p[i].rank != hi + 1 && r->p[i].rank != hi)
			contiguous = false;
		hi = r->p[i].rank;
	}
	if (lo < 0) {
		snprintf(buf, cap, "no ranks");
		return;
	}
	if (contiguous) {
		if (lo == hi)
			snprintf(buf, cap, "rank %d", lo);
		else
			snprintf(buf, cap, "ranks %d-%d", lo, hi);
		return;
	}
	len = (size_t)snprintf(buf, cap, "ranks");
	for (int i = 0; i < r->n && len < cap; i++)
		if (r->p[i].rank >= 0)
			len += (size_t)snprintf(buf + len, cap - len, "%s %d", len > 5 ? "," : "",
						r->p[i].rank);
}

int summary__select_ranks(struct prof_store *s, const char *list, struct prof_error *err)
{
	enum { MAX_CHOSEN = 4096 };
	int *want = malloc(sizeof *want * MAX_CHOSEN), n = 0, chosen = 0, rc;
	struct sum_ranks r;
	char have[160];

	if (!want)
		return prof_error__set(err, PROF_E_NOMEM, "out of memory");
	rc = parse_list(list, want, MAX_CHOSEN, &n, err);
	if (rc == 0)
		rc = sum_ranks__load(s, &r, err);
	if (rc) {
		free(want);
		return rc;
	}
	for (int i = 0; i < n && rc == 0; i++)
		if (!sum_ranks__rank(&r, want[i])) {
			describe_ranks(&r, have, sizeof have);
			rc = prof_error__set(err, PROF_E_USAGE, "%s has no rank %d (%s)",
					     prof_store__path(s), want[i], have);
		}
	if (rc == 0)
		rc = prof_store__exec(s, "DROP TABLE IF EXISTS temp." CHOICE_TABLE "; CREATE TEMP TABLE "
				      CHOICE_TABLE " (globalPid INTEGER PRIMARY KEY)", err);
	for (int i = 0; i < r.n && rc == 0; i++) {
		bool take = false;

		for (int k = 0; k < n && !take; k++)
			take = r.p[i].rank == want[k];
		if (!take)
			continue;
		chosen++;
		rc = sum_temp__exec_int(s, "INSERT OR IGNORE INTO temp." CHOICE_TABLE " VALUES (?1)",
			      r.p[i].global_pid, err);
	}
	/* every process chosen: nothing to leave out, no views to pay for */
	if (rc == 0 && chosen < r.n) {
		rc = prof_store__exec(s, "CREATE TEMP TABLE IF NOT EXISTS " FILTER_MARK " (x)", err);
		if (rc == 0)
			rc = sum_ranks__unscope(s, err);
	}
	sum_ranks__exit(&r);
	free(want);
	return rc;
}

int sum_ranks__scope(struct prof_store *s, int64_t global_pid, struct prof_error *err)
{
	int rc = create_views(s, err);

	if (rc == 0)
		rc = prof_store__exec(s, "DELETE FROM temp." PIDS_TABLE, err);
	if (rc == 0)
		rc = sum_temp__exec_int(s, "INSERT INTO temp." PIDS_TABLE " VALUES (?1)", global_pid, err);
	if (rc == 0)
		rc = note_span(s, err);
	return rc;
}

int sum_ranks__unscope(struct prof_store *s, struct prof_error *err)
{
	bool filtered;
	int rc = sum_temp__exists(s, FILTER_MARK, &filtered, err);

	if (rc)
		return rc;
	if (!filtered)
		return drop_views(s, err);
	rc = create_views(s, err);
	if (rc == 0)
		rc = prof_store__exec(s, "DELETE FROM temp." PIDS_TABLE "; INSERT INTO temp." PIDS_TABLE
				      " SELECT globalPid FROM temp." CHOICE_TABLE, err);
	if (rc == 0)
		rc = note_span(s, err);
	return rc;
}
