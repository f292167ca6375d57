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

/* The range of id in m (sorted by thread and start, not by id): a map from
 * id to index, built once. */
static int by_id(const void *a, const void *b)
{
	const int64_t *x = a, *y = b;

	return (x[0] > y[0]) - (x[0] < y[0]);
}

/* The GPU work launched inside the ranges: each piece once per range open
 * at its call's start, its self time to the innermost. The search for
 * open ranges goes back from the call's start no further than the longest
 * range (nor before the span), so each call seeks its thread's index over
 * a bounded stretch: one lower bound, as two would leave SQLite to seek by
 * the span's start and scan every earlier range of the thread (3.1 s
 * against 0.3 s on a GPT-2 capture of 14,000 kernels). */
#define GPU_PART(TABLE, BAD)                                                   \
	"SELECT '" TABLE "' AS t, rowid AS r, correlationId, globalPid, "          \
	"CASE WHEN " BAD " THEN 0 ELSE end - start END AS d, " BAD " AS bad FROM " TABLE
#define GPU_SQL                                                                          \
	"SELECT id, " SUM_TOTAL_SATURATED("d") ", "                                          \
	SUM_TOTAL_SATURATED("CASE WHEN rn = 1 THEN d END") ", total(rn = 1 AND bad),"        \
	" total(rn = 1 AND t = '" PROF_T_KERNEL "' AND NOT bad), "                           \
	SUM_TOTAL_SATURATED("CASE WHEN rn = 1 AND t = '" PROF_T_KERNEL "' THEN d END")       \
	" FROM (SELECT m.id AS id, k.t AS t, k.d AS d, k.bad AS bad, row_number() OVER"      \
	" (PARTITION BY k.t, k.r ORDER BY m.start DESC, m.end ASC, m.id) AS rn"              \
	" FROM (%s) AS k JOIN (%s) AS a ON " SUM_LAUNCHED_BY("k", "a")                       \
	" JOIN " PY_MODULES_TABLE " AS m ON " SUM_RANGE_OPEN_AT_CALL("m", "a")               \
	" AND m.start >= max(?1, a.start - ?3) WHERE m.start < ?2 AND NOT m.bad)"             \
	" GROUP BY id"

static int gpu_times(struct prof_store *s, int64_t from_ns, int64_t to_ns, struct py_modules *m,
		     struct prof_error *err)
{
	static const char *const tables[] = { PROF_T_KERNEL, PROF_T_MEMCPY, PROF_T_MEMSET };
	static const char *const parts[] = {
		GPU_PART(PROF_T_KERNEL, SUM_BAD_SPAN("")),
		GPU_PART(PROF_T_MEMCPY, SUM_BAD_COPY("")),
		GPU_PART(PROF_T_MEMSET, SUM_BAD_COPY("")),
	};
	char *work = NULL, *calls = NULL, *sql = NULL;
	int64_t (*ids)[2] = NULL, longest = 0;
	struct prof_cursor *c = NULL;
	int rc = 0;

	for (size_t i = 0; i < m->n; i++) {
		int64_t d = prof_span_saturated(m->v[i].start_ns, m->v[i].end_ns);

		longest = d > longest ? d : longest;
	}
	if (m->n == 0)
		return 0;
	work = sum_union(s, tables, parts, 3, &rc, err);
	if (work)
		calls = sum_api_calls(s, &rc, err);
	if (!work || !calls)
		goto out;
	sql = prof_strfmt(GPU_SQL, work, calls);
	ids = malloc(m->n * sizeof *ids);
	if (!sql || !ids) {
		rc = nomem(err);
		goto out;
	}
	for (size_t i = 0; i < m->n; i++) {
		ids[i][0] = m->v[i].id;
		ids[i][1] = (int64_t)i;
	}
	qsort(ids, m->n, sizeof *ids, by_id);
	rc = prof_cursor__open(s, sql, &c, err);
	if (rc < 0)
		goto out;
	prof_cursor__bind_int64(c, 1, from_ns);
	prof_cursor__bind_int64(c, 2, to_ns);
	prof_cursor__bind_int64(c, 3, longest);
	while ((rc = prof_cursor__next(c, err)) == 1) {
		int64_t key[2] = { prof_cursor__int64(c, 0), 0 };
		int64_t(*hit)[2] = bsearch(key, ids, m->n, sizeof *ids, by_id);
		struct py_module_range *r;

		if (!hit)
			continue;
		r = &m->v[(*hit)[1]];
		r->gpu_total_ns = prof_cursor__int64(c, 1);
		r->gpu_self_ns = prof_cursor__int64(c, 2);
		m->gpu_inside_ns = prof_add_saturated(m->gpu_inside_ns, r->gpu_self_ns);
		m->rows_left_out += (int64_t)prof_cursor__double(c, 3);
		r->self_kernels = (int64_t)prof_cursor__double(c, 4);
		r->self_kernel_ns = prof_cursor__int64(c, 5);
	}
	prof_cursor__close(c);
out:
	free(ids);
	free(sql);
	free(calls);
	free(work);
	return rc < 0 ? rc : 0;
}

int py_modules__load(struct prof_store *s, int64_t from_ns, int64_t to_ns, struct py_modules *m,
		     struct prof_error *err)
{
	int rc;

	memset(m, 0, sizeof *m);
	rc = prof_store__exec(s, create_sql, err);
	if (rc == 0)
		rc = load_ranges(s, from_ns, to_ns, m, err);
	if (rc == 0)
		rc = self_times(m, err);
	if (rc == 0)
		rc = gpu_times(s, from_ns, to_ns, m, err);
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
