/* groups.h - the grouped statistics behind the summaries (count, total,
 * mean, exact median, min, max and sample standard deviation per group, in
 * one streaming pass: groups.c), the kernel and NVTX groups
 * (kernel_groups.c, nvtx_groups.c, nvtx_kernels.c), and the same as runs, for a job's
 * captures read in parts (report/job). */
#ifndef REPORT_MODEL_GROUPS_H
#define REPORT_MODEL_GROUPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/group_runs.h"
#include "prof/error.h"
#include "prof/store.h"
#include "sink/table.h"

/* Statistics of one group of integer values (durations in ns or sizes in bytes). */
struct sum_group {
	char *label;      /* malloc'd copy of the source's l1 (NULL if NULL) */
	char *label2;     /* l2 likewise */
	int64_t key;      /* the source's k (a StringIds id, an enum value, ...) */
	bool key_is_null;
	int64_t n;
	int64_t total, min, max;
	double mean, median, stddev; /* stddev: sample (n - 1), 0 for one value */
};

struct sum_groups {
	struct sum_group *g;
	size_t n, cap;
	int64_t rows_left_out; /* rows with a bad span (SUM_BAD_SPAN), in no group */
};

void sum_groups__exit(struct sum_groups *gs);

/* The groups behind cuda_gpu_kern_sum, sorted by total (the overview and
 * the HTML report's kernel plot show their first rows): one a kernel name,
 * and one a CUDA graph whose launches were recorded whole
 * (--cuda-graph-trace=graph: PROF_T_GRAPH_TRACE, no kernel of the graph
 * recorded), labelled "CUDA graph ID (nodes not recorded)" with label2
 * SUM_GRAPH_GROUP. */
int sum_kernel_groups(struct prof_store *s, struct sum_groups *gs, struct prof_error *err);
#define SUM_GRAPH_GROUP "CUDA graph launches"
/* Whether g is such a graph's group (also of a job's groups made of runs). */
bool sum_group__is_graph(const struct sum_group *g);
/* The groups behind nvtx_sum, sorted by total. */
int sum_nvtx_groups(struct prof_store *s, struct sum_groups *gs, struct prof_error *err);
/* The groups behind nvtx_kern_sum, in no order: label the innermost
 * push/pop range open when a kernel's launching call started, key the
 * kernel's name id, label2 left NULL (nvtx_kernels.c: one sweep over the
 * launches and the ranges in time order). The launches of a CUDA graph
 * recorded whole are attributed alike, one group a range and graph: key
 * the graph's id, label2 the name sum_kernel_groups gives the graph;
 * *graph_launches counts them. */
int sum_nvtx_kernel_groups(struct prof_store *s, struct sum_groups *gs, int64_t *graph_launches,
			   struct prof_error *err);
/* Sort groups as the summaries show them: total descending, then label,
 * label2 and key. */
void sum_groups__sort_by_total(struct sum_groups *gs);

/* ---- groups in parts (a job's captures, report/job) -------------------- */

/* struct sum_run, count values of value (group_runs.h): a group's values
 * as ascending runs carry what its exact median needs, and two parts' runs
 * merge into the whole's. */

/* Set g's statistics (n, total, min, max, mean, median, stddev) from its
 * values as ascending runs, to the last bit as a group read from a store
 * holding those values. The labels and key are left as they are. */
void sum_group__fold_runs(struct sum_group *g, const struct sum_run *runs, size_t nruns);

/* One group more in gs: its labels (copied), key and the statistics of
 * its values as ascending runs (sum_group__fold_runs). 0 or
 * PROF_E_NOMEM. */
int sum_groups__push_runs(struct sum_groups *gs, const char *l1, const char *l2, bool key_is_null, int64_t key,
			  const struct sum_run *runs, size_t nruns);

/* What a walk over a capture's groups as runs calls: each run of each group
 * in (label, label2, key, value) order; labels are the texts the summary
 * shows (a kernel's name, a range's name and style). */
struct sum_runs_walk {
	int (*run)(void *ctx, const char *label, const char *label2, bool key_is_null, int64_t key,
		   struct sum_run run);
	void *ctx;
	int64_t rows_left_out; /* rows with a bad span, added to */
};
/* The runs behind cuda_gpu_kern_sum (keyed by name: label the kernel's
 * name, key 0, key_is_null when the kernel has none; a graph's launches
 * labelled as sum_kernel_groups labels them) and behind nvtx_sum. */
int sum_kernel_runs(struct prof_store *s, struct sum_runs_walk *w, struct prof_error *err);
int sum_nvtx_runs(struct prof_store *s, struct sum_runs_walk *w, struct prof_error *err);

/* cuda_gpu_kern_sum's table of gs, and its first limit rows (0: all) as
 * another report (the overview's top kernels). Both carry the note
 * SUM_NOTE_GRAPH_LAUNCHES: how many of the rows' instances are graph
 * launches, and that their kernels were not recorded. */
int sum_kernel_groups__emit(const struct sum_groups *gs, struct rpt_sink *sink,
			    struct prof_error *err);
int sum_kernel_groups__emit_top(const struct sum_groups *gs, struct rpt_sink *sink,
				const char *report, const char *title, size_t limit,
				struct prof_error *err);
#define SUM_NOTE_GRAPH_LAUNCHES "graph_launches"
/* How many of gs's instances are graph launches (sum_group__is_graph). */
int64_t sum_groups__graph_launches(const struct sum_groups *gs);
/* The note SUM_NOTE_GRAPH_LAUNCHES of launches graph launches, its text
 * written into text (cap: SUM_GRAPH_NOTE_MAX holds it). */
#define SUM_GRAPH_NOTE_MAX 320
struct rpt_note sum_graph_launches__note(int64_t launches, char *text, size_t cap);
/* nvtx_sum's table of sum_nvtx_groups' groups. */
int sum_nvtx_groups__emit(const struct sum_groups *gs, struct rpt_sink *sink, struct prof_error *err);

/* Group the rows of src, an SQL SELECT yielding the columns l1, l2, k, v,
 * bad (text, text, integer, integer value, and SUM_BAD_SPAN of the row),
 * by (l1, l2, k) and append one sum_group per group to gs; rows with a bad
 * span are in no group and add to gs->rows_left_out. The rows are
 * counted by (group, value) in one pass (group_runs.h), memory bounded by
 * GROUP_RUNS_MAX distinct pairs; past it a GROUP BY count and an ORDER BY
 * stream walk in step, so the median is picked out of the sorted stream
 * without holding it. Both give the same statistics to the last bit. */
int sum_groups__collect(struct sum_groups *gs, struct prof_store *s, const char *src,
			struct prof_error *err);
/* Total of group totals. */
int64_t sum_groups__total(const struct sum_groups *gs);
/* The runs of src (columns as sum_groups__collect's) through w, counted
 * in memory or sorted in SQL as sum_groups__collect's groups are. */
int sum_groups__runs(struct prof_store *s, const char *src, struct sum_runs_walk *w,
		     struct prof_error *err);

/* Set each group's label to the StringIds value of its key, for sources
 * that group by string id rather than by text so the join runs once per
 * group instead of per row. */
int sum_groups__label_from_strings(struct sum_groups *gs, struct prof_store *s,
				   struct prof_error *err);

/* The note every summary of durations gives its sink: gs->rows_left_out
 * under SUM_NOTE_LEFT_OUT, with a sentence (table.h, struct rpt_note). */
#define SUM_NOTE_LEFT_OUT "rows_left_out"
int sum_groups__note_left_out(const struct sum_groups *gs, struct rpt_sink *sink);

/* Emit the groups under the caller's columns (at most
 * SUM_GROUP_MAX_CELLS), cells_of filling each group's row, with the note
 * of the rows left out, and note after it where note is not NULL. */
enum { SUM_GROUP_MAX_CELLS = 16 };
typedef void (*sum_group_cells_fn)(const struct sum_group *g, struct rpt_cell *cells);
int sum_groups__emit(const struct sum_groups *gs, struct rpt_sink *sink, const char *report,
		     const char *title, const struct rpt_column *cols, int ncols,
		     sum_group_cells_fn cells_of, struct prof_error *err);
int sum_groups__emit_noted(const struct sum_groups *gs, struct rpt_sink *sink, const char *report,
			   const char *title, const struct rpt_column *cols, int ncols,
			   sum_group_cells_fn cells_of, const struct rpt_note *note,
			   struct prof_error *err);

/* Emit groups in the common nsys layout: Time (%), Total Time (ns),
 * <count_name>, Avg, Med, Min, Max, StdDev (ns), then the name column(s):
 * label2 under extra_name when extra_name is set, then label under
 * name_col, of name_type (RPT_SYMBOL for kernel names), and the note of
 * the rows left out. At most limit rows (0: all). */
int sum_groups__emit_time(const struct sum_groups *gs, struct rpt_sink *sink,
			  const char *report, const char *title, const char *count_name,
			  const char *extra_name, const char *name_col, enum rpt_type name_type,
			  size_t limit, struct prof_error *err);
/* The same layout with one note more (after the rows left out's), as a
 * table's description. */
struct sum_time_table {
	const char *report, *title;
	const char *count_name;      /* "Instances" */
	const char *extra_name;      /* label2's column; NULL: none */
	const char *name_col;
	enum rpt_type name_type;
	size_t limit;                /* at most this many rows; 0: all */
	const struct rpt_note *note; /* NULL: none */
};
int sum_groups__emit_table(const struct sum_groups *gs, struct rpt_sink *sink,
			   const struct sum_time_table *t, struct prof_error *err);

#endif
