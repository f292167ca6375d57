/* python_modules.c - the nn.Module ranges of `perfkit run --pytorch=modules`
 * in a span of the capture: each range's host time apart from its
 * children, and the GPU work launched inside it (python_stacks.h). */
#include "model/python_stacks.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/sql.h"
#include "model/sums.h"
#include "prof/saturate.h"
#include "prof/strfmt.h"
#include "prof/strmap.h"
#include "prof/tables.h"

/* The module ranges of the whole capture, indexed as the attribution seeks
 * them: by thread and start. Domains are numbered per process, so a range
 * is the module domain's by its number in the process that created it. */
static const char create_sql[] =
	"DROP TABLE IF EXISTS " PY_MODULES_TABLE ";"
	"CREATE TABLE " PY_MODULES_TABLE " AS SELECT n.rowid AS id, n.globalTid AS globalTid,"
	" n.start AS start, n.end AS end, n.category AS direction,"
	" coalesce(s.value, n.text) AS name, " SUM_BAD_SPAN("n.") " AS bad"
	" FROM " PROF_T_NVTX " n LEFT JOIN " PROF_T_STRINGS " s ON s.id = n.textId"
	" WHERE n.eventType IN (" PROF_SQL_NVTX_RANGES ") AND n.category IN (1, 2, 3)"
	" AND (n.domainId, " PROF_SQL_PID_OF_TID("n.globalTid") ") IN (SELECT d.domainId, "
	PROF_SQL_PID_OF_TID("d.globalTid") " FROM " PROF_T_NVTX " d LEFT JOIN " PROF_T_STRINGS
	" ds ON ds.id = d.textId WHERE d.eventType = " PROF_SQL_NVTX_DOMAIN_CREATE
	" AND coalesce(ds.value, d.text) = '" PY_MODULES_DOMAIN "');"
	"CREATE INDEX temp.perfkit_py_modules_tid ON perfkit_py_modules (globalTid, start);";

static int nomem(struct prof_error *err)
{
	return prof_error__set(err, PROF_E_NOMEM, "out of memory");
}

/* The index of name in m->names, added when new. */
static int intern(struct py_modules *m, struct prof_strmap *map, const char *name, int64_t *idx,
		  struct prof_error *err)
{
	size_t len = strlen(name);
	uint64_t h = prof_strmap__hash(name, len);

	if (prof_strmap__find(map, name, len, h, idx))
		return 0;
	if (sum_array__grow(&m->names, &m->names_cap, m->nnames, sizeof *m->names) < 0)
		return nomem(err);
	m->names[m->nnames] = strdup(name);
	if (!m->names[m->nnames] || prof_strmap__add(map, name, len, h, (int64_t)m->nnames) < 0) {
		free(m->names[m->nnames]);
		return nomem(err);
	}
	*idx = (int64_t)m->nnames++;
	return 0;
}

static int load_ranges(struct prof_store *s, int64_t from_ns, int64_t to_ns, struct py_modules *m,
		       struct prof_error *err)
{
	struct prof_strmap map;
	struct prof_cursor *c;
	int rc;

	prof_strmap__init(&map);
	rc = prof_cursor__open(s, "SELECT id, globalTid, start, end, direction, coalesce(name, ''), bad"
			       " FROM " PY_MODULES_TABLE " WHERE start >= ?1 AND start < ?2"
			       " ORDER BY globalTid, start, end DESC, id", &c, err);
	if (rc < 0)
		goto out;
	prof_cursor__bind_int64(c, 1, from_ns);
	prof_cursor__bind_int64(c, 2, to_ns);
	while ((rc = prof_cursor__next(c, err)) == 1) {
		struct py_module_range *r;

		if (prof_cursor__int64(c, 6)) {
			m->rows_left_out++;
			continue;
		}
		if (sum_array__grow(&m->v, &m->cap, m->n, sizeof *m->v) < 0) {
			rc = nomem(err);
			break;
		}
		r = &m->v[m->n];
		memset(r, 0, sizeof *r);
		r->id = prof_cursor__int64(c, 0);
		r->global_tid = prof_cursor__int64(c, 1);
		r->start_ns = prof_cursor__int64(c, 2);
		r->end_ns = prof_cursor__int64(c, 3);
		r->direction = (int)prof_cursor__int64(c, 4);
		rc = intern(m, &map, prof_cursor__text(c, 5), &r->name, err);
		if (rc < 0)
			break;
		m->n++;
	}
	prof_cursor__close(c);
out:
	prof_strmap__exit(&map);
	return rc < 0 ? rc : 0;
}

/* Each range's self time: the time it is the innermost module range open
 * on its thread, the latest to start (the shorter of two that start
 * together), the range the GPU attribution gives self time to. The ranges
 * are in (thread, start, end descending) order, so of the ranges open at a
 * moment the innermost is the one latest in that order. A sweep over the
 * thread's starts and ends gives each stretch between two of them to the
 * innermost range open there; backward ranges (start/end ranges) need not
 * nest, and overlapping children are counted once. */
struct edge {
	int64_t t;
	size_t range;
	bool start;
};

static int by_time(const void *a, const void *b)
{
	const struct edge *x = a, *y = b;

	if (x->t != y->t)
		return x->t < y->t ? -1 : 1;
	return (x->range > y->range) - (x->range < y->range);
}

static int self_times(struct py_modules *m, struct prof_error *err)
{
	struct edge *e = malloc(2 * (m->n ? m->n : 1) * sizeof *e);
	size_t *open = NULL, nopen = 0, open_cap = 0;

	if (!e)
		return nomem(err);
	for (size_t lo = 0, hi; lo < m->n; lo = hi) {
		size_t ne = 0;

		for (hi = lo; hi < m->n && m->v[hi].global_tid == m->v[lo].global_tid; hi++) {
			e[ne++] = (struct edge){ m->v[hi].start_ns, hi, true };
			e[ne++] = (struct edge){ m->v[hi].end_ns, hi, false };
		}
		qsort(e, ne, sizeof *e, by_time);
		nopen = 0;
		for (size_t i = 0; i < ne; i++) {
			size_t inner = 0;

			if (e[i].start) {
				if (sum_array__grow(&open, &open_cap, nopen, sizeof *open) < 0) {
					free(open);
					free(e);
					return nomem(err);
				}
				open[nopen++] = e[i].range;
			} else {
				for (size_t k = 0; k < nopen; k++)
					if (open[k] == e[i].range) {
						open[k] = open[--nopen];
						break;
					}
			}
			if (nopen == 0 || i + 1 == ne || e[i + 1].t == e[i].t)
				continue;
			for (size_t k = 0; k < nopen; k++)
				inner = open[k] > inner || k == 0 ? open[k] : inner;
			m->v[inner].self_ns = prof_add_saturated(m->v[inner].self_ns,
								 prof_span_saturated(e[i].t, e[i + 1].t));
		}
	}
	free(open);
	free(e);
	return 0;
}

/* The GPU work launched inside the ranges: each piece once per range open
 * at its call's start, its self time to the innermost. The pieces come
 * with their calls in (thread, call start) order and one sweep over the
 * ranges, in the same order, keeps those open at the call: each range
 * joins the open set once and leaves it once, so the attribution is linear
 * in the pieces times the ranges open at once. Seeking, for each call,
 * the ranges that started before it grew with the longest range: a GPT-2
 * training capture, its whole-model range open over every call, took 20 s
 * of the diagnosis that way. */
#define GPU_PART(TABLE, N, BAD)                                                \
	"SELECT " N " AS t, rowid AS r, correlationId, globalPid, "                \
	"CASE WHEN " BAD " THEN 0 ELSE end - start END AS d, " BAD " AS bad FROM " TABLE
#define GPU_SQL                                                                          \
	"SELECT k.t, k.r, k.d, k.bad, a.globalTid, a.start"                                  \
	" FROM (%s) AS k JOIN (%s) AS a ON " SUM_LAUNCHED_BY("k", "a")                       \
	" WHERE a.start >= ?1 AND a.globalTid IN (SELECT globalTid FROM " PY_MODULES_TABLE   \
	" WHERE start >= ?1 AND start < ?2 AND NOT bad) ORDER BY a.globalTid, a.start"

/* One piece of work and the innermost range open at its call. A piece
 * launched by two calls (two API rows of one correlation id) is given to
 * the innermost range of either, as a piece is once: the pieces are
 * sorted by (table, row) to find them. */
struct piece {
	int64_t row;
	int64_t d;
	size_t inner;
	int table; /* 0 kernel, 1 memcpy, 2 memset */
	bool bad;
};

/* Whether range x is further in than range y: the later start, of two
 * that start together the earlier end, then the lower id. */
static bool inner_of(const struct py_module_range *x, const struct py_module_range *y)
{
	if (x->start_ns != y->start_ns)
		return x->start_ns > y->start_ns;
	if (x->end_ns != y->end_ns)
		return x->end_ns < y->end_ns;
	return x->id < y->id;
}

static int by_piece(const void *a, const void *b)
{
	const struct piece *x = a, *y = b;

	if (x->table != y->table)
		return x->table - y->table;
	return (x->row > y->row) - (x->row < y->row);
}

/* The self time of each piece to the innermost range open at its call. */
static void give_self(struct py_modules *m, struct piece *p, size_t n)
{
	qsort(p, n, sizeof *p, by_piece);
	for (size_t lo = 0, hi; lo < n; lo = hi) {
		size_t inner = p[lo].inner;
		struct py_module_range *r;

		for (hi = lo + 1; hi < n && p[hi].table == p[lo].table && p[hi].row == p[lo].row; hi++)
			if (inner_of(&m->v[p[hi].inner], &m->v[inner]))
				inner = p[hi].inner;
		r = &m->v[inner];
		r->gpu_self_ns = prof_add_saturated(r->gpu_self_ns, p[lo].d);
		m->gpu_inside_ns = prof_add_saturated(m->gpu_inside_ns, p[lo].d);
		m->rows_left_out += p[lo].bad;
		if (p[lo].table == 0 && !p[lo].bad) {
			r->self_kernels++;
			r->self_kernel_ns = prof_add_saturated(r->self_kernel_ns, p[lo].d);
		}
	}
}

/* The sweep's state: the ranges of the thread being walked, and of them
 * those open. */
struct sweep {
	size_t next, end;  /* m->v[next, end): the thread's ranges not yet open */
	size_t *open;
	size_t nopen, open_cap;
};

/* The ranges of thread tid open at t (t no earlier than the last call's
 * on the thread); false where none is. */
static int open_at(struct py_modules *m, struct sweep *w, int64_t tid, int64_t t, bool new_thread)
{
	if (new_thread) {
		w->nopen = 0;
		w->next = 0;
		/* m->v and the calls are both in thread order */
		while (w->next < m->n && m->v[w->next].global_tid < tid)
			w->next++;
		for (w->end = w->next; w->end < m->n && m->v[w->end].global_tid == tid; w->end++)
			;
	}
	for (; w->next < w->end && m->v[w->next].start_ns <= t; w->next++) {
		if (sum_array__grow(&w->open, &w->open_cap, w->nopen, sizeof *w->open) < 0)
			return -1;
		w->open[w->nopen++] = w->next;
	}
	for (size_t k = 0; k < w->nopen;)
		if (m->v[w->open[k]].end_ns <= t)
			w->open[k] = w->open[--w->nopen];
		else
			k++;
	return 0;
}

static int gpu_times(struct prof_store *s, int64_t from_ns, int64_t to_ns, struct py_modules *m,
		     struct prof_error *err)
{
	static const char *const tables[] = { PROF_T_KERNEL, PROF_T_MEMCPY, PROF_T_MEMSET };
	static const char *const parts[] = {
		GPU_PART(PROF_T_KERNEL, "0", SUM_BAD_SPAN("")),
		GPU_PART(PROF_T_MEMCPY, "1", SUM_BAD_COPY("")),
		GPU_PART(PROF_T_MEMSET, "2", SUM_BAD_COPY("")),
	};
	char *work = NULL, *calls = NULL, *sql = NULL;
	struct sweep w = { 0 };
	struct piece *pieces = NULL;
	size_t npieces = 0, pieces_cap = 0;
	struct prof_cursor *c = NULL;
	int64_t tid = 0;
	bool first = true;
	int rc = 0;

	if (m->n == 0)
		return 0;
	work = sum_union(s, tables, parts, 3, &rc, err);
	if (work)
		calls = sum_api_calls(s, &rc, err);
	if (!work || !calls)
		goto out;
	sql = prof_strfmt(GPU_SQL, work, calls);
	if (!sql) {
		rc = nomem(err);
		goto out;
	}
	rc = prof_cursor__open(s, sql, &c, err);
	if (rc < 0)
		goto out;
	prof_cursor__bind_int64(c, 1, from_ns);
	prof_cursor__bind_int64(c, 2, to_ns);
	while ((rc = prof_cursor__next(c, err)) == 1) {
		int64_t call_tid = prof_cursor__int64(c, 4), d = prof_cursor__int64(c, 2);
		size_t inner;

		if (open_at(m, &w, call_tid, prof_cursor__int64(c, 5), first || call_tid != tid) < 0) {
			rc = nomem(err);
			break;
		}
		first = false;
		tid = call_tid;
		if (w.nopen == 0)
			continue;
		inner = w.open[0];
		for (size_t k = 0; k < w.nopen; k++) {
			struct py_module_range *r = &m->v[w.open[k]];

			r->gpu_total_ns = prof_add_saturated(r->gpu_total_ns, d);
			if (inner_of(r, &m->v[inner]))
				inner = w.open[k];
		}
		if (sum_array__grow(&pieces, &pieces_cap, npieces, sizeof *pieces) < 0) {
			rc = nomem(err);
			break;
		}
		pieces[npieces++] = (struct piece){ .row = prof_cursor__int64(c, 1), .d = d, .inner = inner,
						    .table = (int)prof_cursor__int64(c, 0),
						    .bad = prof_cursor__int64(c, 3) != 0 };
	}
	prof_cursor__close(c);
	if (rc == 0)
		give_self(m, pieces, npieces);
out:
	free(pieces);
	free(w.open);
	free(sql);
	free(calls);
	free(work);
	return rc < 0 ? rc : 0;
}

static int read_modules(struct prof_store *s, int64_t from_ns, int64_t to_ns, struct py_modules *m,
			 struct prof_error *err)
{
	int rc = prof_store__exec(s, create_sql, err);

	if (rc == 0)
		rc = load_ranges(s, from_ns, to_ns, m, err);
	if (rc == 0)
		rc = self_times(m, err);
	if (rc == 0)
		rc = gpu_times(s, from_ns, to_ns, m, err);
	return rc;
}

/* A copy of from, its own memory (NULL: out of memory). */
static struct py_modules *modules_copy(const struct py_modules *from)
{
	struct py_modules *m = calloc(1, sizeof *m);

	if (!m)
		return NULL;
	*m = (struct py_modules){ .gpu_inside_ns = from->gpu_inside_ns, .rows_left_out = from->rows_left_out };
	m->v = from->n ? malloc(from->n * sizeof *m->v) : NULL;
	m->names = from->nnames ? calloc(from->nnames, sizeof *m->names) : NULL;
	if ((from->n && !m->v) || (from->nnames && !m->names)) {
		py_modules__exit(m);
		free(m);
		return NULL;
	}
	if (from->n)
		memcpy(m->v, from->v, from->n * sizeof *m->v);
	m->n = m->cap = from->n;
	m->names_cap = from->nnames;
	for (; m->nnames < from->nnames; m->nnames++)
		if (!(m->names[m->nnames] = strdup(from->names[m->nnames]))) {
			py_modules__exit(m);
			free(m);
			return NULL;
		}
	return m;
}

static void modules_free(void *m)
{
	py_modules__exit(m);
	free(m);
}

/* The module ranges of a span of a finished capture, read once for the
 * connections to the file (prof_store__shared_take): the HTML page's
 * module table and its diagnosis each asked them of the same span, a
 * join of every GPU row to its call. */
static const char modules_key = 0;

int py_modules__load(struct prof_store *s, int64_t from_ns, int64_t to_ns, struct py_modules *m,
		     struct prof_error *err)
{
	const int64_t span[2] = { from_ns, to_ns };
	struct py_modules *copy;
	void *known = NULL;
	int got = -1, rc;

	memset(m, 0, sizeof *m);
	if (prof_store__is_finished(s) && !prof_store__restricted(s))
		got = prof_store__shared_take(s, &modules_key, span, sizeof span, &known);
	if (got == 1) {
		copy = modules_copy(known);
		if (!copy)
			return nomem(err);
		*m = *copy;
		free(copy);
		return 0;
	}
	rc = read_modules(s, from_ns, to_ns, m, err);
	if (got != 0)
		return rc;
	copy = rc == 0 ? modules_copy(m) : NULL;
	if (copy)
		prof_store__shared_give(s, &modules_key, span, sizeof span, copy, modules_free);
	else /* whoever waits reads them for itself */
		prof_store__shared_drop(s, &modules_key, span, sizeof span);
	return rc;
}

void py_modules__exit(struct py_modules *m)
{
	for (size_t i = 0; i < m->nnames; i++)
		free(m->names[i]);
	free(m->names);
	free(m->v);
	memset(m, 0, sizeof *m);
}

void py_module__split(const char *name, char *buf, size_t cap, const char **qualname,
		      const char **cls)
{
	size_t len;
	char *open;

	snprintf(buf, cap, "%s", name ? name : "");
	*qualname = buf;
	*cls = "";
	len = strlen(buf);
	open = len > 0 && buf[len - 1] == ')' ? strrchr(buf, '(') : NULL;
	if (!open || open == buf || open[-1] != ' ')
		return;
	buf[len - 1] = '\0';
	open[-1] = '\0';
	*cls = open + 1;
}
