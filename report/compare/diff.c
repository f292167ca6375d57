/* diff.c - matching two capture profiles entry by entry, the one-line
 * verdict, and the rows of `perfkit diff` (see diff.h).
 *
 * Every section is sorted by the absolute change of its entries' total time,
 * because that is what moved the run's GPU time: a kernel that got 2x slower
 * but runs 1 us matters less than one that got 5 % slower at 40 ms. */
#include "diff.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "sink/symbol.h"
#include "sink/table.h"

void diff_format_ns(char *buf, size_t cap, int64_t ns)
{
	double v = (double)(ns < 0 ? -ns : ns);
	const char *sign = ns < 0 ? "-" : "";

	if (v >= 1e9)
		snprintf(buf, cap, "%s%.3g s", sign, v / 1e9);
	else if (v >= 1e6)
		snprintf(buf, cap, "%s%.3g ms", sign, v / 1e6);
	else if (v >= 1e3)
		snprintf(buf, cap, "%s%.3g us", sign, v / 1e3);
	else
		snprintf(buf, cap, "%s%" PRId64 " ns", sign, ns < 0 ? -ns : ns);
}

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

static int64_t abs64(int64_t v)
{
	return v < 0 ? -v : v;
}

static int row_cmp(const void *pa, const void *pb)
{
	const struct diff_row *a = pa, *b = pb;
	int64_t da = abs64(a->delta_ns), db = abs64(b->delta_ns);

	if (da != db)
		return da > db ? -1 : 1;
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
		rows[k].delta_ns = (rows[k].new ? rows[k].new->total_ns : 0) -
				   (rows[k].base ? rows[k].base->total_ns : 0);
		k++;
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

/* A kernel's short name (sink/symbol.h), cut to a readable length on a
 * UTF-8 boundary: the verdict is one line. */
static void short_name(char *buf, size_t cap, const char *full)
{
	char name[256];
	size_t len = rpt_symbol__shorten(full, RPT_SYMBOL_SHORT, name, sizeof name);

	if (len >= sizeof name)
		len = sizeof name - 1;
	if (len > 48) {
		len = 48;
		while (len > 0 && ((unsigned char)name[len] & 0xC0) == 0x80)
			len--;
		snprintf(buf, cap, "%.*s...", (int)len, name);
		return;
	}
	snprintf(buf, cap, "%.*s", (int)len, name);
}

static double ratio_of(int64_t a, int64_t b)
{
	return (double)a / (double)b;
}

static void format_ratio(char *buf, size_t cap, double x)
{
	snprintf(buf, cap, x < 1.1 ? "%.2fx" : x < 10 ? "%.1fx" : "%.0fx", x);
}

#define VERDICT_ENTRIES 3

int diff__verdict(const struct diff_result *r, char *buf, size_t cap)
{
	int64_t b = r->base->gpu_time_ns, n = r->new->gpu_time_ns;
	const struct diff_row *top[VERDICT_ENTRIES];
	size_t ntop = 0, ik = 0, ic = 0, len;
	char t[32], x[32];

	if (b == 0 && n == 0) {
		snprintf(buf, cap, "neither BASE nor NEW has GPU activity");
		return 0;
	}
	if (b == 0) {
		diff_format_ns(t, sizeof t, n);
		snprintf(buf, cap, "NEW has %s of GPU time, BASE none", t);
	} else if (n == 0) {
		diff_format_ns(t, sizeof t, b);
		snprintf(buf, cap, "NEW has no GPU activity, BASE had %s", t);
	} else if (abs64(n - b) * 200 <= b) {
		/* Within 0.5 %: calling that faster or slower would be noise. */
		diff_format_ns(t, sizeof t, n);
		snprintf(buf, cap, "NEW takes the same GPU time as BASE (%s)", t);
	} else {
		format_ratio(x, sizeof x, n < b ? ratio_of(b, n) : ratio_of(n, b));
		snprintf(buf, cap, "NEW is %s %s on the GPU", x, n < b ? "faster" : "slower");
	}
	/* The entries that moved GPU time most: kernels and copies, merged. */
	while (ntop < VERDICT_ENTRIES) {
		const struct diff_row *k = ik < r->nrows[DIFF_KERNELS] ? &r->rows[DIFF_KERNELS][ik] : NULL;
		const struct diff_row *c = ic < r->nrows[DIFF_COPIES] ? &r->rows[DIFF_COPIES][ic] : NULL;
		const struct diff_row *pick;

		if (k && c)
			pick = abs64(k->delta_ns) >= abs64(c->delta_ns) ? k : c;
		else
			pick = k ? k : c;
		if (!pick || pick->delta_ns == 0)
			break;
		if (pick == k)
			ik++;
		else
			ic++;
		top[ntop++] = pick;
	}
	for (size_t i = 0; i < ntop; i++) {
		const struct diff_stat *st = top[i]->new ? top[i]->new : top[i]->base;
		char name[160];

		short_name(name, sizeof name, st->name);
		diff_format_ns(t, sizeof t, abs64(top[i]->delta_ns));
		len = strlen(buf);
		/* U+2212 MINUS SIGN, as in "flash_fwd −41 ms". */
		snprintf(buf + len, len < cap ? cap - len : 0, "%s%s %s%s%s", i ? ", " : ": ", name,
			 top[i]->delta_ns < 0 ? "\xe2\x88\x92" : "+", t,
			 !top[i]->base ? " (added)" : !top[i]->new ? " (removed)" : "");
	}
	return 0;
}

/* ---- rows ------------------------------------------------------------- */

static struct rpt_cell int_cell(int64_t v)
{
	return (struct rpt_cell){ .i = v };
}

static struct rpt_cell null_cell(void)
{
	return (struct rpt_cell){ .is_null = true };
}

static struct rpt_cell text_cell(const char *s)
{
	return (struct rpt_cell){ .s = s };
}

static struct rpt_cell ratio_cell(int64_t base, int64_t new, bool both)
{
	if (!both || base == 0)
		return null_cell();
	return (struct rpt_cell){ .d = ratio_of(new, base) };
}

static const char *change_of(const struct diff_row *row)
{
	if (!row->base)
		return "added";
	if (!row->new)
		return "removed";
	if (row->delta_ns > 0)
		return "slower";
	if (row->delta_ns < 0)
		return "faster";
	return "same";
}

static int report_verdict(const struct diff_result *r, struct rpt_sink *sink)
{
	static const struct rpt_column cols[] = { { "Verdict", RPT_TEXT, 0 } };
	char verdict[1024];
	struct rpt_cell cell;
	int rc;

	diff__verdict(r, verdict, sizeof verdict);
	cell = text_cell(verdict);
	rc = sink->begin(sink, "diff_verdict", "Verdict", cols, 1);
	if (rc == 0)
		rc = sink->row(sink, &cell);
	if (rc == 0)
		rc = sink->end(sink);
	return rc;
}

static int report_totals(const struct diff_result *r, struct rpt_sink *sink)
{
	static const struct rpt_column cols[] = {
		{ "Metric", RPT_TEXT, 0 }, { "Base", RPT_INT, 0 }, { "New", RPT_INT, 0 },
		{ "Delta", RPT_INT, 0 }, { "Ratio", RPT_REAL, 2 },
	};
	const struct diff_profile *b = r->base, *n = r->new;
	const struct { const char *name; int64_t base, new; } totals[] = {
		{ "GPU time (ns)", b->gpu_time_ns, n->gpu_time_ns },
		{ "Wall time (ns)", b->wall_ns, n->wall_ns },
		{ "Kernel launches", b->kernel_count, n->kernel_count },
		{ "Allocations", b->alloc_count, n->alloc_count },
	};
	int rc = sink->begin(sink, "diff_totals", "Totals", cols, 5);

	for (size_t i = 0; rc == 0 && i < sizeof totals / sizeof totals[0]; i++) {
		struct rpt_cell cells[5] = {
			text_cell(totals[i].name), int_cell(totals[i].base), int_cell(totals[i].new),
			int_cell(totals[i].new - totals[i].base),
			ratio_cell(totals[i].base, totals[i].new, true),
		};
		rc = sink->row(sink, cells);
	}
	return rc ? rc : sink->end(sink);
}

static void shape_text(char *buf, size_t cap, const int32_t v[3])
{
	snprintf(buf, cap, "%" PRId32 "x%" PRId32 "x%" PRId32, v[0], v[1], v[2]);
}

static int report_section(const struct diff_result *r, struct rpt_sink *sink, int id)
{
	static const char *const names[] = { "diff_kernels", "diff_copies", "diff_ranges" };
	static const char *const titles[] = {
		"Kernels (by name and launch shape)", "Copies and memsets (by direction and host memory)",
		"NVTX ranges (by name)",
	};
	/* Shared leading columns, then section-specific ones, the name last. */
	struct rpt_column cols[14] = {
		{ "Change", RPT_TEXT, 0 }, { "Delta (ns)", RPT_INT, 0 }, { "Ratio", RPT_REAL, 2 },
		{ "Base Total (ns)", RPT_INT, 0 }, { "New Total (ns)", RPT_INT, 0 },
		{ "Base Count", RPT_INT, 0 }, { "New Count", RPT_INT, 0 },
		{ "Base Med (ns)", RPT_INT, 0 }, { "New Med (ns)", RPT_INT, 0 },
	};
	int ncols = 9, rc;

	if (id == DIFF_KERNELS) {
		cols[ncols++] = (struct rpt_column){ "Grid", RPT_TEXT, 0 };
		cols[ncols++] = (struct rpt_column){ "Block", RPT_TEXT, 0 };
	} else if (id == DIFF_COPIES) {
		cols[ncols++] = (struct rpt_column){ "Base Bytes", RPT_INT, 0 };
		cols[ncols++] = (struct rpt_column){ "New Bytes", RPT_INT, 0 };
	}
	cols[ncols++] = (struct rpt_column){ id == DIFF_COPIES ? "Operation" : "Name",
					     id == DIFF_KERNELS ? RPT_SYMBOL : RPT_TEXT, 0 };
	rc = sink->begin(sink, names[id], titles[id], cols, ncols);
	for (size_t i = 0; rc == 0 && i < r->nrows[id]; i++) {
		const struct diff_row *row = &r->rows[id][i];
		const struct diff_stat *b = row->base, *n = row->new, *any = b ? b : n;
		struct rpt_cell cells[14];
		char grid[48], block[48];
		int c = 0;

		cells[c++] = text_cell(change_of(row));
		cells[c++] = int_cell(row->delta_ns);
		cells[c++] = ratio_cell(b ? b->total_ns : 0, n ? n->total_ns : 0, b && n);
		cells[c++] = b ? int_cell(b->total_ns) : null_cell();
		cells[c++] = n ? int_cell(n->total_ns) : null_cell();
		cells[c++] = int_cell(b ? b->count : 0);
		cells[c++] = int_cell(n ? n->count : 0);
		cells[c++] = b ? int_cell(b->median_ns) : null_cell();
		cells[c++] = n ? int_cell(n->median_ns) : null_cell();
		if (id == DIFF_KERNELS) {
			shape_text(grid, sizeof grid, any->grid);
			shape_text(block, sizeof block, any->block);
			cells[c++] = text_cell(grid);
			cells[c++] = text_cell(block);
		} else if (id == DIFF_COPIES) {
			cells[c++] = int_cell(b ? b->bytes : 0);
			cells[c++] = int_cell(n ? n->bytes : 0);
		}
		cells[c++] = text_cell(any->name);
		rc = sink->row(sink, cells);
	}
	return rc ? rc : sink->end(sink);
}

int diff__report(const struct diff_result *r, struct rpt_sink *sink)
{
	int rc = report_verdict(r, sink);

	if (rc == 0)
		rc = report_totals(r, sink);
	for (int id = 0; rc == 0 && id < DIFF_NSECTIONS; id++)
		rc = report_section(r, sink, id);
	return rc;
}
