/* python_places.c - the lines of the program where the host was: samples
 * and CUDA calls counted by the innermost Python frame of their stacks,
 * for diagnose's evidence of which line holds the host or synchronises
 * (python_stacks.h). */
#include "model/python_stacks.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/sums.h"
#include "prof/strfmt.h"
#include "prof/tables.h"

/* A file of a library rather than of the program: an installed package,
 * the standard library, the interpreter's own shims ("<frozen ...>"), and
 * perfkit's hook module. SQL over a file path X. */
#define LIBRARY_FILE(X)                                                                        \
	"(" X " LIKE '%/site-packages/%' OR " X " LIKE '%/dist-packages/%' OR " X                    \
	" LIKE '%/lib/python3%' OR " X " LIKE '<%' OR " X " LIKE '%/" PY_HOOK_FILE "')"

/* Each stack's innermost Python frame (native frames name a library, not a
 * line) and its innermost frame of the program's own (not a library's),
 * then the rows of a source `w` (globalPid p, stackId k, count n, weight v)
 * added up per pair, the heaviest first. */
#define PLACES_SQL(W) "WITH w AS (" W ")," PLACES_REST
#define PLACES_REST                                                                           \
	" i AS (SELECT globalPid AS p, stackId AS k, min(depth) AS d FROM " PROF_T_PY_FRAMES    \
	" WHERE kind = 0 AND (globalPid, stackId) IN (SELECT p, k FROM w) GROUP BY 1, 2),"     \
	" u AS (SELECT f.globalPid AS p, f.stackId AS k, min(f.depth) AS d FROM "               \
	PROF_T_PY_FRAMES " f JOIN " PROF_T_STRINGS " s ON s.id = f.fileId WHERE f.kind = 0"     \
	" AND NOT " LIBRARY_FILE("s.value") " AND (f.globalPid, f.stackId) IN"                 \
	" (SELECT p, k FROM w) GROUP BY 1, 2)"                                                  \
	" SELECT sfn.value, sfi.value, f.line, total(w.n), total(w.v), g.depth > f.depth,"    \
	" gfn.value, gfi.value, g.line FROM w"                                                 \
	" JOIN i ON i.p = w.p AND i.k = w.k JOIN " PROF_T_PY_FRAMES " f"                      \
	" ON f.globalPid = i.p AND f.stackId = i.k AND f.depth = i.d"                         \
	" LEFT JOIN u ON u.p = w.p AND u.k = w.k LEFT JOIN " PROF_T_PY_FRAMES " g"           \
	" ON g.globalPid = u.p AND g.stackId = u.k AND g.depth = u.d"                          \
	" LEFT JOIN " PROF_T_STRINGS " sfn ON sfn.id = f.functionId"                           \
	" LEFT JOIN " PROF_T_STRINGS " sfi ON sfi.id = f.fileId"                               \
	" LEFT JOIN " PROF_T_STRINGS " gfn ON gfn.id = g.functionId"                           \
	" LEFT JOIN " PROF_T_STRINGS " gfi ON gfi.id = g.fileId"                               \
	" GROUP BY f.functionId, f.fileId, f.line, g.functionId, g.fileId, g.line"            \
	" ORDER BY 5 DESC, 4 DESC, 2, 3, 1, 8, 9"

static int load(struct prof_store *s, const char *sql, int64_t from_ns, int64_t to_ns, int state,
		struct py_places *p, struct prof_error *err)
{
	struct prof_cursor *c;
	int rc;

	memset(p, 0, sizeof *p);
	rc = prof_cursor__open(s, sql, &c, err);
	if (rc < 0)
		return rc;
	prof_cursor__bind_int64(c, 1, from_ns);
	prof_cursor__bind_int64(c, 2, to_ns);
	if (state >= 0)
		prof_cursor__bind_int64(c, 3, state);
	while ((rc = prof_cursor__next(c, err)) == 1) {
		const char *fn = prof_cursor__text(c, 0), *file = prof_cursor__text(c, 1);
		struct py_place *q;

		if (sum_array__grow(&p->v, &p->cap, p->n, sizeof *p->v) < 0) {
			rc = prof_error__set(err, PROF_E_NOMEM, "out of memory");
			break;
		}
		q = &p->v[p->n];
		q->function = strdup(fn ? fn : "?");
		q->file = strdup(file ? file : "?");
		q->line = prof_cursor__int64(c, 2);
		q->count = (int64_t)prof_cursor__double(c, 3);
		q->weight = (int64_t)prof_cursor__double(c, 4);
		q->caller_function = q->caller_file = NULL;
		if (prof_cursor__int64(c, 5) == 1) {
			fn = prof_cursor__text(c, 6);
			file = prof_cursor__text(c, 7);
			q->caller_function = strdup(fn ? fn : "?");
			q->caller_file = strdup(file ? file : "?");
			q->caller_line = prof_cursor__int64(c, 8);
		}
		p->n++;
		if (!q->function || !q->file ||
		    (prof_cursor__int64(c, 5) == 1 && (!q->caller_function || !q->caller_file))) {
			rc = prof_error__set(err, PROF_E_NOMEM, "out of memory");
			break;
		}
	}
	prof_cursor__close(c);
	if (rc < 0)
		py_places__exit(p);
	return rc < 0 ? rc : 0;
}

/* The threads that made CUDA calls in the span. */
#define CUDA_THREADS                                                                    \
	"SELECT globalTid FROM " PROF_T_RUNTIME " WHERE start >= ?1 AND start < ?2 UNION "  \
	"SELECT globalTid FROM " PROF_T_DRIVER " WHERE start >= ?1 AND start < ?2"

int py_places__sampled(struct prof_store *s, int64_t from_ns, int64_t to_ns,
		       bool cuda_threads, struct py_places *p, struct prof_error *err)
{
	static const char all[] = PLACES_SQL(
		"SELECT globalPid AS p, stackId AS k, count(*) AS n, count(*) AS v FROM "
		PROF_T_PY_SAMPLES " WHERE start >= ?1 AND start < ?2 AND state <> ?3 GROUP BY 1, 2");
	/* perfkit's own hook is the capture's cost, not the program's work */
	static const char cuda[] = PLACES_SQL(
		"SELECT globalPid AS p, stackId AS k, count(*) AS n, count(*) AS v FROM "
		PROF_T_PY_SAMPLES " y WHERE start >= ?1 AND start < ?2 AND state <> ?3"
		" AND globalTid IN (" CUDA_THREADS ") AND NOT EXISTS (SELECT 1 FROM "
		PROF_T_PY_FRAMES " h JOIN " PROF_T_STRINGS " hs ON hs.id = h.fileId"
		" WHERE h.globalPid = y.globalPid AND h.stackId = y.stackId"
		" AND hs.value LIKE '%/" PY_HOOK_FILE "') GROUP BY 1, 2");

	return load(s, cuda_threads ? cuda : all, from_ns, to_ns, PROF_PY_IN_CUDA, p, err);
}

/* PLACES_SQL over a source that reads calls_sql: the source's SQL before
 * and after it, put together without a format (the LIKE patterns hold %). */
static int load_around(struct prof_store *s, const char *before, const char *calls_sql,
		       const char *after, int64_t from_ns, int64_t to_ns, struct py_places *p,
		       struct prof_error *err)
{
	char *sql = prof_strfmt("%s%s%s", before, calls_sql, after);
	int rc;

	if (!sql)
		return prof_error__set(err, PROF_E_NOMEM, "out of memory");
	rc = load(s, sql, from_ns, to_ns, -1, p, err);
	free(sql);
	return rc;
}

int py_places__of_calls(struct prof_store *s, const char *calls_sql, int64_t from_ns,
			int64_t to_ns, struct py_places *p, struct prof_error *err)
{
	return load_around(s, "WITH w AS (SELECT y.globalPid AS p, y.stackId AS k, count(*) AS n,"
			   " total(x.end - x.start) AS v FROM (", calls_sql,
			   ") x JOIN " PROF_T_PY_CUDA_CALLS " y ON y.globalTid = x.globalTid"
			   " AND y.correlationId = x.correlationId GROUP BY 1, 2)," PLACES_REST,
			   from_ns, to_ns, p, err);
}

int py_places__sampled_in_calls(struct prof_store *s, const char *calls_sql, int64_t from_ns,
				int64_t to_ns, struct py_places *p, struct prof_error *err)
{
	return load_around(s, "WITH w AS (SELECT y.globalPid AS p, y.stackId AS k, count(*) AS n,"
			   " count(*) AS v FROM (", calls_sql,
			   ") x JOIN " PROF_T_PY_SAMPLES " y ON y.globalTid = x.globalTid"
			   " AND y.start >= x.start AND y.start < x.end AND y.state = 1 GROUP BY 1, 2),"
			   PLACES_REST, from_ns, to_ns, p, err);
}

void py_places__exit(struct py_places *p)
{
	for (size_t i = 0; i < p->n; i++) {
		free(p->v[i].function);
		free(p->v[i].file);
		free(p->v[i].caller_function);
		free(p->v[i].caller_file);
	}
	free(p->v);
	memset(p, 0, sizeof *p);
}
