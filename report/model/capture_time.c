/* capture_time.c - the capture's time base (window.h): the zero that every
 * time perfkit shows counts from, and the extent of what was recorded.
 * Every reader asks here, so that diagnose's "+x s", the reports' start
 * columns, the traces, the HTML plots and --from/--to agree. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/call_census.h"
#include "model/memo.h"
#include "model/sql.h"
#include "model/window.h"
#include "model/ranks.h"
#include "rank_choice.h"
#include "prof/strfmt.h"
#include "prof/tables.h"
#include "prof/error.h"

/* The extent of every row, kept once taken: an analysis of each rank of a
 * job in turn asks once a rank, and the rows of the file do not change
 * under a reader. */
#define ALL_EXTENT_TABLE MEMO_ALL_EXTENT

/* The tables whose rows carry the capture's times. */
static const char *const extent_tables[] = {
	PROF_T_KERNEL, PROF_T_MEMCPY, PROF_T_MEMSET, PROF_T_RUNTIME, PROF_T_DRIVER, PROF_T_NVTX,
};
#define EXTENT_TABLES (sizeof extent_tables / sizeof extent_tables[0])

/* The first start and last end of table i's real rows, over %s (the table
 * or every row of it). A row with a start of 0 or less has no time (an
 * NVTX domain's registration, a copy of a context that failed), and a
 * domain's creation is no event even where it has one; rows with a bad
 * span are left out of every sum and export, and a start of INT64_MIN
 * would put the capture's start 292 years before everything drawn. Marks
 * have no end: their start is where they end. */
static const char *const extent_sql[EXTENT_TABLES] = {
	"SELECT min(start), max(end) FROM %s WHERE start > 0 AND NOT " SUM_BAD_SPAN(""),
	"SELECT min(start), max(end) FROM %s WHERE start > 0 AND NOT " SUM_BAD_SPAN(""),
	"SELECT min(start), max(end) FROM %s WHERE start > 0 AND NOT " SUM_BAD_SPAN(""),
	"SELECT min(start), max(end) FROM %s WHERE start > 0 AND NOT " SUM_BAD_SPAN(""),
	"SELECT min(start), max(end) FROM %s WHERE start > 0 AND NOT " SUM_BAD_SPAN(""),
	"SELECT min(start), max(coalesce(end, start)) FROM %s WHERE eventType != "
	PROF_SQL_NVTX_DOMAIN_CREATE " AND start > 0 AND (end IS NULL OR NOT " SUM_BAD_SPAN("") ")",
};

bool sum_capture__extent_table(const char *table)
{
	for (size_t i = 0; i < EXTENT_TABLES; i++)
		if (strcmp(table, extent_tables[i]) == 0)
			return true;
	return false;
}

static bool is_known(const struct sum_extent_known *known, const char *table)
{
	for (size_t i = 0; known && known->tables[i]; i++)
		if (strcmp(known->tables[i], table) == 0)
			return true;
	return false;
}

/* The earliest start and latest end of the real rows (INT64_MAX and
 * INT64_MIN when there are none): of the rows the store shows now when
 * all_rows is false, else of every row, whatever --rank or a rank's scope
 * narrowed the tables to; known's tables are not read again. */
static int records_extent(struct prof_store *s, bool all_rows, const struct sum_extent_known *known,
			  const char *only, int64_t *lo, int64_t *hi, struct prof_error *err)
{
	*lo = known ? known->lo : INT64_MAX;
	*hi = known ? known->hi : INT64_MIN;
	for (size_t i = 0; i < EXTENT_TABLES; i++) {
		const char *rows = all_rows ? prof_store__all_rows(s, extent_tables[i]) : NULL;
		char *from, *sql;
		struct prof_cursor *c = NULL;
		int rc;

		if (is_known(known, extent_tables[i]) || (only && strcmp(only, extent_tables[i])))
			continue;
		/* of every row: the calls' census (call_census.h) */
		if (all_rows || !prof_store__restricted(s)) {
			struct call_census census;

			rc = sum_call_census(s, extent_tables[i], &census, err);
			if (rc < 0)
				return rc;
			if (rc == 1) {
				*lo = census.first < *lo ? census.first : *lo;
				*hi = census.last > *hi ? census.last : *hi;
				continue;
			}
		}
		/* the shown processes' own, noted with their rows (rank_filter.c) */
		if (!all_rows) {
			int64_t tlo, thi;

			rc = sum_ranks__shown_extent(s, extent_tables[i], &tlo, &thi, err);
			if (rc < 0)
				return rc;
			if (rc == 1) {
				*lo = tlo < *lo ? tlo : *lo;
				*hi = thi > *hi ? thi : *hi;
				continue;
			}
		}
		from = rows ? prof_strfmt("(%s) AS t", rows) : NULL;
		sql = prof_strfmt(extent_sql[i], from ? from : extent_tables[i]);
		free(from);
		if (!sql)
			return prof_error__set(err, PROF_E_NOMEM, "out of memory");
		rc = prof_cursor__open(s, sql, &c, err);
		free(sql);
		if (rc < 0)
			return rc;
		rc = prof_cursor__next(c, err);
		if (rc > 0 && !prof_cursor__is_null(c, 0) && prof_cursor__int64(c, 0) < *lo)
			*lo = prof_cursor__int64(c, 0);
		if (rc > 0 && !prof_cursor__is_null(c, 1) && prof_cursor__int64(c, 1) > *hi)
			*hi = prof_cursor__int64(c, 1);
		prof_cursor__close(c);
		if (rc < 0)
			return rc;
	}
	return 0;
}

/* When the run began on the capture's clock, and as a UTC time, if the
 * capture says: a perfkit capture's run start (PERFKIT_META start_ns, on
 * its clock, which is the realtime clock; a job's is its first capture's,
 * on the job's time base), an nsys export's session start
 * (TARGET_INFO_SESSION_START_TIME, a UTC time; the export's times count
 * from it, unless they are UTC times themselves). first_ns: the first
 * record, to tell the two kinds of nsys times apart. */
static bool run_start(struct prof_store *s, int64_t first_ns, int64_t *start_ns, int64_t *utc_ns)
{
	struct prof_cursor *c = NULL;
	struct prof_error ignored = { 0 };
	char *meta = prof_store__meta(s, "start_ns");
	bool found = false;

	if (meta) {
		char *end;
		long long v = strtoll(meta, &end, 10);

		found = *meta && !*end && v > 0;
		*start_ns = *utc_ns = v;
		free(meta);
		if (found)
			return true;
	}
	if (prof_cursor__open(s, "SELECT utcEpochNs FROM " PROF_T_SESSION_START " LIMIT 1", &c, &ignored) < 0)
		return false;
	if (prof_cursor__next(c, &ignored) > 0 && !prof_cursor__is_null(c, 0) && prof_cursor__int64(c, 0) > 0) {
		*utc_ns = prof_cursor__int64(c, 0);
		*start_ns = first_ns != INT64_MAX && first_ns >= *utc_ns ? *utc_ns : 0;
		found = true;
	}
	prof_cursor__close(c);
	return found;
}

/* records_extent of every row: what an earlier call kept, or another
 * connection to the file found (sum_shared__take), or taken now; kept. */
static const char extent_key;

static int kept_extent(struct prof_store *s, const struct sum_extent_known *known, int64_t *lo,
		       int64_t *hi, struct prof_error *err)
{
	struct prof_cursor *c = NULL;
	bool kept;
	int rc = sum_temp__exists(s, ALL_EXTENT_TABLE, &kept, err);

	if (rc)
		return rc;
	if (!kept) {
		int64_t v[2];
		int got = sum_shared__take(s, &extent_key, "", v, 2);

		if (got == 1) {
			*lo = v[0];
			*hi = v[1];
		} else {
			rc = records_extent(s, true, known, NULL, lo, hi, err);
			v[0] = *lo;
			v[1] = *hi;
			if (got == 0)
				sum_shared__give(s, &extent_key, "", v, 2, rc == 0);
		}
		if (rc == 0)
			rc = prof_store__exec(s, "CREATE TEMP TABLE " ALL_EXTENT_TABLE " (lo INTEGER, hi INTEGER)",
					      err);
		if (rc == 0)
			rc = prof_cursor__open(s, "INSERT INTO temp." ALL_EXTENT_TABLE " VALUES (?1, ?2)", &c, err);
		if (rc == 0) {
			prof_cursor__bind_int64(c, 1, *lo);
			prof_cursor__bind_int64(c, 2, *hi);
			rc = prof_cursor__next(c, err);
		}
		prof_cursor__close(c);
		return rc < 0 ? rc : 0;
	}
	rc = prof_cursor__open(s, "SELECT lo, hi FROM temp." ALL_EXTENT_TABLE, &c, err);
	if (rc)
		return rc;
	rc = prof_cursor__next(c, err);
	if (rc > 0) {
		*lo = prof_cursor__int64(c, 0);
		*hi = prof_cursor__int64(c, 1);
	}
	prof_cursor__close(c);
	return rc < 0 ? rc : 0;
}

/* records_extent of every row: the rows shown when the views show every
 * process, else kept_extent's. */
static int all_extent(struct prof_store *s, const struct sum_capture_time *shown, int64_t *lo,
		      int64_t *hi, struct prof_error *err)
{
	bool narrowed;
	int rc = sum_temp__exists(s, PIDS_TABLE, &narrowed, err);

	if (rc == 0 && !narrowed) {
		*lo = shown->first_ns;
		*hi = shown->last_ns;
		return 0;
	}
	return rc ? rc : kept_extent(s, NULL, lo, hi, err);
}

/* t's zero from the whole capture's first record (all_first) and the
 * run's start, where the capture says it. */
static void set_zero(struct prof_store *s, int64_t all_first, struct sum_capture_time *t)
{
	int64_t start_ns = 0, utc_ns = 0;

	/* the run's start, unless something was recorded earlier */
	if (run_start(s, all_first, &start_ns, &utc_ns) && start_ns <= all_first) {
		t->zero_ns = start_ns;
		t->zero_utc_ns = utc_ns;
	} else if (all_first != INT64_MAX) {
		t->zero_ns = all_first;
		/* a perfkit capture's clock is the realtime clock */
		t->zero_utc_ns = start_ns == utc_ns ? all_first : utc_ns + (all_first - start_ns);
	}
}

int sum_capture__time_known(struct prof_store *s, const struct sum_extent_known *known,
			    struct sum_capture_time *t, struct prof_error *err)
{
	int64_t all_first, all_last;
	int rc;

	memset(t, 0, sizeof *t);
	/* views that show every row show kept_extent's: the many readers of
	 * one capture (the HTML report's sections) take it once */
	if (!prof_store__restricted(s)) {
		rc = kept_extent(s, known, &all_first, &all_last, err);
		t->first_ns = all_first;
		t->last_ns = all_last;
	} else {
		rc = records_extent(s, false, NULL, NULL, &t->first_ns, &t->last_ns, err);
		if (rc == 0)
			rc = all_extent(s, t, &all_first, &all_last, err);
	}
	if (rc < 0)
		return rc;
	set_zero(s, all_first, t);
	if (t->last_ns == INT64_MIN)
		t->first_ns = t->last_ns = 0;
	return 0;
}

int sum_capture__zero(struct prof_store *s, struct sum_capture_time *t, struct prof_error *err)
{
	int64_t all_first, all_last;
	bool narrowed = false;
	int rc = prof_store__restricted(s) ? sum_temp__exists(s, PIDS_TABLE, &narrowed, err) : 0;

	if (rc)
		return rc;
	/* views that narrow by time alone (--window) make the zero of the
	 * rows they show (all_extent): those rows are read as before */
	if (prof_store__restricted(s) && !narrowed) {
		rc = sum_capture__time(s, t, err);
		t->first_ns = t->last_ns = 0;
		return rc;
	}
	memset(t, 0, sizeof *t);
	rc = kept_extent(s, NULL, &all_first, &all_last, err);
	if (rc < 0)
		return rc;
	set_zero(s, all_first, t);
	return 0;
}

int sum_capture__time(struct prof_store *s, struct sum_capture_time *t, struct prof_error *err)
{
	return sum_capture__time_known(s, NULL, t, err);
}

int sum_capture__table_extent(struct prof_store *s, const char *table, int64_t *lo, int64_t *hi,
			      struct prof_error *err)
{
	return records_extent(s, true, NULL, table, lo, hi, err);
}
