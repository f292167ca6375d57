/* window.c - the steady-state loop of a capture: where its iterations are
 * and how many there are. `perfkit diagnose` analyses this window; `perfkit
 * diff`, `baseline` and `gate` compare captures per iteration of it, so that
 * two windows of one job holding different numbers of steps compare fairly.
 * The search looks at NVTX ranges first (window_nvtx.c), then at the period
 * of the kernel launches (window_kernels.c); docs/diagnose.md describes it
 * step by step. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "window_impl.h"

void sum_loop_options__init(struct sum_loop_options *o)
{
	o->min_iterations = 3;
	o->coverage = 0.5;
	o->tiling = 0.9;
	o->whole_run = false;
}

/* ---- the capture's extent ------------------------------------------- */

/* The tables whose rows carry the capture's times. */
static const char *const extent_tables[] = {
	PROF_T_KERNEL, PROF_T_MEMCPY, PROF_T_MEMSET, PROF_T_RUNTIME, PROF_T_DRIVER, PROF_T_NVTX,
};
#define EXTENT_TABLES (sizeof extent_tables / sizeof extent_tables[0])

/* The earliest of column 0 and the latest of column 1 of sql[i] (one row)
 * over the extent tables the store has, NULLs left out; INT64_MAX and
 * INT64_MIN when there are none. */
static int tables_extent(struct prof_store *s, const char *const sql[EXTENT_TABLES], int64_t *lo, int64_t *hi,
			 struct prof_error *err)
{
	*lo = INT64_MAX;
	*hi = INT64_MIN;
	for (size_t i = 0; i < EXTENT_TABLES; i++) {
		struct prof_cursor *c;
		int rc;

		rc = prof_cursor__open(s, sql[i], &c, err);
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

int sum_capture__extent(struct prof_store *s, int64_t *first_ns, int64_t *last_ns, struct prof_error *err)
{
	/* marks have no end: their start is where they end. A row with a bad
	 * span is left out of every export (export__note_left_out): were it to
	 * set the extent, a start of INT64_MIN would put the capture's start
	 * 292 years before everything drawn. */
	static const char *const sql[EXTENT_TABLES] = {
		"SELECT min(start), max(end) FROM " PROF_T_KERNEL " WHERE NOT " SUM_BAD_SPAN(""),
		"SELECT min(start), max(end) FROM " PROF_T_MEMCPY " WHERE NOT " SUM_BAD_SPAN(""),
		"SELECT min(start), max(end) FROM " PROF_T_MEMSET " WHERE NOT " SUM_BAD_SPAN(""),
		"SELECT min(start), max(end) FROM " PROF_T_RUNTIME " WHERE NOT " SUM_BAD_SPAN(""),
		"SELECT min(start), max(end) FROM " PROF_T_DRIVER " WHERE NOT " SUM_BAD_SPAN(""),
		"SELECT min(start), max(coalesce(end, start)) FROM " PROF_T_NVTX
		" WHERE end IS NULL OR NOT " SUM_BAD_SPAN(""),
	};
	char *meta;
	int rc = tables_extent(s, sql, first_ns, last_ns, err);

	if (rc < 0)
		return rc;
	if (*last_ns == INT64_MIN)
		*first_ns = *last_ns = 0;
	/* A perfkit capture knows when the run began; the capture starts there
	 * unless something was recorded earlier. */
	meta = prof_store__meta(s, "start_ns");
	if (meta) {
		char *end;
		long long v = strtoll(meta, &end, 10);

		if (*meta && !*end && v > 0 && v < *first_ns)
			*first_ns = v;
		free(meta);
	}
	return 0;
}

/* Diagnose's account of what was captured: its records, NVTX domains'
 * creation left out, and rows without times (a copy of a context that
 * failed, in captures made before such rows were left out) too: a start of
 * 0 made the capture span the clock's whole epoch. Rows with a bad span
 * stay out as well, as they stay out of every sum. */
static int capture_extent(struct prof_store *store, struct sum_window *w, struct prof_error *err)
{
	static const char *const sql[EXTENT_TABLES] = {
		"SELECT min(start), max(end) FROM " PROF_T_KERNEL " WHERE start > 0 AND NOT " SUM_BAD_SPAN(""),
		"SELECT min(start), max(end) FROM " PROF_T_MEMCPY " WHERE start > 0 AND NOT " SUM_BAD_SPAN(""),
		"SELECT min(start), max(end) FROM " PROF_T_MEMSET " WHERE start > 0 AND NOT " SUM_BAD_SPAN(""),
		"SELECT min(start), max(end) FROM " PROF_T_RUNTIME " WHERE start > 0 AND NOT " SUM_BAD_SPAN(""),
		"SELECT min(start), max(end) FROM " PROF_T_DRIVER " WHERE start > 0 AND NOT " SUM_BAD_SPAN(""),
		"SELECT min(start), max(coalesce(end, start)) FROM " PROF_T_NVTX
		" WHERE eventType != " PROF_SQL_NVTX_DOMAIN_CREATE " AND start > 0"
		" AND (end IS NULL OR NOT " SUM_BAD_SPAN("") ")",
	};
	int rc = tables_extent(store, sql, &w->capture_start_ns, &w->capture_end_ns, err);

	if (rc)
		return rc;
	if (w->capture_start_ns == INT64_MAX)
		w->capture_start_ns = w->capture_end_ns = 0;
	return 0;
}

/* The loop as sum_window__find and sum_window__find_marked describe it:
 * marked NULL searches, else only that NVTX range or kernel may mark it. */
static int find(struct prof_store *store, const struct sum_loop_options *o, enum sum_loop_mark mark,
		const char *marked, struct sum_window *w, struct prof_error *err)
{
	int rc = 0;

	memset(w, 0, sizeof *w);
	rc = capture_extent(store, w, err);
	if (rc)
		return rc;
	w->start_ns = w->capture_start_ns;
	w->end_ns = w->host_end_ns = w->capture_end_ns;
	w->iterations = 0;
	snprintf(w->source, sizeof w->source, "whole capture");
	if (o->whole_run) {
		w->whole_run = true;
		return 0;
	}
	if (!marked || mark == SUM_LOOP_NVTX)
		rc = window__from_nvtx(store, o, marked, w, err);
	if (rc)
		return rc;
	if (w->iterations == 0 && (!marked || mark == SUM_LOOP_KERNEL))
		rc = window__from_kernels(store, o, marked, w, err);
	if (rc)
		return rc;
	w->whole_run = w->iterations == 0;
	/* a loop found by kernels may end past the capture; keep it inside */
	if (w->end_ns > w->capture_end_ns)
		w->end_ns = w->capture_end_ns;
	if (w->iterations == 0 || w->host_end_ns <= w->start_ns || w->host_end_ns > w->end_ns)
		w->host_end_ns = w->end_ns;
	if (w->end_ns <= w->start_ns) {
		w->start_ns = w->capture_start_ns;
		w->end_ns = w->host_end_ns = w->capture_end_ns;
		w->iterations = 0;
		w->whole_run = true;
		w->mark = SUM_LOOP_NONE;
		w->mark_name[0] = '\0';
		snprintf(w->source, sizeof w->source, "whole capture");
	}
	return 0;
}

int sum_window__find(struct prof_store *store, const struct sum_loop_options *o,
		     struct sum_window *w, struct prof_error *err)
{
	return find(store, o, SUM_LOOP_NONE, NULL, w, err);
}

int sum_window__find_marked(struct prof_store *store, const struct sum_loop_options *o,
			    const struct sum_window *like, struct sum_window *w, struct prof_error *err)
{
	if (like->mark == SUM_LOOP_NONE)
		return sum_window__find(store, o, w, err);
	return find(store, o, like->mark, like->mark_name, w, err);
}

bool sum_window__same_mark(const struct sum_window *a, const struct sum_window *b)
{
	return a->mark == b->mark && strcmp(a->mark_name, b->mark_name) == 0;
}

/* ---- the iterations --------------------------------------------------- */

static int push_step(struct sum_step **v, int *n, int *cap, int64_t start_ns, int64_t end_ns,
		     int64_t tid)
{
	if (*n == *cap) {
		int ncap = *cap ? *cap * 2 : 64;
		struct sum_step *nv = realloc(*v, sizeof *nv * (size_t)ncap);

		if (!nv)
			return PROF_E_NOMEM;
		*v = nv;
		*cap = ncap;
	}
	(*v)[(*n)++] = (struct sum_step){ start_ns, end_ns, tid };
	return 0;
}

/* The instances window__from_nvtx counted, or the launches of the kernel
 * window__from_kernels counted from the window's start on, each up to the
 * next. */
int sum_window__steps(struct prof_store *store, const struct sum_window *w, struct sum_step **steps,
		      int *n, struct prof_error *err)
{
	char nvtx_sql[8192];
	const char *kernel_sql = "SELECT k.start FROM " PROF_T_KERNEL " k"
		" WHERE " PROF_SQL_KERNEL_NAME_ID("k.") " IN (SELECT id FROM " PROF_T_STRINGS " WHERE value = ?1)"
		" AND k.start >= ?2 AND k.start < ?3 ORDER BY k.start";
	bool nvtx = w->mark == SUM_LOOP_NVTX, have_prev = false;
	struct prof_cursor *c;
	int cap = 0, rc;
	int64_t prev = 0;

	*steps = NULL;
	*n = 0;
	if (w->mark == SUM_LOOP_NONE || w->iterations == 0)
		return 0;
	if (nvtx) {
		size_t len;

		rc = window__nvtx_instances_sql(nvtx_sql, sizeof nvtx_sql, err);
		len = strlen(nvtx_sql);
		if (!rc && snprintf(nvtx_sql + len, sizeof nvtx_sql - len,
				    " SELECT start, end, tid FROM r WHERE name = ?1 AND k > 1 ORDER BY start") >=
				   (int)(sizeof nvtx_sql - len))
			rc = prof_error__set(err, PROF_E_SQL, "the loop search's SQL does not fit in %zu bytes",
					     sizeof nvtx_sql);
		if (rc)
			return rc;
	}
	rc = prof_cursor__open(store, nvtx ? nvtx_sql : kernel_sql, &c, err);
	if (rc)
		return rc;
	prof_cursor__bind_text(c, 1, w->mark_name);
	if (!nvtx) {
		prof_cursor__bind_int64(c, 2, w->start_ns);
		prof_cursor__bind_int64(c, 3, w->end_ns);
	}
	while ((rc = prof_cursor__next(c, err)) == 1) {
		int64_t start = prof_cursor__int64(c, 0);

		if (nvtx) {
			rc = push_step(steps, n, &cap, start, prof_cursor__int64(c, 1), prof_cursor__int64(c, 2));
		} else {
			rc = have_prev ? push_step(steps, n, &cap, prev, start, 0) : 0;
			have_prev = true;
			prev = start;
		}
		if (rc) {
			rc = prof_error__set(err, PROF_E_NOMEM, "out of memory");
			break;
		}
	}
	prof_cursor__close(c);
	if (rc == 0 && have_prev && prev < w->end_ns && push_step(steps, n, &cap, prev, w->end_ns, 0))
		rc = prof_error__set(err, PROF_E_NOMEM, "out of memory");
	if (rc < 0) {
		free(*steps);
		*steps = NULL;
		*n = 0;
		return rc;
	}
	return 0;
}
