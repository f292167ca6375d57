/* trace_ranged.c - calls inside their thread's NVTX ranges (see
 * trace_ranged.h): each thread's ranges folded into a union, read in
 * (thread, start) order through the capture's NVTX index. */
#include "trace_ranged.h"

#include <stddef.h>
#include <stdlib.h>

#include "model/sql.h"
#include "model/sums.h"
#include "prof/array.h"
#include "prof/tables.h"

struct tr_span {
	int64_t start, end;
};

struct tr_thread {
	int64_t tid;
	size_t first, n; /* its spans */
};

struct tm_ranged {
	struct prof_store *s;
	struct prof_error *err;
	struct tr_thread *threads; /* by tid */
	size_t nthreads, cap_threads;
	struct tr_span *spans;
	size_t nspans, cap_spans;
	struct prof_cursor *insert;
	bool begun; /* the inserts' transaction */
};

static int nomem(struct prof_error *err)
{
	return prof_error__set(err, PROF_E_NOMEM, "out of memory");
}

/* Range [start, end) of thread tid, which comes after every range of a
 * lower tid and of its own with a lower start. */
static int add_range(struct tm_ranged *r, int64_t tid, int64_t start, int64_t end)
{
	struct tr_thread *t = r->nthreads ? &r->threads[r->nthreads - 1] : NULL;
	struct tr_span *last;

	if (start >= end)
		return 0; /* holds no time */
	if (!t || t->tid != tid) {
		if (prof_array__grow(&r->threads, &r->cap_threads, r->nthreads + 1, sizeof *r->threads) < 0)
			return nomem(r->err);
		t = &r->threads[r->nthreads++];
		*t = (struct tr_thread){ .tid = tid, .first = r->nspans };
	}
	last = t->n ? &r->spans[r->nspans - 1] : NULL;
	if (last && start <= last->end) {
		if (end > last->end)
			last->end = end;
		return 0;
	}
	if (prof_array__grow(&r->spans, &r->cap_spans, r->nspans + 1, sizeof *r->spans) < 0)
		return nomem(r->err);
	r->spans[r->nspans++] = (struct tr_span){ start, end };
	t->n++;
	return 0;
}

static int load_ranges(struct tm_ranged *r, bool *ints)
{
	struct prof_cursor *c = NULL;
	int rc = prof_cursor__open(r->s, "SELECT n.globalTid, n.start, n.end FROM " PROF_T_NVTX " n "
				   "WHERE n.eventType IN (" PROF_SQL_NVTX_RANGES ") AND NOT "
				   SUM_BAD_SPAN("n.") " AND n.globalTid IS NOT NULL "
				   "ORDER BY n.globalTid, n.start", &c, r->err);

	*ints = true;
	while (rc >= 0 && (rc = prof_cursor__next(c, r->err)) > 0) {
		if (prof_cursor__kind(c, 0) != PROF_VALUE_INT || prof_cursor__kind(c, 1) != PROF_VALUE_INT ||
		    prof_cursor__kind(c, 2) != PROF_VALUE_INT) {
			*ints = false;
			break;
		}
		rc = add_range(r, prof_cursor__int64(c, 0), prof_cursor__int64(c, 1),
			       prof_cursor__int64(c, 2));
	}
	prof_cursor__close(c);
	return rc < 0 ? rc : 0;
}

int tm_ranged__open(struct prof_store *s, struct tm_ranged **out, struct prof_error *err)
{
	struct tm_ranged *r = calloc(1, sizeof *r);
	bool ints = false;
	int rc;

	*out = NULL;
	if (!r)
		return nomem(err);
	r->s = s;
	r->err = err;
	rc = load_ranges(r, &ints);
	if (rc == 0 && ints)
		rc = prof_store__exec(s, "DROP TABLE IF EXISTS temp." TM_RANGED_CALLS, err);
	if (rc == 0 && ints)
		rc = prof_store__exec(s, "CREATE TEMP TABLE " TM_RANGED_CALLS " (c INTEGER, p INTEGER, "
				      "g INTEGER, s INTEGER)", err);
	/* one transaction for every insert: each its own cost 30 us */
	if (rc == 0 && ints && (rc = prof_store__exec(s, "BEGIN", err)) == 0) {
		r->begun = true;
		rc = prof_cursor__open(s, "INSERT INTO temp." TM_RANGED_CALLS " VALUES (?1, ?2, ?3, ?4)",
				       &r->insert, err);
	}
	if (rc < 0 || !ints) {
		if (r->begun)
			(void)prof_store__exec(s, "ROLLBACK", NULL);
		prof_cursor__close(r->insert);
		free(r->threads);
		free(r->spans);
		free(r);
		return rc;
	}
	*out = r;
	return 0;
}

bool tm_ranged__any(const struct tm_ranged *r)
{
	return r->nspans > 0;
}

/* The first of n spans that ends after t, when it also starts at or
 * before t: the span holding t, else NULL. */
static const struct tr_span *span_at(const struct tr_span *v, size_t n, int64_t t)
{
	size_t lo = sum_sorted__count_before(v, n, sizeof *v, offsetof(struct tr_span, end), t, true);

	return lo < n && v[lo].start <= t ? &v[lo] : NULL;
}

int tm_ranged__call(void *ctx, int64_t tid, int64_t start, int64_t process, int64_t corr)
{
	struct tm_ranged *r = ctx;
	size_t lo = sum_sorted__count_before(r->threads, r->nthreads, sizeof *r->threads,
					     offsetof(struct tr_thread, tid), tid, false);
	const struct tr_thread *t;
	int rc;

	if (lo == r->nthreads || r->threads[lo].tid != tid)
		return 0;
	t = &r->threads[lo];
	if (!span_at(r->spans + t->first, t->n, start))
		return 0;
	prof_cursor__reset(r->insert);
	if (prof_cursor__bind_int64(r->insert, 1, corr) != 0 ||
	    prof_cursor__bind_int64(r->insert, 2, process) != 0 ||
	    prof_cursor__bind_int64(r->insert, 3, tid) != 0 ||
	    prof_cursor__bind_int64(r->insert, 4, start) != 0)
		return prof_error__set(r->err, PROF_E_SQL, "cannot bind a call inside a range");
	rc = prof_cursor__next(r->insert, r->err);
	return rc < 0 ? rc : 0;
}

int tm_ranged__close(struct tm_ranged *r)
{
	int rc = 0;

	if (!r)
		return 0;
	prof_cursor__close(r->insert);
	rc = prof_store__exec(r->s, "COMMIT", r->err);
	if (rc < 0)
		(void)prof_store__exec(r->s, "ROLLBACK", NULL);
	/* the projection joins the GPU tables to it by id; without their
	 * own index on the id (an nsys export's), from this side */
	if (rc == 0)
		rc = prof_store__exec(r->s, "CREATE INDEX temp." TM_RANGED_CALLS "_cp ON "
				      TM_RANGED_CALLS " (c, p)", r->err);
	free(r->threads);
	free(r->spans);
	free(r);
	return rc;
}
