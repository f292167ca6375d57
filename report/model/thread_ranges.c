/* thread_ranges.c - every thread's NVTX ranges in memory (see
 * thread_ranges.h). */
#include "model/thread_ranges.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/sums.h"
#include "prof/array.h"
#include "prof/strfmt.h"

struct thread_ranges_span {
	int64_t start_ns, end_ns;
	char *text; /* the range's own string (keep's), or NULL */
};

struct thread_ranges_thread {
	int64_t tid;
	size_t first, end; /* its rows */
	size_t next;       /* the next row to open */
	size_t *open;      /* open rows, outermost first */
	size_t nopen, open_cap;
	int64_t last_ns; /* the start of its last call */
	bool called;
};

static size_t max_rows = THREAD_RANGES_MAX;

void thread_ranges__set_max(size_t max)
{
	max_rows = max;
}

static int nomem(struct prof_error *err)
{
	return prof_error__set(err, PROF_E_NOMEM, "out of memory");
}

bool thread_ranges__may_hold(struct prof_store *s, const char *table)
{
	struct prof_error ignored = { 0 };
	struct prof_cursor *c = NULL;
	char *sql = prof_strfmt("SELECT max(rowid) FROM main.\"%s\"", table);
	bool fits = true;

	/* a table the file lacks (the store's empty view stands in) holds none */
	if (sql && prof_cursor__open(s, sql, &c, &ignored) == 0 && prof_cursor__next(c, &ignored) == 1)
		fits = prof_cursor__is_null(c, 0) || prof_cursor__int64(c, 0) <= (int64_t)max_rows;
	prof_cursor__close(c);
	free(sql);
	return fits;
}

void thread_ranges__exit(struct thread_ranges *tr)
{
	for (size_t i = 0; i < tr->nthreads; i++)
		free(tr->threads[i].open);
	for (size_t i = 0; i < tr->n; i++)
		free(tr->spans[i].text);
	free(tr->threads);
	free(tr->spans);
	free(tr->rows);
	/* empty, its settings kept for another load */
	*tr = (struct thread_ranges){ .drop_any = tr->drop_any, .row_size = tr->row_size };
}

void *thread_ranges__row(const struct thread_ranges *tr, size_t i)
{
	return tr->rows + i * tr->row_size;
}

/* 1 added, 0 not held, < 0 out of memory */
static int add_row(struct thread_ranges *tr, int64_t tid, int64_t start, int64_t end)
{
	struct thread_ranges_thread *last = tr->nthreads ? &tr->threads[tr->nthreads - 1] : NULL;

	if (tr->n >= max_rows)
		return 0;
	if (!last || last->tid != tid) {
		/* the threads come in rising order, each once */
		if (last && last->tid > tid)
			return 0;
		if (prof_array__grow(&tr->threads, &tr->threads_cap, tr->nthreads + 1, sizeof *tr->threads) < 0)
			return -1;
		last = &tr->threads[tr->nthreads++];
		*last = (struct thread_ranges_thread){ .tid = tid, .first = tr->n, .end = tr->n, .next = tr->n };
	}
	if (prof_array__grow(&tr->spans, &tr->cap, tr->n + 1, sizeof *tr->spans) < 0 ||
	    (tr->row_size && prof_array__grow(&tr->rows, &tr->rows_cap, tr->n + 1, tr->row_size) < 0))
		return -1;
	memset(thread_ranges__row(tr, tr->n), 0, tr->row_size);
	tr->spans[tr->n++] = (struct thread_ranges_span){ start, end, NULL };
	last->end = tr->n;
	return 1;
}

int thread_ranges__load(struct thread_ranges *tr, struct prof_cursor *c,
			int (*keep)(void *ctx, struct prof_cursor *c, void *row, char **text, struct prof_error *err),
			void *ctx, struct prof_error *err)
{
	int rc, held = 1;

	while (held == 1 && (rc = prof_cursor__next(c, err)) > 0) {
		for (int col = 0; col < 3; col++)
			if (prof_cursor__kind(c, col) != PROF_VALUE_INT)
				held = 0;
		if (held)
			held = add_row(tr, prof_cursor__int64(c, 0), prof_cursor__int64(c, 1),
				       prof_cursor__int64(c, 2));
		if (held < 0)
			held = nomem(err);
		else if (held == 1 &&
			 (rc = keep(ctx, c, thread_ranges__row(tr, tr->n - 1), &tr->spans[tr->n - 1].text, err)) < 0)
			held = rc;
	}
	if (held == 1 && rc < 0)
		held = rc;
	if (held != 1)
		thread_ranges__exit(tr);
	return held;
}

static struct thread_ranges_thread *find(struct thread_ranges *tr, int64_t tid)
{
	size_t lo;

	if (tr->hit < tr->nthreads && tr->threads[tr->hit].tid == tid)
		return &tr->threads[tr->hit];
	lo = sum_sorted__count_before(tr->threads, tr->nthreads, sizeof *tr->threads,
				      offsetof(struct thread_ranges_thread, tid), tid, false);
	if (lo == tr->nthreads || tr->threads[lo].tid != tid)
		return NULL;
	tr->hit = lo;
	return &tr->threads[lo];
}

/* The ranges that ended by t leave the open list: every one, or those on
 * top (drop_any). */
static void close_until(const struct thread_ranges *tr, struct thread_ranges_thread *th, int64_t t)
{
	size_t kept = 0;

	if (!tr->drop_any) {
		while (th->nopen && tr->spans[th->open[th->nopen - 1]].end_ns <= t)
			th->nopen--;
		return;
	}
	for (size_t i = 0; i < th->nopen; i++)
		if (tr->spans[th->open[i]].end_ns > t)
			th->open[kept++] = th->open[i];
	th->nopen = kept;
}

int thread_ranges__at(struct thread_ranges *tr, int64_t tid, int64_t t, const size_t **open, size_t *n,
		      struct prof_error *err)
{
	struct thread_ranges_thread *th = find(tr, tid);

	*open = NULL;
	*n = 0;
	if (!th)
		return 0;
	if (th->called && t < th->last_ns)
		return THREAD_RANGES_BACK;
	th->called = true;
	th->last_ns = t;
	for (; th->next < th->end && tr->spans[th->next].start_ns <= t; th->next++) {
		/* ranges that ended before this one began are closed for good */
		close_until(tr, th, tr->spans[th->next].start_ns);
		if (prof_array__grow(&th->open, &th->open_cap, th->nopen + 1, sizeof *th->open) < 0)
			return nomem(err);
		th->open[th->nopen++] = th->next;
	}
	close_until(tr, th, t);
	*open = th->open;
	*n = th->nopen;
	return 1;
}

void thread_ranges__rewind(struct thread_ranges *tr)
{
	for (size_t i = 0; i < tr->nthreads; i++) {
		struct thread_ranges_thread *th = &tr->threads[i];

		th->next = th->first;
		th->nopen = 0;
		th->called = false;
	}
	tr->hit = 0;
}

char *thread_ranges__sql_threads(const struct thread_ranges *tr, const char *column)
{
	size_t cap = strlen(column) + 32 + tr->nthreads * 22, len;
	char *sql;

	if (tr->nthreads > 256)
		return strdup("");
	if (tr->nthreads == 0)
		return strdup(" AND 0");
	sql = malloc(cap);
	if (!sql)
		return NULL;
	len = (size_t)snprintf(sql, cap, " AND %s IN (", column);
	for (size_t i = 0; i < tr->nthreads; i++)
		len += (size_t)snprintf(sql + len, cap - len, "%s%" PRId64, i ? ", " : "", tr->threads[i].tid);
	snprintf(sql + len, cap - len, ")");
	return sql;
}
