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

bool diff_launch_changed(int64_t base_median_ns, int64_t base_iqr_ns, int64_t new_median_ns,
			 int64_t new_iqr_ns)
{
	double change, base_spread, new_spread;

	if (base_median_ns <= 0 || new_median_ns <= 0)
		return base_median_ns != new_median_ns;
	change = fabs((double)(new_median_ns - base_median_ns)) / (double)base_median_ns;
	base_spread = (double)base_iqr_ns / (double)base_median_ns;
	new_spread = (double)new_iqr_ns / (double)new_median_ns;
	return change > DIFF_MIN_CHANGE && change > base_spread && change > new_spread;
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

/* The change of a matched entry and its cost per iteration, from its
 * launch_changed and calls_changed. */
static void settle(struct diff_row *row)
{
	const struct diff_stat *b = row->base, *n = row->new;

	row->change = DIFF_SAME;
	row->effect_ns = 0;
	if (row->launch_changed) {
		row->change = n->median_ns > b->median_ns ? DIFF_SLOWER : DIFF_FASTER;
		row->effect_ns += (double)(n->median_ns - b->median_ns) * row->new_calls;
	}
	if (row->calls_changed) {
		if (!row->launch_changed)
			row->change = row->new_calls > row->base_calls ? DIFF_MORE_CALLS : DIFF_FEWER_CALLS;
		row->effect_ns += (row->new_calls - row->base_calls) * (double)b->median_ns;
	}
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

int diff__compute(struct diff_result *r, const struct diff_profile *base,
		  const struct diff_profile *new)
{
	memset(r, 0, sizeof *r);
	r->base = base;
	r->new = new;
	r->per_iteration = base->loop.iterations > 0 && new->loop.iterations > 0 &&
			   sum_window__same_mark(&base->loop, &new->loop);
	r->base_iterations = r->per_iteration ? base->loop.iterations : 1;
	r->new_iterations = r->per_iteration ? new->loop.iterations : 1;
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
	for (int id = 0; id < DIFF_NSECTIONS; id++)
		free(r->rows[id]);
	memset(r, 0, sizeof *r);
}
