/* pid_rows.c - each process's rows of a table folded from one walk in the
 * table's order (pid_rows.h). */
#include "model/pid_rows.h"

#include <stdlib.h>
#include <string.h>

#include "model/memo.h"
#include "model/sums.h"

/* One table's walk, as the census gave it, under its name. */
static const char table_rows_key;

/* The run r of one process's rows folded into v (sorted by pid). */
static int fold_run(struct pid_rows **v, size_t *n, size_t *cap, const struct pid_rows *r)
{
	size_t at = sum_sorted__count_before(*v, *n, sizeof **v, offsetof(struct pid_rows, pid), r->pid, false);

	if (at < *n && (*v)[at].pid == r->pid) {
		struct pid_rows *x = &(*v)[at];

		x->lo = r->lo < x->lo ? r->lo : x->lo;
		x->hi = r->hi > x->hi ? r->hi : x->hi;
		x->first = r->first < x->first ? r->first : x->first;
		x->last = r->last > x->last ? r->last : x->last;
		return 0;
	}
	if (sum_array__grow(v, cap, *n, sizeof **v) < 0)
		return -1;
	memmove(&(*v)[at + 1], &(*v)[at], (*n - at) * sizeof **v);
	(*v)[at] = *r;
	(*n)++;
	return 0;
}

void pid_rows_walk__begin(struct pid_rows_walk *w, bool timed)
{
	*w = (struct pid_rows_walk){ .timing = timed };
}

void pid_rows_walk__add(struct pid_rows_walk *w, int64_t rowid, int64_t pid, enum prof_value_kind ks,
			int64_t start, enum prof_value_kind ke, int64_t end)
{
	struct pid_rows *r = &w->run;

	if (w->failed)
		return;
	/* a merge writes each capture's rows together: the runs are few */
	if (!(w->in_run && pid == r->pid)) {
		if (w->in_run && fold_run(&w->v, &w->n, &w->cap, r) < 0) {
			w->failed = true;
			return;
		}
		w->in_run = true;
		*r = (struct pid_rows){ pid, rowid, rowid, INT64_MAX, INT64_MIN };
	}
	r->lo = rowid < r->lo ? rowid : r->lo;
	r->hi = rowid > r->hi ? rowid : r->hi;
	if (!w->timing)
		return;
	if ((ks != PROF_VALUE_INT && ks != PROF_VALUE_NULL) || (ke != PROF_VALUE_INT && ke != PROF_VALUE_NULL)) {
		w->timing = false;
		return;
	}
	/* start > 0 AND NOT SUM_BAD_SPAN: from a positive start, end - start
	 * never overflows */
	if (ks == PROF_VALUE_INT && ke == PROF_VALUE_INT && start > 0 && end >= start) {
		r->first = start < r->first ? start : r->first;
		r->last = end > r->last ? end : r->last;
	}
}

void pid_rows_walk__without(struct pid_rows_walk *w)
{
	w->without++;
}

bool pid_rows_walk__other_than(const struct pid_rows_walk *w, int64_t pid)
{
	return w->without > 0 || w->n > 1 || (w->n == 1 && w->v[0].pid != pid);
}

bool pid_rows_walk__end(struct pid_rows_walk *w)
{
	if (!w->failed && w->in_run && fold_run(&w->v, &w->n, &w->cap, &w->run) < 0)
		w->failed = true;
	w->in_run = false;
	return !w->failed;
}

void pid_rows_walk__exit(struct pid_rows_walk *w)
{
	free(w->v);
	*w = (struct pid_rows_walk){ 0 };
}

static void walk_free(void *w)
{
	pid_rows_walk__exit(w);
	free(w);
}

void pid_rows_walk__give(struct prof_store *s, const char *table, struct pid_rows_walk *w)
{
	struct pid_rows_walk *kept = pid_rows_walk__end(w) ? malloc(sizeof *kept) : NULL;

	if (kept) {
		*kept = *w;
		*w = (struct pid_rows_walk){ 0 };
		if (!sum_shared__offer(s, &table_rows_key, table, kept, walk_free))
			walk_free(kept);
	}
	pid_rows_walk__exit(w);
}

bool sum_pid_rows__take(struct prof_store *s, const char *table, const struct pid_rows_walk **out)
{
	const void *given = NULL;
	bool yes = sum_shared__given(s, &table_rows_key, table, &given);

	*out = given;
	return yes;
}
