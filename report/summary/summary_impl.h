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

/* Group the rows of src, an SQL SELECT yielding the columns l1, l2, k, v
 * (text, text, integer, integer value), by (l1, l2, k) and append one
 * sum_group per group to gs. Memory stays proportional to the number of
 * groups: a GROUP BY count and an ORDER BY stream walk in step, so the
 * median is picked out of the sorted stream without holding it. */
int sum_groups__collect(struct sum_groups *gs, struct prof_store *s, const char *src,
			struct prof_error *err);
/* Total of group totals. */
int64_t sum_groups__total(const struct sum_groups *gs);
/* Order by total descending; ties by label, label2, key ascending so output
 * is deterministic. */
void sum_groups__sort_by_total(struct sum_groups *gs);

/* Set each group's label to the StringIds value of its key (with the API
 * version suffix cut when api_names), for sources that group by string id
 * rather than by text so the join runs once per group instead of per row. */
int sum_groups__label_from_strings(struct sum_groups *gs, struct prof_store *s, bool api_names,
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

/* Emit groups in the common nsys layout: Time (%), Total Time (ns),
 * <count_name>, Avg, Med, Min, Max, StdDev (ns), then the name column(s):
 * label2 under extra_name when extra_name is set, then label under
 * name_col. At most limit rows (0: all). */
int sum_groups__emit_time(const struct sum_groups *gs, struct rpt_sink *sink,
			  const char *report, const char *title, const char *count_name,
			  const char *extra_name, const char *name_col, size_t limit,
			  struct prof_error *err);

/* The groups behind nvtx_sum, sorted by total (the overview shows their
 * first rows); sum_kernel_groups (query.h) is its kernel twin. */
int sum_nvtx_groups(struct prof_store *s, struct sum_groups *gs, struct prof_error *err);

#endif
