/* diff.c - matching two capture profiles entry by entry and judging each
 * match: per iteration of the loop when both captures have one, a median per
 * launch moved beyond noise, calls per iteration changed (see diff.h).
 *
 * Entries with a real change come first, ordered by what they cost per
 * iteration, because that is what moved the run: a kernel that got 2x
 * slower but runs 1 us matters less than one that got 5 % slower at 40 ms,
 * and one whose total fell only because the capture held fewer steps did
 * not change at all. */
#include "diff.h"

#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "prof/units.h"
#include "model/window.h"
#include "prof/error.h"

void diff_format_ns(char *buf, size_t cap, int64_t ns)
{
	prof_units__duration(buf, cap, ns, PROF_UNITS_SIG3);
}

const char *diff_change__name(enum diff_change c)
{
	switch (c) {
	case DIFF_SAME:
		return "same";
	case DIFF_SLOWER:
		return "slower";
	case DIFF_FASTER:
		return "faster";
	case DIFF_MORE_CALLS:
		return "more calls";
	case DIFF_FEWER_CALLS:
		return "fewer calls";
	case DIFF_ADDED:
		return "added";
	case DIFF_REMOVED:
		return "removed";
	}
	return "?";
}

/* ---- noise ------------------------------------------------------------- */

bool diff_time_changed(double base_ns, double new_ns, double calls, int64_t base_iqr_ns,
		       int64_t new_iqr_ns)
{
	double change = fabs(new_ns - base_ns);
	double spread = (double)(base_iqr_ns < new_iqr_ns ? base_iqr_ns : new_iqr_ns);

	if (base_ns <= 0 || new_ns <= 0)
		return base_ns != new_ns;
	return change > DIFF_MIN_CHANGE * base_ns && change > calls * spread;
}

bool diff_launch_changed(int64_t base_median_ns, int64_t base_iqr_ns, int64_t new_median_ns,
			 int64_t new_iqr_ns)
{
	return diff_time_changed((double)base_median_ns, (double)new_median_ns, 1, base_iqr_ns,
				 new_iqr_ns);
}

bool diff_calls_changed(double base_calls, double base_iterations, double new_calls,
			double new_iterations)
{
	double change = fabs(new_calls - base_calls);
	double shorter = base_iterations < new_iterations ? base_iterations : new_iterations;

	if (base_calls <= 0 || new_calls <= 0)
		return base_calls != new_calls;
	return change > DIFF_MIN_CHANGE * base_calls && change * shorter > DIFF_EDGE_CALLS;
}

/* ---- matching ---------------------------------------------------------- */

static int stat_cmp(const struct diff_stat *a, const struct diff_stat *b)
{
	int c = strcmp(a->name, b->name);

	if (c)
		return c;
	for (int i = 0; i < 3; i++) {
		if (a->grid[i] != b->grid[i])
			return a->grid[i] < b->grid[i] ? -1 : 1;
		if (a->block[i] != b->block[i])
			return a->block[i] < b->block[i] ? -1 : 1;
	}
	return 0;
}

static int stat_ptr_cmp(const void *a, const void *b)
{
	return stat_cmp(*(const struct diff_stat *const *)a, *(const struct diff_stat *const *)b);
}

static bool row_is_real(const struct diff_row *row)
{
	return row->change != DIFF_SAME;
}

static int row_cmp(const void *pa, const void *pb)
{
	const struct diff_row *a = pa, *b = pb;
	double ka, kb;

	if (row_is_real(a) != row_is_real(b))
		return row_is_real(a) ? -1 : 1;
	ka = row_is_real(a) ? fabs(a->effect_ns) : fabs((double)a->delta_ns);
	kb = row_is_real(b) ? fabs(b->effect_ns) : fabs((double)b->delta_ns);
	if (ka != kb)
		return ka > kb ? -1 : 1;
	return stat_cmp(a->base ? a->base : a->new, b->base ? b->base : b->new);
}

static const struct diff_stat **sorted_ptrs(const struct diff_section *sec)
{
	const struct diff_stat **v = malloc((sec->n ? sec->n : 1) * sizeof *v);

	if (!v)
		return NULL;
	for (size_t i = 0; i < sec->n; i++)
		v[i] = &sec->v[i];
	qsort(v, sec->n, sizeof *v, stat_ptr_cmp);
	return v;
}

/* Calls and time of one side, per iteration of its loop or in total. */
static void side_figures(const struct diff_result *r, const struct diff_stat *st, double iterations,
			 double *calls, double *time_ns)
{
	*calls = 0;
	*time_ns = 0;
	if (!st)
		return;
	*calls = (double)(r->per_iteration ? st->loop_count : st->count) / iterations;
	*time_ns = (double)(r->per_iteration ? st->loop_total_ns : st->total_ns) / iterations;
}

/* The change of a matched entry (the rule in diff.h): its time per
 * iteration against what its launches' spread explains; with calls per
 * iteration unchanged (the windows' edges at most), the change of its
 * mean launch over its calls, so that a launch more at an edge is none.
 * Labelled by the change's direction, after the calls where they changed
 * that way and the median launch did not. */
static void settle(struct diff_row *row)
{
	const struct diff_stat *b = row->base, *n = row->new;
	double calls = row->base_calls > row->new_calls ? row->base_calls : row->new_calls;
	double base_ns = row->base_time_ns, new_ns = row->new_time_ns;
	bool up;

	row->change = DIFF_SAME;
	row->effect_ns = 0;
	if (!row->calls_changed && row->base_calls > 0 && row->new_calls > 0)
		base_ns = row->base_time_ns / row->base_calls * row->new_calls;
	if (!diff_time_changed(base_ns, new_ns, calls, b->q3_ns - b->q1_ns, n->q3_ns - n->q1_ns))
		return;
	row->effect_ns = new_ns - base_ns;
	up = row->effect_ns > 0;
	if (row->calls_changed && (row->new_calls > row->base_calls) == up &&
	    !(row->launch_changed && (n->median_ns > b->median_ns) == up))
		row->change = up ? DIFF_MORE_CALLS : DIFF_FEWER_CALLS;
	else
		row->change = up ? DIFF_SLOWER : DIFF_FASTER;
}

/* The change of one entry and what it costs per iteration. */
static void judge(const struct diff_result *r, struct diff_row *row)
{
	const struct diff_stat *b = row->base, *n = row->new;

	side_figures(r, b, r->base_iterations, &row->base_calls, &row->base_time_ns);
	side_figures(r, n, r->new_iterations, &row->new_calls, &row->new_time_ns);
	row->delta_ns = llround(row->new_time_ns - row->base_time_ns);
	if (!b || !n) {
		row->change = b ? DIFF_REMOVED : DIFF_ADDED;
		row->effect_ns = row->new_time_ns - row->base_time_ns;
		return;
	}
	row->launch_changed = diff_launch_changed(b->median_ns, b->q3_ns - b->q1_ns, n->median_ns,
						  n->q3_ns - n->q1_ns);
	row->calls_changed = diff_calls_changed(row->base_calls, r->base_iterations, row->new_calls,
						r->new_iterations);
	settle(row);
}

/* A kernel whose grid follows the data (a batch size per step) spreads its
 * launches over several shapes, differently in each window: calls per
 * iteration count as changed only where the kernel's calls over all its
 * shapes changed. rows[from, to) are the rows of one name. */
static void judge_calls_by_name(const struct diff_result *r, struct diff_row *rows, size_t from,
				size_t to)
{
	double base_calls = 0, new_calls = 0;

	for (size_t i = from; i < to; i++) {
		base_calls += rows[i].base_calls;
		new_calls += rows[i].new_calls;
	}
	if (diff_calls_changed(base_calls, r->base_iterations, new_calls, r->new_iterations))
		return;
	for (size_t i = from; i < to; i++) {
		if (rows[i].base && rows[i].new && rows[i].calls_changed) {
			rows[i].calls_changed = false;
			settle(&rows[i]);
		}
	}
}

static const char *row_name(const struct diff_row *row)
{
	return (row->base ? row->base : row->new)->name;
}

/* Merge two sorted key lists: equal keys pair up, the rest are added/removed. */
static int match_section(struct diff_result *r, int id)
{
	const struct diff_section *bs = &r->base->sec[id], *ns = &r->new->sec[id];
	const struct diff_stat **b = sorted_ptrs(bs), **n = sorted_ptrs(ns);
	struct diff_row *rows = calloc(bs->n + ns->n + 1, sizeof *rows);
	size_t i = 0, j = 0, k = 0;

	if (!b || !n || !rows) {
		free(b);
		free(n);
		free(rows);
		return PROF_E_NOMEM;
	}
	while (i < bs->n || j < ns->n) {
		int c = i == bs->n ? 1 : j == ns->n ? -1 : stat_cmp(b[i], n[j]);

		rows[k].base = c <= 0 ? b[i++] : NULL;
		rows[k].new = c >= 0 ? n[j++] : NULL;
		judge(r, &rows[k]);
		k++;
	}
	/* Rows are in key order here: each name's shapes lie together. */
	for (size_t from = 0, to; id == DIFF_KERNELS && from < k; from = to) {
		for (to = from + 1; to < k && strcmp(row_name(&rows[to]), row_name(&rows[from])) == 0; to++)
			;
		judge_calls_by_name(r, rows, from, to);
	}
	qsort(rows, k, sizeof *rows, row_cmp);
	free(b);
	free(n);
	r->rows[id] = rows;
	r->nrows[id] = k;
	return 0;
}

static bool steps_changed(const struct diff_profile *b, const struct diff_profile *n)
{
	return b->nsteps > 0 && n->nsteps > 0 &&
	       diff_time_changed((double)b->step_med_ns, (double)n->step_med_ns, 1,
				 b->step_q3_ns - b->step_q1_ns, n->step_q3_ns - n->step_q1_ns);
}

static const struct diff_profile *rank_of(const struct diff_profile *job, int rank)
{
	for (int i = 0; i < job->nranks; i++)
		if (job->ranks[i].rank == rank)
			return &job->ranks[i];
	return NULL;
}

/* Rank with rank; the slowest pair is the one whose NEW step is longest. */
static int compute_ranks(struct diff_result *r)
{
	const struct diff_profile *b = r->base, *n = r->new;
	int64_t longest = -1;

	r->ranks = calloc((size_t)b->nranks, sizeof *r->ranks);
	if (!r->ranks)
		return PROF_E_NOMEM;
	for (int i = 0; i < b->nranks; i++) {
		const struct diff_profile *nr = rank_of(n, b->ranks[i].rank);
		struct diff_result *pair = &r->ranks[r->nranks];
		int rc;

		if (!nr)
			continue;
		rc = diff__compute(pair, &b->ranks[i], nr);
		if (rc < 0)
			return rc;
		if (nr->step_med_ns > longest) {
			longest = nr->step_med_ns;
			r->slowest = r->nranks;
		}
		r->nranks++;
	}
	return 0;
}

int diff__compute(struct diff_result *r, const struct diff_profile *base,
		  const struct diff_profile *new)
{
	memset(r, 0, sizeof *r);
	r->slowest = -1;
	if (base->nranks > 0 && new->nranks > 0) {
		int rc;

		r->base = base;
		r->new = new;
		rc = compute_ranks(r);
		if (rc < 0) {
			diff__exit(r);
			return rc;
		}
	}
	r->base = base;
	r->new = new;
	r->per_iteration = base->loop.iterations > 0 && new->loop.iterations > 0 &&
			   sum_window__same_mark(&base->loop, &new->loop);
	r->base_iterations = r->per_iteration ? base->loop.iterations : 1;
	r->new_iterations = r->per_iteration ? new->loop.iterations : 1;
	r->step_changed = steps_changed(base, new);
	for (int id = 0; id < DIFF_NSECTIONS; id++) {
		int rc = match_section(r, id);

		if (rc < 0) {
			diff__exit(r);
			return rc;
		}
	}
	return 0;
}

void diff__exit(struct diff_result *r)
{
	for (int i = 0; i < r->nranks; i++)
		diff__exit(&r->ranks[i]);
	free(r->ranks);
	for (int id = 0; id < DIFF_NSECTIONS; id++)
		free(r->rows[id]);
	memset(r, 0, sizeof *r);
}
