/* nvtx_kernels.c - the groups of nvtx_kern_sum: each kernel's time under
 * the innermost push/pop range open on its launching call's thread when
 * the call started, by range name and kernel name (groups.h).
 *
 * One sweep instead of a lookup per kernel: the launches (each kernel
 * joined to its call, SUM_LAUNCHED_BY) and the push/pop ranges both come
 * in (thread, start) order, and a stack per thread holds the ranges
 * started so far that may still be open. A range that has ended before a
 * later start is popped when it surfaces: starts only grow within a thread,
 * so it can never be open again. The stack is as deep as the program
 * nests its ranges, whatever their number; what grows is one value per
 * attributed kernel, which the exact median needs.
 *
 * The rule is SUM_NVTX_OPEN_AT_CALL's: a range N is open at call A when
 * N.start <= A.start < N.end; the innermost is the latest to start, the
 * shorter of two that start together (of two alike, the first recorded).
 * A kernel whose innermost range has no name is left out, as is one
 * launched outside every range.
 *
 * The launches need not be sorted: each API table's rows hold each
 * thread's calls in start order, so the sweep walks each table in its own
 * order with every thread's ranges in memory (thread_ranges.h), a stack a
 * thread, and sorts only where that does not hold (too many ranges, or a
 * call before its thread's last).
 *
 * A CUDA graph recorded whole (--cuda-graph-trace=graph) has one row a
 * launch and none of its kernels: its launches are GPU work under their
 * launching call's range as a kernel is, grouped by graph, in a second
 * sweep of their own (a capture without them pays nothing). */
#include "model/groups.h"
#include "model/names.h"
#include "model/rows.h"
#include "model/sql.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/thread_ranges.h"
#include "prof/array.h"
#include "prof/error.h"
#include "prof/strfmt.h"
#include "prof/strmap.h"
#include "prof/tables.h"

/* The launches in the order the sweep walks them; the calls without a
 * thread or a start can be in no range. */
#define LAUNCHES                                                                         \
	"SELECT a.globalTid, a.start, " PROF_SQL_KERNEL_NAME_ID("k.") ", k.end - k.start, " \
	SUM_BAD_SPAN("k.") " FROM " PROF_T_KERNEL " AS k JOIN (%s) AS a ON "              \
	SUM_LAUNCHED_BY("k", "a") " WHERE a.globalTid IS NOT NULL AND a.start IS NOT NULL " \
	"ORDER BY a.globalTid, a.start"
/* The graph launches likewise, the graph's id where the kernel's name is. */
#define GRAPH_LAUNCHES                                                                   \
	"SELECT a.globalTid, a.start, g.graphId, g.end - g.start, " SUM_BAD_SPAN("g.")      \
	" FROM " PROF_T_GRAPH_TRACE " AS g JOIN (%s) AS a ON " SUM_LAUNCHED_BY("g", "a")    \
	" WHERE a.globalTid IS NOT NULL AND a.start IS NOT NULL ORDER BY a.globalTid, a.start"

/* One API table's launches in the table's own order, the calls outermost;
 * the second %s: the test that keeps a call recorded twice once, the third
 * the threads with ranges (a call of another falls in none: no kernel of
 * it is looked up). */
#define TABLE_LAUNCHES                                                                   \
	"SELECT a.globalTid, a.start, " PROF_SQL_KERNEL_NAME_ID("k.") ", k.end - k.start, " \
	SUM_BAD_SPAN("k.") " FROM %s AS a CROSS JOIN " PROF_T_KERNEL " AS k ON "            \
	SUM_LAUNCHED_BY("k", "a") " WHERE a.globalTid IS NOT NULL AND a.start IS NOT NULL AND %s%s"

/* The push/pop ranges that can be open at some time, in the order they
 * are pushed: by start, and of two that start together the longer first,
 * so the one on top is the innermost. */
static const char ranges_sql[] =
	"SELECT globalTid, start, end, textId, text FROM " PROF_T_NVTX
	" WHERE eventType = " PROF_SQL_NVTX_PUSHPOP " AND globalTid IS NOT NULL"
	" AND start IS NOT NULL AND end IS NOT NULL ORDER BY globalTid, start, end DESC, rowid DESC";

/* A range on a thread's stack; its name is looked up once a kernel falls
 * in it (name < 0 until then). */
struct open_range {
	int64_t end_ns;
	int64_t text_id;
	char *text; /* its own text, used where text_id names no string */
	bool has_text_id;
	int64_t name; /* index into the sweep's names, -1: not yet, -2: none */
};

/* A group's values in the order met, sorted at the end. */
struct kern_group {
	int64_t name, kernel; /* kernel: a graph's id where graph */
	bool kernel_is_null, graph;
	int64_t *values;
	size_t n, cap;
};

struct sweep {
	struct prof_store *s;
	struct open_range *stack;
	size_t depth, stack_cap;
	int64_t tid;
	struct prof_strmap names_by_text; /* range name -> index into names */
	char **names;
	size_t nnames, names_cap;
	struct prof_strmap ids; /* "textId" -> index into names, or -1: no string */
	struct prof_strmap groups_by_key;   /* "name kernel" -> index into groups */
	struct kern_group *groups;
	size_t ngroups, groups_cap;
	int64_t bad;
	bool graphs; /* the sweep walks graph launches, not kernels */
	/* the walk in the tables' order: every thread's ranges, each with its
	 * text and name as the stack holds them (a struct open_range) */
	struct thread_ranges held;
};

static int nomem(struct prof_error *err)
{
	return prof_error__set(err, PROF_E_NOMEM, "out of memory");
}

static void stack__pop(struct sweep *w)
{
	free(w->stack[--w->depth].text);
}

static void stack__clear(struct sweep *w)
{
	while (w->depth)
		stack__pop(w);
}

/* Pop the ranges on top that have ended by t_ns. */
static void stack__close_until(struct sweep *w, int64_t t_ns)
{
	while (w->depth && w->stack[w->depth - 1].end_ns <= t_ns)
		stack__pop(w);
}

static int stack__push(struct sweep *w, struct prof_cursor *r, struct prof_error *err)
{
	struct open_range *o;
	const char *text = prof_cursor__text(r, 4);

	stack__close_until(w, prof_cursor__int64(r, 1));
	if (prof_array__grow(&w->stack, &w->stack_cap, w->depth + 1, sizeof *w->stack) < 0)
		return nomem(err);
	o = &w->stack[w->depth];
	o->end_ns = prof_cursor__int64(r, 2);
	o->has_text_id = !prof_cursor__is_null(r, 3);
	o->text_id = prof_cursor__int64(r, 3);
	o->name = -1;
	o->text = text ? strdup(text) : NULL;
	if (text && !o->text)
		return nomem(err);
	w->depth++;
	return 0;
}

/* The index of name text in w->names, added when new. */
static int name__intern(struct sweep *w, const char *text, int64_t *out, struct prof_error *err)
{
	size_t len = strlen(text);
	uint64_t h = prof_strmap__hash(text, len);
	char *copy;

	if (prof_strmap__find(&w->names_by_text, text, len, h, out))
		return 0;
	if (prof_array__grow(&w->names, &w->names_cap, w->nnames + 1, sizeof *w->names) < 0 ||
	    !(copy = strdup(text)))
		return nomem(err);
	w->names[w->nnames] = copy;
	*out = (int64_t)w->nnames++;
	return prof_strmap__add(&w->names_by_text, text, len, h, *out) < 0 ? nomem(err) : 0;
}

/* The StringIds value of id as an index into w->names (-1: no such
 * string), read once per id. */
static int name__of_id(struct sweep *w, int64_t id, int64_t *out, struct prof_error *err)
{
	char key[24];
	int len = snprintf(key, sizeof key, "%" PRId64, id);
	uint64_t h = prof_strmap__hash(key, (size_t)len);
	char *value;
	int rc;

	if (prof_strmap__find(&w->ids, key, (size_t)len, h, out))
		return 0;
	rc = sum_string(w->s, id, &value, err);
	if (rc < 0)
		return rc;
	*out = -1;
	if (value)
		rc = name__intern(w, value, out, err);
	free(value);
	if (rc == 0 && prof_strmap__add(&w->ids, key, (size_t)len, h, *out) < 0)
		rc = nomem(err);
	return rc;
}

/* The name of range o as coalesce(StringIds.value, text): an index into
 * w->names, or -2 when it has none. */
static int range__name(struct sweep *w, struct open_range *o, struct prof_error *err)
{
	int64_t name = -1;
	int rc = 0;

	if (o->name != -1)
		return 0;
	if (o->has_text_id)
		rc = name__of_id(w, o->text_id, &name, err);
	if (rc == 0 && name < 0 && o->text)
		rc = name__intern(w, o->text, &name, err);
	o->name = name < 0 ? -2 : name;
	return rc;
}

static int group__add(struct sweep *w, int64_t name, struct prof_cursor *k,
		      struct prof_error *err)
{
	bool kernel_is_null = prof_cursor__is_null(k, 2);
	int64_t kernel = prof_cursor__int64(k, 2), at;
	char key[48];
	const char *kind = w->graphs ? "g" : "";
	int len = kernel_is_null ? snprintf(key, sizeof key, "%" PRId64 " %s-", name, kind)
				 : snprintf(key, sizeof key, "%" PRId64 " %s%" PRId64, name, kind,
					    kernel);
	uint64_t h = prof_strmap__hash(key, (size_t)len);
	struct kern_group *g;

	if (!prof_strmap__find(&w->groups_by_key, key, (size_t)len, h, &at)) {
		if (prof_array__grow(&w->groups, &w->groups_cap, w->ngroups + 1, sizeof *w->groups) < 0)
			return nomem(err);
		at = (int64_t)w->ngroups++;
		w->groups[at] = (struct kern_group){ .name = name, .kernel = kernel,
						     .kernel_is_null = kernel_is_null,
						     .graph = w->graphs };
		if (prof_strmap__add(&w->groups_by_key, key, (size_t)len, h, at) < 0)
			return nomem(err);
	}
	g = &w->groups[at];
	if (prof_cursor__int64(k, 4)) {
		w->bad++;
		return 0;
	}
	if (prof_array__grow(&g->values, &g->cap, g->n + 1, sizeof *g->values) < 0)
		return nomem(err);
	g->values[g->n++] = prof_cursor__int64(k, 3);
	return 0;
}

/* One launch: its kernel to the innermost range open on the calling thread
 * at the call's start, after every range that started by then is pushed. */
static int sweep__launch(struct sweep *w, struct prof_cursor *k, struct prof_cursor *r,
			 int *more_ranges, struct prof_error *err)
{
	int64_t tid = prof_cursor__int64(k, 0), t_ns = prof_cursor__int64(k, 1);
	int rc = 0;

	if (tid != w->tid) {
		stack__clear(w);
		w->tid = tid;
	}
	while (*more_ranges > 0 && rc == 0) {
		int64_t rtid = prof_cursor__int64(r, 0);

		if (rtid > tid || (rtid == tid && prof_cursor__int64(r, 1) > t_ns))
			break;
		if (rtid == tid)
			rc = stack__push(w, r, err);
		if (rc == 0 && (*more_ranges = prof_cursor__next(r, err)) < 0)
			rc = *more_ranges;
	}
	if (rc < 0)
		return rc;
	stack__close_until(w, t_ns);
	if (!w->depth)
		return 0;
	rc = range__name(w, &w->stack[w->depth - 1], err);
	if (rc < 0 || w->stack[w->depth - 1].name < 0)
		return rc;
	return group__add(w, w->stack[w->depth - 1].name, k, err);
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

/* A graph's group named as sum_kernel_groups names the graph's launches. */
static int graph__name(const struct kern_group *g, struct sum_group *out, struct prof_error *err)
{
	char name[96];

	sum_graph_launch_name(name, sizeof name, !g->kernel_is_null, g->kernel);
	out->label2 = strdup(name);
	return out->label2 ? 0 : nomem(err);
}

/* Each group with a value as a sum_group: its values sorted into runs and
 * folded as sum_groups__collect folds a sorted stream. */
static int sweep__groups(struct sweep *w, struct sum_groups *gs, int64_t *graph_launches,
			 struct prof_error *err)
{
	struct sum_run *runs = NULL;
	size_t runs_cap = 0;
	int rc = 0;

	gs->rows_left_out += w->bad;
	for (size_t i = 0; i < w->ngroups && rc == 0; i++) {
		struct kern_group *g = &w->groups[i];
		struct sum_group *out;
		size_t nruns = 0;

		if (!g->n)
			continue;
		qsort(g->values, g->n, sizeof *g->values, cmp_i64);
		for (size_t v = 0; v < g->n && rc == 0; v++) {
			if (nruns && runs[nruns - 1].value == g->values[v]) {
				runs[nruns - 1].count++;
				continue;
			}
			if (prof_array__grow(&runs, &runs_cap, nruns + 1, sizeof *runs) < 0)
				rc = nomem(err);
			else
				runs[nruns++] = (struct sum_run){ g->values[v], 1 };
		}
		if (rc == 0 && prof_array__grow(&gs->g, &gs->cap, gs->n + 1, sizeof *gs->g) < 0)
			rc = nomem(err);
		if (rc < 0)
			break;
		out = &gs->g[gs->n++];
		*out = (struct sum_group){ .key = g->kernel, .key_is_null = g->kernel_is_null };
		if (!(out->label = strdup(w->names[g->name])))
			rc = nomem(err);
		else if (!g->graph || (rc = graph__name(g, out, err)) == 0)
			sum_group__fold_runs(out, runs, nruns);
		if (g->graph)
			*graph_launches += (int64_t)g->n;
	}
	free(runs);
	return rc;
}

static void sweep__exit(struct sweep *w)
{
	stack__clear(w);
	free(w->stack);
	for (size_t i = 0; i < w->nnames; i++)
		free(w->names[i]);
	free(w->names);
	for (size_t i = 0; i < w->ngroups; i++)
		free(w->groups[i].values);
	free(w->groups);
	prof_strmap__exit(&w->names_by_text);
	prof_strmap__exit(&w->ids);
	prof_strmap__exit(&w->groups_by_key);
}

/* A range held as the stack holds it, its text the held ranges' own. */
static int hold_range(void *ctx, struct prof_cursor *r, void *row, char **text, struct prof_error *err)
{
	const char *t = prof_cursor__text(r, 4);
	struct open_range *o = row;

	(void)ctx;
	*o = (struct open_range){ .end_ns = prof_cursor__int64(r, 2), .text_id = prof_cursor__int64(r, 3),
				  .has_text_id = !prof_cursor__is_null(r, 3), .name = -1 };
	o->text = *text = t ? strdup(t) : NULL;
	return t && !o->text ? nomem(err) : 0;
}

/* One launch of a walk in a table's order: 0, THREAD_RANGES_BACK where it
 * starts before its thread's last, < 0 an error. */
static int rows__launch(struct sweep *w, struct prof_cursor *k, struct prof_error *err)
{
	const size_t *open;
	size_t n;
	struct open_range *top;
	int rc;

	/* a thread or start SQL would order by type first is left to it */
	if (prof_cursor__kind(k, 0) != PROF_VALUE_INT || prof_cursor__kind(k, 1) != PROF_VALUE_INT)
		return THREAD_RANGES_BACK;
	rc = thread_ranges__at(&w->held, prof_cursor__int64(k, 0), prof_cursor__int64(k, 1), &open, &n, err);
	if (rc != 1 || n == 0)
		return rc == 1 ? 0 : rc;
	top = thread_ranges__row(&w->held, open[n - 1]);
	rc = range__name(w, top, err);
	if (rc < 0 || top->name < 0)
		return rc;
	return group__add(w, top->name, k, err);
}

/* The kernels' sweep with each API table walked in its own order: 1 done;
 * 0 not possible here (the ranges too many, a call out of its thread's
 * order), the groups left empty for the sorted sweep; < 0 an error. */
static int sweep__rows(struct sweep *w, struct prof_error *err)
{
	static const char *const tables[] = { PROF_T_RUNTIME, PROF_T_DRIVER };
	struct prof_cursor *c = NULL;
	char once[384], *threads = NULL, *sql;
	int rc;

	if (!thread_ranges__may_hold(w->s, PROF_T_NVTX))
		return 0;
	rc = prof_cursor__open(w->s, ranges_sql, &c, err);
	w->held = (struct thread_ranges){ .row_size = sizeof(struct open_range) };
	if (rc == 0)
		rc = thread_ranges__load(&w->held, c, hold_range, w, err);
	prof_cursor__close(c);
	c = NULL;
	if (rc == 1 && !(threads = thread_ranges__sql_threads(&w->held, "a.globalTid")))
		rc = nomem(err);
	for (size_t t = 0; rc == 1 && t < 2; t++) {
		if (!prof_store__has_table(w->s, tables[t]))
			continue;
		rc = sum_call_once_sql(w->s, once, sizeof once, "a", tables[t], err);
		if (rc == 0 && !(sql = prof_strfmt(TABLE_LAUNCHES, tables[t], once, threads)))
			rc = nomem(err);
		if (rc == 0) {
			rc = prof_cursor__open(w->s, sql, &c, err);
			free(sql);
		}
		thread_ranges__rewind(&w->held);
		while (rc == 0 && (rc = prof_cursor__next(c, err)) > 0)
			rc = rows__launch(w, c, err);
		prof_cursor__close(c);
		c = NULL;
		rc = rc == 0 ? 1 : rc == THREAD_RANGES_BACK ? 0 : rc;
	}
	free(threads);
	thread_ranges__exit(&w->held);
	if (rc == 0) {
		/* what the walk counted goes: the sorted sweep counts it all */
		for (size_t i = 0; i < w->ngroups; i++)
			free(w->groups[i].values);
		w->ngroups = 0;
		w->bad = 0;
		prof_strmap__exit(&w->groups_by_key);
		prof_strmap__init(&w->groups_by_key);
	}
	return rc;
}

/* One sweep: the launches of launches_fmt (LAUNCHES or GRAPH_LAUNCHES,
 * formatted with the calls' SQL) against the ranges, from the start. */
static int sweep__walk(struct sweep *w, const char *launches_fmt, size_t fmt_size,
		       const char *calls, struct prof_error *err)
{
	struct prof_cursor *k = NULL, *r = NULL;
	size_t cap = fmt_size + strlen(calls);
	char *sql = malloc(cap);
	int rc, more_ranges = 0;

	stack__clear(w);
	w->tid = 0;
	if (!sql)
		return nomem(err);
	/* calls is SQL text written in this module, never data */
	snprintf(sql, cap, launches_fmt, calls);
	rc = prof_cursor__open(w->s, sql, &k, err);
	if (rc == 0)
		rc = prof_cursor__open(w->s, ranges_sql, &r, err);
	if (rc == 0)
		rc = more_ranges = prof_cursor__next(r, err);
	while (rc >= 0 && (rc = prof_cursor__next(k, err)) > 0)
		rc = sweep__launch(w, k, r, &more_ranges, err);
	if (r)
		prof_cursor__close(r);
	if (k)
		prof_cursor__close(k);
	free(sql);
	return rc < 0 ? rc : 0;
}

int sum_nvtx_kernel_groups(struct prof_store *s, struct sum_groups *gs, int64_t *graph_launches,
			   struct prof_error *err)
{
	struct sweep w = { .s = s };
	char *calls;
	int rc;

	*graph_launches = 0;
	calls = sum_api_calls(s, &rc, err);
	if (!calls)
		return rc;
	prof_strmap__init(&w.names_by_text);
	prof_strmap__init(&w.ids);
	prof_strmap__init(&w.groups_by_key);
	rc = sweep__rows(&w, err);
	if (rc == 0)
		rc = sweep__walk(&w, LAUNCHES, sizeof LAUNCHES, calls, err);
	else if (rc == 1)
		rc = 0;
	if (rc == 0 && prof_store__has_table(s, PROF_T_GRAPH_TRACE)) {
		w.graphs = true;
		rc = sweep__walk(&w, GRAPH_LAUNCHES, sizeof GRAPH_LAUNCHES, calls, err);
	}
	if (rc == 0)
		rc = sweep__groups(&w, gs, graph_launches, err);
	sweep__exit(&w);
	free(calls);
	return rc < 0 ? rc : 0;
}
