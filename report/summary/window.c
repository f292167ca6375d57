/* window.c - the steady-state loop of a capture: where its iterations are
 * and how many there are. `perfkit diagnose` analyses this window; `perfkit
 * diff`, `baseline` and `gate` compare captures per iteration of it, so that
 * two windows of one job holding different numbers of steps compare fairly.
 * docs/diagnose.md describes the search step by step. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "query.h"

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

		if (!prof_store__has_table(s, extent_tables[i]))
			continue;
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

/* The repeated NVTX ranges of the capture: name, count and cover (summed
 * duration), the warm-up instance of each name on each thread left out. */
#define NVTX_INSTANCES_SQL \
	"WITH r AS (SELECT coalesce(s.value, n.text) AS name, n.globalTid AS tid, n.start, n.end," \
	"  row_number() OVER (PARTITION BY coalesce(s.value, n.text), n.globalTid" \
	"   ORDER BY n.start) AS k" \
	"  FROM " PROF_T_NVTX " n LEFT JOIN " PROF_T_STRINGS " s ON s.id = n.textId" \
	"  WHERE n.eventType IN (" PROF_SQL_NVTX_RANGES ") AND n.end > n.start" \
	"  AND NOT " SUM_BAD_SPAN("n.") ")"

struct loop_candidate {
	char *name;                 /* whole: nested_fraction looks it up */
	int64_t count, start_ns, end_ns;
	double cover;
};

/* Of the instances of `inner` (warm-up left out), the fraction that lie
 * inside an instance of `outer` on the same thread. Ranges of one name on
 * one thread follow each other, so the latest `outer` to start before an
 * `inner` is the only one that can hold it: a running maximum of their ends
 * answers it in one ordered pass. */
static int nested_fraction(struct prof_store *store, const char *inner, const char *outer,
			   double *fraction, struct prof_error *err)
{
	const char *sql = NVTX_INSTANCES_SQL ","
		" x AS (SELECT name, k, end, max(CASE WHEN name = ?2 THEN end END)"
		"  OVER (PARTITION BY tid ORDER BY start, name = ?1 ROWS UNBOUNDED PRECEDING) AS outer_end"
		"  FROM r WHERE name IN (?1, ?2))"
		" SELECT count(*), sum(outer_end >= end) FROM x WHERE name = ?1 AND k > 1";
	struct prof_cursor *c;
	int rc = prof_cursor__open(store, sql, &c, err);

	if (rc)
		return rc;
	prof_cursor__bind_text(c, 1, inner);
	prof_cursor__bind_text(c, 2, outer);
	*fraction = 0;
	rc = prof_cursor__next(c, err);
	if (rc == 1 && prof_cursor__int64(c, 0) > 0)
		*fraction = prof_cursor__double(c, 1) / prof_cursor__double(c, 0);
	prof_cursor__close(c);
	return rc < 0 ? rc : 0;
}

/* A phase of a step: a candidate whose instances mostly sit inside those of a
 * less frequent candidate without tiling it (covering less than
 * o->tiling of it). Steps tile an epoch and stay; "load/transfer"
 * done 32 times inside each step covers 70% of it and is a phase. */
static int is_phase(struct prof_store *store, const struct sum_loop_options *o,
		    const struct loop_candidate *cand, int n, int i, bool *phase, struct prof_error *err)
{
	*phase = false;
	for (int j = 0; j < n && !*phase; j++) {
		double nested;
		int rc;

		if (j == i || cand[j].count >= cand[i].count ||
		    cand[i].cover >= cand[j].cover * o->tiling)
			continue;
		rc = nested_fraction(store, cand[i].name, cand[j].name, &nested, err);
		if (rc)
			return rc;
		*phase = nested > 0.5;
	}
	return 0;
}

/* The loop from NVTX: among range names repeated at least o->min_iterations
 * times, those covering at least o->coverage of the best-covering one and
 * not a phase of another (is_phase); of these the most frequent. An outer
 * "train" range (once), inner "copy" ranges (short) and phases of the step
 * repeated within it all lose to "step". With `marked`, the loop is that
 * range name's, if it repeats.
 *
 * The first instance of each name on each thread is left out, of the
 * ranking and of the window: it is the warm-up (module loading, library handles, first-touch
 * allocations) rather than the steady state, and a name used once for setup
 * ("load/transfer" around the initial upload) would otherwise outweigh the
 * loop it also appears in. */
static int window_from_nvtx(struct prof_store *store, const struct sum_loop_options *o,
			    const char *marked, struct sum_window *w, struct prof_error *err)
{
	const char *sql = NVTX_INSTANCES_SQL
		" SELECT name, count(*), total(end - start), min(start), max(end) FROM r"
		" WHERE k > 1 AND (?2 IS NULL OR name = ?2)"
		" GROUP BY name HAVING count(*) + 1 >= ?1 AND name IS NOT NULL"
		" ORDER BY 3 DESC";
	enum { MAX_CANDIDATES = 16 };
	struct loop_candidate cand[MAX_CANDIDATES];
	struct prof_cursor *c;
	int64_t best_count = 0;
	int n = 0, rc;

	if (!prof_store__has_table(store, PROF_T_NVTX))
		return 0;
	rc = prof_cursor__open(store, sql, &c, err);
	if (rc)
		return rc;
	prof_cursor__bind_int64(c, 1, (int64_t)o->min_iterations);
	if (marked)
		prof_cursor__bind_text(c, 2, marked);
	while (n < MAX_CANDIDATES && (rc = prof_cursor__next(c, err)) == 1) {
		struct loop_candidate *k = &cand[n];

		k->cover = prof_cursor__double(c, 2);
		if (n > 0 && k->cover < cand[0].cover * o->coverage)
			break;
		k->name = strdup(prof_cursor__text(c, 0));
		if (!k->name) {
			rc = prof_error__set(err, PROF_E_NOMEM, "out of memory");
			break;
		}
		k->count = prof_cursor__int64(c, 1);
		k->start_ns = prof_cursor__int64(c, 3);
		k->end_ns = prof_cursor__int64(c, 4);
		n++;
	}
	prof_cursor__close(c);
	for (int i = 0; rc >= 0 && i < n; i++) {
		bool phase;

		if (cand[i].count <= best_count)
			continue;
		rc = marked ? 0 : is_phase(store, o, cand, n, i, &phase, err);
		if (rc < 0 || (!marked && phase))
			continue;
		best_count = cand[i].count;
		w->iterations = (int)cand[i].count;
		w->start_ns = cand[i].start_ns;
		w->end_ns = cand[i].end_ns;
		snprintf(w->source, sizeof w->source, "NVTX range \"%s\" x %lld", cand[i].name,
			 (long long)cand[i].count);
		w->mark = SUM_LOOP_NVTX;
		snprintf(w->mark_name, sizeof w->mark_name, "%s", cand[i].name);
	}
	for (int i = 0; i < n; i++)
		free(cand[i].name);
	return rc < 0 ? rc : 0;
}

static int cmp_int64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

/* The loop without NVTX: the kernel name that repeats the fewest times (at
 * least o->min_iterations) marks one iteration per launch; of several such
 * names the one launched first (with `marked`, that kernel if it repeats).
 * Iterations run from one of its launches to the next; the last lasts the
 * median period. As with NVTX, the first iteration is the warm-up and stays
 * out of the window. */
static int window_from_kernels(struct prof_store *store, const struct sum_loop_options *o,
			       const char *marked, struct sum_window *w, struct prof_error *err)
{
	const char *pick =
		"SELECT k.demangledName, count(*), min(k.start) FROM " PROF_T_KERNEL " k"
		" WHERE ?2 IS NULL OR k.demangledName IN (SELECT id FROM " PROF_T_STRINGS " WHERE value = ?2)"
		" GROUP BY k.demangledName HAVING count(*) >= max(?1, 3)"
		" ORDER BY count(*) ASC, min(k.start) ASC LIMIT 1";
	const char *starts =
		"SELECT k.start FROM " PROF_T_KERNEL " k WHERE k.demangledName = ?1 ORDER BY k.start";
	struct prof_cursor *c = NULL;
	int64_t name_id, count, *t = NULL, *gaps = NULL;
	int n = 0, rc;

	if (!prof_store__has_table(store, PROF_T_KERNEL))
		return 0;
	rc = prof_cursor__open(store, pick, &c, err);
	if (rc)
		return rc;
	prof_cursor__bind_int64(c, 1, (int64_t)o->min_iterations);
	if (marked)
		prof_cursor__bind_text(c, 2, marked);
	rc = prof_cursor__next(c, err);
	if (rc != 1)
		goto out;
	name_id = prof_cursor__int64(c, 0);
	count = prof_cursor__int64(c, 1);
	prof_cursor__close(c);
	c = NULL;
	t = malloc(sizeof *t * (size_t)count);
	gaps = malloc(sizeof *gaps * (size_t)count);
	if (!t || !gaps) {
		rc = prof_error__set(err, PROF_E_NOMEM, "out of memory");
		goto out;
	}
	rc = prof_cursor__open(store, starts, &c, err);
	if (rc)
		goto out;
	prof_cursor__bind_int64(c, 1, name_id);
	while ((rc = prof_cursor__next(c, err)) == 1 && n < count)
		t[n++] = prof_cursor__int64(c, 0);
	if (rc < 0 || n < 3)
		goto out;
	for (int i = 1; i < n; i++)
		gaps[i - 1] = prof_span_saturated(t[i - 1], t[i]);
	qsort(gaps, (size_t)(n - 1), sizeof *gaps, cmp_int64);
	w->start_ns = t[1];
	/* the last iteration lasts the median period */
	w->end_ns = prof_add_saturated(t[n - 1], gaps[(n - 1) / 2]);
	w->iterations = n - 1;
	{
		struct prof_cursor *nc;
		const char *name_sql = "SELECT value FROM " PROF_T_STRINGS " WHERE id = ?1";
		char name[160] = "?";
		if (!prof_cursor__open(store, name_sql, &nc, err)) {
			prof_cursor__bind_int64(nc, 1, name_id);
			if (prof_cursor__next(nc, err) == 1 && prof_cursor__text(nc, 0)) {
				snprintf(name, sizeof name, "%s", prof_cursor__text(nc, 0));
				snprintf(w->mark_name, sizeof w->mark_name, "%s", prof_cursor__text(nc, 0));
			}
			prof_cursor__close(nc);
		}
		snprintf(w->source, sizeof w->source, "kernel \"%s\" launched %d times", name, n);
		w->mark = SUM_LOOP_KERNEL;
	}
	rc = 0;
out:
	prof_cursor__close(c);
	free(t);
	free(gaps);
	return rc < 0 ? rc : 0;
}

/* NVTX ranges are host time: an asynchronous loop enqueues its steps and
 * races ahead while the GPU works through them later. The window therefore
 * ends where the GPU finishes the last work that a runtime or driver call
 * inside it launched (joined by correlation id within one process), or at
 * the ranges' end when that comes later. */
static int extend_to_launched_work(struct prof_store *store, struct sum_window *w,
				   struct prof_error *err)
{
	static const char *const api_tables[] = { PROF_T_RUNTIME, PROF_T_DRIVER };
	static const char *const gpu_tables[] = { PROF_T_KERNEL, PROF_T_MEMCPY, PROF_T_MEMSET };
	char sql[4096];
	size_t len = 0, n = 0;
	struct prof_cursor *c;
	int rc;

	len += (size_t)snprintf(sql + len, sizeof sql - len, "SELECT max(e) FROM (");
	for (size_t a = 0; a < sizeof api_tables / sizeof api_tables[0]; a++) {
		/* an export without these columns cannot be joined: no extension */
		if (!prof_store__has_column(store, api_tables[a], "globalTid") ||
		    !prof_store__has_column(store, api_tables[a], "correlationId"))
			continue;
		for (size_t g = 0; g < sizeof gpu_tables / sizeof gpu_tables[0]; g++) {
			if (!prof_store__has_column(store, gpu_tables[g], "globalPid") ||
			    !prof_store__has_column(store, gpu_tables[g], "correlationId"))
				continue;
			len += (size_t)snprintf(sql + len, sizeof sql - len,
						"%sSELECT max(g.end) AS e FROM %s g JOIN %s r"
						" ON r.correlationId = g.correlationId"
						" AND (r.globalTid >> 24) = (g.globalPid >> 24)"
						" WHERE r.start >= ?1 AND r.start < ?2",
						n++ ? " UNION ALL " : "", gpu_tables[g], api_tables[a]);
		}
	}
	if (n == 0)
		return 0;
	snprintf(sql + len, sizeof sql - len, ")");
	rc = prof_cursor__open(store, sql, &c, err);
	if (rc)
		return rc;
	prof_cursor__bind_int64(c, 1, w->start_ns);
	prof_cursor__bind_int64(c, 2, w->end_ns);
	rc = prof_cursor__next(c, err);
	if (rc == 1 && !prof_cursor__is_null(c, 0) && prof_cursor__int64(c, 0) > w->end_ns)
		w->end_ns = prof_cursor__int64(c, 0);
	prof_cursor__close(c);
	return rc < 0 ? rc : 0;
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
		rc = window_from_nvtx(store, o, marked, w, err);
	w->host_end_ns = w->end_ns;
	if (rc == 0 && w->iterations > 0)
		rc = extend_to_launched_work(store, w, err);
	if (rc)
		return rc;
	if (w->iterations == 0 && (!marked || mark == SUM_LOOP_KERNEL))
		rc = window_from_kernels(store, o, marked, w, err);
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

/* The instances window_from_nvtx counted, or the launches of the kernel
 * window_from_kernels counted from the window's start on, each up to the
 * next. */
int sum_window__steps(struct prof_store *store, const struct sum_window *w, struct sum_step **steps,
		      int *n, struct prof_error *err)
{
	const char *nvtx_sql = NVTX_INSTANCES_SQL
		" SELECT start, end, tid FROM r WHERE name = ?1 AND k > 1 ORDER BY start";
	const char *kernel_sql = "SELECT k.start FROM " PROF_T_KERNEL " k"
		" WHERE k.demangledName IN (SELECT id FROM " PROF_T_STRINGS " WHERE value = ?1)"
		" AND k.start >= ?2 AND k.start < ?3 ORDER BY k.start";
	bool nvtx = w->mark == SUM_LOOP_NVTX, have_prev = false;
	struct prof_cursor *c;
	int cap = 0, rc;
	int64_t prev = 0;

	*steps = NULL;
	*n = 0;
	if (w->mark == SUM_LOOP_NONE || w->iterations == 0)
		return 0;
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
