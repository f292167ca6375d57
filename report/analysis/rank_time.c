/* rank_time.c - each rank's steps and the split of its time (rank_time.h).
 *
 * Every rank is analysed as if it were the only process of the capture:
 * the store's views are narrowed to its rows (sum_ranks__scope), so the
 * loop finder, the steps and the GPU work are its own, then put back as
 * --rank left them. */
#include <stdlib.h>
#include <string.h>

#include "nccl.h"
#include "rank_time.h"

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

int64_t rank_time__percentile(int64_t *v, int n, double p)
{
	int k;

	if (n <= 0)
		return -1;
	qsort(v, (size_t)n, sizeof *v, cmp_i64);
	/* nearest rank: the smallest value with at least p% at or below it */
	k = (int)(p / 100.0 * n + 0.999999999) - 1;
	if (k < 0)
		k = 0;
	if (k >= n)
		k = n - 1;
	return v[k];
}

static int steps_stats(struct rank_time *t)
{
	int64_t *d;

	t->step_med_ns = t->step_p95_ns = -1;
	if (t->nsteps == 0)
		return 0;
	d = malloc(sizeof *d * (size_t)t->nsteps);
	if (!d)
		return PROF_E_NOMEM;
	for (int i = 0; i < t->nsteps; i++)
		d[i] = sum_span_saturated(t->steps[i].start_ns, t->steps[i].end_ns);
	t->step_med_ns = rank_time__percentile(d, t->nsteps, 50);
	t->step_p95_ns = rank_time__percentile(d, t->nsteps, 95);
	free(d);
	return 0;
}

/* The rank's GPU work in its window, as two unions. */
static int split_busy(struct prof_store *s, struct rank_time *t, struct prof_error *err)
{
	static const char *const tables[] = { PROF_T_KERNEL, PROF_T_MEMCPY, PROF_T_MEMSET };
	static const char *const parts[] = {
		"SELECT k.start, k.end, " NCCL_KERNEL_SQL("k") " FROM " PROF_T_KERNEL " k"
		" WHERE k.end > ?1 AND k.start < ?2",
		"SELECT start, end, 0 FROM " PROF_T_MEMCPY " WHERE end > ?1 AND start < ?2",
		"SELECT start, end, 0 FROM " PROF_T_MEMSET " WHERE end > ?1 AND start < ?2",
	};
	struct diag_intervals compute = { 0 }, comm = { 0 };
	int64_t lo = t->w.start_ns, hi = t->w.end_ns;
	struct prof_cursor *c = NULL;
	char *src, *sql = NULL;
	int rc;

	src = sum_union(s, tables, parts, 3, &rc, err);
	if (!src)
		goto out;
	sql = malloc(strlen(src) + 64);
	if (!sql) {
		rc = prof_error__set(err, PROF_E_NOMEM, "out of memory");
		goto out;
	}
	strcpy(sql, "SELECT * FROM (");
	strcat(sql, src);
	strcat(sql, ") ORDER BY 1");
	rc = prof_cursor__open(s, sql, &c, err);
	if (rc)
		goto out;
	prof_cursor__bind_int64(c, 1, lo);
	prof_cursor__bind_int64(c, 2, hi);
	while ((rc = prof_cursor__next(c, err)) == 1) {
		int64_t a = prof_cursor__int64(c, 0), b = prof_cursor__int64(c, 1);
		struct diag_intervals *u = prof_cursor__int64(c, 2) ? &comm : &compute;

		if (prof_cursor__is_null(c, 0) || prof_cursor__is_null(c, 1) || b < a) {
			t->rows_left_out++;
			continue;
		}
		if (diag_intervals__merge(u, a > lo ? a : lo, b < hi ? b : hi)) {
			rc = prof_error__set(err, PROF_E_NOMEM, "out of memory");
			break;
		}
	}
	if (rc < 0)
		goto out;
	rc = 0;
	t->compute_ns = diag_intervals__length(&compute);
	t->comm_ns = diag_intervals__length(&comm);
	t->hidden_ns = diag_intervals__overlap_ns(&compute, &comm);
	t->exposed_ns = t->comm_ns - t->hidden_ns;
	t->busy_ns = sum_add_saturated(t->compute_ns, t->exposed_ns);
	t->window_ns = sum_span_saturated(lo, hi);
	t->idle_ns = t->window_ns > t->busy_ns ? t->window_ns - t->busy_ns : 0;
out:
	prof_cursor__close(c);
	free(sql);
	free(src);
	diag_intervals__exit(&compute);
	diag_intervals__exit(&comm);
	return rc;
}

static int one_rank(struct prof_store *s, struct rank_time *t, struct prof_error *err)
{
	struct sum_loop_options o;
	int rc;

	sum_loop_options__init(&o);
	rc = sum_window__find(s, &o, &t->w, err);
	if (rc == 0)
		rc = sum_window__steps(s, &t->w, &t->steps, &t->nsteps, err);
	if (rc == 0 && steps_stats(t))
		rc = prof_error__set(err, PROF_E_NOMEM, "out of memory");
	if (rc == 0)
		rc = split_busy(s, t, err);
	return rc;
}

int rank_times__load(struct prof_store *s, struct rank_times *out, struct prof_error *err)
{
	struct sum_ranks r;
	int rc, scoped = 0;

	memset(out, 0, sizeof *out);
	rc = sum_ranks__load(s, &r, err);
	if (rc)
		return rc;
	out->v = calloc((size_t)(r.nranks ? r.nranks : 1), sizeof *out->v);
	if (!out->v) {
		sum_ranks__exit(&r);
		return prof_error__set(err, PROF_E_NOMEM, "out of memory");
	}
	for (int i = 0; i < r.n && rc == 0; i++) {
		const struct sum_process *p = &r.p[i];
		struct rank_time *t;

		if (p->rank < 0 || !p->selected)
			continue;
		t = &out->v[out->n++];
		t->rank = p->rank;
		t->global_pid = p->global_pid;
		sum_process__label(p, t->label, sizeof t->label);
		/* a capture of one process needs no narrowing */
		if (r.n > 1) {
			rc = sum_ranks__scope(s, p->global_pid, err);
			scoped = 1;
		}
		if (rc == 0)
			rc = one_rank(s, t, err);
	}
	if (scoped) {
		struct prof_error ignored = { 0 };
		int urc = sum_ranks__unscope(s, rc ? &ignored : err);

		if (rc == 0)
			rc = urc;
	}
	sum_ranks__exit(&r);
	if (rc)
		rank_times__exit(out);
	return rc;
}

void rank_times__exit(struct rank_times *t)
{
	for (int i = 0; i < t->n; i++)
		free(t->v[i].steps);
	free(t->v);
	memset(t, 0, sizeof *t);
}
