/* groups.c - per-group count, total, mean, exact median, min, max and
 * sample standard deviation over a group's values in ascending order,
 * counted in memory (group_runs.c) or streamed sorted from SQL (rows with
 * a bad span left out and counted), plus the helpers every summary report
 * uses to turn groups into rows. */
#include "model/groups.h"
#include "model/group_runs.h"
#include "model/rows.h"
#include "model/sql.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prof/tables.h"
#include "prof/saturate.h"
#include "prof/error.h"

static char *dup_or_null(const char *s)
{
	return s ? strdup(s) : NULL;
}

static int push_group(struct sum_groups *gs, struct sum_group **out)
{
	if (gs->n == gs->cap) {
		size_t cap = gs->cap ? gs->cap * 2 : 16;
		struct sum_group *g = realloc(gs->g, cap * sizeof *g);

		if (!g)
			return PROF_E_NOMEM;
		gs->g = g;
		gs->cap = cap;
	}
	*out = &gs->g[gs->n++];
	memset(*out, 0, sizeof **out);
	return 0;
}

/* The statistics of g->n values met in ascending order, one at a time:
 * every path that makes a group (rows of a store, runs of a job's
 * captures) goes through it, so they agree to the last bit. */
struct fold {
	int64_t i;
	double mean, m2, lo, hi;
};

static void fold_value(struct sum_group *g, struct fold *f, int64_t v)
{
	double delta;

	if (f->i == 0 || v < g->min)
		g->min = v;
	if (f->i == 0 || v > g->max)
		g->max = v;
	g->total = prof_add_saturated(g->total, v);
	/* Welford: stable where sum-of-squares cancels catastrophically. */
	delta = (double)v - f->mean;
	f->mean += delta / (double)(f->i + 1);
	f->m2 += delta * ((double)v - f->mean);
	if (f->i == (g->n - 1) / 2)
		f->lo = (double)v;
	if (f->i == g->n / 2)
		f->hi = (double)v;
	f->i++;
}

static void fold_end(struct sum_group *g, const struct fold *f)
{
	g->mean = (double)g->total / (double)g->n;
	g->median = (f->lo + f->hi) / 2.0;
	g->stddev = g->n > 1 ? sqrt(f->m2 / (double)(g->n - 1)) : 0.0;
}

void sum_group__fold_runs(struct sum_group *g, const struct sum_run *runs, size_t nruns)
{
	struct fold f = { 0 };

	g->n = 0;
	g->total = 0;
	for (size_t r = 0; r < nruns; r++)
		g->n += runs[r].count;
	for (size_t r = 0; r < nruns; r++)
		for (int64_t k = 0; k < runs[r].count; k++)
			fold_value(g, &f, runs[r].value);
	if (g->n)
		fold_end(g, &f);
}

/* Consume exactly g->n rows of the sorted value stream into g. */
static int fold_group(struct sum_group *g, struct prof_cursor *vals, struct prof_error *err)
{
	struct fold f = { 0 };

	for (int64_t i = 0; i < g->n; i++) {
		int rc = prof_cursor__next(vals, err);

		if (rc < 0)
			return rc;
		if (rc == 0)
			return prof_error__set(err, PROF_E_SQL,
					       "grouped values ended before their counts did");
		if (i == 0) {
			g->label = dup_or_null(prof_cursor__text(vals, 0));
			g->label2 = dup_or_null(prof_cursor__text(vals, 1));
			g->key_is_null = prof_cursor__is_null(vals, 2);
			g->key = prof_cursor__int64(vals, 2);
			if ((!g->label && !prof_cursor__is_null(vals, 0)) ||
			    (!g->label2 && !prof_cursor__is_null(vals, 1)))
				return prof_error__set(err, PROF_E_NOMEM, "out of memory");
		}
		fold_value(g, &f, prof_cursor__int64(vals, 3));
	}
	fold_end(g, &f);
	return 0;
}

static int walk_runs(void *ctx, const char *l1, const char *l2, bool key_is_null, int64_t key,
		     const struct sum_run *runs, size_t nruns)
{
	struct sum_runs_walk *w = ctx;
	int rc = 0;

	for (size_t i = 0; rc >= 0 && i < nruns; i++)
		rc = w->run(w->ctx, l1, l2, key_is_null, key, runs[i]);
	return rc;
}

int sum_groups__runs(struct prof_store *s, const char *src, struct sum_runs_walk *w,
		     struct prof_error *err)
{
	static const char counts_fmt[] =
		"SELECT sum(bad) FROM (%s)";
	static const char runs_fmt[] =
		"SELECT l1, l2, k, v, count(*) FROM (%s) WHERE NOT bad GROUP BY l1, l2, k, v"
		" ORDER BY l1, l2, k, v";
	struct prof_cursor *c = NULL;
	size_t len = strlen(src) + sizeof runs_fmt;
	char *sql = malloc(len);
	struct group_runs *counted = NULL;
	int rc;

	if (!sql)
		return prof_error__set(err, PROF_E_NOMEM, "out of memory");
	rc = group_runs__count(s, src, &counted, err);
	if (rc > 0) {
		w->rows_left_out += group_runs__left_out(counted);
		rc = group_runs__walk(counted, walk_runs, w);
		group_runs__free(counted);
		free(sql);
		if (rc == PROF_E_NOMEM)
			prof_error__set(err, rc, "out of memory");
		return rc < 0 ? rc : 0;
	}
	/* Not counted in memory (too many distinct values, or a column of
	 * another type): SQL sorts them. */
	if (rc == 0) {
		snprintf(sql, len, counts_fmt, src);
		rc = prof_cursor__open(s, sql, &c, err);
	}
	if (rc >= 0 && (rc = prof_cursor__next(c, err)) > 0)
		w->rows_left_out += prof_cursor__int64(c, 0);
	if (c)
		prof_cursor__close(c);
	c = NULL;
	if (rc >= 0) {
		snprintf(sql, len, runs_fmt, src);
		rc = prof_cursor__open(s, sql, &c, err);
	}
	while (rc >= 0 && (rc = prof_cursor__next(c, err)) > 0)
		rc = w->run(w->ctx, prof_cursor__text(c, 0), prof_cursor__text(c, 1),
			    prof_cursor__is_null(c, 2), prof_cursor__int64(c, 2),
			    (struct sum_run){ prof_cursor__int64(c, 3), prof_cursor__int64(c, 4) });
	if (c)
		prof_cursor__close(c);
	free(sql);
	return rc < 0 ? rc : 0;
}

int sum_groups__push_runs(struct sum_groups *gs, const char *l1, const char *l2, bool key_is_null, int64_t key,
			  const struct sum_run *runs, size_t nruns)
{
	struct sum_group *g;
	int rc = push_group(gs, &g);

	if (rc < 0)
		return rc;
	g->label = dup_or_null(l1);
	g->label2 = dup_or_null(l2);
	g->key_is_null = key_is_null;
	g->key = key;
	if ((l1 && !g->label) || (l2 && !g->label2))
		return PROF_E_NOMEM;
	sum_group__fold_runs(g, runs, nruns);
	return 0;
}

static int fold_counted(void *ctx, const char *l1, const char *l2, bool key_is_null, int64_t key,
			const struct sum_run *runs, size_t nruns)
{
	return sum_groups__push_runs(ctx, l1, l2, key_is_null, key, runs, nruns);
}

/* The groups of src counted in memory where their distinct values allow
 * (group_runs.c): 1 done, 0 not, < 0 an error. */
static int collect_counted(struct sum_groups *gs, struct prof_store *s, const char *src,
			   struct prof_error *err)
{
	struct group_runs *counted = NULL;
	int rc = group_runs__count(s, src, &counted, err);

	if (rc <= 0)
		return rc;
	gs->rows_left_out += group_runs__left_out(counted);
	rc = group_runs__walk(counted, fold_counted, gs);
	group_runs__free(counted);
	if (rc < 0)
		return prof_error__set(err, rc, "out of memory");
	return 1;
}

int sum_groups__collect(struct sum_groups *gs, struct prof_store *s, const char *src,
			struct prof_error *err)
{
	/* A group whose rows are all bad has a count of 0 and no values. */
	static const char counts_fmt[] =
		"SELECT sum(NOT bad), sum(bad) FROM (%s) GROUP BY l1, l2, k ORDER BY l1, l2, k";
	static const char values_fmt[] =
		"SELECT l1, l2, k, v FROM (%s) WHERE NOT bad ORDER BY l1, l2, k, v";
	struct prof_cursor *counts = NULL, *vals = NULL;
	size_t len = strlen(src) + sizeof values_fmt + sizeof counts_fmt;
	char *sql = malloc(len);
	int rc;

	if (!sql)
		return prof_error__set(err, PROF_E_NOMEM, "out of memory");
	rc = collect_counted(gs, s, src, err);
	if (rc != 0) {
		free(sql);
		return rc < 0 ? rc : 0;
	}
	/* Not counted in memory (too many distinct values, or a column of
	 * another type): SQL sorts them, and the counts and the values walk in
	 * step. src is SQL text written in
	 * this module, never data: values are bound. */
	snprintf(sql, len, counts_fmt, src);
	rc = prof_cursor__open(s, sql, &counts, err);
	if (rc < 0)
		goto out;
	snprintf(sql, len, values_fmt, src);
	rc = prof_cursor__open(s, sql, &vals, err);
	if (rc < 0)
		goto out;
	/* Both statements order groups identically, so the i-th count belongs
	 * to the i-th run of values. */
	while ((rc = prof_cursor__next(counts, err)) > 0) {
		struct sum_group *g;

		gs->rows_left_out += prof_cursor__int64(counts, 1);
		if (prof_cursor__int64(counts, 0) == 0)
			continue;
		rc = push_group(gs, &g);
		if (rc < 0) {
			prof_error__set(err, rc, "out of memory");
			goto out;
		}
		g->n = prof_cursor__int64(counts, 0);
		rc = fold_group(g, vals, err);
		if (rc < 0)
			goto out;
	}
out:
	if (vals)
		prof_cursor__close(vals);
	if (counts)
		prof_cursor__close(counts);
	free(sql);
	return rc < 0 ? rc : 0;
}

int64_t sum_groups__total(const struct sum_groups *gs)
{
	int64_t t = 0;

	for (size_t i = 0; i < gs->n; i++)
		t = prof_add_saturated(t, gs->g[i].total);
	return t;
}

static int cmp_text(const char *a, const char *b)
{
	if (!a || !b)
		return (a != NULL) - (b != NULL);
	return strcmp(a, b);
}

static int cmp_total_desc(const void *pa, const void *pb)
{
	const struct sum_group *a = pa, *b = pb;
	int c;

	if (a->total != b->total)
		return a->total > b->total ? -1 : 1;
	if ((c = cmp_text(a->label, b->label)) != 0)
		return c;
	if ((c = cmp_text(a->label2, b->label2)) != 0)
		return c;
	return (a->key > b->key) - (a->key < b->key);
}

void sum_groups__sort_by_total(struct sum_groups *gs)
{
	if (gs->n > 1)
		qsort(gs->g, gs->n, sizeof *gs->g, cmp_total_desc);
}

void sum_groups__exit(struct sum_groups *gs)
{
	for (size_t i = 0; i < gs->n; i++) {
		free(gs->g[i].label);
		free(gs->g[i].label2);
	}
	free(gs->g);
	memset(gs, 0, sizeof *gs);
}

int sum_string(struct prof_store *s, int64_t id, char **out, struct prof_error *err)
{
	struct prof_cursor *c = NULL;
	int rc;

	*out = NULL;
	rc = prof_cursor__open(s, "SELECT value FROM " PROF_T_STRINGS " WHERE id = ?", &c, err);
	if (rc < 0)
		return rc;
	rc = prof_cursor__bind_int64(c, 1, id);
	if (rc < 0) {
		prof_error__set(err, rc, "cannot bind a string id");
		goto out;
	}
	rc = prof_cursor__next(c, err);
	if (rc > 0 && prof_cursor__text(c, 0)) {
		*out = strdup(prof_cursor__text(c, 0));
		if (!*out)
			rc = prof_error__set(err, PROF_E_NOMEM, "out of memory");
	}
out:
	if (c)
		prof_cursor__close(c);
	return rc < 0 ? rc : 0;
}

int sum_groups__label_from_strings(struct sum_groups *gs, struct prof_store *s,
				   struct prof_error *err)
{
	for (size_t i = 0; i < gs->n; i++) {
		struct sum_group *g = &gs->g[i];
		char *name;
		int rc;

		if (g->key_is_null)
			continue;
		rc = sum_string(s, g->key, &name, err);
		if (rc < 0)
			return rc;
		free(g->label);
		g->label = name;
	}
	return 0;
}

int sum_sink_error(int rc, struct prof_error *err)
{
	if (rc >= 0)
		return 0;
	if (rc == PROF_E_NOMEM)
		return prof_error__set(err, rc, "out of memory");
	return prof_error__set(err, rc, "cannot write the report output");
}

int sum_groups__note_left_out(const struct sum_groups *gs, struct rpt_sink *sink)
{
	char text[128];

	snprintf(text, sizeof text, "%" PRId64 " row%s " SUM_BAD_SPAN_WORDS " %s left out",
		 gs->rows_left_out, gs->rows_left_out == 1 ? "" : "s",
		 gs->rows_left_out == 1 ? "was" : "were");
	return rpt_sink__note(sink, &(struct rpt_note){ SUM_NOTE_LEFT_OUT, gs->rows_left_out, text });
}

int sum_groups__emit(const struct sum_groups *gs, struct rpt_sink *sink, const char *report,
		     const char *title, const struct rpt_column *cols, int ncols,
		     sum_group_cells_fn cells_of, struct prof_error *err)
{
	return sum_groups__emit_noted(gs, sink, report, title, cols, ncols, cells_of, NULL, err);
}

int sum_groups__emit_noted(const struct sum_groups *gs, struct rpt_sink *sink, const char *report,
			   const char *title, const struct rpt_column *cols, int ncols,
			   sum_group_cells_fn cells_of, const struct rpt_note *note,
			   struct prof_error *err)
{
	int rc;

	if (ncols > SUM_GROUP_MAX_CELLS)
		return prof_error__set(err, PROF_E_USAGE, "%s: %d columns, more than %d", report, ncols,
				       SUM_GROUP_MAX_CELLS);
	rc = sink->begin(sink, report, title, cols, ncols);
	if (rc >= 0)
		rc = sum_groups__note_left_out(gs, sink);
	if (rc >= 0 && note)
		rc = rpt_sink__note(sink, note);
	for (size_t i = 0; rc >= 0 && i < gs->n; i++) {
		struct rpt_cell cells[SUM_GROUP_MAX_CELLS];

		cells_of(&gs->g[i], cells);
		rc = sink->row(sink, cells);
	}
	if (rc >= 0)
		rc = sink->end(sink);
	return sum_sink_error(rc, err);
}

int sum_groups__emit_table(const struct sum_groups *gs, struct rpt_sink *sink,
			   const struct sum_time_table *t, struct prof_error *err)
{
	struct rpt_column cols[10] = {
		{ "Time (%)", RPT_PERCENT, 1 },
		{ "Total Time (ns)", RPT_INT, 0 },
		{ t->count_name, RPT_INT, 0 },
		{ "Avg (ns)", RPT_REAL, 1 },
		{ "Med (ns)", RPT_REAL, 1 },
		{ "Min (ns)", RPT_INT, 0 },
		{ "Max (ns)", RPT_INT, 0 },
		{ "StdDev (ns)", RPT_REAL, 1 },
	};
	int ncols = 8, rc;
	double total = (double)sum_groups__total(gs);

	if (t->extra_name)
		cols[ncols++] = (struct rpt_column){ t->extra_name, RPT_TEXT, 0 };
	cols[ncols++] = (struct rpt_column){ t->name_col, t->name_type, 0 };
	rc = sink->begin(sink, t->report, t->title, cols, ncols);
	if (rc >= 0)
		rc = sum_groups__note_left_out(gs, sink);
	if (rc >= 0 && t->note)
		rc = rpt_sink__note(sink, t->note);
	for (size_t i = 0; rc >= 0 && i < gs->n && (t->limit == 0 || i < t->limit); i++) {
		const struct sum_group *g = &gs->g[i];
		struct rpt_cell cells[10] = {
			sum_real(total > 0 ? (double)g->total * 100.0 / total : 0.0),
			sum_int(g->total),
			sum_int(g->n),
			sum_real(g->mean),
			sum_real(g->median),
			sum_int(g->min),
			sum_int(g->max),
			sum_real(g->stddev),
		};
		int c = 8;

		if (t->extra_name)
			cells[c++] = sum_text(g->label2);
		cells[c++] = sum_text(g->label);
		rc = sink->row(sink, cells);
	}
	if (rc >= 0)
		rc = sink->end(sink);
	return sum_sink_error(rc, err);
}

int sum_groups__emit_time(const struct sum_groups *gs, struct rpt_sink *sink,
			  const char *report, const char *title, const char *count_name,
			  const char *extra_name, const char *name_col, enum rpt_type name_type,
			  size_t limit, struct prof_error *err)
{
	struct sum_time_table t = { report, title, count_name, extra_name, name_col, name_type,
				    limit, NULL };

	return sum_groups__emit_table(gs, sink, &t, err);
}

char *sum_union_then(struct prof_store *s, const char *const *tables, const char *const *parts,
		     int nparts, const char *tail, int *rc, struct prof_error *err)
{
	size_t len = 1 + strlen(tail);
	char *sql;
	bool any = false;

	*rc = 0;
	for (int i = 0; i < nparts; i++)
		len += strlen(parts[i]) + sizeof " UNION ALL ";
	sql = malloc(len);
	if (!sql) {
		*rc = prof_error__set(err, PROF_E_NOMEM, "out of memory");
		return NULL;
	}
	sql[0] = '\0';
	for (int i = 0; i < nparts; i++) {
		if (!prof_store__has_table(s, tables[i]))
			continue;
		if (any)
			strcat(sql, " UNION ALL ");
		strcat(sql, parts[i]);
		any = true;
	}
	if (!any) {
		free(sql);
		return NULL;
	}
	strcat(sql, tail);
	return sql;
}

char *sum_union(struct prof_store *s, const char *const *tables, const char *const *parts,
		int nparts, int *rc, struct prof_error *err)
{
	return sum_union_then(s, tables, parts, nparts, "", rc, err);
}
