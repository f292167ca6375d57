/* window_kernels.c - the loop without NVTX: the period of the program's
 * repeating launch sequence, warm-up and teardown left out.
 *
 * A kernel launched once per step splits the capture's launches into
 * periods that hold the same number of kernels, step after step; warm-up
 * (compilation, initialisation) and teardown (a check of the result, a
 * final reduction) break that regularity. So for each kernel name, the
 * counts of launches between its consecutive launches are taken, and its
 * longest run of regular periods (each within a tenth of the usual count)
 * is its loop. The loop of the capture is the shortest period among the
 * runs that hold at least 90% as many kernel launches as the run holding
 * the most: a kernel launched every few steps repeats regularly too (once per
 * generation of a decoding loop, every other step where a solver
 * alternates its sweeps), over a few steps less of the loop, and the
 * shortest period that still spans the loop is its step. A kernel launched
 * several times per step is regular only where the step is nothing but
 * identical parts: elsewhere the step's other kernels break its run.
 *
 * This replaces "the kernel launched the fewest times", which took
 * warm-up kernels launched three times (init_field in the corpus'
 * phases_no_nvtx, a reduction in CloverLeaf's field summary) for the
 * step. Spans (the names launched from near the first launch to near the
 * last) do not find the loop's ends either: triton_softmax's add_kernel is
 * launched once more by the check after its loop, and its span takes the
 * check in. Regularity counted in launches rather than in time holds where
 * a step's host time varies, as a Python loop's does.
 *
 * Two loops of comparable weight (a benchmark's phases, one after the
 * other) have no one steady state between them: when a run outside the
 * loop holds at least half of the loop's GPU time, the window is the
 * whole capture. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "window_impl.h"
#include "model/sums.h"
#include "model/window.h"
#include "prof/tables.h"
#include "prof/saturate.h"
#include "prof/error.h"

/* A kernel name's longest run of regular periods. */
struct kernel_run {
	int64_t name_id;
	int64_t launches;          /* its launches in the run: iterations + 1 */
	int64_t total_launches;    /* its launches in the capture */
	int64_t kernels;           /* kernels launched from the run's first launch to its last */
	double gpu_ns;             /* their summed time */
	int64_t first_ns, second_ns, last_ns;
	int64_t next_ns;           /* its first launch after the run; INT64_MAX: none */
	int64_t period_kernels;    /* kernels per period, the usual count */
	int64_t median_gap_ns;     /* launch to launch */
};

/* One launch of a name: its start, its place in the capture's launch
 * order and the summed time of the kernels up to it. */
struct launch {
	int64_t start_ns, index;
	double cum_ns;
};

static int cmp_int64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

/* The most frequent value of v[0..n) (sorted in place); the smaller on a tie. */
static int64_t mode_of(int64_t *v, int64_t n)
{
	int64_t best = v[0], best_n = 0;

	qsort(v, (size_t)n, sizeof *v, cmp_int64);
	for (int64_t i = 0, j; i < n; i = j) {
		for (j = i; j < n && v[j] == v[i]; j++)
			;
		if (j - i > best_n) {
			best_n = j - i;
			best = v[i];
		}
	}
	return best;
}

/* The counts of one name's n launches l, into *run; false when no run of at
 * least min_launches launches (and 3) repeats regularly. scratch holds n. */
static bool longest_run(const struct launch *l, int64_t n, int64_t min_launches, int64_t *scratch,
			struct kernel_run *run)
{
	int64_t usual, tolerance, best_a = 0, best_len = 0, a = 0;

	if (n < 3)
		return false;
	for (int64_t i = 0; i + 1 < n; i++)
		scratch[i] = l[i + 1].index - l[i].index;
	usual = mode_of(scratch, n - 1);
	tolerance = usual / 10;
	for (int64_t i = 0; i + 1 < n; i++) {
		int64_t d = l[i + 1].index - l[i].index;

		if (d < usual - tolerance || d > usual + tolerance)
			continue;
		if (i == 0 || l[i].index - l[i - 1].index < usual - tolerance ||
		    l[i].index - l[i - 1].index > usual + tolerance)
			a = i;
		if (i - a + 1 > best_len) {
			best_len = i - a + 1;
			best_a = a;
		}
	}
	if (best_len < 2 || best_len + 1 < min_launches)
		return false;
	run->launches = best_len + 1;
	run->total_launches = n;
	run->kernels = l[best_a + best_len].index - l[best_a].index;
	run->gpu_ns = l[best_a + best_len].cum_ns - l[best_a].cum_ns;
	run->first_ns = l[best_a].start_ns;
	run->second_ns = l[best_a + 1].start_ns;
	run->last_ns = l[best_a + best_len].start_ns;
	run->next_ns = best_a + best_len + 1 < n ? l[best_a + best_len + 1].start_ns : INT64_MAX;
	run->period_kernels = usual;
	for (int64_t i = 0; i < best_len; i++)
		scratch[i] = prof_span_saturated(l[best_a + i].start_ns, l[best_a + i + 1].start_ns);
	qsort(scratch, (size_t)best_len, sizeof *scratch, cmp_int64);
	run->median_gap_ns = scratch[best_len / 2];
	return true;
}

/* Every kernel name's run (with `marked`, that name's), in one pass over
 * the launches in the capture's order: *runs malloc'd. */
static int load_runs(struct prof_store *store, const struct sum_loop_options *o, const char *marked,
		     struct kernel_run **runs, size_t *nruns, struct prof_error *err)
{
	const char *sql =
		"SELECT name, start, g, cum FROM (SELECT " PROF_SQL_KERNEL_NAME_ID("k.") " AS name, k.start,"
		"  row_number() OVER w AS g, total(max(coalesce(k.end - k.start, 0), 0)) OVER w AS cum"
		"  FROM " PROF_T_KERNEL " k WHERE k.start IS NOT NULL"
		"  WINDOW w AS (ORDER BY k.start ROWS UNBOUNDED PRECEDING))"
		" WHERE name IS NOT NULL"
		" AND (?1 IS NULL OR name IN (SELECT id FROM " PROF_T_STRINGS " WHERE value = ?1))"
		" ORDER BY name, g";
	struct launch *l = NULL;
	int64_t *scratch = NULL, name_id = 0;
	size_t nl = 0, lcap = 0, scap = 0, rcap = 0;
	struct prof_cursor *c;
	int rc;

	*runs = NULL;
	*nruns = 0;
	rc = prof_cursor__open(store, sql, &c, err);
	if (rc)
		return rc;
	if (marked)
		prof_cursor__bind_text(c, 1, marked);
	for (;;) {
		int64_t id = 0;
		bool row;

		rc = prof_cursor__next(c, err);
		if (rc < 0)
			break;
		row = rc == 1;
		if (row)
			id = prof_cursor__int64(c, 0);
		if (nl > 0 && (!row || id != name_id)) {
			struct kernel_run run = { .name_id = name_id };

			rc = sum_array__grow(&scratch, &scap, nl, sizeof *scratch);
			if (!rc && longest_run(l, (int64_t)nl, (int64_t)o->min_iterations, scratch, &run)) {
				rc = sum_array__grow(runs, &rcap, *nruns, sizeof **runs);
				if (!rc)
					(*runs)[(*nruns)++] = run;
			}
			if (rc) {
				rc = prof_error__set(err, PROF_E_NOMEM, "out of memory");
				break;
			}
			nl = 0;
		}
		if (!row)
			break;
		name_id = id;
		if (sum_array__grow(&l, &lcap, nl, sizeof *l)) {
			rc = prof_error__set(err, PROF_E_NOMEM, "out of memory");
			break;
		}
		l[nl++] = (struct launch){ prof_cursor__int64(c, 1), prof_cursor__int64(c, 2),
					   prof_cursor__double(c, 3) };
	}
	prof_cursor__close(c);
	free(l);
	free(scratch);
	if (rc < 0) {
		free(*runs);
		*runs = NULL;
		*nruns = 0;
		return rc;
	}
	return 0;
}

/* Of the runs holding at least 90% as many launches as the one holding the
 * most, the one of the shortest period (the most iterations), then the one
 * starting first; -1 when none. */
static int pick_run(const struct kernel_run *runs, size_t n)
{
	int64_t most = 0;
	int best = -1;

	for (size_t i = 0; i < n; i++)
		if (runs[i].kernels > most)
			most = runs[i].kernels;
	for (size_t i = 0; i < n; i++) {
		const struct kernel_run *r = &runs[i];

		if (r->kernels * 10 < most * 9)
			continue;
		if (best < 0 || r->launches > runs[best].launches ||
		    (r->launches == runs[best].launches && r->first_ns < runs[best].first_ns))
			best = (int)i;
	}
	return best;
}

/* Whether a run outside the loop's holds half its GPU time or more. */
static bool another_loop(const struct kernel_run *runs, size_t n, int loop)
{
	const struct kernel_run *l = &runs[loop];

	for (size_t i = 0; i < n; i++) {
		const struct kernel_run *r = &runs[i];

		if ((int)i != loop && (r->last_ns < l->first_ns || r->first_ns > l->last_ns) &&
		    r->gpu_ns * 2 >= l->gpu_ns)
			return true;
	}
	return false;
}

/* Where the last iteration ends: one median period after its launch, but
 * not past the kernel that follows its period's kernels (teardown after
 * the loop), nor before those kernels end, nor at or past the marker's
 * next launch. */
static int last_iteration_end(struct prof_store *store, const struct kernel_run *r, int64_t *end_ns,
			      struct prof_error *err)
{
	const char *sql = "SELECT start, end FROM " PROF_T_KERNEL " WHERE start >= ?1"
			  " ORDER BY start LIMIT ?2";
	int64_t end = prof_add_saturated(r->last_ns, r->median_gap_ns), own_end = r->last_ns;
	struct prof_cursor *c;
	int64_t i = 0;
	int rc;

	rc = prof_cursor__open(store, sql, &c, err);
	if (rc)
		return rc;
	prof_cursor__bind_int64(c, 1, r->last_ns);
	prof_cursor__bind_int64(c, 2, r->period_kernels + 1);
	while ((rc = prof_cursor__next(c, err)) == 1) {
		if (i++ < r->period_kernels) {
			if (!prof_cursor__is_null(c, 1) && prof_cursor__int64(c, 1) > own_end)
				own_end = prof_cursor__int64(c, 1);
		} else if (prof_cursor__int64(c, 0) < end) {
			end = prof_cursor__int64(c, 0);
		}
	}
	prof_cursor__close(c);
	if (rc < 0)
		return rc;
	if (end < own_end)
		end = own_end;
	if (end > r->next_ns)
		end = r->next_ns;
	*end_ns = end;
	return 0;
}

int window__from_kernels(struct prof_store *store, const struct sum_loop_options *o, const char *marked,
			 struct sum_window *w, struct prof_error *err)
{
	const char *name_sql = "SELECT value FROM " PROF_T_STRINGS " WHERE id = ?1";
	struct kernel_run *runs = NULL, *r;
	struct prof_cursor *nc = NULL;
	char name[160] = "?";
	size_t nruns = 0;
	int64_t end_ns;
	int best, rc;

	rc = load_runs(store, o, marked, &runs, &nruns, err);
	if (rc)
		return rc;
	best = pick_run(runs, nruns);
	if (best < 0 || (!marked && another_loop(runs, nruns, best)))
		goto out;
	r = &runs[best];
	rc = last_iteration_end(store, r, &end_ns, err);
	if (rc)
		goto out;
	w->start_ns = r->second_ns;
	w->end_ns = end_ns;
	/* As with NVTX, the first iteration is the warm-up and stays out. */
	w->iterations = (int)(r->launches - 1);
	w->mark = SUM_LOOP_KERNEL;
	w->mark_name[0] = '\0';
	rc = prof_cursor__open(store, name_sql, &nc, err);
	if (rc)
		goto out;
	prof_cursor__bind_int64(nc, 1, r->name_id);
	if (prof_cursor__next(nc, err) == 1 && prof_cursor__text(nc, 0)) {
		snprintf(name, sizeof name, "%s", prof_cursor__text(nc, 0));
		snprintf(w->mark_name, sizeof w->mark_name, "%s", prof_cursor__text(nc, 0));
	}
	prof_cursor__close(nc);
	if (r->launches == r->total_launches)
		snprintf(w->source, sizeof w->source, "kernel \"%s\" launched %lld times", name,
			 (long long)r->launches);
	else
		snprintf(w->source, sizeof w->source, "kernel \"%s\" launched %lld times, %lld of them at a regular period",
			 name, (long long)r->total_launches, (long long)r->launches);
out:
	free(runs);
	return rc < 0 ? rc : 0;
}
