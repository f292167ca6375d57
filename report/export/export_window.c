/* export_window.c - the time window and NVTX range filter of the exports. */
#include "export_window.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "prof/escape.h"
#include "prof/tables.h"
#include "model/sql.h"
#include "model/window.h"
#include "prof/saturate.h"
#include "prof/error.h"

/* One integer from sql; text, when given, is bound to parameter text_index. */
static int query_i64(struct prof_store *s, const char *sql, int text_index, const char *text,
		     int64_t *out, bool *is_null, struct prof_error *err)
{
	struct prof_cursor *c = NULL;
	int rc;

	rc = prof_cursor__open(s, sql, &c, err);
	if (rc < 0)
		return rc;
	if (text && prof_cursor__bind_text(c, text_index, text) != 0) {
		prof_cursor__close(c);
		return prof_error__set(err, PROF_E_SQL, "cannot bind a value to: %s", sql);
	}
	rc = prof_cursor__next(c, err);
	if (rc > 0) {
		*is_null = prof_cursor__is_null(c, 0);
		*out = *is_null ? 0 : prof_cursor__int64(c, 0);
		rc = 0;
	} else if (rc == 0) {
		*is_null = true;
	}
	prof_cursor__close(c);
	return rc;
}

/* The instances of the --range range, per process, in a temporary table
 * indexed by (process, start), with m the latest end among the instances
 * starting no later (peers included). A time t lies inside some instance
 * exactly when m of the last instance starting at or before t is later than
 * t, nested or overlapping instances included: one index lookup per row
 * instead of a scan of every instance. The table always exists (empty
 * without --range), so that queries naming it prepare. Temporary tables
 * live in the connection's own temp database: the store stays read-only. */
#define RANGE_TABLE "perfkit_range_instances"

int export_window__index(const struct export_window *w, struct prof_store *s,
			 struct prof_error *err)
{
	static const char *const setup[] = {
		"CREATE TEMP TABLE IF NOT EXISTS " RANGE_TABLE " (p INTEGER, s INTEGER, m INTEGER)",
		"CREATE INDEX IF NOT EXISTS temp." RANGE_TABLE "_ps ON " RANGE_TABLE " (p, s)",
		/* parenthesised: clang takes a concatenation that ends an array's
		 * entry for a missing comma (-Wstring-concatenation) */
		("DELETE FROM temp." RANGE_TABLE),
	};
	char sql[768];
	int64_t n;
	bool null;
	int rc = 0;

	for (size_t i = 0; rc == 0 && i < sizeof setup / sizeof setup[0]; i++)
		rc = query_i64(s, setup[i], 0, NULL, &n, &null, err);
	if (rc < 0 || !w->range_name)
		return rc;
	snprintf(sql, sizeof sql,
		 "INSERT INTO temp." RANGE_TABLE " SELECT p, s, max(e) OVER (PARTITION BY p ORDER BY s) "
		 "FROM (SELECT " PROF_SQL_PID_OF_TID("n.globalTid") " AS p, n.start AS s, n.end AS e"
		 " FROM " PROF_T_NVTX " n "
		 "LEFT JOIN " PROF_T_STRINGS " t ON t.id = n.textId WHERE n.end IS NOT NULL "
		 "AND n.eventType IN (" PROF_SQL_NVTX_RANGES ") AND %s = ?1)",
		 w->nvtx_name);
	return query_i64(s, sql, 1, w->range_name, &n, &null, err);
}

bool export_window__without_capture(struct export_window *w, const struct export_filter *f)
{
	memset(w, 0, sizeof *w);
	w->from_abs_ns = INT64_MIN;
	w->to_abs_ns = INT64_MAX;
	w->range_name = f ? f->range_name : NULL;
	snprintf(w->nvtx_name, sizeof w->nvtx_name, "coalesce(t.value, n.text, '')");
	return !(f && (f->has_from || f->has_to));
}

void export_window__set_time(struct export_window *w, const struct sum_capture_time *time)
{
	w->base_ns = time->zero_ns;
	w->base_utc_ns = time->zero_utc_ns;
	w->end_ns = time->last_ns > time->zero_ns ? time->last_ns : time->zero_ns;
}

int export_window__init(struct export_window *w, struct prof_store *s,
			const struct export_filter *f, struct prof_error *err)
{
	struct sum_capture_time time;
	int64_t first, n = 0;
	bool null;
	int rc;

	(void)export_window__without_capture(w, f);
	rc = sum_capture__time(s, &time, err);
	if (rc < 0)
		return rc;
	export_window__set_time(w, &time);
	first = w->base_ns;
	/* --from=9000000000s past a capture's start is past any time: held at
	 * the limit, it selects nothing instead of wrapping round */
	w->from_abs_ns = f && f->has_from ? prof_add_saturated(first, f->from_ns) : INT64_MIN;
	w->to_abs_ns = f && f->has_to ? prof_add_saturated(first, f->to_ns) : INT64_MAX;
	if (f && f->has_from && f->has_to && f->to_ns <= f->from_ns)
		return prof_error__set(err, PROF_E_USAGE, "--to must be later than --from");
	rc = export_window__index(w, s, err);
	if (rc < 0 || !w->range_name)
		return rc;
	rc = query_i64(s, "SELECT count(*) FROM temp." RANGE_TABLE, 0, NULL, &n, &null, err);
	if (rc < 0)
		return rc;
	if (n == 0)
		return prof_error__set(err, PROF_E_USAGE, "%s: no NVTX range is named '%s'",
				       prof_store__path(s), w->range_name);
	return 0;
}

int export_window__bind(const struct export_window *w, struct prof_cursor *c,
			struct prof_error *err)
{
	int rc = prof_cursor__bind_int64(c, 1, w->from_abs_ns);

	if (rc == 0)
		rc = prof_cursor__bind_int64(c, 2, w->to_abs_ns);
	if (rc == 0)
		rc = w->range_name ? prof_cursor__bind_text(c, 3, w->range_name)
				   : prof_cursor__bind_text(c, 3, NULL);
	if (rc != 0)
		return prof_error__set(err, PROF_E_SQL, "cannot bind the export window");
	return 0;
}

int export_window__in_range(char *buf, size_t cap, const char *ts, const char *pid)
{
	int n = snprintf(buf, cap,
			 "(?3 IS NULL OR coalesce((SELECT r.m FROM temp." RANGE_TABLE " r "
			 "WHERE r.p = (%s) AND r.s <= (%s) ORDER BY r.s DESC LIMIT 1) > (%s), 0))",
			 pid, ts, ts);

	return n > 0 && (size_t)n < cap ? 0 : PROF_E_USAGE;
}

void export__say_left_out(struct prof_store *s, int64_t rows, const char *what, FILE *warn)
{
	if (rows == 0)
		return;
	fputs("perfkit: warning: ", warn ? warn : stderr);
	prof_fputs_term(warn ? warn : stderr, prof_store__path(s));
	fprintf(warn ? warn : stderr, ": %" PRId64 " row%s " SUM_BAD_SPAN_WORDS " %s left out of %s\n",
		rows, rows == 1 ? "" : "s", rows == 1 ? "was" : "were", what);
}

int export__note_left_out(struct prof_store *s, const char *what, FILE *warn,
			  struct prof_error *err)
{
	int64_t rows;
	int rc = sum_bad_spans__count(s, &rows, err);

	if (rc == 0)
		export__say_left_out(s, rows, what, warn);
	return rc;
}

size_t export_format_us(char *buf, int64_t ns)
{
	/* negative values (an event before the base) keep their sign on the
	 * whole part and a positive fraction */
	uint64_t mag = ns < 0 ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;
	uint64_t whole = mag / 1000, frac = mag % 1000;
	char digits[24], *p = digits + sizeof digits;
	size_t n = 0;

	do {
		*--p = (char)('0' + whole % 10);
		whole /= 10;
	} while (whole);
	if (ns < 0)
		buf[n++] = '-';
	memcpy(buf + n, p, (size_t)(digits + sizeof digits - p));
	n += (size_t)(digits + sizeof digits - p);
	buf[n++] = '.';
	buf[n++] = (char)('0' + frac / 100);
	buf[n++] = (char)('0' + frac / 10 % 10);
	buf[n++] = (char)('0' + frac % 10);
	buf[n] = '\0';
	return n;
}
