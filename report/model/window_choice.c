/* window_choice.c - `--window=K` (capture_windows.h): the reading narrowed
 * to the K-th capture window of each process. Two conditions do it, each
 * set through the store's time slot (prof_store__restrict_time), which
 * --rank's process slot leaves alone: the windows table shows only the
 * chosen windows, so that the capture's stretches are theirs, and every
 * table of timed rows shows only the rows that start from the first chosen
 * window's start up to the next window's: what those windows recorded,
 * with the GPU work they launched that ran on past their close. The bounds
 * live in a temporary table the conditions read, so no value is spliced
 * into SQL. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rank_choice.h"
#include "model/capture_windows.h"
#include "prof/strfmt.h"
#include "prof/tables.h"

#define CHOSEN_TABLE "perfkit_window_chosen"
#define SLICE_TABLE "perfkit_window_slice"

/* The tables whose rows carry a time, and its column. */
static const struct timed_table {
	const char *table, *column;
} timed[] = {
	{ PROF_T_KERNEL, "start" },	   { PROF_T_MEMCPY, "start" },
	{ PROF_T_MEMSET, "start" },	   { PROF_T_RUNTIME, "start" },
	{ PROF_T_DRIVER, "start" },	   { PROF_T_SYNC, "start" },
	{ PROF_T_NVTX, "start" },	   { PROF_T_MEMORY, "start" },
	{ PROF_T_OVERHEAD, "start" },	   { PROF_T_UM_CPU_FAULTS, "start" },
	{ PROF_T_UM_GPU_FAULTS, "start" }, { PROF_T_PY_SAMPLES, "start" },
	{ PROF_T_GPU_METRICS, "timestamp" }, { PROF_T_GRAPH_TRACE, "start" },
};

/* The windows numbered from 1 in start order within their process. */
#define NUMBERED "SELECT globalPid, id, start, end, row_number() OVER" \
		 " (PARTITION BY globalPid ORDER BY start, id) AS k FROM " PROF_T_CAPTURE_WINDOWS \
		 " WHERE start IS NOT NULL"

/* One integer a query answers (dflt when it answers NULL or nothing). */
static int query_int(struct prof_store *s, const char *sql, int64_t dflt, int64_t *v,
		     struct prof_error *err)
{
	struct prof_cursor *c;
	int rc = prof_cursor__open(s, sql, &c, err);

	if (rc)
		return rc;
	rc = prof_cursor__next(c, err);
	*v = rc == 1 && !prof_cursor__is_null(c, 0) ? prof_cursor__int64(c, 0) : dflt;
	prof_cursor__close(c);
	return rc < 0 ? rc : 0;
}

/* The K-th windows into CHOSEN_TABLE; how many windows the process with
 * the most has, and how many processes have some (to say so when there is
 * no K-th). */
static int choose(struct prof_store *s, int k, int64_t *chosen, int64_t *most, int64_t *procs,
		  struct prof_error *err)
{
	int rc = prof_store__exec(s, "DROP TABLE IF EXISTS temp." CHOSEN_TABLE ";"
				  " CREATE TEMP TABLE " CHOSEN_TABLE " (globalPid INTEGER, id INTEGER)", err);

	if (rc == 0)
		rc = sum_temp__exec_int(s, "INSERT INTO temp." CHOSEN_TABLE " SELECT globalPid, id FROM (" NUMBERED
			       ") WHERE k = ?1", k, err);
	if (rc == 0)
		rc = query_int(s, "SELECT count(*) FROM temp." CHOSEN_TABLE, 0, chosen, err);
	if (rc == 0)
		rc = query_int(s, "SELECT max(k) FROM (" NUMBERED ")", 0, most, err);
	if (rc == 0)
		rc = query_int(s, "SELECT count(DISTINCT globalPid) FROM " PROF_T_CAPTURE_WINDOWS, 0, procs,
			       err);
	return rc;
}

/* SLICE_TABLE's one row: from the first chosen window's start to the
 * start of the first window that is not chosen and starts after every
 * chosen one has ended (an open window has no end: the slice runs on). */
static int make_slice(struct prof_store *s, struct prof_error *err)
{
	static const char *const fill =
		"INSERT INTO temp." SLICE_TABLE " SELECT"
		" (SELECT min(w.start) FROM " PROF_T_CAPTURE_WINDOWS " w JOIN temp." CHOSEN_TABLE
		"  c ON c.globalPid = w.globalPid AND c.id = w.id),"
		" coalesce((SELECT min(o.start) FROM " PROF_T_CAPTURE_WINDOWS " o"
		"  WHERE (o.globalPid, o.id) NOT IN (SELECT globalPid, id FROM temp." CHOSEN_TABLE ")"
		"  AND o.start >= (SELECT max(coalesce(w.end, ?1)) FROM " PROF_T_CAPTURE_WINDOWS " w"
		"   JOIN temp." CHOSEN_TABLE " c ON c.globalPid = w.globalPid AND c.id = w.id)), ?1)";
	int rc = prof_store__exec(s, "DROP TABLE IF EXISTS temp." SLICE_TABLE ";"
				  " CREATE TEMP TABLE " SLICE_TABLE " (lo INTEGER, hi INTEGER)", err);

	return rc ? rc : sum_temp__exec_int(s, fill, INT64_MAX, err);
}

/* The time slot of every timed table and of the windows table set. */
static int restrict_tables(struct prof_store *s, struct prof_error *err)
{
	int rc = prof_store__restrict_time(s, PROF_T_CAPTURE_WINDOWS,
					   "(globalPid, id) IN (SELECT globalPid, id FROM temp." CHOSEN_TABLE ")",
					   err);

	for (size_t i = 0; rc >= 0 && i < sizeof timed / sizeof timed[0]; i++) {
		/* a row without a real time (an NVTX domain's registration) is
		 * no one window's: it stays, as every reader leaves it out of
		 * its times anyway; the column names are this file's constants */
		const char *t = timed[i].column;
		char *where = prof_strfmt("%s IS NULL OR %s <= 0 OR (%s >= (SELECT lo FROM temp." SLICE_TABLE
					  ") AND %s < (SELECT hi FROM temp." SLICE_TABLE "))", t, t, t, t);

		if (!where)
			return prof_error__set(err, PROF_E_NOMEM, "out of memory");
		rc = prof_store__restrict_time(s, timed[i].table, where, err);
		free(where);
	}
	return rc < 0 ? rc : 0;
}

int summary__select_window(struct prof_store *s, int k, struct prof_error *err)
{
	int64_t chosen = 0, most = 0, procs = 0;
	int rc = choose(s, k, &chosen, &most, &procs, err);

	if (rc)
		return rc;
	if (most == 0)
		return prof_error__set(err, PROF_E_USAGE, "--window=%d: %s has no capture windows (it "
				       "recorded the whole run)", k, prof_store__path(s));
	if (chosen == 0)
		return prof_error__set(err, PROF_E_USAGE, "--window=%d: %s has %lld capture window%s%s",
				       k, prof_store__path(s), (long long)most, most == 1 ? "" : "s",
				       procs > 1 ? " in its process with the most" : "");
	rc = make_slice(s, err);
	return rc ? rc : restrict_tables(s, err);
}
