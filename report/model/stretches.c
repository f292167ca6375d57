/* stretches.c - the capture's stretches (capture_windows.h): the times in
 * which it recorded. A capture of the whole run is one stretch; a capture
 * made of windows is the union of its windows, and the time between them
 * was never recorded: it is not the GPU's idle time, nor part of a span,
 * and no step crosses it. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/capture_windows.h"
#include "model/window.h"
#include "prof/array.h"
#include "prof/saturate.h"
#include "prof/tables.h"

/* Adds [a, b) clipped to [lo, hi) to the union *st built in start order. */
static int add_stretch(struct sum_stretches *st, size_t *cap, int64_t a, int64_t b, int64_t lo,
		       int64_t hi)
{
	if (a < lo)
		a = lo;
	if (b > hi)
		b = hi;
	if (b <= a)
		return 0;
	if (st->n > 0 && a <= st->v[st->n - 1].end_ns) {
		if (b > st->v[st->n - 1].end_ns)
			st->v[st->n - 1].end_ns = b;
		return 0;
	}
	if (prof_array__grow(&st->v, cap, (size_t)st->n + 1, sizeof *st->v))
		return PROF_E_NOMEM;
	st->v[st->n++] = (struct sum_stretch){ a, b };
	return 0;
}

/* The end of the last kernel, copy or memset that starts in [a, b): the
 * GPU runs on what a window launched after the window closes, and that
 * time was recorded. INT64_MIN when none does. */
static int gpu_end(struct prof_store *s, int64_t a, int64_t b, int64_t *end, struct prof_error *err)
{
	static const char *const tables[] = { PROF_T_GPU_WORK_TABLES };

	*end = INT64_MIN;
	for (size_t t = 0; t < sizeof tables / sizeof *tables; t++) {
		char sql[160];
		struct prof_cursor *c;
		int rc;

		if (!prof_store__has_table(s, tables[t]))
			continue;
		snprintf(sql, sizeof sql, "SELECT max(end) FROM %s WHERE start >= ?1 AND start < ?2",
			 tables[t]);
		rc = prof_cursor__open(s, sql, &c, err);
		if (rc)
			return rc;
		prof_cursor__bind_int64(c, 1, a);
		prof_cursor__bind_int64(c, 2, b);
		rc = prof_cursor__next(c, err);
		if (rc == 1 && !prof_cursor__is_null(c, 0) && prof_cursor__int64(c, 0) > *end)
			*end = prof_cursor__int64(c, 0);
		prof_cursor__close(c);
		if (rc < 0)
			return rc;
	}
	return 0;
}

int sum_stretches__load(struct prof_store *s, int64_t lo, int64_t hi, struct sum_stretches *st,
			struct prof_error *err)
{
	/* A window an NVTX range opens and closes (--capture-range=nvtx:NAME)
	 * opens inside that range's push, just after the range's own start
	 * time, and closes inside its pop, just before its end: the window is
	 * taken from the first range's start to the last one's end, so that
	 * its first and last steps lie inside it. The label says NAME:
	 * "nvtx:NAME #K" (capture_window.c). */
#define NVTX_EDGE(AGG, COL, CMP_START, CMP_END, LABEL)                                        \
	"coalesce((SELECT " AGG "(n." COL ") FROM " PROF_T_NVTX " n LEFT JOIN " PROF_T_STRINGS    \
	" s ON s.id = n.textId WHERE n.globalTid BETWEEN w.globalPid AND w.globalPid + 16777215"   \
	" AND n.eventType IN (" PROF_SQL_NVTX_RANGES ") AND n.start " CMP_START                  \
	" AND n.end " CMP_END " AND coalesce(s.value, n.text) = substr(w." LABEL ", 6,"          \
	" instr(w." LABEL ", ' #') - 6)), w." COL ")"
	const char *sql =
		"SELECT CASE WHEN w.openedBy LIKE 'nvtx:% #%' THEN "
		NVTX_EDGE("max", "start", "<= w.start", ">= w.start", "openedBy") " ELSE w.start END,"
		" CASE WHEN w.end IS NOT NULL AND w.closedBy LIKE 'nvtx:% #% end' THEN "
		NVTX_EDGE("min", "end", "<= w.end", ">= w.end", "closedBy") " ELSE w.end END"
		" FROM " PROF_T_CAPTURE_WINDOWS " w WHERE w.start IS NOT NULL ORDER BY 1";
#undef NVTX_EDGE
	struct sum_capture_time time;
	bool have_time = false;
	struct sum_stretch *w = NULL;
	struct prof_cursor *c;
	size_t cap = 0, wcap = 0, n = 0;
	int rc;

	memset(st, 0, sizeof *st);
	rc = prof_cursor__open(s, sql, &c, err);
	if (rc)
		return rc;
	while ((rc = prof_cursor__next(c, err)) == 1) {
		int64_t a = prof_cursor__int64(c, 0), b;

		if (prof_cursor__is_null(c, 1)) {
			/* killed inside the window: it ends with what was recorded */
			if (!have_time && (rc = sum_capture__time(s, &time, err)) < 0)
				break;
			have_time = true;
			b = time.last_ns;
		} else {
			b = prof_cursor__int64(c, 1);
		}
		if (prof_array__grow(&w, &wcap, n + 1, sizeof *w)) {
			rc = prof_error__set(err, PROF_E_NOMEM, "out of memory");
			break;
		}
		w[n++] = (struct sum_stretch){ a, b };
	}
	prof_cursor__close(c);
	/* each window's GPU work runs on until it ends, at most to the next
	 * window's opening (recording was off in between: what starts there
	 * was launched in the window) */
	for (size_t i = 0; rc == 0 && i < n; i++) {
		int64_t next = i + 1 < n ? w[i + 1].start_ns : INT64_MAX, end;

		rc = gpu_end(s, w[i].start_ns, next, &end, err);
		if (rc == 0 && end > w[i].end_ns)
			w[i].end_ns = end;
		st->windows++;
		if (rc == 0 && add_stretch(st, &cap, w[i].start_ns, w[i].end_ns, lo, hi))
			rc = prof_error__set(err, PROF_E_NOMEM, "out of memory");
	}
	free(w);
	if (rc == 0 && st->windows == 0 && add_stretch(st, &cap, lo, hi, lo, hi))
		rc = prof_error__set(err, PROF_E_NOMEM, "out of memory");
	if (rc < 0) {
		sum_stretches__exit(st);
		return rc;
	}
	return 0;
}

int64_t sum_stretches__covered(const struct sum_stretches *st, int64_t a, int64_t b)
{
	int64_t ns = 0;

	for (int i = 0; i < st->n && st->v[i].start_ns < b; i++) {
		int64_t x = st->v[i].start_ns > a ? st->v[i].start_ns : a;
		int64_t y = st->v[i].end_ns < b ? st->v[i].end_ns : b;

		if (y > x)
			ns = prof_add_saturated(ns, prof_span_saturated(x, y));
	}
	return ns;
}

int sum_stretches__first_ending_after(const struct sum_stretches *st, int64_t t)
{
	int lo = 0, hi = st->n;

	while (lo < hi) {
		int mid = lo + (hi - lo) / 2;

		if (st->v[mid].end_ns <= t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

void sum_stretches__exit(struct sum_stretches *st)
{
	free(st->v);
	memset(st, 0, sizeof *st);
}
