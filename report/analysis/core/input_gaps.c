/* input_gaps.c - the host's time before each host-to-device copy of a
 * window, in two passes over the window's calls in the store's order: the
 * first keeps the calls that made a copy, the second gives each of them
 * the latest call before it on its thread. A window function over every
 * call (lag() by thread and start) sorts them all: 3.9 s of CPU at 1M
 * kernels and 2.2M calls, where the two passes read them in under 1 s; a
 * temporary (thread, start) index cost less than the sort but spills the
 * temporary database to a file, and diagnose runs with TMPDIR full.
 * Memory is the copies': past GAPS_MAX_COPIES the window function answers.
 * The scope's own table of calls is stored in start order (scope.h): each
 * copy's call is found there by its correlation id and its thread's call
 * before it read back from it (0.4 s of a walk of the window's 2.2M calls
 * at 1M kernels became a few calls a copy), and where one lies further
 * back its calls are read once, each thread's latest calls kept as they
 * come. */
#include "input_gaps.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/core/scope.h"
#include "model/sql.h"
#include "prof/saturate.h"
#include "prof/tables.h"
#include "model/sums.h"

#define GAPS_MAX_COPIES (1 << 22)

/* A call that made a host-to-device copy, and the call before it. */
struct gap {
	int64_t tid, start;
	bool tid_null;
	bool has_prev, prev_end_null;
	int64_t prev_start, prev_end;
};

struct gaps {
	struct gap *g;
	size_t n, cap;
};

static int cmp_int64(const void *pa, const void *pb)
{
	int64_t a = *(const int64_t *)pa, b = *(const int64_t *)pb;

	return (a > b) - (a < b);
}

/* Threads as SQL's PARTITION BY puts them: NULL apart, before the rest. */
static int cmp_thread(bool a_null, int64_t a, bool b_null, int64_t b)
{
	if (a_null != b_null)
		return a_null ? -1 : 1;
	return (a > b) - (a < b);
}

static int cmp_gap(const void *pa, const void *pb)
{
	const struct gap *a = pa, *b = pb;
	int c = cmp_thread(a->tid_null, a->tid, b->tid_null, b->tid);

	return c ? c : (a->start > b->start) - (a->start < b->start);
}

static int open_window(struct prof_store *s, const char *sql, const struct sum_window *w,
		       struct prof_cursor **c, struct prof_error *err)
{
	int rc = prof_cursor__open(s, sql, c, err);

	if (rc < 0)
		return rc;
	prof_cursor__bind_int64(*c, 1, w->start_ns);
	prof_cursor__bind_int64(*c, 2, w->end_ns);
	return 0;
}

/* The window's host-to-device copies' correlation ids, sorted: 1 read,
 * 0 too many to hold, < 0 an error. */
static int read_copy_ids(struct prof_store *s, const struct sum_window *w, int64_t **ids,
			 size_t *n, struct prof_error *err)
{
	struct prof_cursor *c = NULL;
	size_t cap = 0;
	int rc = open_window(s, "SELECT correlationId FROM " PROF_T_MEMCPY " WHERE copyKind = 1"
			     " AND start >= ?1 AND start < ?2 AND correlationId IS NOT NULL", w, &c, err);

	*ids = NULL;
	*n = 0;
	while (rc >= 0 && (rc = prof_cursor__next(c, err)) > 0) {
		if (*n >= GAPS_MAX_COPIES) {
			rc = 2; /* too many: leave it to SQL */
			break;
		}
		if (sum_array__grow(ids, &cap, *n, sizeof **ids) < 0) {
			rc = prof_error__set(err, PROF_E_NOMEM, "out of memory");
			break;
		}
		(*ids)[(*n)++] = prof_cursor__int64(c, 0);
	}
	prof_cursor__close(c);
	if (rc != 0) {
		free(*ids);
		*ids = NULL;
		return rc < 0 ? rc : 0;
	}
	if (*n > 1)
		qsort(*ids, *n, sizeof **ids, cmp_int64);
	return 1;
}

/* The calls that made one of the copies: 1 read, 0 too many, < 0 error. */
static int read_copy_calls(struct prof_store *s, const struct sum_window *w, const char *calls,
			   const int64_t *ids, size_t nids, struct gaps *gs, struct prof_error *err)
{
	char sql[512];
	struct prof_cursor *c = NULL;
	int rc;

	snprintf(sql, sizeof sql, "SELECT globalTid, start, correlationId FROM %s"
		 " WHERE start >= ?1 AND start < ?2 AND correlationId IS NOT NULL", calls);
	rc = open_window(s, sql, w, &c, err);
	while (rc >= 0 && (rc = prof_cursor__next(c, err)) > 0) {
		int64_t id = prof_cursor__int64(c, 2);

		if (!bsearch(&id, ids, nids, sizeof *ids, cmp_int64))
			continue;
		if (gs->n >= GAPS_MAX_COPIES) {
			rc = 2; /* too many: leave it to SQL */
			break;
		}
		if (sum_array__grow(&gs->g, &gs->cap, gs->n, sizeof *gs->g) < 0) {
			rc = prof_error__set(err, PROF_E_NOMEM, "out of memory");
			break;
		}
		gs->g[gs->n++] = (struct gap){ .tid = prof_cursor__int64(c, 0),
					       .tid_null = prof_cursor__is_null(c, 0),
					       .start = prof_cursor__int64(c, 1) };
	}
	prof_cursor__close(c);
	if (rc < 0)
		return rc;
	if (rc == 2)
		return 0;
	if (gs->n > 1)
		qsort(gs->g, gs->n, sizeof *gs->g, cmp_gap);
	return 1;
}

/* The first of gs (sorted) on thread (tid_null, tid) that starts after t,
 * or NULL. */
static struct gap *next_on_thread(struct gaps *gs, bool tid_null, int64_t tid, int64_t t)
{
	size_t lo = 0, hi = gs->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct gap *g = &gs->g[mid];
		int c = cmp_thread(g->tid_null, g->tid, tid_null, tid);

		if (c < 0 || (c == 0 && g->start <= t))
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == gs->n || cmp_thread(gs->g[lo].tid_null, gs->g[lo].tid, tid_null, tid) != 0)
		return NULL;
	return &gs->g[lo];
}

/* Each call is the one before the first copy call after it on its thread,
 * where no later call comes between. */
static int read_previous_calls(struct prof_store *s, const struct sum_window *w, const char *calls,
			       struct gaps *gs, struct prof_error *err)
{
	char sql[512];
	struct prof_cursor *c = NULL;
	int rc;

	snprintf(sql, sizeof sql, "SELECT globalTid, start, end FROM %s"
		 " WHERE start >= ?1 AND start < ?2", calls);
	rc = open_window(s, sql, w, &c, err);
	while (rc >= 0 && (rc = prof_cursor__next(c, err)) > 0) {
		int64_t start = prof_cursor__int64(c, 1);
		struct gap *g = next_on_thread(gs, prof_cursor__is_null(c, 0),
					       prof_cursor__int64(c, 0), start);

		if (!g || (g->has_prev && g->prev_start >= start))
			continue;
		g->has_prev = true;
		g->prev_start = start;
		g->prev_end_null = prof_cursor__is_null(c, 2);
		g->prev_end = prof_cursor__int64(c, 2);
	}
	prof_cursor__close(c);
	return rc < 0 ? rc : 0;
}

/* A thread's latest call (the first read of those of the latest start)
 * and the one before it (the same of the start before), and the start of
 * the last copy given the call before it. */
struct thread_calls {
	int64_t tid;
	int nkept;
	struct kept_call {
		int64_t start, end;
		bool end_null;
	} last, before;
	bool gave;
	int64_t gave_start;
};

/* The threads met, by tid (a few: a search and an insertion serve), and
 * the calls of no thread, which SQL's PARTITION BY takes for one. */
struct threads {
	struct thread_calls *v, none;
	size_t n, cap;
};

static struct thread_calls *thread_of(struct threads *t, bool tid_null, int64_t tid)
{
	size_t i;

	if (tid_null)
		return &t->none;
	i = sum_sorted__count_before(t->v, t->n, sizeof *t->v, offsetof(struct thread_calls, tid), tid, false);
	if (i < t->n && t->v[i].tid == tid)
		return &t->v[i];
	if (sum_array__grow(&t->v, &t->cap, t->n, sizeof *t->v) < 0)
		return NULL;
	memmove(t->v + i + 1, t->v + i, (t->n - i) * sizeof *t->v);
	t->v[i] = (struct thread_calls){ .tid = tid };
	t->n++;
	return &t->v[i];
}

/* The two passes' sum in one pass over calls stored in start order: a
 * copy's call before it is its thread's latest call of an earlier start;
 * of copies of one thread that start together only the first has one, as
 * the two passes give the call to one of them. */
static int total_in_start_order(struct prof_store *s, const struct sum_window *w, const char *calls,
				const int64_t *ids, size_t nids, int64_t *out, struct prof_error *err)
{
	struct threads threads = { 0 };
	struct prof_cursor *c = NULL;
	char sql[512];
	int rc;

	snprintf(sql, sizeof sql, "SELECT globalTid, start, end, correlationId FROM %s"
		 " WHERE start >= ?1 AND start < ?2 ORDER BY rowid", calls);
	rc = open_window(s, sql, w, &c, err);
	while (rc >= 0 && (rc = prof_cursor__next(c, err)) > 0) {
		struct kept_call call = { prof_cursor__int64(c, 1), prof_cursor__int64(c, 2), prof_cursor__is_null(c, 2) };
		struct thread_calls *t = thread_of(&threads, prof_cursor__is_null(c, 0), prof_cursor__int64(c, 0));
		int64_t id = prof_cursor__int64(c, 3);

		if (!t) {
			rc = prof_error__set(err, PROF_E_NOMEM, "out of memory");
			break;
		}
		if (!prof_cursor__is_null(c, 3) && bsearch(&id, ids, nids, sizeof *ids, cmp_int64) &&
		    !(t->gave && t->gave_start == call.start)) {
			const struct kept_call *prev = t->nkept > 0 && t->last.start < call.start ? &t->last
						       : t->nkept > 1 ? &t->before : NULL;

			if (prev) {
				t->gave = true;
				t->gave_start = call.start;
				if (!prev->end_null && call.start > prev->end)
					*out = prof_add_saturated(*out, call.start - prev->end);
			}
		}
		if (t->nkept == 0 || call.start > t->last.start) {
			t->before = t->last;
			t->last = call;
			t->nkept += t->nkept < 2;
		}
	}
	prof_cursor__close(c);
	free(threads.v);
	return rc < 0 ? rc : 0;
}

/* ---- the copies' calls looked up --------------------------------------------- */

/* How far back from a copy's call its thread's call before it is looked
 * for, in calls of any thread; past it the calls are walked whole. */
static int64_t scan_limit = 512;
/* The calls read back for all the copies, and the copies looked up, at
 * most: past them a walk of the window's calls costs less (and their ids
 * are a statement's parameter). */
#define LOOKUP_MAX_CALLS_READ (1 << 20)
#define LOOKUP_MAX_COPIES (1 << 16)

int64_t input_gaps__set_scan_limit(int64_t calls)
{
	int64_t was = scan_limit;

	scan_limit = calls;
	return was;
}

/* A copy's call: its thread and start; row, its place in the table. */
struct copy_call {
	int64_t tid, start, row;
	bool tid_null;
};

static int cmp_copy_call(const void *pa, const void *pb)
{
	const struct copy_call *a = pa, *b = pb;
	int c = cmp_thread(a->tid_null, a->tid, b->tid_null, b->tid);

	if (c)
		return c;
	if (a->start != b->start)
		return (a->start > b->start) - (a->start < b->start);
	return (a->row > b->row) - (a->row < b->row);
}

/* The calls of the window that made a copy of ids, by correlation id
 * through the table's index: 1; 0 more than max of them. */
static int read_copy_calls_by_id(struct prof_store *s, const struct sum_window *w, const int64_t *ids, size_t nids,
				 struct copy_call **out, size_t *n, size_t max, struct prof_error *err)
{
	struct prof_cursor *c = NULL;
	char *json = sum_json_ids(ids, nids);
	size_t cap = 0;
	int rc = json ? prof_cursor__open(s, "SELECT c.rowid, c.globalTid, c.start FROM json_each(?1) j CROSS JOIN "
					  DIAG_API_CALLS " c ON c.correlationId = j.value"
					  " WHERE c.start >= ?2 AND c.start < ?3", &c, err)
		      : prof_error__set(err, PROF_E_NOMEM, "out of memory");

	*out = NULL;
	*n = 0;
	if (rc == 0 && prof_cursor__bind_text(c, 1, json))
		rc = prof_error__set(err, PROF_E_NOMEM, "out of memory");
	if (rc == 0) {
		prof_cursor__bind_int64(c, 2, w->start_ns);
		prof_cursor__bind_int64(c, 3, w->end_ns);
	}
	while (rc >= 0 && (rc = prof_cursor__next(c, err)) > 0) {
		if (*n >= max) {
			rc = 2;
			break;
		}
		if (sum_array__grow(out, &cap, *n, sizeof **out) < 0) {
			rc = prof_error__set(err, PROF_E_NOMEM, "out of memory");
			break;
		}
		(*out)[(*n)++] = (struct copy_call){ prof_cursor__int64(c, 1), prof_cursor__int64(c, 2),
						     prof_cursor__int64(c, 0), prof_cursor__is_null(c, 1) };
	}
	prof_cursor__close(c);
	free(json);
	if (rc == 0)
		return 1;
	free(*out);
	*out = NULL;
	return rc < 0 ? rc : 0;
}

/* The call before a copy's call k on its thread, as the walk in start
 * order gives it (total_in_start_order): the first stored of the calls of
 * the latest start before k's, at or after the window's start. The
 * table's calls before k's are read back from it: 1 and *gap (0 where
 * there is none, or it ended after k's call began, or has no end); 0 when
 * it lies further back than scan_limit calls, or the calls read back for
 * every copy would pass *budget (less those read here). */
static int gap_before(struct prof_cursor *back, const struct sum_window *w, const struct copy_call *k,
		      int64_t *gap, int64_t *budget, struct prof_error *err)
{
	bool found = false, end_null = false;
	int64_t at = 0, end = 0;
	int rc;

	*gap = 0;
	prof_cursor__reset(back);
	prof_cursor__bind_int64(back, 1, k->row);
	for (int64_t read = 0; (rc = prof_cursor__next(back, err)) > 0; read++) {
		bool tid_null = prof_cursor__is_null(back, 0);
		int64_t tid = prof_cursor__int64(back, 0), start = prof_cursor__int64(back, 1);

		/* stored in start order: none before the window's start is read */
		if (start < w->start_ns || (found && start < at))
			break;
		if ((!found && read >= scan_limit) || --*budget < 0)
			return 0;
		if (start >= k->start || cmp_thread(tid_null, tid, k->tid_null, k->tid) != 0)
			continue;
		/* the thread's latest start before k's; of its calls of that
		 * start, the first stored is the last read back */
		found = true;
		at = start;
		end_null = prof_cursor__is_null(back, 2);
		end = prof_cursor__int64(back, 2);
	}
	if (rc < 0)
		return rc;
	if (found && !end_null && k->start > end)
		*gap = k->start - end;
	return 1;
}

/* The sum from the copies' calls alone, each looking back for its
 * thread's call before it: 1 and *out; 0 where the calls are too many or
 * one's call before lies too far back (the caller walks them all). Of a
 * thread's copy calls of one start only the first has a call before it
 * (as the walk gives it to one of them), and all would find the same. */
static int total_looked_up(struct prof_store *s, const struct sum_window *w, const int64_t *ids, size_t nids,
			   int64_t *out, struct prof_error *err)
{
	struct copy_call *calls = NULL;
	struct prof_cursor *back = NULL;
	size_t n = 0;
	int64_t sum = 0, budget = LOOKUP_MAX_CALLS_READ;
	int rc;

	if (scan_limit <= 0 || nids > LOOKUP_MAX_COPIES)
		return 0;
	rc = read_copy_calls_by_id(s, w, ids, nids, &calls, &n, LOOKUP_MAX_COPIES, err);
	if (rc <= 0)
		return rc;
	if (n > 1)
		qsort(calls, n, sizeof *calls, cmp_copy_call);
	rc = prof_cursor__open(s, "SELECT globalTid, start, end FROM " DIAG_API_CALLS
			       " WHERE rowid < ?1 ORDER BY rowid DESC", &back, err);
	for (size_t i = 0; rc == 0 && i < n; i++) {
		int64_t gap;

		if (i > 0 && cmp_thread(calls[i].tid_null, calls[i].tid, calls[i - 1].tid_null, calls[i - 1].tid) == 0 &&
		    calls[i].start == calls[i - 1].start)
			continue;
		rc = gap_before(back, w, &calls[i], &gap, &budget, err);
		if (rc == 1) {
			sum = prof_add_saturated(sum, gap);
			rc = 0;
		} else if (rc == 0) {
			rc = 2; /* too far back */
		}
	}
	prof_cursor__close(back);
	free(calls);
	if (rc == 0)
		*out = sum;
	return rc < 0 ? rc : rc == 0;
}

/* The same sum by a window function, where the copies are too many to hold. */
static int total_by_sql(struct prof_store *s, const struct sum_window *w, const char *calls,
			int64_t *out, struct prof_error *err)
{
	static const char fmt[] =
		"SELECT " SUM_TOTAL_SATURATED("max(0, a.start - a.prev_end)")
		" FROM (SELECT start, globalTid, correlationId,"
		"  lag(end) OVER (PARTITION BY globalTid ORDER BY start) AS prev_end"
		"  FROM %s WHERE start >= ?1 AND start < ?2) a"
		" WHERE a.prev_end IS NOT NULL AND a.correlationId IN (SELECT correlationId FROM " PROF_T_MEMCPY
		"  WHERE copyKind = 1 AND start >= ?1 AND start < ?2 AND correlationId IS NOT NULL)";
	char sql[1024];
	struct prof_cursor *c = NULL;
	int rc;

	snprintf(sql, sizeof sql, fmt, calls);
	rc = open_window(s, sql, w, &c, err);
	if (rc >= 0 && (rc = prof_cursor__next(c, err)) > 0)
		*out = prof_cursor__int64(c, 0);
	prof_cursor__close(c);
	return rc < 0 ? rc : 0;
}

int input_gaps__total(struct prof_store *s, const struct sum_window *w, const char *calls,
		      int64_t *out, struct prof_error *err)
{
	struct gaps gs = { 0 };
	int64_t *ids = NULL;
	size_t nids = 0;
	int rc;

	*out = 0;
	rc = read_copy_ids(s, w, &ids, &nids, err);
	if (rc > 0 && nids == 0) {
		free(ids);
		return 0;
	}
	if (rc > 0 && strcmp(calls, DIAG_API_CALLS) == 0) {
		rc = total_looked_up(s, w, ids, nids, out, err);
		if (rc == 0)
			rc = total_in_start_order(s, w, calls, ids, nids, out, err);
		free(ids);
		return rc < 0 ? rc : 0;
	}
	if (rc > 0)
		rc = read_copy_calls(s, w, calls, ids, nids, &gs, err);
	free(ids);
	if (rc == 0) {
		free(gs.g);
		return total_by_sql(s, w, calls, out, err);
	}
	if (rc > 0 && gs.n > 0)
		rc = read_previous_calls(s, w, calls, &gs, err);
	for (size_t i = 0; rc >= 0 && i < gs.n; i++) {
		const struct gap *g = &gs.g[i];

		if (g->has_prev && !g->prev_end_null && g->start > g->prev_end)
			*out = prof_add_saturated(*out, g->start - g->prev_end);
	}
	free(gs.g);
	return rc < 0 ? rc : 0;
}
