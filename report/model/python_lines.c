/* python_lines.c - the Python samples of a span of the capture counted
 * per line of the program: self (the line is the sample's innermost
 * frame) and total (the line is anywhere in its stack, once per sample),
 * by what the thread was doing (python_stacks.h). */
#include "model/python_stacks.h"

#include <stdlib.h>
#include <string.h>

#include "model/sums.h"
#include "prof/event.h"
#include "prof/tables.h"

/* The samples grouped by stack and state first (a stack is sampled many
 * times), then each distinct line of a stack once, marked innermost when
 * one of its frames is at depth 0 (a recursive function's line is in a
 * stack more than once). A native function its library does not export
 * is named by its offset ("+0x98e4f"), which tells a reader nothing: those
 * of a library are one row, "(not exported)" (functionId -1). Ordered by
 * line so that a line's states arrive together. */
static const char lines_sql[] =
	"WITH w AS (SELECT globalPid AS p, stackId AS k, state AS st, count(*) AS n FROM "
	PROF_T_PY_SAMPLES " WHERE start >= ?1 AND start < ?2 AND state BETWEEN 0 AND 2"
	" GROUP BY 1, 2, 3),"
	" l AS (SELECT w.st AS st, w.n AS n, CASE WHEN f.kind = " PROF_SQL_PY_FRAME_NATIVE
	" AND ff.value LIKE '+0x%' THEN -1 ELSE f.functionId END AS fn, f.fileId AS fi,"
	" f.line AS ln, f.kind AS kd, max(f.depth = 0) AS inner FROM w JOIN " PROF_T_PY_FRAMES
	" f ON f.globalPid = w.p AND f.stackId = w.k LEFT JOIN " PROF_T_STRINGS
	" ff ON ff.id = f.functionId GROUP BY w.p, w.k, w.st, fn, fi, ln, kd)"
	" SELECT l.fn, l.fi, coalesce(l.ln, 0), coalesce(l.kd, 0), l.st,"
	" total(CASE WHEN l.inner THEN l.n END), total(l.n),"
	" CASE WHEN l.fn = -1 THEN '(not exported)' ELSE sfn.value END, sfi.value FROM l"
	" LEFT JOIN " PROF_T_STRINGS " sfn ON sfn.id = l.fn LEFT JOIN " PROF_T_STRINGS
	" sfi ON sfi.id = l.fi GROUP BY l.fn, l.fi, l.ln, l.kd, l.st ORDER BY l.fn, l.fi, l.ln, l.kd";

static int nomem(struct prof_error *err)
{
	return prof_error__set(err, PROF_E_NOMEM, "out of memory");
}

static char *dup_or(const char *s, const char *absent)
{
	return strdup(s ? s : absent);
}

static int64_t sum3(const int64_t v[3])
{
	return prof_add_saturated(prof_add_saturated(v[0], v[1]), v[2]);
}

int64_t py_line__self(const struct py_line *l)
{
	return sum3(l->self);
}

int64_t py_line__total(const struct py_line *l)
{
	return sum3(l->total);
}

/* Most self samples first, then most total, then by place, so that equal
 * lines come out in one order on every run. */
static int by_self(const void *a, const void *b)
{
	const struct py_line *x = a, *y = b;
	int64_t sx = py_line__self(x), sy = py_line__self(y);
	int c;

	if (sx != sy)
		return sx < sy ? 1 : -1;
	sx = py_line__total(x);
	sy = py_line__total(y);
	if (sx != sy)
		return sx < sy ? 1 : -1;
	c = strcmp(x->file, y->file);
	if (c)
		return c;
	if (x->line != y->line)
		return x->line < y->line ? -1 : 1;
	return strcmp(x->function, y->function);
}

static int count_states(struct prof_store *s, int64_t from_ns, int64_t to_ns, struct py_lines *l,
			struct prof_error *err)
{
	struct prof_cursor *c;
	int rc = prof_cursor__open(s, "SELECT state, count(*) FROM " PROF_T_PY_SAMPLES
				   " WHERE start >= ?1 AND start < ?2 AND state BETWEEN 0 AND 2"
				   " GROUP BY state", &c, err);

	if (rc < 0)
		return rc;
	prof_cursor__bind_int64(c, 1, from_ns);
	prof_cursor__bind_int64(c, 2, to_ns);
	while ((rc = prof_cursor__next(c, err)) == 1)
		l->samples[prof_cursor__int64(c, 0)] = prof_cursor__int64(c, 1);
	prof_cursor__close(c);
	return rc < 0 ? rc : 0;
}

int py_lines__load(struct prof_store *s, int64_t from_ns, int64_t to_ns, struct py_lines *l,
		   struct prof_error *err)
{
	struct prof_cursor *c;
	int64_t fn = 0, fi = 0, ln = 0, kd = 0;
	int rc;

	memset(l, 0, sizeof *l);
	rc = count_states(s, from_ns, to_ns, l, err);
	if (rc < 0)
		return rc;
	rc = prof_cursor__open(s, lines_sql, &c, err);
	if (rc < 0)
		return rc;
	prof_cursor__bind_int64(c, 1, from_ns);
	prof_cursor__bind_int64(c, 2, to_ns);
	while ((rc = prof_cursor__next(c, err)) == 1) {
		int64_t k[4] = { prof_cursor__int64(c, 0), prof_cursor__int64(c, 1),
				 prof_cursor__int64(c, 2), prof_cursor__int64(c, 3) };
		int st = (int)prof_cursor__int64(c, 4);
		struct py_line *p;

		if (l->n == 0 || k[0] != fn || k[1] != fi || k[2] != ln || k[3] != kd) {
			if (sum_array__grow(&l->v, &l->cap, l->n, sizeof *l->v) < 0) {
				rc = nomem(err);
				break;
			}
			p = &l->v[l->n++];
			memset(p, 0, sizeof *p);
			p->function = dup_or(prof_cursor__text(c, 7), "?");
			p->file = dup_or(prof_cursor__text(c, 8), "?");
			p->line = k[2];
			p->kind = (int)k[3];
			if (!p->function || !p->file) {
				rc = nomem(err);
				break;
			}
			fn = k[0];
			fi = k[1];
			ln = k[2];
			kd = k[3];
		}
		p = &l->v[l->n - 1];
		p->self[st] = (int64_t)prof_cursor__double(c, 5);
		p->total[st] = (int64_t)prof_cursor__double(c, 6);
	}
	prof_cursor__close(c);
	if (rc < 0)
		return rc;
	if (l->n > 1)
		qsort(l->v, l->n, sizeof *l->v, by_self);
	return 0;
}

void py_lines__exit(struct py_lines *l)
{
	for (size_t i = 0; i < l->n; i++) {
		free(l->v[i].function);
		free(l->v[i].file);
	}
	free(l->v);
	memset(l, 0, sizeof *l);
}
