/* folded_ranges.c - the NVTX ranges open at each API call (see
 * folded_ranges.h). */
#include "folded_ranges.h"

#include <stdlib.h>
#include <string.h>

#include "prof/tables.h"
#include "model/sql.h"
#include "prof/error.h"

static int nomem(struct range_walk *rw)
{
	return prof_error__set(rw->err, PROF_E_NOMEM, "out of memory");
}

/* Take the ranges that ended by t off the list. Push/pop ranges nest, but
 * start/end ranges and broken captures need not, so every entry is checked,
 * not only the innermost. */
static int drop_ended(struct range_walk *rw, int64_t t)
{
	size_t kept = 0;
	int rc = 0;

	for (size_t i = 0; i < rw->nopen; i++) {
		struct open_range *r = &rw->open[i];

		if (r->end_ns > t) {
			rw->open[kept++] = *r;
			continue;
		}
		if (rc == 0 && rw->on_close)
			rc = rw->on_close(rw->ctx, r);
		free(r->name);
	}
	rw->nopen = kept;
	return rc;
}

static int push(struct range_walk *rw, int64_t start, int64_t end, int64_t row, const char *text)
{
	/* ranges that ended before this one began are closed for good */
	int rc = drop_ended(rw, start);
	struct open_range *r;

	if (rc < 0)
		return rc;
	if (rw->nopen == rw->cap) {
		size_t cap = rw->cap ? rw->cap * 2 : 16;
		struct open_range *o = realloc(rw->open, cap * sizeof *o);

		if (!o)
			return nomem(rw);
		rw->open = o;
		rw->cap = cap;
	}
	r = &rw->open[rw->nopen];
	r->name = rw->make_name(text ? text : "");
	if (!r->name)
		return nomem(rw);
	r->start_ns = start;
	r->end_ns = end;
	r->row = row;
	rw->nopen++;
	return 0;
}

/* The ranges' query: (globalTid, start, end, rowid, name), in the order
 * they are opened. */
static int ranges_sql(char *sql, size_t cap, const struct export_window *w, bool start_end, bool in_range,
		      struct prof_error *err)
{
	const char *types = start_end ? "IN (" PROF_SQL_NVTX_RANGES ")" : "= " PROF_SQL_NVTX_PUSHPOP;
	char in_instance[512] = "";

	if (in_range && export_window__in_range(in_instance, sizeof in_instance, "n.start",
						  PROF_SQL_PID_OF_TID("n.globalTid")) < 0)
		return prof_error__set(err, PROF_E_USAGE, "export query too long");
	/* equal starts: the longer range is the outer one */
	snprintf(sql, cap,
		 "SELECT n.globalTid, n.start, n.end, n.rowid, %s FROM " PROF_T_NVTX " n "
		 "LEFT JOIN " PROF_T_STRINGS " t ON t.id = n.textId WHERE n.eventType %s "
		 "AND NOT " SUM_BAD_SPAN("n.") " AND n.globalTid IS NOT NULL%s%s "
		 "ORDER BY n.globalTid, n.start, n.end DESC",
		 w->nvtx_name, types, in_range ? " AND " : "",
		 in_instance);
	return 0;
}

static int open_ranges(struct range_walk *rw, struct prof_store *s, const struct export_window *w,
		       bool start_end, bool in_range, struct prof_error *err)
{
	char sql[2048];
	int rc;

	rw->err = err;
	rw->cur = NULL;
	rw->has_row = false;
	rw->thread = -1;
	rw->open = NULL;
	rw->nopen = rw->cap = 0;
	rw->is_held = false;
	rw->held = (struct thread_ranges){ .drop_any = true, .row_size = sizeof(struct open_range) };
	rc = ranges_sql(sql, sizeof sql, w, start_end, in_range, err);
	if (rc == 0)
		rc = prof_cursor__open(s, sql, &rw->cur, err);
	if (rc == 0 && in_range)
		rc = export_window__bind(w, rw->cur, err);
	return rc;
}

int range_walk__open(struct range_walk *rw, struct prof_store *s, const struct export_window *w,
		     bool start_end, bool in_range, struct prof_error *err)
{
	int rc = open_ranges(rw, s, w, start_end, in_range, err);

	if (rc == 0)
		rc = prof_cursor__next(rw->cur, err);
	if (rc < 0)
		return rc;
	rw->has_row = rc > 0;
	return 0;
}

static int hold_range(void *ctx, struct prof_cursor *c, void *row, char **text, struct prof_error *err)
{
	struct range_walk *rw = ctx;
	struct open_range *r = row;
	const char *t = prof_cursor__text(c, 4);

	*r = (struct open_range){ prof_cursor__int64(c, 1), prof_cursor__int64(c, 2), prof_cursor__int64(c, 3),
				  rw->make_name(t ? t : "") };
	*text = r->name;
	return r->name ? 0 : prof_error__set(err, PROF_E_NOMEM, "out of memory");
}

int range_walk__hold(struct range_walk *rw, struct prof_store *s, const struct export_window *w,
		     bool start_end, bool in_range, struct prof_error *err)
{
	int rc;

	if (!thread_ranges__may_hold(s, PROF_T_NVTX))
		return 0;
	rc = open_ranges(rw, s, w, start_end, in_range, err);

	if (rc == 0)
		rc = thread_ranges__load(&rw->held, rw->cur, hold_range, rw, err);
	prof_cursor__close(rw->cur);
	rw->cur = NULL;
	rw->is_held = rc == 1;
	return rc;
}

/* Held: the open list lends the held ranges of thread open at t. */
static int held_at(struct range_walk *rw, int64_t thread, int64_t t)
{
	const size_t *open;
	size_t n;
	int rc = thread_ranges__at(&rw->held, thread, t, &open, &n, rw->err);

	if (rc < 0 || rc == THREAD_RANGES_BACK)
		return rc;
	if (n > rw->cap) {
		struct open_range *o = realloc(rw->open, n * sizeof *o);

		if (!o)
			return nomem(rw);
		rw->open = o;
		rw->cap = n;
	}
	for (size_t i = 0; i < n; i++)
		rw->open[i] = *(const struct open_range *)thread_ranges__row(&rw->held, open[i]);
	rw->nopen = n;
	return 0;
}

void range_walk__rewind(struct range_walk *rw)
{
	thread_ranges__rewind(&rw->held);
	rw->nopen = 0;
}

int range_walk__at(struct range_walk *rw, int64_t thread, int64_t t)
{
	int rc = 0;

	if (rw->is_held)
		return held_at(rw, thread, t);
	if (thread != rw->thread) {
		rc = range_walk__close_all(rw);
		rw->thread = thread;
	}
	while (rc == 0 && rw->has_row) {
		struct prof_cursor *nv = rw->cur;
		int64_t n_tid = prof_cursor__int64(nv, 0), n_start = prof_cursor__int64(nv, 1);

		if (n_tid > thread || (n_tid == thread && n_start > t))
			break;
		/* a range of a thread with no calls is passed over */
		if (n_tid == thread)
			rc = push(rw, n_start, prof_cursor__int64(nv, 2), prof_cursor__int64(nv, 3),
				  prof_cursor__text(nv, 4));
		if (rc == 0) {
			rc = prof_cursor__next(nv, rw->err);
			rw->has_row = rc > 0;
			rc = rc < 0 ? rc : 0;
		}
	}
	return rc < 0 ? rc : drop_ended(rw, t);
}

int range_walk__close_all(struct range_walk *rw)
{
	if (rw->is_held) {
		rw->nopen = 0;
		return 0;
	}
	return drop_ended(rw, INT64_MAX);
}

void range_walk__exit(struct range_walk *rw)
{
	/* held, the names are the held ranges' */
	for (size_t i = 0; !rw->is_held && i < rw->nopen; i++)
		free(rw->open[i].name);
	thread_ranges__exit(&rw->held);
	rw->is_held = false;
	free(rw->open);
	prof_cursor__close(rw->cur);
	rw->open = NULL;
	rw->cur = NULL;
	rw->nopen = rw->cap = 0;
	rw->has_row = false;
}
