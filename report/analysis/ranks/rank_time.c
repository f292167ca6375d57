/* rank_time.c - each rank's steps and the split of its time (rank_time.h).
 *
 * Every rank is analysed as if it were the only process of the capture:
 * the store's views are narrowed to its rows (sum_ranks__scope), so the
 * loop finder, the steps and the GPU work are its own, then put back as
 * --rank left them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "job_judge.h"
#include "nccl.h"
#include "rank_time.h"
#include "analysis/core/gpu_work.h"
#include "analysis/core/grow.h"
#include "model/ranks.h"
#include "model/sql.h"
#include "model/window.h"
#include "prof/error.h"
#include "prof/tables.h"
#include "prof/saturate.h"

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

/* A step's GPU span: from the first start to the last end of the GPU work
 * the calls made inside its NVTX range launched; -1 where it launched
 * none. One pass over the window's launches (by correlation id within the
 * rank), each placed in the step open on its thread when it ran. */
static int gpu_spans(struct prof_store *s, const struct rank_time *t, int64_t *first, int64_t *last,
		     struct prof_error *err)
{
	static const char *const api[] = { PROF_T_RUNTIME, PROF_T_DRIVER };
	static const char *const gpu[] = { PROF_T_KERNEL, PROF_T_MEMCPY, PROF_T_MEMSET };
	char sql[4096];
	size_t len = 0, n = 0;
	struct prof_cursor *c;
	int rc;

	for (int i = 0; i < t->nsteps; i++)
		first[i] = last[i] = -1;
	len += (size_t)snprintf(sql, sizeof sql, "SELECT tid, at, g0, g1 FROM (");
	for (size_t a = 0; a < 2; a++) {
		for (size_t g = 0; g < 3; g++) {
			len += (size_t)snprintf(sql + len, sizeof sql - len,
						"%sSELECT r.globalTid AS tid, r.start AS at, g.start AS g0,"
						" g.end AS g1 FROM %s g JOIN %s r ON %s"
						" WHERE r.start >= ?1 AND r.start < ?2 AND NOT " SUM_BAD_SPAN("g."),
						n++ ? " UNION ALL " : "", gpu[g], api[a],
						SUM_LAUNCHED_BY("g", "r"));
		}
	}
	if (n == 0)
		return 0;
	snprintf(sql + len, sizeof sql - len, ") ORDER BY at");
	rc = prof_cursor__open(s, sql, &c, err);
	if (rc)
		return rc;
	prof_cursor__bind_int64(c, 1, t->steps[0].start_ns);
	prof_cursor__bind_int64(c, 2, t->w.host_end_ns > t->w.end_ns ? t->w.host_end_ns : t->w.end_ns);
	while ((rc = prof_cursor__next(c, err)) == 1) {
		int64_t tid = prof_cursor__int64(c, 0), at = prof_cursor__int64(c, 1);
		int64_t g0 = prof_cursor__int64(c, 2), g1 = prof_cursor__int64(c, 3);
		int lo = 0, hi = t->nsteps;

		if (g1 < g0)
			continue;
		/* the last step to start by then; steps of one thread do not overlap */
		while (lo < hi) {
			int mid = (lo + hi) / 2;

			if (t->steps[mid].start_ns <= at)
				lo = mid + 1;
			else
				hi = mid;
		}
		for (int i = lo - 1; i >= 0 && i >= lo - 8; i--) {
			if (t->steps[i].global_tid != tid || at >= t->steps[i].end_ns)
				continue;
			if (first[i] < 0 || g0 < first[i])
				first[i] = g0;
			if (g1 > last[i])
				last[i] = g1;
			break;
		}
	}
	prof_cursor__close(c);
	return rc < 0 ? rc : 0;
}

/* A step lasts from the start of its GPU work to the start of the next
 * step's on its thread: an NVTX range is host time, and a host that
 * enqueues its GPU work and races ahead (as an asynchronous loop does until
 * its queue is full) ends its ranges long before their work runs. Where a
 * step launched nothing, its host start stands in; the last step ends
 * where its GPU work does. Steps marked by a kernel are GPU periods
 * already. */
static int64_t step_ns(const struct rank_time *t, const int64_t *first, const int64_t *last, int i)
{
	const struct sum_step *s = &t->steps[i];
	int64_t start = first && first[i] >= 0 ? first[i] : s->start_ns;

	for (int j = i + 1; j < t->nsteps; j++)
		if (t->steps[j].global_tid == s->global_tid)
			return prof_span_saturated(start, first && first[j] >= 0 ? first[j] : t->steps[j].start_ns);
	return prof_span_saturated(start, first && last[i] >= 0 ? last[i] : s->end_ns);
}

static int steps_stats(struct prof_store *s, struct rank_time *t, struct prof_error *err)
{
	int64_t *d, *first = NULL, *last = NULL;
	int rc = 0;

	t->step_med_ns = t->step_p95_ns = -1;
	if (t->nsteps == 0)
		return 0;
	d = malloc(sizeof *d * (size_t)t->nsteps);
	if (t->w.mark == SUM_LOOP_NVTX) {
		first = malloc(sizeof *first * (size_t)t->nsteps);
		last = malloc(sizeof *last * (size_t)t->nsteps);
	}
	if (!d || (t->w.mark == SUM_LOOP_NVTX && (!first || !last))) {
		rc = prof_error__set(err, PROF_E_NOMEM, "out of memory");
		goto out;
	}
	if (first)
		rc = gpu_spans(s, t, first, last, err);
	if (rc)
		goto out;
	for (int i = 0; i < t->nsteps; i++)
		d[i] = step_ns(t, first, last, i);
	t->step_med_ns = rank_time__percentile(d, t->nsteps, 50);
	t->step_p95_ns = rank_time__percentile(d, t->nsteps, 95);
	t->step_gpu_start_ns = first;
	t->step_gpu_end_ns = last;
	first = last = NULL;
out:
	free(d);
	free(first);
	free(last);
	return rc;
}

/* The rank's GPU work in its window, as two unions (job: their
 * intersection kept). */
static int split_busy(struct prof_store *s, struct rank_time *t, bool job, struct prof_error *err)
{
	static const char *const tables[] = { PROF_T_KERNEL, PROF_T_MEMCPY, PROF_T_MEMSET };
	static const char *const parts[] = {
		"SELECT k.start, k.end, CASE WHEN " NCCL_KERNEL_SQL("k") " THEN 1 ELSE 0 END FROM "
		PROF_T_KERNEL " k WHERE k.end > ?1 AND k.start < ?2",
		"SELECT start, end, 2 FROM " PROF_T_MEMCPY " WHERE end > ?1 AND start < ?2",
		"SELECT start, end, 2 FROM " PROF_T_MEMSET " WHERE end > ?1 AND start < ?2",
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
		int64_t what = prof_cursor__int64(c, 2); /* 0 kernel, 1 NCCL's, 2 copy or memset */
		struct diag_intervals *u = what == 1 ? &comm : &compute;

		if (prof_cursor__is_null(c, 0) || prof_cursor__is_null(c, 1) || prof_span_is_bad(a, b)) {
			t->rows_left_out++;
			continue;
		}
		t->kernels += what == 0 && a >= lo;
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
	if (job && diag_intervals__intersect(&compute, &comm, &t->hidden)) {
		rc = prof_error__set(err, PROF_E_NOMEM, "out of memory");
		goto out;
	}
	t->exposed_ns = t->comm_ns - t->hidden_ns;
	t->busy_ns = prof_add_saturated(t->compute_ns, t->exposed_ns);
	t->window_ns = t->w.span_ns; /* less the time between capture windows */
	t->idle_ns = t->window_ns > t->busy_ns ? t->window_ns - t->busy_ns : 0;
out:
	prof_cursor__close(c);
	free(sql);
	free(src);
	diag_intervals__exit(&compute);
	diag_intervals__exit(&comm);
	return rc;
}

/* What the rank's kernels in its window ran longer beside its own NCCL
 * kernels than their launch configuration alone (job_judge__contention_ns):
 * the rank that waits at the collectives spins in its NCCL kernels, and
 * its compute slows beside them (a GEMM at 93 us against 50 us alone on
 * the waiting rank of the two-GPU DDP captures). The store shows this
 * rank's rows alone. */
static int slowed_beside_comm(struct prof_store *s, struct rank_time *t, struct prof_error *err)
{
	static const char nccl[] = "SELECT k.start, k.end FROM " PROF_T_KERNEL " k WHERE k.end > ?1"
				   " AND k.start < ?2 AND NOT " SUM_BAD_SPAN("k.") " AND (" NCCL_KERNEL_SQL("k")
				   ") IS 1 ORDER BY k.start";
	/* a bad span is no time: its end before its start is left out below */
	static const char kernels[] = "SELECT k.start, k.end, " PROF_SQL_KERNEL_NAME_ID("k.") ", coalesce(gridX, 0),"
				      " coalesce(gridY, 0), coalesce(gridZ, 0), coalesce(blockX, 0),"
				      " coalesce(blockY, 0), coalesce(blockZ, 0) FROM " PROF_T_KERNEL " k"
				      " WHERE k.start >= ?1 AND k.start < ?2 AND (" NCCL_KERNEL_SQL("k") ") IS NOT 1";
	struct diag_intervals comm = { 0 };
	struct job_kernel *v = NULL;
	struct prof_cursor *c = NULL;
	int n = 0, cap = 0, rc;

	t->slowed_ns = 0;
	if (!prof_store__has_table(s, PROF_T_KERNEL))
		return 0;
	rc = range_cursor__open(s, strdup(nccl), t->w.start_ns, t->w.end_ns, NULL, &c, err);
	while (rc == 0 && (rc = prof_cursor__next(c, err)) == 1) {
		int64_t a = prof_cursor__int64(c, 0), b = prof_cursor__int64(c, 1);

		rc = b >= a && diag_intervals__merge(&comm, a, b) ? prof_error__set(err, PROF_E_NOMEM, "out of memory")
								  : 0;
	}
	prof_cursor__close(c);
	c = NULL;
	if (rc < 0 || comm.n == 0)
		goto out;
	rc = range_cursor__open(s, strdup(kernels), t->w.start_ns, t->w.end_ns, NULL, &c, err);
	if (rc < 0)
		goto out;
	while ((rc = prof_cursor__next(c, err)) == 1) {
		int64_t a = prof_cursor__int64(c, 0), b = prof_cursor__int64(c, 1);
		struct job_kernel *k;

		if (b < a)
			continue;
		if (array__grow((void **)&v, &cap, n + 1, sizeof *v)) {
			rc = prof_error__set(err, PROF_E_NOMEM, "out of memory");
			break;
		}
		k = &v[n++];
		k->name = prof_cursor__int64(c, 2);
		for (int d = 0; d < 3; d++) {
			k->grid[d] = (int32_t)prof_cursor__int64(c, 3 + d);
			k->block[d] = (int32_t)prof_cursor__int64(c, 6 + d);
		}
		k->dur_ns = b - a;
		k->beside_comm = diag_intervals__covered(&comm, a, b) > 0;
	}
	if (rc >= 0)
		t->slowed_ns = job_judge__contention_ns(v, n);
out:
	prof_cursor__close(c);
	diag_intervals__exit(&comm);
	free(v);
	return rc < 0 ? rc : 0;
}

static int one_rank(struct prof_store *s, const struct sum_loop_options *o, unsigned flags,
		    struct rank_time *t, struct prof_error *err)
{
	struct sum_loop_options defaults;
	int rc;

	if (!o) {
		sum_loop_options__init(&defaults);
		o = &defaults;
	}
	rc = sum_window__find(s, o, &t->w, err);
	if (rc == 0)
		rc = sum_window__steps(s, &t->w, &t->steps, &t->nsteps, err);
	if (rc == 0)
		rc = steps_stats(s, t, err);
	if (rc == 0)
		rc = split_busy(s, t, flags & RANK_TIME_JOB, err);
	if (rc == 0 && (flags & RANK_TIME_JOB))
		rc = slowed_beside_comm(s, t, err);
	return rc;
}

int rank_times__load(struct prof_store *s, const struct sum_loop_options *o, unsigned flags,
		     struct rank_times *out, struct prof_error *err)
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
			rc = one_rank(s, o, flags, t, err);
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

int rank_time__load_process(struct prof_store *s, const struct sum_loop_options *o,
			    int64_t global_pid, unsigned flags, struct rank_time *t, struct prof_error *err)
{
	struct prof_error ignored = { 0 };
	int rc, urc;

	memset(t, 0, sizeof *t);
	t->global_pid = global_pid;
	if (flags & RANK_TIME_ALONE) {
		rc = one_rank(s, o, flags, t, err);
		if (rc)
			rank_time__exit(t);
		return rc;
	}
	rc = sum_ranks__scope(s, global_pid, err);
	if (rc == 0)
		rc = one_rank(s, o, flags, t, err);
	urc = sum_ranks__unscope(s, rc ? &ignored : err);
	if (rc == 0)
		rc = urc;
	if (rc)
		rank_time__exit(t);
	return rc;
}

void rank_time__exit(struct rank_time *t)
{
	diag_intervals__exit(&t->hidden);
	free(t->steps);
	free(t->step_gpu_start_ns);
	free(t->step_gpu_end_ns);
	t->steps = NULL;
	t->step_gpu_start_ns = t->step_gpu_end_ns = NULL;
}

void rank_times__exit(struct rank_times *t)
{
	for (int i = 0; i < t->n; i++)
		rank_time__exit(&t->v[i]);
	free(t->v);
	memset(t, 0, sizeof *t);
}
