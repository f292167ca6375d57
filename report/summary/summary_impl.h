/* summary_impl.h - internals of the summary reports: the grouped statistics
 * engine (count, total, mean, exact median, min, max, sample standard
 * deviation per group, in one streaming pass) and small helpers around the
 * sink. Only report/summary includes it; what other folders use is in
 * query.h. */
#ifndef REPORT_SUMMARY_IMPL_H
#define REPORT_SUMMARY_IMPL_H

#include <stdbool.h>
#include <stdint.h>

#include "query.h"
#include "summary.h"

/* Group the rows of src, an SQL SELECT yielding the columns l1, l2, k, v,
 * bad (text, text, integer, integer value, and SUM_BAD_SPAN of the row),
 * by (l1, l2, k) and append one sum_group per group to gs; rows with a bad
 * span are in no group and add to gs->rows_left_out. Memory stays
 * proportional to the number of groups: a GROUP BY count and an ORDER BY
 * stream walk in step, so the median is picked out of the sorted stream
 * without holding it. */
int sum_groups__collect(struct sum_groups *gs, struct prof_store *s, const char *src,
			struct prof_error *err);
/* Total of group totals. */
int64_t sum_groups__total(const struct sum_groups *gs);
/* The runs of src (columns as sum_groups__collect's) through w. */
int sum_groups__runs(struct prof_store *s, const char *src, struct sum_runs_walk *w,
		     struct prof_error *err);

/* Set each group's label to the StringIds value of its key, for sources
 * that group by string id rather than by text so the join runs once per
 * group instead of per row. */
int sum_groups__label_from_strings(struct sum_groups *gs, struct prof_store *s,
				   struct prof_error *err);

/* A StringIds value (malloc'd), NULL when the id is absent. */
int sum_string(struct prof_store *s, int64_t id, char **out, struct prof_error *err);

/* Cell constructors. */
static inline struct rpt_cell sum_int(int64_t v) { return (struct rpt_cell){ .i = v }; }
static inline struct rpt_cell sum_real(double v) { return (struct rpt_cell){ .d = v }; }
static inline struct rpt_cell sum_text(const char *v)
{ return (struct rpt_cell){ .s = v, .is_null = v == NULL }; }
static inline struct rpt_cell sum_null(void) { return (struct rpt_cell){ .is_null = true }; }

/* Fill err for a failed sink call. */
int sum_sink_error(int rc, struct prof_error *err);

/* The note every summary of durations gives its sink: gs->rows_left_out
 * under SUM_NOTE_LEFT_OUT, with a sentence (table.h, struct rpt_note). */
#define SUM_NOTE_LEFT_OUT "rows_left_out"
int sum_groups__note_left_out(const struct sum_groups *gs, struct rpt_sink *sink);

/* Emit groups in the common nsys layout: Time (%), Total Time (ns),
 * <count_name>, Avg, Med, Min, Max, StdDev (ns), then the name column(s):
 * label2 under extra_name when extra_name is set, then label under
 * name_col, of name_type (RPT_SYMBOL for kernel names), and the note of
 * the rows left out. At most limit rows (0: all). */
int sum_groups__emit_time(const struct sum_groups *gs, struct rpt_sink *sink,
			  const char *report, const char *title, const char *count_name,
			  const char *extra_name, const char *name_col, enum rpt_type name_type,
			  size_t limit, struct prof_error *err);


#endif
