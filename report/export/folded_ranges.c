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

int range_walk__open(struct range_walk *rw, struct prof_store *s, const struct export_window *w,
		     bool start_end, bool in_range, struct prof_error *err)
{
	const char *types = start_end ? "IN (" PROF_SQL_NVTX_RANGES ")" : "= " PROF_SQL_NVTX_PUSHPOP;
	char sql[2048], in_instance[512] = "";
	int rc;

	rw->err = err;
	rw->cur = NULL;
	rw->has_row = false;
	rw->thread = -1;
	rw->open = NULL;
	rw->nopen = rw->cap = 0;
	if (in_range && export_window__in_range(in_instance, sizeof in_instance, "n.start",
						  PROF_SQL_PID_OF_TID("n.globalTid")) < 0)
		return prof_error__set(err, PROF_E_USAGE, "export query too long");
	/* equal starts: the longer range is the outer one */
	snprintf(sql, sizeof sql,
		 "SELECT n.globalTid, n.start, n.end, n.rowid, %s FROM " PROF_T_NVTX " n "
		 "LEFT JOIN " PROF_T_STRINGS " t ON t.id = n.textId WHERE n.eventType %s "
		 "AND NOT " SUM_BAD_SPAN("n.") " AND n.globalTid IS NOT NULL%s%s "
		 "ORDER BY n.globalTid, n.start, n.end DESC",
		 w->nvtx_name, types, in_range ? " AND " : "",
		 in_instance);
	rc = prof_cursor__open(s, sql, &rw->cur, err);
	if (rc == 0 && in_range)
		rc = export_window__bind(w, rw->cur, err);
	if (rc == 0)
		rc = prof_cursor__next(rw->cur, err);
	if (rc < 0)
		return rc;
	rw->has_row = rc > 0;
	return 0;
}

int range_walk__at(struct range_walk *rw, int64_t thread, int64_t t)
{
	int rc = 0;

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
	return drop_ended(rw, INT64_MAX);
}

void range_walk__exit(struct range_walk *rw)
{
	for (size_t i = 0; i < rw->nopen; i++)
		free(rw->open[i].name);
	free(rw->open);
	prof_cursor__close(rw->cur);
	rw->open = NULL;
	rw->cur = NULL;
	rw->nopen = rw->cap = 0;
	rw->has_row = false;
}
