/* diff_rows.c - the rows of `perfkit diff` for every format: the verdict,
 * the two loops (the basis of the per-iteration figures), the totals of
 * the whole captures and one section per kind of entry. */
#include "diff.h"

#include <inttypes.h>
#include <math.h>
#include <stdbool.h>

#include "sink/table.h"
#include "model/sql.h"
#include "model/window.h"
#include "prof/saturate.h"

static struct rpt_cell int_cell(int64_t v)
{
	return (struct rpt_cell){ .i = v };
}

static struct rpt_cell real_cell(double v)
{
	return (struct rpt_cell){ .d = v };
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
	return real_cell((double)new / (double)base);
}

void diff_left_out__text(char *buf, size_t cap, int64_t rows)
{
	snprintf(buf, cap, "%" PRId64 " row%s " SUM_BAD_SPAN_WORDS " or a negative byte count "
		 "%s left out", rows, rows == 1 ? "" : "s", rows == 1 ? "was" : "were");
}

int diff_left_out__note(struct rpt_sink *sink, int64_t rows)
{
	char text[160];

	diff_left_out__text(text, sizeof text, rows);
	return rpt_sink__note(sink, &(struct rpt_note){ "rows_left_out", rows, text });
}

static int report_verdict(const struct diff_result *r, struct rpt_sink *sink)
{
	static const struct rpt_column cols[] = { { "Verdict", RPT_TEXT, 0 } };
	char verdict[1536];
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

/* One side's loop (a whole capture's, or one rank's) and its figures per
 * iteration; without a loop the per-iteration cells are empty. */
static int loop_row(struct rpt_sink *sink, const char *side, const struct diff_profile *p)
{
	const struct sum_window *w = &p->loop;
	double it = w->iterations;
	bool loop = w->iterations > 0, steps = p->nsteps > 0;
	struct rpt_cell cells[11] = {
		text_cell(side),
		p->rank >= 0 ? text_cell(p->rank_name) : null_cell(),
		loop ? int_cell(w->iterations) : null_cell(),
		loop ? int_cell(w->span_ns) : null_cell(),
		loop ? int_cell(llround((double)w->span_ns / it)) : null_cell(),
		steps ? int_cell(p->step_med_ns) : null_cell(),
		steps ? int_cell(p->step_q3_ns - p->step_q1_ns) : null_cell(),
		loop ? int_cell(llround((double)p->loop_gpu_time_ns / it)) : null_cell(),
		loop ? real_cell((double)p->loop_kernel_count / it) : null_cell(),
		loop ? real_cell((double)p->loop_alloc_count / it) : null_cell(),
		text_cell(loop ? w->source : "none found: no NVTX range or kernel repeats"),
	};

	return sink->row(sink, cells);
}

/* Each capture's loop (each rank's, for two jobs): what the sections
 * divide by, and the step's wall time the verdict opens with. */
static int report_loops(const struct diff_result *r, struct rpt_sink *sink)
{
	static const struct rpt_column cols[] = {
		{ "Capture", RPT_TEXT, 0 }, { "Rank", RPT_TEXT, 0 }, { "Iterations", RPT_INT, 0 },
		{ "Loop Time (ns)", RPT_INT, 0 }, { "Time/iter (ns)", RPT_INT, 0 },
		{ "Step Med (ns)", RPT_INT, 0 }, { "Step IQR (ns)", RPT_INT, 0 },
		{ "GPU Time/iter (ns)", RPT_INT, 0 }, { "Kernels/iter", RPT_REAL, 2 },
		{ "Allocations/iter", RPT_REAL, 2 }, { "Loop", RPT_TEXT, 0 },
	};
	int rc = sink->begin(sink, "diff_loops", "Loops (the per-iteration basis)", cols, 11);

	if (r->nranks == 0) {
		if (rc == 0)
			rc = loop_row(sink, "BASE", r->base);
		if (rc == 0)
			rc = loop_row(sink, "NEW", r->new);
	}
	for (int i = 0; rc == 0 && i < r->nranks; i++)
		rc = loop_row(sink, "BASE", r->ranks[i].base);
	for (int i = 0; rc == 0 && i < r->nranks; i++)
		rc = loop_row(sink, "NEW", r->ranks[i].new);
	return rc ? rc : sink->end(sink);
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
	int rc = sink->begin(sink, "diff_totals", "Totals (whole captures)", cols, 5);

	if (rc == 0)
		rc = diff_left_out__note(sink, prof_add_saturated(b->rows_left_out, n->rows_left_out));
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

/* Per-iteration cells are empty when the captures are compared as totals. */
static struct rpt_cell per_iteration_cell(const struct diff_result *r, double v)
{
	return r->per_iteration ? real_cell(v) : null_cell();
}

/* One row of a section: the pair's (a rank's, for two jobs) entry. */
static int section_row(const struct diff_result *r, const struct diff_row *row, bool with_rank,
		       int id, struct rpt_sink *sink)
{
	const struct diff_stat *b = row->base, *n = row->new, *any = b ? b : n;
	struct rpt_cell cells[19];
	char grid[48], block[48];
	int c = 0;

	if (with_rank)
		cells[c++] = text_cell(r->new->rank_name);
	cells[c++] = text_cell(diff_change__name(row->change));
	cells[c++] = r->per_iteration ? int_cell(row->delta_ns) : null_cell();
	cells[c++] = ratio_cell(b ? b->median_ns : 0, n ? n->median_ns : 0, b && n);
	cells[c++] = b ? int_cell(b->median_ns) : null_cell();
	cells[c++] = n ? int_cell(n->median_ns) : null_cell();
	cells[c++] = b ? int_cell(b->q3_ns - b->q1_ns) : null_cell();
	cells[c++] = n ? int_cell(n->q3_ns - n->q1_ns) : null_cell();
	cells[c++] = per_iteration_cell(r, row->base_calls);
	cells[c++] = per_iteration_cell(r, row->new_calls);
	cells[c++] = int_cell(b ? b->count : 0);
	cells[c++] = int_cell(n ? n->count : 0);
	cells[c++] = b ? int_cell(b->total_ns) : null_cell();
	cells[c++] = n ? int_cell(n->total_ns) : null_cell();
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
	return sink->row(sink, cells);
}

/* One section of pairs[0..npairs): one process against one, or two jobs
 * rank by rank (a Rank column first, the ranks in order). */
static int report_section(const struct diff_result *pairs, int npairs, bool with_rank,
			  struct rpt_sink *sink, int id)
{
	static const char *const names[] = { "diff_kernels", "diff_copies", "diff_ranges", "diff_api" };
	static const char *const titles[] = {
		"Kernels (by name and launch shape)", "Copies and memsets (by direction and host memory)",
		"NVTX ranges (by name)", "CUDA API calls (by name)",
	};
	/* Shared leading columns, then section-specific ones, the name last. */
	static const struct rpt_column shared[] = {
		{ "Change", RPT_TEXT, 0 }, { "Delta/iter (ns)", RPT_INT, 0 },
		{ "Med Ratio", RPT_REAL, 2 },
		{ "Base Med (ns)", RPT_INT, 0 }, { "New Med (ns)", RPT_INT, 0 },
		{ "Base IQR (ns)", RPT_INT, 0 }, { "New IQR (ns)", RPT_INT, 0 },
		{ "Base Count/iter", RPT_REAL, 2 }, { "New Count/iter", RPT_REAL, 2 },
		{ "Base Count", RPT_INT, 0 }, { "New Count", RPT_INT, 0 },
		{ "Base Total (ns)", RPT_INT, 0 }, { "New Total (ns)", RPT_INT, 0 },
	};
	struct rpt_column cols[19];
	int ncols = 0, rc;

	if (with_rank)
		cols[ncols++] = (struct rpt_column){ "Rank", RPT_TEXT, 0 };
	for (size_t i = 0; i < sizeof shared / sizeof shared[0]; i++)
		cols[ncols++] = shared[i];
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
	for (int p = 0; rc == 0 && p < npairs; p++)
		for (size_t i = 0; rc == 0 && i < pairs[p].nrows[id]; i++)
			rc = section_row(&pairs[p], &pairs[p].rows[id][i], with_rank, id, sink);
	return rc ? rc : sink->end(sink);
}

int diff__report(const struct diff_result *r, struct rpt_sink *sink)
{
	/* two jobs: every rank's rows, rank by rank */
	bool job = r->nranks > 0;
	int rc = report_verdict(r, sink);

	if (rc == 0)
		rc = report_loops(r, sink);
	if (rc == 0)
		rc = report_totals(r, sink);
	for (int id = 0; rc == 0 && id < DIFF_NSECTIONS; id++)
		rc = report_section(job ? r->ranks : r, job ? r->nranks : 1, job, sink, id);
	return rc;
}
