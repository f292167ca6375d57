/* window_kernels.c - the loop without NVTX, from the kernels' repeats. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "window_impl.h"

static int cmp_int64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

/* The loop without NVTX: the kernel name that repeats the fewest times (at
 * least o->min_iterations) marks one iteration per launch; of several such
 * names the one launched first (with `marked`, that kernel if it repeats).
 * Iterations run from one of its launches to the next; the last lasts the
 * median period. As with NVTX, the first iteration is the warm-up and stays
 * out of the window. */
int window__from_kernels(struct prof_store *store, const struct sum_loop_options *o, const char *marked,
			 struct sum_window *w, struct prof_error *err)
{
	const char *pick =
		"SELECT k.demangledName, count(*), min(k.start) FROM " PROF_T_KERNEL " k"
		" WHERE ?2 IS NULL OR k.demangledName IN (SELECT id FROM " PROF_T_STRINGS " WHERE value = ?2)"
		" GROUP BY k.demangledName HAVING count(*) >= max(?1, 3)"
		" ORDER BY count(*) ASC, min(k.start) ASC LIMIT 1";
	const char *starts =
		"SELECT k.start FROM " PROF_T_KERNEL " k WHERE k.demangledName = ?1 ORDER BY k.start";
	struct prof_cursor *c = NULL;
	int64_t name_id, count, *t = NULL, *gaps = NULL;
	int n = 0, rc;

	if (!prof_store__has_table(store, PROF_T_KERNEL))
		return 0;
	rc = prof_cursor__open(store, pick, &c, err);
	if (rc)
		return rc;
	prof_cursor__bind_int64(c, 1, (int64_t)o->min_iterations);
	if (marked)
		prof_cursor__bind_text(c, 2, marked);
	rc = prof_cursor__next(c, err);
	if (rc != 1)
		goto out;
	name_id = prof_cursor__int64(c, 0);
	count = prof_cursor__int64(c, 1);
	prof_cursor__close(c);
	c = NULL;
	t = malloc(sizeof *t * (size_t)count);
	gaps = malloc(sizeof *gaps * (size_t)count);
	if (!t || !gaps) {
		rc = prof_error__set(err, PROF_E_NOMEM, "out of memory");
		goto out;
	}
	rc = prof_cursor__open(store, starts, &c, err);
	if (rc)
		goto out;
	prof_cursor__bind_int64(c, 1, name_id);
	while ((rc = prof_cursor__next(c, err)) == 1 && n < count)
		t[n++] = prof_cursor__int64(c, 0);
	if (rc < 0 || n < 3)
		goto out;
	for (int i = 1; i < n; i++)
		gaps[i - 1] = sum_span_saturated(t[i - 1], t[i]);
	qsort(gaps, (size_t)(n - 1), sizeof *gaps, cmp_int64);
	w->start_ns = t[1];
	/* the last iteration lasts the median period */
	w->end_ns = sum_add_saturated(t[n - 1], gaps[(n - 1) / 2]);
	w->iterations = n - 1;
	{
		struct prof_cursor *nc;
		const char *name_sql = "SELECT value FROM " PROF_T_STRINGS " WHERE id = ?1";
		char name[160] = "?";
		if (!prof_cursor__open(store, name_sql, &nc, err)) {
			prof_cursor__bind_int64(nc, 1, name_id);
			if (prof_cursor__next(nc, err) == 1 && prof_cursor__text(nc, 0)) {
				snprintf(name, sizeof name, "%s", prof_cursor__text(nc, 0));
				snprintf(w->mark_name, sizeof w->mark_name, "%s", prof_cursor__text(nc, 0));
			}
			prof_cursor__close(nc);
		}
		snprintf(w->source, sizeof w->source, "kernel \"%s\" launched %d times", name, n);
		w->mark = SUM_LOOP_KERNEL;
	}
	rc = 0;
out:
	prof_cursor__close(c);
	free(t);
	free(gaps);
	return rc < 0 ? rc : 0;
}

